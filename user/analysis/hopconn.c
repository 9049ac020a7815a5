// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which connections carry hops (docs/design.md §4.11): requests a traced
 * server process on this host sent on loopback.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include "analyzer_int.h"

int an_server_read(struct tt_analyzer *a, __u32 tgid)
{
	if (tt_hmap_find(&a->server_tgids, tgid, 0))
		return 0;
	return tt_hmap_put(&a->server_tgids, tgid, 0, 1);
}

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
