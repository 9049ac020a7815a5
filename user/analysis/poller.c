// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A poller in front of the loop (docs/design.md §4.4, "A poller in front
 * of the loop"): gRPC's C core reads a call's bytes in a thread of its own
 * and hands the call to the event loop that runs the servicer (grpc.aio:
 * a write to the loop's socket pair), which answers it. The poller only
 * reads; the loop is where the request is taken up, as if it had read it
 * itself: the rules read the loop. And the loop's own turn:
 * its wait for the poller's answer (cp_block_asked()), its step run by a
 * callee (cp_loop_callee()).
 */
#include "cp_internal.h"
#include "waits.h"
#include "golift.h"

/* The poller's hand-off follows its read at once: it parses the frames
 * and writes one byte (136 us on a quiet machine, a PING's ACK between) */
#define POLLER_HANDOFF_NS (1000ull * 1000)

/* tid wrote the first token of none of the n requests */
static bool writes_none(const struct tt_cp_request *rqs, size_t n, __u32 tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rqs[i].writer_tid == tid)
			return false;
	return true;
}

/* th's first arrival of writer's data in [lo, hi]; 0 if none */
static __u64 data_from(const struct cp_thread *th, __u32 writer, __u64 lo,
		       __u64 hi)
{
	size_t j = cp_starts_before(th->arrs, th->narrs, sizeof(*th->arrs), lo);

	for (; j < th->narrs && th->arrs[j].ts <= hi; j++)
		if (th->arrs[j].writer == writer)
			return th->arrs[j].ts;
	return 0;
}

/* th started a thread in (s, t) */
static bool started_thread(const struct tt_critpath *cp,
			   const struct cp_thread *th, __u64 s, __u64 t)
{
	size_t a = cp_wake_at(cp, th->wout, th->nwout, s + 1);

	for (; a < th->nwout && cp->wakes[th->wout[a]].ts < t; a++)
		if (cp->wakes[th->wout[a]].spawn)
			return true;
	return false;
}

/* Whether a poller ever wrote to a loop, for the last pair asked: a
 * server's requests have one or a few (a whole scan each would be the
 * requests times the loop's arrivals) */
struct wrote_memo {
	__u32 poller, loop;
	bool wrote;
};

static bool ever_wrote(const struct cp_thread *poller,
		       const struct cp_thread *loop, struct wrote_memo *memo)
{
	if (memo->poller == poller->tid && memo->loop == loop->tid)
		return memo->wrote;
	memo->poller = poller->tid;
	memo->loop = loop->tid;
	memo->wrote = data_from(loop, poller->tid, 0, UINT64_MAX) != 0;
	return memo->wrote;
}

/* The poller's data for the loop (its write to the loop's socket pair,
 * which woke the loop or found it running) within POLLER_HANDOFF_NS of its
 * read of rq; the read itself when it wrote none then (the loop had its
 * earlier notice still unread: one write stands for all) but did write to
 * the loop at some time; 0 if it never did (no poller of this loop) */
static __u64 poller_handoff(const struct tt_critpath *cp,
			    const struct cp_thread *poller,
			    const struct cp_thread *loop,
			    const struct tt_cp_request *rq, bool go,
			    struct wrote_memo *memo)
{
	__u64 t = data_from(loop, poller->tid, rq->t_read,
			    rq->t_read + POLLER_HANDOFF_NS);
	const struct cp_wake *w;
	size_t a;

	if (t)
		return t;
	/* or its wake of a pool's thread that starts the request's own
	 * thread (gRPC's synchronous server, a generate() thread each) */
	for (a = cp_wake_at(cp, poller->cand, poller->ncand, rq->t_read);
	     a < poller->ncand; a++) {
		w = &cp->wakes[poller->cand[a]];
		if (w->ts > rq->t_read + POLLER_HANDOFF_NS)
			break;
		if (w->target_tid == loop->tid &&
		    (go || started_thread(cp, loop, w->ts, rq->t_first_write)))
			return w->ts;
	}
	return ever_wrote(poller, loop, memo) ? rq->t_read : 0;
}

/* The loop's first read of its socket pair at t or later (what it took
 * the notice with: it runs from there); t when none within
 * POLLER_HANDOFF_NS */
static __u64 loop_took(const struct cp_thread *loop, __u64 t)
{
	size_t j = cp_starts_before(loop->dreads, loop->ndreads,
				    sizeof(*loop->dreads), t);

	return j < loop->ndreads &&
			       loop->dreads[j].ts <= t + POLLER_HANDOFF_NS ?
		       loop->dreads[j].ts :
		       t;
}

/* A goroutine's first run from t on (t itself when it ran then), where it
 * took up what it was handed (no socket pair to read); t when none */
static __u64 go_ran(const struct cp_thread *g, __u64 t)
{
	long k = cp_rec_before(g, t);

	if (k >= 0 && g->recs[k].state == REC_RUNNING)
		return t;
	/* the records after k start at t or later */
	while ((size_t)++k < g->nrecs)
		if (g->recs[k].state == REC_RUNNING)
			return g->recs[k].ts;
	return t;
}

/* Goroutine g exited in [from, to): a goroutine that ran on its g then is
 * not the one that ran on it at to (Go's HTTP/2 starts one per frame) */
static bool go_exited(const struct cp_thread *g, __u64 from, __u64 to)
{
	long k = cp_rec_before(g, from);

	for (k = k < 0 ? 0 : k; (size_t)k < g->nrecs && g->recs[k].ts < to; k++)
		if (g->recs[k].flags & REC_F_EXITED)
			return true;
	return false;
}

/* Goroutine g was not parked at t (it ran, or waited for a CPU): it was
 * still answering the connection's last request when the background
 * goroutine read this one, and took it from the buffer when it got there,
 * woken by nobody */
static bool go_busy(const struct cp_thread *g, __u64 t)
{
	long k = cp_rec_before(g, t);

	return k >= 0 && g->recs[k].state != REC_BLOCKED;
}

void cp_poller_rebase(const struct tt_critpath *cp, struct tt_cp_request *rqs,
		      size_t n)
{
	const struct cp_thread *poller, *loop;
	struct tt_cp_request *rq;
	__u32 known = 0; /* a poller found to write no token */
	struct wrote_memo memo = { 0 };
	__u64 t;
	size_t i;
	bool go;

	for (i = 0; i < n; i++) {
		rq = &rqs[i];
		if (!rq->t_read || !rq->reader_tid || !rq->writer_tid ||
		    rq->reader_tid == rq->writer_tid)
			continue;
		poller = cp_thread_find(cp, rq->reader_tid);
		loop = cp_thread_find(cp, rq->writer_tid);
		if (!poller || !loop || poller->tgid != loop->tgid)
			continue;
		/* goroutines: Go's HTTP server reads in a background
		 * goroutine while a handler runs, and wakes the connection's
		 * own (a sync.Cond) when it read the next request (a TLS
		 * record: all of it), or finds it busy still */
		go = poller->tid >= TT_GO_TID_BASE &&
		     loop->tid >= TT_GO_TID_BASE;
		if (go && go_exited(loop, rq->t_read, rq->t_first_write))
			continue;
		t = poller_handoff(cp, poller, loop, rq, go, &memo);
		if (!t && go && go_busy(loop, rq->t_read))
			t = rq->t_read;
		/* a goroutine's name is its g's, which Go reuses: one that
		 * wrote tokens may read for another later */
		if (!t || t >= rq->t_first_write ||
		    (poller->tid != known && poller->tid < TT_GO_TID_BASE &&
		     !writes_none(rqs, n, poller->tid)))
			continue;
		known = poller->tid;
		t = loop->tid >= TT_GO_TID_BASE ? go_ran(loop, t) :
						  loop_took(loop, t);
		if (t >= rq->t_first_write)
			continue;
		rq->reader_tid = rq->writer_tid;
		rq->t_read = t;
	}
}

/* The block's start at most this after the reader's ask: it asked, then
 * waited for the answer */
#define ASK_WAIT_NS (100ull * 1000)

bool cp_block_asked(const struct tt_critpath *cp, const struct cp_thread *th,
		    size_t k)
{
	const struct cp_rec *next = k + 1 < th->nrecs ? &th->recs[k + 1] : NULL;
	const struct cp_thread *x;
	const struct cp_wake *w;
	__u64 block = th->recs[k].ts;

	if (!next || next->state != REC_RUNNABLE || next->info == NONE32)
		return false;
	w = &cp->wakes[next->info];
	if (w->ctx != CTX_PROCESS || w->waker_tid == th->tid ||
	    !cp_nr_send(w->syscall) || w->ts > block + POLLER_HANDOFF_NS)
		return false;
	x = cp_thread_find(cp, w->waker_tid);
	return x &&
	       data_from(x, th->tid,
			 block > ASK_WAIT_NS ? block - ASK_WAIT_NS : 0, block);
}

/* th's first wait after t, but for the GIL's; UINT64_MAX if none */
static __u64 next_block(const struct tt_critpath *cp,
			const struct cp_thread *th, __u64 t)
{
	size_t k = (size_t)(cp_rec_before(th, t) + 1);

	for (; k < th->nrecs; k++)
		if (th->recs[k].ts > t && th->recs[k].state == REC_BLOCKED &&
		    !cp_block_is_runtime(cp, th, &th->recs[k]))
			return th->recs[k].ts;
	return UINT64_MAX;
}

/* A callee's CPU from its answer to its next wait: going back to wait (a
 * second step found queued when it was preempted took 0.7 ms beside two
 * CPU hogs); a decode step of its own takes more */
#define CALLEE_AFTER_NS 1000000ULL

bool cp_loop_callee(const struct walk *wk, const struct cp_thread *c, __u64 t)
{
	const struct tt_critpath *cp = wk->cp;
	const struct cp_thread *loop = wk->reader;
	__u64 end = next_block(cp, c, t), answer;

	/* the loop's step ends its turn (it waits for the step's result); a
	 * handler's put that wakes an engine thread, which takes the request
	 * up when it runs, comes amid the turn's other handlers */
	if (!loop || end == UINT64_MAX ||
	    cp_cpu_in(loop, t, next_block(cp, loop, t)) >= RELAY_CPU_NS)
		return false;
	/* the step's result, then the wait for the next: a worker that goes
	 * on computing the request's tokens (an executor holding the model
	 * for the whole request: tools/scenarios' pool) is no callee */
	answer = data_from(loop, c->tid, t, end);
	return answer && cp_cpu_in(c, answer, end) < CALLEE_AFTER_NS;
}
