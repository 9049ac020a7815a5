#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# A traced workload must not make root open paths of its choosing, nor stall
# the recorder (issue 13, item 2). The workload runs as nobody and opens
# names containing "libcuda.so" (what makes ttftrace probe a library):
#  - a FIFO named libcuda.so.1: root's record must still end on time (it
#    used to block in the FIFO's open for as long as the workload liked)
#  - a link libcuda.so.1 -> a FIFO elsewhere: root must never open it (a
#    watcher sees any reader of that FIFO appear)
#  - a non-ELF regular file named libcuda.so.1: refused, record goes on
# And -L/--cuda-lib: a file that is not ELF, a directory, an ELF file with
# no CUDA function and a FIFO are refused in one line, without hanging.
set -u
. "$(dirname "$0")/lib.sh"
require_root sec_cudalib
tt_setup
PY=/usr/bin/python3
ATTACK=$(mktemp -d /tmp/ttftrace-attack.XXXXXX)
chown nobody "$ATTACK"
chmod 0755 "$ATTACK"
WATCHER=
trap '[ -n "$WATCHER" ] && kill $WATCHER 2>/dev/null; rm -rf "$ATTACK"; tt_cleanup' EXIT
AS_NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"

# the workload: opens PATH for writing without blocking, TIMES times 100 ms
# apart, then stays for the rest of 1.5 s; on a FIFO the open fails at once
# (no reader), but the name has been seen by ttftrace's openat hook
cat >"$ATTACK/workload.py" <<'EOF'
import os, sys, time
path, times = sys.argv[1], int(sys.argv[2])
end = time.monotonic() + 1.5
for _ in range(times):
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass
    time.sleep(0.1)
time.sleep(max(0, end - time.monotonic()))
EOF
chmod 0644 "$ATTACK/workload.py"

# record_workload NAME PATH TIMES: root records the nobody workload opening
# PATH (-d 2); sets ELAPSED (ms) and REC_STATUS (124: still running at 20 s)
record_workload() {
	local name=$1 path=$2 times=$3 t0 t1
	t0=$(date +%s%N)
	timeout -s KILL 20 "$TTFTRACE" record -v -o "$TT_TMP/$name.ttft" -d 2 \
		-c "exec $AS_NOBODY $PY $ATTACK/workload.py $path $times" \
		>"$TT_TMP/$name.log" 2>&1
	REC_STATUS=$?
	[ "$REC_STATUS" = 137 ] && REC_STATUS=124
	t1=$(date +%s%N)
	ELAPSED=$(((t1 - t0) / 1000000))
}

# ---- a FIFO named libcuda.so.1
$AS_NOBODY mkfifo "$ATTACK/libcuda.so.1"
record_workload fifo "$ATTACK/libcuda.so.1" 1
check "sec_cudalib: a workload's FIFO named libcuda.so.1 does not hold record (status $REC_STATUS, ${ELAPSED} ms for -d 2)" \
	[ "$REC_STATUS" = 0 ]
reads_back() { "$TTFTRACE" report "$1" >/dev/null 2>&1; }
check "sec_cudalib: ... and its recording reads back" reads_back "$TT_TMP/fifo.ttft"

# ---- a link to a FIFO elsewhere, watched: any reader that appears is root's
mkfifo -m 0666 "$TT_TMP/watched"
chmod 0755 "$TT_TMP"
$AS_NOBODY mkdir "$ATTACK/lib"
$AS_NOBODY ln -s "$TT_TMP/watched" "$ATTACK/lib/libcuda.so.1"
$PY -c '
import os, sys, time
end = time.monotonic() + 25
while time.monotonic() < end:
    try:
        fd = os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        time.sleep(0.01)
        continue
    open(sys.argv[2], "w").write("a reader opened the FIFO\n")
    os.close(fd)
' "$TT_TMP/watched" "$TT_TMP/opened" &
WATCHER=$!
record_workload link "$ATTACK/lib/libcuda.so.1" 1
kill $WATCHER 2>/dev/null
wait $WATCHER 2>/dev/null
WATCHER=
check "sec_cudalib: a workload's link libcuda.so.1 -> FIFO: record ends (status $REC_STATUS, ${ELAPSED} ms)" \
	[ "$REC_STATUS" = 0 ]
check "sec_cudalib: ... and root never opened the FIFO behind the link" \
	[ ! -e "$TT_TMP/opened" ]

# ---- a regular file that is not ELF: refused with a warning, nothing else
$AS_NOBODY mkdir "$ATTACK/txt"
$AS_NOBODY sh -c "echo not a library >$ATTACK/txt/libcuda.so.1"
record_workload text "$ATTACK/txt/libcuda.so.1" 15
check "sec_cudalib: a workload's non-ELF libcuda.so.1: record exits 0 (status $REC_STATUS)" \
	[ "$REC_STATUS" = 0 ]
warned_once() { [ "$(grep -c 'not an ELF file' "$1")" = 1 ]; }
check "sec_cudalib: ... says it is not ELF, once, though opened 15 times ($(grep -m1 ELF "$TT_TMP/text.log"))" \
	warned_once "$TT_TMP/text.log"

# ---- a root-only library behind a workload's link: root reads only what
# the workload could read itself
mkdir -m 0711 "$TT_TMP/private"
install -m 0600 "$OUTPUT/tools/libcuda.so.1" "$TT_TMP/private/libcuda.so.1"
$AS_NOBODY mkdir "$ATTACK/priv"
$AS_NOBODY ln -s "$TT_TMP/private/libcuda.so.1" "$ATTACK/priv/libcuda.so.1"
record_workload private "$ATTACK/priv/libcuda.so.1" 1
refused_private() { grep -q 'not readable by pid' "$1" && ! grep -q 'probing' "$1"; }
check "sec_cudalib: a root-only libcuda behind a workload's link is not probed ($(grep -m1 readable "$TT_TMP/private.log"))" \
	refused_private "$TT_TMP/private.log"

# ---- -L: refused in one line, at once, without probing anything
mkfifo "$TT_TMP/fifo-lib"
sleep 30 &
TARGET=$!
TT_PIDS+=("$TARGET")
lib_refused() { # lib_refused WORDS PATH
	local out rc
	out=$(timeout -s KILL 10 "$TTFTRACE" record -q -p "$TARGET" -d 0.5 \
		-o "$TT_TMP/l.ttft" -L "$2" 2>&1)
	rc=$?
	LIB_SAID="status $rc: $out"
	[ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | grep -c .)" = 1 ] &&
		grep -q "$1" <<<"$out"
}
for c in "not an ELF file|/etc/passwd" "not a regular file (a directory)|/tmp" \
	"none of the CUDA driver functions|/bin/ls" \
	"not a regular file (a FIFO)|$TT_TMP/fifo-lib"; do
	words=${c%%|*}
	path=${c#*|}
	if lib_refused "$words" "$path"; then
		pass "sec_cudalib: -L $path refused ($LIB_SAID)"
	else
		fail "sec_cudalib: -L $path: want status 1 and one line with '$words'; got $LIB_SAID"
	fi
done
