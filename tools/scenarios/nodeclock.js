// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// The Node scenario servers' clock and busy work (node_server.js,
// node_gateway.js), as goclock.go is the Go ones': now() is
// process.hrtime.bigint(), libuv's uv_hrtime(), clock_gettime(CLOCK_MONOTONIC)
// on Linux, as ttftrace's bpf_ktime_get_ns(); spin(ms) keeps a CPU busy
// that long, as a native kernel or a tokenizer does.
'use strict';

const now = () => process.hrtime.bigint();

function spin(ms) {
	const end = now() + BigInt(Math.round(ms * 1e6));
	let x = 0;
	while (now() < end)
		x = (x * 31 + 7) | 0;
	return x;
}

module.exports = { now, spin };
