/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The CUDA driver libraries record probes from its start. */
#ifndef TT_CUDAPROBE_H
#define TT_CUDAPROBE_H

#include <stdlib.h>

struct tt_collector;

/* Probes the named libraries (names[i], already opened as lib_fds[i]: one
 * without the functions is an error), those the traced processes map and
 * the system's; later loads are caught by the collector when a traced
 * process opens one. 0, or -1 after a one-line message on stderr. */
int tt_record_probe_cuda(struct tt_collector *c, const char *const *names,
			 int nnames, const int *lib_fds,
			 const char *gpu_probes);

#endif /* TT_CUDAPROBE_H */
