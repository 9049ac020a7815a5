// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Requests as OTLP spans in the protobuf encoding (see otlp.h); field
 * numbers are those of opentelemetry-proto's trace/v1, common/v1 and
 * resource/v1 messages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "otlp.h"
#include "slo.h"

/* wire types */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

static void put(struct tt_pbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (tt_grow((void **)&b->p, &b->cap, b->len + n, 1)) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static size_t varint(unsigned char *out, __u64 v)
{
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		if (v)
			out[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

static void put_varint(struct tt_pbuf *b, __u64 v)
{
	unsigned char tmp[10];

	put(b, tmp, varint(tmp, v));
}

static void tag(struct tt_pbuf *b, unsigned int field, unsigned int wt)
{
	put_varint(b, (__u64)field << 3 | wt);
}

static void pb_bytes(struct tt_pbuf *b, unsigned int field, const void *p,
		     size_t n)
{
	tag(b, field, WT_LEN);
	put_varint(b, n);
	put(b, p, n);
}

static void pb_str(struct tt_pbuf *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static void pb_uint(struct tt_pbuf *b, unsigned int field, __u64 v)
{
	tag(b, field, WT_VARINT);
	put_varint(b, v);
}

static void pb_fixed64(struct tt_pbuf *b, unsigned int field, __u64 v)
{
	unsigned char le[8];

	for (int i = 0; i < 8; i++)
		le[i] = v >> (8 * i);
	tag(b, field, WT_I64);
	put(b, le, 8);
}

/* A nested message: its tag now, its length once it is written (pb_end). */
static size_t pb_begin(struct tt_pbuf *b, unsigned int field)
{
	tag(b, field, WT_LEN);
	return b->len;
}

static void pb_end(struct tt_pbuf *b, size_t start)
{
	unsigned char tmp[10];
	size_t n;

	if (b->err)
		return;
	n = varint(tmp, b->len - start);
	put(b, tmp, n); /* room for the length, then moved into place */
	if (b->err)
		return;
	memmove(b->p + start + n, b->p + start, b->len - n - start);
	memcpy(b->p + start, tmp, n);
}

/* KeyValue{key, AnyValue{...}} as field of its parent: the value's field
 * goes between kv_begin and kv_end */
struct kv {
	size_t kv, any;
};

static struct kv kv_begin(struct tt_pbuf *b, unsigned int field,
			  const char *key)
{
	struct kv k = { .kv = pb_begin(b, field) };

	pb_str(b, 1, key);
	k.any = pb_begin(b, 2);
	return k;
}

static void kv_end(struct tt_pbuf *b, struct kv k)
{
	pb_end(b, k.any);
	pb_end(b, k.kv);
}

static void kv_str(struct tt_pbuf *b, unsigned int field, const char *key,
		   const char *v)
{
	struct kv k = kv_begin(b, field, key);

	pb_str(b, 1, v);
	kv_end(b, k);
}

/* an AnyValue of int_value (3) or bool_value (2): varints both */
static void kv_varint(struct tt_pbuf *b, unsigned int field, const char *key,
		      unsigned int any_field, __u64 v)
{
	struct kv k = kv_begin(b, field, key);

	pb_uint(b, any_field, v);
	kv_end(b, k);
}

#define kv_int(b, field, key, v) kv_varint(b, field, key, 3, (__u64)(v))
#define kv_bool(b, field, key, v) kv_varint(b, field, key, 2, !!(v))

static void kv_double(struct tt_pbuf *b, unsigned int field, const char *key,
		      double v)
{
	struct kv k = kv_begin(b, field, key);
	__u64 bits;

	memcpy(&bits, &v, sizeof(bits));
	pb_fixed64(b, 4, bits);
	kv_end(b, k);
}

static __u64 mix64(__u64 x)
{
	/* splitmix64's finalizer: a good spread of any input bits */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void put_be64(unsigned char *out, __u64 v)
{
	for (int i = 0; i < 8; i++)
		out[i] = v >> (56 - 8 * i);
}

static __u64 request_seed(const struct tt_otlp_src *src,
			  const struct tt_request *r)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (const char *s = src->hostname ? src->hostname : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	h = mix64(h ^ r->tgid);
	h = mix64(h ^ r->sk);
	return mix64(h ^ (r->t_arrive ? r->t_arrive : r->t_read));
}

void tt_otlp_ids(const struct tt_otlp_src *src, const struct tt_request *r,
		 unsigned char trace_id[16], unsigned char span_id[8])
{
	__u64 seed = request_seed(src, r);

	put_be64(trace_id, mix64(seed ^ 1));
	put_be64(trace_id + 8, mix64(seed ^ 2));
	put_be64(span_id, mix64(seed ^ 3) | 1); /* never all zero */
}

static __u64 unix_ns(const struct tt_otlp_src *src, __u64 t)
{
	return t - src->mono_ns + src->real_ns;
}

/* The request's span ends with its response: its end, else its last
 * token's first byte or send, else its first. */
static __u64 request_end(const struct tt_request *r)
{
	__u64 e2e = tt_request_e2e(r, NULL);

	if (r->t_end)
		return r->t_end;
	if (e2e)
		return r->t_arrive + e2e;
	return r->t_last_write ? r->t_last_write : r->t_wire;
}

static double secs(__u64 ns)
{
	return ns / 1e9;
}

/* client.address and client.port from "ip:port" or "[ip6]:port" */
static void client_attrs(struct tt_pbuf *b, const struct tt_request *r)
{
	char peer[64], *colon;

	tt_request_peer(r, peer, sizeof(peer));
	colon = strrchr(peer, ':');
	if (!colon || !strcmp(peer, "unknown"))
		return;
	*colon = '\0';
	if (peer[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		kv_str(b, 9, "client.address", peer + 1);
	} else {
		kv_str(b, 9, "client.address", peer);
	}
	kv_int(b, 9, "client.port", r->rport);
}

static void request_attrs(struct tt_pbuf *b, const struct tt_analyzer *a,
			  size_t i, size_t cut)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	__u64 e2e = tt_request_e2e(r, NULL);
	char why[128], key[64];

	if (r->ttft)
		kv_double(b, 9, "gen_ai.server.time_to_first_token",
			  secs(r->ttft));
	if (r->tokens >= 2)
		kv_double(b, 9, "gen_ai.server.time_per_output_token",
			  secs(r->tpot));
	kv_int(b, 9, "server.port", r->lport);
	client_attrs(b, r);
	if (r->status)
		kv_int(b, 9, "http.response.status_code", r->status);
	kv_int(b, 9, "process.pid", r->tgid);
	kv_int(b, 9, "ttftrace.request.id", r->id);
	kv_int(b, 9, "ttftrace.tokens", r->tokens);
	kv_bool(b, 9, "ttftrace.complete", r->complete);
	kv_str(b, 9, "ttftrace.incomplete",
	       tt_incomplete_str(r->incomplete, why, sizeof(why)));
	kv_str(b, 9, "ttftrace.end", tt_end_name(r->end));
	if (r->ttft)
		kv_int(b, 9, "ttftrace.ttft_ns", r->ttft);
	if (e2e)
		kv_double(b, 9, "ttftrace.e2e", secs(e2e));
	kv_int(b, 9, "ttftrace.bytes_in", r->bytes_in);
	kv_int(b, 9, "ttftrace.bytes_out", r->bytes_out);
	/* all 0 when the path was not walked: none then */
	for (int s = 0; s < TT_ST_MAX; s++) {
		if (!r->stage_ns[s])
			continue;
		snprintf(key, sizeof(key), "ttftrace.stage_ns.%s",
			 tt_stage_name(s));
		kv_int(b, 9, key, r->stage_ns[s]);
	}
	if (cut)
		kv_int(b, 9, "ttftrace.children_dropped", cut);
}

static void span_head(struct tt_pbuf *b, const unsigned char *trace_id,
		      const unsigned char *id, const unsigned char *parent,
		      const char *name, unsigned int kind, __u64 start,
		      __u64 end)
{
	pb_bytes(b, 1, trace_id, 16);
	pb_bytes(b, 2, id, 8);
	if (parent)
		pb_bytes(b, 4, parent, 8);
	pb_str(b, 5, name);
	pb_uint(b, 6, kind);
	pb_fixed64(b, 7, start);
	pb_fixed64(b, 8, end);
}

/* The children: each stretch of consecutive segments in one stage. */
static int add_children(struct tt_pbuf *b, const struct tt_otlp_src *src,
			const struct tt_cp_result *cp,
			const unsigned char *trace_id,
			const unsigned char *parent, size_t *cut)
{
	unsigned char id[8];
	__u64 seed = 0;
	int n = 0;

	for (int i = 0; i < 8; i++)
		seed = seed << 8 | parent[i];

	for (size_t j = 0; cp && j < cp->nsegs;) {
		const struct tt_cp_segment *s = &cp->segs[j];
		size_t k = j + 1, longest = j, span;
		__u64 end = s->start + s->dur;

		while (k < cp->nsegs && cp->segs[k].stage == s->stage) {
			if (cp->segs[k].dur > cp->segs[longest].dur)
				longest = k;
			end = cp->segs[k].start + cp->segs[k].dur;
			k++;
		}
		if (n == TT_OTLP_MAX_CHILDREN) {
			(*cut)++;
			j = k;
			continue;
		}
		put_be64(id, mix64(seed ^ mix64(j + 4)) | 1);
		span = pb_begin(b, 2);
		span_head(b, trace_id, id, parent, tt_stage_name(s->stage),
			  1 /* INTERNAL */, unix_ns(src, s->start),
			  unix_ns(src, end));
		kv_str(b, 9, "ttftrace.stage", tt_stage_name(s->stage));
		kv_int(b, 9, "ttftrace.segments", k - j);
		if (cp->segs[longest].tid)
			kv_int(b, 9, "thread.id", cp->segs[longest].tid);
		if (cp->segs[longest].reason[0])
			kv_str(b, 9, "ttftrace.reason",
			       cp->segs[longest].reason);
		pb_end(b, span);
		n++;
		j = k;
	}
	return n;
}

int tt_otlp_add_request(struct tt_pbuf *b, const struct tt_otlp_src *src,
			const struct tt_analyzer *a, size_t i)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	const struct tt_cp_result *cp = tt_analyzer_cp_result(a, i);
	const char *comm = tt_analyzer_comm(a, r->tgid);
	unsigned char trace_id[16], span_id[8];
	size_t rs, res, ss, scope, span, cut = 0;
	__u64 start = r->t_arrive ? r->t_arrive : r->t_read;
	int n;

	if (cp && !cp->segs)
		cp = NULL;
	tt_otlp_ids(src, r, trace_id, span_id);
	rs = pb_begin(b, 1); /* ExportTraceServiceRequest.resource_spans */
	res = pb_begin(b, 1); /* ResourceSpans.resource */
	kv_str(b, 1, "service.name", comm && *comm ? comm : "unknown_service");
	if (src->hostname && *src->hostname)
		kv_str(b, 1, "host.name", src->hostname);
	pb_end(b, res);
	ss = pb_begin(b, 2); /* ResourceSpans.scope_spans */
	scope = pb_begin(b, 1);
	pb_str(b, 1, "ttftrace");
	pb_end(b, scope);
	/* the children first: the parent then says how many were cut */
	n = add_children(b, src, cp, trace_id, span_id, &cut);
	span = pb_begin(b, 2);
	span_head(b, trace_id, span_id, NULL, "ttftrace.request",
		  2 /* SERVER */, unix_ns(src, start),
		  unix_ns(src, request_end(r)));
	request_attrs(b, a, i, cut);
	if (r->status >= 500) {
		size_t st = pb_begin(b, 15);

		pb_uint(b, 3, 2); /* STATUS_CODE_ERROR */
		pb_end(b, st);
	}
	pb_end(b, span);
	pb_end(b, ss);
	pb_end(b, rs);
	return b->err ? b->err : n + 1;
}

void tt_pbuf_free(struct tt_pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
