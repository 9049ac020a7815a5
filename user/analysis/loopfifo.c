// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hand-offs in turn (docs/design.md §4.4): a single-threaded event loop
 * (asyncio, Node) reads several requests, then runs their handlers one
 * after the other, each handing its request on with one wake (a ZMQ send's
 * signal to its I/O thread, a worker's notify). The first wake after a
 * request's read is then an earlier request's. In each busy stretch of a
 * reader (until it blocks), its wakes go to the requests it read, in the
 * order it began to read them (turn_key()); a request that writes its
 * first token first gets none. A handler that hands on without a wake
 * (ZMQ signals its I/O thread only when it is idle) leaves the stretch's
 * last requests without one: they are handed on after the stretch's last
 * turn (CP_TURN_AFTER). Reads more than LOOP_BATCH_NS of its CPU apart (to
 * where the later one's request began to be read) are not one batch: the
 * handlers of the earlier ran before the later read (Node runs each at its
 * read; a loop preempted between two reads ran none), and one that got no
 * wake by then takes none later: handed on after the batch's last turn, or
 * with none before that read (CP_TURN_BEFORE); but a CPython loop's reads
 * of what one poll returned are one batch, whatever its CPU between
 * (polled_with()), and those right after the next poll come before the
 * handlers of the batch (aiohttp's, read_at_poll()). Only wakes that hand
 * work on (cp_hands_on) are turns: a runtime's own threads (V8's platform
 * workers) are no handler's hand-off, nor a helper the loop sets to read
 * the answers. A loop that hands messages to ZMQ (record's message probes)
 * has its turns in those sends, one per handler, whether they woke ZMQ's
 * I/O thread or not: then its wakes are not turns (the I/O thread's wake
 * follows a send), and as no turn is missed, neither a block nor a gap
 * between reads ends what the reads wait for (aiohttp reads the next
 * request before it runs the handler of the last). And an engine loop in
 * the reader's own thread: its hand-off of a step to a worker is no
 * request's (cp_loop_step()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "locks.h"
#include "waits.h"

/* fifo[] while computing: a pending request that wrote first */
#define FIFO_GONE 1ULL

/*
 * A busy stretch of the reader ends (it blocks, or its events do), or a
 * batch of its reads: a request it read in it that got no wake was handed
 * on without one, after the last turn (none: no turn). queue[start, tail)
 * are its reads.
 */
static void stretch_end(struct rq_index *ix, const size_t *queue,
			size_t *head, size_t *start, size_t tail, __u64 t_next)
{
	__u64 last = 0, mark;
	size_t q;

	for (q = *start; q < *head; q++)
		if (ix->fifo[queue[q]] != FIFO_GONE &&
		    ix->fifo[queue[q]] > last)
			last = ix->fifo[queue[q]];
	/* after the last turn; with none, before the next batch's read */
	mark = last ? CP_TURN_AFTER | last : t_next ? CP_TURN_BEFORE | t_next : 0;
	for (; mark && *head < tail; (*head)++)
		if (ix->fifo[queue[*head]] != FIFO_GONE)
			ix->fifo[queue[*head]] = mark;
	*head = *start = tail;
}

/*
 * CPython loop th's read at t, after its batch's reads from first to x,
 * came right after the first poll since x, which came right after x: no
 * handler of the batch ran before it. aiohttp runs a batch's handlers only
 * after the second poll, behind the first one's reads; uvicorn after the
 * first, before them (then the read comes after their CPU); uvloop before
 * the first (then the poll comes after their CPU, their hand-offs or
 * headers). "Right after" x: with no more CPU between than a parse of x's
 * request could take (polled_with()'s bound); the read right after the
 * poll: with no more CPU between than from the batch's poll to its first
 * read (a selector's dispatch and a read's copy), or a handler's start, up
 * to a batch's gap (a loop that read its batch long after its last
 * recorded poll tells nothing). Only where the loop's polls were recorded
 * from before first, those that returned nothing too (older recorders left
 * them out): else the first poll seen may be a later one.
 */
static bool read_at_poll(const struct tt_critpath *cp,
			 const struct rq_index *ix, const struct cp_thread *th,
			 __u64 first, const struct rq_act *x, __u64 t)
{
	__u64 base = HANDLER_START_NS, parse, cpu, p;
	size_t i, f;

	if (!th->nempty_polls || !cp_runs_cpython(cp, th->tgid))
		return false;
	i = cp_starts_before(th->polls, th->npolls, sizeof(*th->polls), t);
	f = cp_starts_before(th->polls, th->npolls, sizeof(*th->polls), first);
	if (!f || th->polls[i - 1] <= x->t ||
	    (i > 1 && th->polls[i - 2] > x->t))
		return false;
	p = th->polls[i - 1];
	parse = LOOP_BATCH_NS + PARSE_NS_PER_BYTE * ix->rqs[x->req].bytes_in;
	if (cp_cpu_in(th, x->t, p) > parse ||
	    cp_handoff_in(cp, th, x->t, p, 0) ||
	    cp_headers_in(ix, th->tid, x->t, p))
		return false;
	cpu = cp_cpu_in(th, th->polls[f - 1], first);
	if (cpu > base)
		base = cpu < LOOP_BATCH_NS ? cpu : LOOP_BATCH_NS;
	return cp_cpu_in(th, p, t) <= base;
}

/*
 * Loop th's read act, begun at begun, cpu of th's CPU after its read x, its
 * request's first bytes in the kernel when th read at t0, and th runs
 * CPython: one poll returned both, and asyncio (uvloop too) reads all that
 * a poll returned before it runs a task, whatever the reads cost: where
 * th's polls were recorded (since before x), when no poll returned between
 * (one that did tells nothing: aiohttp runs the handlers of a poll's reads
 * after the next poll's). Else as long as the CPU is what a parse of x's
 * request could take (h11 parses 200 KB in 1-2 ms; a loop that ran its
 * engine's step between its poll and its reads of 64-byte prompts took
 * longer) and no handler began its response in between. Either act began
 * its request, on a connection that served one before (a later turn of the
 * loop accepted a new one), or it is the rest of a body begun before t0:
 * uvicorn stops polling a socket whose body passed 64 KB until its handler
 * asks for more, which it did in a turn before.
 */
static bool polled_with(const struct tt_critpath *cp, const struct rq_index *ix,
			const struct cp_thread *th, const struct rq_act *x,
			const struct rq_act *act, __u64 begun, __u64 t0,
			__u64 cpu)
{
	const struct tt_cp_request *q = &ix->rqs[act->req];
	bool first = begun == (q->t_first_read ? q->t_first_read : act->t);
	bool rest = q->t_first_read && q->t_first_read < t0 && begun == act->t;

	if (!cp_runs_cpython(cp, th->tgid))
		return false;
	if (th->npolls && th->polls[0] < x->t &&
	    !cp_time_in(th->polls, th->npolls, x->t, act->t))
		return true;
	return ((first && q->conn_reused) || rest) && q->t_arrive &&
	       q->t_arrive < t0 &&
	       cpu <= LOOP_BATCH_NS +
			       PARSE_NS_PER_BYTE * ix->rqs[x->req].bytes_in &&
	       !cp_headers_in(ix, th->tid, x->t, begun);
}

/* Read act, begun at begun, more than LOOP_BATCH_NS of the loop's CPU after
 * its last read x: a loop preempted between two reads of one epoll batch ran
 * no handler; nor one that polled both (t0: the batch's first read) and
 * handed nothing on between (then it polled again) */
static bool new_batch(const struct tt_critpath *cp, const struct rq_index *ix,
		      const struct cp_thread *th, const struct rq_act *x,
		      const struct rq_act *act, __u64 begun, __u64 t0)
{
	__u64 cpu;

	if (begun <= x->t + LOOP_BATCH_NS)
		return false;
	cpu = cp_cpu_in(th, x->t, begun);
	return cpu > LOOP_BATCH_NS &&
	       (!polled_with(cp, ix, th, x, act, begun, t0, cpu) ||
		cp_handoff_in(cp, th, x->t, begun, 0));
}

/* The handlers of the loop's batch of reads from t0 to x ran before its
 * read at t: not when that came right after the first poll since, with no
 * hand-off between (read_at_poll(): aiohttp's run after the next poll's
 * reads, in the order of the reads). Their turns only: how they share the
 * loop's CPU is one poll's reads' (share_point()) */
static bool later_turn(const struct tt_critpath *cp, const struct rq_index *ix,
		       const struct cp_thread *th, const struct rq_act *x,
		       __u64 t, __u64 t0)
{
	return !read_at_poll(cp, ix, th, t0, x, t) ||
	       cp_handoff_in(cp, th, x->t, t, 0);
}

/* Where the request of read act a began to be read, when that was after
 * the loop's read at last: its first read (the CPU between its reads is
 * their own, a long body's), else its last */
static __u64 read_start(const struct rq_index *ix, const struct rq_act *act,
			__u64 last)
{
	__u64 f = ix->rqs[act->req].t_first_read;

	return f > last && f < act->t ? f : act->t;
}

/*
 * Where read act a of loop th stands among the requests waiting for their
 * turns: its request's first read when the loop went on reading from there
 * to the last, neither waiting nor handing anything on (a loop starts a
 * handler at its headers, aiohttp two turns of the loop later: one whose
 * long body's last read came after another's whole request still runs
 * first); else the last read, after which the loop resumes a handler that
 * waited for its body.
 */
static __u64 turn_key(const struct tt_critpath *cp, const struct cp_thread *th,
		      const struct rq_index *ix, size_t a)
{
	__u64 f = read_start(ix, &ix->act[a], 0), t = ix->act[a].t;

	if (f == t || cp_blocked_in(cp, th, f, cp_rec_before(th, t)) ||
	    (th->nmsends ? cp_msend_in(th, f, t) != 0 :
			   cp_handoff_in(cp, th, f, t, 0)))
		return t;
	return f;
}

/* Read act a joins the requests waiting for their turns [head, *tail),
 * key[] their turn_key()s, in that order */
static void enqueue_read(const struct tt_critpath *cp,
			 const struct cp_thread *th, const struct rq_index *ix,
			 size_t *queue, __u64 *key, size_t head, size_t *tail,
			 size_t a)
{
	__u64 k = turn_key(cp, th, ix, a);
	size_t q = *tail;

	for (; q > head && key[q - 1] > k; q--) {
		queue[q] = queue[q - 1];
		key[q] = key[q - 1];
	}
	queue[q] = a;
	key[q] = k;
	(*tail)++;
}

/* The acts [lo, hi) of thread th, its wakes and blocks merged in time.
 * fw[req]: the request's first token write by any thread, 0 if none: one
 * answered before a turn is not what the turn hands on. key: scratch, as
 * queue. */
static void fifo_thread(const struct tt_critpath *cp, struct rq_index *ix,
			size_t lo, size_t hi, size_t *queue, __u64 *key,
			const __u64 *fw)
{
	const struct cp_thread *th = cp_thread_find(cp, ix->act[lo].tid);
	size_t head = 0, tail = 0, start = 0, a = lo, w = 0, k = 0, m = 0;
	__u64 t_held, batch_read = 0, turn, begun;
	const struct rq_act *last = NULL; /* its last read */
	bool sends;

	if (!th)
		return;
	/* reads before what the timeline still holds (report's streaming
	 * walk trimmed it) were walked already: no turn to take */
	t_held = th->nrecs ? th->recs[0].ts : 0;
	sends = th->nmsends > 0;
	for (;;) {
		__u64 ta = a < hi ? ix->act[a].t : UINT64_MAX;
		__u64 tw =
			sends ? (m < th->nmsends ? th->msends[m] : UINT64_MAX) :
			w < th->ncand ? cp->wakes[th->cand[w]].ts :
					UINT64_MAX;
		__u64 tb = UINT64_MAX;
		const struct rq_act *act;

		while (k < th->nrecs && th->recs[k].state != REC_BLOCKED)
			k++;
		if (k < th->nrecs)
			tb = th->recs[k].ts;
		if (ta == UINT64_MAX && tw == UINT64_MAX)
			break;
		if (tb < ta && tb < tw) {
			/* sends miss no turn: a handler not run yet is not
			 * handed on, whatever the loop did in between */
			if (!sends)
				stretch_end(ix, queue, &head, &start, tail, 0);
			k++;
		} else if (ta <= tw) {
			act = &ix->act[a++];
			/* a new batch of reads: the last one's handlers ran,
			 * those without a wake after its last turn; a batch of
			 * one (Node runs a handler at its read) before the
			 * loop began to read this one, a batch of several in
			 * the loop's next turn, which may have read a part */
			begun = act->write ?
					0 :
					read_start(ix, act, last ? last->t : 0);
			if (begun && last && !sends &&
			    new_batch(cp, ix, th, last, act, begun,
				      batch_read) &&
			    later_turn(cp, ix, th, last, begun, batch_read))
				stretch_end(ix, queue, &head, &start, tail,
					    tail - start == 1 ? begun : act->t);
			if (!act->write) {
				batch_read = start == tail ? begun : batch_read;
				last = act;
			}
			if (!act->write && act->t >= t_held)
				enqueue_read(cp, th, ix, queue, key, head,
					     &tail, (size_t)(act - ix->act));
			else if (act->write)
				for (size_t q = head; q < tail; q++)
					if (ix->act[queue[q]].req == act->req)
						ix->fifo[queue[q]] = FIFO_GONE;
		} else {
			if (sends) {
				turn = th->msends[m++];
			} else {
				const struct cp_wake *wk =
					&cp->wakes[th->cand[w++]];

				if (!cp_hands_on(cp, ix, wk))
					continue;
				turn = wk->ts;
			}
			while (head < tail &&
			       (ix->fifo[queue[head]] == FIFO_GONE ||
				(fw[ix->act[queue[head]].req] &&
				 fw[ix->act[queue[head]].req] <= turn)))
				head++;
			if (head < tail)
				ix->fifo[queue[head++]] = turn;
		}
	}
	stretch_end(ix, queue, &head, &start, tail, 0);
	for (size_t i = lo; i < hi; i++)
		if (ix->fifo[i] == FIFO_GONE)
			ix->fifo[i] = 0;
}

int cp_loop_fifo(const struct tt_critpath *cp, struct rq_index *ix)
{
	size_t lo, hi, reads, *queue, nreq = 0;
	__u64 *fw, *key;

	for (lo = 0; lo < ix->nact; lo++)
		if (ix->act[lo].req >= nreq)
			nreq = ix->act[lo].req + 1;
	ix->fifo = calloc(ix->nact ? ix->nact : 1, sizeof(*ix->fifo));
	queue = malloc((ix->nact ? ix->nact : 1) * sizeof(*queue));
	key = malloc((ix->nact ? ix->nact : 1) * sizeof(*key));
	fw = calloc(nreq ? nreq : 1, sizeof(*fw));
	if (!ix->fifo || !queue || !key || !fw) {
		free(queue);
		free(key);
		free(fw);
		return -ENOMEM;
	}
	for (lo = 0; lo < ix->nact; lo++)
		if (ix->act[lo].write)
			fw[ix->act[lo].req] = ix->act[lo].t;
	for (lo = 0; lo < ix->nact; lo = hi) {
		for (hi = lo, reads = 0;
		     hi < ix->nact && ix->act[hi].tid == ix->act[lo].tid; hi++)
			reads += !ix->act[hi].write;
		/* a reader of one request has nothing to take turns with */
		if (reads > 1)
			fifo_thread(cp, ix, lo, hi, queue, key, fw);
	}
	free(queue);
	free(key);
	free(fw);
	return 0;
}

/* The index of request req's read at t_read by tid in ix->act; ix->nact
 * when there is none. */
static size_t read_act(const struct rq_index *ix, __u32 tid, __u64 t_read,
		       __u32 req)
{
	const struct rq_act key = { .tid = tid, .req = req, .t = t_read };
	size_t a = 0, b = ix->nact, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (cp_rq_act_cmp(&ix->act[mid], &key) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < ix->nact && ix->act[a].tid == tid && ix->act[a].t == t_read;
	     a++)
		if (ix->act[a].req == req && !ix->act[a].write)
			return a;
	return ix->nact;
}

__u64 cp_loop_handoff(const struct rq_index *ix, __u32 tid, __u64 t_read,
		      __u32 req)
{
	size_t a;

	if (!ix->fifo)
		return 0;
	a = read_act(ix, tid, t_read, req);
	return a < ix->nact ? ix->fifo[a] : 0;
}

/* Acts x and then y are reads of one batch of reader th, which read at t0
 * first: no wait between */
static bool same_batch(const struct tt_critpath *cp, const struct rq_index *ix,
		       const struct cp_thread *th, const struct rq_act *x,
		       const struct rq_act *y, __u64 t0)
{
	return x->tid == y->tid && !x->write && !y->write &&
	       !new_batch(cp, ix, th, x, y, read_start(ix, y, x->t), t0) &&
	       !cp_blocked_in(cp, th, x->t, cp_rec_before(th, y->t));
}

/* When th's CPU since s reaches cpu; 0 if its records end before. */
static __u64 cpu_reached(const struct cp_thread *th, __u64 s, __u64 cpu)
{
	long k = cp_rec_before(th, s + 1);
	__u64 lo, hi;

	for (k = k < 0 ? 0 : k; (size_t)k + 1 < th->nrecs; k++) {
		lo = th->recs[k].ts > s ? th->recs[k].ts : s;
		hi = th->recs[k + 1].ts;
		if (th->recs[k].state != REC_RUNNING || hi <= lo)
			continue;
		if (hi - lo >= cpu)
			return lo + cpu;
		cpu -= hi - lo;
	}
	return 0;
}

/* Where th's handler whose CPU since s ends at cpu ended, within slack of
 * CPU (what the loop spends after the batch's handlers, before the first
 * headers): before a stretch off the CPU in that slack, the stretch a
 * preemption or the GIL put between the handler and the headers' start. */
static __u64 handler_end(const struct cp_thread *th, __u64 s, __u64 cpu,
			 __u64 slack)
{
	__u64 t = cpu_reached(th, s, cpu),
	      q = cpu_reached(th, s, cpu > slack ? cpu - slack : 0);
	long k;

	for (k = cp_rec_before(th, q + 1), k = k < 0 ? 0 : k;
	     (size_t)k < th->nrecs && th->recs[k].ts < t; k++)
		if (th->recs[k].ts > q && th->recs[k].state != REC_RUNNING)
			return th->recs[k].ts;
	return t;
}

/* th gave no sign of a hand-off in (s, t) but its wakes (share_point()
 * judges those): no wait of its own, no ZMQ message. */
static bool no_sign(const struct tt_critpath *cp, const struct cp_thread *th,
		    __u64 s, __u64 t)
{
	return !cp_blocked_in(cp, th, s, cp_rec_before(th, t)) &&
	       !cp_msend_in(th, s, t);
}

/*
 * The batch of reads [lo, hi) of the walk's reader ended at its first
 * headers: each request's headers from it after the batch, in the order of
 * its reads (the first at *first, the last at *h), nothing else of the
 * reader's before the last (a read, a token), no sign of a hand-off before
 * the first, and the headers together, after every handler: not one after
 * each (aiohttp's prepare() sends a handler's headers at once).
 */
static bool headers_end(const struct walk *wk, size_t lo, size_t hi,
			__u64 *first, __u64 *h)
{
	const struct cp_thread *th = wk->reader;
	const struct rq_index *ix = wk->ix;
	const struct tt_cp_request *q;
	__u64 last = ix->act[hi - 1].t;
	size_t j;

	for (*first = *h = 0, j = lo; j < hi; j++) {
		q = &ix->rqs[ix->act[j].req];
		if (q->writer_tid != th->tid ||
		    q->t_headers <= (*h ? *h : last))
			return false;
		*h = q->t_headers;
		*first = *first ? *first : *h;
	}
	return (hi == ix->nact || ix->act[hi].tid != th->tid ||
		ix->act[hi].t >= *h) &&
	       no_sign(wk->cp, th, ix->act[lo].t, *first) &&
	       cp_cpu_in(th, *first, *h) * (hi - lo) <
		       cp_cpu_in(th, last, *first);
}

/* What loop th read at rd was written after s: the poll that began a batch
 * read at s did not see it, a later one did. */
static bool sent_since(const struct cp_thread *th, __u64 s,
		       const struct cp_dread *rd)
{
	size_t i =
		cp_starts_before(th->arrs, th->narrs, sizeof(*th->arrs), s + 1);

	for (; i < th->narrs && th->arrs[i].ts < rd->ts; i++)
		if (th->arrs[i].kind == rd->kind)
			return true;
	return false;
}

/* Request req is one of reads [lo, hi)'s */
static bool in_batch(const struct rq_index *ix, size_t lo, size_t hi, __u32 req)
{
	for (; lo < hi; lo++)
		if (ix->act[lo].req == req)
			return true;
	return false;
}

/*
 * Where loop th, whose handlers of reads [lo, hi) answer nothing before the
 * engine's first token (MLC's request_completion awaits it before it returns
 * its response), ended them: at its next turn, the first of its reads of a
 * pipe, unix socket or eventfd and its waits but for the GIL after the last
 * read: the read when what it took was written after the first read (the
 * self-pipe a thread's call_soon_threadsafe wrote), the wait when it is in
 * poll or epoll (a handler's own wait ends nothing), or its next read when
 * that comes first (not a token: a handler may send its own), before any of
 * the batch's headers, with no sign of a hand-off before it; neither read
 * right after the first poll since the batch (read_at_poll()). 0 when
 * none.
 */
static __u64 next_turn(const struct tt_critpath *cp, const struct rq_index *ix,
		       const struct cp_thread *th, size_t lo, size_t hi)
{
	__u64 last = ix->act[hi - 1].t, end = 0, hdr;
	size_t j, i = cp_starts_before(th->dreads, th->ndreads,
				       sizeof(*th->dreads), last + 1);
	long k = cp_rec_before(th, last + 1);

	for (k = k < 0 ? 0 : k + 1; (size_t)k < th->nrecs; k++)
		if (th->recs[k].state == REC_BLOCKED &&
		    !cp_block_is_runtime(cp, th, &th->recs[k]))
			break;
	for (; i < th->ndreads && !end &&
	       ((size_t)k == th->nrecs || th->dreads[i].ts < th->recs[k].ts);
	     i++)
		if (sent_since(th, ix->act[lo].t, &th->dreads[i]) &&
		    !read_at_poll(cp, ix, th, ix->act[lo].t, &ix->act[hi - 1],
				  th->dreads[i].ts))
			end = th->dreads[i].ts;
	if (!end && (size_t)k < th->nrecs) {
		if (!cp_block_polls(cp, &th->recs[k]))
			return 0;
		end = th->recs[k].ts;
	}
	/* or its next read (ready at its next poll, which did not wait); an
	 * earlier request's token between is its stream's task, no end */
	for (j = hi; j < ix->nact && ix->act[j].tid == th->tid &&
		     ix->act[j].write && !in_batch(ix, lo, hi, ix->act[j].req);
	     j++)
		;
	if (j < ix->nact && ix->act[j].tid == th->tid &&
	    (!end || ix->act[j].t < end) &&
	    (ix->act[j].write || !read_at_poll(cp, ix, th, ix->act[lo].t,
					       &ix->act[hi - 1], ix->act[j].t)))
		end = ix->act[j].write ? 0 : ix->act[j].t;
	if (!end)
		return 0;
	for (j = lo; j < hi; j++) {
		hdr = ix->rqs[ix->act[j].req].t_headers;
		if (hdr && hdr < end)
			return 0;
	}
	return no_sign(cp, th, ix->act[lo].t, end) ? end : 0;
}

/* The batch of reads [*lo, *hi) of loop th that wk's is one of; returns
 * wk's read's index, ix->nact when th did not read it */
static size_t batch_of(const struct walk *wk, const struct cp_thread *th,
		       size_t *lo, size_t *hi)
{
	const struct rq_index *ix = wk->ix;
	size_t a = read_act(ix, th->tid, wk->r, wk->ri);

	if (a == ix->nact)
		return a;
	for (*lo = a; *lo > 0 && same_batch(wk->cp, ix, th, &ix->act[*lo - 1],
					    &ix->act[*lo], ix->act[*lo - 1].t);
	     (*lo)--)
		;
	for (*hi = a + 1;
	     *hi < ix->nact && same_batch(wk->cp, ix, th, &ix->act[*hi - 1],
					  &ix->act[*hi], ix->act[*lo].t);
	     (*hi)++)
		;
	return a;
}

/* The thread loop th started for wk's request: one for each request of the
 * batch, after its reads, before the batch's first headers and th's next
 * read, in the order of the reads; 0 when the starts and the reads do not
 * pair. */
static __u32 loop_spawned(const struct walk *wk, const struct cp_thread *th)
{
	const struct rq_index *ix = wk->ix;
	const struct cp_wake *w;
	size_t a, lo, hi, i, n = 0;
	__u64 to = UINT64_MAX, h;
	__u32 tid = 0;

	a = batch_of(wk, th, &lo, &hi);
	if (a == ix->nact)
		return 0;
	for (i = hi; i < ix->nact && ix->act[i].tid == th->tid; i++)
		if (!ix->act[i].write) {
			to = ix->act[i].t;
			break;
		}
	for (i = lo; i < hi; i++) {
		h = ix->rqs[ix->act[i].req].t_headers;
		to = h && h < to ? h : to;
	}
	for (i = cp_cand_after(wk->cp, th, ix->act[hi - 1].t); i < th->ncand;
	     i++) {
		w = &wk->cp->wakes[th->cand[i]];
		if (w->ts >= to)
			break;
		if (w->spawn && n++ == a - lo)
			tid = w->target_tid;
	}
	return n == hi - lo ? tid : 0;
}

bool cp_loop_spawned_other(const struct walk *wk, const struct cp_wake *w)
{
	__u32 tid;

	if (!w->spawn || !wk->reader || w->waker_tid != wk->reader->tid)
		return false;
	tid = loop_spawned(wk, wk->reader);
	return tid && tid != w->target_tid;
}

/* cp_loop_share()'s point, the loop's wakes let through when wakes is set;
 * *start: where the request's handler began, its share of the CPU before;
 * *end: the batch's first headers when they end it, else 0. */
static __u64 share_point(const struct walk *wk, bool wakes, __u64 *start,
			 __u64 *end)
{
	const struct cp_thread *th = wk->reader;
	const struct rq_index *ix = wk->ix;
	__u64 last, first_h, h, cpu, between, s, mid;
	size_t a, lo, hi;

	/* a loop whose handlers send ZMQ messages shows each hand-off: its
	 * turns (loopfifo's sends), nothing to share out */
	if (!th || th->nmsends)
		return 0;
	a = batch_of(wk, th, &lo, &hi);
	if (a == ix->nact || hi - lo < 2)
		return 0;
	last = ix->act[hi - 1].t;
	/* no handler ran between the reads (none handed anything on) */
	if (cp_handoff_in(wk->cp, th, ix->act[lo].t, last, 0))
		return 0;
	*end = 0;
	if (headers_end(wk, lo, hi, &first_h, &h))
		*end = first_h;
	else if (!(first_h = h = next_turn(wk->cp, ix, th, lo, hi)))
		return 0;
	cpu = cp_cpu_in(th, last, first_h);
	between = cp_cpu_in(th, first_h, h);
	if (!cpu)
		return 0;
	/* a headers' start, as between the headers, is no handler's */
	between /= hi - lo - 1;
	cpu -= between < cpu ? between : 0;
	*start = handler_end(th, last, cpu * (a - lo) / (hi - lo), between);
	s = handler_end(th, last, cpu * (a - lo + 1) / (hi - lo), between);
	/* the first handler has no earlier one whose put a wake could be */
	if (wakes)
		return a > lo ? s : 0;
	/* a wake in the first half of this one's share was the one before's
	 * put (an idle engine woken), one in the second half its own
	 * hand-off, left to the other rules */
	mid = a == lo ? *start : *start + (s - *start) / 2;
	return cp_handoff_in(wk->cp, th, mid, s, 0) ? 0 : s;
}

__u64 cp_loop_share(const struct walk *wk)
{
	__u64 start, end;

	return share_point(wk, false, &start, &end);
}

__u64 cp_loop_share_before(const struct walk *wk, __u64 t)
{
	__u64 start, end, s = share_point(wk, false, &start, &end);

	/* nearer the next handler's end than this one's: not its put; and
	 * before the headers, which the same turn sent after it (without
	 * them, a wake before the loop's next poll may be a put that woke
	 * an idle consumer for the whole batch) */
	return s && t > s + (s - start) / 2 && t < end ? s : 0;
}

__u64 cp_loop_share_after(const struct walk *wk, __u64 t)
{
	__u64 start, end, s = share_point(wk, true, &start, &end);

	/* the wake nearer an earlier handler's end than this one's */
	return s && t < start + (s - start) / 2 ? s : 0;
}

/*
 * th waited in [from, t) and its timer ended the wait. Not a preemption in
 * between: Node's loop sends a request's headers before its handler hands
 * it to the engine, and a preemption there is no queue.
 */
static bool waited_timer(const struct tt_critpath *cp,
			 const struct cp_thread *th, __u64 from, __u64 t)
{
	for (long j = cp_rec_before(th, t); j > 0 && th->recs[j - 1].ts >= from;
	     j--)
		if (th->recs[j - 1].state == REC_BLOCKED &&
		    cp_timer_ended(cp, th, j))
			return true;
	return false;
}

/* Loop th read a request other than wk's after wk's batch of reads,
 * before t */
static bool read_later(const struct walk *wk, const struct cp_thread *th,
		       __u64 t)
{
	const struct rq_index *ix = wk->ix;
	size_t lo, hi;

	if (batch_of(wk, th, &lo, &hi) == ix->nact)
		return false;
	for (; hi < ix->nact && ix->act[hi].tid == th->tid && ix->act[hi].t < t;
	     hi++)
		if (!ix->act[hi].write && ix->act[hi].req != wk->ri)
			return true;
	return false;
}

/*
 * An engine loop in the reader's own thread (vLLM V0's AsyncLLMEngine, an
 * asyncio task of the API's loop): a handler puts the request on the
 * engine's queue, waking nobody, and returns its response, whose headers
 * go out; between steps the engine takes what is queued and hands the
 * step's forward to a worker thread (c), whose result wakes the loop
 * again. The reader's wake of c at t is then no hand-off of the request
 * but its admission when c handed the reader a result after the reader
 * let the request go (its headers, else its hand-off point): the request
 * waited for c's step before. Not through a lock: a GIL passed back is
 * no result. Or the loop waited out a timer in between: a batcher's delay
 * for more requests (Ray Serve's batch_wait_timeout_s) that held it. The
 * walk queues it from there, to t or to a lock turn the loop gave before.
 * When the handler let the request go silently (its headers before t, no
 * wake of another thread from the read to them) and c computed from t
 * (not a relay, as LitServe's getter of the responses is), a result since
 * the read counts too: a loop takes a result written while its handlers
 * ran only after them (vLLM V0 reading a batch while a step ran); and so
 * does a request read after the request's batch of reads: the loop ran
 * that one's handler before the step (a batcher whose batch it filled:
 * v0-delay).
 */
__u64 cp_loop_step(struct walk *wk, const struct cp_thread *c, __u64 t,
		   bool computed)
{
	const struct cp_thread *th = wk->reader;
	__u64 h = wk->rq->t_headers, s, share;
	bool silent;

	if (!th)
		return 0;
	s = h > wk->r && h < t && wk->rq->writer_tid == th->tid ?
		    h :
		    cp_handoff_point(wk, t, NULL);
	silent = computed && h && s == h &&
		 !cp_handoff_in(wk->cp, th, wk->r, h, 0);
	if (s >= t ||
	    (!cp_handed_work(wk->cp, c, th->tid, silent ? wk->r : s, t - 1) &&
	     !waited_timer(wk->cp, th, s, t) &&
	     !(silent && read_later(wk, th, t))))
		return 0;
	wk->enqueue = TT_CP_ENQ_HANDOFF;
	share = cp_loop_share(wk);
	if (share && share < t) {
		s = share;
		wk->enqueue = TT_CP_ENQ_SHARE;
	}
	wk->t_enqueue = s;
	return s;
}
