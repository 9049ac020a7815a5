// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Plaintext waiting for its send, per thread (tlsplain.h). */
#include <stdlib.h>
#include <string.h>
#include "tlsplain.h"

/* threads at once (direct-mapped by tid: a slot's later thread wins) and
 * pieces a thread keeps (more before one send: the oldest go; asyncio
 * writes a response's headers and first event, then sends them) */
#define TLS_SLOTS 128
#define TLS_PIECES 16

struct tt_tls_pending {
	struct tls_slot {
		__u32 tid;
		unsigned int n;
		struct tt_tls_plain p[TLS_PIECES];
	} slot[TLS_SLOTS];
};

struct tt_tls_pending *tt_tls_pending_new(void)
{
	return calloc(1, sizeof(struct tt_tls_pending));
}

void tt_tls_pending_free(struct tt_tls_pending *tp)
{
	free(tp);
}

static struct tls_slot *slot_of(struct tt_tls_pending *tp, __u32 tid)
{
	return &tp->slot[(tid * 2654435761u) >> 25 & (TLS_SLOTS - 1)];
}

void tt_tls_pending_add(struct tt_tls_pending *tp, __u32 tid,
			const struct tt_tls_plain *p)
{
	struct tls_slot *s = slot_of(tp, tid);

	if (s->tid != tid) {
		s->tid = tid;
		s->n = 0;
	}
	if (s->n == TLS_PIECES) {
		memmove(s->p, s->p + 1, (TLS_PIECES - 1) * sizeof(s->p[0]));
		s->n--;
	}
	s->p[s->n++] = *p;
}

size_t tt_tls_pending_take(struct tt_tls_pending *tp, __u32 tid, __u32 from,
			   __u32 to, const struct tt_tls_plain **out)
{
	struct tls_slot *s = slot_of(tp, tid);
	unsigned int i, k = 0;

	*out = s->p;
	if (s->tid != tid || from == to)
		return 0;
	/* in [from, to) modulo 2^32; the rest, older, is dropped */
	for (i = 0; i < s->n; i++)
		if (s->p[i].seq - from < to - from)
			s->p[k++] = s->p[i];
	s->n = 0;
	return k;
}
