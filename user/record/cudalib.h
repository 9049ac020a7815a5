/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Opening CUDA driver library candidates without trusting their paths. A
 * traced workload names the files (by opening them, or by mapping them),
 * and root opens them to put uprobes on them: every candidate is opened
 * with O_PATH (no driver open, no FIFO wait ever happens), a workload's
 * path is resolved inside that workload's own root, and only a regular
 * ELF file on a filesystem that is not served by user space is accepted.
 * The O_PATH fd then names the file for libbpf as /proc/self/fd/N, so the
 * file checked is the file probed.
 */
#ifndef TT_CUDALIB_H
#define TT_CUDALIB_H

#include <stddef.h>
#include <sys/types.h>

/* A path given by root (-L, the system's library directories): links are
 * followed. Returns an O_PATH fd, or -errno with a one-line reason. */
int tt_cudalib_open(const char *path, char *err, size_t errlen);
/* A path a traced process opened: resolved in that process's root (its
 * links cannot leave it, magic links are refused), relative ones from its
 * working directory. Returns an O_PATH fd, or -errno with the reason. */
int tt_cudalib_open_in(pid_t pid, const char *path, char *err, size_t errlen);
struct tt_mapping;
/* The file of one of pid's mappings, through /proc/PID/map_files (the
 * mapped file itself, whatever its path now names), checked the same way:
 * an O_PATH fd, or -errno with the reason. */
int tt_cudalib_open_mapping(pid_t pid, const struct tt_mapping *m, char *err,
			    size_t errlen);
/* The libcuda files pid maps, opened through /proc/PID/map_files (the
 * mapped file itself, whatever its path now names). Appends O_PATH fds to
 * *fds (grown with realloc); returns how many were added or -errno. */
int tt_cudalib_open_mapped(pid_t pid, int **fds, size_t *nfds);
/* The name libbpf is given for fd: "/proc/self/fd/N". */
void tt_cudalib_fd_path(int fd, char *buf, size_t len);

/*
 * The prober: candidates a traced process opened are checked and probed on
 * a thread of their own, so that nothing a workload does with its files
 * can stall the ring buffer's draining. Each (process, path) once.
 */
struct tt_cudalib_prober;
/* Puts the uprobes on the library fd names; the number of functions
 * probed, or -errno with a one-line reason. */
typedef int (*tt_cudalib_attach_fn)(void *ctx, int fd, const char *name,
				    char *err, size_t errlen);

struct tt_cudalib_prober *tt_cudalib_prober_start(tt_cudalib_attach_fn fn,
						  void *ctx);
/* From the ring-buffer callback: queues the candidate, never blocks on it. */
void tt_cudalib_prober_submit(struct tt_cudalib_prober *p, pid_t tgid,
			      const char *path, size_t len);
/* Takes the oldest message (a library probed, a candidate refused) into
 * buf: 1, or 0 when there is none. The record command prints them. */
int tt_cudalib_prober_message(struct tt_cudalib_prober *p, char *buf,
			      size_t len);
/* Candidates not yet looked at (for tests and the closing message). */
int tt_cudalib_prober_pending(struct tt_cudalib_prober *p);
/* Stops: fn is never called again once this returns, which is within a
 * second even if the thread is stuck in a workload's file. */
void tt_cudalib_prober_stop(struct tt_cudalib_prober *p);

#endif /* TT_CUDALIB_H */
