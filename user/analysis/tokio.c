// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tokio's workers (docs/design.md §4.4, "A helper that answers the pool"):
 * a work-stealing runtime runs a request's task on whichever worker is
 * free, and a worker that queues a task wakes a parked sibling to steal
 * it. Those wakes are the runtime's, as Go's scheduler's are: followed,
 * never a hand-off or a pick-up.
 */
#include <string.h>
#include "cp_internal.h"

/* tokio names every thread of its pool so, workers and blocking threads
 * alike (a comm keeps 15 bytes of "tokio-runtime-worker") */
#define TOKIO_COMM "tokio-runtime-w"

void cp_mark_pool_workers(struct tt_critpath *cp)
{
	size_t i;

	for (i = 0; i < cp->nthreads; i++) {
		struct cp_thread *th = cp->threads[i];

		/* a worker parks on the I/O driver when it holds it; a
		 * blocking thread (spawn_blocking) never waits in epoll */
		th->pool_worker = th->has_comm &&
				  !strcmp(th->comm, TOKIO_COMM) &&
				  th->epoll_waits;
	}
}

bool cp_pool_siblings(const struct cp_thread *a, const struct cp_thread *b)
{
	return a && b && a->pool_worker && b->pool_worker && a->tgid == b->tgid;
}
