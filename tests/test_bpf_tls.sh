#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck source-path=SCRIPTDIR
# Servers that encrypt (docs/design.md §3.1, "TLS"): ttftrace reads the
# plaintext OpenSSL's SSL_write was given (uprobes on the system's
# libssl.so.3 and on Node) and pairs it with the sends that carry its
# records. Each server below serves SSE over TLS (tests/servers/, --tls)
# while tests/servers/tls_client.py drives it (2 connections, 4 keep-alive
# requests each, 8 tokens 5 ms apart) and stamps each request with the
# kernel's transmit stamp and its first token with the receive stamp
# (where the read that brought it brought no later one: at least half):
#   threaded  http.server's threads on ssl sockets: OpenSSL sends itself
#   uvicorn   asyncio's SSL (memory BIO: the loop sends the records after)
#   aiohttp   the same, another framework
#   node      Node's https (memory BIO, libuv sends)
#   go        Go's net/http on crypto/tls (tests/servers/go_server.go):
#             the plaintext at Write's entry, for the thread's next send
# Every request must be complete, read as plaintext ("tls": true), with
# the client's 8 tokens, ended by its bytes, its TTFT within 0.2 ms + 1% of
# the client's (those two stamps: the client's own wait to run is in
# neither), its first token
# never on the wire after the client had it; each connection's handshake
# is counted apart, never as a request. With --tls-probes=none (or
# openssl, for Go) the same exchanges must all be reported unreadable
# ("tls"), none complete.
set -u
. "$(dirname "$0")/lib.sh"
require_root bpf_tls
tt_setup
PY=/usr/bin/python3
S=tests/servers
need_command bpf_tls openssl openssl
need_command bpf_tls node nodejs
GOBIN=$OUTPUT/tests/tls_go
go_build bpf_tls "$GOBIN" tests/servers/go_server.go || exit 1
for m in uvicorn starlette aiohttp; do
	"$PY" -c "import $m" 2>/dev/null ||
		{ fail "bpf_tls: $PY lacks $m (tools/deps.sh installs it)"; exit 1; }
done
CERT=$TT_TMP/cert.pem
KEY=$TT_TMP/key.pem
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$KEY" -out "$CERT" \
	-days 2 -subj /CN=localhost >/dev/null 2>&1 ||
	{ fail "bpf_tls: openssl req made no certificate"; exit 1; }

# run_case NAME PROBES SERVER...: PROBES is --tls-probes
run_case() {
	local name=$1 probes=$2 port
	shift 2
	port=$(free_port)
	start_record "$TT_TMP/$name.ttft" --tls-probes "$probes" \
		-c "exec $* -p $port --gap-ms 5 --tls $CERT,$KEY"
	wait_for "(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null" 20 ||
		{ fail "bpf_tls: $name: the server did not listen on $port"; stop_record; return; }
	"$PY" $S/tls_client.py -p "$port" -c 2 -n 4 --tokens 8 \
		-o "$TT_TMP/$name.csv" ||
		fail "bpf_tls: $name: the client failed"
	stop_record
	"$TTFTRACE" report --json --slo ttft=10s "$TT_TMP/$name.ttft" \
		>"$TT_TMP/$name.json" &&
		"$TTFTRACE" report --slo ttft=10s --html "$TT_TMP/$name.html" \
			"$TT_TMP/$name.ttft" >"$TT_TMP/$name.txt" ||
		{ fail "bpf_tls: $name: report"; return; }
	"$TTFTRACE" top -b --fast --replay "$TT_TMP/$name.ttft" \
		>"$TT_TMP/$name.top" 2>&1 ||
		{ fail "bpf_tls: $name: top --replay"; return; }
	"$PY" - "$name" "$probes" "$TT_TMP/$name.json" "$TT_TMP/$name.txt" \
		"$TT_TMP/$name.csv" "$TT_TMP/$name.html" "$TT_TMP/$name.top" \
		<<'PY' || TT_FAILED=1
import csv, json, os, sys
sys.path.insert(0, os.environ["TT_TESTS_DIR"])
from compare_ttft import by_port
from rel_check import Checks
name, probes, rep_path, txt_path, ccsv, html_path, top_path = sys.argv[1:]
rep = json.load(open(rep_path))
summ, reqs = rep["summary"], rep["requests"]
text = open(txt_path).read()
rows = list(csv.DictReader(open(ccsv)))
c = Checks("bpf_tls: " + name)
c.check("the client's 8 requests, 8 tokens each",
        len(rows) == 8 and all(r["tokens"] == "8" for r in rows),
        f"{len(rows)} rows, tokens {sorted({r['tokens'] for r in rows})}")
# the live view counts every exchange no probe read apart (it cannot wait
# for the whole recording to tell a handshake's from a request's)
top = open(top_path).read()
apart = summ["tls_exchanges_apart"] + summ["tls_unread"]
read = summ["requests"] - summ["tls_unread"]
c.check("top counts the exchanges no probe read apart, not as incomplete",
        f"\nrequests {read} ({summ['complete']} complete)" in top and
        f"\ntls {apart} apart; incomplete 0" in top,
        f"{apart} apart, {read} requests: "
        f"{[ln for ln in top.splitlines() if ln.startswith(('requests', 'tls', 'incomplete'))]}")
if probes == "none" or name.endswith("-unprobed"):
    c.check("none read: every exchange unreadable, none complete",
            summ["tls_requests"] == 0 and summ["complete"] == 0 and
            summ["tls_unread"] >= len(rows),
            f"tls_requests {summ['tls_requests']}, complete "
            f"{summ['complete']}, unread {summ['tls_unread']}")
    c.check("the report says why", "whose plaintext no probe saw" in text)
    sys.exit(0 if c.ok else 1)
tls = [r for r in reqs if r["tls"]]
bad = [(r["id"], r["incomplete_reason"], r["end"], r["tokens"]) for r in tls
       if not r["complete"] or r["end"] != "done" or r["tokens"] != 8]
c.check("every request read as plaintext, complete, 8 tokens, 'done'",
        len(tls) == len(rows) and not bad and summ["tls_unread"] == 0,
        f"{len(tls)} read for the client's {len(rows)}, unread "
        f"{summ['tls_unread']}, bad {bad[:5]}")
marked = [r for r in reqs if r["tls_apart"]]
c.check("each connection's handshake counted apart, and marked so",
        summ["tls_exchanges_apart"] >= 2 and summ["requests"] == len(rows) and
        len(marked) == summ["tls_exchanges_apart"] and
        all(not r["tls"] and r["incomplete_reason"] == "tls" for r in marked),
        f"apart {summ['tls_exchanges_apart']}, marked {len(marked)}, "
        f"requests {summ['requests']}")
c.check("the report says so", "requests read as the plaintext" in text)
# the SLO's frame leaves them out as well: no request went unjudged
slo = summ["slo"]
c.check("the SLO judges every request, the handshakes apart",
        slo["requests"] == len(rows) and slo["not_judged"] == 0 and
        slo["tls_exchanges_apart"] == summ["tls_exchanges_apart"] and
        f"0 incomplete request(s) not judged; "
        f"{summ['tls_exchanges_apart']} TLS handshake exchanges" in text,
        f"judged {slo['requests']}, not {slo['not_judged']}, apart "
        f"{slo['tls_exchanges_apart']}")
page = open(html_path).read()
c.check("so does the page: the handshakes apart, the requests counted",
        f"{len(rows)} (complete {len(rows)}, incomplete 0), "
        f"{summ['tls_exchanges_apart']} TLS handshake exchanges apart" in page)
tool = by_port(tls, lambda r: int(r["peer"].rsplit(":", 1)[1]),
               lambda r: r["t_arrive_ns"] or 0)
client = by_port(rows, lambda row: int(row["local_port"]),
                 lambda row: int(row["t_send_ns"]))
off, late, n, exact = [], [], 0, 0
for port, crs in client.items():
    for r, row in zip(tool.get(port, []), crs):
        # the kernel's stamps at both ends: the client's own wait to run
        # (2 busy CPUs) is in neither
        rx = int(row["t_first_token_rx_ns"])
        sent = int(row["t_send_tx_ns"]) or int(row["t_send_ns"])
        want = rx - sent
        n += 1
        if r["t_wire_ns"] > rx + 1000:
            late.append(r["id"])
        # a read that brought a later event too is stamped with its
        # arrival: no reference for the first one's (only "not later")
        if row["first_exact"] != "1":
            continue
        exact += 1
        if abs(r["ttft_ns"] - want) > 200_000 + 0.01 * want:
            off.append((r["id"], r["ttft_ns"], want))
stamped = sum(1 for row in rows if row["t_send_tx_ns"] not in ("", "0"))
c.check("every TTFT within 0.2 ms + 1% of the client's", n == len(rows)
        and exact >= len(rows) // 2 and not off,
        f"{n} matched, {exact} with an exact first-token stamp, {stamped} "
        f"by transmit stamps, off {off[:5]}")
c.check("no first token on the wire after the client received it",
        not late, f"{late[:5]}")
sys.exit(0 if c.ok else 1)
PY
}

run_case threaded openssl "$PY" $S/threaded_server.py
run_case uvicorn openssl "$PY" $S/uvicorn_server.py
run_case aiohttp openssl "$PY" $S/aiohttp_server.py
run_case node openssl node $S/node_server.js
run_case go all "$GOBIN"
run_case uvicorn-unprobed none "$PY" $S/uvicorn_server.py
run_case go-unprobed openssl "$GOBIN"
[ -z "${TT_FAILED:-}" ]
