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
			       .has_key = ev->mark.flags & TT_MARK_F_KEY };
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

/* The request tid read last at or before t: its current one, or -1. */
static long current_request(const struct rq_act *rd, size_t n, __u32 tid,
			    __u64 t)
{
	size_t a = 0, b = n, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (rd[mid].tid < tid || (rd[mid].tid == tid && rd[mid].t <= t))
			a = mid + 1;
		else
			b = mid;
	}
	return a && rd[a - 1].tid == tid ? (long)rd[a - 1].req : -1;
}

/* The request marker m names, or -1: by its key (an enqueue binds the key
 * to its thread's current request), else its thread's current request. */
static long mark_request(struct tt_hmap *keys, const struct rq_act *rd,
			 size_t nrd, const struct cp_mark *m, int *err)
{
	const struct tt_hmap_ent *e;
	long req;

	if (!m->has_key || m->kind == TT_MARK_ENQUEUE) {
		req = current_request(rd, nrd, m->tid, m->ts);
		if (m->has_key && req >= 0)
			*err = tt_hmap_put(keys, m->key, m->tgid, req);
		return req;
	}
	e = tt_hmap_find(keys, m->key, m->tgid);
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

		req = mark_request(&keys, rd, nrd, m, &err);
		if (req < 0) {
			cp->marks_unbound++;
			continue;
		}
		slot = m->kind == TT_MARK_ENQUEUE  ? &out[req].enqueue :
		       m->kind == TT_MARK_DISPATCH ? &out[req].dispatch :
						     &out[req].token;
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
