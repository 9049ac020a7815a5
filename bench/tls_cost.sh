#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What the TLS probes cost (record --tls-probes, docs/design.md §3.1
# "TLS"): an SSL_write's time, in ns, in a Python loop of N of them to a
# memory BIO (bench/tls_loop.py: OpenSSL's libssl.so.3, as asyncio's SSL)
#   off        no recorder
#   untraced   a recorder running (its uprobes on every process that maps
#              libssl), this process not traced: the trap and a map lookup
#   traced     the loop traced (record -c): each write's plaintext record
# Each rep runs the three in turn; prints each one's median over REPS and
# the probes' cost per write (median minus off's).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

REPS=${REPS:-5}
N=${N:-200000}
PY=/usr/bin/python3

bench_setup tls_cost
need_root
[ -x "$TTFTRACE" ] || die "$TTFTRACE missing: run make first"
command -v openssl >/dev/null || die "openssl missing (tools/deps.sh)"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$BENCH_TMP/key.pem" \
	-out "$BENCH_TMP/cert.pem" -days 2 -subj /CN=localhost >/dev/null 2>&1 ||
	die "openssl made no certificate"
LOOP=("$PY" bench/tls_loop.py "$BENCH_TMP/cert.pem" "$BENCH_TMP/key.pem" "$N")

# record ARGS...: a recorder in the background until it says it records
record() {
	"$TTFTRACE" record -o "$BENCH_TMP/r.ttft" "$@" 2>"$BENCH_TMP/r.log" &
	REC=$!
	BENCH_PIDS+=("$REC")
	for _ in $(seq 100); do
		grep -q 'recording to' "$BENCH_TMP/r.log" && return
		sleep 0.1
	done
	die "record did not start: $(cat "$BENCH_TMP/r.log")"
}

off=() untraced=() traced=()
for rep in $(seq "$REPS"); do
	off+=("$("${LOOP[@]}")")
	record -c "sleep 600"
	untraced+=("$("${LOOP[@]}")")
	kill -INT "$REC"
	wait "$REC"
	record -c "${LOOP[*]} > $BENCH_TMP/traced.out"
	wait "$REC"
	traced+=("$(cat "$BENCH_TMP/traced.out")")
	echo "rep $rep: off ${off[-1]} ns, untraced ${untraced[-1]} ns, traced ${traced[-1]} ns"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
m_off=$(median "${off[@]}")
m_un=$(median "${untraced[@]}")
m_tr=$(median "${traced[@]}")
echo "SSL_write to a memory BIO, median of $REPS x $N: off $m_off ns," \
	"untraced $m_un ns (+$((m_un - m_off))), traced $m_tr ns (+$((m_tr - m_off)))"
