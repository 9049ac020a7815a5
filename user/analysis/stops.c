// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What ended a reader's block (docs/design.md §4.3, "A JVM's own
 * threads"): a runtime's own thread, the address space's lock or a peer
 * handler releasing a lock is a stop on the way, not the wait for the
 * engine that ends the reader's work on a request (handoff.c's
 * block_ends_work()).
 */
#include "cp_internal.h"
#include "tt_arch.h"

bool cp_rq_reads(const struct rq_index *ix, __u32 tid)
{
	size_t a = cp_act_after(ix, tid, 0);

	for (; a < ix->nact && ix->act[a].tid == tid; a++)
		if (!ix->act[a].write)
			return true;
	return false;
}

enum cp_block_stop cp_block_stop(const struct tt_critpath *cp,
				 const struct rq_index *ix,
				 const struct cp_thread *th, size_t k)
{
	const struct cp_thread *x;
	const struct cp_wake *w;

	/* the address space's lock, which a collector's munmap held (Node's
	 * loop in mmap while V8's workers free a long prompt's heap); not a
	 * wait outside a call, which a goroutine's park is too */
	if (th->recs[k].state == REC_BLOCKED &&
	    th->recs[k].info < cp->nblocks &&
	    cp_mm_call(cp->blocks[th->recs[k].info].syscall))
		return STOP_RUNTIME;
	w = k + 1 < th->nrecs ? cp_block_wake(cp, th, k + 1) : NULL;
	if (!w)
		return STOP_NONE;
	/* a lock's release: a futex wake by another thread (a loopback
	 * send's softirq names its sender, which brought data) */
	if (w->ctx != CTX_PROCESS || w->syscall != TT_NR_futex ||
	    w->waker_tid == th->tid || w->lock == CP_LOCK_RUNTIME)
		return STOP_NONE;
	x = cp_thread_find(cp, w->waker_tid);
	if (x && (x->runtime_own || x->rt_pool))
		return STOP_RUNTIME;
	return cp_rq_reads(ix, w->waker_tid) ? STOP_PEER : STOP_NONE;
}
