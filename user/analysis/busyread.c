// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A busy reader's data (docs/design.md §4.4, "A busy reader's data"): a
 * relay that read data written for it while it waited for something else
 * (the interpreter lock) or ran. Its latest read names the data it took:
 * a pipe read by its bytes (pipefifo.c), another read the oldest data of
 * its kind (an eventfd's, a socket's) that came since the thread's read
 * of that kind before; the walk moves to that data's writer at the write.
 * And a relay's drain: its hand-offs of what one wake brought, one item at
 * a time, are not an engine's steps (cp_relay_drain()).
 */
#include "cp_internal.h"

/* The kind of the data whose arrival made th's runnable record m, a data
 * record (REC_F_DATA). */
static __u32 data_kind(const struct tt_critpath *cp, const struct cp_thread *th,
		       long m)
{
	const struct cp_wake *w = &cp->wakes[th->recs[m].info];
	size_t j =
		cp_starts_before(th->arrs, th->narrs, sizeof(*th->arrs), w->ts);

	for (; j < th->narrs && th->arrs[j].ts == w->ts; j++)
		if (th->arrs[j].writer == w->waker_tid)
			return th->arrs[j].kind;
	return 0;
}

/* The oldest data th took with its read i: the first of its arrivals of
 * that read's kind since its read of that kind before; narrs if none. An
 * eventfd's read takes no socket's data: ZMQ's I/O thread reads its
 * mailbox's eventfd and its peers' sockets in turn. */
static size_t data_taken(const struct cp_thread *th, size_t i)
{
	__u32 kind = th->dreads[i].kind;
	long p = (long)i - 1;
	size_t j;

	while (p >= 0 && th->dreads[p].kind != kind)
		p--;
	j = cp_starts_before(th->arrs, th->narrs, sizeof(*th->arrs),
			     p >= 0 ? th->dreads[p].ts + 1 : 0);
	while (j < th->narrs && th->arrs[j].kind != kind)
		j++;
	return j;
}

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
		*d = read_in(th->dreads, th->ndreads, sizeof(*th->dreads), s,
			     t);
		*f = read_in(th->freads, th->nfreads, sizeof(*th->freads), s,
			     t);
		if (*d == th->ndreads && *f == th->nfreads)
			continue;
		if (*d < th->ndreads && *f < th->nfreads &&
		    th->dreads[*d].ts > th->freads[*f].ts)
			*f = th->nfreads;
		else if (*f < th->nfreads)
			*d = th->ndreads;
		return true;
	}
	return false;
}

/* th's time in [s, t) on a CPU, and with runnable waiting for one too */
static __u64 time_in(const struct cp_thread *th, __u64 s, __u64 t,
		     bool runnable)
{
	long k = cp_rec_before(th, t);
	__u64 sum = 0, hi = t, lo;

	for (; k >= 0 && hi > s; hi = th->recs[k--].ts) {
		lo = th->recs[k].ts > s ? th->recs[k].ts : s;
		if (th->recs[k].state == REC_RUNNING ||
		    (runnable && th->recs[k].state == REC_RUNNABLE))
			sum += hi - lo;
	}
	return sum;
}

__u64 cp_cpu_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	return time_in(th, s, t, false);
}

__u64 cp_busy_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	return time_in(th, s, t, true);
}

bool cp_busy_read(const struct tt_critpath *cp, const struct cp_thread *th,
		  long k, __u64 lo, __u64 t, __u64 t_out, __u64 cpu_limit,
		  __u64 *r, const struct cp_arrival **a)
{
	const struct cp_arrival *arr;
	const struct cp_wake *w;
	size_t i, f, j;
	__u64 read;
	__u32 kind;
	long m, first;

	if (!read_past_gil(cp, th, k, lo, t, &i, &f))
		return false;
	read = f < th->nfreads ? th->freads[f].ts : th->dreads[i].ts;
	kind = f < th->nfreads ? TT_IPC_PIPE : th->dreads[i].kind;
	/* a relay's: what computes after its input read is its own work */
	if (cp_cpu_in(th, read, t_out) >= cpu_limit)
		return false;
	if (f < th->nfreads) {
		/* a pipe read names the write it took */
		arr = &th->freads[f].w;
	} else {
		/* a read takes the oldest data first */
		j = data_taken(th, i);
		if (j >= th->narrs)
			return false;
		arr = &th->arrs[j];
	}
	if (arr->ts >= read || arr->ts <= lo)
		return false;
	/* a wakeup by its writer from then on: the walk follows that, but
	 * not past another's later data of another kind to it awake, which
	 * the walk would take for the end of its wait though the read did
	 * not take it; more data its writer wrote to it awake queued behind
	 * the first */
	for (m = k, first = cp_rec_before(th, arr->ts); m >= 0 && m >= first;
	     m--) {
		w = th->recs[m].state == REC_RUNNABLE &&
				    th->recs[m].info != NONE32 ?
			    &cp->wakes[th->recs[m].info] :
			    NULL;
		if (!w)
			continue;
		if (th->recs[m].flags & REC_F_DATA) {
			if (w->waker_tid != arr->writer &&
			    data_kind(cp, th, m) != kind)
				break;
		} else if (w->waker_tid == arr->writer && !w->lock) {
			return false;
		}
	}
	*r = read;
	*a = arr;
	return true;
}

/*
 * c handed off to another request at tb and to this one at tj (not through
 * a lock), both after the wake that ended its last wait for anything but a
 * lock, with less than DRAIN_CPU_NS of its CPU since that wake: a relay
 * draining what the wake brought one item at a time (an executor thread
 * reading a response pipe a token a call, a queue's feeder writing it), its
 * items split past a burst gap by a busy machine. tb ends no step of an
 * engine: the wake leads to it. How the CPU falls between the items is no
 * test: a feeder switched out after its first token took 615 us for the next.
 */
bool cp_relay_drain(const struct tt_critpath *cp, const struct cp_thread *c,
		    __u64 tb, __u64 tj)
{
	const struct cp_rec *r;
	__u64 run = 0, hi = tj;
	bool past_tb = false;
	long k;

	for (k = cp_rec_before(c, tj); k >= 0; hi = r->ts, k--) {
		r = &c->recs[k];
		if (r->state == REC_BLOCKED)
			return false;
		/* a wait for a lock (the interpreter's, to run the code
		 * that hands the items on) is part of the drain */
		if (r->state == REC_RUNNABLE && r->info != NONE32 &&
		    cp->wakes[r->info].lock && k > 0 &&
		    c->recs[k - 1].state == REC_BLOCKED) {
			r = &c->recs[--k];
			continue;
		}
		if (r->state == REC_RUNNING) {
			past_tb = past_tb || r->ts <= tb;
			run += hi - r->ts;
			if (run >= DRAIN_CPU_NS)
				return false;
		} else if (r->info != NONE32) {
			return r->ts < tb && past_tb &&
			       !cp->wakes[r->info].lock &&
			       cp_wake_followed(cp, c, k, tj);
		}
	}
	return false;
}
