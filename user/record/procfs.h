/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What /proc says about the processes to trace. */
#ifndef TT_PROCFS_H
#define TT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "event.h"

/* Whether pid exists (and is not a zombie). */
bool tt_proc_alive(pid_t pid);
/* The process (thread group) a thread id belongs to, or -errno. */
pid_t tt_proc_tgid(pid_t pid);
/* Its effective user id, or -errno. */
long tt_proc_euid(pid_t pid);
/* Descendants of root (not root itself); count, or -errno. */
int tt_proc_descendants(pid_t root, pid_t *out, int max);
/* Listening TCP ports (IPv4 and IPv6) on sockets that pid holds open. */
int tt_proc_listen_ports(pid_t pid, __u16 *ports, int max);
/* A file-backed mapping of a process, as /proc/PID/maps lists it. */
struct tt_mapping {
	__u64 start, end, offset;
	const char *range; /* "start-end", the name /proc/PID/map_files uses */
	const char *path;
};
/* Calls fn for each file-backed mapping of pid, in address order, until fn
 * returns non-zero (which is returned); -errno if the maps cannot be read. */
int tt_proc_mappings(pid_t pid,
		     int (*fn)(void *ctx, const struct tt_mapping *m),
		     void *ctx);
/* Appends one entry per thread of tgid to *procs (grown with realloc). */
int tt_proc_add_threads(pid_t tgid, struct tt_proc_info **procs,
			size_t *nprocs);

#endif /* TT_PROCFS_H */
