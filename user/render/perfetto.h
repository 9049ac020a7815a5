/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Perfetto / chrome://tracing export (docs/design.md §6.2): Chrome trace event JSON,
 * {"traceEvents":[...],"displayTimeUnit":"ns","otherData":{...}}, that
 * ui.perfetto.dev and chrome://tracing open.
 *
 * - One track per traced thread (pid = tgid, tid = tid, named from the
 *   thread's comm): its states as complete events ("X") named "running",
 *   "runnable" or "blocked: <reason>", and nested in each (cat "gpu") the
 *   GPU calls made in it, cut to it: CUDA calls by function name
 *   ("cuStreamSynchronize", args class/ret, and stage for on-CPU time),
 *   ioctls on GPU devices ("ioctl NV_ESC_RM_CONTROL", args cmd/ret).
 * - A process "requests" (pid TT_PERFETTO_REQ_PID) whose tracks are lanes
 *   of requests that do not overlap: per request an "X" span
 *   "request <id> <peer>" over [t_arrive, t_wire], nested in it the phases
 *   network.in [t_arrive, t_read), scheduler.queue [t_read, t_dispatch),
 *   processing [t_dispatch, t_first_write), network.out [t_first_write,
 *   t_wire), and nested in those the critical-path segments that are
 *   thread states (named by stage, args tid/state/reason): the reader's
 *   runqueue time and its work for other requests (scheduler.backlog)
 *   inside network.in, the walked path inside processing.
 * - Flow arrows ("s", then "f" with "bp":"e", same id) from waker to woken
 *   thread at each jump of a request's critical path, bound to the slices
 *   on those threads' tracks.
 * Timestamps are microseconds with nanosecond decimals, relative to t0, the
 * earliest event fed to the critpath or request time (otherData.t0_ns).
 */
#ifndef TT_PERFETTO_H
#define TT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>
#include "analyzer.h"
#include "critpath.h"

/* Above PID_MAX_LIMIT (4 Mi): no real process has it. */
#define TT_PERFETTO_REQ_PID 4194304u

/*
 * Writes the trace to out. cp may be NULL (no thread tracks, no arrows);
 * results may be NULL (no walk: no queue/processing split, no path), else
 * results[i] is the walk of reqs[i] (tt_critpath_walk_all). Requests with
 * t_arrive or t_wire unknown get no span. Returns 0, -ENOMEM, or -EIO when
 * writing to out failed.
 */
int tt_perfetto_write(FILE *out, const struct tt_critpath *cp,
		      const struct tt_request *reqs,
		      const struct tt_cp_result *results, size_t n);

#endif /* TT_PERFETTO_H */
