// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The CUDA driver libraries record probes from its start (cudaprobe.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "cudalib.h"
#include "cudaprobe.h"
#include "tt_arch.h"

#define MSG_LEN 512
#define MAX_TRACED_TGIDS 1024

/* Where CUDA driver libraries usually live: probed at start, so that a
 * process that loads one later is traced from its first call. */
static const char *const system_libcuda[] = {
	TT_ARCH_LIBDIR "/libcuda.so.1",
	"/usr/lib64/libcuda.so.1",
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/lib/wsl/lib/libcuda.so.1",
};

/* The CUDA driver libraries to probe from the start: named ones (checked
 * already: an error), those the traced processes map, and the system's.
 * Later loads are caught by the collector when a traced process opens one. */
int tt_record_probe_cuda(struct tt_collector *c, const char *const *names,
			 int nnames, const int *lib_fds, const char *gpu_probes)
{
	int *fds = NULL, n, err = 0;
	size_t nfds = 0;
	__u32 tgids[MAX_TRACED_TGIDS];
	char msg[MSG_LEN];

	for (int i = 0; i < nnames && !err; i++) {
		n = tt_collector_probe_cuda_fd(c, lib_fds[i], names[i], msg,
					       sizeof(msg));
		if (n < 0) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			err = -1;
		} else if (!n &&
			   strcmp(gpu_probes ? gpu_probes : "sync", "none")) {
			fprintf(stderr,
				"ttftrace: CUDA library %s: none of the CUDA driver functions ttftrace probes is in it\n",
				names[i]);
			err = -1;
		}
	}
	n = tt_collector_traced_tgids(c, tgids, MAX_TRACED_TGIDS);
	for (int i = 0; i < n && !err; i++)
		tt_cudalib_open_mapped(tgids[i], &fds, &nfds);
	for (size_t i = 0; i < sizeof(system_libcuda) / sizeof(*system_libcuda);
	     i++) {
		int fd = tt_cudalib_open(system_libcuda[i], msg, sizeof(msg));

		if (fd >= 0) {
			tt_collector_probe_cuda_fd(c, fd, system_libcuda[i],
						   msg, sizeof(msg));
			close(fd);
		}
	}
	for (size_t i = 0; i < nfds; i++) {
		if (!err &&
		    tt_collector_probe_cuda_fd(c, fds[i], "a mapped libcuda",
					       msg, sizeof(msg)) < 0)
			fprintf(stderr, "ttftrace: warning: %s\n", msg);
		close(fds[i]);
	}
	free(fds);
	return err;
}
