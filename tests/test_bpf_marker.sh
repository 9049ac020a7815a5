#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Application markers for real (record --mark, docs/design.md §4.9): bad
# specs fail with one line before anything is traced; then the demo server,
# batching (requests wait for the engine's next iteration, where inference
# alone can be off), is recorded with an enqueue marker on engine_submit
# (its request in argument 2) and a dispatch marker on engine_admitted
# (argument 1), then on the USDT probe demo:admitted beside it. Every
# request's t_enqueue and t_dispatch must lie within the server's clock
# reads around the marked call (compare_marks.py), and the drill-down must
# say the marker fixed them.
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"
tt_setup

# bad_mark NAME SPEC: one line on stderr, a non-zero exit, no recording
bad_mark() {
	local err rc
	err=$("$TTFTRACE" record -p $$ -d 1 -o "$TT_TMP/bad.ttft" --mark "$2" 2>&1)
	rc=$?
	check "bad --mark, $1: one line, exit $rc" [ "$rc" -ne 0 -a \
		"$(printf '%s\n' "$err" | wc -l)" -eq 1 -a ! -e "$TT_TMP/bad.ttft" ]
	echo "  $err"
}
bad_mark "unknown kind" "prefill=$DEMO_SERVER:engine_submit"
bad_mark "missing symbol" "dispatch=$DEMO_SERVER:no_such_function"
bad_mark "no such file" "dispatch=$TT_TMP/nothing:engine_submit"
bad_mark "not an ELF file" "dispatch=$HERE/lib.sh:engine_submit"
bad_mark "offset past the symbol" "dispatch=$DEMO_SERVER:engine_admitted+4096"
bad_mark "malformed offset" "dispatch=$DEMO_SERVER:engine_admitted+ten"
bad_mark "bad argN" "dispatch=$DEMO_SERVER:engine_admitted,key=arg9"
bad_mark "not argN" "dispatch=$DEMO_SERVER:engine_admitted,key=req"
bad_mark "no symbol given" "dispatch=$DEMO_SERVER"
bad_mark "bad usdt spec" "token=usdt:$DEMO_SERVER:only_a_name"
bad_mark "python: no event" "enqueue=python:/usr/bin/python3:"
bad_mark "python: an event with a space" "enqueue=python:/usr/bin/python3:my event"
bad_mark "python: no python:audit probe in the file" "enqueue=python:$DEMO_SERVER:ev"
bad_mark "python: bad argN" "enqueue=python:/usr/bin/python3:ev,key=arg13"

require_root bpf_marker
bad_mark "no such USDT probe" "dispatch=usdt:$DEMO_SERVER:demo:no_such_probe"
bad_mark "python: no traced process runs Python" "enqueue=python:ev"

# A Python program marks itself with sys.audit (Debian's python3 has
# CPython's USDT probes): the recorder finds the interpreter in the traced
# process, keeps the named event only, and reads the key from the event's
# arguments: an int's value (one, two and three 30-bit digits: its low 60
# bits, its sign dropped), an ASCII str's FNV-1a (the same for two equal
# strs, one built at run time), both "(value)", the same in any process;
# any other object's address. The program prints the keys it expects; an
# event without the keyed argument is a marker whose key is unread. A
# second marker names a 63-character event: a 66-character one that
# starts with it is not it; a third takes the client's port (peer=arg2),
# an int to 65535, else its peer is unread (its key kept). The program is
# a shell's child (-p names the shell): the interpreter is looked for in
# the children too.
E63=tt.$(printf 'e%.0s' $(seq 60))
cat >"$TT_TMP/audit.py" <<'PY'
import os, sys, time
def fnv(s):
    h = 0xcbf29ce484222325
    for b in s.encode()[:128]:
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h
def shown(k):
    if isinstance(k, int):
        return (hex(abs(k) & ((1 << 60) - 1)) if k else "0") + " (value)"
    return hex(fnv(k)) + " (value)" if isinstance(k, str) else hex(id(k))
go, e63 = sys.argv[1], sys.argv[2]
open(go + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.01)
req = object()
built = "".join(["cmpl-", str(0x0123456789)])
keys = (0, 7, 123456789, (1 << 40) + 5, -9, (1 << 61) + (1 << 30) + 7,
        "cmpl-4886718345", built, "r" * 200, req)
print(" ".join(shown(k) for k in keys) + " unread", flush=True)
for key in keys:
    sys.audit("tt.test.enqueue", key, "more")
    sys.audit("tt.test.other", 99)
sys.audit("tt.test.enqueue")
sys.audit(e63 + "xyz", 1)
sys.audit(e63, 2)
sys.audit("tt.test.peer", 5, 5001)
sys.audit("tt.test.peer", 6, "5002")
sys.audit("tt.test.peer", 7, 70000)
PY
sh -c '/usr/bin/python3 "$@"; exit $?' sh "$TT_TMP/audit.py" "$TT_TMP/audit.go" \
	"$E63" >"$TT_TMP/audit.out" &
AUDIT_PID=$!
TT_PIDS+=("$AUDIT_PID")
wait_for "[ -e $TT_TMP/audit.go.ready ]" 30 || fail "python marker: the program did not start"
start_record "$TT_TMP/audit.ttft" -p "$AUDIT_PID" \
	--mark "enqueue=python:tt.test.enqueue,key=arg1" \
	--mark "dispatch=python:$E63,key=arg1" \
	--mark "token=python:tt.test.peer,key=arg1,peer=arg2"
touch "$TT_TMP/audit.go"
wait "$AUDIT_PID"
stop_record
check "python marker: record exits 0" [ "$RECORD_STATUS" = 0 ]
"$TTFTRACE" report --events "$TT_TMP/audit.ttft" >"$TT_TMP/audit.events"
want=$(cat "$TT_TMP/audit.out")
got=$(echo $(sed -n 's/.* mark .*marker=enqueue spec=0 key=//p' "$TT_TMP/audit.events"))
check "python marker: the keys of the named event only ($got; want $want)" \
	[ "$got" = "$want" ]
got=$(echo $(sed -n 's/.* mark .*marker=dispatch spec=1 key=//p' "$TT_TMP/audit.events"))
check "python marker: a 63-character event, not a longer one ($got)" \
	[ "$got" = "0x2 (value)" ]
got=$(echo $(sed -n 's/.* mark .*marker=token spec=2 //p' "$TT_TMP/audit.events"))
check "python marker: the client's port as peer=arg2, an int to 65535 only, its key kept ($got)" \
	[ "$got" = "peer=5001 key=0x5 (value) peer=unread key=0x6 (value) peer=unread key=0x7 (value)" ]

# a native marker's peer=argM: bench/mark_loop calls marked_point(i) for
# i = 0, 1, 2, marked with the same argument as key and peer
LOOP=$OUTPUT/bench/mark_loop
"$TTFTRACE" record -o "$TT_TMP/peer.ttft" -c "$LOOP 3 1" \
	--mark "dispatch=$LOOP:marked_point,key=arg1,peer=arg1" 2>"$TT_TMP/peer.log"
got=$(echo $("$TTFTRACE" report --events "$TT_TMP/peer.ttft" |
	sed -n 's/.* mark .*marker=dispatch spec=0 //p'))
check "native marker: peer=arg1 ($got)" \
	[ "$got" = "peer=0 key=0 peer=1 key=0x1 peer=2 key=0x2" ]

# marked NAME DISPATCH-SPEC N: batch 2, eight clients (most requests wait
# one or more iterations), N requests, recorded with the enqueue marker on
# engine_submit and the dispatch marker given; checked against the log
marked() {
	local name=$1 disp=$2 n=$3
	start_server "$TT_TMP/$name.gt.csv" --batch 2 \
		--prefill-us uniform:1000:3000 --seed 3 -i 1000 -t 4 -w 8
	start_record "$TT_TMP/$name.ttft" -p "$SERVER_PID" \
		--mark "enqueue=$DEMO_SERVER:engine_submit,key=arg2" \
		--mark "$disp"
	"$LOADGEN" -q -p "$PORT" -c 8 -n "$n" --tokens 4 \
		-o "$TT_TMP/$name.lg.csv" || fail "$name: loadgen"
	stop_record
	tt_forget "$RECORD_PID"
	check "$name: record exits 0" [ "$RECORD_STATUS" = 0 ]
	stop_pid "$SERVER_PID" TERM >/dev/null
	tt_forget "$SERVER_PID"
	if ! "$TTFTRACE" report --json "$TT_TMP/$name.ttft" \
		>"$TT_TMP/$name.json" 2>"$TT_TMP/report.err"; then
		fail "$name: report --json: $(head -1 "$TT_TMP/report.err")"
		return 1
	fi
	python3 "$HERE/compare_marks.py" "$TT_TMP/$name.json" \
		"$TT_TMP/$name.gt.csv" --name "$name" --tol-us 5 \
		--expect "$n" || TT_FAILED=1
}

marked marker "dispatch=$DEMO_SERVER:engine_admitted,key=arg1" 64 || exit 1
"$TTFTRACE" report -R 5 "$TT_TMP/marker.ttft" >"$TT_TMP/r5.txt" 2>&1
check "marker: the drill-down says the marker fixed t_dispatch" \
	grep -q "^t_dispatch .*rule marker: an application marker" "$TT_TMP/r5.txt"
check "marker: and t_enqueue" \
	grep -q "^t_enqueue .*(rule marker)" "$TT_TMP/r5.txt"
"$TTFTRACE" report --events "$TT_TMP/marker.ttft" >"$TT_TMP/events.txt"
check "marker: --events lists the markers with their keys" \
	grep -q " mark .*marker=dispatch spec=1 key=0x" "$TT_TMP/events.txt"

# the same dispatch as a USDT probe (demo:admitted, the request in arg 1)
marked usdt "dispatch=usdt:$DEMO_SERVER:demo:admitted,key=arg1" 32
[ -z "${TT_FAILED:-}" ]
