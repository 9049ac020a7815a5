/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Runtimes' own synchronization, found in a traced process's memory map: the
 * address ranges whose futex words belong to a language runtime (CPython's
 * interpreter lock and the other locks of its runtime state), never to the
 * application's hand-offs. The record command writes them into the
 * recording; the analysis never takes a wake through one of them for a
 * hand-off or a pick-up, and names the time spent waiting on them.
 */
#ifndef TT_RTLOCKS_H
#define TT_RTLOCKS_H

#include <stdbool.h>
#include <sys/types.h>
#include "event.h"

struct tt_rt_range {
	__u64 lo, hi; /* [lo, hi) in the process's address space */
	__u32 kind; /* enum tt_rt_kind */
	int fd; /* TT_RT_GO: the program (O_PATH) for its probe, else -1 */
};

/* The Go runtime's function every goroutine state change goes through */
#define TT_GO_PROBE_SYMBOL "runtime.casgstatus"


/* The runtime ranges pid maps (CPython: the _PyRuntime object of the
 * python executable or libpython it maps; Go: the whole address space of
 * a Go executable). Fills up to max; returns how many were found, or
 * -errno when the maps cannot be read. The caller closes each fd >= 0. */
int tt_rt_find(pid_t pid, struct tt_rt_range *out, int max);

/* Remembers which processes were looked at, by executable: a process is
 * looked at once, and again after an exec. */
struct tt_rt_scanner;
typedef int (*tt_rt_emit_fn)(void *ctx, pid_t tgid,
			     const struct tt_rt_range *r);

struct tt_rt_scanner *tt_rt_scanner_new(void);
/* Looks at the tgids not looked at yet; emit gets each range found, and
 * first, for a process that exec'd since ranges were found in it, a range
 * of kind 0 (those are gone). just_exec: some of them have just exec'd,
 * before their dynamic loader ran: only executables are looked at, and a
 * process whose executable holds no runtime is looked at again by the
 * next scan. 0, or the first error emit returned, or -ENOMEM. */
int tt_rt_scan(struct tt_rt_scanner *s, const __u32 *tgids, int n,
	       bool just_exec, tt_rt_emit_fn emit, void *ctx);
void tt_rt_scanner_free(struct tt_rt_scanner *s);

#endif /* TT_RTLOCKS_H */
