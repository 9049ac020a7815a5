/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Goroutines as threads (docs/design.md §4.10): in a Go program, the
 * OS threads (Ms) carry any goroutine, and the runtime's own futex wakes
 * between them (idle Ms, preemption of a locked goroutine, sysmon) are
 * no hand-offs. From TT_EV_GO records this pass turns the stream into
 * one of goroutines: each goroutine is a thread of its own (a tid from
 * TT_GO_TID_BASE up), switched in and out as it starts and stops on an
 * M, woken by the goroutine that readied it; an M's events while it runs
 * a goroutine are that goroutine's. Processes without TT_EV_GO records
 * pass through untouched.
 */
#ifndef TT_GOLIFT_H
#define TT_GOLIFT_H

#include "containers.h"
#include "event.h"

/* Goroutines' tids: above any kernel pid (PID_MAX_LIMIT is 2^22). */
#define TT_GO_TID_BASE 0x80000000u

struct an_golift {
	struct tt_hmap go_tgids; /* processes whose goroutines are seen */
	struct tt_hmap gs; /* (struct g, tgid) -> goroutine tid */
	struct tt_hmap cur; /* M's tid -> tid of the goroutine it runs */
	struct tt_hmap stopped; /* processes whose probe came off */
	/* goroutine tid -> GO_PARKED (no ready seen since: netpoll) or
	 * GO_EXITED (its g free for a new goroutine) */
	struct tt_hmap parked;
	__u32 ngs;
	__u64 lifted; /* goroutine state changes turned into events */
};

typedef int (*an_golift_fn)(void *ctx, const struct tt_event *ev);

/* Feeds ev (in time order) through the pass: fn gets what it becomes. */
int an_golift(struct an_golift *gl, const struct tt_event *ev,
	      an_golift_fn fn, void *ctx);
void an_golift_free(struct an_golift *gl);

#endif /* TT_GOLIFT_H */
