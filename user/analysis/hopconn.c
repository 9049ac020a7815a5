// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which connections carry hops (docs/design.md §4.11): requests a traced
 * server process on this host sent on loopback; and the gateway's reads
 * of their answers.
 */
#include <netinet/in.h>
#include <string.h>
#include "analyzer_int.h"

/* The peer is this host: loopback, or the connection's own address. */
static bool conn_local(const struct conn *c)
{
	struct in6_addr a6;

	if (!memcmp(c->raddr, c->laddr, sizeof(c->raddr)))
		return true;
	if (c->family != AF_INET6)
		return c->raddr[0] == 127;
	memcpy(&a6, c->raddr, sizeof(a6)); /* raddr is not 4-byte aligned */
	return IN6_IS_ADDR_LOOPBACK(&a6) ||
	       (IN6_IS_ADDR_V4MAPPED(&a6) && c->raddr[12] == 127);
}

/* Bytes that a traced server process on this host sent from a client
 * socket (the recorder knows its port), its own thread current as the
 * loopback delivery runs in its send (docs/design.md §4.11); a traced load
 * generator serves nothing. */
bool an_sent_by_server(const struct tt_analyzer *a, const struct conn *c,
		       const struct tt_event *ev)
{
	const __u32 both = TT_F_HOP | TT_F_HOP_SENDER;

	return (ev->h.flags & both) == both && conn_local(c) &&
	       tt_hmap_find(&a->server_tgids, ev->h.tgid, 0);
}

int an_hop_conn(struct tt_analyzer *a, struct conn *c)
{
	c->hop = true;
	return tt_hmap_put(&a->hop_ports, c->rport, 0, c->sk);
}

void an_hop_conn_gone(struct tt_analyzer *a, const struct conn *c)
{
	const struct tt_hmap_ent *e = tt_hmap_find(&a->hop_ports, c->rport, 0);

	if (c->hop && e && e->val == c->sk)
		tt_hmap_del(&a->hop_ports, c->rport, 0);
}

/* r's answer read at ts by tid: its first token's, when r has not had it
 * and that token was sent (a read before it is of the headers) */
static bool reply_read(struct tt_request *r, __u64 ts, __u32 tid)
{
	__u64 first = r->t_wire ? r->t_wire : r->t_first_write;

	if (r->hop_read_t || !first || ts < first)
		return false;
	r->hop_read_t = ts;
	r->hop_read_tid = tid;
	return true;
}

/* Requests finished on c this many records back at most: a gateway reads
 * an answer within its own round trip, while few others end. */
#define REPLY_BACK 64

int an_hop_reply(struct tt_analyzer *a, const struct tt_event *ev)
{
	__u16 port = ev->h.flags >> TT_F_PORT_SHIFT;
	const struct tt_hmap_ent *e = tt_hmap_find(&a->hop_ports, port, 0);
	struct conn *c = e ? tt_hmap_ptr(&a->conns, e->val) : NULL;
	size_t i, lo = a->nreqs > REPLY_BACK ? a->nreqs - REPLY_BACK : 0;
	struct tt_request *r;

	/* the oldest answer first: a finished one (its connection may have
	 * closed before the gateway read it), the tail, the current */
	for (i = a->nreqs; i-- > lo;) {
		r = &a->reqs[i].r;
		if (r->rport != port || !(r->incomplete & TT_INC_HOP))
			continue;
		if (reply_read(r, ev->h.ts, ev->h.tid))
			return 0;
		break;
	}
	if (!c || (c->have_tail && reply_read(&c->tail.r, ev->h.ts, ev->h.tid)))
		return 0;
	if (c->state == CONN_RESPONDING)
		reply_read(&c->cur.r, ev->h.ts, ev->h.tid);
	return 0;
}
