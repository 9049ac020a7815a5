/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What recording needs of this machine: privileges and tracefs. */
#ifndef TT_ENV_H
#define TT_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* Checks for root or CAP_BPF+CAP_PERFMON; fills err and returns false. */
bool tt_have_bpf_privileges(char *err, size_t errlen);
/* The kernel has tracepoint group:name (tracefs mounted, as below). */
bool tt_tracepoint_exists(const char *group, const char *name);
struct btf;
/* BTF tracepoint tp's argument idx (from 0, after the hook's own context)
 * is a pointer, to struct sname when sname is given (btf: the kernel's). */
bool tt_tp_arg_is_ptr(const struct btf *btf, const char *tp, int idx,
		      const char *sname);
/* Mounts tracefs at /sys/kernel/tracing if nothing provides it. */
int tt_ensure_tracefs(char *err, size_t errlen);

#endif /* TT_ENV_H */
