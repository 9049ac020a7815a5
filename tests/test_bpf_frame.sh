#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# TTFT in its frame, for real (docs/design.md §9): the demo server recorded
# under load with stub energy sensors (a fake powercap and hwmon tree whose
# RAPL counter wraps, and tools/stubnvml's libnvidia-ml whose counter a
# file scripts). Checks that
#   - SLO attainment and goodput equal what the load generator's own
#     per-request TTFTs give for the same limits (the TTFT limit is put in
#     the widest gap between the client's TTFTs, so that the microseconds
#     between the client's clock and the wire cannot flip a request);
#   - joules per sensor, their sum and tokens per joule are the injected
#     ones (across the wrap; the RAPL core sub-zone, the MMIO zone and the
#     hwmon power input of a device with an energy input are not counted,
#     the dram sub-zone is);
#   - a recording without sensors says "no energy sensor", with no figure;
#   - bad --slo and --price-per-hour values are refused in one line.
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"
require_root bpf_frame
tt_setup
STUBNVML=$OUTPUT/tools/libnvidia-ml.so.1
for bin in "$TTFTRACE" "$DEMO_SERVER" "$LOADGEN" "$STUBNVML"; do
	if [ ! -e "$bin" ]; then
		fail "binaries built: $bin missing (make)"
		exit 1
	fi
done

# --- the fake sensors
SYS=$TT_TMP/sys
RAPL=$SYS/class/powercap/intel-rapl:0
DRAM=$SYS/class/powercap/intel-rapl:0:2
MMIO=$SYS/class/powercap/intel-rapl-mmio:0
mkdir -p "$RAPL" "$SYS/class/powercap/intel-rapl:0:0" "$DRAM" "$MMIO" \
	"$SYS/class/hwmon/hwmon0" "$SYS/class/hwmon/hwmon1"
echo package-0 >"$RAPL/name"
echo 262143328850 >"$RAPL/max_energy_range_uj"
echo 262143000000 >"$RAPL/energy_uj" # 0.32885 J before the wrap
echo core >"$SYS/class/powercap/intel-rapl:0:0/name"
echo 5 >"$SYS/class/powercap/intel-rapl:0:0/energy_uj"
echo dram >"$DRAM/name"
echo 100 >"$DRAM/energy_uj"
echo package-0 >"$MMIO/name"
echo 7 >"$MMIO/energy_uj"
echo fakeacc >"$SYS/class/hwmon/hwmon0/name"
echo 1000000 >"$SYS/class/hwmon/hwmon0/energy1_input"
echo 77000000 >"$SYS/class/hwmon/hwmon0/power1_input" # not counted
echo fakepsu >"$SYS/class/hwmon/hwmon1/name"
echo 20000000 >"$SYS/class/hwmon/hwmon1/power1_input" # 20 W
echo 1000 >"$TT_TMP/nvml.mj"

# --- the demo under load, recorded with the sensors
start_server "$TT_TMP/gt.csv" --prefill-us uniform:1000:80000 --seed 11 \
	-i 2000 --batch 8
TTFTRACE_NVML=$STUBNVML STUBNVML_ENERGY_FILE=$TT_TMP/nvml.mj STUBNVML_UTIL=37 \
	start_record "$TT_TMP/frame.ttft" -p "$SERVER_PID" --energy-root "$SYS"
check "record names the sensors it found" \
	grep -q 'energy sensors: package-0 intel-rapl:0, dram intel-rapl:0:2, fakeacc energy1, fakepsu power1, gpu0 Stub GPU 0$' \
	"$TT_TMP/frame.ttft.log"
chrt -f 10 "$LOADGEN" -q -p "$PORT" -c 2 -n 40 --tokens 8 \
	-o "$TT_TMP/lg.csv" || fail "loadgen"
# the injected energy: across the RAPL wrap, then more of each
echo 500000 >"$RAPL/energy_uj"
echo 999999999 >"$SYS/class/powercap/intel-rapl:0:0/energy_uj"
echo 999999999 >"$MMIO/energy_uj"
echo 3000100 >"$DRAM/energy_uj"
echo 21000000 >"$SYS/class/hwmon/hwmon0/energy1_input"
echo 21000 >"$TT_TMP/nvml.mj"
sleep 1.3 # a reading between the two steps: the wrap is seen once
echo 2500000 >"$RAPL/energy_uj"
echo 41000000 >"$SYS/class/hwmon/hwmon0/energy1_input"
echo 51000 >"$TT_TMP/nvml.mj"
sleep 1.3
stop_record
tt_forget "$RECORD_PID"
check "record exits 0" [ "$RECORD_STATUS" = 0 ]
stop_pid "$SERVER_PID" TERM

# the TTFT limit in the widest gap of the client's TTFTs (between its 20th
# and 80th percentile), TPOT generous: prints "LIMIT_NS GAP_NS"
read -r LIMIT GAP < <(python3 - "$TT_TMP/lg.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
t = sorted(int(r["ttft_rx_ns"]) or int(r["ttft_ns"]) for r in rows)
lo, hi = len(t) // 5, len(t) * 4 // 5
gap, i = max((t[i + 1] - t[i], i) for i in range(lo, hi))
print((t[i] + t[i + 1]) // 2, gap)
EOF
)
check "the client's TTFTs leave a gap of 2 ms for the limit (${GAP:-?} ns)" \
	[ "${GAP:-0}" -ge 2000000 ]
SLO="ttft=${LIMIT}ns,tpot=50ms"
if ! "$TTFTRACE" report --json --slo "$SLO" --price-per-hour 3.6 \
	"$TT_TMP/frame.ttft" >"$TT_TMP/frame.json" 2>"$TT_TMP/report.err"; then
	fail "report --json --slo: $(head -1 "$TT_TMP/report.err")"
	exit 1
fi
"$TTFTRACE" report --slo "$SLO" --price-per-hour 3.6 "$TT_TMP/frame.ttft" \
	>"$TT_TMP/frame.txt" 2>&1
sed -n '/^E2E/,/^cost/p' "$TT_TMP/frame.txt" | sed 's/^/  /'

if ! python3 - "$TT_TMP/frame.json" "$TT_TMP/lg.csv" "$LIMIT" <<'EOF'
import csv, json, sys
rep = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
limit = int(sys.argv[3])
s = rep["summary"]
slo, en, cost = s["slo"], s["energy"], s["cost"]
failed = False

def check(name, ok, why=""):
    global failed
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": " + why))
    failed |= not ok

def near(a, b, rel=1e-6, abs_=1e-6):
    return a is not None and abs(a - b) <= max(abs_, rel * abs(b))

# the client's verdicts for the same limits
ttft = lambda r: int(r["ttft_rx_ns"]) or int(r["ttft_ns"])
met = [r for r in rows if ttft(r) <= limit and int(r["tpot_ns"]) <= 50e6]
span = (max(int(r["t_last_token_ns"]) for r in rows) -
        min(int(r["t_send_ns"]) for r in rows)) / 1e9
check("every request judged", slo["requests"] == len(rows) and
      slo["not_judged"] == 0, "%d judged, %d not, client %d" %
      (slo["requests"], slo["not_judged"], len(rows)))
check("met: the client's count", slo["met"] == len(met),
      "ttftrace %d, client %d" % (slo["met"], len(met)))
check("attainment: the client's", near(slo["attainment"],
      len(met) / len(rows)), "%s vs %s" % (slo["attainment"],
                                           len(met) / len(rows)))
active = slo["active_ns"] / 1e9
check("active time within 2%% of the client's span (%.3f s, %.3f s)" %
      (active, span), abs(active - span) <= 0.02 * span)
check("goodput requests/s: met over the active time",
      near(slo["goodput_rps"], len(met) / active))
good_tokens = sum(int(r["tokens"]) for r in met)
check("goodput tokens/s: the client's met tokens over the active time",
      near(slo["goodput_tps"], good_tokens / active),
      "%s vs %s" % (slo["goodput_tps"], good_tokens / active))
check("goodput within 2%% of the client's (%.2f vs %.2f req/s)" %
      (slo["goodput_rps"], len(met) / span),
      abs(slo["goodput_rps"] - len(met) / span) <= 0.02 * len(met) / span)
misses = sum(slo["violations_by_stage"].values())
check("every miss has its stage", misses == slo["requests"] - slo["met"],
      str(slo["violations_by_stage"]))
byid = [r for r in rep["requests"] if r["slo_met"] is not None]
check("per request slo_met", sum(r["slo_met"] for r in byid) == slo["met"])
check("per request E2E at the wire, >= TTFT",
      all(r["e2e_ns"] and r["e2e_ns"] >= r["ttft_ns"] for r in byid))

# energy: injected 0.32885 + 0.5 + 2 J of RAPL package, 3 J of dram, 40 J
# of hwmon energy, 50 J of NVML, 20 W of hwmon power
sensors = {d["name"]: d for d in en["sensors"]}
check("five sensors (no core sub-zone, no MMIO zone, no power beside an "
      "energy input)", sorted(sensors) == [
          "dram intel-rapl:0:2", "fakeacc energy1", "fakepsu power1",
          "gpu0 Stub GPU 0", "package-0 intel-rapl:0"], str(sorted(sensors)))
check("RAPL dram joules", near(sensors.get("dram intel-rapl:0:2",
      {}).get("joules"), 3.0))
rapl = sensors.get("package-0 intel-rapl:0", {})
check("RAPL joules across the wrap", near(rapl.get("joules"), 2.82885) and
      rapl.get("wraps") == 1, str(rapl))
check("hwmon energy joules", near(sensors.get("fakeacc energy1",
      {}).get("joules"), 40.0))
check("NVML joules", near(sensors.get("gpu0 Stub GPU 0",
      {}).get("joules"), 50.0))
check("NVML utilization", sensors.get("gpu0 Stub GPU 0",
      {}).get("util_percent") == 37 and
      s["utilization"]["gpu_percent"] == 37)
psu = sensors.get("fakepsu power1", {})
check("hwmon power: 20 W mean", near(psu.get("mean_w"), 20.0, 1e-4))
total = sum(d["joules"] for d in en["sensors"])
check("joules: the sensors' sum", near(en["joules"], total))
tokens = sum(r["tokens"] for r in rep["requests"])
check("tokens: the client's", tokens == sum(int(r["tokens"]) for r in rows)
      and en["tokens"] == tokens, "%d, client %d" %
      (tokens, sum(int(r["tokens"]) for r in rows)))
check("tokens per joule", near(en["tokens_per_j"], tokens / total) and
      near(en["j_per_token"], total / tokens))
shares = sum(r["energy_j"] or 0 for r in rep["requests"]) + en["idle_j"]
check("request shares and idle add up to the joules", near(shares, total,
      1e-6), "%s vs %s" % (shares, total))
cores = s["utilization"]["cpu_cores"]
check("busy cores of the traced server: (0, 2]", 0 < cores <= 2, str(cores))
# cost: $3.6/h is $0.001/s
tp = s["throughput"]
check("$ per 1M output tokens", near(cost["usd_per_1m_output_tokens"],
      1e-3 / tp["output_tps"] * 1e6))
check("$ per request", near(cost["usd_per_request"], 1e-3 / tp["rps"]))
sys.exit(1 if failed else 0)
EOF
then
	TT_FAILED=1
fi
# readings at the start, every second, at the end: a ~5 s recording
readings=$("$TTFTRACE" report --events "$TT_TMP/frame.ttft" |
	grep -c ' energy .*domain=0 name=package-0 ')
check "RAPL read every second and at both ends ($readings readings)" \
	[ "$readings" -ge 5 ]
check "text: the SLO, energy and cost lines" \
	grep -q "^goodput: .* requests/s" "$TT_TMP/frame.txt"
check "text: joules per sensor" \
	grep -q "^  gpu0 Stub GPU 0 .* nvml .* 50.000 J" "$TT_TMP/frame.txt"

# --- no sensor: said, and no figure
mkdir -p "$TT_TMP/empty"
TTFTRACE_NVML=$TT_TMP/no-such-libnvidia-ml.so \
	start_record "$TT_TMP/none.ttft" -c "sleep 1.5" --energy-root "$TT_TMP/empty"
check "record says it found no sensor" grep -q "no energy sensor" \
	"$TT_TMP/none.ttft.log"
wait "$RECORD_PID"
tt_forget "$RECORD_PID"
check "report: no energy sensor" grep -q "^energy: no energy sensor" \
	< <("$TTFTRACE" report "$TT_TMP/none.ttft" 2>&1)
check "JSON: energy null" grep -q '"energy":null' \
	< <("$TTFTRACE" report --json "$TT_TMP/none.ttft" 2>&1)
STUBNVML_FAIL_INIT=1 TTFTRACE_NVML=$STUBNVML \
	start_record "$TT_TMP/noinit.ttft" -c "sleep 1" --energy-root "$TT_TMP/empty"
wait "$RECORD_PID"
tt_forget "$RECORD_PID"
check "an NVML that fails to start is no sensor" grep -q "no energy sensor" \
	"$TT_TMP/noinit.ttft.log"

# --- a GPU without an energy counter: its power readings, integrated
STUBNVML_POWER_MW=150000 STUBNVML_GPUS=2 TTFTRACE_NVML=$STUBNVML \
	start_record "$TT_TMP/power.ttft" -c "sleep 2.2" --energy-root "$TT_TMP/empty"
wait "$RECORD_PID"
tt_forget "$RECORD_PID"
power=$("$TTFTRACE" report --json "$TT_TMP/power.ttft" | python3 -c '
import json, sys
en = json.load(sys.stdin)["summary"]["energy"]
print(" ".join("%s:%s:%.3f" % (d["name"].split()[0], d["from"], d["mean_w"])
               for d in en["sensors"]), "%.3f" % en["mean_w"])')
check "NVML power readings: 2 GPUs at 150 W, 300 W in all ($power)" \
	[ "$power" = "gpu0:power:150.000 gpu1:power:150.000 300.000" ]

# --- bad values: refused, the reason on the first line, exit 2
bad_value() { # WHAT ARGS...
	local what=$1 err rc
	shift
	err=$("$TTFTRACE" report "$@" "$TT_TMP/frame.ttft" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 2 ] && head -1 <<<"$err" | grep -q "$what"
}
check "bad --slo: no unit" bad_value "invalid --slo limit" --slo ttft=450
check "bad --slo: unknown key" bad_value "invalid --slo item" --slo ttfb=4ms
check "bad --slo: unknown preset" bad_value "unknown --slo preset" \
	--slo mlperf:gpt5
check "bad --slo: zero" bad_value "invalid --slo limit" --slo tpot=0ms
check "bad --price-per-hour" bad_value "invalid --price-per-hour" \
	--price-per-hour -1
check "bad --price-per-hour: not a number" bad_value \
	"invalid --price-per-hour" --price-per-hour 2usd
[ -z "${TT_FAILED:-}" ]
