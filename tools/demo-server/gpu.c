/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server --gpu: the CUDA driver library and one engine iteration as
 * kernels and a stream synchronize. */
#include "demo-server.h"

/* ------------------------------------------------------------------ GPU */

/* a failed driver call: its error, one line, in g->err; -1 */
static int gpu_failed(struct engine_gpu *g, const char *call, CUresult r)
{
	const char *why = NULL;

	if (g->cu.cuGetErrorString(r, &why) || !why)
		why = "unknown error";
	snprintf(g->err, sizeof(g->err), "--gpu: %s: %s (%d)", call, why,
		 (int)r);
	return -1;
}

/* --gpu-lib, else libcuda.so.1 in this program's directory */
static int gpu_lib_path(const struct server_opts *o, char *buf, size_t size)
{
	char self[PATH_MAX - 16];	/* room for "/libcuda.so.1" */
	ssize_t n;
	char *slash;

	if (o->gpu_lib) {
		snprintf(buf, size, "%s", o->gpu_lib);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	snprintf(buf, size, "%s/libcuda.so.1", self);
	return 0;
}

/*
 * Loads the driver library and sets up a context for the calling thread:
 * done by the engine thread as it starts, so that the library is opened
 * after startup, as engines do (a tracer started before sees the dlopen).
 * 0, or -1 with a one-line reason in g->err.
 */
int engine_gpu_open(struct engine_gpu *g, const struct server_opts *o)
{
	unsigned int flags = o->gpu_sync == GPU_SYNC_BLOCK ?
			     CU_CTX_SCHED_BLOCKING_SYNC : CU_CTX_SCHED_SPIN;
	char lib[PATH_MAX], why[PATH_MAX + 64];
	CUmodule mod;
	CUdevice dev;
	CUresult r;

	if (gpu_lib_path(o, lib, sizeof(lib))) {
		snprintf(g->err, sizeof(g->err), "--gpu: cannot find this "
			 "program's directory: give --gpu-lib");
		return -1;
	}
	if (stubcuda_load(&g->cu, lib, why, sizeof(why))) {
		snprintf(g->err, sizeof(g->err), "--gpu: %s", why);
		return -1;
	}
	r = g->cu.cuInit(0);
	if (r)
		return gpu_failed(g, "cuInit", r);
	r = g->cu.cuDeviceGet(&dev, 0);
	if (r)
		return gpu_failed(g, "cuDeviceGet", r);
	r = g->cu.cuCtxCreate_v2(&g->ctx, flags, dev);
	if (r) {
		g->ctx = NULL;
		return gpu_failed(g, "cuCtxCreate", r);
	}
	r = g->cu.cuModuleLoadData(&mod, "demo-server");
	if (r)
		return gpu_failed(g, "cuModuleLoadData", r);
	r = g->cu.cuModuleGetFunction(&g->prefill, mod, "prefill");
	if (!r)
		r = g->cu.cuModuleGetFunction(&g->decode, mod, "decode");
	if (r)
		return gpu_failed(g, "cuModuleGetFunction", r);
	r = g->cu.cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING);
	if (r)
		return gpu_failed(g, "cuStreamCreate", r);
	return 0;
}

/* the context and all in it; the library stays loaded (no dlclose) */
void engine_gpu_close(struct engine_gpu *g)
{
	if (g->ctx)
		g->cu.cuCtxDestroy_v2(g->ctx);
	g->ctx = NULL;
}

/* a driver call that failed mid-run: said once, the work is skipped */
static void engine_gpu_error(struct engine_gpu *g, const char *call,
			     CUresult r)
{
	if (g->error_told)
		return;
	g->error_told = true;
	gpu_failed(g, call, r);
	fprintf(stderr, "%s: %s\n", prog, g->err);
}

/*
 * How many of the step's kernels are prefill kernels: in proportion to the
 * prefill's share of the time, at least one of each kind when both have
 * time.
 */
static int gpu_prefill_kernels(int nk, uint64_t prefill_ns,
			       uint64_t decode_ns)
{
	uint64_t np;

	if (!prefill_ns)
		return 0;
	if (!decode_ns || nk == 1)
		return nk;
	np = (2 * nk * prefill_ns + prefill_ns + decode_ns) /
	     (2 * (prefill_ns + decode_ns));
	if (np < 1)
		np = 1;
	if (np > (uint64_t)nk - 1)
		np = nk - 1;
	return (int)np;
}

/* kernel i's share of its kind's time; the last one takes the remainder */
static uint64_t gpu_kernel_ns(int i, int np, int nk, uint64_t prefill_ns,
			      uint64_t decode_ns)
{
	uint64_t share = i < np ? prefill_ns : decode_ns;
	int count = i < np ? np : nk - np, k = i < np ? i : i - np;
	uint64_t ns = share / count;

	if (k == count - 1)
		ns += share % count;
	/* one kernel of both kinds (--kernels-per-step 1) */
	if (np == nk && i == nk - 1)
		ns += decode_ns;
	return ns;
}

/*
 * One iteration's compute on the GPU: --kernels-per-step launches whose
 * simulated durations add up to prefill_ns + decode_ns (prefill kernels
 * first), then a sync on the stream. The simulated timeline is the
 * stub's: a kernel starts at its launch or when the one before ends, and
 * the sync waits for the last to end; what it waited for while the GPU ran
 * is the GPU time on the critical path. Returns when the last prefill
 * kernel ended (simulated), or when the launches began if there was none.
 */
uint64_t engine_gpu_step(struct engine *e, uint64_t prefill_ns,
			 uint64_t decode_ns, struct step_cost *cost)
{
	struct engine_gpu *g = &e->gpu;
	int nk = e->srv->opts.kernels_per_step;
	int np = gpu_prefill_kernels(nk, prefill_ns, decode_ns), i;
	uint64_t wall0, cpu0, rd0, wall1, cpu1, rd1, wall2, cpu2, rd2;
	uint64_t gpu_end = 0, prefill_end, overlap, ns, t;
	void *params[] = { &ns };
	CUresult r;

	rd0 = engine_run_delay(e);
	cpu0 = thread_cpu_ns();
	wall0 = mono_ns();
	prefill_end = wall0;
	for (i = 0; i < nk; i++) {
		ns = gpu_kernel_ns(i, np, nk, prefill_ns, decode_ns);
		r = g->cu.cuLaunchKernel(i < np ? g->prefill : g->decode, 1, 1,
					 1, 1, 1, 1, 0, g->stream, params,
					 NULL);
		if (r) {
			engine_gpu_error(g, "cuLaunchKernel", r);
			break;
		}
		t = mono_ns();
		gpu_end = (t > gpu_end ? t : gpu_end) + ns;
		cost->kernel_ns += ns;
		if (i < np)
			prefill_end = gpu_end;
	}
	cpu1 = thread_cpu_ns();
	wall1 = mono_ns();
	rd1 = engine_run_delay(e);
	r = g->cu.cuStreamSynchronize(g->stream);
	wall2 = mono_ns();
	cpu2 = thread_cpu_ns();
	rd2 = engine_run_delay(e);
	if (r)
		engine_gpu_error(g, "cuStreamSynchronize", r);
	overlap = gpu_end > wall1 ? (gpu_end < wall2 ? gpu_end : wall2) -
				    wall1 : 0;
	/*
	 * A spinning waiter is on the CPU while it waits for the GPU, but
	 * for its preemptions: those are runqueue time, not GPU time.
	 */
	if (e->srv->opts.gpu_sync == GPU_SYNC_SPIN && overlap > cpu2 - cpu1)
		overlap = cpu2 - cpu1;
	cost->gpu_ns += overlap;
	cost->launch_cpu_ns += cpu1 - cpu0;
	cost->sync_wait_ns += wall2 - wall1;
	cost->sync_cpu_ns += cpu2 - cpu1;
	cost->runnable_ns += rd1 - rd0;
	if (e->srv->opts.gpu_sync == GPU_SYNC_SPIN)
		cost->runnable_ns += rd2 - rd1;
	return prefill_end < wall2 ? prefill_end : wall2;
}
