// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Locks on the walk's way (docs/design.md §4.3, §4.4): a lock that is a
 * detour between a hand-off and the token, an application's lock that is a
 * request's turn in a queue, a consumer's lock wait right after its
 * boundary, and when its waiter took up the work. */
#include "cp_internal.h"
#include "locks.h"
#include "waits.h"
#include "tt_arch.h"

/* When th, woken at its record k, first ran after the wake: a pick-up is
 * taken up then; its wait for a CPU stays scheduler.runqueue. */
__u64 cp_ran_after(const struct cp_thread *th, long k, __u64 t)
{
	if (k + 1 < (long)th->nrecs && th->recs[k + 1].state == REC_RUNNING &&
	    th->recs[k + 1].ts > t)
		return th->recs[k + 1].ts;
	return t;
}

/* A traced thread th did not wake began to run at ts, when th was
 * preempted: a third party's wake took th's CPU, not th's own wakee. */
static bool taken_by_other(const struct tt_critpath *cp,
			   const struct cp_thread *th, __u64 ts)
{
	const struct cp_thread *o;
	long j;

	for (size_t i = 0; i < cp->nthreads; i++) {
		o = cp->threads[i];
		j = o == th ? -1 : cp_rec_before(o, ts + 1);
		if (j < 0 || o->recs[j].ts != ts ||
		    o->recs[j].state != REC_RUNNING)
			continue;
		return !(j > 0 && o->recs[j - 1].state == REC_RUNNABLE &&
			 o->recs[j - 1].info != NONE32 &&
			 cp->wakes[o->recs[j - 1].info].waker_tid == th->tid);
	}
	return false;
}

/* th's record k (running) is preempted, record k + 1, within
 * PREEMPT_AT_ONCE_NS of t, and runs again at record k + 2; past
 * OTHER_AT_ONCE_NS, not by a traced thread it did not wake (a gateway's
 * loop that the runner's answer woke: the engine had run on, admitted) */
static bool preempted_at_once(const struct tt_critpath *cp,
			      const struct cp_thread *th, long k, __u64 t)
{
	return k >= 0 && k + 2 < (long)th->nrecs &&
	       th->recs[k].state == REC_RUNNING &&
	       th->recs[k + 1].state == REC_RUNNABLE &&
	       th->recs[k + 1].ts >= t &&
	       th->recs[k + 1].ts - t <= PREEMPT_AT_ONCE_NS &&
	       th->recs[k + 2].state == REC_RUNNING &&
	       (th->recs[k + 1].ts - t <= OTHER_AT_ONCE_NS ||
		!taken_by_other(cp, th, th->recs[k + 1].ts));
}

/* th woke w's target through another futex word in the burst that ended
 * at tb: a cond var's signal under its mutex and that mutex's release */
static bool rewake(const struct tt_critpath *cp, const struct cp_thread *th,
		   const struct cp_wake *w, __u64 tb)
{
	size_t a = cp_wake_at(cp, th->wout, th->nwout, tb + 1);
	const struct cp_wake *p;

	while (a-- > 0) {
		p = &cp->wakes[th->wout[a]];
		if (tb - p->ts > DOUBLE_WAKE_NS)
			break;
		if (cp_signal_and_release(p, w))
			return true;
	}
	return false;
}

/* th's run at record k began with the release of the mutex of its hand-off
 * at tb (within PREEMPT_AT_ONCE_NS), whose wakee preempted it on the spot
 * (within RELEASE_AT_ONCE_NS: before it could admit anything) */
static bool release_preempted(const struct tt_critpath *cp,
			      const struct cp_thread *th, long k, __u64 tb)
{
	size_t a = cp_wake_at(cp, th->wout, th->nwout, th->recs[k].ts);
	const struct cp_wake *w;

	if (a >= th->nwout)
		return false;
	w = &cp->wakes[th->wout[a]];
	/* a runtime's lock (the GIL) is no application's mutex: a CPython
	 * engine hands it on and runs to admit */
	return (w->lock == CP_LOCK_NONE || w->lock == CP_LOCK_WORD) &&
	       w->ts - th->recs[k].ts <= PREEMPT_AT_ONCE_NS &&
	       preempted_at_once(cp, th, k, w->ts) &&
	       th->recs[k + 1].ts - w->ts <= RELEASE_AT_ONCE_NS &&
	       rewake(cp, th, w, tb);
}

__u64 cp_ran_after_boundary(const struct tt_critpath *cp,
			    const struct cp_thread *th, __u64 tb)
{
	long k = cp_rec_before(th, tb);

	if (!preempted_at_once(cp, th, k, tb))
		return tb;
	/* a cond var's signal under its mutex, then the mutex's release as
	 * the first thing it did (the wake of a waiter on the mutex, which
	 * preempted it again): the hand-off's end, no admission yet */
	k += 2;
	while (release_preempted(cp, th, k, tb))
		k += 2;
	return th->recs[k].ts;
}

/* A thread of tgid woken by signal, then waiting in b: a condition
 * variable's signal, then a wait on its mutex (b a futex word its threads
 * pass around, the signal through another one nobody passes). */
static bool signal_then_mutex(const struct tt_critpath *cp, __u32 tgid,
			      const struct cp_wake *signal,
			      const struct cp_block *b)
{
	return signal->syscall == TT_NR_futex && b->syscall == TT_NR_futex &&
	       b->arg0 != signal->arg0 && cp_word_passed(cp, b->arg0, tgid) &&
	       !cp_word_passed(cp, signal->arg0, tgid);
}

__u64 cp_signal_before_mutex(const struct tt_critpath *cp,
			     const struct cp_thread *c, __u64 tj, __u32 from)
{
	const struct cp_thread *wt = from ? cp_thread_find(cp, from) : NULL;
	const struct cp_wake *w2, *w1;
	const struct cp_block *b;
	__u64 ran = 0;
	long k = wt ? cp_rec_before(wt, tj + 1) : -1;

	if (k < 1 || wt->recs[k].state != REC_RUNNABLE ||
	    wt->recs[k].info == NONE32 ||
	    wt->recs[k - 1].state != REC_BLOCKED ||
	    wt->recs[k - 1].info == NONE32)
		return tj;
	w2 = &cp->wakes[wt->recs[k].info];
	b = &cp->blocks[wt->recs[k - 1].info];
	/* an application's mutex: a runtime's lock (the GIL, Go's) hands
	 * nothing on */
	if (w2->waker_tid != c->tid || w2->syscall != TT_NR_futex ||
	    w2->lock == CP_LOCK_RUNTIME || w2->lock == CP_LOCK_SCHED ||
	    b->arg0 != w2->arg0)
		return tj;
	for (k -= 2; k >= 0 && wt->recs[k].state != REC_BLOCKED; k--) {
		if (wt->recs[k].state == REC_RUNNING)
			ran += wt->recs[k + 1].ts - wt->recs[k].ts;
		if (ran > BURST_GAP_NS)
			return tj;
		if (wt->recs[k].state != REC_RUNNABLE ||
		    wt->recs[k].info == NONE32)
			continue;
		w1 = &cp->wakes[wt->recs[k].info];
		if (w1->waker_tid != c->tid || w1->lock ||
		    !signal_then_mutex(cp, wt->tgid, w1, b))
			return tj;
		return w1->ts;
	}
	return tj;
}

__u64 cp_ran_past_gil(const struct tt_critpath *cp, const struct cp_thread *th,
		      __u64 t, __u64 limit)
{
	long k = cp_rec_before(th, t + 1), n = (long)th->nrecs;
	__u64 cpu = 0, from = t, held = t;

	if (k < 0)
		return t;
	for (;;) {
		/* its runs from there to its next wait */
		for (; k + 1 < n && th->recs[k].state == REC_RUNNING; k++) {
			cpu += th->recs[k + 1].ts -
			       (th->recs[k].ts > from ? th->recs[k].ts : from);
			if (cpu >= RELAY_CPU_NS)
				return held;
		}
		if (k + 1 >= n || !cp_block_is_runtime(cp, th, &th->recs[k]))
			return held;
		/* past that wait and its waits for a CPU or the lock again */
		for (k++; k < n && th->recs[k].state != REC_RUNNING; k++)
			if (th->recs[k].state == REC_BLOCKED &&
			    !cp_block_is_runtime(cp, th, &th->recs[k]))
				return held;
		if (k >= n)
			return held;
		from = th->recs[k].ts;
		if (from > limit)
			return held;
		/* held from there, unless it waits for the lock again within
		 * a relay's CPU: it let it go at once (a holder asked to drop
		 * it, a wait that timed out and asked for it) */
		held = from;
	}
}

bool cp_release_pickup(const struct walk *wk, const struct cp_thread *th,
		       long k, __u64 floor)
{
	const struct tt_critpath *cp = wk->cp;
	__u32 reader = wk->rq->reader_tid;
	const struct cp_wake *w;
	__u64 cpu = 0, end;
	long j;

	if (!wk->releases || k < 1 || th->recs[k].state != REC_RUNNABLE ||
	    th->recs[k].ts < floor || th->recs[k].info == NONE32 || !reader ||
	    !cp_block_on_lock(cp, th, &th->recs[k - 1]))
		return false;
	w = &cp->wakes[th->recs[k].info];
	if (!cp_lock_wake(w) || w->waker_tid != reader)
		return false;
	for (j = k - 1; j >= 0; j--) {
		const struct cp_rec *r = &th->recs[j];

		end = th->recs[j + 1].ts;
		if (end <= floor)
			return true;
		if (r->state == REC_RUNNING)
			cpu += end - (r->ts > floor ? r->ts : floor);
		else if (r->state == REC_BLOCKED &&
			 !cp_block_on_lock(cp, th, r))
			return false;
		if (cpu >= RELAY_CPU_NS)
			return false;
	}
	/* its timeline begins after floor: nothing says what it did */
	return false;
}

/*
 * Runnable record k of th ends a wait on a lock word, and before that wait
 * th was woken by a hand-off (not through a lock) after floor, blocked
 * since on lock words only: the lock is a detour on th's way from the
 * hand-off to the token; returns that hand-off. The walk stays on th (the
 * wait is charged as a lock) to find it, rather than the lock holder's work: a
 * worker woken for the request that then waits on its runtime's mutex, an
 * output thread woken by the engine and then by the GIL (docs/design.md
 * §4.4).
 */
const struct cp_wake *cp_lock_detour(const struct tt_critpath *cp,
				     const struct cp_thread *th, long k,
				     __u64 floor)
{
	const struct cp_wake *w = &cp->wakes[th->recs[k].info];
	long j;

	if (!cp_lock_wake(w))
		return NULL;
	for (j = k - 1; j >= 0 && th->recs[j].ts >= floor; j--) {
		const struct cp_rec *r = &th->recs[j];

		if (r->state == REC_BLOCKED &&
		    !cp_block_on_lock(cp, th, r))
			return NULL;
		if (r->state == REC_RUNNABLE && r->info != NONE32 &&
		    !cp->wakes[r->info].lock &&
		    cp->wakes[r->info].waker_tid != th->tid &&
		    cp->wakes[r->info].ctx == CTX_PROCESS)
			return &cp->wakes[r->info];
	}
	return NULL;
}

/* th, come to by a hand-off (not as the GIL's holder: lit's feeder thread,
 * handed another request's put), waited at its runnable record k for the
 * GIL the request's reader or writer held */
static bool gil_of_loop(const struct walk *wk, const struct cp_thread *th,
			long k, const struct consumer *cs)
{
	const struct cp_wake *w = &wk->cp->wakes[th->recs[k].info];
	__u32 reader = wk->rq->reader_tid, writer = wk->rq->writer_tid;

	return !cs->holder && w->lock == CP_LOCK_RUNTIME &&
	       (w->waker_tid == reader || w->waker_tid == writer) &&
	       th->tid != reader && th->tid != writer;
}

/* The reader's hand-off brought th, the request's own handler serving no
 * other request, its call, and th's runnable record k ends its wait for the
 * GIL since: the hand-off is th's way on, not the GIL holder's work (grpc's
 * poller hands a pool thread its call, then lets the GIL go) */
static bool reader_then_gil(const struct walk *wk, const struct cp_thread *th,
			    long k, const struct cp_wake *handed)
{
	return wk->cp->wakes[th->recs[k].info].lock == CP_LOCK_RUNTIME &&
	       handed->waker_tid == wk->rq->reader_tid &&
	       cp_writer_alone(wk, th->tid, handed->ts);
}

bool cp_first_detour(const struct walk *wk, const struct cp_thread *th, long k,
		     const struct cp_wake *handed, const struct consumer *cs)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_rec *block;

	if (gil_of_loop(wk, th, k, cs) || reader_then_gil(wk, th, k, handed))
		return true;

	/* an application's mutex or the GIL, whoever released it (a
	 * CPython writer notified, then waiting for the GIL its peers pass
	 * around: nagle's); no runtime's scheduler */
	if (k < 1 || th->recs[k].info == NONE32 ||
	    !cp_lock_wake(&cp->wakes[th->recs[k].info]) ||
	    th->tid != wk->rq->writer_tid ||
	    handed->waker_tid == wk->rq->reader_tid)
		return false;
	block = &th->recs[k - 1];
	return block->state == REC_BLOCKED && block->info != NONE32 &&
	       signal_then_mutex(cp, th->tgid, handed,
				 &cp->blocks[block->info]);
}

/* A run of at most this long that ends waiting for the interpreter lock
 * is a thread's try for it, not work (a worker back from an application's
 * lock needs the GIL to run a line of Python). */
#define GIL_TRY_NS (200 * 1000ull)

/*
 * When th, woken at its runnable record k by an application lock's
 * release, ran holding it: past its tries for the interpreter lock, which
 * it needs as well to run (tools/scenarios' pool: 2 ms of them under
 * load, before the server's own clock says it took the request).
 */
__u64 cp_lock_acquired(const struct tt_critpath *cp, const struct cp_thread *th,
		       long k)
{
	long j = k + 1, hops;

	for (hops = 0; hops < 16 && j < (long)th->nrecs; hops++) {
		const struct cp_rec *r = &th->recs[j];

		if (r->state == REC_RUNNABLE) {
			j++;
			continue;
		}
		if (r->state != REC_RUNNING)
			break;
		if (j + 1 < (long)th->nrecs &&
		    th->recs[j + 1].ts - r->ts <= GIL_TRY_NS &&
		    cp_block_is_runtime(cp, th, &th->recs[j + 1])) {
			j += 2;
			continue;
		}
		return r->ts;
	}
	return cp_ran_after(th, k, th->recs[k].ts);
}

__u64 cp_spawned_lock(const struct tt_critpath *cp, const struct cp_thread *th,
		      __u64 t)
{
	long k = cp_rec_before(th, t + 1), n = (long)th->nrecs;
	const struct cp_rec *r;
	__u64 cpu = 0;

	for (k = k < 0 ? 0 : k; k + 1 < n; k++) {
		r = &th->recs[k];
		if (r->state == REC_RUNNING) {
			cpu += th->recs[k + 1].ts - (r->ts > t ? r->ts : t);
			if (cpu >= RELAY_CPU_NS)
				return 0;
		} else if (r->state == REC_BLOCKED) {
			/* a wait on the GIL goes on; on another word a lock
			 * (its release may read as a hand-off: a holder that
			 * never waited on it) ends the way to the model */
			if (!cp_block_on_lock(cp, th, r))
				return 0;
			if (!cp_block_is_runtime(cp, th, r) &&
			    th->recs[k + 1].state == REC_RUNNABLE)
				return cp_lock_acquired(cp, th, k + 1);
		}
	}
	return 0;
}

bool cp_writer_alone(const struct walk *wk, __u32 tid, __u64 t)
{
	return tid == wk->rq->writer_tid &&
	       !cp_rq_other_alive(wk->ix, tid, t, wk->ri);
}

__u64 cp_writer_handed(const struct walk *wk, const struct cp_thread *th,
		       long k)
{
	const struct cp_wake *w;
	long j;

	for (j = k - 1; j >= 0 && th->recs[j].ts > wk->r; j--) {
		if (th->recs[j].state != REC_RUNNABLE ||
		    th->recs[j].info == NONE32)
			continue;
		w = &wk->cp->wakes[th->recs[j].info];
		if (w->lock)
			continue;
		/* a hand-off: the writer's (grpc's pool thread starting the
		 * request's generate() thread), or another's */
		return cp_writer_alone(wk, w->waker_tid, w->ts) ? w->ts : 0;
	}
	return 0;
}

/* Where relay, woken at t, next blocked on something no lock's: its waits
 * for the GIL and the CPU between are its way to hand on what it was
 * given (beside CPU hogs, milliseconds). */
static __u64 relay_run_end(const struct tt_critpath *cp,
			   const struct cp_thread *relay, __u64 t)
{
	long j = cp_rec_before(relay, t) + 1, hops;

	for (hops = 0; hops < 16 && j < (long)relay->nrecs; hops++, j++)
		if (relay->recs[j].state == REC_BLOCKED &&
		    !cp_block_on_lock(cp, relay, &relay->recs[j]))
			return relay->recs[j].ts;
	return t + RELAY_CPU_NS;
}

/* The target of holder's wake w hands it, in the run w began, to a thread
 * serving another live request: anyio's worker back from a queue.Queue's
 * get() to the event loop (starlette's iterate_in_threadpool of a
 * TextIteratorStreamer) */
static bool relayed_to_other(const struct walk *wk,
			     const struct cp_thread *holder,
			     const struct cp_wake *w)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_thread *relay = cp_thread_find(cp, w->target_tid);
	size_t i, n = 0;
	__u64 end;

	if (!relay || w->lock == CP_LOCK_RUNTIME)
		return false;
	end = relay_run_end(cp, relay, w->ts);
	for (i = cp_cand_after(cp, relay, w->ts); i < relay->ncand && n < 8;
	     i++, n++) {
		const struct cp_wake *v = &cp->wakes[relay->cand[i]];

		if (v->ts > end)
			break;
		if (v->target_tid != holder->tid &&
		    v->target_tid != relay->tid &&
		    cp_rq_other_alive(wk->ix, v->target_tid, v->ts, wk->ri))
			return true;
	}
	return false;
}

/* Holder, whose release of a lock ended a wait of (s, t], handed work on
 * meanwhile to a thread serving another live request, itself or through a
 * relay: it held the lock for that request (a token passed to the event
 * loop) */
static bool holder_served_other(const struct walk *wk,
				const struct cp_thread *holder, __u32 waiter,
				__u64 s, __u64 t)
{
	const struct tt_critpath *cp = wk->cp;
	size_t i, n = 0;

	for (i = cp_wake_at(cp, holder->wout, holder->nwout, s + 1);
	     i < holder->nwout && n < 256; i++, n++) {
		const struct cp_wake *w = &cp->wakes[holder->wout[i]];

		if (w->ts > t)
			break;
		/* the release that woke the waiter relays nothing */
		if (w->target_tid == holder->tid || w->target_tid == waiter)
			continue;
		if (!w->lock && !cp_room_wake(cp, w) &&
		    cp_rq_other_alive(wk->ix, w->target_tid, w->ts, wk->ri))
			return true;
		if (relayed_to_other(wk, holder, w))
			return true;
	}
	return false;
}

/*
 * Runnable record k of th ends a wait on an application's lock that its
 * holder, not this request's reader or writer, kept for another request
 * (holder_served_other): its index. So does a try for the interpreter lock
 * just after such a wait (a short run ending on the GIL): that wait's
 * record. Else -1.
 */
long cp_lock_turn(const struct walk *wk, const struct cp_thread *th, long k)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_thread *holder;
	const struct cp_wake *w;
	int hops;

	if (th->tid == wk->rq->reader_tid)
		return -1;
	/* a thread serving another live request waits its own turn, not
	 * this request's: a writer in a convoy on the mutex of the tokens'
	 * queue, or one thread writing many streams */
	if (k > 0 && cp_rq_other_alive(wk->ix, th->tid, th->recs[k].ts, wk->ri))
		return -1;
	for (hops = 0; hops < 8 && k > 0; hops++) {
		if (th->recs[k].state != REC_RUNNABLE ||
		    th->recs[k].info == NONE32 ||
		    th->recs[k - 1].state != REC_BLOCKED)
			return -1;
		w = &cp->wakes[th->recs[k].info];
		if (w->lock == CP_LOCK_WORD) {
			holder = cp_thread_find(cp, w->waker_tid);
			return holder && holder->tid != wk->rq->reader_tid &&
					       holder->tid !=
						       wk->rq->writer_tid &&
					       holder_served_other(
						       wk, holder, th->tid,
						       th->recs[k - 1].ts,
						       th->recs[k].ts) ?
				       k :
				       -1;
		}
		if (w->lock != CP_LOCK_RUNTIME || k < 3 ||
		    th->recs[k - 2].state != REC_RUNNING ||
		    th->recs[k - 1].ts - th->recs[k - 2].ts > GIL_TRY_NS)
			return -1;
		k -= 3;
	}
	return -1;
}

bool cp_boundary_then_lock(const struct walk *wk, const struct cp_thread *th,
			   long k, const struct consumer *cs)
{
	const struct cp_wake *w = &wk->cp->wakes[th->recs[k].info];
	const struct cp_rec *block;

	if (!cs->entered || !cs->has_tb || k < 1)
		return false;
	block = &th->recs[k - 1];
	if (!cp_lock_wake(w))
		return false;
	if (w->waker_tid == wk->rq->reader_tid ||
	    w->waker_tid == wk->rq->writer_tid)
		return false;
	return block->state == REC_BLOCKED && block->ts >= cs->tb &&
	       block->ts - cs->tb <= RELAY_CPU_NS;
}

bool cp_handed_work(const struct tt_critpath *cp,
		    const struct cp_thread *holder, __u32 tid, __u64 from,
		    __u64 t)
{
	size_t i = cp_cand_after(cp, holder, t);
	const struct cp_wake *w;

	while (i-- > 0) {
		w = &cp->wakes[holder->cand[i]];
		if (w->ts < from)
			break;
		if (w->target_tid == tid)
			return true;
	}
	return false;
}

/* Neither x nor y woke the other through a word no lock's from the
 * request's arrival to t: a trimmed timeline has nothing older
 * (docs/design.md §3.5), and the thread that started an engine long
 * before handed it nothing for this request. */
static bool none_handed(const struct walk *wk, const struct cp_thread *x,
			const struct cp_thread *y, __u64 t)
{
	return !cp_handed_work(wk->cp, x, y->tid, wk->a, t) &&
	       !cp_handed_work(wk->cp, y, x->tid, wk->a, t);
}

bool cp_holder_elsewhere(const struct walk *wk, const struct cp_thread *th,
			 long k, const struct cp_thread *holder, bool handed,
			 __u64 lo)
{
	const struct cp_wake *w = &wk->cp->wakes[th->recs[k].info];
	__u32 reader = wk->rq->reader_tid, writer = wk->rq->writer_tid;
	__u64 t = th->recs[k].ts;

	if (!cp_lock_wake(w) || k < 1 || th->recs[k - 1].state != REC_BLOCKED ||
	    th->recs[k - 1].ts <= lo)
		return false;
	/* the request's own event loop holding the GIL, having let it go
	 * (its headers sent) before th waited, neither handing the other
	 * work: another request's then (TensorRT-LLM's executor after a
	 * forward, the loop tokenizing) */
	if (holder->tid == reader || holder->tid == writer)
		return holder->tid == writer && wk->rq->t_headers > wk->r &&
		       wk->rq->t_headers < th->recs[k - 1].ts &&
		       cp_rq_other_alive(wk->ix, holder->tid, t, wk->ri) &&
		       none_handed(wk, holder, th, t);
	if (cp_rq_other_alive(wk->ix, holder->tid, t, wk->ri))
		return true;
	/* the GIL's holder over a thread the walk was handed to (an engine's
	 * read loop, the accept loop starting handler threads), neither of
	 * them handing the other work (an output thread is handed tokens:
	 * its history may hold this request's) */
	return w->lock == CP_LOCK_RUNTIME && handed && th->tid != reader &&
	       th->tid != writer && none_handed(wk, holder, th, t);
}

/* The latest first token the loop wrote, of a request other than the
 * walk's, in (from, to]; else from. */
static __u64 other_first_write(const struct walk *wk, __u32 loop, __u64 from,
			       __u64 to)
{
	const struct rq_index *ix = wk->ix;
	size_t a = cp_act_after(ix, loop, from);
	__u64 t = from;

	for (; a < ix->nact && ix->act[a].tid == loop && ix->act[a].t <= to;
	     a++)
		if (ix->act[a].write && ix->act[a].req != wk->ri)
			t = ix->act[a].t;
	return t;
}

/* x's wait that ends at its runnable record k, on the word w woke, began in
 * a call loop handed it through another word: x blocked within the call,
 * its CPU since less than a relay's, its waits for the GIL aside (an
 * anyio worker's lock.acquire(), run_in_threadpool's). Not a condition
 * variable's signal and its mutex's release (libuv's thread pool's): the
 * wait outlasts one. */
static bool waited_in_call(const struct tt_critpath *cp,
			   const struct cp_thread *x, long k, __u32 loop,
			   const struct cp_wake *w)
{
	const struct cp_rec *r = &x->recs[k - 1];
	const struct cp_wake *v;
	__u64 cpu = 0;
	long j;

	if (r->info == NONE32 || cp->blocks[r->info].syscall != TT_NR_futex ||
	    cp->blocks[r->info].arg0 != w->arg0)
		return false;
	for (j = k - 2; j >= 0 && k - j < 32; j--) {
		r = &x->recs[j];
		if (r->state == REC_RUNNING) {
			cpu += x->recs[j + 1].ts - r->ts;
			if (cpu >= RELAY_CPU_NS)
				return false;
		} else if (r->state == REC_BLOCKED) {
			if (!cp_block_is_runtime(cp, x, r))
				return false;
		} else if (r->info != NONE32) {
			v = &cp->wakes[r->info];
			if (v->lock == CP_LOCK_RUNTIME)
				continue;
			return v->waker_tid == loop && v->arg0 != w->arg0 &&
			       w->ts - v->ts > DOUBLE_WAKE_NS;
		}
	}
	return false;
}

__u64 cp_loop_lock_turn(const struct walk *wk, const struct cp_thread *th,
			__u64 floor, __u64 tb)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_thread *loop = wk->reader, *x;
	const struct cp_wake *w;
	__u64 acquired;
	size_t i;
	long k;

	if (!loop || th->tid == loop->tid || th->tgid != loop->tgid)
		return 0;
	i = cp_wake_at(cp, loop->wout, loop->nwout,
		       other_first_write(wk, loop->tid, floor, tb) + 1);
	for (; i < loop->nwout; i++) {
		w = &cp->wakes[loop->wout[i]];
		if (w->ts >= tb)
			break;
		x = cp_thread_find(cp, w->target_tid);
		/* released while the loop served another request; not a
		 * runtime's helper (V8's workers, handed a collection); not a
		 * worker that writes another request's response then (grpc's
		 * pool thread handed its next call) */
		if (w->syscall != TT_NR_futex || w->lock == CP_LOCK_RUNTIME ||
		    w->lock == CP_LOCK_SCHED || !x || x->tgid != loop->tgid ||
		    x->rt_pool || x->runtime_own ||
		    !cp_rq_other_alive(wk->ix, loop->tid, w->ts, wk->ri) ||
		    cp_rq_other_alive(wk->ix, x->tid, w->ts, wk->ri))
			continue;
		k = cp_rec_before(x, w->ts + 1);
		if (k >= 2 && x->recs[k].ts == w->ts &&
		    x->recs[k - 1].state == REC_BLOCKED &&
		    x->recs[k - 1].ts > wk->r &&
		    waited_in_call(cp, x, k, loop->tid, w)) {
			/* it may hold the GIL only after the pick-up: its
			 * turn, then */
			acquired = cp_lock_acquired(cp, x, k);
			return acquired < tb ? acquired : w->ts;
		}
	}
	return 0;
}
