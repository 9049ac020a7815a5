// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The live analysis core (see window.h, docs/design.md §10): a store of
 * events in chunks, re-analysed from the oldest request still unsettled
 * (less a guard) at every refresh; settled requests are counted once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "slo.h"
#include "window.h"

#define CHUNK_EVENTS 4096
/* runtime lock ranges kept for analyses that start after them */
#define MAX_RTLOCKS 4096

struct chunk {
	__u64 max_ts;
	size_t n;
	struct tt_event ev[CHUNK_EVENTS];
};

/* A connection's CONN_OPEN, kept until it closed before every analysis
 * to come (a socket reused by a new connection keeps both). */
struct open_conn {
	struct tt_event open;
	__u64 closed; /* 0 while open */
};

/* A request's name: two can share an anchor and a connection (a TLS
 * handshake's exchange and the request whose arrival answered it), told
 * apart by their order among those (twin: 0, 1, ...). */
struct seen {
	__u64 anchor;
	__u32 key;
	__u64 twin_bit;
};

struct tt_window {
	__u64 span, max_events, keep;
	struct tt_proc_info *procs;
	size_t nprocs;
	struct tt_dev_info *devs;
	size_t ndevs;
	/* the store, oldest chunk first */
	struct chunk **chunks;
	size_t nchunks, capchunks, nevents;
	/* what analyses starting later still need: connections (sk -> the
	 * latest of them in conns) and runtime lock ranges */
	struct open_conn *conns;
	size_t nconns, capconns;
	struct tt_hmap conn_map;
	struct tt_event *rtlocks;
	size_t nrtlocks, caprtlocks;
	__u64 first_ts, next_start;
	/* requests counted, by (anchor, connection) -> their twins' bits:
	 * a map and its list */
	struct tt_hmap seen_map;
	struct seen *seen;
	size_t nseen, capseen;
	/* counted within the span, in counting order; their ITL gaps */
	struct tt_live_req *reqs;
	size_t nreqs, capreqs;
	struct tt_u64vec itl;
	struct tt_u64vec lost; /* (ts, count) pairs within the span */
	struct tt_live_totals totals;
	__u64 now, analysed_events, analysed_ns;
	size_t fresh;
};

const char *tt_live_sort_name(enum tt_live_sort s)
{
	static const char *const names[TT_LIVE_NSORT] = { "TTFT", "TPOT",
							  "age" };

	return s < TT_LIVE_NSORT ? names[s] : "?";
}

#define MS 1000000ULL
static const __u64 ttft_bounds[] = {
	1 * MS,	   2500000,   5 * MS,	  10 * MS,    25 * MS,
	50 * MS,   100 * MS,  250 * MS,	  500 * MS,   1000 * MS,
	2500 * MS, 5000 * MS, 10000 * MS, 30000 * MS, 60000 * MS,
};
static const __u64 tpot_bounds[] = {
	500000,	 1 * MS,  2500000,  5 * MS,   10 * MS,	20 * MS,   30 * MS,
	50 * MS, 75 * MS, 100 * MS, 250 * MS, 500 * MS, 1000 * MS,
};

const __u64 *tt_live_buckets(enum tt_live_hist_kind kind, size_t *n)
{
	if (kind == TT_LIVE_H_TTFT) {
		*n = sizeof(ttft_bounds) / sizeof(*ttft_bounds);
		return ttft_bounds;
	}
	*n = sizeof(tpot_bounds) / sizeof(*tpot_bounds);
	return tpot_bounds;
}

static void observe(struct tt_live_hist *h, enum tt_live_hist_kind kind,
		    __u64 v)
{
	size_t n, i;
	const __u64 *b = tt_live_buckets(kind, &n);

	for (i = 0; i < n && v > b[i]; i++)
		;
	h->bucket[i]++;
	h->count++;
	h->sum_ns += v;
}

struct tt_window *tt_window_new(const struct tt_window_opts *o)
{
	struct tt_window *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->span = o->span_ns ? o->span_ns : TT_LIVE_SPAN_NS;
	w->max_events = o->max_events ? o->max_events : TT_LIVE_MAX_EVENTS;
	w->keep = o->keep_ns;
	if (o->nprocs) {
		w->procs = malloc(o->nprocs * sizeof(*w->procs));
		if (!w->procs)
			goto cleanup;
		memcpy(w->procs, o->procs, o->nprocs * sizeof(*w->procs));
		w->nprocs = o->nprocs;
	}
	if (o->ndevs) {
		w->devs = malloc(o->ndevs * sizeof(*w->devs));
		if (!w->devs)
			goto cleanup;
		memcpy(w->devs, o->devs, o->ndevs * sizeof(*w->devs));
		w->ndevs = o->ndevs;
	}
	return w;
cleanup:
	tt_window_free(w);
	return NULL;
}

/* Keeps what an analysis starting after ev still needs to know. */
static int keep_state(struct tt_window *w, const struct tt_event *ev)
{
	struct tt_hmap_ent *e;

	switch (ev->h.type) {
	case TT_EV_CONN_OPEN:
		if (tt_grow((void **)&w->conns, &w->capconns, w->nconns + 1,
			    sizeof(*w->conns)) ||
		    tt_hmap_put(&w->conn_map, ev->conn.sk, 0, w->nconns))
			return -ENOMEM;
		w->conns[w->nconns++] = (struct open_conn){ *ev, 0 };
		return 0;
	case TT_EV_CONN_CLOSE:
		/* the peer's FIN is no end: the server may still answer */
		e = tt_hmap_find(&w->conn_map, ev->sock.sk, 0);
		if (ev->sock.len != TT_TCP_CLOSE_WAIT && e &&
		    !w->conns[e->val].closed)
			w->conns[e->val].closed = ev->h.ts;
		return 0;
	case TT_EV_RTLOCK:
		if (w->nrtlocks == MAX_RTLOCKS)
			return 0;
		if (tt_grow((void **)&w->rtlocks, &w->caprtlocks,
			    w->nrtlocks + 1, sizeof(*w->rtlocks)))
			return -ENOMEM;
		w->rtlocks[w->nrtlocks++] = *ev;
		return 0;
	case TT_EV_LOST:
		w->totals.lost += ev->lost.count;
		if (tt_u64vec_push(&w->lost, ev->h.ts) ||
		    tt_u64vec_push(&w->lost, ev->lost.count))
			return -ENOMEM;
		return 0;
	}
	return 0;
}

int tt_window_add(struct tt_window *w, const struct tt_event *ev)
{
	struct chunk *c = w->nchunks ? w->chunks[w->nchunks - 1] : NULL;
	int err = keep_state(w, ev);

	if (err)
		return err;
	if (!c || c->n == CHUNK_EVENTS) {
		if (tt_grow((void **)&w->chunks, &w->capchunks, w->nchunks + 1,
			    sizeof(*w->chunks)))
			return -ENOMEM;
		c = malloc(sizeof(*c));
		if (!c)
			return -ENOMEM;
		c->n = 0;
		c->max_ts = 0;
		w->chunks[w->nchunks++] = c;
	}
	c->ev[c->n++] = *ev;
	if (ev->h.ts > c->max_ts)
		c->max_ts = ev->h.ts;
	if (!w->first_ts || ev->h.ts < w->first_ts)
		w->first_ts = ev->h.ts;
	w->nevents++;
	w->totals.events++;
	return 0;
}

/* Forgets the connections closed before ts. */
static int trim_conns(struct tt_window *w, __u64 ts)
{
	size_t i, k = 0;

	tt_hmap_free(&w->conn_map);
	for (i = 0; i < w->nconns; i++) {
		if (w->conns[i].closed && w->conns[i].closed < ts)
			continue;
		w->conns[k] = w->conns[i];
		if (tt_hmap_put(&w->conn_map, w->conns[k].open.conn.sk, 0, k))
			return -ENOMEM;
		k++;
	}
	w->nconns = k;
	return 0;
}

/* Drops the chunks wholly before ts, and the oldest past the cap. */
static void trim_store(struct tt_window *w, __u64 ts)
{
	size_t k = 0;

	while (k < w->nchunks && w->chunks[k]->max_ts < ts) {
		w->nevents -= w->chunks[k]->n;
		free(w->chunks[k++]);
	}
	/* never the newest chunk: it is being filled */
	while (k + 1 < w->nchunks && w->nevents > w->max_events) {
		w->nevents -= w->chunks[k]->n;
		if (w->chunks[k]->max_ts >= w->next_start)
			w->next_start = w->chunks[k]->max_ts + 1;
		free(w->chunks[k++]);
	}
	if (!k)
		return;
	memmove(w->chunks, w->chunks + k,
		(w->nchunks - k) * sizeof(*w->chunks));
	w->nchunks -= k;
}

static int cmp_ts(const void *x, const void *y)
{
	const struct tt_event *p = *(const struct tt_event *const *)x;
	const struct tt_event *q = *(const struct tt_event *const *)y;

	return p->h.ts < q->h.ts ? -1 : p->h.ts > q->h.ts;
}

int tt_window_each(const struct tt_window *w, __u64 from, tt_window_fn fn,
		   void *ctx)
{
	const struct tt_event **old = NULL;
	size_t nold = 0, i, k;
	int err = -ENOMEM;

	old = malloc((w->nconns + w->nrtlocks + 1) * sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (i = 0; i < w->nconns; i++)
		if (w->conns[i].open.h.ts < from &&
		    (!w->conns[i].closed || w->conns[i].closed >= from))
			old[nold++] = &w->conns[i].open;
	for (i = 0; i < w->nrtlocks; i++)
		if (w->rtlocks[i].h.ts < from)
			old[nold++] = &w->rtlocks[i];
	qsort(old, nold, sizeof(*old), cmp_ts);
	for (i = 0; i < nold; i++) {
		err = fn(ctx, old[i]);
		if (err)
			goto cleanup;
	}
	for (k = 0; k < w->nchunks; k++) {
		const struct chunk *c = w->chunks[k];

		if (c->max_ts < from)
			continue;
		for (i = 0; i < c->n; i++) {
			if (c->ev[i].h.ts < from)
				continue;
			err = fn(ctx, &c->ev[i]);
			if (err)
				goto cleanup;
		}
	}
	err = 0;
cleanup:
	free(old);
	return err;
}

struct feeding {
	struct tt_analyzer *an;
	__u64 n;
};

static int feed_one(void *ctx, const struct tt_event *ev)
{
	struct feeding *f = ctx;

	f->n++;
	return tt_analyzer_add(f->an, ev);
}

/* The analysis from start on: what tt_window_each hands over, finished. */
static int feed(struct tt_window *w, struct tt_analyzer *an, __u64 start)
{
	struct feeding f = { an, 0 };
	int err = tt_window_each(w, start, feed_one, &f);

	w->analysed_events = f.n;
	return err ? err : tt_analyzer_finish(an);
}

static __u32 sk_key(__u64 sk)
{
	return (__u32)(sk ^ (sk >> 32));
}

/* Adds name to the map of requests counted. */
static int remember(struct tt_hmap *seen_map, const struct seen *name)
{
	struct tt_hmap_ent *e =
		tt_hmap_insert(seen_map, name->anchor, name->key, 0);

	if (!e)
		return -ENOMEM;
	e->val |= name->twin_bit;
	return 0;
}

/* Counts request i of an: totals, histograms, the rolling store. */
static int count(struct tt_window *w, const struct tt_analyzer *an, size_t i,
		 const struct seen *name)
{
	const struct tt_request *r = tt_analyzer_request(an, i);
	struct tt_live_totals *t = &w->totals;
	struct tt_live_req *lr;
	const __u64 *gaps;
	size_t ngaps = 0, k;
	bool at_wire;

	if (tt_grow((void **)&w->seen, &w->capseen, w->nseen + 1,
		    sizeof(*w->seen)) ||
	    tt_grow((void **)&w->reqs, &w->capreqs, w->nreqs + 1,
		    sizeof(*w->reqs)) ||
	    remember(&w->seen_map, name))
		return -ENOMEM;
	w->seen[w->nseen++] = *name;
	/* inside the gateway's request that made it (docs/design.md §4.11) */
	if (r->incomplete & TT_INC_HOP) {
		t->hops++;
		return 0;
	}
	/* a handshake's exchange, or a request no probe read: only the whole
	 * recording tells them apart (docs/design.md §3.1, "TLS") */
	if (r->incomplete & TT_INC_TLS) {
		t->tls++;
		return 0;
	}
	gaps = tt_analyzer_request_itl(an, i, &ngaps);
	if (!r->complete)
		ngaps = 0;
	if (tt_u64vec_reserve(&w->itl, ngaps))
		return -ENOMEM;
	lr = &w->reqs[w->nreqs++];
	memset(lr, 0, sizeof(*lr));
	lr->anchor = name->anchor;
	lr->counted = w->now;
	lr->ttft = r->ttft;
	lr->tpot = r->tokens >= 2 ? r->tpot : 0;
	/* the one definition of E2E (docs/design.md §9.1) */
	lr->e2e = tt_request_e2e(r, &at_wire);
	lr->tokens = r->tokens;
	lr->incomplete = r->incomplete;
	lr->status = r->status;
	lr->complete = r->complete;
	lr->attributed = r->attributed;
	tt_request_peer(r, lr->peer, sizeof(lr->peer));
	if (r->attributed) {
		for (k = 0; k < TT_LIVE_ROWS; k++)
			lr->row_ns[k] = tt_stage_row_ns(r->stage_ns, k);
	}
	lr->itl_off = w->itl.n;
	lr->itl_n = ngaps;
	if (ngaps) {
		memcpy(w->itl.v + w->itl.n, gaps, ngaps * sizeof(*gaps));
		w->itl.n += ngaps;
	}
	w->fresh++;
	t->requests++;
	if (!r->complete) {
		for (k = 0; k < TT_INC_NBITS; k++)
			t->incomplete[k] += !!(r->incomplete & (1u << k));
		return 0;
	}
	t->complete++;
	if (lr->ttft)
		observe(&t->ttft, TT_LIVE_H_TTFT, lr->ttft);
	if (lr->tpot)
		observe(&t->tpot, TT_LIVE_H_TPOT, lr->tpot);
	for (k = 0; k < ngaps; k++)
		observe(&t->itl, TT_LIVE_H_ITL, gaps[k]);
	if (lr->attributed)
		for (k = 0; k < TT_LIVE_ROWS; k++)
			observe(&t->stage[k], TT_LIVE_H_TTFT, lr->row_ns[k]);
	return 0;
}

/* The request's first known time: what names it from one window to the
 * next, with its connection. */
static __u64 anchor_of(const struct tt_request *r)
{
	if (r->t_arrive)
		return r->t_arrive;
	if (r->t_read)
		return r->t_read;
	return r->t_headers ? r->t_headers : r->t_first_write;
}

/* Names request r of an analysis, counting its twins in twins: 0 or
 * -ENOMEM. */
static int name_of(struct tt_hmap *twins, const struct tt_request *r,
		   struct seen *name)
{
	struct tt_hmap_ent *e;

	name->anchor = anchor_of(r);
	name->key = sk_key(r->sk);
	e = tt_hmap_insert(twins, name->anchor, name->key, 0);
	if (!e)
		return -ENOMEM;
	/* past 63 twins (never seen) the others share the last bit */
	name->twin_bit = 1ULL << (e->val < 63 ? e->val : 63);
	e->val++;
	return 0;
}

/* Settled: ended, past the wait for its bytes on the wire and for a loss
 * to be reported. */
static bool settled(const struct tt_request *r, __u64 now)
{
	__u64 end = r->t_end;

	if ((r->incomplete & TT_INC_OPEN_AT_END) || !end)
		return false;
	if (r->t_last_wire > end)
		end = r->t_last_wire;
	return end + TT_LIVE_SETTLE_NS <= now;
}

/* Forgets the requests counted before the next analysis' guard (they can
 * no longer show up) and those counted before the span. */
static int forget_old(struct tt_window *w, __u64 guard_until)
{
	size_t i, k = 0, off;

	tt_hmap_free(&w->seen_map);
	for (i = 0; i < w->nseen; i++) {
		if (w->seen[i].anchor < guard_until)
			continue;
		w->seen[k++] = w->seen[i];
		if (remember(&w->seen_map, &w->seen[i]))
			return -ENOMEM;
	}
	w->nseen = k;
	for (k = 0; k < w->nreqs && w->reqs[k].counted + w->span < w->now; k++)
		;
	if (k) {
		off = k < w->nreqs ? w->reqs[k].itl_off : w->itl.n;
		memmove(w->reqs, w->reqs + k,
			(w->nreqs - k) * sizeof(*w->reqs));
		w->nreqs -= k;
		for (i = 0; i < w->nreqs; i++)
			w->reqs[i].itl_off -= off;
		if (off) {
			memmove(w->itl.v, w->itl.v + off,
				(w->itl.n - off) * sizeof(*w->itl.v));
			w->itl.n -= off;
		}
	}
	for (k = 0; k < w->lost.n && w->lost.v[k] + w->span < w->now; k += 2)
		;
	if (k) {
		memmove(w->lost.v, w->lost.v + k,
			(w->lost.n - k) * sizeof(__u64));
		w->lost.n -= k;
	}
	return 0;
}

int tt_window_refresh(struct tt_window *w, __u64 now, bool last)
{
	struct tt_analyzer *an = tt_analyzer_new();
	__u64 start = w->next_start, guard_until, oldest, keep_from;
	struct tt_hmap twins = {};
	const struct tt_request *r;
	struct tt_hmap_ent *e;
	struct seen name;
	size_t i;
	int err = -ENOMEM;

	if (!an)
		return -ENOMEM;
	tt_analyzer_keep_paths(an, false);
	if (tt_analyzer_add_procs(an, w->procs, w->nprocs) ||
	    tt_analyzer_add_devices(an, w->devs, w->ndevs))
		goto cleanup;
	w->now = now;
	w->fresh = 0;
	if (now > w->span && start < now - w->span)
		start = now - w->span;
	/* a request that began before the guard was counted already, or is
	 * older than what is kept: its start's state is gone */
	guard_until = start > w->first_ts ? start + TT_LIVE_GUARD_NS : 0;
	err = feed(w, an, start);
	if (err)
		goto cleanup;
	w->analysed_ns =
		now > start ?
			now - (start > w->first_ts ? start : w->first_ts) :
			0;
	oldest = now;
	for (i = 0; i < tt_analyzer_nrequests(an); i++) {
		r = tt_analyzer_request(an, i);
		err = name_of(&twins, r, &name);
		if (err)
			goto cleanup;
		if (!name.anchor || name.anchor < guard_until)
			continue;
		e = tt_hmap_find(&w->seen_map, name.anchor, name.key);
		if (e && (e->val & name.twin_bit))
			continue;
		/* one about to fall out of the span is counted as it stands */
		if (!last && !settled(r, now) &&
		    name.anchor + w->span > now + 2 * TT_LIVE_GUARD_NS) {
			if (name.anchor < oldest)
				oldest = name.anchor;
			continue;
		}
		err = count(w, an, i, &name);
		if (err)
			goto cleanup;
	}
	w->next_start = oldest > TT_LIVE_GUARD_NS ? oldest - TT_LIVE_GUARD_NS :
						    0;
	/* a ring (a flight recorder's) keeps more than the analysis needs */
	keep_from = w->next_start;
	if (w->keep && now > w->keep && now - w->keep < keep_from)
		keep_from = now - w->keep;
	else if (w->keep && now <= w->keep)
		keep_from = 0;
	trim_store(w, keep_from);
	err = trim_conns(w, keep_from);
	if (!err)
		err = forget_old(w, w->next_start > w->first_ts ?
					    w->next_start + TT_LIVE_GUARD_NS :
					    0);
cleanup:
	tt_hmap_free(&twins);
	tt_analyzer_free(an);
	return err;
}

void tt_window_totals(const struct tt_window *w, struct tt_live_totals *t)
{
	*t = w->totals;
}

static int by_ttft(const void *x, const void *y)
{
	const struct tt_live_req *p = *(const struct tt_live_req *const *)x;
	const struct tt_live_req *q = *(const struct tt_live_req *const *)y;

	if (p->ttft != q->ttft)
		return p->ttft > q->ttft ? -1 : 1;
	return p->anchor > q->anchor ? -1 : p->anchor < q->anchor;
}

static int by_tpot(const void *x, const void *y)
{
	const struct tt_live_req *p = *(const struct tt_live_req *const *)x;
	const struct tt_live_req *q = *(const struct tt_live_req *const *)y;

	if (p->tpot != q->tpot)
		return p->tpot > q->tpot ? -1 : 1;
	return by_ttft(x, y);
}

static int by_age(const void *x, const void *y)
{
	const struct tt_live_req *p = *(const struct tt_live_req *const *)x;
	const struct tt_live_req *q = *(const struct tt_live_req *const *)y;

	if (p->anchor != q->anchor)
		return p->anchor > q->anchor ? -1 : 1;
	return by_ttft(x, y);
}

static const char *dominant(const struct tt_live_req *r)
{
	unsigned int k, best = TT_LIVE_ROWS;

	if (!r->attributed)
		return NULL;
	for (k = 0; k < TT_LIVE_ROWS; k++)
		if (r->row_ns[k] &&
		    (best == TT_LIVE_ROWS || r->row_ns[k] > r->row_ns[best]))
			best = k;
	return best < TT_LIVE_ROWS ? tt_stage_row_name(best) : NULL;
}

/* The slowest requests of the span by f->sort. */
static int pick_slow(const struct tt_window *w, struct tt_live_frame *f)
{
	static int (*const cmp[TT_LIVE_NSORT])(
		const void *, const void *) = { by_ttft, by_tpot, by_age };
	const struct tt_live_req **v = malloc((w->nreqs + 1) * sizeof(*v));
	size_t i;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < w->nreqs; i++)
		v[i] = &w->reqs[i];
	qsort(v, w->nreqs, sizeof(*v), cmp[f->sort]);
	f->nslow = w->nreqs < TT_LIVE_TOP ? w->nreqs : TT_LIVE_TOP;
	for (i = 0; i < f->nslow; i++) {
		f->slow[i] = *v[i];
		f->slow_dominant[i] = dominant(v[i]);
	}
	free(v);
	return 0;
}

int tt_window_frame(const struct tt_window *w, enum tt_live_sort sort,
		    struct tt_live_frame *f)
{
	struct tt_u64vec ttft = {}, tpot = {}, itl = {};
	unsigned __int128 rows[TT_LIVE_ROWS] = {}, total = 0;
	const struct tt_live_req *r;
	size_t i, k;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->now = w->now;
	f->first_ts = w->first_ts;
	f->span_ns = w->span;
	f->totals = w->totals;
	f->fresh = w->fresh;
	f->analysed_events = w->analysed_events;
	f->analysed_ns = w->analysed_ns;
	f->kept_events = w->nevents;
	f->sort = sort < TT_LIVE_NSORT ? sort : TT_LIVE_BY_TTFT;
	f->n = w->nreqs;
	for (i = 0; i < w->nreqs && !err; i++) {
		r = &w->reqs[i];
		if (!r->complete) {
			for (k = 0; k < TT_INC_NBITS; k++)
				f->incomplete[k] +=
					!!(r->incomplete & (1u << k));
			continue;
		}
		f->complete++;
		if (r->ttft)
			err = tt_u64vec_push(&ttft, r->ttft);
		if (!err && r->tpot)
			err = tt_u64vec_push(&tpot, r->tpot);
		if (!err && r->itl_n && !tt_u64vec_reserve(&itl, r->itl_n)) {
			memcpy(itl.v + itl.n, w->itl.v + r->itl_off,
			       r->itl_n * sizeof(*itl.v));
			itl.n += r->itl_n;
		}
		if (!r->attributed || !r->ttft)
			continue;
		f->attributed++;
		total += r->ttft;
		for (k = 0; k < TT_LIVE_ROWS; k++)
			rows[k] += r->row_ns[k];
	}
	tt_summarize(ttft.v, ttft.n, &f->ttft);
	tt_summarize(tpot.v, tpot.n, &f->tpot);
	tt_summarize(itl.v, itl.n, &f->itl);
	for (k = 0; k < TT_LIVE_ROWS && total; k++)
		f->share[k] = (double)rows[k] / (double)total;
	for (i = 1; i < w->lost.n; i += 2)
		f->lost += w->lost.v[i];
	/* over the span, or what of it has passed since the first event */
	if (w->now > w->first_ts && w->first_ts)
		f->rate = (double)w->nreqs * 1e9 /
			  (double)(w->now - w->first_ts < w->span ?
					   w->now - w->first_ts :
					   w->span);
	if (!err)
		err = pick_slow(w, f);
	tt_u64vec_free(&ttft);
	tt_u64vec_free(&tpot);
	tt_u64vec_free(&itl);
	return err;
}

void tt_window_free(struct tt_window *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nchunks; i++)
		free(w->chunks[i]);
	free(w->chunks);
	free(w->conns);
	tt_hmap_free(&w->conn_map);
	tt_hmap_free(&w->seen_map);
	free(w->rtlocks);
	free(w->seen);
	free(w->reqs);
	tt_u64vec_free(&w->itl);
	tt_u64vec_free(&w->lost);
	free(w->procs);
	free(w->devs);
	free(w);
}
