// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Hops (docs/design.md §4.11): a gateway in front of an inference runner
 * (Ollama's server and its llama runner, a router before vLLM) sends each
 * request on to the runner over loopback and relays its tokens. Both are
 * traced, so the runner's side is a request of its own, a hop, whose walk
 * the rules already know how to read. The gateway's request takes the
 * hop's path where the hop's first token woke it, and the hop's queue and
 * dispatch as its own; the walk goes on from the gateway's send of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

/* A loopback delivery runs in the sender's send, right after its XMIT: a
 * wake later than this after the hop's first byte was no part of it. */
#define HOP_WAKE_NS 1000000ULL
/* a gateway of a gateway of ...: deeper chains are walked as threads */
#define HOP_DEPTH_MAX 4

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
		if (!h->hop_sender_tid || ix->act[lo].req == wk->ri ||
		    !h->t_wire || h->t_arrive < wk->r || h->t_arrive >= t ||
		    t > h->t_wire + HOP_WAKE_NS)
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
static int hop_splice(struct walk *wk, long hi, __u64 t, struct tt_cp_result *h)
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
	err = cp_seg_add(&wk->path, true, end, t, hq->writer_tid, TT_CP_PHASE,
			 TT_ST_NET_OUT, "hop out");
	for (i = h->nsegs; i-- > 0 && !err;) {
		s = &h->segs[i];
		if (s->start >= end)
			continue;
		e = s->start + s->dur < end ? s->start + s->dur : end;
		err = cp_seg_add(&wk->path, true, s->start, e, s->tid, s->state,
				 s->stage, hop_reason(s));
	}
	wk->incomplete |= h->incomplete & ~TT_CP_INC_NOT_WALKED;
	wk->gil_ns += h->gil_ns;
	return err;
}

bool cp_hop_take(struct walk *wk, long hi, __u64 t, bool dispatched,
		 __u64 *disp, __u8 *rule)
{
	struct tt_cp_result h;
	int ret = hop_splice(wk, hi, t, &h);

	if (ret < 0)
		wk->err = ret;
	if (!ret) {
		wk->hop_id = wk->ix->rqs[hi].id;
		/* the hop's queue is this request's, found by the rules that
		 * read the runner; with none, the runner's read took it up */
		if (!dispatched) {
			*rule = h.dispatch;
			*disp = h.t_dispatch;
			wk->t_enqueue = h.t_enqueue;
			wk->enqueue = h.enqueue;
		}
	}
	tt_cp_result_free(&h);
	return !ret;
}
