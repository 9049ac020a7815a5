/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The stub CUDA driver library (tools/stubcuda). Each case runs in a child
 * process of its own, with its own environment and its own instance of the
 * library, which it dlopens from ${OUTPUT:-build}/tools/libcuda.so.1 as an
 * inference server loads libcuda.so.1.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tt_test.h"
#include "../tools/stubcuda/stubcuda.h"
#include "../tools/stubcuda/nvioctl.h"

#define US 1000ULL
#define MS 1000000ULL
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_FIELDS 16
#define MAX_ROWS 1024

/* the encodings, spelled out independently of nvioctl.h */
_Static_assert(NV_IOCTL_RM_ALLOC == 0xc030462bUL, "RM_ALLOC");
_Static_assert(NV_IOCTL_RM_CONTROL == 0xc020462aUL, "RM_CONTROL");
_Static_assert(NV_IOCTL_RM_FREE == 0xc0104629UL, "RM_FREE");
_Static_assert(NV_IOCTL_RM_ALLOC_MEMORY == 0xc0384627UL, "RM_ALLOC_MEMORY");
_Static_assert(NV_IOCTL_RM_MAP_MEMORY == 0xc038464eUL, "RM_MAP_MEMORY");
_Static_assert(NV_IOCTL_RM_UNMAP_MEMORY == 0xc020464fUL, "RM_UNMAP_MEMORY");
_Static_assert(NV_IOCTL_ALLOC_OS_EVENT == 0xc01046ceUL, "ALLOC_OS_EVENT");
_Static_assert(NV_IOCTL_FREE_OS_EVENT == 0xc01046cfUL, "FREE_OS_EVENT");
_Static_assert(NV_IOCTL_CARD_INFO == 0xc04846c8UL, "CARD_INFO");
_Static_assert(NV_IOCTL_REGISTER_FD == 0xc00446c9UL, "REGISTER_FD");
_Static_assert(NV_IOCTL_ATTACH_GPUS_TO_FD == 0xc00446d4UL, "ATTACH_GPUS");
_Static_assert(NV_IOCTL_CHECK_VERSION_STR == 0xc04846d2UL, "CHECK_VERSION");

static char lib_path[PATH_MAX];
static char tmp_dir[64]; /* /tmp/stubcuda-test.XXXXXX */
static struct stubcuda_api cu; /* loaded in each child */

struct row {
	int n;
	char *f[MAX_FIELDS];
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t cpu(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* times this thread blocked (voluntary context switches) */
static long blocks(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * ns this thread was on CPU or runnable (waiting for a CPU), so that "it
 * never slept" holds on a busy machine too; 0 without schedstat.
 */
static uint64_t cpu_or_runnable(void)
{
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	unsigned long long run, run_delay;
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &run, &run_delay);
	fclose(f);
	return n == 2 ? cpu() + run_delay : 0;
}

static uint64_t u64(const char *s)
{
	return strtoull(s, NULL, 0);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_dir, name);
}

#define CU_OK(call) ASSERT_EQ((call), CUDA_SUCCESS, "call")

/*
 * Runs body in a child with a clean STUBCUDA_* environment plus env
 * ("NAME=VALUE" strings, NULL-ended); a failed check in the child fails
 * the case. Returns the child's pid.
 */
static pid_t in_child(void (*body)(void), const char *const *env)
{
	static const char *const vars[] = { "STUBCUDA_DEVICE", "STUBCUDA_LOG",
					    "STUBCUDA_SYNC",
					    "STUBCUDA_LAUNCH_NS" };
	char err[PATH_MAX + 64], kv[PATH_MAX + 64], *eq;
	int status, before;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		ASSERT_FALSE("fork", "\"fork\"");
		return -1;
	}
	if (pid == 0) {
		alarm(20); /* a wait that never ends fails, not hangs */
		for (size_t i = 0; i < ARRAY_LEN(vars); i++)
			unsetenv(vars[i]);
		for (; env && *env; env++) {
			snprintf(kv, sizeof(kv), "%s", *env);
			eq = strchr(kv, '=');
			*eq = '\0';
			setenv(kv, eq + 1, 1);
		}
		if (stubcuda_load(&cu, lib_path, err, sizeof(err))) {
			fprintf(stderr, "  %s\n", err);
			exit(2);
		}
		before = tt_test.failed_checks;
		body();
		exit(tt_test.failed_checks != before);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "  child failed (status %#x)\n", status);
		tt_test.failed_checks++;
	}
	return pid;
}

/* The log's rows, split at commas; comment lines skipped. */
static int read_rows(const char *path, struct row *rows, int max, char **buf)
{
	char *line, *p;
	long size;
	FILE *f;
	int n = 0;

	*buf = NULL;
	f = fopen(path, "r");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	*buf = calloc(1, size + 1);
	if (!*buf || fread(*buf, 1, size, f) != (size_t)size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	for (p = *buf; (line = strsep(&p, "\n")) && n < max;) {
		if (!*line || *line == '#')
			continue;
		rows[n].n = 0;
		while (line && rows[n].n < MAX_FIELDS)
			rows[n].f[rows[n].n++] = strsep(&line, ",");
		n++;
	}
	return n;
}

static CUcontext setup(unsigned int flags, CUfunction *f, const char *name)
{
	CUcontext ctx = NULL;
	CUmodule mod = NULL;

	CU_OK(cu.cuInit(0));
	CU_OK(cu.cuCtxCreate_v2(&ctx, flags, 0));
	CU_OK(cu.cuModuleLoadData(&mod, "stub image"));
	CU_OK(cu.cuModuleGetFunction(f, mod, name));
	return ctx;
}

static CUresult launch_ns(CUfunction f, CUstream s, uint64_t ns)
{
	void *params[] = { &ns };

	return cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, NULL);
}

/* ---- cases ---- */

static const char *const probed_syms[] = {
	"cuLaunchKernel",	   "cuLaunchKernel_ptsz",
	"cuLaunchKernelEx",	   "cuLaunchKernelEx_ptsz",
	"cuGraphLaunch",	   "cuGraphLaunch_ptsz",
	"cuStreamSynchronize",	   "cuStreamSynchronize_ptsz",
	"cuEventSynchronize",	   "cuCtxSynchronize",
	"cuMemcpyDtoH_v2",	   "cuMemcpyDtoH_v2_ptds",
	"cuInit",		   "cuDriverGetVersion",
	"cuDeviceGet",		   "cuDeviceGetCount",
	"cuDeviceGetName",	   "cuCtxCreate_v2",
	"cuCtxDestroy_v2",	   "cuCtxSetCurrent",
	"cuModuleLoadData",	   "cuModuleGetFunction",
	"cuMemAlloc_v2",	   "cuMemFree_v2",
	"cuMemcpyHtoD_v2",	   "cuStreamCreate",
	"cuStreamDestroy_v2",	   "cuEventCreate",
	"cuEventRecord",	   "cuEventDestroy_v2",
	"cuGetErrorString",	   "cuGraphInstantiateWithFlags",
	"stubcuGraphSetDuration",
};

/* every symbol its own function: a uprobe on one fires for it alone */
static void symbols_child(void)
{
	void *addr[ARRAY_LEN(probed_syms)];
	Dl_info info;

	for (size_t i = 0; i < ARRAY_LEN(probed_syms); i++) {
		addr[i] = dlsym(cu.handle, probed_syms[i]);
		ASSERT_TRUE(addr[i], "addr[i]");
		if (!addr[i])
			continue;
		ASSERT_TRUE(dladdr(addr[i], &info) && info.dli_sname &&
				    !strcmp(info.dli_sname, probed_syms[i]),
			    "dladdr(addr[i], &info) && info.dli_sn...");
		for (size_t j = 0; j < i; j++)
			ASSERT_TRUE(addr[i] != addr[j], "distinct symbols");
	}
}

static void test_symbols(void)
{
	in_child(symbols_child, NULL);
}

static void errors_child(void)
{
	CUcontext ctx = NULL, cur = (CUcontext)1;
	CUdeviceptr dptr = 0;
	CUfunction f, f2;
	CUgraphExec ge;
	CUstream s;
	CUmodule m;
	char name[64], buf[8192];
	const char *str;
	uint64_t ns = 0;
	void *null_param[] = { NULL }, *big_param[] = { &ns };
	CUevent ev;
	int n = 0, v = 0;
	CUdevice d;

	/* before cuInit */
	ASSERT_EQ(cu.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED,
		  "cu.cuDeviceGetCount");
	ASSERT_EQ(cu.cuCtxCreate_v2(&ctx, 0, 0), CUDA_ERROR_NOT_INITIALIZED,
		  "cu.cuCtxCreate_v2");
	ASSERT_EQ(cu.cuStreamSynchronize(NULL), CUDA_ERROR_NOT_INITIALIZED,
		  "cu.cuStreamSynchronize");
	ASSERT_EQ(cu.cuLaunchKernel((CUfunction)8, 1, 1, 1, 1, 1, 1, 0, NULL,
				    NULL, NULL),
		  CUDA_ERROR_NOT_INITIALIZED, "cu.cuLaunchKernel");
	CU_OK(cu.cuDriverGetVersion(&v));
	ASSERT_GE(v, 12000, "v");
	ASSERT_EQ(cu.cuDriverGetVersion(NULL), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuDriverGetVersion");
	CU_OK(cu.cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &str));
	ASSERT_STREQ(str, "initialization error", "str");
	CU_OK(cu.cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &str));
	ASSERT_STREQ(str, "CUDA_ERROR_INVALID_VALUE", "str");
	ASSERT_EQ(cu.cuGetErrorString((CUresult)12345, &str),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuGetErrorString");
	ASSERT_NULL(str, "str");
	ASSERT_EQ(cu.cuGetErrorString(CUDA_SUCCESS, NULL),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuGetErrorString");

	ASSERT_EQ(cu.cuInit(1), CUDA_ERROR_INVALID_VALUE, "cu.cuInit");
	CU_OK(cu.cuInit(0));
	CU_OK(cu.cuInit(0));
	ASSERT_EQ(cu.cuDeviceGetCount(NULL), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuDeviceGetCount");
	CU_OK(cu.cuDeviceGetCount(&n));
	ASSERT_EQ(n, 1, "n");
	CU_OK(cu.cuDeviceGet(&d, 0));
	ASSERT_EQ(cu.cuDeviceGet(&d, 1), CUDA_ERROR_INVALID_DEVICE,
		  "cu.cuDeviceGet");
	ASSERT_EQ(cu.cuDeviceGet(NULL, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuDeviceGet");
	CU_OK(cu.cuDeviceGetName(name, sizeof(name), 0));
	ASSERT_TRUE(name[0], "name[0]");

	/* no current context */
	ASSERT_EQ(cu.cuStreamSynchronize(NULL), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuStreamSynchronize");
	ASSERT_EQ(cu.cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuCtxSynchronize");
	ASSERT_EQ(cu.cuMemAlloc_v2(&dptr, 64), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuMemAlloc_v2");
	ASSERT_EQ(cu.cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuStreamCreate");
	ASSERT_EQ(cu.cuModuleLoadData(&m, "x"), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuModuleLoadData");

	ASSERT_EQ(cu.cuCtxCreate_v2(NULL, 0, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuCtxCreate_v2");
	ASSERT_EQ(cu.cuCtxCreate_v2(&ctx, 3, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuCtxCreate_v2");
	ASSERT_EQ(cu.cuCtxCreate_v2(&ctx, 0x100, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuCtxCreate_v2");
	ASSERT_EQ(cu.cuCtxCreate_v2(&ctx, 0, 1), CUDA_ERROR_INVALID_DEVICE,
		  "cu.cuCtxCreate_v2");
	CU_OK(cu.cuCtxCreate_v2(&ctx, CU_CTX_SCHED_SPIN | CU_CTX_MAP_HOST, 0));
	CU_OK(cu.cuCtxGetCurrent(&cur));
	ASSERT_PTR_EQ(cur, ctx, "cur");

	ASSERT_EQ(cu.cuModuleLoadData(&m, NULL), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuModuleLoadData");
	CU_OK(cu.cuModuleLoadData(&m, "x"));
	ASSERT_EQ(cu.cuModuleGetFunction(&f, m, ""), CUDA_ERROR_NOT_FOUND,
		  "cu.cuModuleGetFunction");
	ASSERT_EQ(cu.cuModuleGetFunction(&f, (CUmodule)8, "k"),
		  CUDA_ERROR_INVALID_HANDLE, "cu.cuModuleGetFunction");
	CU_OK(cu.cuModuleGetFunction(&f, m, "k"));
	CU_OK(cu.cuModuleGetFunction(&f2, m, "k"));
	ASSERT_PTR_EQ(f, f2, "f");

	ASSERT_EQ(cu.cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL,
				    NULL),
		  CUDA_ERROR_INVALID_HANDLE, "cu.cuLaunchKernel");
	ASSERT_EQ(cu.cuLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuLaunchKernel");
	ASSERT_EQ(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, null_param,
				    NULL),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuLaunchKernel");
	ns = 601 * 1000 * MS;
	ASSERT_EQ(cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, big_param,
				    NULL),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuLaunchKernel");
	ASSERT_EQ(cu.cuLaunchKernelEx(NULL, f, NULL, NULL),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuLaunchKernelEx");

	ASSERT_EQ(cu.cuStreamCreate(&s, 2), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuStreamCreate");
	ASSERT_EQ(cu.cuStreamCreate(NULL, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuStreamCreate");
	CU_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU_OK(cu.cuStreamDestroy_v2(s));
	ASSERT_EQ(cu.cuStreamDestroy_v2(s), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuStreamDestroy_v2");
	ASSERT_EQ(cu.cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuStreamSynchronize");
	ASSERT_EQ(launch_ns(f, s, 1000), CUDA_ERROR_INVALID_HANDLE,
		  "launch_ns");
	ASSERT_EQ(cu.cuStreamDestroy_v2(NULL), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuStreamDestroy_v2");

	ASSERT_EQ(cu.cuEventCreate(&ev, 8), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuEventCreate");
	CU_OK(cu.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	CU_OK(cu.cuEventQuery(ev)); /* never recorded: complete */
	CU_OK(cu.cuEventSynchronize(ev));
	CU_OK(cu.cuEventDestroy_v2(ev));
	ASSERT_EQ(cu.cuEventSynchronize(ev), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuEventSynchronize");
	ASSERT_EQ(cu.cuEventRecord(ev, NULL), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuEventRecord");

	ASSERT_EQ(cu.cuMemAlloc_v2(&dptr, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemAlloc_v2");
	ASSERT_EQ(cu.cuMemAlloc_v2(NULL, 64), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemAlloc_v2");
	CU_OK(cu.cuMemAlloc_v2(&dptr, 4096));
	ASSERT_EQ(cu.cuMemcpyHtoD_v2(dptr, buf, 4097), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemcpyHtoD_v2");
	ASSERT_EQ(cu.cuMemcpyDtoH_v2(buf, dptr + 4000, 200),
		  CUDA_ERROR_INVALID_VALUE, "cu.cuMemcpyDtoH_v2");
	ASSERT_EQ(cu.cuMemcpyDtoH_v2(NULL, dptr, 16), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemcpyDtoH_v2");
	CU_OK(cu.cuMemcpyHtoD_v2(dptr + 96, buf, 4000));
	ASSERT_EQ(cu.cuMemFree_v2(dptr + 1), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemFree_v2");
	CU_OK(cu.cuMemFree_v2(dptr));
	ASSERT_EQ(cu.cuMemFree_v2(dptr), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemFree_v2");

	ASSERT_EQ(cu.cuGraphInstantiateWithFlags(&ge, (CUgraph)8, 0),
		  CUDA_ERROR_INVALID_HANDLE, "cu.cuGraphInstantiateWithFlags");
	ASSERT_EQ(cu.stubcuGraphSetDuration((CUgraphExec)8, 1),
		  CUDA_ERROR_INVALID_HANDLE, "cu.stubcuGraphSetDuration");
	ASSERT_EQ(cu.cuGraphLaunch((CUgraphExec)8, NULL),
		  CUDA_ERROR_INVALID_HANDLE, "cu.cuGraphLaunch");

	/* a destroyed context and everything it owned are gone */
	CU_OK(cu.cuStreamCreate(&s, 0));
	CU_OK(cu.cuCtxDestroy_v2(ctx));
	CU_OK(cu.cuCtxGetCurrent(&cur));
	ASSERT_NULL(cur, "cur");
	ASSERT_EQ(cu.cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuStreamSynchronize");
	ASSERT_EQ(cu.cuCtxSetCurrent(ctx), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuCtxSetCurrent");
	ASSERT_EQ(cu.cuCtxDestroy_v2(ctx), CUDA_ERROR_INVALID_CONTEXT,
		  "cu.cuCtxDestroy_v2");
	ASSERT_EQ(cu.cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuModuleUnload");
}

static void test_errors(void)
{
	in_child(errors_child, NULL);
}

/* spin: the waiter stays on CPU until the GPU is done */
static void spin_child(void)
{
	uint64_t t0, w0, w1, r0, r1;
	CUcontext ctx;
	CUfunction f;
	long b0;

	ctx = setup(CU_CTX_SCHED_SPIN, &f, "prefill");
	cpu_or_runnable(); /* warm up: the first fopen can be slow */
	t0 = mono();
	/* long enough that a pause of this VM's vCPU (steal, counted in
	 * neither figure: 5-9 ms seen) cannot take a fifth of it */
	CU_OK(launch_ns(f, NULL, 30 * MS));
	CU_OK(launch_ns(f, NULL, 20 * MS));
	CU_OK(launch_ns(f, NULL, 10 * MS));
	/* no kernelParams: gridDimX us */
	CU_OK(cu.cuLaunchKernel(f, 500, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	r0 = cpu_or_runnable();
	b0 = blocks();
	w0 = mono();
	CU_OK(cu.cuStreamSynchronize(NULL));
	w1 = mono();
	/* never blocked: on CPU, or preempted on a busy machine */
	ASSERT_EQ(blocks() - b0, 0, "blocks() - b0");
	r1 = cpu_or_runnable();
	ASSERT_GE(w1 - t0, 60500 * US, "w1 - t0");
	if (r0 && w1 - w0 >= 1 * MS)
		ASSERT_GE((r1 - r0) * 10, (w1 - w0) * 8, "(r1 - r0) * 10");
	w0 = mono();
	CU_OK(cu.cuCtxSynchronize()); /* nothing left */
	ASSERT_LT(mono() - w0, 50 * MS, "mono() - w0");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_spin_sync(void)
{
	in_child(spin_child, NULL);
}

/* blocking: the waiter sleeps in poll() on the device fd */
static void block_child(void)
{
	uint64_t t0, w0, w1, c0, c1;
	CUcontext ctx;
	CUfunction f;
	long b0;

	ctx = setup(CU_CTX_SCHED_BLOCKING_SYNC, &f, "decode");
	t0 = mono();
	CU_OK(launch_ns(f, NULL, 4 * MS));
	CU_OK(launch_ns(f, NULL, 3 * MS));
	CU_OK(launch_ns(f, NULL, 3 * MS));
	w0 = mono();
	b0 = blocks();
	c0 = cpu();
	CU_OK(cu.cuCtxSynchronize());
	c1 = cpu();
	ASSERT_GE(blocks() - b0, 1, "blocks() - b0");
	w1 = mono();
	ASSERT_GE(w1 - t0, 10 * MS, "w1 - t0");
	ASSERT_GE(w1 - w0, 8 * MS, "w1 - w0");
	ASSERT_LT((c1 - c0) * 4, w1 - w0, "(c1 - c0) * 4");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_block_sync(void)
{
	in_child(block_child, NULL);
}

#define WAITERS 5
#define ROUNDS 4

struct waiter {
	int what; /* 0: event, 1: stream, 2: context */
	CUcontext ctx;
	CUevent ev;
	CUstream s;
	pthread_barrier_t *go, *done;
	CUresult res[ROUNDS];
	uint64_t t_enter[ROUNDS], t_exit[ROUNDS], cpu[ROUNDS];
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t c0;

	cu.cuCtxSetCurrent(w->ctx);
	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(w->go);
		w->t_enter[r] = mono();
		c0 = cpu();
		if (w->what == 0)
			w->res[r] = cu.cuEventSynchronize(w->ev);
		else if (w->what == 1)
			w->res[r] = cu.cuStreamSynchronize(w->s);
		else
			w->res[r] = cu.cuCtxSynchronize();
		w->cpu[r] = cpu() - c0;
		w->t_exit[r] = mono();
		pthread_barrier_wait(w->done);
	}
	return NULL;
}

/* several threads blocked at once, on different targets */
static void waiters_child(void)
{
	pthread_barrier_t go, done;
	struct waiter w[WAITERS];
	pthread_t th[WAITERS];
	CUstream s1, s2;
	CUevent e1, e2;
	CUcontext ctx;
	char dev[PATH_MAX];
	struct pollfd pfd;
	CUfunction f;
	uint64_t t0, wait;

	ctx = setup(CU_CTX_SCHED_BLOCKING_SYNC, &f, "decode");
	CU_OK(cu.cuStreamCreate(&s1, 0));
	CU_OK(cu.cuStreamCreate(&s2, 0));
	CU_OK(cu.cuEventCreate(&e1, 0));
	CU_OK(cu.cuEventCreate(&e2, 0));
	pthread_barrier_init(&go, NULL, WAITERS + 1);
	pthread_barrier_init(&done, NULL, WAITERS + 1);
	memset(w, 0, sizeof(w));
	w[0] = (struct waiter){ .what = 0, .ev = e1 };
	w[1] = (struct waiter){ .what = 0, .ev = e1 };
	w[2] = (struct waiter){ .what = 0, .ev = e2 };
	w[3] = (struct waiter){ .what = 1, .s = s1 };
	w[4] = (struct waiter){ .what = 2 };
	for (int i = 0; i < WAITERS; i++) {
		w[i].ctx = ctx;
		w[i].go = &go;
		w[i].done = &done;
		if (pthread_create(&th[i], NULL, waiter_main, &w[i])) {
			ASSERT_FALSE("pthread_create", "\"pthread_create\"");
			exit(1);
		}
	}
	for (int r = 0; r < ROUNDS; r++) {
		t0 = mono();
		CU_OK(launch_ns(f, s1, 3 * MS));
		CU_OK(cu.cuEventRecord(e1, s1));
		CU_OK(launch_ns(f, s2, 3 * MS));
		CU_OK(cu.cuEventRecord(e2, s2));
		CU_OK(launch_ns(f, s1, 10 * MS));
		pthread_barrier_wait(&go);
		pthread_barrier_wait(&done);
		for (int i = 0; i < WAITERS; i++) {
			CU_OK(w[i].res[r]);
			/* a long wait is a blocked one, not a spin */
			wait = w[i].t_exit[r] - w[i].t_enter[r];
			if (wait >= 1 * MS)
				ASSERT_LT(w[i].cpu[r] * 2, wait,
					  "w[i].cpu[r] * 2");
		}
		ASSERT_GE(w[0].t_exit[r] - t0, 3 * MS, "w[0].t_exit[r] - t0");
		ASSERT_GE(w[1].t_exit[r] - t0, 3 * MS, "w[1].t_exit[r] - t0");
		ASSERT_GE(w[2].t_exit[r] - t0, 6 * MS, "w[2].t_exit[r] - t0");
		ASSERT_GE(w[3].t_exit[r] - t0, 16 * MS, "w[3].t_exit[r] - t0");
		ASSERT_GE(w[4].t_exit[r] - t0, 16 * MS, "w[4].t_exit[r] - t0");
		/* an early target is not held back until the last one */
		for (int i = 0; i < 2; i++)
			if (w[i].t_enter[r] < t0 + 2 * MS)
				ASSERT_LT(w[i].t_exit[r], w[3].t_exit[r],
					  "w[i].t_exit[r]");
	}
	for (int i = 0; i < WAITERS; i++)
		pthread_join(th[i], NULL);
	/* every byte written for a waiter was read by it */
	tmp_path(dev, sizeof(dev), "dev-waiters");
	pfd.fd = open(dev, O_RDWR | O_NONBLOCK);
	pfd.events = POLLIN;
	ASSERT_GE(pfd.fd, 0, "pfd.fd");
	ASSERT_EQ(poll(&pfd, 1, 0), 0, "poll");
	close(pfd.fd);
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_block_many_waiters(void)
{
	static char dev[PATH_MAX + 32];
	const char *env[] = { dev, NULL };

	snprintf(dev, sizeof(dev), "STUBCUDA_DEVICE=%s/dev-waiters", tmp_dir);
	in_child(waiters_child, env);
}

static char env_log_path[PATH_MAX];

/* STUBCUDA_SYNC=block overrides a spinning context's flags */
static void sync_env_child(void)
{
	uint64_t w0, c0, c1, w1;
	struct row rows[MAX_ROWS];
	CUcontext ctx;
	CUfunction f;
	char *buf;
	int n, syncs = 0;

	ctx = setup(CU_CTX_SCHED_SPIN, &f, "k");
	CU_OK(launch_ns(f, NULL, 8 * MS));
	w0 = mono();
	c0 = cpu();
	CU_OK(cu.cuStreamSynchronize_ptsz(NULL));
	c1 = cpu();
	w1 = mono();
	ASSERT_GE(w1 - w0, 6 * MS, "w1 - w0");
	ASSERT_LT((c1 - c0) * 4, w1 - w0, "(c1 - c0) * 4");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
	n = read_rows(env_log_path, rows, MAX_ROWS, &buf);
	for (int i = 0; i < n; i++) {
		if (strcmp(rows[i].f[0], "sync"))
			continue;
		syncs++;
		ASSERT_TRUE(rows[i].n >= 5 &&
				    !strcmp(rows[i].f[1],
					    "cuStreamSynchronize_ptsz"),
			    "rows[i].n >= 5 && !strcmp(rows[i].f[1...");
		ASSERT_TRUE(rows[i].n >= 5 && !strcmp(rows[i].f[4], "block"),
			    "rows[i].n >= 5 && !strcmp(rows[i].f[4...");
	}
	ASSERT_EQ(syncs, 1, "syncs");
	free(buf);
}

static void test_sync_env_override(void)
{
	static char log[PATH_MAX + 32];
	const char *env[] = { "STUBCUDA_SYNC=block", log, NULL };

	tmp_path(env_log_path, sizeof(env_log_path), "sync-env.log");
	snprintf(log, sizeof(log), "STUBCUDA_LOG=%s", env_log_path);
	in_child(sync_env_child, env);
}

static void yield_child(void)
{
	uint64_t t0;
	CUcontext ctx;
	CUfunction f;

	ctx = setup(CU_CTX_SCHED_YIELD, &f, "k");
	t0 = mono();
	CU_OK(launch_ns(f, NULL, 3 * MS));
	CU_OK(cu.cuCtxSynchronize());
	ASSERT_GE(mono() - t0, 3 * MS, "mono() - t0");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_yield_sync(void)
{
	in_child(yield_child, NULL);
}

/* STUBCUDA_LAUNCH_NS=300000: each launch burns 300 us of CPU */
static void launch_overhead_child(void)
{
	uint64_t c0, c1, w0, w1;
	CUcontext ctx;
	CUfunction f;

	ctx = setup(0, &f, "k");
	w0 = mono();
	c0 = cpu();
	CU_OK(launch_ns(f, NULL, 1000));
	c1 = cpu();
	w1 = mono();
	ASSERT_GE(c1 - c0, 300 * US, "c1 - c0");
	ASSERT_LT(c1 - c0, 300 * US + 20 * MS, "c1 - c0");
	ASSERT_GE(w1 - w0, 300 * US, "w1 - w0");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void launch_default_child(void)
{
	uint64_t c0, c1;
	CUcontext ctx;
	CUfunction f;

	ctx = setup(0, &f, "k");
	c0 = cpu();
	for (int i = 0; i < 50; i++)
		CU_OK(launch_ns(f, NULL, 1000));
	c1 = cpu();
	ASSERT_GE(c1 - c0, 50 * 4 * US, "c1 - c0");
	ASSERT_LT(c1 - c0, 50 * MS, "c1 - c0");
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_launch_overhead(void)
{
	const char *env[] = { "STUBCUDA_LAUNCH_NS=300000", NULL };

	in_child(launch_overhead_child, env);
	in_child(launch_default_child, NULL);
}

/* bad settings fail cuInit, which can then be retried */
static void bad_env_child(void)
{
	char dev[PATH_MAX], reg[PATH_MAX];
	struct stat st;
	int n, fd;

	setenv("STUBCUDA_LAUNCH_NS", "12abc", 1);
	ASSERT_EQ(cu.cuInit(0), CUDA_ERROR_INVALID_VALUE, "cu.cuInit");
	setenv("STUBCUDA_LAUNCH_NS", "-5", 1);
	ASSERT_EQ(cu.cuInit(0), CUDA_ERROR_INVALID_VALUE, "cu.cuInit");
	unsetenv("STUBCUDA_LAUNCH_NS");
	setenv("STUBCUDA_SYNC", "sometimes", 1);
	ASSERT_EQ(cu.cuInit(0), CUDA_ERROR_INVALID_VALUE, "cu.cuInit");
	unsetenv("STUBCUDA_SYNC");
	setenv("STUBCUDA_LOG", "/nonexistent-dir/x.log", 1);
	ASSERT_EQ(cu.cuInit(0), CUDA_ERROR_INVALID_VALUE, "cu.cuInit");
	unsetenv("STUBCUDA_LOG");
	tmp_path(reg, sizeof(reg), "regular-file");
	fd = open(reg, O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0, "fd");
	close(fd);
	setenv("STUBCUDA_DEVICE", reg, 1);
	ASSERT_EQ(cu.cuInit(0), CUDA_ERROR_NO_DEVICE, "cu.cuInit");
	ASSERT_EQ(cu.cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED,
		  "cu.cuDeviceGetCount");
	/* a missing node is created as a FIFO, and kept */
	tmp_path(dev, sizeof(dev), "dev-new");
	setenv("STUBCUDA_DEVICE", dev, 1);
	CU_OK(cu.cuInit(0));
	CU_OK(cu.cuDeviceGetCount(&n));
	ASSERT_TRUE(!stat(dev, &st) && S_ISFIFO(st.st_mode) &&
			    (st.st_mode & 0777) == 0600,
		    "!stat(dev, &st) && S_ISFIFO(st.st_mod...");
}

static void test_bad_env(void)
{
	char dev[PATH_MAX];

	in_child(bad_env_child, NULL);
	tmp_path(dev, sizeof(dev), "dev-new");
	ASSERT_FALSE(access(dev, F_OK), "access");
}

static char default_dev[PATH_MAX];

static void default_device_child(void)
{
	struct stat st;

	CU_OK(cu.cuInit(0));
	snprintf(default_dev, sizeof(default_dev), "/tmp/stubcuda-%d.nvidia0",
		 (int)getpid());
	ASSERT_TRUE(!stat(default_dev, &st) && S_ISFIFO(st.st_mode) &&
			    (st.st_mode & 0777) == 0600 &&
			    st.st_uid == getuid(),
		    "!stat(default_dev, &st) && S_ISFIFO(s...");
}

/* without STUBCUDA_DEVICE: a FIFO of the process's own, gone at exit */
static void test_default_device(void)
{
	pid_t pid = in_child(default_device_child, NULL);

	snprintf(default_dev, sizeof(default_dev), "/tmp/stubcuda-%d.nvidia0",
		 (int)pid);
	ASSERT_TRUE(access(default_dev, F_OK) && errno == ENOENT,
		    "access(default_dev, F_OK) && errno ==...");
}

static char log_log_path[PATH_MAX], log_dev_path[PATH_MAX];

/* the ground-truth log: kernels, waits and the device node */
static void log_child(void)
{
	struct row rows[MAX_ROWS], *k[3];
	uint64_t graph_ns = 1500 * US;
	int n, nk = 0, nsync = 0, ndev = 0;
	CUlaunchConfig cfg = { 1, 1, 1, 1, 1, 1, 0, NULL, NULL, 0 };
	CUfunction prefill, decode;
	CUgraphExec ge;
	CUmodule mod;
	CUcontext ctx;
	struct stat st;
	CUgraph gr;
	CUstream s;
	uint64_t ns = 1 * MS;
	void *params[] = { &ns };
	char *buf;

	ctx = setup(CU_CTX_SCHED_AUTO, &prefill, "prefill");
	CU_OK(cu.cuModuleLoadData(&mod, "more"));
	CU_OK(cu.cuModuleGetFunction(&decode, mod, "decode,step"));
	CU_OK(cu.cuStreamCreate(&s, 0));
	CU_OK(cu.cuGraphCreate(&gr, 0));
	CU_OK(cu.cuGraphInstantiateWithFlags(&ge, gr, 0));
	CU_OK(cu.stubcuGraphSetDuration(ge, graph_ns));
	CU_OK(launch_ns(prefill, s, 2 * MS));
	CU_OK(cu.cuLaunchKernelEx(&cfg, decode, params, NULL));
	CU_OK(cu.cuGraphLaunch(ge, s));
	CU_OK(cu.cuStreamSynchronize(s));
	CU_OK(cu.cuCtxSynchronize());
	CU_OK(cu.cuCtxDestroy_v2(ctx)); /* the device thread has logged all */

	n = read_rows(log_log_path, rows, MAX_ROWS, &buf);
	ASSERT_GT(n, 0, "n");
	for (int i = 0; i < n; i++) {
		if (!strcmp(rows[i].f[0], "kernel")) {
			ASSERT_EQ(rows[i].n, 12, "rows[i].n");
			if (nk < 3 && rows[i].n == 12)
				k[nk] = &rows[i];
			nk++;
		} else if (!strcmp(rows[i].f[0], "sync")) {
			ASSERT_EQ(rows[i].n, 8, "rows[i].n");
			if (rows[i].n != 8)
				continue;
			ASSERT_STREQ(rows[i].f[4], "spin",
				     "rows[i].f[4]"); /* auto */
			ASSERT_EQ(u64(rows[i].f[7]), 3, "u64");
			ASSERT_EQ(u64(rows[i].f[6]), gettid(), "u64");
			ASSERT_GE(u64(rows[i].f[3]), u64(rows[i].f[2]), "u64");
			if (nk == 3)
				ASSERT_GE(u64(rows[i].f[3]), u64(k[2]->f[7]),
					  "u64");
			ASSERT_STREQ(rows[i].f[1],
				     nsync ? "cuCtxSynchronize" :
					     "cuStreamSynchronize",
				     "rows[i].f[1]");
			nsync++;
		} else if (!strcmp(rows[i].f[0], "device")) {
			ndev++;
			ASSERT_TRUE(rows[i].n == 6 && !stat(log_dev_path, &st),
				    "rows[i].n == 6 && !stat(log_dev_path,...");
			ASSERT_EQ(u64(rows[i].f[1]), getpid(), "u64");
			ASSERT_EQ(u64(rows[i].f[4]), st.st_ino, "u64");
			ASSERT_STREQ(rows[i].f[5], log_dev_path,
				     "rows[i].f[5]");
		}
	}
	ASSERT_EQ(nk, 3, "nk");
	ASSERT_EQ(nsync, 2, "nsync");
	ASSERT_EQ(ndev, 1, "ndev");
	if (nk == 3) {
		static const char *const fns[] = { "cuLaunchKernel",
						   "cuLaunchKernelEx",
						   "cuGraphLaunch" };
		static const char *const names[] = { "prefill", "decode_step",
						     "graph" };
		const uint64_t durs[] = { 2 * MS, 1 * MS, graph_ns };
		const uint64_t streams[] = { 1, 0, 1 };

		for (int i = 0; i < 3; i++) {
			ASSERT_EQ(u64(k[i]->f[1]), 1, "u64"); /* ctx */
			ASSERT_EQ(u64(k[i]->f[2]), streams[i], "u64");
			ASSERT_EQ(u64(k[i]->f[3]), i + 1, "u64");
			/* enter <= exit <= start, end = start + duration */
			ASSERT_LE(u64(k[i]->f[4]) + 4 * US, u64(k[i]->f[5]),
				  "u64(k[i]->f[4]) + 4 * US");
			ASSERT_LE(u64(k[i]->f[5]), u64(k[i]->f[6]), "u64");
			ASSERT_EQ(u64(k[i]->f[8]), durs[i], "u64");
			ASSERT_EQ(u64(k[i]->f[7]) - u64(k[i]->f[6]), durs[i],
				  "u64");
			ASSERT_STREQ(k[i]->f[9], fns[i], "k[i].f[9]");
			ASSERT_STREQ(k[i]->f[10], names[i], "k[i].f[10]");
			ASSERT_EQ(u64(k[i]->f[11]), gettid(), "u64");
			if (i)
				ASSERT_GE(u64(k[i]->f[6]), u64(k[i - 1]->f[7]),
					  "u64");
		}
	}
	free(buf);
}

static void test_log(void)
{
	static char log[PATH_MAX + 32], dev[PATH_MAX + 32];
	const char *env[] = { log, dev, NULL };

	tmp_path(log_log_path, sizeof(log_log_path), "log.csv");
	tmp_path(log_dev_path, sizeof(log_dev_path), "dev-log");
	snprintf(log, sizeof(log), "STUBCUDA_LOG=%s", log_log_path);
	snprintf(dev, sizeof(dev), "STUBCUDA_DEVICE=%s", log_dev_path);
	in_child(log_child, env);
}

static const struct {
	const char *api;
	unsigned long cmd;
} want_ioctls[] = {
	{ "cuInit", 0xc04846d2 },	  { "cuInit", 0xc04846c8 },
	{ "cuInit", 0xc030462b },	  { "cuInit", 0xc020462a },
	{ "cuCtxCreate_v2", 0xc00446c9 }, { "cuCtxCreate_v2", 0xc00446d4 },
	{ "cuCtxCreate_v2", 0xc030462b }, { "cuCtxCreate_v2", 0xc030462b },
	{ "cuCtxCreate_v2", 0xc030462b }, { "cuCtxCreate_v2", 0xc01046ce },
	{ "cuMemAlloc_v2", 0xc030462b },  { "cuMemAlloc_v2", 0xc038464e },
	{ "cuMemFree_v2", 0xc020464f },	  { "cuMemFree_v2", 0xc0104629 },
	{ "cuModuleLoadData", 0xc0384627 },
	{ "cuModuleLoadData", 0xc038464e },
	{ "cuModuleUnload", 0xc020464f }, { "cuModuleUnload", 0xc0104629 },
	{ "cuStreamCreate", 0xc030462b }, { "cuStreamCreate", 0xc020462a },
	{ "cuStreamDestroy_v2", 0xc0104629 },
	{ "cuEventCreate", 0xc020462a },
	{ "cuCtxDestroy_v2", 0xc01046cf },
	{ "cuCtxDestroy_v2", 0xc0104629 },
	{ "cuCtxDestroy_v2", 0xc0104629 },
	{ "cuCtxDestroy_v2", 0xc0104629 },
};

static char ioctl_log_path[PATH_MAX];

/* each call's ioctls, in order, each failing with ENOTTY on the FIFO */
static void ioctls_child(void)
{
	struct row rows[MAX_ROWS], *io[64];
	CUdeviceptr dptr, bad;
	CUcontext ctx = NULL;
	CUmodule mod = NULL;
	CUfunction f;
	CUstream s;
	CUevent ev;
	int n, nio = 0;
	char *buf;

	CU_OK(cu.cuInit(0));
	CU_OK(cu.cuCtxCreate_v2(&ctx, 0, 0));
	ASSERT_EQ(cu.cuMemAlloc_v2(&bad, 0), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuMemAlloc_v2");
	CU_OK(cu.cuMemAlloc_v2(&dptr, 1 << 20));
	CU_OK(cu.cuMemFree_v2(dptr));
	CU_OK(cu.cuModuleLoadData(&mod, "img"));
	CU_OK(cu.cuModuleGetFunction(&f, mod, "k"));
	CU_OK(cu.cuModuleUnload(mod));
	CU_OK(cu.cuStreamCreate(&s, 0));
	CU_OK(cu.cuStreamDestroy_v2(s));
	CU_OK(cu.cuEventCreate(&ev, 0));
	CU_OK(cu.cuEventDestroy_v2(ev));
	CU_OK(cu.cuCtxDestroy_v2(ctx));

	n = read_rows(ioctl_log_path, rows, MAX_ROWS, &buf);
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].f[0], "ioctl") && nio < 64)
			io[nio++] = &rows[i];
	ASSERT_EQ(nio, ARRAY_LEN(want_ioctls), "nio");
	for (int i = 0; i < nio && i < (int)ARRAY_LEN(want_ioctls); i++) {
		ASSERT_EQ(io[i]->n, 8, "io[i].n");
		if (io[i]->n != 8)
			continue;
		ASSERT_STREQ(io[i]->f[1], want_ioctls[i].api, "io[i].f[1]");
		ASSERT_EQ(u64(io[i]->f[4]), want_ioctls[i].cmd, "u64");
		ASSERT_EQ(atoi(io[i]->f[5]), -1, "atoi");
		ASSERT_EQ(atoi(io[i]->f[6]), ENOTTY, "atoi");
		if (strcmp(io[i]->f[1], want_ioctls[i].api))
			fprintf(stderr, "  ioctl %d: %s, want %s\n", i,
				io[i]->f[1], want_ioctls[i].api);
	}
	free(buf);
}

static void test_ioctls(void)
{
	static char log[PATH_MAX + 32], dev[PATH_MAX + 32];
	const char *env[] = { log, dev, NULL };

	tmp_path(ioctl_log_path, sizeof(ioctl_log_path), "ioctl.csv");
	snprintf(log, sizeof(log), "STUBCUDA_LOG=%s", ioctl_log_path);
	snprintf(dev, sizeof(dev), "STUBCUDA_DEVICE=%s/dev-ioctl", tmp_dir);
	in_child(ioctls_child, env);
}

/* what strace sees: run as `test_stubcuda --ioctl-child` under strace */
static int ioctl_child_main(void)
{
	char err[PATH_MAX + 64];
	CUdeviceptr dptr;
	CUcontext ctx;

	if (stubcuda_load(&cu, lib_path, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (cu.cuInit(0) || cu.cuCtxCreate_v2(&ctx, 0, 0) ||
	    cu.cuMemAlloc_v2(&dptr, 4096))
		return 1;
	return 0;
}

static char strace_out[PATH_MAX];

/*
 * Runs `test_stubcuda --ioctl-child` under strace: NULL, or why strace
 * cannot run here. A child that fails leaves no output: the case fails.
 */
static const char *strace_run(void)
{
	char self[PATH_MAX], dev[PATH_MAX + 32];
	int status;
	ssize_t len;
	pid_t pid;

	if (system("command -v strace >/dev/null 2>&1"))
		return "strace not installed";
	if (system("strace -qq -o /dev/null true >/dev/null 2>&1"))
		return "strace cannot trace here (ptrace not allowed?)";
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return "no /proc/self/exe";
	self[len] = '\0';
	tmp_path(strace_out, sizeof(strace_out), "strace.out");
	snprintf(dev, sizeof(dev), "STUBCUDA_DEVICE=%s/dev-strace", tmp_dir);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		putenv(dev);
		/* LeakSanitizer cannot run under a ptracer */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		unsetenv("STUBCUDA_LOG");
		execlp("strace", "strace", "-f", "-qq", "-e", "trace=ioctl",
		       "-e", "raw=ioctl", "-o", strace_out, self,
		       "--ioctl-child", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "  strace of the ioctl child failed\n");
		unlink(strace_out);
	}
	return NULL;
}

/* the ioctls as the kernel saw them, in the order of want_ioctls */
static void test_strace_ioctls(void)
{
	unsigned long cmd;
	char line[512], *p;
	int n = 0;
	FILE *f;

	f = fopen(strace_out, "r");
	ASSERT_TRUE(f, "f");
	if (!f)
		return;
	/* "PID ioctl(0x3, 0xc04846d2, 0x7ffc...) = -1 ENOTTY (...)" */
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "ioctl(");
		if (!p || !(p = strchr(p, ',')))
			continue;
		cmd = strtoul(p + 1, NULL, 16);
		if (((cmd >> 8) & 0xff) != NV_IOCTL_MAGIC)
			continue;
		/* cuInit, cuCtxCreate_v2, cuMemAlloc_v2 */
		ASSERT_LT(n, 12, "n");
		if (n < 12)
			ASSERT_EQ(cmd, want_ioctls[n].cmd, "cmd");
		ASSERT_TRUE(strstr(line, "= -1 ENOTTY"), "strstr");
		n++;
	}
	fclose(f);
	ASSERT_EQ(n, 12, "n");
}

static void run_strace_case(void)
{
	const char *why = strace_run();

	if (why)
		printf("SKIP: test_strace_ioctls: %s\n", why);
	else
		TT_RUN(test_strace_ioctls);
}

/* device-to-host copies wait; two contexts, spin and blocking */
static void dtoh_child(void)
{
	unsigned char *in = malloc(1 << 20), *out = malloc(1 << 20);
	CUdeviceptr d1, d2;
	CUcontext c1, c2;
	CUfunction f1, f2;
	CUmodule mod;
	uint64_t t0, c0, w0;

	c1 = setup(CU_CTX_SCHED_SPIN, &f1, "k1");
	for (int i = 0; i < 1 << 20; i++)
		in[i] = (unsigned char)(i * 7);
	CU_OK(cu.cuMemAlloc_v2(&d1, 1 << 20));
	CU_OK(cu.cuMemcpyHtoD_v2(d1, in, 1 << 20));
	t0 = mono();
	CU_OK(launch_ns(f1, NULL, 3 * MS));
	CU_OK(cu.cuMemcpyDtoH_v2(out, d1, 1 << 20));
	ASSERT_GE(mono() - t0, 3 * MS, "mono() - t0");
	ASSERT_FALSE(memcmp(in, out, 1 << 20), "memcmp");

	CU_OK(cu.cuCtxCreate_v2(&c2, CU_CTX_SCHED_BLOCKING_SYNC, 0));
	CU_OK(cu.cuModuleLoadData(&mod, "img"));
	CU_OK(cu.cuModuleGetFunction(&f2, mod, "k2"));
	/* a function launches in its own context only */
	ASSERT_EQ(launch_ns(f1, NULL, 1000), CUDA_ERROR_INVALID_CONTEXT,
		  "launch_ns");
	CU_OK(cu.cuMemAlloc_v2(&d2, 4096));
	CU_OK(cu.cuMemcpyHtoD_v2(d2, in + 5, 4096));
	t0 = mono();
	CU_OK(launch_ns(f2, NULL, 4 * MS));
	w0 = mono();
	c0 = cpu();
	CU_OK(cu.cuMemcpyDtoH_v2_ptds(out, d2, 4096));
	ASSERT_GE(mono() - t0, 4 * MS, "mono() - t0");
	/* blocked, not spinning: a quarter of the wait at most, plus the
	 * copy's own CPU (ASan, page faults: a delayed launch leaves a short
	 * wait for it to be compared with) */
	ASSERT_LT(cpu() - c0, (mono() - w0) / 4 + MS / 2, "cpu() - c0");
	ASSERT_FALSE(memcmp(in + 5, out, 4096), "memcmp");
	CU_OK(cu.cuCtxDestroy_v2(c2));
	CU_OK(cu.cuCtxSetCurrent(c1));
	CU_OK(cu.cuCtxDestroy_v2(c1));
	free(in);
	free(out);
}

static void test_dtoh(void)
{
	in_child(dtoh_child, NULL);
}

static void query_child(void)
{
	CUcontext ctx;
	CUfunction f;
	CUstream s, s2;
	uint64_t t0;
	CUevent ev;

	ctx = setup(CU_CTX_SCHED_BLOCKING_SYNC, &f, "k");
	CU_OK(cu.cuStreamCreate(&s, 0));
	CU_OK(cu.cuEventCreate(&ev, 0));
	CU_OK(cu.cuStreamQuery(s)); /* empty */
	CU_OK(launch_ns(f, s, 20 * MS));
	CU_OK(cu.cuEventRecord(ev, s));
	ASSERT_EQ(cu.cuStreamQuery(s), CUDA_ERROR_NOT_READY,
		  "cu.cuStreamQuery");
	ASSERT_EQ(cu.cuStreamQuery(NULL), CUDA_ERROR_NOT_READY,
		  "cu.cuStreamQuery");
	ASSERT_EQ(cu.cuEventQuery(ev), CUDA_ERROR_NOT_READY, "cu.cuEventQuery");
	CU_OK(cu.cuEventSynchronize(ev));
	CU_OK(cu.cuEventQuery(ev));
	CU_OK(cu.cuStreamQuery(s));

	/* a stream waits for its own work, not for work queued after it */
	CU_OK(cu.cuStreamCreate(&s2, 0));
	t0 = mono();
	CU_OK(launch_ns(f, s, 2 * MS));
	CU_OK(launch_ns(f, s2, 50 * MS));
	CU_OK(cu.cuStreamSynchronize(s));
	ASSERT_GE(mono() - t0, 2 * MS, "mono() - t0");
	ASSERT_LT(mono() - t0, 40 * MS, "mono() - t0");
	ASSERT_EQ(cu.cuStreamQuery(s2), CUDA_ERROR_NOT_READY,
		  "cu.cuStreamQuery");
	CU_OK(cu.cuStreamSynchronize(NULL)); /* the default stream: all */
	ASSERT_GE(mono() - t0, 52 * MS, "mono() - t0");
	CU_OK(cu.cuStreamQuery(s2));
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_query(void)
{
	in_child(query_child, NULL);
}

static void graph_child(void)
{
	CUgraphExec ge, ge0;
	CUcontext ctx;
	CUfunction f;
	CUgraph gr;
	CUstream s;
	uint64_t t0;

	ctx = setup(CU_CTX_SCHED_SPIN, &f, "k");
	CU_OK(cu.cuStreamCreate(&s, 0));
	CU_OK(cu.cuGraphCreate(&gr, 0));
	ASSERT_EQ(cu.cuGraphCreate(&gr, 1), CUDA_ERROR_INVALID_VALUE,
		  "cu.cuGraphCreate");
	CU_OK(cu.cuGraphInstantiateWithFlags(&ge, gr, 0));
	CU_OK(cu.cuGraphInstantiateWithFlags(&ge0, gr, 0));
	CU_OK(cu.stubcuGraphSetDuration(ge, 4 * MS));
	t0 = mono();
	CU_OK(cu.cuGraphLaunch_ptsz(ge, s));
	CU_OK(cu.cuStreamSynchronize_ptsz(s));
	ASSERT_GE(mono() - t0, 4 * MS, "mono() - t0");
	CU_OK(cu.cuGraphLaunch(ge0, NULL)); /* no duration set: 0 ns */
	CU_OK(cu.cuCtxSynchronize());
	CU_OK(cu.cuGraphExecDestroy(ge));
	ASSERT_EQ(cu.cuGraphLaunch(ge, s), CUDA_ERROR_INVALID_HANDLE,
		  "cu.cuGraphLaunch");
	CU_OK(cu.cuGraphDestroy(gr));
	CU_OK(cu.cuCtxDestroy_v2(ctx));
}

static void test_graph(void)
{
	in_child(graph_child, NULL);
}

struct launcher {
	CUcontext ctx;
	CUfunction f;
	int fails;
};

static void *launcher_main(void *arg)
{
	struct launcher *l = arg;
	CUstream s;

	/* a new thread has no current context */
	if (launch_ns(l->f, NULL, 1000) != CUDA_ERROR_INVALID_CONTEXT)
		l->fails++;
	if (cu.cuCtxSetCurrent(l->ctx) || cu.cuStreamCreate(&s, 0)) {
		l->fails++;
		return NULL;
	}
	for (int i = 0; i < 25; i++)
		if (launch_ns(l->f, s, 20 * US))
			l->fails++;
	if (cu.cuStreamSynchronize(s) || cu.cuStreamDestroy_v2(s))
		l->fails++;
	return NULL;
}

static char threads_log_path[PATH_MAX];

/* launches from several threads: one queue, in order, none lost */
static void threads_child(void)
{
	struct launcher l[4];
	struct row rows[MAX_ROWS];
	uint64_t per_stream[5] = { 0 }, prev_end = 0, seq = 0, sid;
	pthread_t th[4];
	CUcontext ctx;
	CUfunction f;
	char *buf;
	int n;

	ctx = setup(CU_CTX_SCHED_BLOCKING_SYNC, &f, "k");
	for (int i = 0; i < 4; i++) {
		l[i] = (struct launcher){ .ctx = ctx, .f = f };
		ASSERT_FALSE(pthread_create(&th[i], NULL, launcher_main, &l[i]),
			     "pthread_create");
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ(l[i].fails, 0, "l[i].fails");
	}
	CU_OK(cu.cuCtxSynchronize());
	CU_OK(cu.cuCtxDestroy_v2(ctx));
	n = read_rows(threads_log_path, rows, MAX_ROWS, &buf);
	for (int i = 0; i < n; i++) {
		if (strcmp(rows[i].f[0], "kernel") || rows[i].n != 12)
			continue;
		ASSERT_EQ(u64(rows[i].f[3]), ++seq, "u64");
		ASSERT_GE(u64(rows[i].f[6]), prev_end, "u64");
		prev_end = u64(rows[i].f[7]);
		sid = u64(rows[i].f[2]);
		ASSERT_TRUE(sid >= 1 && sid <= 4, "sid >= 1 && sid <= 4");
		if (sid >= 1 && sid <= 4)
			per_stream[sid]++;
	}
	ASSERT_EQ(seq, 100, "seq");
	for (int i = 1; i <= 4; i++)
		ASSERT_EQ(per_stream[i], 25, "per_stream[i]");
	free(buf);
}

static void test_threads(void)
{
	static char log[PATH_MAX + 32];
	const char *env[] = { log, NULL };

	tmp_path(threads_log_path, sizeof(threads_log_path), "threads.csv");
	snprintf(log, sizeof(log), "STUBCUDA_LOG=%s", threads_log_path);
	in_child(threads_child, env);
}

/* dlclose() with a device thread running: the library stays mapped */
static void dlclose_child(void)
{
	CUresult (*count)(int *);
	CUcontext ctx;
	CUfunction f;
	void *h;
	int n;

	ctx = setup(CU_CTX_SCHED_SPIN, &f, "k");
	CU_OK(launch_ns(f, NULL, 2 * MS));
	(void)ctx;
	ASSERT_FALSE(dlclose(cu.handle), "dlclose");
	usleep(5000); /* the device thread retires the kernel meanwhile */
	h = dlopen(lib_path, RTLD_NOW | RTLD_NOLOAD);
	ASSERT_TRUE(h, "h");
	if (!h)
		return;
	count = (CUresult(*)(int *))dlsym(h, "cuDeviceGetCount");
	ASSERT_TRUE(count && count(&n) == CUDA_SUCCESS,
		    "count && count(&n) == CUDA_SUCCESS"); /* same instance */
}

static void test_dlclose(void)
{
	in_child(dlclose_child, NULL);
}

static void remove_tmp_dir(void)
{
	char path[PATH_MAX + 256];
	struct dirent *de;
	DIR *d = opendir(tmp_dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmp_dir, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(tmp_dir);
}

int main(int argc, char **argv)
{
	const char *out = getenv("OUTPUT");

	snprintf(lib_path, sizeof(lib_path), "%s/tools/libcuda.so.1",
		 out && *out ? out : "build");
	if (argc == 2 && !strcmp(argv[1], "--ioctl-child"))
		return ioctl_child_main();
	if (access(lib_path, R_OK)) {
		printf("FAIL: test_stubcuda: %s not built (make %s)\n", lib_path,
		       lib_path);
		return 1;
	}
	snprintf(tmp_dir, sizeof(tmp_dir), "/tmp/stubcuda-test.XXXXXX");
	if (!mkdtemp(tmp_dir)) {
		printf("FAIL: test_stubcuda: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	TT_RUN(test_symbols);
	TT_RUN(test_errors);
	TT_RUN(test_spin_sync);
	TT_RUN(test_block_sync);
	TT_RUN(test_block_many_waiters);
	TT_RUN(test_sync_env_override);
	TT_RUN(test_yield_sync);
	TT_RUN(test_launch_overhead);
	TT_RUN(test_bad_env);
	TT_RUN(test_default_device);
	TT_RUN(test_log);
	TT_RUN(test_ioctls);
	run_strace_case();
	TT_RUN(test_dtoh);
	TT_RUN(test_query);
	TT_RUN(test_graph);
	TT_RUN(test_threads);
	TT_RUN(test_dlclose);
	remove_tmp_dir();
	TT_EXIT();
}
