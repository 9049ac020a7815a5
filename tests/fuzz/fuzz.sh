#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fuzzes the .ttft reader with libFuzzer (clang, ASan, UBSan).
#   tests/fuzz/fuzz.sh [MINUTES]    fuzz for MINUTES (default 5) over a copy
#                                   of tests/fuzz/corpus; crashes are saved
#                                   in $OUTPUT/fuzz/artifacts/
#   tests/fuzz/fuzz.sh --merge      add the inputs of the last run that
#                                   reach new coverage to tests/fuzz/corpus
#   tests/fuzz/fuzz.sh --gen-corpus regenerate the seed files (after a
#                                   format change)
# Checksums are not enforced in this build (FUZZING_BUILD_MODE_...), so
# the fuzzer reaches the header, frame, inflate and record parsers.
set -eu
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-build}
CLANG=${CLANG:-clang}
CC=${CC:-gcc}
out=$OUTPUT/fuzz
corpus=tests/fuzz/corpus
mkdir -p "$out/artifacts"
srcs="user/core/event.c user/core/json.c user/format/ttfile.c user/format/ttfile_codec.c"
cflags="-g -O1 -std=gnu11 -D_GNU_SOURCE -Iuser -Iuser/core -Iuser/format -Ibpf -Wall -Wextra
	-Wno-unused-parameter -Wno-missing-field-initializers"

if [ "${1:-}" = --gen-corpus ]; then
	$CC $cflags tests/fuzz/gen_corpus.c $srcs -lz -o "$out/gen_corpus"
	mkdir -p "$corpus"
	"$out/gen_corpus" "$corpus"
	ls -l "$corpus"
	exit 0
fi

# shellcheck disable=SC2086
$CLANG $cflags -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
	tests/fuzz/fuzz_reader.c $srcs -lz -o "$out/fuzz_reader"

if [ "${1:-}" = --merge ]; then
	[ -d "$out/corpus-work" ] || { echo "no previous run in $out/corpus-work"; exit 1; }
	"$out/fuzz_reader" -merge=1 "$corpus" "$out/corpus-work"
	exit 0
fi

minutes=${1:-5}
rm -rf "$out/corpus-work"
mkdir -p "$out/corpus-work"
cp "$corpus"/* "$out/corpus-work/"
# JOBS=N runs N fuzzing processes, their logs in $out/fuzz-*.log
jobs=()
[ "${JOBS:-1}" -gt 1 ] && jobs=(-jobs="$JOBS" -workers="$JOBS")
secs=$((minutes * 60 > 0 ? minutes * 60 : 20))
echo "fuzzing for $secs s, corpus in $out/corpus-work"
cd "$out"
./fuzz_reader -max_total_time=$secs -max_len=65536 -rss_limit_mb=2048 \
	-timeout=10 -print_final_stats=1 -artifact_prefix=artifacts/ \
	"${jobs[@]}" corpus-work
