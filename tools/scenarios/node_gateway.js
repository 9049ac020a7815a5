// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Scenario: a Node gateway in front of a runner (an Express-style
// OpenAI-compatible proxy in front of llama.cpp's server).
//
// Written after the hop rules (docs/design.md §4.11), to judge them on a
// third gateway runtime: libuv's event loop, Node's http client with a
// keep-alive Agent. It spawns llama_server.c (--runner) on a free loopback
// port; the main thread reads each POST, renders the prompt (--prep-ms of
// busy JavaScript), sends it on to the runner, and writes each SSE event the
// runner streams back to the client as its own (res.write, chunked), ending
// with res.end('data: [DONE]\n\n'). One thread serves every request and
// every upstream connection.
//
// Ground truth (--log; CLOCK_MONOTONIC ns: process.hrtime.bigint()), as
// ollama_proxy.go's: port, t_read, upstream_port (the local port of the
// connection to the runner), t_forward (before the request to the runner),
// t_first_token_emit / t_last_token_emit (just before res.write), tokens,
// status. The runner logs its own rows (--runner-log); compare.py --hops
// joins them.
//
//   node node_gateway.js -p PORT --log FILE --runner BIN [--runner-log FILE]
//                        [--runner-threads N] [--prep-ms MS]
'use strict';
const http = require('http');
const net = require('net');
const fs = require('fs');
const { spawn } = require('child_process');

const { now, spin } = require('./nodeclock');

function parseArgs(argv) {
	const o = { port: 8000, log: '', runner: '', runnerLog: '', runnerThreads: 8,
		prepMs: 0.5 };
	const keys = { '-p': 'port', '--log': 'log', '--runner': 'runner',
		'--runner-log': 'runnerLog', '--runner-threads': 'runnerThreads',
		'--prep-ms': 'prepMs' };
	for (let i = 0; i + 1 < argv.length; i += 2) {
		const k = keys[argv[i]];
		if (!k)
			throw new Error(`unknown option ${argv[i]}`);
		o[k] = typeof o[k] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
	}
	if (argv.length % 2 || !o.log || !o.runner)
		throw new Error('usage: -p PORT --log FILE --runner BIN [--runner-log FILE]');
	return o;
}

// A free loopback port for the runner.
function freePort() {
	return new Promise((resolve, reject) => {
		const s = net.createServer();
		s.on('error', reject);
		s.listen(0, '127.0.0.1', () => {
			const p = s.address().port;
			s.close(() => resolve(p));
		});
	});
}

// Resolves once something listens on port (the runner), within 10 s.
function listening(port) {
	return new Promise((resolve, reject) => {
		let tries = 200;
		const attempt = () => {
			const c = net.connect(port, '127.0.0.1', () => {
				c.destroy();
				resolve();
			});
			c.on('error', () => {
				if (--tries <= 0)
					return reject(new Error(`the runner did not listen on ${port}`));
				setTimeout(attempt, 50);
			});
		};
		attempt();
	});
}

async function main() {
	const o = parseArgs(process.argv.slice(2));
	const runnerPort = await freePort();
	const args = ['-p', String(runnerPort), '--http-threads', String(o.runnerThreads)];
	if (o.runnerLog)
		args.push('--log', o.runnerLog);
	const runner = spawn(o.runner, args, { stdio: 'inherit' });
	const stop = () => {
		runner.kill('SIGTERM');
		process.exit(0);
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
	await listening(runnerPort);

	const log = fs.openSync(o.log, 'w');
	fs.writeSync(log, 'port,t_read,upstream_port,t_forward,t_first_token_emit,' +
		't_last_token_emit,tokens,status\n');
	const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

	const server = http.createServer((req, res) => {
		const body = [];
		req.on('data', (c) => body.push(c));
		req.on('end', () => {
			const t_read = now();
			const payload = Buffer.concat(body);
			spin(o.prepMs);
			const row = { port: req.socket.remotePort, t_read, up: 0,
				t_forward: now(), t_first: 0n, t_last: 0n, n: 0 };
			const up = http.request({ host: '127.0.0.1', port: runnerPort,
				path: '/completion', method: 'POST', agent,
				headers: { 'Content-Type': 'application/json',
					'Content-Length': payload.length } });
			up.on('socket', (s) => {
				row.up = s.localPort;
				s.once('connect', () => { row.up = s.localPort; });
			});
			up.on('response', (ur) => {
				res.writeHead(200, { 'Content-Type': 'text/event-stream' });
				let pending = '';
				ur.setEncoding('utf8');
				ur.on('data', (chunk) => {
					pending += chunk;
					let cut;
					while ((cut = pending.indexOf('\n\n')) >= 0) {
						const ev = pending.slice(0, cut).trim();
						pending = pending.slice(cut + 2);
						if (!ev.startsWith('data: ') || ev === 'data: [DONE]')
							continue;
						row.t_last = now();
						if (!row.t_first)
							row.t_first = row.t_last;
						row.n++;
						res.write(`data: {"choices":[{"index":0,"text":"tok${row.n}"}]}\n\n`);
					}
				});
				ur.on('end', () => {
					res.end('data: [DONE]\n\n');
					fs.writeSync(log, `${row.port},${row.t_read},${row.up},${row.t_forward},` +
						`${row.t_first},${row.t_last},${row.n},ok\n`);
				});
			});
			up.on('error', (e) => {
				res.writeHead(502);
				res.end(String(e));
			});
			up.end(payload);
		});
	});
	server.keepAliveTimeout = 60000;
	server.listen(o.port, '127.0.0.1');
}

main().catch((e) => {
	console.error(`node_gateway: ${e.message}`);
	process.exit(2);
});
