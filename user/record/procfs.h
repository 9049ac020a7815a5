/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What /proc says about the processes to trace. */
#ifndef TT_PROCFS_H
#define TT_PROCFS_H

#include <sys/types.h>
#include "event.h"

/* Whether pid exists (and is not a zombie). */
bool tt_proc_alive(pid_t pid);
/* The process (thread group) a thread id belongs to, or -errno. */
pid_t tt_proc_tgid(pid_t pid);
/* Descendants of root (not root itself); count, or -errno. */
int tt_proc_descendants(pid_t root, pid_t *out, int max);
/* Listening TCP ports (IPv4 and IPv6) on sockets that pid holds open. */
int tt_proc_listen_ports(pid_t pid, __u16 *ports, int max);
/* Appends one entry per thread of tgid to *procs (grown with realloc). */
int tt_proc_add_threads(pid_t tgid, struct tt_proc_info **procs,
			size_t *nprocs);

#endif /* TT_PROCFS_H */
