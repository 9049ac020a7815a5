#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Replays every file of tests/fuzz/corpus through the fuzz target, built
# by make unit-tests with gcc, ASan and UBSan (no libFuzzer needed): once
# with checksums enforced, as ttftrace reads, and once without, as the
# fuzzer saw them.
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-build}
out=$OUTPUT/fuzz
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

ncorpus=$(find tests/fuzz/corpus -type f | wc -l)
if [ "$ncorpus" -lt 5 ]; then
	echo "FAIL: fuzz_corpus_replay: only $ncorpus files in tests/fuzz/corpus"
	exit 1
fi
for variant in checked nocrc; do
	if [ ! -x "$out/fuzz_replay_$variant" ]; then
		echo "FAIL: fuzz_corpus_replay: $out/fuzz_replay_$variant missing: run make unit-tests"
		exit 1
	fi
	if ! "$out/fuzz_replay_$variant" tests/fuzz/corpus \
		>"$out/replay_$variant.log" 2>&1; then
		tail -n 40 "$out/replay_$variant.log"
		echo "FAIL: fuzz_corpus_replay: $variant replay failed"
		exit 1
	fi
	echo "  $variant: $(tail -n 1 "$out/replay_$variant.log")"
done
echo "PASS: fuzz_corpus_replay"
