# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# shellcheck shell=bash
# Two network namespaces joined by a veth pair, each end shaped by a token
# bucket, for the network scenarios of the BPF tests: sourced, never run.
# Needs root and iproute2 (ip, tc). The addresses are test-only hosts in
# 10.200.0.0/30: the namespaces have no route anywhere else.
#
#   netns_setup          creates them; sets NETNS_SRV, NETNS_CLI (names),
#                        NETNS_SRV_ADDR, NETNS_CLI_ADDR; 0 or 1 (said why)
#   netns_cleanup        deletes them (and every process left in them);
#                        safe to call twice: call it from the EXIT trap
#   in_srv CMD..., in_cli CMD...   run CMD in one of them
# NETNS_RATE, NETNS_BURST, NETNS_LATENCY override the tbf parameters.

NETNS_SRV=
NETNS_CLI=
NETNS_SRV_ADDR=10.200.0.1
NETNS_CLI_ADDR=10.200.0.2
NETNS_RATE=${NETNS_RATE:-8mbit}
NETNS_BURST=${NETNS_BURST:-32kbit}
NETNS_LATENCY=${NETNS_LATENCY:-400ms}

in_srv() { ip netns exec "$NETNS_SRV" "$@"; }
in_cli() { ip netns exec "$NETNS_CLI" "$@"; }

netns_cleanup() {
	local ns pid
	for ns in $NETNS_SRV $NETNS_CLI; do
		# processes still inside would keep the namespace alive
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	NETNS_SRV=
	NETNS_CLI=
}

netns_setup() {
	local tag=tt$$ err
	if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
		echo "netns: ip and tc (iproute2) are needed" >&2
		return 1
	fi
	NETNS_SRV=${tag}s
	NETNS_CLI=${tag}c
	# a veth end is named inside its namespace: the same names in both
	if ! err=$({
		ip netns add "$NETNS_SRV" &&
		ip netns add "$NETNS_CLI" &&
		ip link add "${tag}a" netns "$NETNS_SRV" type veth \
			peer name "${tag}b" netns "$NETNS_CLI" &&
		in_srv ip addr add "$NETNS_SRV_ADDR/30" dev "${tag}a" &&
		in_cli ip addr add "$NETNS_CLI_ADDR/30" dev "${tag}b" &&
		in_srv ip link set lo up &&
		in_cli ip link set lo up &&
		in_srv ip link set "${tag}a" up &&
		in_cli ip link set "${tag}b" up &&
		in_srv tc qdisc add dev "${tag}a" root tbf rate "$NETNS_RATE" \
			burst "$NETNS_BURST" latency "$NETNS_LATENCY" &&
		in_cli tc qdisc add dev "${tag}b" root tbf rate "$NETNS_RATE" \
			burst "$NETNS_BURST" latency "$NETNS_LATENCY"
	} 2>&1); then
		echo "netns: setup failed: $(echo "$err" | tail -1)" >&2
		netns_cleanup
		return 1
	fi
	# the link is up once a packet crosses it (when ping is there to say)
	if command -v ping >/dev/null &&
	   ! in_cli ping -c 1 -W 2 "$NETNS_SRV_ADDR" >/dev/null 2>&1; then
		echo "netns: $NETNS_SRV_ADDR does not answer from $NETNS_CLI" >&2
		netns_cleanup
		return 1
	fi
	return 0
}
