#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The real-GPU check, for a machine with an NVIDIA GPU, PyTorch and no
# network: a streaming HTTP server around a tiny random-weight transformer
# (tools/gpu_server.py) traced by a statically linked ttftrace built
# elsewhere (make static). Prints the GPU devices found, the ioctls seen by
# name, the uprobe hits on the real libcuda, per-request TTFT against the
# client's, the compute.gpu share, and any hook that failed.
#   tools/gpu-check.sh [OUTDIR]
set -u
cd "$(dirname "$0")/.."
out=${1:-${OUT:-/tmp/gpu-check}}
tt=${TTFTRACE:-build/ttftrace-static}
lg=${LOADGEN:-build/tools/loadgen-static}
py=${PYTHON:-python3}
requests=${REQUESTS:-60}
mkdir -p "$out"
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

section server
"$py" tools/gpu_server.py --port-file "$out/port" --log "$out/server.csv" \
	--tokens 16 >"$out/server.log" 2>&1 &
server=$!
if ! wait_for "[ -s $out/port ]" 180; then
	echo "server did not start:"
	tail -20 "$out/server.log"
	exit 1
fi
port=$(cat "$out/port")
echo "server pid $server on 127.0.0.1:$port"
grep -m1 libcuda "/proc/$server/maps" | awk '{print "libcuda mapped:", $6}'

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
	chrt -f 10 "$lg" -p "$port" -c 2 -n "$n" --new-conn --tokens 16 \
		--prompt-bytes 256 -o "$out/client-$name.csv" 2>&1
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

section "untraced baseline ($requests requests)"
chrt -f 10 "$lg" -p "$port" -c 2 -n "$requests" --new-conn --tokens 16 \
	--prompt-bytes 256 -o "$out/client-untraced.csv" 2>&1
run sync sync "$requests"
run all all $((requests / 2))
section done
ls -la "$out"
