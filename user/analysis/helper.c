// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A helper that answers the reader's pool (docs/design.md §4.4, "A helper
 * that answers the pool"): TGI's router validates (tokenizes) each request
 * on a blocking thread of tokio's pool and gets the answer back on a
 * oneshot channel, which wakes whichever worker is parked: the tasks of a
 * work-stealing runtime move between its workers. The reader's wake of
 * that thread hands nothing on; the request is still the pool's own work
 * until the helper answers.
 */
#include <string.h>
#include "cp_internal.h"
#include "tt_arch.h"

/* x is a blocking thread of worker th's pool: of its process, named as
 * it is (tokio names them all so), never waiting on the I/O driver */
static bool pool_blocking(const struct cp_thread *th, const struct cp_thread *x)
{
	return x && !x->pool_worker && x->tgid == th->tgid && x->has_comm &&
	       !strcmp(x->comm, th->comm);
}

/*
 * When helper x answered the ask at t: its first wake of a worker of th's
 * pool after t; or, when it first waited on a futex, that wait for its
 * next job (an answer that found no worker parked wakes nobody; woken
 * idle, it had this request to do). 0 if neither, or if it blocked
 * otherwise first (a sleep: whatever it did after may be another
 * request's).
 */
static __u64 answer_to(const struct tt_critpath *cp, const struct cp_thread *th,
		       const struct cp_thread *x, __u64 t)
{
	size_t a = cp_wake_at(cp, x->wout, x->nwout, t);
	const struct cp_wake *w = NULL;
	long k;

	for (; a < x->nwout && !w; a++) {
		const struct cp_wake *v = &cp->wakes[x->wout[a]];

		if (cp_pool_siblings(th, cp_thread_find(cp, v->target_tid)))
			w = v;
	}
	for (k = cp_rec_before(x, t + 1) + 1;
	     (size_t)k < x->nrecs && (!w || x->recs[k].ts < w->ts); k++)
		if (x->recs[k].state == REC_BLOCKED)
			return cp->blocks[x->recs[k].info].syscall ==
					       TT_NR_futex ?
				       x->recs[k].ts :
				       0;
	return w ? w->ts : 0;
}

__u64 cp_helper_answer(const struct walk *wk, __u64 tb)
{
	const struct cp_thread *th = wk->reader, *x;
	const struct tt_critpath *cp = wk->cp;
	const struct cp_wake *w;
	__u64 end, ans;
	size_t a;

	/* a thread that owns its request's task may wait for a helper's
	 * answer visibly (blocked on it): the rule is a pool's */
	if (!th || !th->pool_worker)
		return 0;
	end = cp_rq_next_act(wk->ix, th->tid, wk->r, wk->ri);
	/* the reader's first ask of a blocking thread, before it turned to
	 * another request */
	for (a = cp_wake_at(cp, th->wout, th->nwout, wk->r);
	     a < th->nwout && cp->wakes[th->wout[a]].ts < end; a++) {
		w = &cp->wakes[th->wout[a]];
		x = cp_thread_find(cp, w->target_tid);
		if (pool_blocking(th, x)) {
			ans = answer_to(cp, th, x, w->ts);
			return ans < tb ? ans : 0;
		}
	}
	return 0;
}
