// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The GPU rule (docs/design.md §4.4): when neither a pick-up nor a hand-off
 * ended the queue, the iteration of the GPU thread that made the token.
 */
#include "cp_internal.h"
#include "waits.h"
#include "gpu.h"

/*
 * docs/design.md §4.4's GPU rule on thread th, which handed the token on at ve: the
 * iteration that made it ends with th's last sync call ending in
 * (floor, ve]; it began with the first launch after the sync before it
 * that a hand-off followed (any sync, when th hands nothing off where the
 * walk can see it: a lock-free ring). That sync must end after floor: a
 * request read while the previous iteration still ran waited for the next
 * one. Returns the start of that first launch, or 0.
 */
static __u64 gpu_boundary(const struct tt_critpath *cp,
			  const struct cp_thread *th, __u64 floor, __u64 ve)
{
	const struct cp_call *c;
	long j = (long)cp_calls_before(th, ve) - 1, i, first = -1;
	bool visible;

	for (; j >= 0; j--) {
		c = &th->calls[j];
		if (c->end <= floor)
			return 0;
		if (c->cls == TT_CUDA_SYNC && c->end <= ve)
			break;
	}
	if (j < 0)
		return 0;
	visible = cp_handoff_in(cp, th, floor, ve, 0);
	for (i = j - 1; i >= 0 && th->calls[i].end > floor; i--) {
		c = &th->calls[i];
		if (cp_is_launch(c))
			first = i;
		else if (c->cls == TT_CUDA_SYNC && first >= 0 &&
			 (!visible || cp_handoff_in(cp, th, c->end,
						    th->calls[first].start, 0)))
			return th->calls[first].start;
	}
	return 0;
}

/* The one thread of process tgid that syncs with the GPU, or NULL. */
static const struct cp_thread *gpu_engine(const struct tt_critpath *cp,
					  __u32 tgid)
{
	const struct cp_thread *found = NULL, *th;
	size_t i;

	for (i = 0; i < cp->ngpu_threads; i++) {
		th = cp->threads[cp->gpu_threads[i]];
		if (th->tgid != tgid)
			continue;
		if (found)
			return NULL;
		found = th;
	}
	return found;
}

/*
 * When neither a pick-up nor a hand-off ended the queue: the GPU rule on
 * the threads of the path, the latest first, else on the writer's
 * process's one GPU thread when the path never reached it (tokens passed
 * through memory: nothing wakes the writer). The path before the boundary
 * is dropped: that time is queueing. Returns t_dispatch.
 */
__u64 cp_gpu_dispatch(struct walk *wk, __u64 disp, __u8 *rule)
{
	const struct cp_thread *wr = cp_thread_find(wk->cp, wk->rq->writer_tid);
	const struct cp_thread *th;
	struct segvec *p = &wk->path;
	__u64 ve = wk->f, tg = 0;
	bool tried = false;
	size_t i = 0, n;

	while (i < p->n && !tg) {
		th = cp_thread_find(wk->cp, p->v[i].tid);
		if (th && th->nsync) {
			tg = gpu_boundary(wk->cp, th, wk->r, ve);
			tried = true;
		}
		/* the next visit: the thread before this one on the path */
		while (i + 1 < p->n && p->v[i + 1].tid == p->v[i].tid)
			i++;
		ve = p->v[i].start;
		i++;
	}
	th = !tried && wr ? gpu_engine(wk->cp, wr->tgid) : NULL;
	if (th)
		tg = gpu_boundary(wk->cp, th, wk->r, wk->f);
	if (!tg || tg <= disp || tg >= wk->f)
		return disp;
	for (n = p->n; n && p->v[n - 1].start + p->v[n - 1].dur <= tg; n--)
		;
	if (n && p->v[n - 1].start < tg) {
		p->v[n - 1].dur -= tg - p->v[n - 1].start;
		p->v[n - 1].start = tg;
	}
	p->n = n;
	if (tg >= wk->nodata_end)
		wk->incomplete &= ~TT_CP_INC_NO_DATA;
	*rule = TT_CP_DISP_GPU;
	return tg;
}
