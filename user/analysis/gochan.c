// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Go channels' hand-offs that wake nobody (docs/design.md §4.10): a send
 * into a buffer that a busy goroutine drains later. Each receive that found
 * qcount elements took the one queued by the qcount-th latest send (a FIFO
 * buffer holds exactly the latest qcount sends that were not handed
 * straight to a waiting receiver, and those only happen when it is empty);
 * the receiver's thread keeps (receive, send, sender) as a take. Takes in
 * one drain loop are one batch admission, which ends at the last.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

static struct cp_chan *chan_of(struct tt_critpath *cp, __u64 ch, __u32 tgid)
{
	return cp_keyed_get(&cp->chan_ix, ch, tgid, (void **)&cp->chans,
			    &cp->nchans, &cp->capchans, sizeof(*cp->chans));
}

static int chan_send(struct cp_chan *c, __u64 ts, __u32 tid)
{
	/* the oldest half goes: no receive can name it any more */
	if (c->n == 2 * CHAN_SENDS_KEPT) {
		cp_drop_front((void **)&c->sends, &c->n, &c->cap,
			      CHAN_SENDS_KEPT, sizeof(*c->sends));
		c->base += CHAN_SENDS_KEPT;
	}
	if (tt_grow((void **)&c->sends, &c->cap, c->n + 1, sizeof(*c->sends)))
		return -ENOMEM;
	c->sends[c->n++] = (struct cp_send){ .ts = ts, .tid = tid };
	return 0;
}

int cp_chan_add(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_go_chan *op = &ev->go_chan;
	struct cp_chan *c = chan_of(cp, op->ch, ev->h.tgid);
	const struct cp_send *sent;
	struct cp_thread *th;

	if (!c)
		return -ENOMEM;
	if (op->op == TT_GO_CHAN_SEND)
		return chan_send(c, ev->h.ts, ev->h.tid);
	if (op->op != TT_GO_CHAN_RECV || !op->qcount ||
	    op->qcount > c->n)
		return 0;
	sent = &c->sends[c->n - op->qcount];
	if (sent->tid == ev->h.tid)
		return 0; /* a goroutine's own element: no hand-off */
	th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th || tt_grow((void **)&th->takes, &th->captakes, th->ntakes + 1,
			   sizeof(*th->takes)))
		return -ENOMEM;
	th->takes[th->ntakes++] = (struct cp_take){
		.ts = ev->h.ts, .t_send = sent->ts, .sender = sent->tid,
	};
	return 0;
}

void cp_chans_trim(struct tt_critpath *cp, __u64 t)
{
	for (size_t i = 0; i < cp->nchans; i++) {
		struct cp_chan *c = &cp->chans[i];
		size_t k = cp_starts_before(c->sends, c->n, sizeof(*c->sends), t);

		cp_drop_front_release((void **)&c->sends, &c->n, &c->cap, k,
				      sizeof(*c->sends));
		c->base += k;
	}
}

void cp_chans_free(struct tt_critpath *cp)
{
	for (size_t i = 0; i < cp->nchans; i++)
		free(cp->chans[i].sends);
	free(cp->chans);
	tt_hmap_free(&cp->chan_ix);
}

/* Takes a before b of th are one batch admission: th did not block
 * between them and ran less than a hand-off burst's gap (a drain loop,
 * whatever preempted it). */
static bool same_batch(const struct cp_thread *th, __u64 a, __u64 b)
{
	long k = cp_rec_before(th, a + 1);
	__u64 ran = 0, from, to;

	for (k = k < 0 ? 0 : k; (size_t)k < th->nrecs && th->recs[k].ts < b;
	     k++) {
		const struct cp_rec *r = &th->recs[k];

		if (r->state == REC_BLOCKED)
			return false;
		from = r->ts > a ? r->ts : a;
		to = (size_t)k + 1 < th->nrecs && th->recs[k + 1].ts < b ?
			     th->recs[k + 1].ts :
			     b;
		if (r->state == REC_RUNNING)
			ran += to - from;
	}
	return ran < BURST_GAP_NS;
}

const struct cp_take *cp_take_in(const struct cp_thread *th, __u64 s, __u64 t,
				 bool (*pred)(const struct walk *wk,
					      const struct cp_take *tk),
				 const struct walk *wk,
				 const struct cp_take **own)
{
	size_t k = cp_starts_before(th->takes, th->ntakes, sizeof(*th->takes),
				    t + 1);

	for (; k-- > 0 && th->takes[k].ts > s;) {
		/* a batch's last take, its own takes before it */
		if (k + 1 < th->ntakes &&
		    same_batch(th, th->takes[k].ts, th->takes[k + 1].ts))
			continue;
		for (size_t j = k + 1; j-- > 0;) {
			if (pred(wk, &th->takes[j])) {
				*own = &th->takes[j];
				return &th->takes[k];
			}
			if (!j || !same_batch(th, th->takes[j - 1].ts,
					      th->takes[j].ts))
				break;
		}
	}
	return NULL;
}
