// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The request index: which thread serves which request when (its reads,
 * its first token's write, its span), and the questions the dispatch rules
 * ask of it (docs/design.md §4.4): does a wake hand work on, does a thread
 * serve another request alive then, what does it do next.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

static int cmp_rq_ent(const void *a, const void *b)
{
	const struct rq_ent *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->req < y->req ? -1 : x->req > y->req;
}

int cp_rq_act_cmp(const void *a, const void *b)
{
	const struct rq_act *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->req < y->req ? -1 : x->req > y->req;
}

void cp_rq_index_free(struct rq_index *ix)
{
	free(ix->e);
	free(ix->srv);
	free(ix->tids);
	free(ix->act);
	free(ix->hops);
	free(ix->hop_reads);
	free(ix->hdrs);
	free(ix->hop_owner);
	free(ix->owned_hop);
	free(ix->fifo);
	memset(ix, 0, sizeof(*ix));
}

/* The k entries at e sorted, each with the two latest ends of distinct
 * requests over its thread's entries up to it. With rqs (the entries from
 * the requests' reads), a thread is busy between two requests it serves in
 * turn: a worker blocked in its connection's recv, the client's next
 * request not sent yet, serves that connection until the next request
 * comes, and from then on the next one (its wake and read are its own
 * wait, and the backlog of others waiting for the worker); one that read
 * a request waiting since before the last one ended was held by the last
 * one's connection until then (waiting for its close, or its keep-alive's
 * end). Its first request, like those next ones, is its own from its
 * arrival: a thread that read another first was on its way to that one
 * (woken for it, waiting to run, accepting it), not idle. */
static void rq_ents_sort(struct rq_ent *e, size_t k,
			 const struct tt_cp_request *rqs)
{
	__u64 arrive;
	struct rq_ent *p;
	size_t i;

	qsort(e, k, sizeof(*e), cmp_rq_ent);
	for (i = 0; rqs && i < k; i++) {
		arrive = rqs[e[i].req].t_arrive;
		if ((!i || e[i - 1].tid != e[i].tid) && arrive &&
		    arrive < e[i].start)
			e[i].start = arrive;
	}
	for (i = 0; rqs && i + 1 < k; i++) {
		if (e[i].tid != e[i + 1].tid || e[i].end >= e[i + 1].start)
			continue;
		arrive = rqs[e[i + 1].req].t_arrive;
		if (arrive > e[i].end)
			e[i].end = e[i + 1].start = arrive;
		else
			e[i].end = e[i + 1].start;
	}
	for (i = 0; i < k; i++) {
		p = i ? &e[i - 1] : NULL;
		if (!p || p->tid != e[i].tid) {
			e[i].end1 = e[i].end;
			e[i].req1 = e[i].req;
			e[i].end2 = 0;
		} else if (e[i].end >= p->end1) {
			e[i].end1 = e[i].end;
			e[i].req1 = e[i].req;
			e[i].end2 = p->end1;
		} else {
			e[i].end1 = p->end1;
			e[i].req1 = p->req1;
			e[i].end2 = e[i].end > p->end2 ? e[i].end : p->end2;
		}
	}
}

/* Request i's entries, alive from start, for its reader and its writer. */
static size_t rq_ents_add(struct rq_ent *e, const struct tt_cp_request *rq,
			  __u32 i, __u64 start)
{
	__u64 end = rq->t_end ? rq->t_end : UINT64_MAX;
	size_t k = 0;

	if (rq->reader_tid)
		e[k++] = (struct rq_ent){ .tid = rq->reader_tid,
					  .req = i,
					  .start = start,
					  .end = end };
	if (rq->writer_tid && rq->writer_tid != rq->reader_tid)
		e[k++] = (struct rq_ent){ .tid = rq->writer_tid,
					  .req = i,
					  .start = start,
					  .end = end };
	return k;
}

int cp_rq_hop_cmp(const void *a, const void *b)
{
	const struct rq_hop *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

int cp_rq_index_build(struct rq_index *ix, const struct tt_cp_request *rqs,
		      size_t n)
{
	size_t i, k = 0, caphops = 0, capreads = 0, caphdrs = 0;

	ix->e = malloc((n ? n : 1) * 2 * sizeof(*ix->e));
	ix->srv = malloc((n ? n : 1) * 2 * sizeof(*ix->srv));
	ix->act = malloc((n ? n : 1) * 2 * sizeof(*ix->act));
	if (!ix->e || !ix->srv || !ix->act)
		return -ENOMEM;
	ix->rqs = rqs;
	ix->nrqs = n;
	for (i = 0; i < n; i++) {
		const struct tt_cp_request *rq = &rqs[i];

		if (rq->hop_sender_tid && rq->t_wire) {
			if (tt_grow((void **)&ix->hops, &caphops, ix->nhops + 1,
				    sizeof(*ix->hops)))
				return -ENOMEM;
			ix->hops[ix->nhops++] =
				(struct rq_hop){ .t = rq->t_wire, .req = i };
		}
		if (rq->hop_sender_tid && rq->hop_read_tid) {
			if (tt_grow((void **)&ix->hop_reads, &capreads,
				    ix->nhop_reads + 1, sizeof(*ix->hop_reads)))
				return -ENOMEM;
			ix->hop_reads[ix->nhop_reads++] =
				(struct rq_act){ .tid = rq->hop_read_tid,
						 .req = i,
						 .t = rq->hop_read_t };
		}
		/* a TLS handshake's exchange is no request a loop took in
		 * turn, nor the owner of a hop it sent (hop.c) */
		if (rq->reader_tid && rq->t_read && !rq->tls_unread)
			ix->act[ix->nact++] = (struct rq_act){
				.tid = rq->reader_tid, .req = i, .t = rq->t_read
			};
		if (rq->writer_tid && rq->t_headers) {
			if (tt_grow((void **)&ix->hdrs, &caphdrs, ix->nhdrs + 1,
				    sizeof(*ix->hdrs)))
				return -ENOMEM;
			ix->hdrs[ix->nhdrs++] =
				(struct rq_act){ .tid = rq->writer_tid,
						 .req = i,
						 .t = rq->t_headers };
		}
		if (rq->writer_tid && rq->t_first_write)
			ix->act[ix->nact++] =
				(struct rq_act){ .tid = rq->writer_tid,
						 .req = i,
						 .t = rq->t_first_write,
						 .write = true };
		k += rq_ents_add(&ix->e[k], rq, i,
				 rq->t_arrive ? rq->t_arrive : rq->t_read);
		if (rq->t_read)
			ix->nsrv += rq_ents_add(&ix->srv[ix->nsrv], rq, i,
						rq->t_read);
	}
	rq_ents_sort(ix->e, k, NULL);
	rq_ents_sort(ix->srv, ix->nsrv, rqs);
	qsort(ix->act, ix->nact, sizeof(*ix->act), cp_rq_act_cmp);
	if (ix->nhops)
		qsort(ix->hops, ix->nhops, sizeof(*ix->hops), cp_rq_hop_cmp);
	if (ix->nhop_reads)
		qsort(ix->hop_reads, ix->nhop_reads, sizeof(*ix->hop_reads),
		      cp_rq_act_cmp);
	if (ix->nhdrs)
		qsort(ix->hdrs, ix->nhdrs, sizeof(*ix->hdrs), cp_rq_act_cmp);
	ix->n = k;
	ix->tids = calloc(k ? k : 1, sizeof(*ix->tids));
	if (!ix->tids)
		return -ENOMEM;
	for (i = 0; i < k; i++) {
		if (!i || ix->e[i - 1].tid != ix->e[i].tid)
			ix->tids[ix->ntids++] =
				(struct rq_tid){ .tid = ix->e[i].tid, .lo = i };
		ix->tids[ix->ntids - 1].hi = i + 1;
	}
	return 0;
}

/* The entries of tid: [*lo, *hi), empty when it has none. */
static void rq_range(const struct rq_index *ix, __u32 tid, size_t *lo,
		     size_t *hi)
{
	size_t a = 0, b = ix->ntids, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (ix->tids[mid].tid < tid)
			a = mid + 1;
		else
			b = mid;
	}
	if (a < ix->ntids && ix->tids[a].tid == tid) {
		*lo = ix->tids[a].lo;
		*hi = ix->tids[a].hi;
	} else {
		*lo = *hi = 0;
	}
}

/* tid wakes, not through a lock, a thread that reads or writes requests;
 * else, with depth, one that does: the targets looked at, up to a bound. */
static bool answers_in(const struct tt_critpath *cp, const struct rq_index *ix,
		       __u32 tid, int depth)
{
	const struct cp_thread *th = cp_thread_find(cp, tid);
	__u32 seen[ANSWER_TARGETS], target;
	size_t i, j, n = 0, lo, hi;

	for (i = 0; th && i < th->ncand; i++) {
		target = cp->wakes[th->cand[i]].target_tid;
		for (j = 0; j < n && seen[j] != target; j++)
			;
		if (j < n || target == tid)
			continue;
		rq_range(ix, target, &lo, &hi);
		if (lo < hi)
			return true;
		if (n == ANSWER_TARGETS)
			break;
		seen[n++] = target;
	}
	for (j = 0; depth && j < n; j++)
		if (answers_in(cp, ix, seen[j], depth - 1))
			return true;
	return false;
}

/*
 * w's target woke w's waker back, not through a lock, before it woke
 * anyone else or ran RELAY_CPU_NS: it answered at once, a helper the
 * waker set to read the answers (an executor thread that reads a response
 * queue, as LitServe's API does), not a thread it handed work to.
 */
static bool answers_back(const struct tt_critpath *cp, const struct cp_wake *w)
{
	const struct cp_thread *x = cp_thread_find(cp, w->target_tid);
	const struct cp_wake *next = NULL;
	__u64 ran = 0, end;
	size_t a;
	long k;

	if (!x || !x->nrecs)
		return false;
	/* a thread w started tells its starter it runs, at once */
	if (x->recs[0].state == REC_RUNNABLE && x->recs[0].info != NONE32 &&
	    &cp->wakes[x->recs[0].info] == w)
		return false;
	for (a = cp_wake_at(cp, x->cand, x->ncand, w->ts); a < x->ncand; a++)
		if (cp->wakes[x->cand[a]].target_tid != x->tid) {
			next = &cp->wakes[x->cand[a]];
			break;
		}
	if (!next || next->target_tid != w->waker_tid)
		return false;
	k = cp_rec_before(x, w->ts + 1);
	for (k = k < 0 ? 0 : k; (size_t)k < x->nrecs &&
				x->recs[k].ts < next->ts && ran < RELAY_CPU_NS;
	     k++) {
		if (x->recs[k].state != REC_RUNNING)
			continue;
		end = (size_t)k + 1 < x->nrecs ? x->recs[k + 1].ts : next->ts;
		if (end > next->ts)
			end = next->ts;
		ran += end - (x->recs[k].ts > w->ts ? x->recs[k].ts : w->ts);
	}
	return ran < RELAY_CPU_NS;
}

/*
 * Wake w by a reader hands work on: its target answers (it wakes a thread
 * that reads or writes requests, directly or through one other, not
 * through a lock: an engine, a relay, a worker, where a runtime's own
 * thread answers nobody), is no runtime's helper pool's (rtpool.c: V8's
 * platform workers, which do wake the loop back), and not at once to its
 * waker alone.
 */
bool cp_hands_on(const struct tt_critpath *cp, const struct rq_index *ix,
		 const struct cp_wake *w)
{
	const struct cp_thread *x = cp_thread_find(cp, w->target_tid);

	return w->target_tid != w->waker_tid && !(x && x->rt_pool) &&
	       answers_in(cp, ix, w->target_tid, ANSWER_DEPTH) &&
	       !answers_back(cp, w);
}

/* Entry e, the last of its thread starting by ts: the thread serves a
 * request other than req alive at ts (end1, end2: its two latest ends). */
static bool serves_other(const struct rq_ent *e, __u64 ts, __u32 req)
{
	return e->req1 != req ? e->end1 >= ts : e->end2 >= ts;
}

/* The index after the last of the n entries at e of tid starting at or
 * before ts (0 or another tid's when none). */
static size_t rq_last_by(const struct rq_ent *e, size_t n, __u32 tid, __u64 ts)
{
	size_t a = 0, b = n, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (e[mid].tid < tid ||
		    (e[mid].tid == tid && e[mid].start <= ts))
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

bool cp_rq_other_alive(const struct rq_index *ix, __u32 tid, __u64 ts,
		       __u32 req)
{
	size_t a = rq_last_by(ix->e, ix->n, tid, ts);

	if (a == 0 || ix->e[a - 1].tid != tid)
		return false;
	return serves_other(&ix->e[a - 1], ts, req);
}

__u64 cp_rq_other_until(const struct rq_index *ix, __u32 tid, __u64 ts,
			__u32 req)
{
	size_t a = rq_last_by(ix->srv, ix->nsrv, tid, ts);
	const struct rq_ent *e;
	__u64 end;

	if (a == 0 || ix->srv[a - 1].tid != tid)
		return 0;
	e = &ix->srv[a - 1];
	end = e->req1 != req ? e->end1 : e->end2;
	return end > ts ? end : 0;
}

__u64 cp_rq_other_read(const struct rq_index *ix, __u32 tid, __u32 req,
		       __u64 from, __u64 to)
{
	size_t a = rq_last_by(ix->srv, ix->nsrv, tid, from);

	for (; a < ix->nsrv && ix->srv[a].tid == tid && ix->srv[a].start < to;
	     a++)
		if (ix->srv[a].req != req)
			return ix->srv[a].start;
	return 0;
}

bool cp_rq_other_arrived(const struct rq_index *ix, __u32 tid, __u32 req,
			 __u64 from, __u64 to)
{
	size_t a = rq_last_by(ix->e, ix->n, tid, to);

	for (; a > 0 && ix->e[a - 1].tid == tid && ix->e[a - 1].start >= from;
	     a--)
		if (ix->e[a - 1].req != req)
			return true;
	return false;
}

/* The first of entries [lo, hi) (one thread's, by start) that starts after
 * ts: a new cursor's place, searched once (a thread has an entry per
 * request it served). */
static size_t rq_start_after(const struct rq_index *ix, size_t lo, size_t hi,
			     __u64 ts)
{
	size_t mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ix->e[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool cp_alive_scan_ask(struct alive_scan *sc, const struct rq_index *ix,
		       __u32 tid, __u64 ts, __u32 req)
{
	struct alive_cursor *c = NULL;
	unsigned int i;

	for (i = 0; i < sc->n && !c; i++)
		if (sc->c[i].tid == tid)
			c = &sc->c[i];
	if (!c) {
		if (sc->n < ALIVE_CURSORS)
			c = &sc->c[sc->n++];
		else
			c = &sc->c[sc->next++ % ALIVE_CURSORS];
		c->tid = tid;
		rq_range(ix, tid, &c->lo, &c->pos);
		c->pos = rq_start_after(ix, c->lo, c->pos, ts);
	}
	while (c->pos > c->lo && ix->e[c->pos - 1].start > ts)
		c->pos--;
	return c->pos > c->lo && serves_other(&ix->e[c->pos - 1], ts, req);
}

size_t cp_wake_at(const struct tt_critpath *cp, const __u32 *idx, size_t n,
		  __u64 lo)
{
	size_t a = 0, b = n, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (cp->wakes[idx[mid]].ts < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

size_t cp_acts_after(const struct rq_act *v, size_t n, __u32 tid, __u64 t)
{
	size_t a = 0, b = n, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (v[mid].tid < tid || (v[mid].tid == tid && v[mid].t <= t))
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

size_t cp_act_after(const struct rq_index *ix, __u32 tid, __u64 t)
{
	return cp_acts_after(ix->act, ix->nact, tid, t);
}

__u64 cp_rq_next_act(const struct rq_index *ix, __u32 tid, __u64 t, __u32 req)
{
	size_t a = cp_act_after(ix, tid, t);

	for (; a < ix->nact && ix->act[a].tid == tid; a++)
		if (ix->act[a].req != req)
			return ix->act[a].t;
	return UINT64_MAX;
}

bool cp_headers_in(const struct rq_index *ix, __u32 tid, __u64 s, __u64 t)
{
	size_t a = cp_acts_after(ix->hdrs, ix->nhdrs, tid, s);

	return a < ix->nhdrs && ix->hdrs[a].tid == tid && ix->hdrs[a].t < t;
}

bool cp_rq_only(const struct rq_index *ix, __u32 tid, __u32 req, __u64 limit)
{
	size_t lo, hi, i;

	rq_range(ix, tid, &lo, &hi);
	/* the entries of tid are in order of their start */
	for (i = lo; i < hi && ix->e[i].start <= limit; i++)
		if (ix->e[i].req != req)
			return false;
	return i > lo;
}
