// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The wire: a send's first byte matched to the XMIT that carried it by TCP
 * sequence, and TPOT and ITL taken there as TTFT is (docs/design.md §3.2).
 */
#include <string.h>
#include "analyzer.h"
#include "analyzer_int.h"

static bool seq_in(__u32 seq, __u32 lo, __u32 hi)
{
	return (__s32)(seq - lo) >= 0 && (__s32)(hi - seq) > 0;
}

/*
 * Arms w for the byte at seq sent from ts_enter on; an XMIT that already
 * carried it (loopback) settles it at once. The ring is oldest first, so
 * a retransmit never wins over the first transmission. The bytes cannot
 * reach the device before the send began, nor before the previous send on
 * the connection ended (the bound that holds when ts_enter is unknown and
 * the BPF side put the send's end there).
 */
void an_wire_arm(struct wire_wait *w, const struct conn *c, __u32 seq,
		 __u64 ts_enter)
{
	const struct xmit_rec *x, *first = NULL;
	unsigned int i, k;

	if (c->last_send_ts < ts_enter)
		ts_enter = c->last_send_ts;
	w->seq = seq;
	w->not_before = ts_enter;
	w->armed = true;
	w->pending = true;
	w->t_wire = 0;
	/* newest first, down to ts_enter while the ring is in time order:
	 * the last match met is the oldest */
	for (i = c->ring_n; i-- > 0;) {
		k = (c->ring_next + XMIT_RING - c->ring_n + i) % XMIT_RING;
		x = &c->ring[k];
		if (x->ts < ts_enter) {
			if (!c->ring_disorder)
				break;
			continue;
		}
		if (seq_in(seq, x->seq, x->end_seq))
			first = x;
	}
	if (first) {
		w->pending = false;
		w->t_wire = first->ts;
	}
}

bool an_wire_check(struct wire_wait *w, const struct xmit_rec *x)
{
	if (!w->pending || x->ts < w->not_before ||
	    !seq_in(w->seq, x->seq, x->end_seq))
		return false;
	w->pending = false;
	w->t_wire = x->ts;
	return true;
}

/* An XMIT settles the token sends' first bytes it carries. */
void an_tw_check(struct live_req *q, const struct xmit_rec *x)
{
	size_t i;

	for (i = q->tw_next; i < q->tw_n; i++)
		an_wire_check(&q->tw[i], x);
	while (q->tw_next < q->tw_n && !q->tw[q->tw_next].pending)
		q->tw_next++;
}

/*
 * ITL at the wire, as TTFT and TPOT are taken: the gaps between the token
 * sends' first bytes on the device, when every one was seen there (else
 * the emit gaps stand). Gaps emitted apart that left together are
 * counted, as TPOT's bunched.
 */
void an_wire_itl(struct tt_request *r, struct live_req *q, __u64 *out)
{
	__u64 prev, cur, emit;
	size_t i;

	r->itl_at_wire = false;
	r->itl_bunched = 0;
	if (!q->gaps.n)
		return;
	memcpy(out, q->gaps.v, q->gaps.n * sizeof(*out));
	if (q->tw_n != q->gaps.n + 1)
		return;
	for (i = 0; i < q->tw_n; i++)
		if (!q->tw[i].armed || q->tw[i].pending ||
		    (i && q->tw[i].t_wire < q->tw[i - 1].t_wire))
			return;
	for (i = 1; i < q->tw_n; i++) {
		prev = q->tw[i - 1].t_wire;
		cur = q->tw[i].t_wire;
		emit = q->gaps.v[i - 1];
		out[i - 1] = cur - prev;
		r->itl_bunched += cur - prev < emit / 2 &&
				  emit - (cur - prev) > TT_BUNCH_NS;
	}
	r->itl_at_wire = true;
}

/* TPOT at the wire when the last token send's first byte was seen there,
 * as TTFT is taken; the send-side rate is kept as the server's emit rate. */
void an_wire_tpot(struct tt_request *r, const struct live_req *q)
{
	__u64 emit_span = r->t_last_write - r->t_first_write, wire_span;

	r->tpot = r->tpot_emit = 0;
	r->t_last_wire = 0;
	r->tpot_at_wire = r->bunched = false;
	if (r->tokens < 2 || r->t_last_write <= r->t_first_write)
		return;
	r->tpot = r->tpot_emit = emit_span / (r->tokens - 1);
	if (!r->t_wire || !q->last_tok.armed || q->last_tok.pending ||
	    q->last_tok.t_wire < r->t_wire)
		return;
	r->t_last_wire = q->last_tok.t_wire;
	wire_span = r->t_last_wire - r->t_wire;
	r->tpot = wire_span / (r->tokens - 1);
	r->tpot_at_wire = true;
	r->bunched = wire_span < emit_span / 2 &&
		     emit_span - wire_span > TT_BUNCH_NS;
}
