#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# What a kernel launch's return probe gave the analysis (issue 9): the demo
# server on the stub GPU (demo-server --gpu: KERNELS launches and a sync an
# iteration) under a closed-loop load, recorded with --gpu-probes=all by
# TTFTRACE_B, a build that still probes a launch's return (528e96f or
# before); bench/entry_only makes that recording's launches entry-only, as
# this build records them; this build reports both. Prints which request
# figures differ (none should: docs/design.md §4.5), the GPU table's launch
# row both ways, and the critical paths' on-CPU time labelled "launch" and
# "on-cpu" (the labels may move, compute.cpu may not). Not a test.
# Knobs: LAUNCH_NS (stub launch overhead, 4000), SYNC (spin|block), CONNS
# (4: the batch too), REQUESTS (20 a connection), KERNELS (16).
set -u
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

bench_setup gpu_entry
need_root
need_built
ENTRY_ONLY=$OUTPUT/bench/entry_only
LAUNCH_NS=${LAUNCH_NS:-4000} SYNC=${SYNC:-spin} KERNELS=${KERNELS:-16}
CONNS=${CONNS:-4} REQUESTS=${REQUESTS:-20}
[ -x "${TTFTRACE_B:-}" ] ||
	die "TTFTRACE_B: a ttftrace that probes launch returns (528e96f's build)"
[ -x "$ENTRY_ONLY" ] || die "$ENTRY_ONLY missing: run make first"
dev=$BENCH_TMP/nvidia0
mkfifo -m 0600 "$dev"
export STUBCUDA_DEVICE=$dev STUBCUDA_LAUNCH_NS=$LAUNCH_NS
start_server --gpu --gpu-sync "$SYNC" --kernels-per-step "$KERNELS" \
	--prefill-us 2000 -i 1000 -t 4 -w $((CONNS * 2)) --batch "$CONNS"
unset STUBCUDA_DEVICE STUBCUDA_LAUNCH_NS
TTFTRACE=$TTFTRACE_B start_ttftrace "$BENCH_TMP/ret.ttft" -p "$SERVER_PID" \
	--gpu-device "$dev" --gpu-probes all
"$LOADGEN" -q -p "$PORT" -c "$CONNS" -n $((CONNS * REQUESTS)) --tokens 4 \
	--timeout 30 >/dev/null || die "loadgen failed"
stop_tracer
stop_server
"$ENTRY_ONLY" "$BENCH_TMP/ret.ttft" "$BENCH_TMP/entry.ttft" ||
	die "entry_only failed"
echo "demo-server --gpu --gpu-sync $SYNC, $KERNELS kernels an iteration, launch overhead $LAUNCH_NS ns, batch $CONNS; $((CONNS * REQUESTS)) requests"
echo "recorded by $TTFTRACE_B (launches with their return), reported by $TTFTRACE"
for f in ret entry; do
	"$TTFTRACE" report --json "$BENCH_TMP/$f.ttft" >"$BENCH_TMP/$f.json" ||
		die "report of $f failed"
	ids=$(python3 -c 'import json, sys
print(" ".join(str(r["id"]) for r in json.load(open(sys.argv[1]))["requests"]))' \
		"$BENCH_TMP/$f.json")
	for id in $ids; do
		"$TTFTRACE" report -R "$id" "$BENCH_TMP/$f.ttft" 2>/dev/null
	done | awk -v f="$f" '$4 == "running" {
		if ($5 == "launch") l += $2; else if ($5 == "on-cpu") c += $2 }
		END { printf "  %-6s critical paths: %.3f ms labelled launch, %.3f ms on-cpu\n", f, l, c }'
done
python3 - "$BENCH_TMP/ret.json" "$BENCH_TMP/entry.json" <<'PY'
import json
import sys

a, b = (json.load(open(p)) for p in sys.argv[1:3])
ra, rb = a["requests"], b["requests"]
keys = ["ttft_ns", "stages", "t_dispatch_ns", "t_enqueue_ns", "t_token_ns",
        "dispatch_rule", "enqueue_rule", "token_rule", "dominant", "complete"]
print(f"  requests: {len(ra)} and {len(rb)}")
for k in keys:
    d = [(x["id"], x.get(k), y.get(k)) for x, y in zip(ra, rb) if x.get(k) != y.get(k)]
    print(f"  {k:14} " + ("identical" if not d else f"{len(d)} requests differ, "
                          f"e.g. request {d[0][0]}: {d[0][1]} -> {d[0][2]}"))
print(f"  {'summary':14} " + ("identical" if a["summary"] == b["summary"] else "differs"))
ga = {r["name"]: r for r in a["gpu"]["cuda_calls"]}
gb = {r["name"]: r for r in b["gpu"]["cuda_calls"]}
for n in sorted(set(ga) | set(gb)):
    if ga.get(n) != gb.get(n):
        print(f"  gpu {n}: {ga.get(n)}\n  {'':>{len(n) + 4}}  -> {gb.get(n)}")
    else:
        print(f"  gpu {n}: identical")
PY
