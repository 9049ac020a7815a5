#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Crash safety, the traced side (issue 5): under `ttftrace record -c`, a
# wrapper shell runs two demo servers, A and B. Mid-stream B is killed with
# SIGKILL; an untraced server then takes B's PID (PID reuse, forced through
# /proc/sys/kernel/ns_last_pid); then the traced wrapper restarts B on the
# same port, with the same PID again. A's requests, B's before the kill and
# the restarted B's must all be complete and agree with the clients; B's
# requests cut by the kill must be incomplete; the untraced server must leave
# no trace in the recording.
set -u
. "$(dirname "$0")/lib.sh"
require_root rel_restart
tt_setup
D=$TT_TMP
SRV_ARGS=(-q --prefill-us exp:2000 --seed 11 -i 1000 --batch 8)

cat >"$D/wrapper.sh" <<'EOF'
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# wrapper.sh DIR SERVER ARGS: A and B, then restarts of B on the port read
# from DIR/fifo (builtins only between a restart's request and its fork)
D=$1 S=$2 A=$3
$S -p 0 --port-file "$D/pA" --log "$D/gtA.csv" $A &
echo $! >"$D/A.pid"
$S -p 0 --port-file "$D/pB1" --log "$D/gtB1.csv" $A &
echo $! >"$D/B1.pid"
wait $!
while read -r port <"$D/fifo"; do
	[ "$port" = stop ] && break
	$S -p "$port" --port-file "$D/pB2" --log "$D/gtB2.csv" $A &
	echo $! >"$D/B2.pid.tmp"
	mv "$D/B2.pid.tmp" "$D/B2.pid"
	wait $!
done
wait
EOF
mkfifo "$D/fifo" "$D/idle"
# held open read-write: writes never block, the wrapper's reads wait
exec 7<>"$D/fifo" 8<>"$D/idle"

# wait_nofork COND [SECONDS]: wait_for without forking (sleep would take
# the PID meant for the wrapper's next child): reads time out on an idle fifo
wait_nofork() {
	local i
	for ((i = 0; i < ${2:-10} * 20; i++)); do
		eval "$1" && return 0
		read -r -t 0.05 -u 8
	done
	return 1
}

start_record "$D/restart.ttft" -c "sh $D/wrapper.sh $D $DEMO_SERVER '${SRV_ARGS[*]}'"
wait_for "[ -s $D/pA ] && [ -s $D/pB1 ] && [ -s $D/A.pid ] && [ -s $D/B1.pid ]" 10 ||
	{ fail "rel_restart: servers did not start"; exit 1; }
A_PID=$(cat "$D/A.pid") B1_PID=$(cat "$D/B1.pid")
PORT_A=$(cat "$D/pA") PORT_B=$(cat "$D/pB1")
TT_PIDS+=("$A_PID" "$B1_PID")

chrt -f 10 "$LOADGEN" -q -p "$PORT_A" -c 2 -d 6 --rate 40 --tokens 8 \
	-o "$D/lgA.csv" &
lgA=$!
# long streams (200 tokens, 1 ms apart): the kill cuts some mid-stream
chrt -f 10 "$LOADGEN" -q -p "$PORT_B" -c 4 -n 200 --tokens 200 \
	-o "$D/lgB1.csv" 2>/dev/null &
lgB1=$!
TT_PIDS+=("$lgA" "$lgB1")
sleep 1.2
kill -KILL "$B1_PID"
wait "$lgB1"
wait_for "[ ! -e /proc/$B1_PID ]" 5 || fail "rel_restart: B was not reaped"

# spawn_with_pid PID CMD...: runs CMD in the background as PID (sets
# SPAWNED); tries a few times, other processes may fork in between
spawn_with_pid() {
	local want=$1 i
	shift
	for i in 1 2 3 4 5; do
		echo $((want - 1)) >/proc/sys/kernel/ns_last_pid
		"$@" &
		SPAWNED=$!
		[ "$SPAWNED" = "$want" ] && return 0
		kill -KILL "$SPAWNED"
		wait "$SPAWNED" 2>/dev/null
	done
	return 1
}

# an untraced server takes B's PID
rm -f "$D/pU"
if spawn_with_pid "$B1_PID" "$DEMO_SERVER" -p 0 --port-file "$D/pU" \
	--log "$D/gtU.csv" "${SRV_ARGS[@]}"; then
	pass "rel_restart: an untraced server reuses B's PID $B1_PID"
else
	fail "rel_restart: could not give B's PID $B1_PID to a new process (got $SPAWNED)"
fi
U_PID=$SPAWNED
TT_PIDS+=("$U_PID")
wait_for "[ -s $D/pU ]" 10 || fail "rel_restart: untraced server did not start"
PORT_U=$(cat "$D/pU" 2>/dev/null)
"$LOADGEN" -q -p "$PORT_U" -c 2 -n 20 --tokens 8 -o "$D/lgU.csv" ||
	fail "rel_restart: loadgen against the untraced server"
kill -TERM "$U_PID"
wait "$U_PID"
wait_for "[ ! -e /proc/$U_PID ]" 5

# the traced wrapper restarts B on its port, as B's PID again
B2_PID=
for _ in 1 2 3 4 5; do
	rm -f "$D/B2.pid" "$D/pB2"
	echo $((B1_PID - 1)) >/proc/sys/kernel/ns_last_pid
	echo "$PORT_B" >&7
	wait_nofork "[ -s $D/B2.pid ]" 10 || break
	B2_PID=$(cat "$D/B2.pid")
	TT_PIDS+=("$B2_PID")
	[ "$B2_PID" = "$B1_PID" ] && break
	kill -TERM "$B2_PID" # try again for the same PID
	wait_for "[ ! -e /proc/$B2_PID ]" 5
done
check "rel_restart: traced restart of B reuses PID $B1_PID (got ${B2_PID:-none})" \
	[ "$B2_PID" = "$B1_PID" ]
wait_for "[ -s $D/pB2 ]" 10 || fail "rel_restart: restarted B did not listen"
chrt -f 10 "$LOADGEN" -q -p "$PORT_B" -c 4 -n 60 --tokens 8 \
	-o "$D/lgB2.csv" || fail "rel_restart: loadgen against the restarted B"
wait "$lgA" || fail "rel_restart: loadgen against A"
kill -TERM "$A_PID" "$B2_PID"
echo stop >&7
wait_for "! kill -0 $RECORD_PID 2>/dev/null" 10 # the wrapper ended
stop_record 2>/dev/null
echo "  $(tail -n 1 "$D/restart.ttft.log")"
check "rel_restart: record exits 0" [ "$RECORD_STATUS" = 0 ]

if ! "$TTFTRACE" report --json "$D/restart.ttft" >"$D/restart.json" \
	2>"$D/report.err"; then
	cat "$D/report.err"
	fail "rel_restart: report"
	exit 1
fi
"$TTFTRACE" report --events "$D/restart.ttft" >"$D/restart.events"
python3 - "$D" "$PORT_A" "$PORT_B" "$PORT_U" "$B1_PID" <<'EOF' || TT_FAILED=1
import csv, json, os, sys

d, port_a, port_b, port_u, pid_b = sys.argv[1], *map(int, sys.argv[2:6])
reqs = json.load(open(f"{d}/restart.json"))["requests"]
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from rel_check import Checks  # noqa: E402

checks = Checks("rel_restart")
check, agree = checks.check, checks.agree




def rows(name):
    with open(f"{d}/{name}") as f:
        return list(csv.DictReader(f))


def port(r):
    return int(r["peer"].rsplit(":", 1)[1])


def match(c):  # the tool's requests for client row c
    return [r for r in reqs if port(r) == int(c["local_port"])
            and r["t_arrive_ns"]
            and int(c["t_send_ns"]) <= r["t_arrive_ns"]
            <= (int(c["t_first_token_ns"]) or int(c["t_send_ns"]) + 10**10)]




def exact(name, client):
    """Every whole client request is one complete request of the tool."""
    good = [c for c in client if c["status"] == "ok"]
    wrong, pairs = [], []
    for c in good:
        m = match(c)
        if len(m) != 1 or not m[0]["complete"]:
            wrong.append((c["id"], [(r["id"], r["incomplete_reason"])
                                    for r in m]))
        else:
            pairs.append((m[0], c))
    check(f"{name}: every whole client request is complete",
          len(good) > 0 and not wrong,
          f"{len(good) - len(wrong)} of {len(good)}; not: {wrong[:5]}")
    agree(name, pairs)
    return good


a = exact("A, untouched", rows("lgA.csv"))
b1 = rows("lgB1.csv")
exact("B before the kill", b1)
b2 = exact("B restarted", rows("lgB2.csv"))
complete_a = [r for r in reqs if r["lport"] == port_a and r["complete"]]
check("A: as many complete requests as the client made",
      len(complete_a) == len(a), f"{len(complete_a)}, client {len(a)}")
cut = [c for c in b1 if c["status"] != "ok" and c["status"] != "connect"]
bad = [c["id"] for c in cut if any(r["complete"] for r in match(c))]
check("B's requests cut by the kill are incomplete",
      len(cut) > 0 and not bad,
      f"{len(cut)} cut ({', '.join(sorted({c['status'] for c in cut}))}); "
      f"complete anyway: {bad[:5]}")
complete_b = [r for r in reqs if r["lport"] == port_b and r["complete"]]
good_b = [c for c in b1 if c["status"] == "ok"] + b2
check("B: as many complete requests as the clients' whole ones",
      len(complete_b) == len(good_b),
      f"{len(complete_b)}, clients {len(good_b)}")
check("B's requests were served by PID " + str(pid_b),
      all(r["tgid"] == pid_b for r in complete_b))
u = [r for r in reqs if r["lport"] == port_u]
opens = [l for l in open(f"{d}/restart.events")
         if " conn_open " in l and f"lport={port_u} " in l]
check("the untraced server with B's old PID left no request and no "
      "connection", not u and not opens, f"{len(u)} requests, "
      f"{len(opens)} connections on its port {port_u}")
checks.closure("complete requests' stages sum to their TTFT", reqs)
print(f"  {len(reqs)} requests; A {len(a)}, B {len(good_b)} whole and "
      f"{len(cut)} cut, untraced {len(rows('lgU.csv'))}")
sys.exit(0 if checks.ok else 1)
EOF
[ -z "${TT_FAILED:-}" ]
