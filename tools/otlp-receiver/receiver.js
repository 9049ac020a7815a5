// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// An OTLP/HTTP trace receiver for ttftrace's tests (tests/test_bpf_otlp.sh):
// POST /v1/traces, application/x-protobuf, decoded and verified with the
// code OpenTelemetry generates from opentelemetry-proto (shipped in
// @opentelemetry/otlp-transformer 0.52), each span written as a JSON line.
// A body that does not decode, or that protobufjs would encode otherwise
// (a field out of its wire type or order), is answered 400 and logged.
//   node receiver.js --port-file F --out SPANS.jsonl [--fail N]
// --fail N: the first N POSTs get 503 (the exporter must retry).
'use strict';
const fs = require('fs');
const http = require('http');
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');

const v1 = root.opentelemetry.proto.collector.trace.v1;
const Req = v1.ExportTraceServiceRequest;
const Resp = v1.ExportTraceServiceResponse;
const args = {};
for (let i = 2; i < process.argv.length; i += 2)
	args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
let failLeft = Number(args.fail || 0);
const out = fs.openSync(args.out, 'a');
const log = (o) => fs.writeSync(out, JSON.stringify(o) + '\n');

function anyValue(v) {
	if (v.stringValue !== undefined && v.stringValue !== '') return v.stringValue;
	if (v.doubleValue !== undefined && v.doubleValue !== 0) return v.doubleValue;
	if (v.intValue !== undefined && v.intValue !== '0') return Number(v.intValue);
	if (v.boolValue !== undefined) return v.boolValue;
	return v.stringValue ?? v.doubleValue ?? Number(v.intValue ?? 0);
}
function attrs(list) {
	const o = {};
	for (const kv of list || []) o[kv.key] = anyValue(kv.value || {});
	return o;
}
const hex = (b) => Buffer.from(b || []).toString('hex');

function handle(body) {
	const msg = Req.decode(body);
	const why = Req.verify(msg);
	if (why) throw new Error('verify: ' + why);
	if (!Buffer.from(Req.encode(msg).finish()).equals(body))
		throw new Error('not as protobufjs encodes it');
	const obj = Req.toObject(msg, { longs: String, defaults: true, oneofs: false });
	let n = 0;
	for (const rs of obj.resourceSpans) {
		const res = attrs(rs.resource && rs.resource.attributes);
		for (const ss of rs.scopeSpans) {
			for (const s of ss.spans) {
				log({ resource: res, scope: ss.scope && ss.scope.name,
				      trace_id: hex(s.traceId),
				      span_id: hex(s.spanId), parent: hex(s.parentSpanId),
				      name: s.name, kind: s.kind,
				      start: s.startTimeUnixNano, end: s.endTimeUnixNano,
				      status: s.status ? s.status.code : 0,
				      attrs: attrs(s.attributes) });
				n++;
			}
		}
	}
	return n;
}

const server = http.createServer((req, res) => {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		if (req.method !== 'POST' || req.url !== '/v1/traces') {
			res.writeHead(404).end();
			return;
		}
		if (req.headers['content-type'] !== 'application/x-protobuf') {
			log({ error: 'content-type ' + req.headers['content-type'] });
			res.writeHead(415).end();
			return;
		}
		if (failLeft > 0) {
			failLeft--;
			log({ refused: 503 });
			res.writeHead(503).end();
			return;
		}
		try {
			const n = handle(Buffer.concat(chunks));
			log({ batch: n });
		} catch (e) {
			log({ error: String(e.message || e) });
			res.writeHead(400).end();
			return;
		}
		res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
		res.end(Buffer.from(Resp.encode({}).finish()));
	});
});
server.listen(0, '127.0.0.1', () => {
	fs.writeFileSync(args['port-file'], String(server.address().port));
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
