#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# A VM's steal as the BPF side reads it (docs/design.md §4.7): a busy loop
# pinned to each CPU is recorded for a few seconds, and the STEAL records
# are checked against the kernel's own steal count (/proc/stat) over the
# recording. The loops hold the CPUs nearly all the time, so most of the
# hypervisor's stops fall in their runs: the records must add up to a good
# part of the kernel's count, and never to more (a steal read where there
# was none). Each record's steal must fit in its run. On a machine with
# (almost) no steal only the upper bound can be checked, and is.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_steal
tt_setup
CPUHOG=$OUTPUT/tools/cpuhog
SECONDS_TRACED=${STEAL_SECONDS:-8}

hogs=()
for cpu in $(seq 0 $(($(nproc) - 1))); do
	"$CPUHOG" -c "$cpu" -t $((SECONDS_TRACED + 5)) &
	hogs+=($!)
	TT_PIDS+=($!)
done
args=()
for p in "${hogs[@]}"; do
	args+=(-p "$p")
done
k0=$(steal_ms)
start_record "$TT_TMP/steal.ttft" "${args[@]}"
sleep "$SECONDS_TRACED"
stop_record
k1=$(steal_ms)
for p in "${hogs[@]}"; do
	stop_pid "$p" TERM
done
check "bpf_steal: record exits 0" [ "$RECORD_STATUS" = 0 ]
"$TTFTRACE" report -e "$TT_TMP/steal.ttft" >"$TT_TMP/steal.ev" ||
	fail "bpf_steal: report -e"
# "... steal ns=N on=-Mns": N stolen in a run that began M ns before
read -r n sum_ms over <<<"$(sed -n 's/.* steal  *ns=\([0-9]*\) on=-\([0-9]*\)ns.*/\1 \2/p' \
	"$TT_TMP/steal.ev" | awk '{ n++; s += $1; if ($1 > $2) o++ }
	END { printf "%d %d %d\n", n, s / 1e6, o }')"
kernel=$((k1 - k0))
echo "info: bpf_steal: $n STEAL records, $sum_ms ms in all; the kernel counted $kernel ms over the recording (/proc/stat, 10 ms steps)"
check "bpf_steal: every record's steal fits in its run ($over do not)" [ "$over" = 0 ]
# the kernel's count is in clock ticks: one per CPU of rounding
check "bpf_steal: no more steal than the kernel counted ($sum_ms ms against $kernel)" \
	[ "$sum_ms" -le $((kernel + 10 * $(nproc) + kernel / 10)) ]
# the recorder's own runs, and stops under TT_STEAL_MIN_NS, are not the
# loops': 0.6-0.94 of the kernel's count here
if [ "$kernel" -ge 40 ]; then
	check "bpf_steal: the busy loops' runs hold much of the kernel's steal ($sum_ms ms of $kernel, a third needed)" \
		[ $((sum_ms * 3)) -ge "$kernel" ]
else
	echo "info: bpf_steal: under 40 ms of steal on this machine: the lower bound is not checked"
fi
[ -z "${TT_FAILED:-}" ]
