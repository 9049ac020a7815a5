/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The record side of the live core (docs/design.md §10.1): the recorder's
 * loop hands events over without a lock (a batch per poll), and a thread
 * of its own adds them to the window and re-analyses it every interval, so
 * that an analysis never holds up the draining of the ring buffer. Views
 * (top, /metrics) take copies of the latest frame and totals.
 */
#ifndef TT_LIVE_H
#define TT_LIVE_H

#include <stdbool.h>
#include "window.h"

struct tt_live;

/* Starts the analysis thread: a refresh every interval_ns. NULL on error
 * (errno set). */
struct tt_live *tt_live_start(const struct tt_window_opts *o,
			      __u64 interval_ns);
/* The recorder's thread: keeps ev for the next batch. 0 or -ENOMEM. */
int tt_live_add(struct tt_live *l, const struct tt_event *ev);
/* The recorder's thread, after each poll: hands the batch over. */
void tt_live_publish(struct tt_live *l);
/* The sort order of the frames to come. */
void tt_live_sort(struct tt_live *l, enum tt_live_sort sort);
/* A copy of the latest frame; returns its number (0: none yet). */
__u64 tt_live_frame(struct tt_live *l, struct tt_live_frame *f);
/* Asks for a frame now (a key changed the sort). */
void tt_live_kick(struct tt_live *l);
void tt_live_totals(struct tt_live *l, struct tt_live_totals *t);
/* The analysis thread's CPU time and refreshes so far. */
void tt_live_cost(struct tt_live *l, __u64 *cpu_ns, __u64 *refreshes,
		  __u64 *max_ns);
/* Last refresh (every request left counted), then stops the thread. */
void tt_live_stop(struct tt_live *l);

#endif /* TT_LIVE_H */
