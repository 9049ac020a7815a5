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

#include <sys/types.h>
#include <linux/types.h>

enum tt_rt_kind {
	TT_RT_CPYTHON = 1, /* _PyRuntime: the GIL (3.8-3.13), runtime locks */
};

struct tt_rt_range {
	__u64 lo, hi; /* [lo, hi) in the process's address space */
	__u32 kind; /* enum tt_rt_kind */
};

/* The runtime ranges pid maps (CPython: the _PyRuntime object of the
 * python executable or libpython it maps). Fills up to max; returns how
 * many were found, or -errno when the maps cannot be read. */
int tt_rt_find(pid_t pid, struct tt_rt_range *out, int max);
/* "cpython" for TT_RT_CPYTHON; "runtime" for an unknown kind. */
const char *tt_rt_kind_name(__u32 kind);

#endif /* TT_RTLOCKS_H */
