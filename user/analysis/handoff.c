// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hand-offs and the dispatch rules: who serves which request when, a
 * consumer's hand-off bursts, where the reader let the request go
 * (docs/design.md §4.4; the GPU rule: gpurule.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "locks.h"
#include "golift.h"
#include "tt_arch.h"

/* ---- request threads: who serves which request, when ---- */

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
	size_t i, k = 0, caphops = 0, capreads = 0;

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
				(struct rq_hop){ .t = rq->t_wire,
						 .req = i };
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
		if (rq->reader_tid && rq->t_read)
			ix->act[ix->nact++] = (struct rq_act){
				.tid = rq->reader_tid, .req = i, .t = rq->t_read
			};
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
 * thread, V8's platform workers, answers nobody), and not at once to its
 * waker alone.
 */
bool cp_hands_on(const struct tt_critpath *cp, const struct rq_index *ix,
		 const struct cp_wake *w)
{
	return w->target_tid != w->waker_tid &&
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

/* cp_rq_other_alive for a scan that asks about times going down: each
 * target's place in the index is kept and moves back, not searched again
 * (a busy engine's scan asks about thousands of its wakes). */
#define ALIVE_CURSORS 8

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

struct alive_cursor {
	__u32 tid;
	size_t lo, pos; /* tid's entries from lo; those from pos start later */
};

struct alive_scan {
	struct alive_cursor c[ALIVE_CURSORS];
	unsigned int n, next;
};

static bool alive_scan_ask(struct alive_scan *sc, const struct rq_index *ix,
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

/* This request's reader or writer. */
static bool rq_thread(const struct walk *wk, __u32 tid)
{
	return tid == wk->rq->reader_tid || tid == wk->rq->writer_tid;
}

/* This request's reader, writer or the thread the walk came from. */
static bool own_target(const struct walk *wk, __u32 tid, __u32 from)
{
	return rq_thread(wk, tid) || (from && tid == from);
}

bool cp_blocked_in(const struct tt_critpath *cp, const struct cp_thread *c,
		   __u64 t_old, long k_new)
{
	long k;

	for (k = k_new; k >= 0 && c->recs[k].ts > t_old; k--)
		if (c->recs[k].state == REC_BLOCKED &&
		    (!cp || !cp_block_is_runtime(cp, c, &c->recs[k])))
			return true;
	return false;
}

/* c blocked or ran more than its burst gap in [t_old, t_new], k_new its
 * cp_rec_before(c, t_new). */
static bool burst_break(const struct cp_thread *c, __u64 t_old, __u64 t_new,
			long k_new)
{
	__u64 gap = c->tid >= TT_GO_TID_BASE ? GO_BURST_GAP_NS : BURST_GAP_NS;
	__u64 run = 0, hi = t_new, lo;
	long k;

	for (k = k_new; k >= 0; k--) {
		lo = c->recs[k].ts > t_old ? c->recs[k].ts : t_old;
		if (c->recs[k].state == REC_BLOCKED)
			return true;
		if (c->recs[k].state == REC_RUNNING) {
			run += hi - lo;
			if (run > gap)
				return true;
		}
		if (c->recs[k].ts <= t_old)
			break;
		hi = lo;
	}
	return false;
}

/*
 * c's wake w and its later wake of the same target are one hand-off: a
 * condition variable signalled under its mutex wakes the target, which
 * then blocks on the mutex c still holds, and c's unlock wakes it again,
 * through another word, c running all the while.
 */
static bool double_wake(const struct cp_thread *c, const struct cp_wake *w,
			const struct cp_wake *later, long k_later)
{
	return cp_signal_and_release(w, later) &&
	       later->ts - w->ts <= DOUBLE_WAKE_NS &&
	       !cp_blocked_in(NULL, c, w->ts, k_later);
}

bool cp_signal_and_release(const struct cp_wake *a, const struct cp_wake *b)
{
	return a->target_tid == b->target_tid && a->syscall == TT_NR_futex &&
	       b->syscall == TT_NR_futex && a->arg0 != b->arg0;
}

/*
 * c's wake w, its next one later (another target, through the same futex
 * word) and the latest wake call of that run of them (through that word
 * too), within BROADCAST_CALL_NS of w, c blocked nowhere between, are one
 * broadcast:
 * one FUTEX_WAKE call wakes a condition variable's waiters one by one,
 * and on a busy machine that took 170 us for four (a burst's CPU gap split
 * it, the step's own hand-off taken for another request's).
 */
static bool one_broadcast(const struct cp_thread *c, const struct cp_wake *w,
			  const struct cp_wake *later,
			  const struct cp_wake *call, long k_later)
{
	return w->target_tid != later->target_tid &&
	       w->syscall == TT_NR_futex && later->syscall == TT_NR_futex &&
	       w->arg0 == later->arg0 &&
	       call->ts - w->ts <= BROADCAST_CALL_NS &&
	       !cp_blocked_in(NULL, c, w->ts, k_later);
}

bool cp_own_passed(const struct walk *wk, __u32 tid)
{
	size_t i;

	for (i = 0; i < wk->npassed; i++)
		if (wk->passed[i] == tid)
			return true;
	return false;
}

size_t cp_cand_after(const struct tt_critpath *cp, const struct cp_thread *c,
		     __u64 t)
{
	size_t lo = 0, hi = c->ncand, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp->wakes[c->cand[mid]].ts <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A burst of c's hand-offs being grouped by cp_scan_consumer(). */
struct burst {
	bool open;
	bool own; /* carries this request's own hand-off */
	bool other; /* carries a hand-off to another request ... */
	__u64 other_ts; /* ... the latest at this time */
	const struct cp_wake *low; /* its earliest wake so far */
	long low_k; /* cp_rec_before(c, low->ts), found from the last one */
	/* the latest wake of the one_broadcast() run low is in */
	const struct cp_wake *call;
};

/*
 * Judges a burst cp_scan_consumer() closed: true when its hand-off to another
 * request is the boundary. The first own burst back is skipped (may_skip
 * cleared); one that only wakes this request's own threads is never a
 * boundary.
 */
static bool burst_close(struct burst *b, bool *may_skip, struct consumer *cs)
{
	b->open = false;
	if (*may_skip && b->own) {
		cs->own_low = b->low->ts;
		*may_skip = false;
		return false;
	}
	if (!b->other)
		return false;
	cs->has_tb = true;
	cs->tb = b->other_ts;
	return true;
}

/*
 * Consumer c was entered at tj through a wake of thread from (0 when that
 * wake was through a lock). Its hand-offs before tj are its wakes of
 * threads serving other live requests, of from, and of this request's
 * reader and writer, grouped in bursts (a double wake is one). The first
 * burst back is skipped when it carries this request's own hand-off (the
 * wake of from, or one of this request's threads when c's own burst is
 * still ahead); the latest wake to another request in the next burst that
 * has one is the boundary tb. A wake of this request's own thread that
 * serves no other live request is never a boundary: with one request in
 * flight, a consumer that wakes its writer twice has handed nothing else
 * off. Nor is one that a relay's drain split off (cp_relay_drain()). A read
 * of its input pipe after tb, no wait but for the GIL between, moves tb
 * there (a batcher busy past its boundary took it from the pipe then), or
 * else a stale boundary's file read (cp_stale_boundary_read(), §4.4). A
 * wake of from that released the mutex from waited on since c signalled
 * it is that signal: c is scanned from there (cp_signal_before_mutex()). */
void cp_scan_consumer(struct walk *wk, const struct cp_thread *c, __u64 tj,
		      __u64 floor, __u32 from, struct consumer *cs)
{
	const struct tt_critpath *cp = wk->cp;
	bool may_skip = from || !cp_own_passed(wk, c->tid), alive, mine;
	bool broadcast;
	struct burst b = { .low_k = LONG_MAX };
	struct alive_scan sc = { 0 };
	enum cp_took took;
	__u64 r;
	long i;

	cs->has_tb = false;
	cs->took = CP_TOOK_NONE;
	cs->own_low = 0;
	tj = cp_signal_before_mutex(cp, c, tj, from);
	for (i = (long)cp_cand_after(cp, c, tj) - 1; i >= 0; i--) {
		const struct cp_wake *w = &cp->wakes[c->cand[i]];

		if (w->ts < floor)
			break;
		if (w->target_tid == c->tid || (cs->holder && w->spawn))
			continue;
		alive = alive_scan_ask(&sc, wk->ix, w->target_tid, w->ts,
				       wk->ri);
		mine = own_target(wk, w->target_tid, from);
		if (!alive && !mine)
			continue;
		broadcast = b.open &&
			    one_broadcast(c, w, b.low, b.call, b.low_k);
		if (b.open && !double_wake(c, w, b.low, b.low_k) &&
		    !broadcast && burst_break(c, w->ts, b.low->ts, b.low_k) &&
		    burst_close(&b, &may_skip, cs))
			break;
		if (!b.open)
			b = (struct burst){ .open = true, .low_k = b.low_k };
		if (!broadcast)
			b.call = w;
		if (mine)
			b.own = true;
		/* from serving no request here may hand off others' work */
		if (!b.other && (alive || !rq_thread(wk, w->target_tid))) {
			b.other = true;
			b.other_ts = w->ts;
		}
		b.low = w;
		/* wakes come latest first: the records before them too */
		b.low_k = cp_rec_before_from(c, w->ts, b.low_k);
	}
	if (b.open)
		burst_close(&b, &may_skip, cs);
	if (cs->has_tb && from && cp_relay_drain(cp, c, cs->tb, tj))
		cs->has_tb = false;
	/* it took its input after, without waiting for it: there */
	r = cs->has_tb ? cp_pipe_read_after(c, cs->tb, tj) : 0;
	took = CP_TOOK_PIPE;
	if (!r && cs->has_tb) {
		r = cp_stale_boundary_read(cp, c, cs->tb, tj);
		took = CP_TOOK_FILE;
	}
	if (r && !cp_blocked_in(cp, c, cs->tb, cp_rec_before(c, r))) {
		cs->tb = r;
		cs->took = took;
	}
}

/* The request's headers, when reader th sent them in (lo, hi); else 0. */
static __u64 reader_headers(const struct walk *wk, const struct cp_thread *th,
			    __u64 lo, __u64 hi)
{
	__u64 h = wk->rq->t_headers;

	return h > lo && h < hi && wk->rq->writer_tid == th->tid ? h : 0;
}

/*
 * The reader, which writes the response too, sent its headers before t and
 * then waited for a CPU before t: it had handed the request on before the
 * headers (a thread that posts to a busy engine, then answers with its
 * headers and waits for the tokens, as llama.cpp's HTTP threads do), and
 * that wait is no part of the queue. Else t.
 */
static __u64 headers_first(const struct walk *wk, const struct cp_thread *th,
			   __u64 t)
{
	__u64 h = reader_headers(wk, th, wk->r, t);
	long k;

	if (!h)
		return t;
	/* the records from h on, before t */
	for (k = cp_rec_before(th, h) + 1;
	     (size_t)k < th->nrecs && th->recs[k].ts < t; k++)
		if (th->recs[k].state == REC_RUNNABLE)
			return h;
	return t;
}

/* w goes to a thread of process tgid (0: none does) */
static bool wake_to(const struct tt_critpath *cp, const struct cp_wake *w,
		    __u32 tgid)
{
	const struct cp_thread *x;

	if (!tgid)
		return false;
	x = cp_thread_find(cp, w->target_tid);
	return x && x->tgid == tgid;
}

bool cp_handoff_in(const struct tt_critpath *cp, const struct cp_thread *th,
		   __u64 lo, __u64 hi, __u32 skip_tgid)
{
	size_t a = cp_wake_at(cp, th->cand, th->ncand, lo);

	for (; a < th->ncand; a++) {
		const struct cp_wake *w = &cp->wakes[th->cand[a]];

		if (w->ts > hi)
			break;
		if (w->target_tid != th->tid && !cp_call_at(th, w->ts) &&
		    !wake_to(cp, w, skip_tgid))
			return true;
	}
	return false;
}

/* th's wake at ts is one of the call rule's calls (wake_to()) */
static bool call_turn(const struct walk *wk, const struct cp_thread *th,
		      __u64 ts)
{
	size_t a;

	if (!wk->callee_tgid)
		return false;
	a = cp_wake_at(wk->cp, th->cand, th->ncand, ts);
	return a < th->ncand && wk->cp->wakes[th->cand[a]].ts == ts &&
	       wake_to(wk->cp, &wk->cp->wakes[th->cand[a]], wk->callee_tgid);
}

/* The headers th sent for the request in (lo, hi), when it woke no thread
 * since the read: its handler ran and let the request go (an asyncio
 * router's appends wake nobody); else 0 */
static __u64 wakeless_headers(const struct walk *wk, const struct cp_thread *th,
			      __u64 lo, __u64 hi)
{
	__u64 h = reader_headers(wk, th, lo, hi);

	if (!h || cp_handoff_in(wk->cp, th, wk->r, h, wk->callee_tgid))
		return 0;
	return h;
}

/*
 * The reader's block at record k ends its work on the request: not a stop
 * by the runtime's own threads (they never hand it a token); not one by a
 * peer (a lock the handlers share) before its handler ran (less than
 * HANDLER_START_NS of CPU since the read) or before the headers it sent
 * for the request (the reader went on with it after); before its handler
 * ran, not a wait for the interpreter lock (uvloop takes the GIL back from
 * a helper thread). After its headers a handler waits for its tokens on
 * locks it shares (llama.cpp's server_response): those blocks are.
 */
static bool block_ends_work(const struct walk *wk, const struct cp_thread *th,
			    size_t k, __u64 ran)
{
	enum cp_block_stop stop = cp_block_stop(wk->cp, wk->ix, th, k);

	if (stop == STOP_RUNTIME ||
	    (stop == STOP_PEER &&
	     reader_headers(wk, th, th->recs[k].ts, UINT64_MAX)))
		return false;
	return ran >= HANDLER_START_NS ||
	       (!cp_block_is_runtime(wk->cp, th, &th->recs[k]) &&
		stop != STOP_PEER);
}

/*
 * Where the reader let the request go, for a queue that a busy consumer's
 * boundary tb ends: its first wake of another thread (not through a lock,
 * not the runtime's), its first block that ends its work
 * (block_ends_work(): not a stop on the way), or its next read or first
 * write of another request after t_read, whichever comes first; tb when
 * none comes before. The
 * enqueue makes no wakeup when the consumer is busy: the end of the
 * reader's own work on the request is the best evidence of it. A reader
 * that read several requests before handing any on (an event loop) hands
 * them on in turn: the wake its turn gives (loopfifo.c) comes first, and
 * one whose turn made no wake looks from the turn before it on; headers
 * its handler sent before its turn, waking nobody, come first (or before
 * tb, when every turn to tb was another request's). A message the reader
 * hands to ZMQ is a hand-off too: no later than that.
 */
static __u64 reader_handoff(const struct walk *wk, __u64 tb)
{
	const struct cp_thread *th = wk->reader;
	__u64 t = tb, next, from = wk->r, ran = 0, h;
	const struct cp_rec *r;
	size_t a = 0, b, mid;
	long k;

	if (!th)
		return wk->r;
	k = cp_rec_before(th, wk->r + 1);
	for (k = k < 0 ? 0 : k; (size_t)k < th->nrecs && th->recs[k].ts < t;
	     k++) {
		r = &th->recs[k];
		if (r->state == REC_BLOCKED &&
		    block_ends_work(wk, th, (size_t)k, ran)) {
			t = r->ts > wk->r ? r->ts : wk->r;
			break;
		}
		if (r->state == REC_RUNNING && (size_t)k + 1 < th->nrecs &&
		    th->recs[k + 1].ts > wk->r)
			ran += th->recs[k + 1].ts -
			       (r->ts > wk->r ? r->ts : wk->r);
	}
	/* an event loop's own turn: earlier requests took the wakes before */
	next = cp_loop_handoff(wk->ix, th->tid, wk->r, wk->ri);
	/* a loop that hands messages to ZMQ: its turn is this request's
	 * send, whatever the loop did (blocked, read more) since the read */
	if (th->nmsends && next && !(next & (CP_TURN_BEFORE | CP_TURN_AFTER)))
		return next < tb ? next : tb;
	if (next & CP_TURN_BEFORE) {
		/* a handler run at its read: done before the next batch */
		next &= ~CP_TURN_BEFORE;
		if (next > wk->r && next < t)
			t = next;
	} else if (next & CP_TURN_AFTER) {
		/* handed on after the turn before it, without a wake */
		next &= ~CP_TURN_AFTER;
		if (next > from && next < t)
			from = next + 1;
		/* the turns up to tb were other requests': its headers */
		h = next >= t ? reader_headers(wk, th, wk->r, t) : 0;
		if (h)
			return h;
	} else if (next && next < t && !call_turn(wk, th, next)) {
		/* a turn after the headers its handler sent, waking nobody:
		 * it had let the request go (the turn is a later batch's) */
		h = wakeless_headers(wk, th, wk->r, next);
		return h ? h : next;
	}
	/* a message handed to ZMQ is a hand-off, waking no one or later */
	next = cp_msend_in(th, from, t);
	if (next)
		t = next;
	b = th->ncand;
	while (a < b) {
		mid = a + (b - a) / 2;
		if (wk->cp->wakes[th->cand[mid]].ts < from)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < th->ncand && wk->cp->wakes[th->cand[a]].ts < t; a++) {
		const struct cp_wake *w = &wk->cp->wakes[th->cand[a]];

		/* the reader's own hand-off: nothing later can be its end */
		if (cp_hands_on(wk->cp, wk->ix, w) &&
		    !wake_to(wk->cp, w, wk->callee_tgid))
			return w->ts;
	}
	next = cp_rq_next_act(wk->ix, th->tid, from, wk->ri);
	/* an event loop that read another request before this one's handler
	 * ran, and woke nobody since the read: the headers the handler sends
	 * once it let the request go end its turn (an asyncio router's
	 * queue) */
	h = next < t ? wakeless_headers(wk, th, next, t) : 0;
	if (h)
		next = h;
	return headers_first(wk, th, next < t ? next : t);
}

/* ... and no earlier than a helper's answer to the reader's pool (helper.c):
 * the request was the pool's to that answer. A thread the reader started
 * since the read (started; NULL for none) was handed the request at its
 * start: a thread per request (tools/scenarios' hf), a pool grown for it. */
__u64 cp_handoff_point(const struct walk *wk, __u64 tb,
		       const struct cp_thread *started)
{
	__u64 t = reader_handoff(wk, tb), ans = cp_helper_answer(wk, tb);
	const struct cp_wake *w;

	if (started && started->nrecs &&
	    started->recs[0].state == REC_RUNNABLE &&
	    started->recs[0].info != NONE32) {
		w = &wk->cp->wakes[started->recs[0].info];
		if (w->spawn && w->waker_tid == wk->rq->reader_tid &&
		    w->ts >= wk->r && w->ts <= tb)
			return w->ts;
	}

	return ans > t ? ans : t;
}

/* Latest wake of the writer the walk would follow, not through a lock, in
 * [from, to]; to when there is none (the writer made the token itself). */
__u64 cp_find_token(const struct tt_critpath *cp, __u32 writer, __u64 from,
		    __u64 to)
{
	const struct cp_thread *th = cp_thread_find(cp, writer);
	long k;

	if (!th)
		return to;
	for (k = cp_rec_before(th, to + 1); k >= 0 && th->recs[k].ts >= from;
	     k--) {
		if (cp_wake_followed(cp, th, k, to) &&
		    !cp->wakes[th->recs[k].info].lock)
			return th->recs[k].ts;
	}
	return to;
}

/*
 * The reader, which writes the response too, woke th at t, after it had let
 * the request go, and from there the path went only through th and the
 * reader, th on a CPU for less than a relay runs (RELAY_CPU_NS): a helper
 * the reader asks for what is already computed (an executor thread running
 * an output queue's blocking get for an event loop) took nothing up.
 */
bool cp_reader_asked_helper(const struct walk *wk, __u32 tid, __u64 t)
{
	const struct tt_cp_segment *sg;
	__u64 cpu = 0;
	size_t i;

	if (wk->rq->writer_tid != wk->rq->reader_tid)
		return false;
	for (i = 0; i < wk->path.n; i++) {
		sg = &wk->path.v[i];
		if (sg->tid == wk->rq->reader_tid)
			continue;
		if (sg->tid != tid)
			return false;
		if (sg->state == TT_CP_RUNNING)
			cpu += sg->dur;
	}
	return cpu < RELAY_CPU_NS && cp_handoff_point(wk, t, NULL) < t;
}
