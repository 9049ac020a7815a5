// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A busy reader's data (docs/design.md §4.4, "A busy reader's data"): a
 * relay that read data written for it while it waited for something else
 * (the interpreter lock) or ran. Its latest read names the data it took:
 * a pipe read by its bytes (pipefifo.c), another read the oldest data that
 * came since the thread's read before; the walk moves to that data's
 * writer at the write.
 */
#include "cp_internal.h"

/* Record k of th is a wait for the interpreter lock, or for a CPU with no
 * wake or one through that lock: a busy thread's, not a hand-off to it. */
static bool gil_bound(const struct tt_critpath *cp, const struct cp_thread *th,
		      long k)
{
	const struct cp_rec *rec = &th->recs[k];
	const struct cp_rec *next = k + 1 < (long)th->nrecs ? rec + 1 : NULL;

	if (rec->state == REC_BLOCKED)
		return next && next->state == REC_RUNNABLE &&
		       next->info != NONE32 &&
		       cp->wakes[next->info].lock == CP_LOCK_RUNTIME;
	return rec->state == REC_RUNNABLE &&
	       (rec->info == NONE32 ||
		cp->wakes[rec->info].lock == CP_LOCK_RUNTIME);
}

/* The latest of th's reads of sorted array v (n elements, stride bytes
 * apart, each from its time) in (s, t], or n. */
static size_t read_in(const void *v, size_t n, size_t stride, __u64 s, __u64 t)
{
	size_t i = cp_starts_before(v, n, stride, t + 1);

	return i && *(const __u64 *)((const char *)v + (i - 1) * stride) > s ?
		       i - 1 :
		       n;
}

/* th's latest data read in (lo, t], back from record k through its runs
 * and its waits for the interpreter lock only: *d its index in th->dreads
 * or *f in th->freads, the other the array's size (the later when both);
 * false when none. */
static bool read_past_gil(const struct tt_critpath *cp,
			  const struct cp_thread *th, long k, __u64 lo, __u64 t,
			  size_t *d, size_t *f)
{
	__u64 s;

	for (; k >= 0 && t > lo; t = th->recs[k--].ts) {
		if (th->recs[k].state != REC_RUNNING) {
			if (!gil_bound(cp, th, k))
				break;
			continue;
		}
		s = th->recs[k].ts > lo ? th->recs[k].ts : lo;
		*d = read_in(th->dreads, th->ndreads, sizeof(__u64), s, t);
		*f = read_in(th->freads, th->nfreads, sizeof(*th->freads), s,
			     t);
		if (*d == th->ndreads && *f == th->nfreads)
			continue;
		if (*d < th->ndreads && *f < th->nfreads &&
		    th->dreads[*d] > th->freads[*f].ts)
			*f = th->nfreads;
		else if (*f < th->nfreads)
			*d = th->ndreads;
		return true;
	}
	return false;
}

/* th's time on a CPU in [s, t) */
static __u64 cpu_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	long k = cp_rec_before(th, t);
	__u64 cpu = 0, hi = t, lo;

	for (; k >= 0 && hi > s; hi = th->recs[k--].ts) {
		lo = th->recs[k].ts > s ? th->recs[k].ts : s;
		if (th->recs[k].state == REC_RUNNING)
			cpu += hi - lo;
	}
	return cpu;
}

bool cp_busy_read(const struct tt_critpath *cp, const struct cp_thread *th,
		  long k, __u64 lo, __u64 t, __u64 t_out, __u64 *r,
		  const struct cp_arrival **a)
{
	const struct cp_arrival *arr;
	const struct cp_wake *w;
	size_t i, f, j;
	__u64 read;
	long m;

	if (!read_past_gil(cp, th, k, lo, t, &i, &f))
		return false;
	read = f < th->nfreads ? th->freads[f].ts : th->dreads[i];
	/* a relay's: what computes after its input read is its own work */
	if (cpu_in(th, read, t_out) >= RELAY_CPU_NS)
		return false;
	if (f < th->nfreads) {
		/* a pipe read names the write it took */
		arr = &th->freads[f].w;
	} else {
		/* the oldest data since th's read before: a read takes that
		 * first */
		j = cp_starts_before(th->arrs, th->narrs, sizeof(*th->arrs),
				     i ? th->dreads[i - 1] + 1 : 0);
		if (j >= th->narrs)
			return false;
		arr = &th->arrs[j];
	}
	if (arr->ts >= read || arr->ts <= lo)
		return false;
	/* a wakeup by its writer from then on: the walk follows that; more
	 * data it wrote to a reader awake queued behind the first */
	for (m = cp_rec_before(th, arr->ts); m <= k; m++) {
		w = m >= 0 && th->recs[m].state == REC_RUNNABLE &&
				    !(th->recs[m].flags & REC_F_DATA) &&
				    th->recs[m].info != NONE32 ?
			    &cp->wakes[th->recs[m].info] :
			    NULL;
		if (w && w->waker_tid == arr->writer && !w->lock)
			return false;
	}
	*r = read;
	*a = arr;
	return true;
}
