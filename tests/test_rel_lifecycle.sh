#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# When record starts and stops, and what it says (issue 13, items 6, 7, 8
# and 11):
#  - -p LAUNCHER: a launcher that starts the server and exits leaves the
#    server traced, and the recording goes on until the server is gone or -d
#  - -c 'server &': the shell exits at once; the server is recorded, then
#    stopped with its process group when record ends
#  - -c with a command that ignores SIGTERM: record ends on time, says it
#    sent SIGKILL, and leaves no process behind (after -d and after SIGINT)
#  - -c 'exit 3', -c of a missing program: the recording is written, the
#    status is 1 and the command's status is said
#  - kill -9 of record: report warns that the recording was not closed
#  - -p TID, report -P onto the recording, -R past 2^64, a server on a
#    UNIX-domain socket: each said in a line, never silent
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_lifecycle
tt_setup
D=$TT_TMP
SRV_ARGS=(-q --prefill-us 2000 -i 1000 -t 4)

# requests_in FILE: complete requests in the recording
requests_in() {
	"$TTFTRACE" report --json "$1" 2>/dev/null |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["complete"])'
}
# run_load PORT N: N requests on 2 connections; the client's exit status
run_load() {
	"$LOADGEN" -q -p "$1" -c 2 -n "$2" --tokens 4 --timeout 20 >/dev/null
}

# ---- -p LAUNCHER: the launcher exits after starting the server
# (it exits once record traces it, within 10 s: a machine whose vCPU the
# hypervisor holds for seconds started record after a fixed 0.5 s)
cat >"$D/launch.sh" <<EOF
$DEMO_SERVER -p 0 --port-file $D/port.l --log $D/gt.l.csv ${SRV_ARGS[*]} &
echo \$! >$D/srv.l.pid
for _ in \$(seq 200); do [ -e $D/go.l ] && break; sleep 0.05; done
exit 0
EOF
bash "$D/launch.sh" &
LAUNCHER=$!
start_record "$D/launcher.ttft" -p "$LAUNCHER" -d 8
touch "$D/go.l"
wait "$LAUNCHER"
wait_for "[ -s $D/port.l ] && [ -s $D/srv.l.pid ]" 10 || fail "rel_lifecycle: launcher's server did not start"
TT_PIDS+=("$(cat "$D/srv.l.pid")")
sleep 0.5
still_recording() { kill -0 "$RECORD_PID" 2>/dev/null; }
check "rel_lifecycle: -p LAUNCHER: record goes on after the launcher exits" still_recording
run_load "$(cat "$D/port.l")" 24
check "rel_lifecycle: -p LAUNCHER: loadgen succeeds" [ $? = 0 ]
kill -TERM "$(cat "$D/srv.l.pid")"
# the server gone, nothing traced is left: record stops by itself
wait_for "! kill -0 $RECORD_PID 2>/dev/null" 5
stopped_itself() { ! kill -0 "$RECORD_PID" 2>/dev/null && grep -q 'traced processes exited' "$D/launcher.ttft.log"; }
check "rel_lifecycle: -p LAUNCHER: record stops once the server exits ($(tail -n 1 "$D/launcher.ttft.log"))" stopped_itself
stop_pid "$RECORD_PID" INT >/dev/null
tt_forget "$RECORD_PID"
n=$(requests_in "$D/launcher.ttft")
check "rel_lifecycle: -p LAUNCHER: all 24 requests recorded (report: $n)" [ "$n" = 24 ]

# ---- -c 'server &': the shell exits at once
start_record "$D/bg.ttft" -d 6 -c "$DEMO_SERVER -p 0 --port-file $D/port.b --log $D/gt.b.csv ${SRV_ARGS[*]} &"
wait_for "[ -s $D/port.b ]" 10 || fail "rel_lifecycle: background server did not start"
SRV_B=$(pgrep -f "port-file $D/port.b")
sleep 0.5
check "rel_lifecycle: -c 'server &': record goes on after the shell exits" still_recording
run_load "$(cat "$D/port.b")" 16
check "rel_lifecycle: -c 'server &': loadgen succeeds" [ $? = 0 ]
wait "$RECORD_PID"
rc=$?
tt_forget "$RECORD_PID"
n=$(requests_in "$D/bg.ttft")
check "rel_lifecycle: -c 'server &': all 16 requests recorded (report: $n), record exits 0 (status $rc)" \
	[ "$n" = 16 ] && [ "$rc" = 0 ]
gone() { ! kill -0 "$1" 2>/dev/null; }
check "rel_lifecycle: -c 'server &': the server was stopped with record" gone "$SRV_B"

# ---- a command that ignores SIGTERM: after -d, and after SIGINT
for how in duration sigint; do
	marker=$((RANDOM % 1000 + 3000))
	t0=$(date +%s%N)
	if [ "$how" = duration ]; then
		"$TTFTRACE" record -o "$D/term.ttft" -d 1 \
			-c "trap '' TERM; sleep $marker.5; true" 2>"$D/term.log"
		rc=$?
	else
		"$TTFTRACE" record -o "$D/term.ttft" \
			-c "trap '' TERM; sleep $marker.5; true" 2>"$D/term.log" &
		rec=$!
		wait_for "grep -q 'recording to' $D/term.log" 20
		sleep 0.5
		kill -INT "$rec"
		wait "$rec"
		rc=$?
	fi
	ms=$((($(date +%s%N) - t0) / 1000000))
	left=$(pgrep -fc "sleep $marker.5")
	check "rel_lifecycle: -c ignoring SIGTERM, ended by $how: record returns in ${ms} ms with status $rc" \
		[ "$ms" -lt 15000 ] && [ "$rc" = 0 ]
	check "rel_lifecycle: ... says it sent SIGKILL ($(grep SIGKILL "$D/term.log"))" \
		grep -q 'SIGKILL' "$D/term.log"
	check "rel_lifecycle: ... and no process of the command is left ($left)" [ "$left" = 0 ]
	pkill -KILL -f "sleep $marker.5"
done

# ---- a command that fails: the recording stands, the status says so
for c in "exit 3|status 3" "/nonexistent/ttftrace-no-such-program|status 127"; do
	cmd=${c%%|*}
	want=${c#*|}
	out=$("$TTFTRACE" record -q -o "$D/fail.ttft" -d 5 -c "$cmd" 2>&1)
	rc=$?
	failed_cmd() { [ "$1" = 1 ] && grep -q "$2" <<<"$3" && "$TTFTRACE" report "$D/fail.ttft" >/dev/null 2>&1; }
	check "rel_lifecycle: -c '$cmd': status 1, says '$want', recording readable (status $rc: $(tail -n 1 <<<"$out"))" \
		failed_cmd "$rc" "$want" "$out"
done

# ---- kill -9: the recording reads, with a warning that it was not closed
sleep 30 &
TARGET=$!
TT_PIDS+=("$TARGET")
start_record "$D/killed.ttft" -p "$TARGET"
sleep 1.5 # past the first periodic flush
kill -KILL "$RECORD_PID"
wait "$RECORD_PID" 2>/dev/null
tt_forget "$RECORD_PID"
err=$("$TTFTRACE" report "$D/killed.ttft" 2>&1 >/dev/null)
rc=$?
warns_unclosed() { [ "$1" = 0 ] && grep -q 'not closed by its recorder' <<<"$2"; }
check "rel_lifecycle: report of a recording cut by kill -9 warns (status $rc: $err)" \
	warns_unclosed "$rc" "$err"
"$TTFTRACE" record -q -o "$D/whole.ttft" -p "$TARGET" -d 0.3
err=$("$TTFTRACE" report "$D/whole.ttft" 2>&1 >/dev/null)
check "rel_lifecycle: ... and of a closed one does not ($err)" [ -z "$err" ]

# ---- -p TID: the thread's process is traced, and record says so
start_server "$D/gt.t.csv" "${SRV_ARGS[@]}"
TID=$(ls "/proc/$SERVER_PID/task" | grep -vx "$SERVER_PID" | head -n 1)
start_record "$D/tid.ttft" -p "$TID" -d 5
run_load "$PORT" 8
stop_record
n=$(requests_in "$D/tid.ttft")
says_thread() { grep -q "$TID is a thread of process $SERVER_PID" "$D/tid.ttft.log"; }
check "rel_lifecycle: -p TID ($TID of $SERVER_PID): says it traces the process" says_thread
check "rel_lifecycle: -p TID: all 8 requests recorded (report: $n)" [ "$n" = 8 ]

# ---- report -P onto a recording: refused, the recording intact
sum=$(md5sum <"$D/tid.ttft")
out=$("$TTFTRACE" report -P "$D/tid.ttft" "$D/tid.ttft" 2>&1 >/dev/null)
rc=$?
check "rel_lifecycle: report -P REC REC is refused (status $rc: $out)" [ "$rc" = 1 ]
check "rel_lifecycle: ... and the recording is intact" [ "$(md5sum <"$D/tid.ttft")" = "$sum" ]

# ---- -R past 2^64: rejected, not clamped
out=$("$TTFTRACE" report -R 18446744073709551616 "$D/tid.ttft" 2>&1 | head -n 1)
"$TTFTRACE" report -R 18446744073709551616 "$D/tid.ttft" >/dev/null 2>&1
rc=$?
check "rel_lifecycle: -R 18446744073709551616 is rejected (status $rc: $out)" [ "$rc" = 2 ]

# ---- a server on a UNIX-domain socket: record says it sees no TCP
/usr/bin/python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4); time.sleep(3)' "$D/unix.sock" &
UNIX_SRV=$!
TT_PIDS+=("$UNIX_SRV")
sleep 0.3
out=$("$TTFTRACE" record -o "$D/unix.ttft" -p "$UNIX_SRV" -d 0.5 2>&1)
check "rel_lifecycle: a server on a UNIX-domain socket: record warns ($(grep -m1 warning <<<"$out"))" \
	grep -q 'never listened on a TCP port' <<<"$out"
