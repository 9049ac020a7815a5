// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hand-offs and the dispatch rules: a consumer's hand-off bursts, where
 * the reader let the request go (docs/design.md §4.4; who serves which
 * request when: rqindex.c; the GPU rule: gpurule.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "locks.h"
#include "waits.h"
#include "golift.h"
#include "tt_arch.h"

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
		alive = cp_alive_scan_ask(&sc, wk->ix, w->target_tid, w->ts,
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
 * from since to them: its handler ran and let the request go (an asyncio
 * router's appends wake nobody); else 0 */
static __u64 wakeless_headers(const struct walk *wk, const struct cp_thread *th,
			      __u64 lo, __u64 hi, __u64 since)
{
	__u64 h = reader_headers(wk, th, lo, hi);

	if (!h || cp_handoff_in(wk->cp, th, since, h, wk->callee_tgid))
		return 0;
	return h;
}

/* The headers th sent for the request before t, when it woke no thread
 * since the headers it sent before them (another request's: that handler
 * ran before this one, and its put may have woken someone); else 0 */
static __u64 own_turn_headers(const struct walk *wk, const struct cp_thread *th,
			      __u64 t)
{
	const struct rq_index *ix = wk->ix;
	__u64 h = reader_headers(wk, th, wk->r, t), since = wk->r;
	size_t a;

	if (!h)
		return 0;
	a = cp_acts_after(ix->hdrs, ix->nhdrs, th->tid, h - 1);
	if (a > 0 && ix->hdrs[a - 1].tid == th->tid &&
	    ix->hdrs[a - 1].t > since)
		since = ix->hdrs[a - 1].t;
	return wakeless_headers(wk, th, wk->r, t, since);
}

/* Reader th serves the request alone: it writes it too, and reads no other
 * request before its first token (a thread per connection, http.server's) */
static bool serves_alone(const struct walk *wk, const struct cp_thread *th)
{
	__u64 first = wk->rq->t_first_write;

	return wk->rq->writer_tid == th->tid && first &&
	       cp_rq_next_act(wk->ix, th->tid, wk->r, wk->ri) > first;
}

/* After its block at record k, th ran HANDLER_START_NS of CPU or more
 * before its next block that is no wait for the GIL */
static bool ran_on_after(const struct tt_critpath *cp,
			 const struct cp_thread *th, size_t k)
{
	__u64 cpu = 0;
	size_t j;

	for (j = k + 1; j + 1 < th->nrecs; j++) {
		if (th->recs[j].state == REC_BLOCKED &&
		    !cp_block_is_runtime(cp, th, &th->recs[j]))
			return false;
		if (th->recs[j].state == REC_RUNNING)
			cpu += th->recs[j + 1].ts - th->recs[j].ts;
		if (cpu >= HANDLER_START_NS)
			return true;
	}
	return false;
}

/*
 * The reader's block at record k ends its work on the request: not a stop
 * by the runtime's own threads (they never hand it a token); not one by a
 * peer (a lock the handlers share) before its handler ran (less than
 * HANDLER_START_NS of CPU since the read) or before the headers it sent
 * for the request (the reader went on with it after); before its handler
 * ran, not a wait for the interpreter lock (uvloop takes the GIL back from
 * a helper thread), nor in a reader that serves the request alone and ran
 * on after it (its handler's tokenizing of a long prompt waits for the GIL
 * many times; after its put, it waits for its tokens at once). After its
 * headers a handler waits for its tokens on locks it shares (llama.cpp's
 * server_response): those blocks are.
 */
static bool block_ends_work(const struct walk *wk, const struct cp_thread *th,
			    size_t k, __u64 ran)
{
	enum cp_block_stop stop = cp_block_stop(wk->cp, wk->ix, th, k);
	bool gil = cp_block_is_runtime(wk->cp, th, &th->recs[k]);

	if (stop == STOP_RUNTIME ||
	    (stop == STOP_PEER &&
	     reader_headers(wk, th, th->recs[k].ts, UINT64_MAX)) ||
	    cp_block_asked(wk->cp, th, k) ||
	    (gil && serves_alone(wk, th) && ran_on_after(wk->cp, th, k)))
		return false;
	return ran >= HANDLER_START_NS || (!gil && stop != STOP_PEER);
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
		/* handed on after the turn before it, without a wake; or its
		 * headers came before that turn, waking nobody: there */
		next &= ~CP_TURN_AFTER;
		h = own_turn_headers(wk, th, next);
		if (h)
			return h;
		if (next > from && next < t)
			from = next + 1;
		/* the turns up to tb were other requests': its headers */
		h = next >= t ? reader_headers(wk, th, wk->r, t) : 0;
		if (h)
			return h;
		/* ... or they came after the turn, waking nobody since */
		h = wakeless_headers(wk, th, from, t, from);
		if (h)
			return h;
	} else if (next && next < t && !call_turn(wk, th, next)) {
		/* a turn after the headers its handler sent, waking nobody:
		 * it had let the request go (the turn is a later one's) */
		h = own_turn_headers(wk, th, next);
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
	h = next < t ? wakeless_headers(wk, th, next, t, wk->r) : 0;
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
