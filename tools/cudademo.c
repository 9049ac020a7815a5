/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cudademo: drives the stub CUDA driver library like an inference engine's
 * GPU loop, for trying ttftrace's GPU probes by hand:
 *   per iteration, one "prefill" kernel, then STEPS "decode" steps, each a
 *   kernel (or a graph) and a wait for it, then a device-to-host copy.
 *
 *   build/tools/cudademo -n 5 -p 3000 -d 500 -s 4 -m block
 *   STUBCUDA_DEVICE=/tmp/gpu0 ttftrace record -G /tmp/gpu0 \
 *           -c 'build/tools/cudademo -m block'
 *
 * The library is dlopened at start, as engines do: a tracer that probes
 * libraries as they are opened attaches while the program runs on, so -w
 * gives it time before the first launch.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stubcuda/stubcuda.h"

static const char usage[] =
	"usage: cudademo [-n ITERS] [-p PREFILL_US] [-d DECODE_US] [-s STEPS]\n"
	"                [-m spin|yield|block] [-g] [-w WAIT_MS] [-L LIBCUDA]\n"
	"  -n  iterations (default 3)     -p  prefill kernel, us (default 2000)\n"
	"  -d  decode kernel, us (500)    -s  decode steps per iteration (4)\n"
	"  -m  context sync mode (spin)   -g  decode steps as graph launches\n"
	"  -w  wait before the first launch, ms (default 0)\n"
	"  -L  library (default libcuda.so.1 next to this program)\n";

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	*out = strtoul(s, &end, 10);
	return !*end && *out <= max;
}

#define CU_TRY(call)                                                       \
	do {                                                               \
		CUresult r_ = (call);                                      \
		const char *s_ = "unknown error";                          \
		if (r_) {                                                  \
			cu.cuGetErrorString(r_, &s_);                      \
			fprintf(stderr, "cudademo: %s: %s\n", #call, s_);  \
			return 1;                                          \
		}                                                          \
	} while (0)

int main(int argc, char **argv)
{
	unsigned long iters = 3, prefill_us = 2000, decode_us = 500, steps = 4;
	unsigned long wait_ms = 0;
	unsigned int flags = CU_CTX_SCHED_SPIN;
	char lib[PATH_MAX], self[PATH_MAX], err[PATH_MAX + 64];
	const char *lib_arg = NULL;
	struct stubcuda_api cu;
	uint64_t ns, t0, t_first;
	void *params[] = { &ns };
	CUfunction prefill, decode;
	CUdeviceptr out_dev;
	bool graph = false;
	CUgraphExec ge;
	CUcontext ctx;
	CUmodule mod;
	CUstream s;
	CUgraph gr;
	ssize_t len;
	int token, opt;

	while ((opt = getopt(argc, argv, "n:p:d:s:m:gw:L:h")) != -1) {
		switch (opt) {
		case 'n':
		case 'p':
		case 'd':
		case 's':
		case 'w': {
			unsigned long *v = opt == 'n' ? &iters :
					   opt == 'p' ? &prefill_us :
					   opt == 'd' ? &decode_us :
					   opt == 's' ? &steps : &wait_ms;

			if (!parse_uint(optarg, 100000000, v)) {
				fprintf(stderr,
					"cudademo: -%c %s: want a number\n",
					opt, optarg);
				return 2;
			}
			break;
		}
		case 'm':
			if (!strcmp(optarg, "spin")) {
				flags = CU_CTX_SCHED_SPIN;
			} else if (!strcmp(optarg, "yield")) {
				flags = CU_CTX_SCHED_YIELD;
			} else if (!strcmp(optarg, "block")) {
				flags = CU_CTX_SCHED_BLOCKING_SYNC;
			} else {
				fprintf(stderr,
					"cudademo: -m %s: want spin, yield or block\n",
					optarg);
				return 2;
			}
			break;
		case 'g':
			graph = true;
			break;
		case 'L':
			lib_arg = optarg;
			break;
		default:
			fputs(usage, opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (lib_arg) {
		snprintf(lib, sizeof(lib), "%s", lib_arg);
	} else {
		len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (len <= 0) {
			fprintf(stderr, "cudademo: cannot find myself; use -L\n");
			return 2;
		}
		self[len] = '\0';
		snprintf(lib, sizeof(lib), "%s/libcuda.so.1", dirname(self));
	}
	if (stubcuda_load(&cu, lib, err, sizeof(err))) {
		fprintf(stderr, "cudademo: %s\n", err);
		return 1;
	}

	CU_TRY(cu.cuInit(0));
	CU_TRY(cu.cuCtxCreate_v2(&ctx, flags, 0));
	CU_TRY(cu.cuModuleLoadData(&mod, "cudademo"));
	CU_TRY(cu.cuModuleGetFunction(&prefill, mod, "prefill"));
	CU_TRY(cu.cuModuleGetFunction(&decode, mod, "decode"));
	CU_TRY(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU_TRY(cu.cuMemAlloc_v2(&out_dev, sizeof(token)));
	CU_TRY(cu.cuGraphCreate(&gr, 0));
	CU_TRY(cu.cuGraphInstantiateWithFlags(&ge, gr, 0));
	CU_TRY(cu.stubcuGraphSetDuration(ge, decode_us * 1000));
	if (wait_ms) {
		struct timespec ts = { .tv_sec = wait_ms / 1000,
				       .tv_nsec = wait_ms % 1000 * 1000000 };

		while (nanosleep(&ts, &ts))
			;
	}

	for (unsigned long i = 0; i < iters; i++) {
		t0 = mono_ns();
		ns = prefill_us * 1000;
		CU_TRY(cu.cuLaunchKernel(prefill, 1, 1, 1, 1, 1, 1, 0, s, params,
					 NULL));
		CU_TRY(cu.cuMemcpyDtoH_v2(&token, out_dev, sizeof(token)));
		t_first = mono_ns();
		for (unsigned long k = 0; k < steps; k++) {
			ns = decode_us * 1000;
			if (graph)
				CU_TRY(cu.cuGraphLaunch(ge, s));
			else
				CU_TRY(cu.cuLaunchKernel(decode, 1, 1, 1, 1, 1,
							 1, 0, s, params,
							 NULL));
			CU_TRY(cu.cuStreamSynchronize(s));
		}
		printf("iter %lu: first token %.3f ms, done %.3f ms\n", i,
		       (t_first - t0) / 1e6, (mono_ns() - t0) / 1e6);
	}
	CU_TRY(cu.cuCtxDestroy_v2(ctx));
	return 0;
}
