#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Links detached on every exit path (issue 5): ttftrace record is stopped by
# SIGINT, SIGTERM, SIGHUP and SIGKILL, by -d, by its command's exit and by
# a full disk; each time, the BPF programs, links and maps it held (read from
# /proc/PID/fdinfo while it ran, so that other tracers running meanwhile do
# not count) must be gone from the kernel within seconds.
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_detach
tt_setup

if ! command -v bpftool >/dev/null; then
	fail "rel_detach: bpftool is needed to list BPF objects"
	exit 1
fi

# remember_held PID: the prog/map/link ids the process holds, as lines
# "prog 12", in $TT_TMP/held, and their counts in HELD_prog, _map, _link
remember_held() {
	local k
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		awk '$1 ~ /^(prog|map|link)_id:$/ {
			sub(/_id:$/, "", $1); print $1, $2 }' |
		sort -u >"$TT_TMP/held"
	for k in prog map link; do
		printf -v "HELD_$k" '%s' "$(grep -c "^$k " "$TT_TMP/held")"
	done
}
# still_loaded: the remembered ids the kernel still has ("prog 12 ...")
still_loaded() {
	local k
	for k in prog map link; do
		bpftool "$k" list 2>/dev/null |
			awk -F: -v k=$k '/^[0-9]+:/ { print k, $1 }'
	done | sort -u | comm -12 "$TT_TMP/held" - | tr '\n' ' '
}
count_tt_progs() {
	bpftool prog list 2>/dev/null | grep -c ' name tt_'
}

# expect_released NAME: every remembered id leaves within 5 s of the exit
# (typically 0.1 to 0.5 s: the kernel frees them after RCU grace periods,
# longer on a busy machine)
expect_released() {
	local left t0 ms
	t0=$(date +%s%N)
	while :; do
		left=$(still_loaded)
		ms=$((($(date +%s%N) - t0) / 1000000))
		[ -z "$left" ] || [ $ms -ge 5000 ] && break
		sleep 0.05
	done
	check "rel_detach: $1: programs, links and maps released after $ms ms (${left:-none left}; tt_ programs loaded now: $(count_tt_progs))" \
		[ -z "$left" ]
}

# shellcheck disable=SC2154 # HELD_* are set by remember_held's printf -v
held_enough() { # the recorder holds programs and links
	[ "$HELD_prog" -ge 20 ] && [ "$HELD_link" -ge 20 ]
}

echo "  tt_ programs loaded before: $(count_tt_progs)"
start_server "$TT_TMP/gt.csv" --prefill-us 1000 -t 4 -i 1000

for sig in INT TERM HUP KILL; do
	start_record "$TT_TMP/$sig.ttft" -p "$SERVER_PID"
	"$LOADGEN" -q -p "$PORT" -c 2 -n 10 --tokens 4 ||
		fail "rel_detach: loadgen"
	remember_held "$RECORD_PID"
	# shellcheck disable=SC2154
	check "rel_detach: SIG$sig: record holds $HELD_prog programs, $HELD_link links, $HELD_map maps" \
		held_enough
	kill -"$sig" "$RECORD_PID"
	wait "$RECORD_PID" 2>/dev/null
	rc=$?
	if [ $sig = KILL ]; then
		check "rel_detach: SIGKILL: record died of it (status $rc)" \
			[ $rc = 137 ]
	else
		check "rel_detach: SIG$sig: record exits 0" [ $rc = 0 ]
	fi
	expect_released "SIG$sig"
done

# -d: stops by itself
start_record "$TT_TMP/d.ttft" -p "$SERVER_PID" -d 1.5
remember_held "$RECORD_PID"
wait "$RECORD_PID"
rc=$?
check "rel_detach: -d: record exits 0 ($(tail -n 1 "$TT_TMP/d.ttft.log"))" \
	[ $rc = 0 ]
expect_released "-d duration"

# -c: the command exits
start_record "$TT_TMP/c.ttft" -c 'sleep 1.5'
remember_held "$RECORD_PID"
wait "$RECORD_PID"
rc=$?
check "rel_detach: -c: record exits 0 when its command ends ($(tail -n 1 "$TT_TMP/c.ttft.log"))" \
	[ $rc = 0 ]
expect_released "command exited"

# a full disk: record stops on the write error
if small_disk; then
	"$TTFTRACE" record -o "$SMALL/full.ttft" -p "$SERVER_PID" \
		2>"$TT_TMP/full.log" &
	RECORD_PID=$!
	TT_PIDS+=("$RECORD_PID")
	wait_for "grep -q 'recording to' $TT_TMP/full.log" 30
	remember_held "$RECORD_PID"
	for _ in $(seq 30); do
		kill -0 "$RECORD_PID" 2>/dev/null || break
		"$LOADGEN" -q -p "$PORT" -c 4 -n 100 --tokens 4
	done
	kill -INT "$RECORD_PID" 2>/dev/null # only if the disk never filled
	wait "$RECORD_PID"
	rc=$?
	check "rel_detach: full disk: record fails ($rc: $(tail -n 1 "$TT_TMP/full.log"))" \
		[ $rc != 0 ]
	expect_released "full disk"
else
	fail "rel_detach: cannot mount a 64 KiB tmpfs for the full-disk case"
fi
echo "  tt_ programs loaded after: $(count_tt_progs)"
[ -z "${TT_FAILED:-}" ]
