/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The flight recorder's ring (docs/design.md §11.1): the events of the last
 * window, packed (header and payload, as stored) in chunks that are freed
 * whole once they are older than the window, under a cap on bytes. What an
 * evicted event leaves behind that the analyzer needs to read what
 * follows (a connection still open, a thread's name, a runtime's lock
 * range) is kept apart and handed out first.
 */
#ifndef TT_RING_H
#define TT_RING_H

#include <stdbool.h>
#include "event.h"

struct tt_ring;

struct tt_ring_stats {
	__u64 events, bytes; /* held now, chunks' memory included */
	__u64 sticky; /* state events kept from evicted chunks */
	__u64 first_ts, last_ts; /* oldest and newest held (0: none) */
	/* chunks dropped by the byte cap while younger than the window */
	__u64 cut_chunks;
};

/* window_ns of events, at most max_bytes of chunks; NULL on -ENOMEM. */
struct tt_ring *tt_ring_new(__u64 window_ns, __u64 max_bytes);
/* Appends ev (a copy), then frees what fell out of the window. 0 or
 * -ENOMEM; an event of a type that is never stored is skipped. */
int tt_ring_add(struct tt_ring *r, const struct tt_event *ev);
/* Every held event to fn, the kept state events first (in time order),
 * then the window in the order added; stops at fn's first non-zero
 * return, which it returns. */
int tt_ring_each(const struct tt_ring *r,
		 int (*fn)(void *ctx, const struct tt_event *ev), void *ctx);
void tt_ring_stats(const struct tt_ring *r, struct tt_ring_stats *st);
void tt_ring_free(struct tt_ring *r);

#endif /* TT_RING_H */
