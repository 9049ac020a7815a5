// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// Node's http server (tests/test_bpf_framing.sh): SSE by res.write per
// token and res.end("data: [DONE]\n\n") (chunked, keep-alive; the end goes
// out in one writev with the last token), JSON by res.end(body) with a
// Content-Length (headers and body in one send).
// --tls CERT,KEY: https (Node's TLS: OpenSSL writes to a memory BIO,
// libuv sends its records).
//   node node_server.js -p PORT [--pad N] [--no-done] [--gap-ms MS]
//        [--tls CERT,KEY]
'use strict';
const fs = require('fs');
const http = require('http');
const https = require('https');

const opt = { port: 0, pad: 0, done: true, gapMs: 1, tls: null };
for (let i = 2; i < process.argv.length; i++) {
	const a = process.argv[i];
	if (a === '-p' || a === '--port')
		opt.port = Number(process.argv[++i]);
	else if (a === '--pad')
		opt.pad = Number(process.argv[++i]);
	else if (a === '--gap-ms')
		opt.gapMs = Number(process.argv[++i]);
	else if (a === '--no-done')
		opt.done = false;
	else if (a === '--tls')
		opt.tls = process.argv[++i].split(',');
	else {
		console.error(`node_server.js: unknown argument ${a}`);
		process.exit(2);
	}
}

// as tests/servers/common.py writes them
const event = (i) => 'data: ' + JSON.stringify({ id: 'cmpl-1',
	object: 'text_completion', choices: [{ index: 0, text: ` tok${i}` }],
	pad: 'x'.repeat(opt.pad) }) + '\n\n';

const serve = (req, res) => {
	let body = '';
	req.on('data', (d) => { body += d; });
	req.on('end', () => {
		let want = {};
		try { want = JSON.parse(body || '{}'); } catch (e) { want = {}; }
		const n = Number(want.max_tokens) || 8;
		if (want.stream === false) {
			const out = JSON.stringify({ id: 'cmpl-1', object: 'text_completion',
				choices: [{ index: 0, text: ' tok'.repeat(n) }] });
			res.writeHead(200, { 'Content-Type': 'application/json',
				'Content-Length': Buffer.byteLength(out) });
			res.end(out);
			return;
		}
		res.writeHead(200, { 'Content-Type': 'text/event-stream' });
		let i = 0;
		const next = () => {
			res.write(event(i++));
			if (i < n)
				setTimeout(next, opt.gapMs);
			else if (opt.done)
				res.end('data: [DONE]\n\n');
			else
				res.end();
		};
		next();
	});
};
(opt.tls ? https.createServer({ cert: fs.readFileSync(opt.tls[0]),
	key: fs.readFileSync(opt.tls[1]) }, serve) : http.createServer(serve))
	.listen(opt.port, '127.0.0.1');
