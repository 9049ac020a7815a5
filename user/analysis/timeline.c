// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The timelines read-only, for renderers (Perfetto): a thread's
 * intervals and its GPU calls (docs/design.md §4.1).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "waits.h"

/* ---- timelines, read-only, for renderers ---- */

size_t tt_critpath_nthreads(const struct tt_critpath *cp)
{
	return cp->nthreads;
}

int tt_critpath_thread(const struct tt_critpath *cp, size_t i, __u32 *tid,
		       __u32 *tgid)
{
	if (i >= cp->nthreads)
		return -ERANGE;
	*tid = cp->threads[i]->tid;
	*tgid = cp->threads[i]->tgid;
	return 0;
}

static void runnable_reason(const struct tt_critpath *cp,
			    const struct cp_rec *rec, struct tt_cp_interval *iv)
{
	const struct cp_wake *w;

	if (rec->info == NONE32) {
		snprintf(iv->reason, sizeof(iv->reason), "%s",
			 rec->flags & REC_F_PREEMPT ? "preempted" : "runnable");
		return;
	}
	w = &cp->wakes[rec->info];
	switch (w->ctx) {
	case CTX_PROCESS:
		iv->waker_tid = w->waker_tid;
		snprintf(iv->reason, sizeof(iv->reason), "woken by %u",
			 w->waker_tid);
		break;
	case CTX_SOFTIRQ:
		snprintf(iv->reason, sizeof(iv->reason), "woken in softirq");
		break;
	default:
		snprintf(iv->reason, sizeof(iv->reason), "woken in hardirq");
		break;
	}
}

int tt_critpath_intervals(const struct tt_critpath *cp, __u32 tid, __u64 until,
			  tt_cp_interval_fn fn, void *ctx)
{
	const struct cp_thread *th = cp_thread_find(cp, tid);
	struct tt_cp_interval iv;
	size_t k, n;
	int ret;

	if (!th)
		return -ENOENT;
	n = th->nrecs;
	/* a thread's last switch-out after its exit is its death, not a wait */
	if (n && th->exit_ts && th->recs[n - 1].state == REC_BLOCKED &&
	    th->recs[n - 1].ts >= th->exit_ts)
		n--;
	for (k = 0; k < n; k++) {
		const struct cp_rec *rec = &th->recs[k];
		bool last = k + 1 == th->nrecs;
		__u64 end = !last		? th->recs[k + 1].ts :
			    until > cp->last_ts ? until :
						  cp->last_ts;

		if (end <= rec->ts)
			continue;
		memset(&iv, 0, sizeof(iv));
		iv.start = rec->ts;
		iv.end = end;
		iv.open_end = last;
		switch (rec->state) {
		case REC_RUNNING:
			iv.state = TT_CP_RUNNING;
			iv.stage = TT_ST_CPU;
			snprintf(iv.reason, sizeof(iv.reason), "on-cpu");
			break;
		case REC_RUNNABLE:
			iv.state = TT_CP_RUNNABLE;
			iv.stage = TT_ST_RUNQUEUE;
			runnable_reason(cp, rec, &iv);
			break;
		default:
			iv.state = TT_CP_BLOCKED;
			iv.stage = cp_block_judge(cp, th, rec, iv.reason,
						  sizeof(iv.reason));
			break;
		}
		ret = fn(&iv, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

/* Thread th's intervals of kind: sorted, disjoint, each starting with its
 * __u64 start and end. */
static const void *calls_of(const struct cp_thread *th,
			    enum tt_cp_call_kind kind, size_t *n,
			    size_t *stride)
{
	switch (kind) {
	case TT_CP_CALL_CUDA:
		*n = th->ncalls;
		*stride = sizeof(*th->calls);
		return th->calls;
	case TT_CP_CALL_IOCTL:
		*n = th->nioctls;
		*stride = sizeof(*th->ioctls);
		return th->ioctls;
	case TT_CP_CALL_FILEIO:
		*n = th->nfileios;
		*stride = sizeof(*th->fileios);
		return th->fileios;
	}
	*n = 0;
	return NULL;
}

/* The i-th interval of kind of th, as the read API gives it. */
static void call_fill(const struct tt_critpath *cp, const struct cp_thread *th,
		      enum tt_cp_call_kind kind, size_t i, struct tt_cp_call *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	if (kind == TT_CP_CALL_CUDA) {
		const struct cp_call *k = &th->calls[i];

		c->start = k->start;
		c->end = k->end;
		c->cls = k->cls;
		c->fn = k->fn;
		c->ret = k->ret;
		c->entry_only = k->flags & CP_CALL_ENTRY;
		cp_cuda_fn_name(k->fn, c->name, sizeof(c->name));
	} else if (kind == TT_CP_CALL_IOCTL) {
		const struct cp_ioctl *io = &th->ioctls[i];

		c->start = io->start;
		c->end = io->end;
		c->cmd = io->cmd;
		c->ret = io->ret;
		cp_ioctl_name(cp, io, c->name, sizeof(c->name));
	} else {
		const struct cp_fileio *fi = &th->fileios[i];

		c->start = fi->start;
		c->end = fi->end;
		c->cmd = fi->syscall;
		c->ret = fi->ret;
		cp_fileio_name(fi, c->name, sizeof(c->name));
	}
}

int tt_critpath_calls(const struct tt_critpath *cp, __u32 tid, __u64 from,
		      __u64 to, tt_cp_call_fn fn, void *ctx)
{
	const struct cp_thread *th = cp_thread_find(cp, tid);
	enum tt_cp_call_kind kind;
	struct tt_cp_call c;
	size_t i, n, stride;
	const char *v;
	__u64 t[2];
	int ret;

	if (!th)
		return -ENOENT;
	for (kind = TT_CP_CALL_CUDA; kind <= TT_CP_CALL_FILEIO; kind++) {
		v = calls_of(th, kind, &n, &stride);
		/* the first that ends after from: the one before starts
		 * before it */
		i = cp_starts_before(v, n, stride, from);
		if (i) {
			memcpy(t, v + (i - 1) * stride, sizeof(t));
			i -= t[1] > from;
		}
		for (; i < n; i++) {
			memcpy(t, v + i * stride, sizeof(t));
			if (t[0] >= to)
				break;
			call_fill(cp, th, kind, i, &c);
			ret = fn(&c, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}
