#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The real-GPU check, for a machine with an NVIDIA GPU, PyTorch and no
# network: a streaming HTTP server around a tiny random-weight transformer
# (tools/gpu_server.py) traced by a statically linked ttftrace built
# elsewhere (make static). Prints the GPU devices found, the ioctls seen by
# name, the uprobe hits on the real libcuda, per-request TTFT against the
# client's, the compute.gpu share, any hook that failed, and the GPUs'
# energy and utilization read through NVML against nvidia-smi's.
#   tools/gpu-check.sh [OUTDIR]
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/gpu-check}}
tt=${TTFTRACE:-build/ttftrace-static}
lg=${LOADGEN:-build/tools/loadgen-static}
py=${PYTHON:-python3}
requests=${REQUESTS:-60}
mkdir -p "$out"
rm -f "$out"/port "$out"/port0 "$out"/*.csv "$out"/*.ttft* # a stale port file would be read as the new one
server=
record=
cleanup() {
	[ -n "$record" ] && kill -INT "$record" 2>/dev/null
	[ -n "$server" ] && kill "$server" 2>/dev/null
	wait 2>/dev/null
}
trap cleanup EXIT
section() { printf '\n=== %s\n' "$*"; }
wait_for() { # CMD SECONDS
	local i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# The client runs SCHED_FIFO where allowed, so that its own wakeup delay does
# not blur the reference TTFT; some VMs refuse it.
client() { # CSV REQUESTS
	local rt=
	chrt -f 10 true 2>/dev/null && rt="chrt -f 10"
	$rt "$lg" -p "$port" -c 2 -n "$2" --new-conn --tokens 16 \
		--prompt-bytes 256 -o "$1" 2>&1
}

section machine
uname -r
nvidia-smi -L 2>&1 | head -4
nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1
ls -l /dev/nvidia* 2>&1 | head -8
grep -i nvidia /proc/devices
[ -r /sys/kernel/btf/vmlinux ] && echo "BTF: yes" || echo "BTF: no"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1

section ttftrace check
"$tt" check 2>&1

# A model big enough for the GPU to matter: 24 layers of 2048, prompts
# repeated to 1536 tokens (GPU_MODEL overrides).
model=${GPU_MODEL:---layers 24 --hidden 2048 --prefill-tokens 1536}

section "server start traced (ttftrace record -c): CUDA init ioctls"
# shellcheck disable=SC2086
"$tt" record -c "$py tools/gpu_server.py --port-file $out/port0 --log $out/server0.csv --tokens 16 $model" \
	-o "$out/start.ttft" 2>"$out/start.log" &
record=$!
if wait_for "[ -s $out/port0 ]" 180; then
	port=$(cat "$out/port0")
	client "$out/client-start.csv" 10 | tail -3
else
	echo "server did not start under ttftrace:"
	tail -5 "$out/start.log"
fi
kill -INT "$record"
wait "$record"
record=
cat "$out/start.log"
"$tt" report "$out/start.ttft" 2>&1 | sed -n '/^GPU devices/,$p'

section server
# shellcheck disable=SC2086
"$py" tools/gpu_server.py --port-file "$out/port" --log "$out/server.csv" \
	--tokens 16 $model >"$out/server.log" 2>&1 &
server=$!
if ! wait_for "[ -s $out/port ]" 180; then
	echo "server did not start:"
	tail -20 "$out/server.log"
	exit 1
fi
port=$(cat "$out/port")
echo "server pid $server on 127.0.0.1:$port"
grep -m1 'libcuda\.so' "/proc/$server/maps" | awk '{print "libcuda mapped:", $6}'

run() { # NAME PROBES REQUESTS
	local name=$1 probes=$2 n=$3
	section "record --gpu-probes=$probes ($n requests)"
	"$tt" record -p "$server" --gpu-probes "$probes" -v -o "$out/$name.ttft" \
		2>"$out/$name.log" &
	record=$!
	if ! wait_for "grep -q 'recording to' $out/$name.log" 60; then
		cat "$out/$name.log"
		record=
		return 1
	fi
	client "$out/client-$name.csv" "$n"
	kill -INT "$record"
	wait "$record"
	record=
	cat "$out/$name.log"
	"$tt" report "$out/$name.ttft" 2>&1
	"$tt" report --json "$out/$name.ttft" >"$out/$name.json" 2>&1
	"$py" tests/compare_ttft.py "$out/$name.json" "$out/client-$name.csv" 2>&1
	"$py" - "$out/$name.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
reqs = [q for q in r["requests"] if q.get("complete")]
tot = sum(q["ttft_ns"] for q in reqs) or 1
st = {}
for q in reqs:
    for k, v in (q.get("stages") or {}).items():
        st[k] = st.get(k, 0) + v
print("stage shares of TTFT over %d complete requests:" % len(reqs))
for k, v in sorted(st.items(), key=lambda kv: -kv[1]):
    print("  %-20s %6.1f%%" % (k, 100.0 * v / tot))
gpu = r.get("gpu") or {}
calls = sum(c["count"] for c in gpu.get("cuda_calls", []))
ioctls = sum(c["count"] for c in gpu.get("ioctls", []))
print("uprobe hits (CUDA calls returned): %d; GPU ioctls: %d" % (calls, ioctls))
PY
}

# NVML energy: record reads the GPUs' energy counters through
# libnvidia-ml (dlopen; a static ttftrace may fail to load it, and then
# says "no energy sensor"); nvidia-smi's power and utilization, sampled
# alongside, are the reference for the mean power and utilization.
energy() { # REQUESTS
	local smi
	section "NVML energy, SLO and cost ($1 requests)"
	nvidia-smi --query-gpu=index,power.draw,utilization.gpu \
		--format=csv,noheader,nounits -lms 500 >"$out/smi.csv" 2>&1 &
	smi=$!
	"$tt" record -p "$server" -v -o "$out/energy.ttft" 2>"$out/energy.log" &
	record=$!
	if ! wait_for "grep -q 'recording to' $out/energy.log" 60; then
		cat "$out/energy.log"
		kill "$smi"
		record=
		return 1
	fi
	client "$out/client-energy.csv" "$1" | tail -1
	kill -INT "$record"
	wait "$record"
	record=
	kill "$smi"
	grep -E 'energy sensor' "$out/energy.log"
	"$tt" report --slo mlperf:llama2-70b-interactive --price-per-hour 4 \
		"$out/energy.ttft" 2>&1 | sed -n '/^E2E/,/^cost/p'
	"$tt" report --json "$out/energy.ttft" >"$out/energy.json" 2>&1
	"$py" - "$out/energy.json" "$out/smi.csv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
en = s.get("energy") or {}
gpus = [d for d in en.get("sensors", []) if d["source"] == "nvml"]
if not gpus:
    print("NVML: no GPU energy read (library not loaded?)")
rows = [l.split(",") for l in open(sys.argv[2]) if l.count(",") == 2]
for d in gpus:
    idx = d["name"].split()[0][3:]
    mine = [r for r in rows if r[0].strip() == idx]
    try:
        p = sum(float(r[1]) for r in mine) / len(mine)
        u = sum(float(r[2]) for r in mine) / len(mine)
    except (ValueError, ZeroDivisionError):
        p = u = float("nan")
    print("NVML %s: %.1f J, %.1f W mean (nvidia-smi %.1f W), util %s%% "
          "(nvidia-smi %.0f%%)" % (d["name"], d["joules"] or 0,
                                    d["mean_w"] or 0, p, d["util_percent"], u))
PY
}

section "untraced baseline ($requests requests)"
client "$out/client-untraced.csv" "$requests"
run sync sync "$requests"
run all all $((requests / 2))
energy "$requests"
section done
ls -la "$out"
