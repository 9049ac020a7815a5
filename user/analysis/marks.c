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

/* The slot of m's kind in a request's markers. */
static __u64 *mark_slot(struct cp_rq_marks *mk, const struct cp_mark *m)
{
	return m->kind == TT_MARK_ENQUEUE  ? &mk->enqueue :
	       m->kind == TT_MARK_DISPATCH ? &mk->dispatch :
					     &mk->token;
}

/*
 * The request thread m->tid is serving at m's time, or -1: the earliest it
 * read that is still open (neither its first write nor, without one, its
 * end before the marker) and has no marker of m's kind yet; else the one
 * it read last. A thread per request has one such; an event loop reads
 * several, then runs their handlers in the order read, each marking its
 * own.
 */
static long current_request(const struct rq_act *rd, size_t n,
			    const struct tt_cp_request *rqs,
			    struct cp_rq_marks *out, const struct cp_mark *m)
{
	size_t a = 0, b = n, mid;
	long found = -1;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (rd[mid].tid < m->tid ||
		    (rd[mid].tid == m->tid && rd[mid].t <= m->ts))
			a = mid + 1;
		else
			b = mid;
	}
	if (!a || rd[a - 1].tid != m->tid)
		return -1;
	for (size_t i = a;
	     i-- > 0 && rd[i].tid == m->tid && a - i <= OPEN_SCAN;) {
		const struct tt_cp_request *r = &rqs[rd[i].req];
		/* one its client left unanswered ends with its connection */
		__u64 shut = r->t_first_write ?: r->t_end;

		if ((!shut || m->ts <= shut) && !*mark_slot(&out[rd[i].req], m))
			found = rd[i].req;
	}
	return found >= 0 ? found : (long)rd[a - 1].req;
}

/* The request marker m names, or -1: by its key (an enqueue binds the key
 * to its thread's current request), else its thread's current request.
 * A key is bound per process (a pointer means something in one process
 * only); a value key (a Python int or str: an id handed to an engine
 * process) also for any, and found there when its own process has none. */
static long mark_request(struct tt_hmap *keys, const struct rq_act *rd,
			 size_t nrd, const struct tt_cp_request *rqs,
			 struct cp_rq_marks *out, const struct cp_mark *m,
			 int *err)
{
	const struct tt_hmap_ent *e;
	long req;

	if (m->unread)
		return -1;
	if (!m->has_key || m->kind == TT_MARK_ENQUEUE) {
		req = current_request(rd, nrd, rqs, out, m);
		if (m->has_key && req >= 0)
			*err = tt_hmap_put(keys, m->key, m->tgid, req);
		if (m->value && req >= 0 && !*err)
			*err = tt_hmap_put(keys, m->key, ANY_PROCESS, req);
		return req;
	}
	e = tt_hmap_find(keys, m->key, m->tgid);
	if (!e && m->value)
		e = tt_hmap_find(keys, m->key, ANY_PROCESS);
	return e ? (long)e->val : -1;
}

int cp_marks_bind(struct tt_critpath *cp, const struct tt_cp_request *rqs,
		  size_t n, struct cp_rq_marks *out)
{
	struct tt_hmap keys = { 0 };
	struct rq_act *rd;
	size_t i, nrd = 0;
	__u64 *slot;
	long req;
	int err = 0;

	memset(out, 0, n * sizeof(*out));
	cp->marks_unbound = cp->marks_outside = 0;
	if (!cp->nmarks)
		return 0;
	rd = malloc((n ? n : 1) * sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (rqs[i].reader_tid && rqs[i].t_read)
			rd[nrd++] = (struct rq_act){ .tid = rqs[i].reader_tid,
						     .req = i,
						     .t = rqs[i].t_read };
	qsort(rd, nrd, sizeof(*rd), cp_rq_act_cmp);
	for (i = 0; i < cp->nmarks && !err; i++) {
		const struct cp_mark *m = &cp->marks[i];

		req = mark_request(&keys, rd, nrd, rqs, out, m, &err);
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
	tt_hmap_free(&keys);
	free(rd);
	return err;
}
