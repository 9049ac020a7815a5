#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Replays every file of tests/fuzz/corpus through the fuzz target, built
# with gcc, ASan and UBSan (no libFuzzer needed): once with checksums
# enforced, as ttftrace reads, and once without, as the fuzzer saw them.
cd "$(dirname "$0")/.."
OUTPUT=${OUTPUT:-build}
CC=${CC:-gcc}
out=$OUTPUT/fuzz
mkdir -p "$out"
srcs="tests/fuzz/fuzz_reader.c tests/fuzz/replay_main.c user/core/event.c user/core/json.c
	user/format/ttfile.c user/format/ttfile_codec.c"
cflags="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iuser -Iuser/core -Iuser/format -Ibpf -Wall -Wextra
	-Wno-unused-parameter -Wno-missing-field-initializers
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
	-fno-omit-frame-pointer"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

ncorpus=$(find tests/fuzz/corpus -type f | wc -l)
if [ "$ncorpus" -lt 5 ]; then
	echo "FAIL: fuzz_corpus_replay: only $ncorpus files in tests/fuzz/corpus"
	exit 1
fi
for variant in checked nocrc; do
	defs=
	[ $variant = nocrc ] && defs=-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	# shellcheck disable=SC2086
	if ! $CC $cflags $defs $srcs -lz -o "$out/fuzz_replay_$variant" \
		>"$out/replay_$variant.log" 2>&1; then
		cat "$out/replay_$variant.log"
		echo "FAIL: fuzz_corpus_replay: cannot build the $variant driver"
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
