/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The reorder window (docs/design.md §3.3): events arrive slightly out of
 * timestamp order (one ring buffer for all CPUs) and leave in order, ties
 * in arrival order, once they are TT_REORDER_WINDOW_NS older than the
 * newest event seen. Events that arrive in order queue in a FIFO at O(1),
 * the few that do not go to a min-heap, and the older head of the two
 * leaves first.
 */
#ifndef TT_REORDER_H
#define TT_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include "event.h"

/* Reorder window: events are released in timestamp order once they are
 * this much older than the newest event seen. */
#define TT_REORDER_WINDOW_NS 10000000ULL

struct tt_reorder_ent;

struct tt_reorder {
	struct tt_reorder_ent *fifo; /* a ring of events that came in order */
	size_t fifo_head, fifo_n, fifo_cap;
	struct tt_reorder_ent *heap; /* those that came out of order */
	size_t heap_n, heap_cap;
	__u64 order;
	__u64 newest_ts;
	__u64 released_ts;
	bool released_any;
	__u64 late; /* arrived older than an event already released */
};

/* Receives each released event; nonzero stops and is returned. */
typedef int (*tt_reorder_fn)(void *ctx, const struct tt_event *ev);

/* Takes ev and releases to fn what the window lets go. 0, -ENOMEM or what
 * fn returned. */
int tt_reorder_add(struct tt_reorder *w, const struct tt_event *ev,
		   tt_reorder_fn fn, void *ctx);
/* Releases every event still held; the first error, after releasing all. */
int tt_reorder_drain(struct tt_reorder *w, tt_reorder_fn fn, void *ctx);
void tt_reorder_free(struct tt_reorder *w);

#endif /* TT_REORDER_H */
