// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A request's time in the kernel before its read (docs/design.md §4.7):
 * network.in, the reader's waits to run, and its work for other requests
 * (scheduler.backlog).
 */
#include <stdio.h>
#include "cp_internal.h"

/* More runnable slices than this in one reader phase are shown as one
 * segment: an event loop serving N connections is preempted O(N) times
 * while a request waits, and N requests would keep O(N^2) segments. */
#define READER_SLICES_MAX 32

/* One piece of the reader's time between the request's last bytes and its
 * read that is not network.in: a wait to run, or the reader busy. */
struct reader_piece {
	__u64 s, e;
	__u8 stage; /* TT_ST_RUNQUEUE or TT_ST_BACKLOG */
};

struct reader_iter {
	const struct walk *wk;
	const struct cp_thread *th;
	long k; /* the record the next piece is looked for in */
	__u64 t; /* ... from this time on */
	bool woken; /* the reader was woken for this request: it came */
};

/* Runnable record k of the reader is its wait to run for this request:
 * woken from a block by the network (a softirq's or interrupt's wake)
 * after the request's first byte, no other request of the reader having
 * arrived since (whose bytes the wake could be for). */
static bool own_wake(const struct walk *wk, const struct cp_thread *th, long k)
{
	const struct cp_rec *rec = &th->recs[k];
	const struct cp_wake *w;

	if (rec->info == NONE32 || (rec->flags & REC_F_PREEMPT))
		return false;
	w = &wk->cp->wakes[rec->info];
	return w->ctx != CTX_PROCESS && w->ts >= wk->a &&
	       !cp_rq_other_arrived(wk->ix, th->tid, wk->ri, wk->a, rec->ts);
}

/*
 * The next piece of [from, t_read) (from: the last bytes' arrival) that is
 * not network.in, in time order; false when none is left. Until it is
 * woken for this request, a reader that serves another request alive then
 * is busy (backlog: the request whole in the kernel, its reader on other
 * work), whatever its state; its other runnable time is its wait to run
 * (runqueue).
 */
static bool reader_next(struct reader_iter *it, struct reader_piece *p)
{
	const struct walk *wk = it->wk;
	const struct cp_thread *th = it->th;
	const struct cp_rec *rec;
	__u64 s, e, until;

	while (th && (size_t)it->k < th->nrecs && th->recs[it->k].ts < wk->r) {
		rec = &th->recs[it->k];
		s = rec->ts > it->t ? rec->ts : it->t;
		e = (size_t)it->k + 1 < th->nrecs ? th->recs[it->k + 1].ts :
						    wk->r;
		if (e > wk->r)
			e = wk->r;
		if (rec->state == REC_RUNNABLE && !it->woken && s < e &&
		    own_wake(wk, th, it->k))
			it->woken = true;
		until = it->woken || s >= e ?
				0 :
				cp_rq_other_until(wk->ix, th->tid, s, wk->ri);
		if (until) {
			/* the rest of the record, if any, is looked at again */
			*p = (struct reader_piece){ s, until < e ? until : e,
						    TT_ST_BACKLOG };
			it->t = p->e;
			return true;
		}
		if (rec->state == REC_RUNNABLE && s < e) {
			*p = (struct reader_piece){ s, e, TT_ST_RUNQUEUE };
			it->t = e;
			return true;
		}
		/* on to the next read of another request in this run, if any */
		it->t = it->woken || s >= e ?
				0 :
				cp_rq_other_read(wk->ix, th->tid, wk->ri, s, e);
		if (!it->t) {
			it->t = e;
			it->k++;
		}
	}
	return false;
}

static void reader_iter_init(struct reader_iter *it, const struct walk *wk,
			     __u64 from)
{
	const struct cp_thread *th = wk->reader;

	*it = (struct reader_iter){ .wk = wk, .th = th, .t = from };
	if (th) {
		it->k = cp_rec_before(th, from + 1);
		if (it->k < 0)
			it->k = 0;
	}
}

/*
 * [t_arrive, t_read): network.in, less the reader's time after the last
 * bytes came (before them it waited for the upload anyway) that reader_next()
 * says is its wait to run or its work for other requests.
 */
int cp_reader_phase(const struct walk *wk, struct segvec *out)
{
	__u32 tid = wk->rq->reader_tid;
	__u64 t = wk->a, last, sum[TT_ST_MAX] = { 0 };
	struct reader_piece p, prev = { 0 };
	struct reader_iter it;
	size_t pieces = 0, slices = 0;
	char why[48];
	int err = 0;

	last = wk->rq->t_last_arrive ? wk->rq->t_last_arrive : wk->a;
	last = last < wk->a ? wk->a : last > wk->r ? wk->r : last;
	/* pieces: the segments they make, a piece going on from one alike
	 * being drawn with it */
	for (reader_iter_init(&it, wk, last); reader_next(&it, &p); prev = p) {
		sum[p.stage] += p.e - p.s;
		slices += p.stage == TT_ST_RUNQUEUE;
		pieces += p.s != prev.e || p.stage != prev.stage;
	}
	if (pieces > READER_SLICES_MAX) {
		/* the sums stay exact; the pieces are drawn at the end */
		t = wk->r - sum[TT_ST_BACKLOG] - sum[TT_ST_RUNQUEUE];
		snprintf(why, sizeof(why), "runqueue (%zu slices)", slices);
		err = cp_seg_add(out, false, wk->a, t, tid, TT_CP_PHASE,
				 TT_ST_NET_IN, "request in");
		if (!err)
			err = cp_seg_add(out, false, t, t + sum[TT_ST_BACKLOG],
					 tid, TT_CP_PHASE, TT_ST_BACKLOG,
					 "reader busy");
		if (!err)
			err = cp_seg_add(out, false, t + sum[TT_ST_BACKLOG],
					 wk->r, tid, TT_CP_RUNNABLE,
					 TT_ST_RUNQUEUE, why);
		return err;
	}
	for (reader_iter_init(&it, wk, last); !err && reader_next(&it, &p);) {
		err = cp_seg_add(out, false, t, p.s, tid, TT_CP_PHASE,
				 TT_ST_NET_IN, "request in");
		if (!err && p.stage == TT_ST_BACKLOG)
			err = cp_seg_add(out, false, p.s, p.e, tid, TT_CP_PHASE,
					 TT_ST_BACKLOG, "reader busy");
		else if (!err)
			err = cp_seg_add(out, false, p.s, p.e, tid,
					 TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
					 "runqueue");
		t = p.e;
	}
	if (!err)
		err = cp_seg_add(out, false, t, wk->r, tid, TT_CP_PHASE,
				 TT_ST_NET_IN, "request in");
	return err;
}
