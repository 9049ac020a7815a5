#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Links detached on every exit path (issue 5): ttftrace record is stopped by
# SIGINT, SIGTERM, SIGHUP and SIGKILL, by -d, by its command's exit and by
# a full disk; each time, the BPF programs, links and maps it held (read from
# /proc/PID/fdinfo while it ran, so that other tracers running meanwhile do
# not count) must be gone from the kernel within two seconds.
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_detach
tt_setup
SMALL=$TT_TMP/small
cleanup_mount() {
	mountpoint -q "$SMALL" && umount "$SMALL"
	tt_cleanup
}
trap cleanup_mount EXIT

if ! command -v bpftool >/dev/null; then
	fail "rel_detach: bpftool is needed to list BPF objects"
	exit 1
fi

# held_ids PID KIND: the prog/map/link ids a process holds, one per line
held_ids() {
	cat /proc/"$1"/fdinfo/* 2>/dev/null |
		awk -v k="$2_id:" '$1 == k { print $2 }' | sort -un
}
# live_ids KIND: the ids the kernel has now
live_ids() {
	bpftool "$1" list -j 2>/dev/null |
		python3 -c 'import json, sys
for o in json.load(sys.stdin) or []: print(o["id"])' | sort -un
}
count_tt_progs() {
	bpftool prog list -j 2>/dev/null | python3 -c 'import json, sys
print(sum(1 for p in json.load(sys.stdin) or []
          if p.get("name", "").startswith("tt_")))'
}

# remember_held PID: sets HELD_prog, HELD_map, HELD_link
remember_held() {
	local k
	for k in prog map link; do
		printf -v "HELD_$k" '%s' "$(held_ids "$1" $k | tr '\n' ' ')"
	done
}

# still_loaded: the remembered ids the kernel still has ("prog 12 ...")
still_loaded() {
	local k held id out=
	for k in prog map link; do
		held=HELD_$k
		for id in $(comm -12 <(tr ' ' '\n' <<<"${!held}" | sort -u) \
			<(live_ids $k | sort -u)); do
			out+="$k $id "
		done
	done
	printf '%s' "$out"
}

# expect_released NAME: every remembered id leaves within 2 s
expect_released() {
	local left i
	for i in $(seq 40); do
		left=$(still_loaded)
		[ -z "$left" ] && break
		sleep 0.05
	done
	check "rel_detach: $1: programs, links and maps released (${left:-none left}; tt_ programs loaded now: $(count_tt_progs))" \
		[ -z "$left" ]
}

held_enough() { # the recorder holds programs and links
	local np nl
	np=$(wc -w <<<"$HELD_prog")
	nl=$(wc -w <<<"$HELD_link")
	[ "$np" -ge 20 ] && [ "$nl" -ge 20 ]
}

echo "  tt_ programs loaded before: $(count_tt_progs)"
start_server "$TT_TMP/gt.csv" --prefill-us 1000 -t 4 -i 1000

for sig in INT TERM HUP KILL; do
	start_record "$TT_TMP/$sig.ttft" -p "$SERVER_PID"
	"$LOADGEN" -q -p "$PORT" -c 2 -n 10 --tokens 4 ||
		fail "rel_detach: loadgen"
	remember_held "$RECORD_PID"
	check "rel_detach: SIG$sig: record holds $(wc -w <<<"$HELD_prog") programs, $(wc -w <<<"$HELD_link") links, $(wc -w <<<"$HELD_map") maps" \
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
mkdir -p "$SMALL"
if mount -t tmpfs -o size=64k tmpfs "$SMALL"; then
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
