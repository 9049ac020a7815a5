#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The bundled demo: start the demo server, trace it with ttftrace under load
# for about 10 s, then print the report. Run as root (make demo).
set -eu
OUTPUT=${OUTPUT:-build}
DURATION=${DURATION:-10}
dir=$(mktemp -d /tmp/ttftrace-demo.XXXXXX)
server_pid=
record_pid=
cleanup() {
	[ -n "$record_pid" ] && kill -INT "$record_pid" 2>/dev/null
	[ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
if [ "$(id -u)" != 0 ]; then
	echo "demo: ttftrace loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
# the engine runs its prefill and decode kernels on the stub GPU
# (tools/stubcuda), blocking in its syncs on the stub's device node
STUBCUDA_DEVICE="$dir/nvidia0" "$OUTPUT"/tools/demo-server -q -p 0 \
	--port-file "$dir/port" --log "$dir/server.csv" --gpu --gpu-sync block \
	--prefill-us exp:4000 --batch 4 -t 32 -i 2000 -w 8 &
server_pid=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")
echo "demo: server pid $server_pid on 127.0.0.1:$port; tracing for ${DURATION}s under load"
"$OUTPUT"/ttftrace record -p "$server_pid" -d "${DURATION}s" -o "$dir/demo.ttft" \
	--gpu-device "$dir/nvidia0" &
record_pid=$!
sleep 1
"$OUTPUT"/tools/loadgen -p "$port" -c 6 -d $((DURATION - 2)) --tokens 32 \
	--prompt-bytes 512 -o "$dir/client.csv"
wait "$record_pid"
record_pid=
echo
"$OUTPUT"/ttftrace report --slo mlperf:llama2-70b-interactive "$dir/demo.ttft"
cp "$dir/demo.ttft" ./demo.ttft
echo
echo "demo: the recording is in ./demo.ttft (ttftrace report --requests demo.ttft)"
