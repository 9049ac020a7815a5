#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# Messages handed to ZMQ (record --msg-probes, docs/design.md §4.4): a
# traced thread sends N one-part and N three-part messages with pyzmq
# (tests/servers/zmq_pair.py, Debian's python3-zmq and libzmq), while an
# untraced copy sends as many. Checks that BPF records one TT_EV_MSG_SEND
# per whole message of the traced thread (a multipart one at its last part:
# the parts before carry ZMQ_SNDMORE), on one socket, and none of the
# untraced process; none with --msg-probes=none; a bad value refused.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_msgsend
tt_setup
/usr/bin/python3 -c "import zmq" 2>/dev/null ||
	{ fail "bpf_msgsend: Debian's python3-zmq is missing (tools/deps.sh)"; exit 1; }
N=40
# run_pair DIR RECORD_ARGS...: the pair traced, an untraced one beside it
run_pair() {
	local d=$1 pid other
	shift
	mkdir -p "$d" "$d/untraced"
	/usr/bin/python3 tests/servers/zmq_pair.py "$d" "$N" &
	pid=$!
	/usr/bin/python3 tests/servers/zmq_pair.py "$d/untraced" "$N" &
	other=$!
	TT_PIDS+=("$pid" "$other")
	wait_for "[ -s $d/tid -a -s $d/untraced/tid ]" 10 ||
		{ fail "bpf_msgsend: zmq_pair.py did not start"; exit 1; }
	PAIR_PID=$pid
	start_record "$d/rec.ttft" -p "$pid" "$@"
	touch "$d/go" "$d/untraced/go"
	wait_for "[ -e $d/done -a -e $d/untraced/done ]" 20
	check "bpf_msgsend: both pairs sent their messages ($*)" \
		[ -e "$d/done" -a -e "$d/untraced/done" ]
	stop_record
	check "bpf_msgsend: record exits 0 ($*)" [ "$RECORD_STATUS" = 0 ]
	"$TTFTRACE" report --events "$d/rec.ttft" 2>/dev/null | grep msg_send >"$d/ms.txt"
}
run_pair "$TT_TMP/on"
TID=$(cat "$TT_TMP/on/tid")
n=$(grep -c " $PAIR_PID/$TID .*msg_send *zmq sock=.* fn=zmq_msg_send flags=0$" "$TT_TMP/on/ms.txt")
check "bpf_msgsend: one per whole message of the traced thread: $n of $((2 * N))" \
	[ "$n" = $((2 * N)) ]
n=$(grep -vc " $PAIR_PID/$TID " "$TT_TMP/on/ms.txt")
check "bpf_msgsend: none by another thread or process: $n" [ "$n" = 0 ]
n=$(sed 's/.*sock=\([^ ]*\).*/\1/' "$TT_TMP/on/ms.txt" | sort -u | wc -l)
check "bpf_msgsend: all on the one PUSH socket: $n socket(s)" [ "$n" = 1 ]
run_pair "$TT_TMP/off" --msg-probes=none
n=$(wc -l <"$TT_TMP/off/ms.txt")
check "bpf_msgsend: --msg-probes=none: no message send recorded: $n" [ "$n" = 0 ]
"$TTFTRACE" record --msg-probes=maybe -c true >"$TT_TMP/bad.txt" 2>&1
check "bpf_msgsend: a bad --msg-probes value is refused" [ $? != 0 ]
check "bpf_msgsend: ... with a one-line reason" grep -q "invalid --msg-probes" "$TT_TMP/bad.txt"
[ -z "${TT_FAILED:-}" ]
