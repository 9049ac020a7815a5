// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Application markers (docs/design.md §4.9): which request each marker
 * names, by the key its argument carries or by the request its thread is
 * serving. The walk then takes t_enqueue, t_dispatch and t_token from them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

int cp_mark_add(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_mark *m;

	if (ev->mark.kind < TT_MARK_ENQUEUE || ev->mark.kind > TT_MARK_TOKEN)
		return 0;
	if (tt_grow((void **)&cp->marks, &cp->capmarks, cp->nmarks + 1,
		    sizeof(*cp->marks)))
		return -ENOMEM;
	m = &cp->marks[cp->nmarks++];
	*m = (struct cp_mark){ .ts = ev->h.ts,
			       .key = ev->mark.key,
			       .tid = ev->h.tid,
			       .tgid = ev->h.tgid,
			       .kind = ev->mark.kind,
			       .has_key = ev->mark.flags & TT_MARK_F_KEY,
			       .value = ev->mark.flags & TT_MARK_F_VALUE,
			       .unread = ev->mark.flags & TT_MARK_F_UNREAD };
	/* an unread peer: bound as a marker without one */
	if (ev->mark.flags & TT_MARK_F_PEER)
		m->peer = TT_MARK_SPEC_PEER(ev->mark.spec);
	return 0;
}

const char *tt_cp_enqueue_name(enum tt_cp_enqueue e)
{
	/* clang-format off */
	static const char *const names[] = {
		[TT_CP_ENQ_READ] = "read",
		[TT_CP_ENQ_PICKUP] = "pickup",
		[TT_CP_ENQ_HANDOFF] = "handoff",
		[TT_CP_ENQ_MARKER] = "marker",
		[TT_CP_ENQ_CHANNEL] = "channel",
		[TT_CP_ENQ_RELEASE] = "release",
		[TT_CP_ENQ_SHARE] = "share",
	};
	/* clang-format on */

	return (unsigned int)e < sizeof(names) / sizeof(names[0]) ? names[e] :
								    "?";
}

/* requests an event loop may hold read and not yet marked, looked back
 * over from its latest read */
#define OPEN_SCAN 256
/* the key table's process for a binding any process may look up (no
 * traced process has tgid 0) */
#define ANY_PROCESS 0

/* What binding markers to requests works over. */
struct binder {
	const struct tt_cp_request *rqs;
	struct cp_rq_marks *out;
	/* the requests by reader thread, and by their client's port, each
	 * then by t_read (rq_act's tid holds the port) */
	struct rq_act *by_tid, *by_peer;
	size_t n_tid, n_peer;
	struct tt_hmap keys;
};

/* The slot of m's kind in a request's markers. */
static __u64 *mark_slot(struct cp_rq_marks *mk, const struct cp_mark *m)
{
	return m->kind == TT_MARK_ENQUEUE  ? &mk->enqueue :
	       m->kind == TT_MARK_DISPATCH ? &mk->dispatch :
					     &mk->token;
}

/*
 * Of the requests of rd under id (a reader thread, a client port) read at
 * or before m, in process tgid (0: any; one of no known process counts):
 * the earliest still open (neither its first write nor, without one, its
 * end before the marker) with no marker of m's kind yet, or -1; *last,
 * the one read last (-1: none).
 */
static long open_request(const struct binder *b, const struct rq_act *rd,
			 size_t n, __u32 id, __u32 tgid,
			 const struct cp_mark *m, long *last)
{
	size_t lo = 0, hi = n, mid, seen = 0;
	long found = -1;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rd[mid].tid < id ||
		    (rd[mid].tid == id && rd[mid].t <= m->ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	*last = -1;
	for (size_t i = lo; i-- > 0 && rd[i].tid == id && seen < OPEN_SCAN;) {
		const struct tt_cp_request *r = &b->rqs[rd[i].req];
		/* one its client left unanswered ends with its connection */
		__u64 shut = r->t_first_write ?: r->t_end;

		if (tgid && r->tgid && r->tgid != tgid)
			continue;
		seen++;
		if (*last < 0)
			*last = rd[i].req;
		if ((!shut || m->ts <= shut) &&
		    !*mark_slot(&b->out[rd[i].req], m))
			found = rd[i].req;
	}
	return found;
}

/*
 * The request m's thread is serving at m's time, or -1. With a peer port,
 * the request of that client its process read and holds open then (the
 * marker says which connection it serves, whatever the order its handler
 * ran in), else the one of that port it read last; only where it read
 * none of that port, the thread's. Else the earliest request its thread
 * read that is still open and unmarked; else the one it read last. A
 * thread per request has one such; an event loop reads several, then runs
 * their handlers in the order read, each marking its own.
 */
static long current_request(const struct binder *b, const struct cp_mark *m)
{
	long req, last;

	if (m->peer) {
		req = open_request(b, b->by_peer, b->n_peer, m->peer, m->tgid,
				   m, &last);
		if (req >= 0 || last >= 0)
			return req >= 0 ? req : last;
	}
	req = open_request(b, b->by_tid, b->n_tid, m->tid, 0, m, &last);
	return req >= 0 ? req : last;
}

/* The request marker m names, or -1: by its key (an enqueue binds the key
 * to its thread's current request), else its thread's current request.
 * A key is bound per process (a pointer means something in one process
 * only); a value key (a Python int or str: an id handed to an engine
 * process) also for any, and found there when its own process has none. */
static long mark_request(struct binder *b, const struct cp_mark *m, int *err)
{
	const struct tt_hmap_ent *e;
	long req;

	if (m->unread)
		return -1;
	if (!m->has_key || m->kind == TT_MARK_ENQUEUE) {
		req = current_request(b, m);
		if (m->has_key && req >= 0)
			*err = tt_hmap_put(&b->keys, m->key, m->tgid, req);
		if (m->value && req >= 0 && !*err)
			*err = tt_hmap_put(&b->keys, m->key, ANY_PROCESS, req);
		return req;
	}
	e = tt_hmap_find(&b->keys, m->key, m->tgid);
	if (!e && m->value)
		e = tt_hmap_find(&b->keys, m->key, ANY_PROCESS);
	return e ? (long)e->val : -1;
}

int cp_marks_bind(struct tt_critpath *cp, const struct tt_cp_request *rqs,
		  size_t n, struct cp_rq_marks *out)
{
	struct binder b = { .rqs = rqs, .out = out };
	size_t i;
	__u64 *slot;
	long req;
	int err = 0;

	memset(out, 0, n * sizeof(*out));
	cp->marks_unbound = cp->marks_outside = 0;
	if (!cp->nmarks)
		return 0;
	b.by_tid = malloc((n ? n : 1) * sizeof(*b.by_tid));
	b.by_peer = malloc((n ? n : 1) * sizeof(*b.by_peer));
	if (!b.by_tid || !b.by_peer) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (!rqs[i].t_read)
			continue;
		if (rqs[i].reader_tid)
			b.by_tid[b.n_tid++] =
				(struct rq_act){ .tid = rqs[i].reader_tid,
						 .req = i,
						 .t = rqs[i].t_read };
		if (rqs[i].peer_port)
			b.by_peer[b.n_peer++] =
				(struct rq_act){ .tid = rqs[i].peer_port,
						 .req = i,
						 .t = rqs[i].t_read };
	}
	qsort(b.by_tid, b.n_tid, sizeof(*b.by_tid), cp_rq_act_cmp);
	qsort(b.by_peer, b.n_peer, sizeof(*b.by_peer), cp_rq_act_cmp);
	for (i = 0; i < cp->nmarks && !err; i++) {
		const struct cp_mark *m = &cp->marks[i];

		req = mark_request(&b, m, &err);
		if (req < 0) {
			cp->marks_unbound++;
			continue;
		}
		slot = mark_slot(&out[req], m);
		/* the first of each kind: a token marker fires per token */
		if (*slot)
			continue;
		if (m->ts < rqs[req].t_read || !rqs[req].t_first_write ||
		    m->ts > rqs[req].t_first_write) {
			cp->marks_outside++;
			continue;
		}
		*slot = m->ts;
	}
cleanup:
	tt_hmap_free(&b.keys);
	free(b.by_tid);
	free(b.by_peer);
	return err;
}

void cp_take_marks(struct walk *wk, const struct cp_rq_marks *mk)
{
	if (mk->dispatch)
		wk->mk.dispatch = cp_clamp(mk->dispatch, wk->r, wk->f);
	if (mk->enqueue)
		wk->mk.enqueue =
			cp_clamp(mk->enqueue, wk->r,
				 wk->mk.dispatch ? wk->mk.dispatch : wk->f);
	if (mk->token)
		wk->mk.token = cp_clamp(mk->token, wk->r, wk->f);
}
