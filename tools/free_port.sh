# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# free_port: prints a TCP port that no socket uses, for a test server.
# Sourced by tests/lib.sh and tools/scenarios/run.sh. It is drawn below the
# kernel's ephemeral range: a port there can be taken, between this check and
# the server's bind, by any connection's source port (EADDRINUSE).
free_port() {
	local lo hi p
	read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
	hi=$((lo > 21024 ? lo - 1 : 32767))
	while :; do
		p=$((20000 + RANDOM % (hi - 20000)))
		ss -Htan "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
}
