#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# Data hand-offs the kernel's wakeups miss (docs/design.md §4.4): a thread
# writes to an eventfd, a unix socket and a pipe that another traced
# thread reads (tests/servers/ipc_pair.py, Debian's /usr/bin/python3). Checks that
# BPF records one TT_EV_DATA_WAKE per write once the reader is known, from
# the writer to the reader, through each kind, and none the other way; and
# one TT_EV_DATA_READ per read of what a data wake announced, by the reader
# (an eventfd's read is seen at its entry and its exit: a reader blocked
# in it when the write came reads the data at its exit). A
# write behind unread data in a pipe makes none: of the burst of writes
# ipc_pair.py makes at its end, only the first. But the reader's next read
# of a pipe a traced thread wrote to behind unread data is recorded (a
# batcher's read of its input: docs/design.md §4.4): after ipc_pair.py's
# last data wake, its reader reads twice, each time after a write. And
# the pipe's bytes in order (TT_EV_PIPE_IO): each of the writer's frames
# counted at its place in the stream, and each of the reader's reads
# (a frame's length, then its bytes) inside the one write it took.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_datawake
tt_setup
N=50
/usr/bin/python3 tests/servers/ipc_pair.py "$TT_TMP" "$N" &
PAIR_PID=$!
TT_PIDS+=("$PAIR_PID")
wait_for "[ -s $TT_TMP/tids ]" 10 || { fail "bpf_datawake: ipc_pair.py did not start"; exit 1; }
read -r READER WRITER <"$TT_TMP/tids"
start_record "$TT_TMP/dw.ttft" -p "$PAIR_PID"
touch "$TT_TMP/go"
wait_for "[ -e $TT_TMP/done ]" 20
check "bpf_datawake: the pair ran its $N hand-offs" [ -e "$TT_TMP/done" ]
stop_record
check "bpf_datawake: record exits 0" [ "$RECORD_STATUS" = 0 ]
"$TTFTRACE" report --events "$TT_TMP/dw.ttft" >"$TT_TMP/ev.txt" 2>&1
grep data_wake "$TT_TMP/ev.txt" >"$TT_TMP/dw.txt"
grep data_read "$TT_TMP/ev.txt" >"$TT_TMP/dr.txt"
# per_kind WHAT PATTERN FILE SLACK MORE: one record per hop of each kind
# (the pipe's: MORE more, its last writes'), but SLACK (the first write, before
# its reader is known; a pipe's read seen at its entry, before the write
# it reads)
per_kind() {
	local via n want
	for via in eventfd unix pipe; do
		want=$N
		[ "$via" = pipe ] && want=$((N + $5))
		n=$(grep -Ec "$2 *via=$via( |$)" "$3")
		check "bpf_datawake: $1 through $via: $n of $want" \
			[ "$n" -ge $((want - $4)) -a "$n" -le "$want" ]
	done
}
per_kind "data wakes of the reader" " $PAIR_PID/$WRITER .*target=$PAIR_PID/$READER" \
	"$TT_TMP/dw.txt" 2 2
per_kind "the reader's reads after data wakes" " $PAIR_PID/$READER .*data_read" \
	"$TT_TMP/dr.txt" 3 2
n=$(grep -E "data_(wake|read) .*via=pipe" "$TT_TMP/ev.txt" | sort -n -k1,1 |
	awk '/data_wake/ { s = "" } /data_read/ { s = s " " $NF } END { print s }')
check "bpf_datawake: the pipe's reads after its last data wake, the second behind unread data:$n" \
	[ "$n" = " via=pipe via=pipe-behind" ]
# pipe_bytes: "WRITES READS INSIDE": the writer's counted writes of the
# pipe, the reader's reads, and those that lie inside the write they took
# in order (two a frame)
pipe_bytes() {
	/usr/bin/python3 - "$TT_TMP/ev.txt" "$PAIR_PID/$WRITER" "$PAIR_PID/$READER" <<'EOF'
import re, sys
writes, reads = [], []
for line in open(sys.argv[1]):
    m = re.search(r" (\S+) +pipe_io +(write|read) pipe=\S+ pos=(\d+) len=(\d+)", line)
    if m and m.group(1) == (sys.argv[2] if m.group(2) == "write" else sys.argv[3]):
        (writes if m.group(2) == "write" else reads).append((int(m.group(3)), int(m.group(4))))
at = [next((i for i, (p, m) in enumerate(writes) if p <= q and q + n <= p + m), -1)
      for q, n in reads]
# read j (a length, then its bytes) takes write j // 2: the stream in order
inside = sum(i >= 0 and i - j // 2 == at[0] for j, i in enumerate(at)) if at else 0
print(len(writes), len(reads), inside)
EOF
}
# ipc_pair.py's frames: N, its BURST of 10, and 3 at its end
frames=$((N + 13))
read -r pw pr pin <<<"$(pipe_bytes)"
check "bpf_datawake: the writer's pipe writes counted: ${pw:-none} of $frames" \
	[ "${pw:-0}" -ge $((frames - 1)) -a "${pw:-0}" -le "$frames" ]
check "bpf_datawake: the reader's pipe reads counted: ${pr:-none} of $((2 * frames))" \
	[ "${pr:-0}" -ge $((2 * frames - 2)) -a "${pr:-0}" -le $((2 * frames)) ]
check "bpf_datawake: each read inside its frame's write: ${pin:-none} of ${pr:-none}" \
	[ -n "${pin:-}" -a "${pin:-x}" = "${pr:-y}" ]
n=$(grep -vc " $PAIR_PID/$WRITER .*target=$PAIR_PID/$READER " "$TT_TMP/dw.txt")
check "bpf_datawake: no data wake of another thread, or by the reader: $n" [ "$n" = 0 ]
n=$(grep -vc " $PAIR_PID/$READER " "$TT_TMP/dr.txt")
check "bpf_datawake: no data read by another thread: $n" [ "$n" = 0 ]
"$TTFTRACE" report "$TT_TMP/dw.ttft" >"$TT_TMP/report.txt" 2>&1
check "bpf_datawake: report reads the recording" [ $? = 0 ]
[ -z "${TT_FAILED:-}" ]
