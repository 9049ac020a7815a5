#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# An event loop's polls (TT_EV_POLL, docs/design.md §4.4): an asyncio
# server (tests/servers/poll_loop.py, Debian's python3) answers N lines on
# one keep-alive connection, one at a time, while a thread of the same
# process waits in its own epoll for a pipe it writes to. Checks that BPF
# records a poll of the loop before each read of a line after the first
# (its answer went out, the loop waited, a poll returned the next line),
# and one that returned nothing between each read and its answer (the
# reader task's turn: asyncio polls without waiting first), but no second
# one without a read between (a task of the loop sleeps 1 ms at a time: its
# polls time out many times between two lines), none of the side thread,
# which polled ready all along but reads no connection, and none with
# TTFTRACE_POLLS=0; and that check lists the three hooks.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_poll
tt_setup
N=30
# run_loop DIR: the server recorded while a client sends N lines
run_loop() {
	local d=$1 pid
	mkdir -p "$d"
	/usr/bin/python3 tests/servers/poll_loop.py "$d" &
	pid=$!
	TT_PIDS+=("$pid")
	wait_for "[ -s $d/port -a -s $d/side.n -a -s $d/ticks.n ]" 10 ||
		{ fail "bpf_poll: poll_loop.py did not start"; exit 1; }
	start_record "$d/rec.ttft" -p "$pid"
	SIDE0=$(cat "$d/side.n")
	TICKS0=$(cat "$d/ticks.n")
	/usr/bin/python3 -c '
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
for i in range(int(sys.argv[2])):
    s.sendall(b"line\n")
    assert f.readline() == b"ok\n"
    time.sleep(0.01)
' "$(cat "$d/port")" "$N"
	check "bpf_poll: the client had its $N answers" [ $? = 0 ]
	SIDE=$(($(cat "$d/side.n") - SIDE0))
	TICKS=$(($(cat "$d/ticks.n") - TICKS0))
	stop_record
	check "bpf_poll: record exits 0" [ "$RECORD_STATUS" = 0 ]
	stop_pid "$pid" TERM
	"$TTFTRACE" report --events "$d/rec.ttft" >"$d/ev.txt" 2>/dev/null
}
run_loop "$TT_TMP/on"
LOOP=$(cat "$TT_TMP/on/loop.tid")
SIDE_TID=$(cat "$TT_TMP/on/side.tid")
# the loop's reads of a line after an answer with no poll of its between;
# its answers with a poll that returned nothing since their read
missed=$(awk -v t="/$LOOP" '
	index($3, t) == length($3) - length(t) + 1 {
		if ($4 == "send") {
			sent = 1; polled = 0; sends++
			if (empty) turns++
			empty = 0
		} else if ($4 == "poll") {
			polled = 1
			if ($5 == "ready=0") {
				if (idle) again++
				empty = idle = 1
			}
		} else if ($4 == "recv" && $6 != "len=0") {
			n++
			if (sent && !polled) missed++
			sent = 0; empty = 0
		}
		if ($4 == "recv") idle = 0
	}
	END { print n + 0, missed + 0, sends + 0, turns + 0, again + 0 }' "$TT_TMP/on/ev.txt")
read -r reads missed sends turns again <<<"$missed"
check "bpf_poll: the loop read $N lines and answered each: $reads reads, $sends sends" \
	[ "$reads" = "$N" -a "$sends" = "$N" ]
check "bpf_poll: a poll of the loop before each read after an answer: $missed missed" \
	[ "$missed" = 0 ]
check "bpf_poll: a poll that returned nothing between each read and its answer: $turns of $sends" \
	[ "$turns" = "$N" ]
check "bpf_poll: no second poll that returned nothing without a read between: $again (the loop slept $TICKS times)" \
	[ "$again" = 0 -a "$TICKS" -ge 100 ]
n=$(awk '$4 == "poll"' "$TT_TMP/on/ev.txt" | grep -vc "/$LOOP ")
check "bpf_poll: none by another thread: $n (the side thread polled ready $SIDE times)" \
	[ "$n" = 0 -a "$SIDE" -ge 20 ]
n=$(grep -c " /*$SIDE_TID .* poll " "$TT_TMP/on/ev.txt")
check "bpf_poll: none by the side thread $SIDE_TID: $n" [ "$n" = 0 ]
TTFTRACE_POLLS=0 run_loop "$TT_TMP/off"
n=$(awk '$4 == "poll"' "$TT_TMP/off/ev.txt" | wc -l)
check "bpf_poll: TTFTRACE_POLLS=0: no poll recorded: $n" [ "$n" = 0 ]
"$TTFTRACE" check >"$TT_TMP/check.txt" 2>&1
n=$(grep -c "hook tracepoint/syscalls/sys_exit_epoll_[a-z0-9]* *yes" "$TT_TMP/check.txt")
check "bpf_poll: check lists the three poll hooks: $n" [ "$n" = 3 ]
[ -z "${TT_FAILED:-}" ]
