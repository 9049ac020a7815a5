// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The critical-path walk: backward from the first token write to
 * t_arrive, charging every nanosecond to one stage (docs/design.md §4.2).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "locks.h"
#include "waits.h"
#include "charge.h"
#include "gpu.h"

/* ---- the walk ---- */

/* The hypervisor's part of a path segment: its thread's steal in it. */
static __u64 seg_steal(const struct tt_critpath *cp,
		       const struct tt_cp_segment *sg)
{
	const struct cp_thread *th;

	if (!cp->steals || !sg->tid || !sg->dur)
		return 0;
	th = cp_thread_find(cp, sg->tid);
	return th ? cp_steal_in(th, sg->start, sg->start + sg->dur) : 0;
}

/* The waker the walk moves to when it reaches the start of runnable
 * record k, or NULL: wakes by a traced thread in process context, and in
 * softirq by a traced current when the wait was one a loopback send ends;
 * a data wake only when th read what it announced before the path left th
 * at t_out (else th was still at work on earlier data: Node's loop writing
 * out one step's tokens when the engine writes the next). */
struct cp_thread *cp_wake_followed(const struct tt_critpath *cp,
				   const struct cp_thread *th, long k,
				   __u64 t_out)
{
	const struct cp_rec *rec = &th->recs[k];
	const struct cp_wake *w;
	struct gpu_wait gw;

	if (rec->state != REC_RUNNABLE || rec->info == NONE32)
		return NULL;
	w = &cp->wakes[rec->info];
	if (w->waker_tid == th->tid || w->ctx == CTX_HARDIRQ)
		return NULL;
	if ((rec->flags & REC_F_DATA) && !cp_dread_in(th, rec->ts, t_out))
		return NULL;
	/* whoever ends a wait for the GPU, the time is the GPU's */
	if (k > 0 && th->recs[k - 1].state == REC_BLOCKED &&
	    cp_gpu_wait_of(cp, th, &th->recs[k - 1], &gw))
		return NULL;
	if (w->ctx == CTX_SOFTIRQ &&
	    !(k > 0 && th->recs[k - 1].state == REC_BLOCKED &&
	      cp_block_is_net(cp, &th->recs[k - 1])))
		return NULL;
	return cp_thread_find(cp, w->waker_tid);
}

/* The request's reader hands messages to ZMQ (record's message probes). */
static bool reader_sends(const struct walk *wk)
{
	return wk->reader && wk->reader->nmsends;
}

static void queued(struct walk *wk, __u64 s, __u64 t)
{
	if (!wk->err)
		wk->err = cp_seg_add(&wk->path, true, s, t, 0, TT_CP_PHASE,
				     TT_ST_QUEUE, "queued");
}

/* The loop's turn at a lock for this request above floor, before th's
 * pick-up at t: then the loop's steps to t are on the path (§4.3). */
static __u64 loop_turn(struct walk *wk, const struct cp_thread *th, __u64 floor,
		       __u64 t, __u8 *rule)
{
	__u64 s = cp_loop_lock_turn(wk, th, floor, t);

	if (s) {
		cp_charge_span(wk, wk->reader, cp_rec_before(wk->reader, t), s,
			       t);
		*rule = TT_CP_DISP_LOCK;
	}
	return s;
}

/* The queue ends at t (t_dispatch, by a hand-off or a dispatch marker): it
 * began at the enqueue marker, else where the reader let the request go.
 * Charges [t_enqueue, t) as queued and returns t_enqueue, where the walk
 * goes on, on the reader. A reader's ZMQ send after t, before the engine
 * took the request up at disp (it ran again after its hand-off), is its
 * hand-off: then nothing is queued and the walk goes on at t. */
static __u64 queue_cut(struct walk *wk, __u64 t, __u64 disp,
		       const struct cp_thread *th)
{
	__u64 s, share, bound;

	if (wk->mk.enqueue) {
		s = wk->mk.enqueue < t ? wk->mk.enqueue : t;
		wk->enqueue = TT_CP_ENQ_MARKER;
	} else if (wk->t_chan_send) {
		s = wk->t_chan_send < t ? wk->t_chan_send : t;
		wk->enqueue = TT_CP_ENQ_CHANNEL;
	} else {
		s = cp_handoff_point(wk, reader_sends(wk) ? disp : t, th);
		wk->enqueue = TT_CP_ENQ_HANDOFF;
		/* a put while the consumer waited for a CPU comes after the
		 * walk's cut, before the dispatch */
		bound = disp > t ? disp : t;
		share = cp_loop_share(wk);
		if (share && share < bound) {
			s = share;
			wk->enqueue = TT_CP_ENQ_SHARE;
		}
		if (s > t) {
			wk->t_enqueue = s;
			return t;
		}
	}
	wk->t_enqueue = s;
	queued(wk, s, t);
	return s;
}

/* docs/design.md §4.4's resume rule, on consumer c (not the reader) at
 * running record k before any dispatch: c was runnable when the reader let
 * the request go, preempted or woken before that by another request's
 * producer. A busy engine on a crowded CPU, or one woken for a request
 * queued just before this one, takes the request up when it runs again. */
static bool resumed(struct walk *wk, const struct cp_thread *c, long k,
		    __u64 floor)
{
	const struct cp_rec *run = &c->recs[k], *prev;
	__u64 tq;

	if (k < 1 || run->state != REC_RUNNING || run->ts <= floor ||
	    c->tid == wk->rq->reader_tid)
		return false;
	prev = &c->recs[k - 1];
	if (prev->state != REC_RUNNABLE)
		return false;
	/* past an interpreter lock, a consumer of the reader's own process
	 * runs when the lock lets it: its run says nothing of a take-up,
	 * but for its first since before the read (preempted: a CPU, not
	 * the lock, kept it from the request) */
	if (wk->gil_followed && wk->reader && c->tgid == wk->reader->tgid &&
	    (!(prev->flags & REC_F_PREEMPT) || prev->ts >= wk->r))
		return false;
	tq = cp_handoff_point(wk, run->ts, NULL);
	return tq >= prev->ts && tq > floor && tq <= run->ts;
}

/* A take of this request's element: sent after t_read by its reader, or
 * by a thread serving this request only. */
static bool take_of_request(const struct walk *wk, const struct cp_take *tk)
{
	return tk->t_send >= wk->r && tk->t_send <= tk->ts &&
	       (tk->sender == wk->rq->reader_tid ||
		cp_rq_only(wk->ix, tk->sender, wk->ri, wk->lookahead));
}

/* A lock wait followed to a holder busy with another request (its handler
 * thread holding the GIL): the holder's path counts while the waiter
 * waited, and below the wait's start the path is the waiter's own again,
 * which it was busy with then, not the other request's (docs/design.md
 * §4.4); so is the GIL's, unrelated to the engine it held up (an accept
 * loop: cp_holder_elsewhere()). Other holders are followed all the way. */
struct lock_return {
	__u32 tid;
	__u64 t; /* the waiter blocked on the lock here */
	struct consumer cs; /* the walk's view of the waiter */
	__u64 ran, t_out; /* t_out: where the path had left it */
	bool carries;
};

#define LOCK_RETURNS 8 /* nested lock waits followed; deeper ones stay */

/* The CPU a busy reader may spend between its read and its hand-off of what
 * it read: a relay's, but for the writer the walk starts on when it serves
 * other requests too (an event loop): its CPU there may be all theirs (their
 * sends, reads, tokenizing), and it computes no token of its own. */
static __u64 busy_limit(const struct walk *wk, const struct cp_thread *th,
			__u64 t, bool entered)
{
	if (!entered && cp_rq_other_alive(wk->ix, th->tid, t, wk->ri))
		return ~0ULL;
	return RELAY_CPU_NS;
}

/*
 * Walks back from (writer, t_first_write) to t_read, charging the path;
 * returns t_dispatch and sets *rule. Once the dispatch is found, the walk
 * goes on down to t_read without looking for another: with a pick-up on
 * the producer that woke the consumer, with a hand-off boundary on the
 * reader from where it let the request go, the time between being queued.
 * A dispatch marker is the one boundary when there is one: wherever the
 * walk is when it reaches its time (docs/design.md §4.9).
 */
__u64 cp_walk_path(struct walk *wk, __u8 *rule)
{
	struct tt_critpath *cp = wk->cp;
	const struct tt_cp_request *rq = wk->rq;
	struct cp_thread *th = cp_thread_find(cp, rq->writer_tid), *waker;
	const struct cp_wake *w;
	const struct cp_arrival *arr;
	struct cp_wake aw;
	struct consumer cs = { 0 };
	__u64 t = wk->f, floor = wk->r, s, disp = floor, took = 0;
	/* where the path left the thread it is on (toward the token) */
	__u64 t_out = wk->f;
	/* on-CPU on this thread of the path; the latest wake of a thread
	 * that computed, its first run after it, its CPU on the path, and
	 * the path's length then */
	__u64 ran = 0, worker_wake = 0, worker_ran = 0, worker_cpu = 0, own;
	size_t worker_seg = 0;
	const struct cp_rec *rec = NULL;
	const struct cp_take *take, *batch;
	const struct cp_wake *handed;
	bool boundary, resume, collect, call, via_handoff, released,
		dispatched = false, stepped = false;
	/* th carries the token: the walk came to it by no lock's wake */
	bool carries = true;
	__u32 tid = rq->writer_tid, from, join, reader_tgid;
	long k = th ? cp_rec_before(th, t) : -1, turn, hop,
	     owned = cp_hop_owned(wk, t);
	__u64 marked = wk->mk.dispatch;
	/* a marker says where; a walk looking for a hop follows wakes only */
	const bool norules = marked || wk->hop_probe;
	struct lock_return rets[LOCK_RETURNS];
	int nret = 0;
	/* the walk's floor on this thread: t_read, or where a lock wait it
	 * follows began */
	__u64 lo;

	*rule = TT_CP_DISP_READ;
	wk->t_chan_send = 0;
	reader_tgid = wk->reader ? wk->reader->tgid : 0;
	cp_hop_visit(wk, tid);
	while (t > floor && !wk->err) {
		take = batch = NULL;
		collect = false;
		if (dispatched)
			nret = 0;
		lo = nret && rets[nret - 1].t > floor ? rets[nret - 1].t :
							floor;
		/* an event loop's own hop came in here, or th read a hop's */
		s = th && k >= 0 ? cp_hop_came(wk, owned, th, &th->recs[k], lo,
					       t, !marked, &hop) :
				   0;
		if (s) {
			if (th->recs[k].state == REC_BLOCKED)
				cp_charge(wk, s, t, tid, TT_CP_RUNNABLE,
					  TT_ST_RUNQUEUE, "hop data in");
			else
				cp_charge_rec(wk, th, &th->recs[k], s, t);
			t = s;
			if (cp_hop_take(wk, hop, t, tid, dispatched, &disp,
					rule)) {
				th = cp_hop_jump(wk, hop, &tid, &t, &k);
				t_out = t;
				ran = 0;
				dispatched = true;
				owned = -1;
			} else if (hop == owned) {
				owned = -1;
			}
			continue;
		}
		/* a busy reader's read of data written for it: the writer's
		 * path from the write, the reader's work until the read on
		 * it (docs/design.md §4.4, "A busy reader's data") */
		arr = NULL;
		waker = NULL;
		if (!dispatched && !norules && carries && th && k >= 0 &&
		    cp_busy_read(cp, th, k, lo, t, t_out,
				 busy_limit(wk, th, t, cs.entered), &took,
				 &arr))
			waker = cp_thread_find(cp, arr->writer);
		if (!waker)
			arr = NULL;
		if (arr) {
			cp_charge_span(wk, th, k, arr->ts, t);
			boundary = false;
			s = arr->ts;
			aw = (struct cp_wake){ .ts = s,
					       .waker_tid = arr->writer,
					       .target_tid = th->tid,
					       .block = NONE32,
					       .syscall = -1 };
		} else if (!th || k < 0) {
			/* the marker still cuts a path that has no data */
			boundary = marked && !dispatched && marked <= t;
			s = boundary ? marked : lo;
			cp_charge(wk, s, t, tid, TT_CP_NODATA, TT_ST_UNKNOWN,
				  "no data");
			wk->incomplete |= TT_CP_INC_NO_DATA;
			wk->nodata_end = t;
			if (!boundary && lo == floor)
				break;
		} else {
			rec = &th->recs[k];
			s = rec->ts > lo ? rec->ts : lo;
			if (marked)
				boundary = !dispatched && marked >= s &&
					   marked <= t;
			else
				boundary = !dispatched && !norules &&
					   cs.entered && cs.has_tb &&
					   cs.tb >= s && cs.tb <= t;
			/* a take of this request's element is its admission,
			 * whatever hand-off of the engine follows it (the
			 * burst that hands out this step's tokens, split) */
			if (boundary && !marked && th->ntakes &&
			    th->tid != rq->reader_tid &&
			    cp_take_in(th, floor, cs.tb, take_of_request, wk,
				       &take))
				boundary = false;
			take = NULL;
			/* a take later than the hand-off in this record wins */
			batch = !norules && !dispatched &&
						rec->state == REC_RUNNING &&
						th->tid != rq->reader_tid ?
					cp_take_in(th, boundary ? cs.tb : s, t,
						   take_of_request, wk, &take) :
					NULL;
			if (batch) {
				boundary = true;
				cs.tb = batch->ts;
				wk->t_chan_send = take->t_send;
			}
			resume = !boundary && !norules && !dispatched &&
				 wk->resumes && cs.entered &&
				 resumed(wk, th, k, floor);
			/* a batcher's last wait on its input before it
			 * computed this request ends the queue; so does a
			 * caller's call to a callee */
			collect =
				!boundary && !resume && !norules &&
				!dispatched && cs.entered && rec->ts > lo &&
				th->tid != rq->reader_tid &&
				ran + (rec->state == REC_RUNNING ? t - s : 0) >=
					RELAY_CPU_NS;
			call = collect && cp_call_taken(wk, th, k, &cs);
			collect = collect && !call &&
				  cp_batch_end(cp, wk->ix, th, k, reader_tgid);
			if (resume || collect || call)
				boundary = true;
			else if (boundary)
				s = marked ? marked : cs.tb;
			cp_charge_rec(wk, th, rec, s, t);
			if (rec->state == REC_RUNNING)
				ran += t - s;
		}
		t = s;
		if (boundary) {
			*rule = marked			? TT_CP_DISP_MARKER :
				resume			? TT_CP_DISP_RESUME :
				collect			? TT_CP_DISP_BATCH :
				call			? TT_CP_DISP_CALL :
				batch			? TT_CP_DISP_CHANNEL :
				cs.took == CP_TOOK_FILE ? TT_CP_DISP_STORAGE :
				cs.took			? TT_CP_DISP_TAKE :
							  TT_CP_DISP_HANDOFF;
			disp = *rule == TT_CP_DISP_HANDOFF && th ?
				       cp_ran_after_boundary(cp, th, t) :
			       collect ? cp_ran_after(th, k, t) :
					 t;
			/* the GIL waits after a take or a storage read (no
			 * limit: with the token's hand-off as one, 2 of lit's
			 * moved further) */
			if (*rule == TT_CP_DISP_TAKE ||
			    *rule == TT_CP_DISP_STORAGE)
				disp = cp_ran_past_gil(cp, th, t, ~0ULL);
			dispatched = true;
			s = *rule == TT_CP_DISP_HANDOFF && th ?
				    loop_turn(wk, th, floor, t, rule) :
				    0;
			if (s)
				t = disp = s;
			t = queue_cut(wk, t, disp, th);
			tid = batch ? take->sender : rq->reader_tid;
			th = cp_thread_find(cp, tid);
			k = th ? cp_rec_before(th, t) : -1;
			t_out = t;
			continue;
		}
		if (t == lo && lo > floor) {
			/* down to where the waiter began to wait: its own path */
			nret--;
			tid = rets[nret].tid;
			th = cp_thread_find(cp, tid);
			k = th ? cp_rec_before(th, t) : -1;
			cs = rets[nret].cs;
			ran = rets[nret].ran;
			t_out = rets[nret].t_out;
			carries = rets[nret].carries;
			continue;
		}
		if (!arr)
			waker = rec->ts >= floor ?
					cp_wake_followed(cp, th, k, t_out) :
					NULL;
		turn = waker && !arr && !dispatched && !norules ?
			       cp_lock_turn(wk, th, k) :
			       -1;
		/* its tries for the interpreter lock after its turn at an
		 * application's: its own way to that turn, not the GIL's
		 * holder's work */
		if (turn >= 0 && turn != k)
			waker = NULL;
		/* a lock wake after a hand-off to th: that hand-off */
		handed = waker && !arr ? cp_lock_detour(cp, th, k, floor) :
					 NULL;
		if (handed && !dispatched && !norules &&
		    (wk->detours || cp_first_detour(wk, th, k, handed, &cs)))
			waker = NULL;
		if (waker && !arr && turn < 0 && !dispatched && !norules &&
		    cp_boundary_then_lock(wk, th, k, &cs))
			waker = NULL;
		/* a hop's first token woke it, or came while it waited: the
		 * hop's path, from its send (a marker says where the queue
		 * is: the walk as it was) */
		hop = marked || !waker ? -1 : cp_hop_at(wk, waker->tid, t);
		join = waker ? waker->tid : 0;
		if (hop < 0 && !marked && !arr && rec->ts >= floor) {
			hop = cp_hop_waited(wk, th, k, t);
			join = th->tid;
		}
		if (hop >= 0 &&
		    cp_hop_take(wk, hop, t, join, dispatched, &disp, rule)) {
			th = cp_hop_jump(wk, hop, &tid, &t, &k);
			t_out = t;
			ran = 0;
			dispatched = true;
			owned = -1;
			continue;
		}
		if (!waker) {
			k--;
			continue;
		}
		/* the wait is the waker's path: move there at the wake */
		w = arr ? &aw : &cp->wakes[rec->info];
		took = arr ? took : cp_ran_after(th, k, t);
		/* an application's lock its holder had kept for another
		 * request (one model behind it): this one waited its turn,
		 * queued until it held the lock (docs/design.md §4.4) */
		if (turn == k) {
			*rule = TT_CP_DISP_LOCK;
			disp = cp_lock_acquired(cp, th, k);
			dispatched = true;
			/* handed to th by the request's own handler, not the
			 * reader: queued from there, the handler's work before */
			s = wk->mk.enqueue ? 0 : cp_writer_handed(wk, th, k);
			if (s) {
				wk->t_enqueue = s;
				wk->enqueue = TT_CP_ENQ_HANDOFF;
				queued(wk, s, t);
				t = s;
				tid = rq->writer_tid;
			} else {
				t = queue_cut(wk, t, disp, th);
				tid = rq->reader_tid;
			}
			th = cp_thread_find(cp, tid);
			k = th ? cp_rec_before(th, t) : -1;
			t_out = t;
			continue;
		}
		/* a wait for the interpreter lock: the holder's path, counted */
		if (w->lock == CP_LOCK_RUNTIME && k > 0 &&
		    th->recs[k - 1].state == REC_BLOCKED)
			cp_count_gil(wk,
				     th->recs[k - 1].ts > floor ?
					     th->recs[k - 1].ts :
					     floor,
				     t);
		/* a holder working elsewhere: its path counts only while
		 * the waiter waited (struct lock_return) */
		if (!arr && !dispatched && nret < LOCK_RETURNS &&
		    cp_holder_elsewhere(wk, th, k, waker, cs.entered && carries,
					lo))
			rets[nret++] = (struct lock_return){
				.tid = th->tid,
				.t = th->recs[k - 1].ts,
				.cs = cs,
				.ran = ran,
				.t_out = t_out,
				.carries = carries,
			};
		if (!dispatched && cs.entered && cs.own_low &&
		    t <= cs.own_low && !cp_own_passed(wk, th->tid)) {
			if (tt_grow((void **)&wk->passed, &wk->cappassed,
				    wk->npassed + 1, sizeof(*wk->passed))) {
				wk->err = -ENOMEM;
				break;
			}
			wk->passed[wk->npassed++] = th->tid;
		}
		/* a lock wake by the thread that handed th its work: th is
		 * still the one it handed off to (an engine's put to its
		 * output thread, then its release of the GIL) */
		via_handoff = !w->lock ||
			      (handed && handed->waker_tid == waker->tid);
		/* never the reader (a loop asking for a token already put),
		 * nor the request's own handler that handed it on to the
		 * thread that computes, whatever their shares */
		if (!dispatched && via_handoff && ran >= RELAY_CPU_NS &&
		    ran * RELAY_SHARE >= worker_cpu &&
		    th->tid != rq->reader_tid &&
		    !(worker_wake && cp_writer_alone(wk, th->tid, t))) {
			worker_wake = t;
			worker_ran = took;
			worker_cpu = ran;
			worker_seg = wk->path.n;
		}
		ran = 0;
		released = cp_release_pickup(wk, th, k, floor) && took <= t_out;
		if (released) /* it ran on the path, computing: no relay */
			worker_wake = 0;
		if (!dispatched && !norules &&
		    ((!w->lock &&
		      ((rq->reader_tid && waker->tid == rq->reader_tid) ||
		       cp_rq_only(wk->ix, waker->tid, wk->ri, wk->lookahead)) &&
		      !cp_reader_asked_helper(wk, th->tid, t) &&
		      !cp_loop_spawned_other(wk, w)) ||
		     released)) {
			*rule = released ? TT_CP_DISP_RELEASE :
					   TT_CP_DISP_PICKUP;
			disp = worker_wake > t ?
				       worker_ran :
				       cp_ran_past_gil(cp, th, took, t_out);
			/* a thread it started for the request, waiting for
			 * the model's lock first: queued until it held it */
			s = w->spawn && !released ? cp_spawned_lock(cp, th, t) :
						    0;
			if (s && s < wk->f) {
				disp = s;
				*rule = TT_CP_DISP_LOCK;
			}
			dispatched = true;
			wk->t_enqueue = t;
			wk->enqueue = released ? TT_CP_ENQ_RELEASE :
						 TT_CP_ENQ_PICKUP;
			/* ZMQ wakes its I/O thread once for several sends:
			 * this request's own send may come after that wake,
			 * an earlier request's, the relays' work not its queue */
			own = reader_sends(wk) ?
				      cp_handoff_point(wk, disp, NULL) :
				      0;
			if (own > t && own <= disp) {
				wk->t_enqueue = own;
			} else if (worker_wake > t &&
				   cp_writer_alone(wk, th->tid, t) &&
				   cp_busy_in(th, t, worker_wake) >=
					   RELAY_CPU_NS) {
				/* the request's own handler, handed it by the
				 * reader (grpc's poller), worked on it and
				 * handed it on: queued from there */
				wk->t_enqueue = worker_wake;
			} else if (!released && waker == wk->reader &&
				   (s = cp_loop_step(wk, th, t,
						     worker_wake == t))) {
				stepped = true;
				/* admitted by the reader's own engine loop,
				 * whatever passed the step on, or at the lock
				 * turn it gave */
				disp = loop_turn(wk, th, s, t, rule);
				disp = disp ? disp : t;
				queued(wk, s, disp);
				t = s;
			} else if (!released &&
				   (s = cp_loop_share_after(wk, t)) &&
				   s < disp) {
				/* the reader's wake was an earlier handler's
				 * put: this one's came at its share */
				wk->t_enqueue = s;
				wk->enqueue = TT_CP_ENQ_SHARE;
			} else if (!released && waker == wk->reader &&
				   (s = cp_loop_share_before(wk, t))) {
				/* the reader's own engine task took the batch
				 * up after its handlers: put at its share */
				wk->t_enqueue = s;
				wk->enqueue = TT_CP_ENQ_SHARE;
			} else if (worker_wake > t) {
				/* through relays: queued until the worker's
				 * wake */
				wk->path.n = worker_seg;
				queued(wk, t, worker_wake);
			}
			/* the loop's own step, handed to a callee: admitted
			 * at the hand-off */
			if (!released && !stepped && waker == wk->reader &&
			    disp > t && worker_wake <= t &&
			    cp_loop_callee(wk, th, t))
				disp = t;
		}
		if (!dispatched && cp_lock_wake(w))
			wk->lock_followed = true;
		if (!dispatched && w->lock == CP_LOCK_RUNTIME)
			wk->gil_followed = true;
		from = via_handoff ? th->tid : 0;
		carries = !w->lock;
		cs.wakee_tgid = th->tgid;
		th = waker;
		tid = th->tid;
		k = cp_rec_before(th, t);
		t_out = t;
		cp_hop_visit(wk, tid);
		if (dispatched || norules)
			continue;
		cs.entered = true;
		cs.holder = w->lock == CP_LOCK_RUNTIME && !from;
		cp_scan_consumer(wk, th, t, floor, from, &cs);
	}
	return disp;
}

/*
 * The walk from start found no dispatch: walks again with the fallbacks
 * (lock detours, cp_lock_detour(); the resume rule, resumed()) and keeps that
 * walk when it finds one. A lock holder's work stays on the path, and a
 * hand-off boundary wins, wherever the first walk finds the dispatch.
 */
static __u64 rewalk(const struct walk *start, struct walk *wk, __u64 disp,
		    __u8 *rule, bool detours, bool resumes)
{
	struct walk alt = *start;
	__u64 alt_disp;
	__u8 alt_rule;

	alt.path = (struct segvec){ 0 };
	alt.detours = detours;
	alt.resumes = resumes;
	alt_disp = cp_walk_path(&alt, &alt_rule);
	if (alt.err || alt_rule == TT_CP_DISP_READ) {
		if (alt.err)
			wk->err = alt.err;
		free(alt.path.v);
		free(alt.passed);
		return disp;
	}
	free(wk->path.v);
	free(wk->passed);
	*wk = alt;
	*rule = alt_rule;
	return alt_disp;
}

int cp_walk_one(struct tt_critpath *cp, const struct rq_index *ix,
		const struct tt_cp_request *rqs, size_t ri,
		const struct cp_rq_marks *mk, struct tt_cp_result *out)
{
	const struct tt_cp_request *rq = &rqs[ri];
	struct walk wk = { .cp = cp, .ix = ix, .rq = rq, .ri = ri }, start;
	struct segvec segs = cp->walk_segs;
	__u64 disp, j;
	bool gil;
	__u8 rule;
	size_t i;
	long l;
	int err;

	memset(out, 0, sizeof(*out));
	if (!rq->t_arrive || !rq->t_wire || !rq->t_first_write ||
	    !rq->writer_tid || rq->t_wire < rq->t_arrive) {
		out->incomplete = TT_CP_INC_NOT_WALKED;
		return 0;
	}
	wk.path = cp->walk_path;
	wk.path.n = segs.n = 0;
	wk.a = rq->t_arrive;
	wk.w = rq->t_wire;
	if (!rq->t_read)
		wk.incomplete |= TT_CP_INC_NO_READ;
	wk.r = cp_clamp(rq->t_read ? rq->t_read : wk.a, wk.a, wk.w);
	wk.f = cp_clamp(rq->t_first_write, wk.r, wk.w);
	wk.lookahead = rq->t_end ? rq->t_end + CP_LOOKAHEAD_NS : UINT64_MAX;
	wk.reader = cp_thread_find(cp, rq->reader_tid);
	l = cp_lost_before(cp, wk.w + 1);
	if (l >= 0 && cp->lost_merged[l].end >= wk.a)
		wk.incomplete |= TT_CP_INC_LOST;
	cp_take_marks(&wk, mk);

	start = wk;
	disp = cp_hop_first(&start, &wk, &rule);
	if (!wk.hop_id && !wk.err)
		disp = cp_walk_path(&wk, &rule);
	gil = wk.gil_followed;
	/* the GPU rule first: an engine's iterations bound its queue; a
	 * hop's walk had its own fallbacks */
	if (!wk.err && rule == TT_CP_DISP_READ && !wk.hop_id)
		disp = cp_gpu_dispatch(&wk, disp, &rule);
	if (!wk.err && rule == TT_CP_DISP_READ && wk.lock_followed && !wk.hop_id)
		disp = rewalk(&start, &wk, disp, &rule, true, false);
	/* an interpreter lock passed around hides who runs: no resume then,
	 * but for a consumer in another process (vLLM's engine) */
	if (!wk.err && rule == TT_CP_DISP_READ && !wk.hop_id) {
		start.gil_followed = gil;
		disp = rewalk(&start, &wk, disp, &rule, false, true);
	}
	/* last, a worker idle but for its locks, which the reader released */
	if (!wk.err && rule == TT_CP_DISP_READ && !wk.hop_id &&
	    wk.lock_followed) {
		start.releases = true;
		disp = rewalk(&start, &wk, disp, &rule, false, false);
	}
	err = wk.err;
	if (!err)
		err = cp_reader_phase(&wk, &segs);
	/* with a pick-up, a hand-off or a hop the path holds its queue */
	if (!err && !wk.hop_id &&
	    (rule == TT_CP_DISP_READ || rule == TT_CP_DISP_GPU)) {
		wk.t_enqueue = wk.r;
		err = cp_seg_add(&segs, false, wk.r, disp, 0, TT_CP_PHASE,
				 TT_ST_QUEUE, "queued");
	}
	for (i = wk.path.n; i-- > 0 && !err;) {
		const struct tt_cp_segment *s = &wk.path.v[i];

		err = cp_seg_add(&segs, false, s->start, s->start + s->dur,
				 s->tid, s->state, s->stage, s->reason);
	}
	if (!err)
		err = cp_seg_add(&segs, false, wk.f, wk.w, rq->writer_tid,
				 TT_CP_PHASE, TT_ST_NET_OUT, "response out");
	cp->walk_path = wk.path;
	cp->walk_segs = segs;
	free(wk.passed);
	if (err)
		return err;
	for (i = 0, j = wk.a; i < segs.n; i++) {
		out->stage_ns[segs.v[i].stage] += segs.v[i].dur;
		j += segs.v[i].dur;
		out->steal_ns += seg_steal(cp, &segs.v[i]);
		if (segs.v[i].stage != TT_ST_STORAGE || !segs.v[i].dur)
			continue;
		if (!out->t_storage_end)
			out->t_storage_start = cp_read_loop_start(
				cp, cp_thread_find(cp, segs.v[i].tid),
				segs.v[i].start, disp);
		out->t_storage_end = segs.v[i].start + segs.v[i].dur;
	}
	if (!cp->drop_segments && segs.n) {
		out->segs = malloc(segs.n * sizeof(*segs.v));
		if (!out->segs)
			return -ENOMEM;
		memcpy(out->segs, segs.v, segs.n * sizeof(*segs.v));
		out->nsegs = segs.n;
	}
	out->t_enqueue = wk.t_enqueue;
	out->hop_id = wk.hop_id;
	out->gil_ns = wk.gil_ns;
	out->t_dispatch = disp;
	out->t_token = cp_clamp(wk.mk.token ? wk.mk.token :
					      cp_find_token(cp, rq->writer_tid,
							    disp, wk.f),
				disp, wk.f);
	out->token_marker = wk.mk.token != 0;
	out->dispatch = rule;
	out->enqueue = wk.enqueue;
	out->incomplete = wk.incomplete;
	out->complete = !wk.incomplete && j == wk.w;
	return 0;
}

void tt_cp_result_free(struct tt_cp_result *r)
{
	if (!r)
		return;
	free(r->segs);
	r->segs = NULL;
	r->nsegs = 0;
}

int tt_critpath_walk_sel(struct tt_critpath *cp,
			 const struct tt_cp_request *rqs, size_t n,
			 const size_t *sel, size_t nsel,
			 struct tt_cp_result *out)
{
	struct tt_cp_request *own = NULL;
	struct rq_index ix = { 0 };
	struct cp_rq_marks *mk;
	size_t i;
	int err;

	/* with none selected still: the last call's lock and marker counts
	 * are the stats' */
	if (!n)
		return 0;
	memset(out, 0, nsel * sizeof(*out));
	mk = malloc(n * sizeof(*mk));
	err = mk ? cp_prepare(cp, n) : -ENOMEM;
	/* the rules read who took each request up: a poller's loop */
	if (!err && !(own = malloc(n * sizeof(*own))))
		err = -ENOMEM;
	if (!err) {
		memcpy(own, rqs, n * sizeof(*own));
		cp_poller_rebase(cp, own, n);
		rqs = own;
	}
	if (!err)
		err = cp_rq_index_build(&ix, rqs, n);
	if (!err)
		err = cp_hop_owners(&ix);
	if (!err)
		cp_mark_rt_pools(cp, &ix);
	if (!err)
		err = cp_loop_fifo(cp, &ix);
	if (!err)
		err = cp_marks_bind(cp, rqs, n, mk);
	ix.mk = mk;
	for (i = 0; i < nsel && !err; i++)
		err = cp_walk_one(cp, &ix, rqs, sel[i], &mk[sel[i]], &out[i]);
	cp_rq_index_free(&ix);
	free(mk);
	free(own);
	if (err) {
		for (i = 0; i < nsel; i++)
			tt_cp_result_free(&out[i]);
	}
	return err;
}

int tt_critpath_walk_all(struct tt_critpath *cp,
			 const struct tt_cp_request *rqs, size_t n,
			 struct tt_cp_result *out)
{
	size_t *sel = malloc((n ? n : 1) * sizeof(*sel)), i;
	int err;

	if (!sel)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sel[i] = i;
	err = tt_critpath_walk_sel(cp, rqs, n, sel, n, out);
	free(sel);
	return err;
}

bool tt_critpath_ready(const struct tt_cp_request *rq, __u64 now)
{
	return rq->t_end && rq->t_end <= now &&
	       now - rq->t_end >= 2 * CP_LOOKAHEAD_NS;
}

int tt_critpath_walk(struct tt_critpath *cp, const struct tt_cp_request *rq,
		     struct tt_cp_result *out)
{
	return tt_critpath_walk_all(cp, rq, 1, out);
}
