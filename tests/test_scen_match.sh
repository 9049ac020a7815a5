#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# tools/scenarios/compare.py pairs each client request with ttftrace's by
# the client's port and order on it. A gateway's hop (the runner's side of
# its call) is reported with the gateway's upstream port as its peer, and a
# later client connection may be given that port again: the hop is no
# client's and must not take the client's request's place (a CI run of
# `ollama` had 7 of 120 requests paired with hops that way).
set -u
. "$(dirname "$0")/lib.sh"

out=$(/usr/bin/python3 - "$TT_TESTS_DIR/../tools/scenarios" <<'EOF'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import compare

port = 40798
report = {"requests": [
    # the gateway's upstream connection had the port first: a hop on it
    {"id": 1, "peer": f"127.0.0.1:{port}", "t_arrive_ns": 1000, "complete": False,
     "incomplete_reason": "hop"},
    # then a client's connection: the front's request
    {"id": 2, "peer": f"127.0.0.1:{port}", "t_arrive_ns": 5000, "complete": True},
    {"id": 3, "peer": "127.0.0.1:40800", "t_arrive_ns": 6000, "complete": True},
]}
truth = [{"port": str(port), "t_read": "5100"}, {"port": "40800", "t_read": "6100"}]
clients = [{"local_port": str(port), "t_send_ns": "4900"},
           {"local_port": "40800", "t_send_ns": "5900"}]
print(" ".join(str(t["id"]) for c, g, t in compare.matched(report, truth, clients)))
EOF
)
check "compare.py pairs the clients with the front's requests, never a hop on a reused port: $out" \
	[ "$out" = "2 3" ]
# A TLS handshake's exchange is no request either; a request the proxy cut
# (Caddy 2.6, caddyserver/caddy#5431) failed at the client and left no row
# of the server's: the requests after it on the connection still pair with
# their own rows, not the one before's
out=$(/usr/bin/python3 - "$TT_TESTS_DIR/../tools/scenarios" <<'EOF'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import compare

p = "127.0.0.1:40900"
report = {"requests": [
    {"id": 1, "peer": p, "t_arrive_ns": 900, "tls_apart": True},
    {"id": 2, "peer": p, "t_arrive_ns": 1000},
    {"id": 3, "peer": p, "t_arrive_ns": 2000},
    {"id": 4, "peer": p, "t_arrive_ns": 3000},
]}
truth = [{"port": "40900", "t_read": "1100"}, {"port": "40900", "t_read": "3100"}]
clients = [{"local_port": "40900", "t_send_ns": t} for t in ("990", "1990", "2990")]
print(" ".join(f"{t['id']}:{g['t_read']}" for c, g, t in
               compare.matched(report, truth, clients)))
EOF
)
check "compare.py skips a handshake and pairs past a request with no row of the server's: $out" \
	[ "$out" = "2:1100 4:3100" ]
exit ${TT_FAILED:-0}
