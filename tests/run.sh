#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Runs every unit-test binary (build/tests/test_*) and every test script
# (tests/test_*.sh), counts their PASS/FAIL/SKIP lines and ends with
# "N passed, N failed, N skipped". Under CI=true a skip is a failure: the
# BPF tests must run for real there.
#   tests/run.sh [PATTERN]   only tests whose name contains PATTERN
set -u
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-build}
export OUTPUT
pattern=${1:-}
passed=0 failed=0 skipped=0
failures=()
fail_lines=()

run_one() {
	local name=$1
	shift
	local log rc p f s
	log=$(mktemp)
	"$@" >"$log" 2>&1
	rc=$?
	p=$(grep -c '^PASS: ' "$log")
	f=$(grep -c '^FAIL: ' "$log")
	s=$(grep -c '^SKIP: ' "$log")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAIL: $name exited with status $rc" >>"$log"
		f=1
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
		grep -vE '^(PASS|SKIP): ' "$log" | tail -n 60
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
if [ ${#failures[@]} -gt 0 ]; then
	# the FAIL lines again, last: a CI log's tail may be all one reads
	echo "failed: ${failures[*]}"
	printf '%s\n' "${fail_lines[@]}" | tail -n 40
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
