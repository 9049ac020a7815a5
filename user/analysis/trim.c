// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Trimming the thread timelines (docs/design.md §3.5): what no open request
 * can still reach goes, and every index into what is left moves down.
 */
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

/* The most state records held at once: at a trim, or now. */
static __u64 held_max(const struct tt_critpath *cp)
{
	__u64 held = cp->intervals - cp->recs_dropped;

	return held > cp->held_max ? held : cp->held_max;
}

void cp_drop_front(void **v, size_t *n, size_t *cap, size_t k, size_t size)
{
	void *p;

	if (!k)
		return;
	*n -= k;
	memmove(*v, (char *)*v + k * size, *n * size);
	if (!cap || *cap < 1024 || *n > *cap / 4)
		return;
	p = realloc(*v, (*n * 2 + 64) * size);
	if (p) {
		*v = p;
		*cap = *n * 2 + 64;
	}
}

void cp_drop_front_release(void **v, size_t *n, size_t *cap, size_t k,
			   size_t size)
{
	cp_drop_front(v, n, cap, k, size);
	if (!*n && *cap) {
		free(*v);
		*v = NULL;
		*cap = 0;
	}
}

/* How many of th's wakes idx[0..n) (in time order) came before t. */
static size_t wakes_before(const struct tt_critpath *cp, const __u32 *idx,
			   size_t n, __u64 t)
{
	size_t k = 0;

	while (k < n && cp->wakes[idx[k]].ts < t)
		k++;
	return k;
}

/* How many of n intervals of size size, sorted and disjoint (start, then
 * end, at offset 0), end before t. */
static size_t ended_before(const void *v, size_t n, size_t size, __u64 t)
{
	__u64 end;
	size_t k = 0;

	for (; k < n; k++) {
		memcpy(&end, (const char *)v + k * size + sizeof(__u64),
		       sizeof(end));
		if (end >= t)
			break;
	}
	return k;
}

static void min_u32(__u32 *m, __u32 v)
{
	if (v != NONE32 && v < *m)
		*m = v;
}

/* th's sorted times or records timed at their start, arr (reads, takes,
 * ...), from before t0 go (trimming: nothing earlier is walked) */
#define DROP_STARTED(th, arr, t0)                                          \
	cp_drop_front((void **)&(th)->arr, &(th)->n##arr, &(th)->cap##arr, \
		      cp_starts_before((th)->arr, (th)->n##arr,            \
				       sizeof(*(th)->arr), t0),            \
		      sizeof(*(th)->arr))

/* th's sorted, disjoint intervals arr (calls, ioctls, ...) that ended
 * before t0 go */
#define DROP_ENDED(th, arr, t0)                                            \
	cp_drop_front((void **)&(th)->arr, &(th)->n##arr, &(th)->cap##arr, \
		      ended_before((th)->arr, (th)->n##arr,                \
				   sizeof(*(th)->arr), t0),                \
		      sizeof(*(th)->arr))

/* th's part of what is left: its records from before t but the last
 * CP_TRIM_KEEP, its wakes from before t, its calls that ended before the
 * earliest record left. */
static void trim_thread(struct tt_critpath *cp, struct cp_thread *th, __u64 t)
{
	size_t k = cp_starts_before(th->recs, th->nrecs, sizeof(*th->recs), t);
	__u64 t0;

	k = k > CP_TRIM_KEEP ? k - CP_TRIM_KEEP : 0;
	cp_drop_front((void **)&th->recs, &th->nrecs, &th->caprecs, k,
		      sizeof(*th->recs));
	cp->recs_dropped += k;
	t0 = th->nrecs && th->recs[0].ts < t ? th->recs[0].ts : t;
	cp_drop_front((void **)&th->wout, &th->nwout, &th->capwout,
		      wakes_before(cp, th->wout, th->nwout, t),
		      sizeof(*th->wout));
	cp_drop_front((void **)&th->cand, &th->ncand, NULL,
		      wakes_before(cp, th->cand, th->ncand, t),
		      sizeof(*th->cand));
	DROP_ENDED(th, calls, t0);
	DROP_ENDED(th, ioctls, t0);
	DROP_ENDED(th, fileios, t0);
	DROP_ENDED(th, steals, t0);
	/* a take names a request by a send after its read: none now */
	DROP_STARTED(th, takes, t0);
	DROP_STARTED(th, dreads, t0);
	DROP_STARTED(th, preads, t0);
	DROP_STARTED(th, msends, t0);
	DROP_STARTED(th, polls, t0);
	DROP_STARTED(th, arrs, t0);
	DROP_STARTED(th, freads, t0);
}

/* The wakes and blocks before the first one still referred to go, and
 * every reference moves down: a timeline's records, its wakes, the wake
 * pending on it, a wake's block. */
static void trim_shared(struct tt_critpath *cp)
{
	__u32 wmin = (__u32)cp->nwakes, bmin = (__u32)cp->nblocks;
	struct cp_thread *th;
	size_t i, k;

	for (i = 0; i < cp->nthreads; i++) {
		th = cp->threads[i];
		min_u32(&wmin, th->pending);
		if (th->nwout)
			min_u32(&wmin, th->wout[0]);
		if (th->ncand)
			min_u32(&wmin, th->cand[0]);
		for (k = 0; k < th->nrecs; k++) {
			if (th->recs[k].state == REC_BLOCKED)
				min_u32(&bmin, th->recs[k].info);
			else if (th->recs[k].state == REC_RUNNABLE)
				min_u32(&wmin, th->recs[k].info);
		}
	}
	for (k = wmin; k < cp->nwakes; k++)
		min_u32(&bmin, cp->wakes[k].block);
	for (i = 0; i < cp->nthreads; i++) {
		th = cp->threads[i];
		if (th->pending != NONE32)
			th->pending -= wmin;
		for (k = 0; k < th->nwout; k++)
			th->wout[k] -= wmin;
		for (k = 0; k < th->ncand; k++)
			th->cand[k] -= wmin;
		for (k = 0; k < th->nrecs; k++) {
			if (th->recs[k].info == NONE32)
				continue;
			if (th->recs[k].state == REC_BLOCKED)
				th->recs[k].info -= bmin;
			else if (th->recs[k].state == REC_RUNNABLE)
				th->recs[k].info -= wmin;
		}
	}
	cp_drop_front((void **)&cp->wakes, &cp->nwakes, &cp->capwakes, wmin,
		      sizeof(*cp->wakes));
	cp->wakes_dropped += wmin;
	for (k = 0; k < cp->nwakes; k++)
		if (cp->wakes[k].block != NONE32)
			cp->wakes[k].block -= bmin;
	cp_drop_front((void **)&cp->blocks, &cp->nblocks, &cp->capblocks, bmin,
		      sizeof(*cp->blocks));
}

void tt_critpath_trim(struct tt_critpath *cp, __u64 t)
{
	size_t i;

	cp->held_max = held_max(cp);
	for (i = 0; i < cp->nthreads; i++)
		trim_thread(cp, cp->threads[i], t);
	trim_shared(cp);
	cp_chans_trim(cp, t);
	cp_pipes_trim(cp, t);
}

void tt_critpath_stats(const struct tt_critpath *cp,
		       struct tt_critpath_stats *st)
{
	*st = (struct tt_critpath_stats){
		.events = cp->events,
		.threads = cp->nthreads,
		.intervals = cp->intervals,
		.wakes = cp->nwakes + cp->wakes_dropped,
		.held = cp->intervals - cp->recs_dropped,
		.held_max = held_max(cp),
		.lost_windows = cp->nlost,
		.lock_words = cp->lock_words,
		.gpu_calls = cp->gpu_calls,
		.ioctls = cp->ioctls,
		.fileios = cp->fileios,
		.first_ts = cp->first_ts,
		.last_ts = cp->last_ts,
		.missed_ins = cp->missed_ins,
		.marks = cp->nmarks,
		.marks_unbound = cp->marks_unbound,
		.marks_outside = cp->marks_outside,
	};
}
