// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hops (docs/design.md §4.11): a gateway in front of an inference runner
 * (Ollama's server and its llama runner, a router before vLLM) sends each
 * request on to the runner over loopback and relays its tokens. Both are
 * traced, so the runner's side is a request of its own, a hop, whose walk
 * the rules already know how to read. The gateway's request takes the
 * hop's path where the hop's first token woke it, came in while a thread
 * of its path polled, or (an event loop's, given by the order it read and
 * sent) came in while the walk is on the loop; the hop's queue and
 * dispatch are its own, and the walk goes on from the gateway's send.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cp_internal.h"

/* A loopback delivery runs in the sender's send, right after its XMIT: a
 * wake later than this after the hop's first byte was no part of it. */
#define HOP_WAKE_NS 1000000ULL
/* a gateway of a gateway of ...: deeper chains are walked as threads */
#define HOP_DEPTH_MAX 4

void cp_hop_visit(struct walk *wk, __u32 tid)
{
	int i;

	if (!wk->ix->nhops)
		return;
	for (i = 0; i < wk->nhop_tids; i++)
		if (wk->hop_tids[i] == tid)
			return;
	if (wk->nhop_tids < (int)(sizeof(wk->hop_tids) / sizeof(__u32)))
		wk->hop_tids[wk->nhop_tids++] = tid;
}

/* v woke tid in [lo, hi] (its wakes in process context are in time order) */
static bool woke(const struct tt_critpath *cp, const struct cp_thread *v,
		 __u32 tid, __u64 lo, __u64 hi)
{
	size_t a = cp_wake_at(cp, v->wout, v->nwout, lo);
	const struct cp_wake *w;

	for (; a < v->nwout; a++) {
		w = &cp->wakes[v->wout[a]];
		if (w->ts > hi)
			return false;
		if (w->target_tid == tid)
			return true;
	}
	return false;
}

/* Of the reads of tid (acts [lo, hi)), the first one not taken that read a
 * request whose answer came after hop h's first token, by h's send; -1. */
static long fifo_read(const struct rq_index *ix, size_t lo, size_t hi,
		      const bool *taken, const struct tt_cp_request *h)
{
	const struct tt_cp_request *r;
	size_t a, seen = 0;

	for (a = lo; a < hi && ix->act[a].t <= h->t_arrive && seen < 64; a++) {
		r = &ix->rqs[ix->act[a].req];
		if (ix->act[a].write || taken[a] || r->hop_sender_tid)
			continue;
		seen++;
		if (!r->t_first_write || r->t_first_write >= h->t_wire)
			return (long)a;
	}
	return -1;
}

int cp_hop_owners(struct rq_index *ix)
{
	struct rq_hop *sent;
	size_t i, n = 0, lo, hi;
	bool *taken;
	long a;

	if (!ix->nhops)
		return 0;
	for (i = 0; i < ix->nhops; i++)
		if (ix->hops[i].req >= n)
			n = ix->hops[i].req + 1;
	ix->hop_owner = malloc(n * sizeof(*ix->hop_owner));
	ix->owned_hop = malloc(ix->nrqs * sizeof(*ix->owned_hop));
	sent = malloc(ix->nhops * sizeof(*sent));
	taken = calloc(ix->nact ? ix->nact : 1, sizeof(*taken));
	if (!ix->hop_owner || !ix->owned_hop || !sent || !taken) {
		free(sent);
		free(taken);
		return -ENOMEM;
	}
	memset(ix->hop_owner, 0xff, n * sizeof(*ix->hop_owner));
	memset(ix->owned_hop, 0xff, ix->nrqs * sizeof(*ix->owned_hop));
	/* in the order sent */
	for (i = 0; i < ix->nhops; i++) {
		const struct tt_cp_request *h = &ix->rqs[ix->hops[i].req];

		sent[i] = (struct rq_hop){ .req = ix->hops[i].req,
					   .t = h->t_arrive };
	}
	qsort(sent, ix->nhops, sizeof(*sent), cp_rq_hop_cmp);
	for (i = 0; i < ix->nhops; i++) {
		const struct tt_cp_request *h = &ix->rqs[sent[i].req];

		lo = cp_act_after(ix, h->hop_sender_tid, 0);
		hi = cp_act_after(ix, h->hop_sender_tid, UINT64_MAX);
		a = fifo_read(ix, lo, hi, taken, h);
		if (a < 0)
			continue;
		taken[a] = true;
		ix->hop_owner[sent[i].req] = ix->act[a].req;
		ix->owned_hop[ix->act[a].req] = sent[i].req;
	}
	free(sent);
	free(taken);
	return 0;
}

static __u32 hop_owner(const struct walk *wk, const struct tt_cp_request *h)
{
	return wk->ix->hop_owner[h - wk->ix->rqs];
}

/* Where the walk's request was first read: a gateway that streams a long
 * upload on (Caddy, Go's httputil) sends its hop before the last read. */
static __u64 first_read(const struct walk *wk)
{
	__u64 f = wk->rq->t_first_read;

	return f && f >= wk->a && f < wk->r ? f : wk->r;
}

/* Hop h (another request than the walk's) went out after its first read
 * and its first token before t. */
static bool hop_sent(const struct walk *wk, const struct tt_cp_request *h,
		     __u64 t)
{
	if (h == wk->rq || !h->hop_sender_tid || h->t_arrive < first_read(wk) ||
	    h->t_arrive >= t || !h->t_wire || h->t_wire > t)
		return false;
	/* an event loop's hop: the request it read before it sent it */
	return hop_owner(wk, h) == NONE32 || hop_owner(wk, h) == wk->ri;
}

/* Hop h is this request's: sent after its read by a thread the walk has
 * been on, or by one such a thread woke (a Go client's writeLoop). A hop
 * of another request the same gateway threads carry fails: its sender was
 * woken by that request's own goroutine. */
static bool hop_mine(const struct walk *wk, const struct tt_cp_request *h,
		     __u64 t)
{
	const struct cp_thread *v;
	int i;

	if (!hop_sent(wk, h, t))
		return false;
	if (hop_owner(wk, h) == wk->ri)
		return true;
	for (i = 0; i < wk->nhop_tids; i++) {
		if (wk->hop_tids[i] == h->hop_sender_tid)
			return true;
		v = cp_thread_find(wk->cp, wk->hop_tids[i]);
		if (v && woke(wk->cp, v, h->hop_sender_tid, first_read(wk),
			      h->t_arrive))
			return true;
	}
	return false;
}

/* A wait that stands for many sockets: a goroutine parked (golift gives
 * it no syscall) or an epoll wait. A read of the socket itself would have
 * been woken by the first token; a lock wait is no wait for data. */
static bool polls(const struct tt_critpath *cp, const struct cp_rec *r)
{
	if (r->state != REC_BLOCKED || r->info >= cp->nblocks)
		return false;
	return cp->blocks[r->info].syscall < 0 ||
	       ((r->flags & REC_F_ANON) &&
		!S_ISSOCK(cp->blocks[r->info].fd_mode));
}

long cp_hop_waited(const struct walk *wk, const struct cp_thread *th, long k,
		   __u64 t)
{
	const struct rq_index *ix = wk->ix;
	size_t a = 0, b = ix->nhops, mid;
	__u64 since;

	if (!ix->nhops || k < 1 || th->recs[k].ts != t ||
	    !polls(wk->cp, &th->recs[k - 1]))
		return -1;
	since = th->recs[k - 1].ts;
	while (a < b) {
		mid = a + (b - a) / 2;
		if (ix->hops[mid].t <= t)
			a = mid + 1;
		else
			b = mid;
	}
	/* the latest first token that came while th waited */
	for (; a-- > 0 && ix->hops[a].t >= since;)
		if (hop_mine(wk, &ix->rqs[ix->hops[a].req], t))
			return ix->hops[a].req;
	return -1;
}

/* The latest hop whose first token th read in [s, t) that hop_sent()
 * lets this request take: the read's time, the hop in *hop; 0. */
static __u64 hop_read(const struct walk *wk, const struct cp_thread *th,
		      __u64 s, __u64 t, long *hop)
{
	const struct rq_index *ix = wk->ix;
	const struct rq_act *rd = ix->hop_reads;
	size_t a;

	if (!ix->nhop_reads || t <= s)
		return 0;
	a = cp_acts_after(rd, ix->nhop_reads, th->tid, t - 1);
	for (; a-- > 0 && rd[a].tid == th->tid && rd[a].t >= s;) {
		if (hop_sent(wk, &ix->rqs[rd[a].req], rd[a].t)) {
			*hop = rd[a].req;
			return rd[a].t;
		}
	}
	return 0;
}

__u64 cp_hop_came(const struct walk *wk, long owned, const struct cp_thread *th,
		  const struct cp_rec *rec, __u64 lo, __u64 t, bool read,
		  long *hop)
{
	const struct tt_cp_request *h = owned >= 0 ? &wk->ix->rqs[owned] : NULL;
	__u64 s = rec->ts > lo ? rec->ts : lo;

	if (h && th->tid == h->hop_sender_tid && h->t_wire >= s &&
	    h->t_wire < t) {
		*hop = owned;
		return h->t_wire;
	}
	return read ? hop_read(wk, th, s, t, hop) : 0;
}

long cp_hop_owned(const struct walk *wk, __u64 t)
{
	__u32 h = wk->ix->nhops ? wk->ix->owned_hop[wk->ri] : NONE32;

	return h != NONE32 && hop_sent(wk, &wk->ix->rqs[h], t) ? (long)h : -1;
}

long cp_hop_at(const struct walk *wk, __u32 tid, __u64 t)
{
	const struct rq_index *ix = wk->ix;
	const struct tt_cp_request *h;
	size_t lo;

	if (!ix->nhops)
		return -1;
	lo = cp_act_after(ix, tid, t);
	/* the latest first token write of tid by t: only that one */
	for (; lo-- > 0 && ix->act[lo].tid == tid;) {
		if (!ix->act[lo].write)
			continue;
		h = &ix->rqs[ix->act[lo].req];
		/* its first token woke this path: the hop is this request's
		 * (a gateway's sender is often woken by no one it would name:
		 * a new goroutine, a buffered channel) */
		if (!hop_sent(wk, h, t) || t > h->t_wire + HOP_WAKE_NS)
			return -1;
		return ix->act[lo].req;
	}
	return -1;
}

/* The hop's own phases, named as the gateway's request sees them. */
static const char *hop_reason(const struct tt_cp_segment *s)
{
	if (s->state != TT_CP_PHASE)
		return s->reason;
	return s->stage == TT_ST_NET_IN	 ? "hop in" :
	       s->stage == TT_ST_NET_OUT ? "hop out" :
					   s->reason;
}

/* Walks hop hi into h and puts its path, to t, on wk's: 0, 1 when it could
 * not (too deep, not walked), or -errno. */
static int hop_splice(struct walk *wk, long hi, __u64 t, __u32 join,
		      struct tt_cp_result *h)
{
	static const struct cp_rq_marks none;
	struct tt_critpath *cp = wk->cp;
	const struct tt_cp_request *hq = &wk->ix->rqs[hi];
	struct segvec path = cp->walk_path, segs = cp->walk_segs;
	bool drop = cp->drop_segments;
	__u64 end = t < hq->t_wire ? t : hq->t_wire, e;
	const struct tt_cp_segment *s;
	size_t i;
	int err;

	memset(h, 0, sizeof(*h));
	if (cp->hop_depth >= HOP_DEPTH_MAX)
		return 1;
	/* the hop's walk on buffers of its own: ours are in use */
	cp->walk_path = cp->walk_segs = (struct segvec){ 0 };
	cp->drop_segments = false;
	cp->hop_depth++;
	err = cp_walk_one(cp, wk->ix, wk->ix->rqs, (size_t)hi,
			  wk->ix->mk ? &wk->ix->mk[hi] : &none, h);
	cp->hop_depth--;
	free(cp->walk_path.v);
	free(cp->walk_segs.v);
	cp->walk_path = path;
	cp->walk_segs = segs;
	cp->drop_segments = drop;
	if (err)
		return err;
	if (!h->segs)
		return 1; /* not walked: the wake is followed as any */
	/* its first token's delivery, or its gateway thread's wait to run
	 * with the bytes in (the wake came later, for another) */
	if (join == hq->writer_tid)
		err = cp_seg_add(&wk->path, true, end, t, join, TT_CP_PHASE,
				 TT_ST_NET_OUT, "hop out");
	else
		err = cp_seg_add(&wk->path, true, end, t, join, TT_CP_RUNNABLE,
				 TT_ST_RUNQUEUE, "hop data in");
	/* from this request's last read on: a hop sent while the upload
	 * went on shares its [t_arrive, t_read) */
	for (i = h->nsegs; i-- > 0 && !err;) {
		s = &h->segs[i];
		if (s->start >= end || s->start + s->dur <= wk->r)
			continue;
		e = s->start + s->dur < end ? s->start + s->dur : end;
		err = cp_seg_add(&wk->path, true,
				 s->start > wk->r ? s->start : wk->r, e, s->tid,
				 s->state, s->stage, hop_reason(s));
	}
	wk->incomplete |= h->incomplete & ~TT_CP_INC_NOT_WALKED;
	wk->gil_ns += h->gil_ns;
	return err;
}

bool cp_hop_take(struct walk *wk, long hi, __u64 t, __u32 join, bool dispatched,
		 __u64 *disp, __u8 *rule)
{
	struct tt_cp_result h;
	int ret = hop_splice(wk, hi, t, join, &h);

	if (ret < 0)
		wk->err = ret;
	if (!ret) {
		wk->hop_id = wk->ix->rqs[hi].id;
		/* the hop's queue is this request's, found by the rules that
		 * read the runner; with none, the runner's read took it up */
		if (!dispatched) {
			*rule = h.dispatch;
			*disp = h.t_dispatch > wk->r ? h.t_dispatch : wk->r;
			wk->t_enqueue = h.t_enqueue > wk->r ? h.t_enqueue :
							      wk->r;
			wk->enqueue = h.enqueue;
		}
	}
	tt_cp_result_free(&h);
	return !ret;
}

/*
 * A gateway's request whose path meets a hop's response: the first walk
 * follows wakes only, so that no rule fires on the gateway's own threads
 * (its relays look like pick-ups), and is kept when it took the hop.
 */
__u64 cp_hop_first(const struct walk *start, struct walk *wk, __u8 *rule)
{
	struct walk probe = *start;
	__u64 disp;

	if (!start->ix->nhops)
		return 0;
	probe.path = (struct segvec){ 0 };
	probe.hop_probe = true;
	disp = cp_walk_path(&probe, rule);
	if (probe.err || !probe.hop_id) {
		wk->err = probe.err;
		free(probe.path.v);
		free(probe.passed);
		return 0;
	}
	free(wk->path.v);
	free(wk->passed);
	*wk = probe;
	wk->hop_probe = false;
	return disp;
}

/* The walk goes on from hop's send, on its sender: that thread. */
struct cp_thread *cp_hop_jump(struct walk *wk, long hop, __u32 *tid, __u64 *t,
			      long *k)
{
	struct cp_thread *th;

	*tid = wk->ix->rqs[hop].hop_sender_tid;
	*t = wk->ix->rqs[hop].t_arrive;
	*t = *t > wk->r ? *t : wk->r;
	th = cp_thread_find(wk->cp, *tid);
	*k = th ? cp_rec_before(th, *t) : -1;
	return th;
}
