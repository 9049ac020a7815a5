// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The critical-path walk's charges: each piece of the path it walks back
 * over, to one stage (docs/design.md §4.2, §4.7), in time order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cp_internal.h"
#include "waits.h"
#include "charge.h"
#include "gpu.h"

static bool seg_same(const struct tt_cp_segment *s, __u32 tid, __u8 state,
		     __u8 stage, const char *reason)
{
	return s->tid == tid && s->state == state && s->stage == stage &&
	       !strncmp(s->reason, reason, sizeof(s->reason));
}

int cp_seg_add(struct segvec *v, bool desc, __u64 start, __u64 end, __u32 tid,
	       __u8 state, __u8 stage, const char *reason)
{
	struct tt_cp_segment *last = v->n ? &v->v[v->n - 1] : NULL;
	struct tt_cp_segment *s;

	if (end <= start)
		return 0;
	if (last && seg_same(last, tid, state, stage, reason)) {
		if (desc && last->start == end) {
			last->start = start;
			last->dur += end - start;
			return 0;
		}
		if (!desc && last->start + last->dur == start) {
			last->dur += end - start;
			return 0;
		}
	}
	if (tt_grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v)))
		return -ENOMEM;
	s = &v->v[v->n++];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->dur = end - start;
	s->tid = tid;
	s->state = state;
	s->stage = stage;
	/* what snprintf("%s") would store: the hottest call of the walk */
	memcpy(s->reason, reason, strnlen(reason, sizeof(s->reason) - 1));
	return 0;
}

/* Charges [start, end) of the path, latest first; what lost windows cover
 * is other.unknown. */
void cp_charge(struct walk *wk, __u64 start, __u64 end, __u32 tid, __u8 state,
	       __u8 stage, const char *reason)
{
	const struct tt_critpath *cp = wk->cp;
	__u64 cur = end, ws, we;
	long j;

	if (wk->err || end <= start)
		return;
	for (j = cp_lost_before(cp, end);
	     j >= 0 && cp->lost_merged[j].end > start && !wk->err; j--) {
		ws = cp->lost_merged[j].start > start ?
			     cp->lost_merged[j].start :
			     start;
		we = cp->lost_merged[j].end < cur ? cp->lost_merged[j].end :
						    cur;
		wk->err = cp_seg_add(&wk->path, true, we, cur, tid, state,
				     stage, reason);
		if (!wk->err)
			wk->err = cp_seg_add(&wk->path, true, ws, we, tid,
					     TT_CP_NODATA, TT_ST_UNKNOWN,
					     "lost events");
		wk->incomplete |= TT_CP_INC_LOST;
		cur = ws;
	}
	if (!wk->err)
		wk->err = cp_seg_add(&wk->path, true, start, cur, tid, state,
				     stage, reason);
}

/* On-CPU time [s, t) of th outside CUDA calls, latest first: inside a GPU
 * ioctl it is the driver's work, named by the ioctl; inside a file read it
 * is storage.io (docs/design.md §4.3: copying, pinning, submitting). */
static void charge_plain(struct walk *wk, const struct cp_thread *th, __u64 s,
			 __u64 t)
{
	size_t i = cp_ioctls_before(th, t), j = cp_fileios_before(th, t);
	const struct cp_ioctl *io;
	const struct cp_fileio *fi;
	char name[40], reason[32];
	__u64 a, b;
	__u8 stage;

	while (!wk->err) {
		io = i && th->ioctls[i - 1].end > s ? &th->ioctls[i - 1] : NULL;
		fi = j && th->fileios[j - 1].end > s ? &th->fileios[j - 1] :
						       NULL;
		/* a thread's syscalls are disjoint: the later one first */
		if (io && (!fi || io->start > fi->start)) {
			a = io->start;
			b = io->end;
			cp_ioctl_name(wk->cp, io, name, sizeof(name));
			cp_label(reason, sizeof(reason), "ioctl", name);
			stage = TT_ST_CPU;
			i--;
		} else if (fi) {
			a = fi->start;
			b = fi->end;
			cp_fileio_name(fi, reason, sizeof(reason));
			stage = TT_ST_STORAGE;
			j--;
		} else {
			break;
		}
		a = a > s ? a : s;
		b = b < t ? b : t;
		if (a >= b)
			continue;
		cp_charge(wk, b, t, th->tid, TT_CP_RUNNING, TT_ST_CPU,
			  "on-cpu");
		cp_charge(wk, a, b, th->tid, TT_CP_RUNNING, stage, reason);
		t = a;
	}
	cp_charge(wk, s, t, th->tid, TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
}

/* The launches of th that end after s and come right before index i
 * (exclusive), each less than LAUNCH_GAP_NS before the next, with no other
 * call or ioctl between them: how many. */
static size_t launch_run(const struct cp_thread *th, size_t i, __u64 s)
{
	const struct cp_call *c, *next;
	size_t j = i;

	while (j > 0) {
		c = &th->calls[j - 1];
		next = j < i ? &th->calls[j] : NULL;
		if (!cp_is_launch(c) || c->end <= s ||
		    (next && (next->start - c->end >= LAUNCH_GAP_NS ||
			      cp_ioctls_before(th, next->start) !=
				      cp_ioctls_before(th, c->end))))
			break;
		j--;
	}
	return i - j;
}

/* On-CPU time [s, t) of th, latest first: inside a sync call it waits for
 * the GPU (spin-wait), inside a launch it is launch overhead. A run of
 * LAUNCH_RUN back-to-back launches or more (an eager framework's forward
 * pass) is one CPU segment "launch xN fn", the time between them included:
 * a path of thousands of alternating pieces says less and costs more. */
static void charge_running(struct walk *wk, const struct cp_thread *th, __u64 s,
			   __u64 t)
{
	char name[40], what[32], reason[32];
	size_t i = cp_calls_before(th, t), m;
	__u64 a, b;

	while (i > 0 && th->calls[i - 1].end > s && !wk->err) {
		const struct cp_call *c = &th->calls[i - 1];

		if (c->cls != TT_CUDA_SYNC && !cp_is_launch(c)) {
			i--;
			continue;
		}
		m = cp_is_launch(c) ? launch_run(th, i, s) : 1;
		if (m < LAUNCH_RUN)
			m = 1;
		a = th->calls[i - m].start > s ? th->calls[i - m].start : s;
		b = c->end < t ? c->end : t;
		charge_plain(wk, th, b, t);
		cp_cuda_fn_name(c->fn, name, sizeof(name));
		if (m > 1)
			snprintf(what, sizeof(what), "launch x%zu", m);
		else
			snprintf(what, sizeof(what), "%s",
				 c->cls == TT_CUDA_SYNC ? "sync" : "launch");
		cp_label(reason, sizeof(reason), what, name);
		cp_charge(wk, a, b, th->tid, TT_CP_RUNNING,
			  c->cls == TT_CUDA_SYNC ? TT_ST_GPU : TT_ST_CPU,
			  reason);
		t = a;
		i -= m;
	}
	charge_plain(wk, th, s, t);
}

/* [lo, hi) of the path waited on a runtime's lock: counted once, however
 * the walk reaches it (the walk goes back in time, so below gil_low). */
void cp_count_gil(struct walk *wk, __u64 lo, __u64 hi)
{
	if (wk->gil_low && hi > wk->gil_low)
		hi = wk->gil_low;
	if (lo >= hi)
		return;
	wk->gil_ns += hi - lo;
	wk->gil_low = lo;
}

/* [s, t) of th, in record rec's state, latest first. */
void cp_charge_rec(struct walk *wk, const struct cp_thread *th,
		   const struct cp_rec *rec, __u64 s, __u64 t)
{
	char reason[32];
	__u8 stage;

	switch (rec->state) {
	case REC_RUNNING:
		charge_running(wk, th, s, t);
		break;
	case REC_RUNNABLE:
		cp_charge(wk, s, t, th->tid, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			  "runqueue");
		break;
	default:
		stage = cp_block_judge(wk->cp, th, rec, reason, sizeof(reason));
		cp_charge(wk, s, t, th->tid, TT_CP_BLOCKED, stage, reason);
		if (cp_block_is_runtime(wk->cp, th, rec))
			cp_count_gil(wk, s, t);
		break;
	}
}

/* th's records over [lo, t), latest first, k the one holding t: a busy
 * reader's own work while data written for it waited for its read. */
void cp_charge_span(struct walk *wk, const struct cp_thread *th, long k,
		    __u64 lo, __u64 t)
{
	__u64 s;

	for (; k >= 0 && t > lo; k--, t = s) {
		s = th->recs[k].ts > lo ? th->recs[k].ts : lo;
		cp_charge_rec(wk, th, &th->recs[k], s, t);
	}
}
