// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A consumer that took a request from its input and waited on that input
 * again before computing (docs/design.md §4.4, "Batches that fill"): a
 * dynamic batcher (LitServe's collate_requests, Triton's max_queue_delay,
 * Ray Serve's batch_wait_timeout_s) holds the request until its batch is
 * full or its timeout passes, and that wait is the request's queue. Its
 * evidence: a wait on a pipe, a socket or a condition variable that its
 * timeout ended, or a second wait on the pipe, socket or (timed) condition
 * variable it just took from. In a process apart from the reader's, any
 * wait on its input pipe that a write ended: an engine behind a
 * multiprocessing queue (a relay of the reader's own process reading a
 * response pipe is none).
 */
#include <sys/stat.h>
#include "cp_internal.h"
#include "waits.h"
#include "tt_arch.h"

/* The channel th waited on in blocked record k: the inode of its pipe or
 * socket; 0 for anything else (a futex, a file, an eventfd: ZMQ's
 * mailboxes wake their threads for each signal). */
static __u64 block_object(const struct tt_critpath *cp,
			  const struct cp_thread *th, long k)
{
	const struct cp_block *b;

	if (k < 0 || th->recs[k].state != REC_BLOCKED ||
	    !(th->recs[k].flags & REC_F_FD) ||
	    (th->recs[k].flags & REC_F_ANON) || th->recs[k].info >= cp->nblocks)
		return 0;
	b = &cp->blocks[th->recs[k].info];
	if (!S_ISFIFO(b->fd_mode) && !S_ISSOCK(b->fd_mode))
		return 0;
	return b->fd_ino;
}

/* th's futex wait in blocked record i ended with a lock's wake. */
static bool lock_wait_end(const struct tt_critpath *cp,
			  const struct cp_thread *th, long i)
{
	const struct cp_rec *r = i + 1 < (long)th->nrecs ? &th->recs[i + 1] :
							   NULL;

	return r && r->state == REC_RUNNABLE && r->info != NONE32 &&
	       cp_lock_wake(&cp->wakes[r->info]);
}

/* th's blocked record b waits on a futex word that is no lock: a condition
 * variable's (pthread_cond_wait(), pthread_cond_timedwait()). */
static bool cond_wait(const struct tt_critpath *cp, const struct cp_thread *th,
		      long b)
{
	const struct cp_block *k = &cp->blocks[th->recs[b].info];

	return k->syscall == TT_NR_futex &&
	       !cp_block_on_lock(cp, th, &th->recs[b]);
}

/* th's futex waits a and b are on one condition variable: glibc's waits
 * on one of its two adjacent group words (__g_signals). */
static bool same_cond(const struct tt_critpath *cp, const struct cp_thread *th,
		      long a, long b)
{
	__u64 wa = cp->blocks[th->recs[a].info].arg0,
	      wb = cp->blocks[th->recs[b].info].arg0;

	return cond_wait(cp, th, a) && (wa > wb ? wa - wb : wb - wa) <= 4;
}

/* th's wait in blocked record i ended with a wake by a thread that reads
 * requests: a handler's put */
static bool fed_by_reader(const struct tt_critpath *cp,
			  const struct rq_index *ix, const struct cp_thread *th,
			  long i)
{
	const struct cp_wake *w = cp_block_wake(cp, th, (size_t)i + 1);

	return w && cp_rq_reads(ix, w->waker_tid);
}

bool cp_batch_end(const struct tt_critpath *cp, const struct rq_index *ix,
		  const struct cp_thread *th, long j, __u32 reader_tgid)
{
	const struct cp_rec *r;
	__u64 obj, run = 0, hi;
	long b = j - 1, i;
	bool cond;

	if (b < 1 || th->recs[b].state != REC_BLOCKED)
		return false;
	obj = block_object(cp, th, b);
	/* its timeout ended it: a batcher that holds what it took (its input
	 * had it already, or a condition variable's queue: Triton's) */
	r = &th->recs[j];
	if (cp_timer_ended(cp, th, j))
		return obj || cond_wait(cp, th, b);
	/* a write to the pipe it waited on, from the reader's process: the
	 * request reached it there, however long it waited in the writer */
	if (th->tgid != reader_tgid && obj && r->state == REC_RUNNABLE &&
	    S_ISFIFO(cp->blocks[th->recs[b].info].fd_mode) &&
	    (cp->wakes[r->info].syscall == TT_NR_write ||
	     cp->wakes[r->info].syscall == TT_NR_writev))
		return true;
	/* a timed wait on a condition variable it had waited on just before:
	 * no timeout need end it (the request that fills the batch) */
	cond = !obj && (th->recs[b].flags & REC_F_TIMED) &&
	       cond_wait(cp, th, b);
	if (!obj && !cond)
		return false;
	hi = th->recs[b].ts;
	for (i = b - 1; i >= 0; hi = r->ts, i--) {
		r = &th->recs[i];
		if (r->state == REC_RUNNING) {
			run += hi - r->ts;
			if (run >= RELAY_CPU_NS)
				return false;
		} else if (r->state == REC_BLOCKED) {
			if (cp->blocks[r->info].syscall != TT_NR_futex)
				return obj && block_object(cp, th, i) == obj;
			/* the one before a handler's put: what it took (an
			 * engine's notify is a response reader's, TRT-LLM's
			 * await_response waiting for more) */
			if (cond && same_cond(cp, th, i, b))
				return fed_by_reader(cp, ix, th, i);
			/* a lock (the GIL) between two waits on the input;
			 * a futex wait another thread handed work through
			 * (an executor's queue) is no collecting */
			if (!lock_wait_end(cp, th, i))
				return false;
		}
	}
	return false;
}

bool cp_call_taken(struct walk *wk, const struct cp_thread *th, long k,
		   const struct consumer *cs)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_rec *rec = &th->recs[k];
	const struct cp_thread *caller, *to;
	const struct cp_wake *call, *reply;
	size_t a;
	__u64 h;

	if (rec->state != REC_RUNNABLE || rec->info == NONE32 ||
	    cs->wakee_tgid == th->tgid)
		return false;
	call = &cp->wakes[rec->info];
	caller = cp_thread_find(cp, call->waker_tid);
	if (!caller || caller->tgid == th->tgid || !cp_nr_send(call->syscall))
		return false;
	/* its last hand-off before the call answered the caller's process */
	a = cp_wake_at(cp, th->cand, th->ncand, call->ts);
	if (!a)
		return false;
	reply = &cp->wakes[th->cand[a - 1]];
	to = cp_thread_find(cp, reply->target_tid);
	if (!to || to->tgid != caller->tgid)
		return false;
	/* the request was handed on before the call, or its reader made the
	 * call in the turn that read it (a router on one event loop, one
	 * request in flight): the call is its hand-off */
	wk->callee_tgid = th->tgid;
	h = cp_handoff_point(wk, call->ts, NULL);
	if (h < call->ts || (h == call->ts && caller == wk->reader))
		return true;
	wk->callee_tgid = 0;
	return false;
}
