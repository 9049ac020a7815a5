// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Scenario (iii): a Node http SSE server with a worker_thread engine.
//
// The main thread (one event loop) reads each POST, "tokenizes" (--tokenize-ms
// of busy JavaScript), posts the job to the engine worker through a
// MessagePort and wakes it with Atomics.notify (a futex). The worker batches
// continuously (--batch): when idle it sleeps in Atomics.wait; a step is a
// busy loop of prefill-ms per newly admitted job plus decode-ms for the
// running ones; each token goes back with parentPort.postMessage (libuv's
// async wake of the main loop), which res.write()s it (chunked, keep-alive)
// and ends the response with res.end("data: [DONE]\n\n"). The server listens
// once the worker says it is ready, as vLLM's API serves only once its engine
// is up: a worker still starting (a V8 isolate of its own) left the first
// request queued for tens of milliseconds on a loaded machine.
//
// Ground truth (--log; CLOCK_MONOTONIC ns: process.hrtime.bigint() is libuv's
// uv_hrtime(), clock_gettime(CLOCK_MONOTONIC) on Linux): port, t_read,
// t_enqueue, t_admit (worker), t_first_token_emit / t_last_token_emit (just
// before res.write), tokens, io_ns (0), status.
//
//   node node_server.js [-p PORT] --log FILE [--batch N] [--tokens N]
//                       [--prefill-ms MS] [--decode-ms MS] [--tokenize-ms MS]
'use strict';
const { Worker, isMainThread, parentPort, workerData, receiveMessageOnPort,
	MessageChannel } = require('worker_threads');

const { now, spin } = require('./nodeclock');

function engine() {
	const { port, flag, opts } = workerData;
	let running = [];	// {rid, want, n, t_admit}
	let seen = 0;
	parentPort.postMessage({ ready: true });
	for (;;) {
		const fresh = [];
		for (;;) {
			if (running.length + fresh.length >= opts.batch)
				break;
			const m = receiveMessageOnPort(port);
			if (m) {
				fresh.push(m.message);
				continue;
			}
			if (running.length || fresh.length)
				break;
			Atomics.wait(flag, 0, seen);	// idle: a futex wait
			seen = Atomics.load(flag, 0);
		}
		const t_admit = now();
		for (const j of fresh)
			j.t_admit = t_admit;
		spin(opts.prefillMs * fresh.length + (running.length ? opts.decodeMs : 0));
		running = running.concat(fresh);
		for (const j of running) {
			j.n++;
			parentPort.postMessage({ rid: j.rid, idx: j.n, t_admit: j.t_admit,
				last: j.n >= j.want });
		}
		running = running.filter((j) => j.n < j.want);
	}
}

function main() {
	const http = require('http');
	const fs = require('fs');
	const opts = { port: 8000, log: null, batch: 8, tokens: 8, prefillMs: 10,
		decodeMs: 2, tokenizeMs: 1 };
	const names = { '-p': 'port', '--port': 'port', '--log': 'log', '--batch': 'batch',
		'--tokens': 'tokens', '--prefill-ms': 'prefillMs', '--decode-ms': 'decodeMs',
		'--tokenize-ms': 'tokenizeMs' };
	const argv = process.argv.slice(2);
	for (let i = 0; i < argv.length; i += 2) {
		const k = names[argv[i]];
		if (!k || i + 1 >= argv.length) {
			console.error(`node_server: bad argument ${argv[i]}`);
			process.exit(2);
		}
		opts[k] = k === 'log' ? argv[i + 1] : Number(argv[i + 1]);
	}
	if (!opts.log) {
		console.error('node_server: --log FILE is needed');
		process.exit(2);
	}
	const log = fs.openSync(opts.log, 'w');
	fs.writeSync(log, 'port,t_read,t_enqueue,t_admit,t_first_token_emit,' +
		't_last_token_emit,tokens,io_ns,status\n');
	const flag = new Int32Array(new SharedArrayBuffer(4));
	const { port1, port2 } = new MessageChannel();
	const worker = new Worker(__filename, { workerData: { port: port2, flag, opts },
		transferList: [port2] });
	const streams = new Map();
	let nextId = 0;
	worker.on('message', (m) => {
		if (m.ready) {
			server.listen(opts.port, '127.0.0.1', () =>
				console.error(`node_server: listening on ${opts.port}`));
			return;
		}
		const s = streams.get(m.rid);
		if (!s)
			return;
		s.t_admit = m.t_admit;
		s.t_last = now();
		if (!s.t_first)
			s.t_first = s.t_last;
		s.n++;
		s.res.write(`data: {"choices":[{"index":0,"text":"tok${m.idx}"}]}\n\n`);
		if (m.last) {
			streams.delete(m.rid);
			s.res.end('data: [DONE]\n\n');
			fs.writeSync(log, `${s.port},${s.t_read},${s.t_enqueue},${s.t_admit},` +
				`${s.t_first},${s.t_last},${s.n},0,ok\n`);
		}
	});
	const server = http.createServer((req, res) => {
		const body = [];
		req.on('data', (c) => body.push(c));
		req.on('end', () => {
			const t_read = now();
			const r = JSON.parse(Buffer.concat(body).toString());
			spin(opts.tokenizeMs);
			const rid = ++nextId;
			res.writeHead(200, { 'Content-Type': 'text/event-stream' });
			streams.set(rid, { res, port: req.socket.remotePort, t_read, n: 0,
				t_enqueue: now(), t_first: 0n, t_last: 0n, t_admit: 0n });
			port1.postMessage({ rid, want: r.max_tokens || opts.tokens, n: 0 });
			Atomics.add(flag, 0, 1);
			Atomics.notify(flag, 0);
		});
	});
	server.keepAliveTimeout = 60000;
	process.on('SIGTERM', () => process.exit(0));
}

if (isMainThread)
	main();
else
	engine();
