// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The analyzer's results: each request's critical-path verdict taken into
 * it, the inter-token gaps grouped for percentiles, and the read API the
 * renderers use (docs/design.md §3, §4).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer.h"
#include "analyzer_int.h"
#include "stats.h"
#include "util.h"

/* v's gaps of the complete requests first, in id order, then the others'
 * (each request's itl_off moves with the second): a new vector for v. */
static int regroup_one(struct tt_analyzer *a, struct tt_u64vec *v, bool set_off)
{
	struct tt_u64vec out = {};
	size_t i, off;
	int pass;

	if (tt_u64vec_reserve(&out, v->n))
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->nreqs; i++) {
			struct req_rec *rec = &a->reqs[i];

			if (rec->r.complete != !pass)
				continue;
			off = out.n;
			if (rec->itl_n)
				memcpy(out.v + off, v->v + rec->itl_off,
				       rec->itl_n * sizeof(*out.v));
			out.n += rec->itl_n;
			if (set_off)
				rec->itl_off = off;
		}
		if (!pass)
			a->itl_complete_n = out.n;
	}
	tt_u64vec_free(v);
	*v = out;
	return 0;
}

/* Puts the gaps of complete requests first, in id order: the ITL and the
 * emit gaps alike (one itl_off for both), one vector at a time (each is
 * tens of MB at 10 M events). */
int an_regroup_gaps(struct tt_analyzer *a)
{
	int err = regroup_one(a, &a->egaps, false);

	return err ? err : regroup_one(a, &a->gaps, true);
}

/* Takes the walk's verdict on r; the request stays complete only if the
 * walk completed too. */
static void attribute_one(struct tt_request *r, const struct tt_cp_result *res)
{
	const __u32 explained = TT_CP_INC_NOT_WALKED | TT_CP_INC_LOST |
				TT_CP_INC_NO_READ;

	if (!(res->incomplete & TT_CP_INC_NOT_WALKED)) {
		memcpy(r->stage_ns, res->stage_ns, sizeof(r->stage_ns));
		r->t_enqueue = res->t_enqueue;
		r->t_dispatch = res->t_dispatch;
		r->t_token = res->t_token;
		r->gil_ns = res->gil_ns;
		r->steal_ns = res->steal_ns;
		r->t_storage_start = res->t_storage_start;
		r->t_storage_end = res->t_storage_end;
		r->dispatch_rule = res->dispatch;
		r->enqueue_rule = res->enqueue;
		r->token_marker = res->token_marker;
		r->hop_id = res->hop_id;
	}
	r->attributed = res->complete;
	if (!res->complete &&
	    (!r->incomplete || (res->incomplete & ~explained)))
		r->incomplete |= TT_INC_NO_PATH;
	r->complete = !r->incomplete;
}

/* What the walk needs of request r, whose last bytes before its read came
 * at t_last_arrive. */
static struct tt_cp_request cp_request_of(const struct tt_request *r,
					  __u64 t_last_arrive)
{
	return (struct tt_cp_request){
		.id = r->id,
		.t_arrive = r->t_arrive,
		.t_read = r->t_read,
		.t_first_read = r->t_first_read,
		.t_first_write = r->t_first_write,
		.t_headers = r->t_headers,
		.t_wire = r->t_wire,
		.t_end = r->t_end,
		.t_last_arrive = t_last_arrive,
		.peer_port = r->rport,
		.tgid = r->tgid,
		.reader_tid = r->reader_tid,
		.writer_tid = r->writer_tid,
		.hop_sender_tid = r->hop_sender_tid,
		.hop_read_t = r->hop_read_t,
		.hop_read_tid = r->hop_read_tid,
		.tls_unread = r->incomplete & TT_INC_TLS,
		.conn_reused = r->conn_reused,
		.bytes_in = r->bytes_in,
	};
}

/* A hop among multiplexed HTTP/2 streams: when, by which process */
struct mux_win {
	__u64 start, end;
	__u32 tgid;
};

static int mux_win_cmp(const void *x, const void *y)
{
	const struct mux_win *p = x, *q = y;

	return p->start < q->start ? -1 : p->start > q->start;
}

/* r's span: its arrival (else read) to its end (else first send) */
static bool req_span(const struct tt_request *r, __u64 *start, __u64 *end)
{
	*start = r->t_arrive ? r->t_arrive : r->t_read;
	*end = r->t_end ? r->t_end : r->t_first_write;
	return *start && *end >= *start;
}

/* The requests whose path went through a hop among multiplexed HTTP/2
 * streams, and those served while their process had such a call in
 * flight (the walk may have taken another call's hop, or none), say so
 * (docs/design.md §3.1, "HTTP/2"). 0 or -ENOMEM. */
static int mux_spread(struct tt_analyzer *a)
{
	struct mux_win *w = NULL;
	__u64 *max_end = NULL, s, e, h;
	size_t i, k, lo, hi, n = 0;
	struct tt_request *r;
	int err = 0;

	for (i = 0; i < a->nreqs; i++)
		n += a->reqs[i].r.h2_mux && a->reqs[i].r.hop_sender_tgid;
	w = malloc((n ? n : 1) * sizeof(*w));
	max_end = malloc((n ? n : 1) * sizeof(*max_end));
	if (!w || !max_end) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0, n = 0; i < a->nreqs; i++) {
		r = &a->reqs[i].r;
		if (r->h2_mux && r->hop_sender_tgid && req_span(r, &s, &e))
			w[n++] = (struct mux_win){ s, e, r->hop_sender_tgid };
	}
	qsort(w, n, sizeof(*w), mux_win_cmp);
	for (k = 0; k < n; k++)
		max_end[k] = k && max_end[k - 1] > w[k].end ? max_end[k - 1] :
							      w[k].end;
	for (i = 0; i < a->nreqs; i++) {
		r = &a->reqs[i].r;
		h = r->hop_id;
		if (h && h <= a->nreqs && a->reqs[h - 1].r.id == h &&
		    a->reqs[h - 1].r.h2_mux)
			r->h2_mux = true;
		if (r->h2_mux || (r->incomplete & TT_INC_HOP) ||
		    !req_span(r, &s, &e))
			continue;
		/* the windows begun by its end; back while one may reach it */
		for (lo = 0, hi = n; lo < hi;)
			if (w[(lo + hi) / 2].start <= e)
				lo = (lo + hi) / 2 + 1;
			else
				hi = (lo + hi) / 2;
		for (k = lo; k-- > 0 && max_end[k] >= s && !r->h2_mux;)
			r->h2_mux = w[k].tgid == r->tgid && w[k].end >= s;
	}
cleanup:
	free(w);
	free(max_end);
	return err;
}

/* Walks every request's critical path not walked yet (after the sort:
 * index = id - 1), and takes the streamed walks' results. Without memory
 * for it every request is left unattributed. */
int an_attribute(struct tt_analyzer *a)
{
	static const struct tt_cp_result none = {
		.incomplete = TT_CP_INC_NOT_WALKED
	};
	struct tt_cp_result *res = NULL;
	size_t i, j, nsel = 0, *sel;
	int err = 0;

	if (!a->nreqs)
		return 0;
	a->cp_reqs = calloc(a->nreqs, sizeof(*a->cp_reqs));
	a->cp_res = calloc(a->nreqs, sizeof(*a->cp_res));
	sel = malloc(a->nreqs * sizeof(*sel));
	if (a->cp_reqs && sel)
		for (i = 0; i < a->nreqs; i++) {
			a->cp_reqs[i] = cp_request_of(&a->reqs[i].r,
						      a->reqs[i].t_last_arrive);
			if (!a->reqs[i].walked)
				sel[nsel++] = i;
		}
	res = calloc(nsel ? nsel : 1, sizeof(*res));
	if (!a->cp_reqs || !a->cp_res || !sel || !res)
		err = -ENOMEM;
	else
		err = tt_critpath_walk_sel(a->cp, a->cp_reqs, a->nreqs, sel,
					   nsel, res);
	if (err) {
		free(a->cp_res);
		a->cp_res = NULL;
	}
	for (i = 0, j = 0; a->cp_res && i < a->nreqs; i++) {
		/* each result moves where the renderers look for it */
		a->cp_res[i] = a->reqs[i].walked ? a->reqs[i].res : res[j++];
		memset(&a->reqs[i].res, 0, sizeof(a->reqs[i].res));
	}
	for (i = 0; i < a->nreqs; i++)
		attribute_one(&a->reqs[i].r, a->cp_res ? &a->cp_res[i] : &none);
	if (!err)
		err = mux_spread(a);
	free(res);
	free(sel);
	return err;
}

/* The earliest time a walk still to come may look at: the start of the
 * first request not walked, finished or open, else now less the longest
 * arrival lead (a DATA_READY_DEV). */
static __u64 stream_floor(const struct tt_analyzer *a)
{
	const struct conn *c;
	/* a request yet to come may have arrived that much earlier */
	__u64 t = a->now > TT_DEV_LEAD_MAX_NS ? a->now - TT_DEV_LEAD_MAX_NS : 0;
	size_t i;

	for (i = 0; i < a->nreqs; i++)
		if (!a->reqs[i].walked && a->reqs[i].start < t)
			t = a->reqs[i].start;
	for (i = 0; i < a->conns.cap; i++) {
		if (!a->conns.e[i].used)
			continue;
		c = (const struct conn *)(uintptr_t)a->conns.e[i].val;
		if (c->state != CONN_IDLE && c->cur.start < t)
			t = c->cur.start;
		if (c->have_tail && c->tail.start < t)
			t = c->tail.start;
	}
	return t;
}

int an_stream_step(struct tt_analyzer *a)
{
	size_t n = 0, nsel = 0, i, *sel;
	struct tt_cp_request *rqs;
	struct tt_cp_result *res = NULL;
	struct tt_critpath_stats st;
	const struct conn *c;
	int err = -ENOMEM;

	/* every request begun so far: the finished ones, then the open ones
	 * as they stand (a request still ARRIVED has no thread yet) */
	rqs = malloc((a->nreqs + 2 * a->conns.n + 1) * sizeof(*rqs));
	sel = malloc((a->nreqs + 1) * sizeof(*sel));
	if (!rqs || !sel)
		goto cleanup;
	for (i = 0; i < a->nreqs; i++) {
		rqs[n++] =
			cp_request_of(&a->reqs[i].r, a->reqs[i].t_last_arrive);
		if (!a->reqs[i].walked && tt_critpath_ready(&rqs[i], a->now))
			sel[nsel++] = i;
	}
	for (i = 0; i < a->conns.cap; i++) {
		if (!a->conns.e[i].used)
			continue;
		c = (const struct conn *)(uintptr_t)a->conns.e[i].val;
		if (c->state == CONN_RECEIVING || c->state == CONN_RESPONDING)
			rqs[n++] =
				cp_request_of(&c->cur.r, c->cur.t_last_arrive);
		if (c->have_tail)
			rqs[n++] = cp_request_of(&c->tail.r,
						 c->tail.t_last_arrive);
	}
	res = calloc(nsel ? nsel : 1, sizeof(*res));
	if (!res)
		goto cleanup;
	err = nsel ? tt_critpath_walk_sel(a->cp, rqs, n, sel, nsel, res) : 0;
	if (err)
		goto cleanup;
	for (i = 0; i < nsel; i++) {
		a->reqs[sel[i]].res = res[i];
		a->reqs[sel[i]].walked = true;
	}
	tt_critpath_trim(a->cp, stream_floor(a));
	/* the next step once as many events came as the timelines hold */
	tt_critpath_stats(a->cp, &st);
	a->stream_next =
		a->handled +
		(st.held > a->stream_every ? st.held : a->stream_every);
cleanup:
	free(rqs);
	free(sel);
	free(res);
	return err;
}

/* ---- accessors ---- */

/*
 * The summary of the inter-token gaps (emit: as the server emitted them) of
 * the requests the report's percentiles count, gathered one kind at a time
 * into a vector of the exact size: millions of gaps at 10 M events.
 */
int tt_analyzer_itl_summary(const struct tt_analyzer *a, bool incomplete,
			    bool emit, struct tt_summary *s)
{
	struct tt_u64vec v = {};
	const struct tt_request *r;
	const __u64 *gaps;
	size_t i, n, total = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass && tt_u64vec_reserve(&v, total))
			return -ENOMEM;
		for (i = 0; i < tt_analyzer_nrequests(a); i++) {
			r = tt_analyzer_request(a, i);
			if ((!r->complete && !incomplete) ||
			    (r->incomplete & TT_INC_NOT_TOKENS))
				continue;
			gaps = emit ? tt_analyzer_request_itl_emit(a, i, &n) :
				      tt_analyzer_request_itl(a, i, &n);
			if (!pass) {
				total += n;
			} else if (n) {
				memcpy(v.v + v.n, gaps, n * sizeof(*gaps));
				v.n += n;
			}
		}
	}
	tt_summarize(v.v, v.n, s);
	tt_u64vec_free(&v);
	return 0;
}

/* A connection, as far as its requests tell: its socket and client port */
static __u64 conn_key(const struct tt_request *r)
{
	return r->sk ^ ((__u64)r->rport << 48);
}

static int cmp_u64(const void *x, const void *y)
{
	__u64 a = *(const __u64 *)x, b = *(const __u64 *)y;

	return a < b ? -1 : a > b;
}

int tt_analyzer_tls_apart(const struct tt_analyzer *a, bool **apart)
{
	struct tt_u64vec keys = {};
	const struct tt_request *r;
	bool *out = NULL;
	__u64 key;
	size_t i;
	int err = 0;

	*apart = NULL;
	/* the connections some of whose requests were read as plaintext */
	for (i = 0; i < a->nreqs && !err; i++)
		if (a->reqs[i].r.tls)
			err = tt_u64vec_push(&keys, conn_key(&a->reqs[i].r));
	if (err || !keys.n)
		goto cleanup;
	qsort(keys.v, keys.n, sizeof(*keys.v), cmp_u64);
	out = calloc(a->nreqs, sizeof(*out));
	if (!out) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < a->nreqs; i++) {
		r = &a->reqs[i].r;
		key = conn_key(r);
		out[i] = (r->incomplete & TT_INC_TLS) &&
			 bsearch(&key, keys.v, keys.n, sizeof(key), cmp_u64);
	}
	*apart = out;
cleanup:
	tt_u64vec_free(&keys);
	return err;
}

size_t tt_analyzer_nrequests(const struct tt_analyzer *a)
{
	return a->nreqs;
}

const struct tt_request *tt_analyzer_request(const struct tt_analyzer *a,
					     size_t i)
{
	return i < a->nreqs ? &a->reqs[i].r : NULL;
}

const __u64 *tt_analyzer_itl(const struct tt_analyzer *a, size_t *n)
{
	*n = a->finished ? a->itl_complete_n : 0;
	return *n ? a->gaps.v : NULL;
}

const __u64 *tt_analyzer_itl_emit(const struct tt_analyzer *a, size_t *n)
{
	*n = a->finished ? a->itl_complete_n : 0;
	return *n ? a->egaps.v : NULL;
}

const __u64 *tt_analyzer_request_itl(const struct tt_analyzer *a, size_t i,
				     size_t *n)
{
	*n = i < a->nreqs ? a->reqs[i].itl_n : 0;
	return *n ? a->gaps.v + a->reqs[i].itl_off : NULL;
}

const __u64 *tt_analyzer_request_itl_emit(const struct tt_analyzer *a, size_t i,
					  size_t *n)
{
	*n = i < a->nreqs ? a->reqs[i].itl_n : 0;
	return *n ? a->egaps.v + a->reqs[i].itl_off : NULL;
}

const char *tt_end_name(unsigned int end)
{
	static const char *const names[] = { "open", "done", "next", "close" };

	return end < sizeof(names) / sizeof(names[0]) ? names[end] : "unknown";
}

__u64 tt_analyzer_events(const struct tt_analyzer *a)
{
	return a->st.events;
}

__u64 tt_analyzer_lost_cpu(const struct tt_analyzer *a, unsigned int cpu)
{
	return cpu < TT_LOST_CPUS ? a->lost_cpu[cpu] : 0;
}

__u64 tt_analyzer_lost(const struct tt_analyzer *a)
{
	return a->st.lost;
}

void tt_analyzer_stats(const struct tt_analyzer *a,
		       struct tt_analyzer_stats *st)
{
	*st = a->st;
	st->late = a->win.late;
}

const char *tt_analyzer_comm(const struct tt_analyzer *a, __u32 tid)
{
	return tt_critpath_comm(a->cp, tid);
}

int tt_analyzer_add_procs(struct tt_analyzer *a,
			  const struct tt_proc_info *procs, size_t n)
{
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = an_mark_traced(a, procs[i].tgid);
		if (err)
			return err;
		if (!procs[i].tid || !procs[i].comm[0] ||
		    tt_critpath_comm(a->cp, procs[i].tid))
			continue;
		err = tt_critpath_name_thread(a->cp, procs[i].tid,
					      procs[i].tgid, procs[i].comm);
		if (err)
			return err;
	}
	return 0;
}

int tt_analyzer_add_devices(struct tt_analyzer *a,
			    const struct tt_dev_info *devs, size_t n)
{
	size_t i;
	int err;

	/* FIFOs standing in for a device have no rdev: known by inode */
	for (i = 0; i < n; i++) {
		err = tt_critpath_add_gpu_device(a->cp, &devs[i]);
		if (err)
			return err;
	}
	return 0;
}

const struct tt_cp_result *tt_analyzer_cp_result(const struct tt_analyzer *a,
						 size_t i)
{
	return a->cp_res && i < a->nreqs ? &a->cp_res[i] : NULL;
}

const struct tt_cp_request *tt_analyzer_cp_request(const struct tt_analyzer *a,
						   size_t i)
{
	return a->cp_reqs && i < a->nreqs ? &a->cp_reqs[i] : NULL;
}

const struct tt_critpath *tt_analyzer_critpath(const struct tt_analyzer *a)
{
	return a->cp;
}

const char *tt_incomplete_str(__u32 incomplete, char *buf, size_t len)
{
	static const char *const names[TT_INC_NBITS] = {
		"no-arrive", "no-read",		  "no-response",
		"no-wire",   "closed-mid-stream", "open-at-end",
		"lost",	     "no-path",		  "error",
		"no-token",  "pipelined",	  "hop",
		"tls",
	};

	if (len && !incomplete)
		snprintf(buf, len, "complete");
	else
		tt_bit_names(buf, len, incomplete, names, TT_INC_NBITS);
	return buf;
}

const char *tt_request_peer(const struct tt_request *r, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	memcpy(&a6, r->raddr, sizeof(a6)); /* raddr is not 4-byte aligned */
	if (r->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a6)) {
		/* a dual-stack listener: the client is an IPv4 one */
		inet_ntop(AF_INET, r->raddr + 12, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else if (r->family == AF_INET6) {
		inet_ntop(AF_INET6, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, r->rport);
	} else if (r->family == AF_INET) {
		inet_ntop(AF_INET, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else {
		snprintf(buf, len, "unknown");
	}
	return buf;
}
