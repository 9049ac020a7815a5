#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ttftrace top (docs/design.md §10): the batch frames of a replayed
# recording of known content (bench/gen_recording: every request
# complete) against report on the same file, each request counted once,
# every frame within 80x24; then one live top -b -p on the demo server.
set -u
. "$(dirname "$0")/lib.sh"
tt_setup
need_gen
REC=$TT_TMP/g.ttft
line=$("$GEN" -n 150000 -c 20 -r 60 -t 16 -s 3 "$REC")
generated=$(echo "$line" | awk '{ print $4 }')
"$TTFTRACE" report --json "$REC" >"$TT_TMP/g.json" || fail "report reads the recording"
"$TTFTRACE" top -b --replay "$REC" --fast >"$TT_TMP/frames" 2>"$TT_TMP/err"
check "top -b --replay --fast exits 0" [ $? = 0 ]
"$TTFTRACE" top -b --replay "$REC" --fast >"$TT_TMP/frames2" 2>&1
check "a replay gives the same frames every time" cmp -s "$TT_TMP/frames" "$TT_TMP/frames2"
"$TTFTRACE" top -b --replay "$REC" --fast -w 5s -d 500ms -s age >"$TT_TMP/frames5" 2>&1
"$TTFTRACE" top -b --replay "$REC" --fast -n 3 >"$TT_TMP/frames3" 2>&1
check "-n 3: three frames" [ "$(grep -c '^ttftrace top' "$TT_TMP/frames3")" = 3 ]

python3 - "$TT_TMP/g.json" "$generated" "$TT_TMP/frames" "$TT_TMP/frames5" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

rep = json.load(open(sys.argv[1]))
generated = int(sys.argv[2])
checks = Checks("top replay")



def parse(path):
    out, cur = [], None
    for line in open(path).read().split("\n"):
        if line.startswith("ttftrace top"):
            cur = [line]
            out.append(cur)
        elif cur is not None:
            cur.append(line)
    # the blank line between frames belongs to neither
    return [f[:-1] if f and f[-1] == "" else f for f in out]


def ms(ns):
    return "%.3f" % (round(ns / 1000) / 1000)


fr = parse(sys.argv[3])
sizes = [(len(f), max(len(l) for l in f)) for f in fr]
checks.check("every frame fits 80x24",
             all(n <= 24 and w <= 80 for n, w in sizes), str(sizes[:3]))
totals = [int(re.match(r"requests (\d+)", f[1]).group(1)) for f in fr]
fresh = [int(re.search(r"(\d+) new", f[1]).group(1)) for f in fr]
checks.check("totals never go back", totals == sorted(totals), str(totals))
checks.check("each request counted once: the new ones add up to the total",
             sum(fresh) == totals[-1], f"{sum(fresh)} vs {totals[-1]}")
s = rep["summary"]
checks.check("the last frame counts every request of the recording",
             totals[-1] == generated == s["requests"],
             f"top {totals[-1]}, generated {generated}, report {s['requests']}")
last = fr[-1]
checks.check("the last frame's requests are all complete",
             re.match(r"requests (\d+) \((\d+) complete\)", last[1]).groups()
             == (str(generated), str(generated)), last[1])
rows = {l.split()[0]: l.split()[1:] for l in last if re.match(r"(TTFT|TPOT|ITL) ", l)}
for name, key in (("TTFT", "ttft_ns"), ("TPOT", "tpot_ns"), ("ITL", "itl_ns")):
    want = [ms(s[key][p]) for p in ("p50", "p90", "p99", "max")]
    checks.check(f"{name} p50/p90/p99/max as report's", rows[name][:4] == want,
                 f"top {rows[name][:4]}, report {want}")
shares = dict(re.findall(r"([a-z.]+)\s+(\d+)%", " ".join(
    l for l in last if l.startswith("stages") or l.startswith(" " * 15))))
names = {"net.in": "network.in", "net.out": "network.out",
         "backlog": "scheduler.backlog", "queue": "scheduler.queue",
         "runq": "scheduler.runqueue",
         "storage": "storage.io", "gpu": "compute.gpu", "cpu": "compute.cpu",
         "other": "other"}
bad = [(k, v, s["stages"][names[k]]["share"]) for k, v in shares.items()
       if abs(int(v) - 100 * s["stages"][names[k]]["share"]) > 0.51]
checks.check("stage shares as report's", len(shares) == 9 and not bad, str(bad))
slow = [l for l in last[last.index(next(l for l in last if l.startswith(" age s"))) + 1:]]
ttfts = [float(l.split()[2]) for l in slow if l.strip()]
checks.check("the slowest requests, slowest first, the worst is the max",
             ttfts == sorted(ttfts, reverse=True) and ttfts
             and "%.3f" % ttfts[0] == rows["TTFT"][3], str(ttfts[:3]))
checks.check("each slow request has its dominant stage",
             all(l.split()[-1] in names.values() for l in slow if l.strip()),
             slow[0] if slow else "none")

f5 = parse(sys.argv[4])
t5 = [int(re.match(r"requests (\d+)", f[1]).group(1)) for f in f5]
n5 = [int(re.search(r"last 5s: (\d+)", f[1]).group(1)) for f in f5]
checks.check("-w 5s: the rolling span holds fewer than the total",
             t5[-1] == generated and n5[-1] < t5[-1], f"{n5[-1]} of {t5[-1]}")
checks.check("-d 500ms: about twice the frames", len(f5) >= 2 * len(fr) - 3,
             f"{len(f5)} vs {len(fr)}")
ages = [float(l.split()[0]) for l in f5[-2][14:] if l.strip()]
checks.check("-s age: newest first", "by age" in f5[-2][12] and
             ages == sorted(ages), str(ages[:4]))
sys.exit(0 if checks.ok else 1)
PY
[ $? = 0 ] || TT_FAILED=1

# requests of 6.4 s: followed whole within the default span; with -w 5s
# (less two guards of 1 s) each is counted once, as it stands
"$GEN" -n 40000 -c 8 -r 4 -t 16 -i 400000 -s 5 "$TT_TMP/long.ttft" >/dev/null
"$TTFTRACE" top -b --fast --replay "$TT_TMP/long.ttft" >"$TT_TMP/long30" 2>&1
"$TTFTRACE" top -b --fast -w 5s --replay "$TT_TMP/long.ttft" >"$TT_TMP/long5" 2>&1
long=$("$TTFTRACE" report --json "$TT_TMP/long.ttft" | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["complete"])')
check "6.4 s requests, 30 s span: all $long complete" \
	grep -q "^requests $long ($long complete)" "$TT_TMP/long30"
new=$(grep -oE '[0-9]+ new' "$TT_TMP/long5" | awk '{ s += $1 } END { print s }')
check "6.4 s requests, 5 s span: each counted once ($new of $long), as it stands (open-at-end)" \
	bash -c "[ '$new' = '$long' ] && grep -q '^requests $long (0 complete)' '$TT_TMP/long5' && grep -q 'open-at-end' '$TT_TMP/long5'"

# interactive, on a terminal: raw while it runs, keys s and q, the
# terminal as it was afterwards
python3 - "$TTFTRACE" "$REC" <<'PY'
import os, select, subprocess, sys, termios, time
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

checks = Checks("top on a terminal")
master, slave = os.openpty()
before = termios.tcgetattr(slave)
out = b""


def start():
    """top on the terminal, paced, a frame every 200 ms"""
    global out
    out = b""
    return subprocess.Popen([sys.argv[1], "top", "--replay", sys.argv[2],
                             "-d", "200ms"], stdin=slave, stdout=slave,
                            stderr=slave)


def ended(p):
    """its status once it ended (None: killed after 5 s), what it wrote
    up to the main screen's return"""
    try:
        rc = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    read_until(b"\x1b[?1049l", 1)
    return rc


def read_until(pat, secs):
    global out
    end = time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            out += os.read(master, 65536)
        if pat in out:
            return True
    return False


p = start()
checks.check("a frame on the alternate screen", read_until(b"slowest by TTFT", 10)
             and b"\x1b[?1049h" in out)
raw = termios.tcgetattr(slave)
checks.check("no echo, no line editing while it runs",
             not raw[3] & (termios.ECHO | termios.ICANON))
os.write(master, b"s")
checks.check("s sorts by TPOT", read_until(b"slowest by TPOT", 5))
os.write(master, b"q")
rc = ended(p)
checks.check("q quits, status 0", rc == 0, str(rc))
checks.check("the terminal restored: modes, main screen, cursor",
             termios.tcgetattr(slave)[3] == before[3]
             and out.rstrip().endswith(b"\x1b[?25h\x1b[?1049l"), repr(out[-20:]))

# SIGTERM in the middle: the terminal restored all the same
p = start()
read_until(b"slowest by TTFT", 10)
p.terminate()
rc = ended(p)
checks.check("SIGTERM: ends, the terminal restored",
             rc is not None and termios.tcgetattr(slave)[3] == before[3]
             and b"\x1b[?1049l" in out, str(rc))
sys.exit(0 if checks.ok else 1)
PY
[ $? = 0 ] || TT_FAILED=1

# a name from outside is escaped, the title stays one line of 80 columns
evil=$TT_TMP/$'\e[2J\nTTFT 1.0ms ok'$(printf 'x%.0s' $(seq 60)).ttft
cp "$REC" "$evil"
"$TTFTRACE" top -b --fast -n 1 --replay "$evil" >"$TT_TMP/evil.out" 2>&1
check "a file name's control bytes are escaped in the title" \
	bash -c "! grep -q \$'\\e' '$TT_TMP/evil.out' && [ \$(head -1 '$TT_TMP/evil.out' | wc -c) -le 81 ] && grep -q '^requests' '$TT_TMP/evil.out'"

# bad input: one line, non-zero
out=$("$TTFTRACE" top -b --replay "$TT_TMP/none.ttft" 2>&1)
check "a missing recording: one line, exit 1" [ $? = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ]
"$TTFTRACE" top -b 2>/dev/null
check "nothing to show: exit 2" [ $? = 2 ]
"$TTFTRACE" top -b --fast -p 1 2>/dev/null
check "--fast without --replay: exit 2" [ $? = 2 ]

# live, on the demo server under load
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: top -b -p: needs root to load BPF programs"
	exit ${TT_FAILED:-0}
fi
start_server "$TT_TMP/server.log"
"$TTFTRACE" top -b -n 4 -p "$SERVER_PID" >"$TT_TMP/live" 2>"$TT_TMP/live.err" &
TOP_PID=$!
TT_PIDS+=("$TOP_PID")
sleep 1
"$LOADGEN" -q -p "$PORT" -c 4 -n 120 --timeout 20 >/dev/null 2>&1
check "loadgen completes its requests" [ $? = 0 ]
wait "$TOP_PID"
check "top -b -n 4 -p exits 0 after 4 frames" [ $? = 0 ] && [ "$(grep -c '^ttftrace top' "$TT_TMP/live")" = 4 ]
tt_forget "$TOP_PID"
last=$(grep '^requests' "$TT_TMP/live" | tail -1)
n=$(echo "$last" | awk '{ print $2 }')
check "live frames count the demo's requests ($last)" [ "${n:-0}" -gt 0 ]
check "live frames show TTFT percentiles" grep -qE '^TTFT +[0-9]+\.[0-9]{3}' "$TT_TMP/live"
check "live frames name the slowest requests' dominant stage" \
	grep -qE '127\.0\.0\.1:[0-9]+ .* (scheduler|compute|network|storage|other)' "$TT_TMP/live"
exit ${TT_FAILED:-0}
