/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Which of the BPF object's programs a kernel gets, and their attachment. */
#ifndef TT_HOOKS_H
#define TT_HOOKS_H

#include <stddef.h>

struct ttftrace_bpf;

/* io_uring's four programs: each set to load only where this kernel's BTF
 * gives it the request where it expects it (docs/design.md §4.3). */
void tt_uring_hooks(struct ttftrace_bpf *skel);
/* Attaches every loaded program but the uprobes, the *_exit ones first;
 * 0, or -errno with a one-line reason in err. */
int tt_attach_programs(struct ttftrace_bpf *skel, char *err, size_t errlen);

/* The polls' three programs (docs/design.md §4.4): each where its syscall's
 * tracepoint is, none with TTFTRACE_POLLS=0 */
void tt_poll_hooks(struct ttftrace_bpf *skel);
/* What a kernel without program prog loses, when recording goes on
 * without it (ttftrace check); NULL when it cannot. */
const char *tt_hook_optional(const char *prog);

#endif /* TT_HOOKS_H */
