#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Runs every unit-test binary (build/tests/test_*) and every test script
# (tests/test_*.sh), counts their PASS/FAIL/SKIP lines and ends with
# "N passed, N failed, N skipped". Under CI=true a skip is a failure: the
# BPF tests must run for real there.
#
# A failed test script (tests/test_*.sh: real servers, real scheduling, the
# BPF programs loaded) runs once more, and the second run's lines are the
# ones counted; the first run's FAIL lines are printed as FLAKY lines, with
# the vCPU steal during each run. These tests compare ttftrace with the
# server's and the client's own clocks, and on a VM the hypervisor stops a
# vCPU for up to 10 ms now and then (bench/vcpu_gaps: a SCHED_FIFO spinner
# on an idle CPU sees such gaps), which moves a reference read on one side
# of the stop and not the other. A rule that breaks twice in a row is no
# such accident. The unit tests (synthetic streams) get no second run.
# TT_NO_RETRY=1 turns it off.
#   tests/run.sh [PATTERN]   only tests whose name contains PATTERN
set -u
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-build}
export OUTPUT
# steal_ms
# shellcheck source=tests/lib.sh
. tests/lib.sh
pattern=${1:-}
passed=0 failed=0 skipped=0
failures=()
fail_lines=()
retried=()

# run_logged LOG CMD...: runs CMD with its output in LOG; sets rc, p, f, s
# and steal (ms, during the run)
run_logged() {
	local log=$1 steal0
	shift
	steal0=$(steal_ms)
	"$@" >"$log" 2>&1
	rc=$?
	steal=$(($(steal_ms) - steal0))
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	s=$(grep -c '^SKIP: ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL: $name exited with status $rc" >>"$log"
		f=1
	fi
}

run_one() {
	local name=$1
	shift
	local log rc p f s steal
	log=$(mktemp)
	run_logged "$log" "$@"
	if [ "$f" != 0 ] && [ -z "${TT_NO_RETRY:-}" ] && [[ "$name" == *.sh ]]; then
		grep '^FAIL: ' "$log" | sed "s|^FAIL: |[$name] FLAKY: |"
		echo "---- first run of $name ----"
		grep -vE '^(PASS|FAIL|SKIP): ' "$log" | tail -n 80
		echo "----"
		echo "[$name] FLAKY: $f failed in its first run (vCPU steal ${steal} ms); run again"
		retried+=("$name (first run: $f failed, steal ${steal} ms)")
		run_logged "$log" "$@"
		echo "[$name] second run: vCPU steal ${steal} ms"
	fi
	if [ "${CI:-}" = true ] && [ "$s" != 0 ]; then
		sed -i 's/^SKIP: /FAIL: (skipped under CI) /' "$log"
		f=$((f + s))
		s=0
	fi
	grep -E '^(PASS|FAIL|SKIP): ' "$log" | sed "s|^|[$name] |"
	mapfile -t -O "${#fail_lines[@]}" fail_lines < <(grep '^FAIL: ' "$log" | sed "s|^|[$name] |" | cut -c1-300)
	if [ "$f" != 0 ]; then
		failures+=("$name")
		echo "---- output of $name ----"
		grep -vE '^(PASS|SKIP): ' "$log" | tail -n 150
		echo "----"
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	rm -f "$log"
}

for t in "$OUTPUT"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	[[ -z "$pattern" || "$name" == *"$pattern"* ]] || continue
	run_one "$name" "$t"
done
for t in tests/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t")
	[[ -z "$pattern" || "$name" == *"$pattern"* ]] || continue
	run_one "$name" bash "$t"
done
if [ ${#retried[@]} -gt 0 ]; then
	echo "run twice: ${retried[*]}"
fi
if [ ${#failures[@]} -gt 0 ]; then
	# the FAIL lines again, last: a CI log's tail may be all one reads
	echo "failed: ${failures[*]}"
	printf '%s\n' "${fail_lines[@]}" | tail -n 40
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
