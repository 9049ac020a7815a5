/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stubcuda: a libcuda.so.1 that simulates one GPU on the CPU. The model is
 * described in stubcuda.h, the ioctls in nvioctl.h.
 *
 * One process-wide lock guards all state. It is never held while burning
 * launch overhead, waiting for the GPU or sleeping on the device, so the
 * lock itself adds no time that a tracer would have to explain.
 *
 * Every exported function has a body of its own (each passes its own
 * function id to the shared code) and none calls another exported
 * function: a uprobe on one symbol must fire for calls of that symbol only.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "stubcuda.h"
#include "nvioctl.h"

#define NSEC_PER_SEC 1000000000ULL
#define STUB_DRIVER_VERSION 12040
#define STUB_DEFAULT_LAUNCH_NS 4000ULL
#define STUB_MAX_LAUNCH_NS (10 * NSEC_PER_SEC)
#define STUB_MAX_DURATION_NS (600 * NSEC_PER_SEC)
#define STUB_NAME_MAX 64
#define STUB_GRAPH_FLAGS 0xfULL
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum stub_fn {
	FN_LAUNCH_KERNEL,
	FN_LAUNCH_KERNEL_PTSZ,
	FN_LAUNCH_KERNEL_EX,
	FN_LAUNCH_KERNEL_EX_PTSZ,
	FN_GRAPH_LAUNCH,
	FN_GRAPH_LAUNCH_PTSZ,
	FN_STREAM_SYNC,
	FN_STREAM_SYNC_PTSZ,
	FN_EVENT_SYNC,
	FN_CTX_SYNC,
	FN_DTOH,
	FN_DTOH_PTDS,
	FN_INIT,
	FN_CTX_CREATE,
	FN_CTX_DESTROY,
	FN_MEM_ALLOC,
	FN_MEM_FREE,
	FN_MODULE_LOAD,
	FN_MODULE_UNLOAD,
	FN_STREAM_CREATE,
	FN_STREAM_DESTROY,
	FN_EVENT_CREATE,
};

static const char *const fn_names[] = {
	[FN_LAUNCH_KERNEL] = "cuLaunchKernel",
	[FN_LAUNCH_KERNEL_PTSZ] = "cuLaunchKernel_ptsz",
	[FN_LAUNCH_KERNEL_EX] = "cuLaunchKernelEx",
	[FN_LAUNCH_KERNEL_EX_PTSZ] = "cuLaunchKernelEx_ptsz",
	[FN_GRAPH_LAUNCH] = "cuGraphLaunch",
	[FN_GRAPH_LAUNCH_PTSZ] = "cuGraphLaunch_ptsz",
	[FN_STREAM_SYNC] = "cuStreamSynchronize",
	[FN_STREAM_SYNC_PTSZ] = "cuStreamSynchronize_ptsz",
	[FN_EVENT_SYNC] = "cuEventSynchronize",
	[FN_CTX_SYNC] = "cuCtxSynchronize",
	[FN_DTOH] = "cuMemcpyDtoH_v2",
	[FN_DTOH_PTDS] = "cuMemcpyDtoH_v2_ptds",
	[FN_INIT] = "cuInit",
	[FN_CTX_CREATE] = "cuCtxCreate_v2",
	[FN_CTX_DESTROY] = "cuCtxDestroy_v2",
	[FN_MEM_ALLOC] = "cuMemAlloc_v2",
	[FN_MEM_FREE] = "cuMemFree_v2",
	[FN_MODULE_LOAD] = "cuModuleLoadData",
	[FN_MODULE_UNLOAD] = "cuModuleUnload",
	[FN_STREAM_CREATE] = "cuStreamCreate",
	[FN_STREAM_DESTROY] = "cuStreamDestroy_v2",
	[FN_EVENT_CREATE] = "cuEventCreate",
};

enum stub_sync { SYNC_SPIN, SYNC_YIELD, SYNC_BLOCK };

static const char *const sync_names[] = { "spin", "yield", "block" };

enum stub_kind {
	K_CTX,
	K_STREAM,
	K_EVENT,
	K_MODULE,
	K_FUNC,
	K_GRAPH,
	K_GRAPH_EXEC,
	K_MAX
};

/* What every handle names; handles are never reused, so stale ones fail. */
struct stub_obj {
	struct stub_obj *next;
	uintptr_t handle;
	enum stub_kind kind;
	uint32_t id; /* per kind, from 1: the ids in the log */
	struct stub_ctx *ctx; /* owner (the context itself for a context) */
};

/* one launch in a context's device queue */
struct stub_item {
	struct stub_item *next;
	uint64_t seq;
	uint64_t t_launch_enter, t_launch_exit, t_start, t_end, duration;
	uint32_t stream_id;
	enum stub_fn fn;
	pid_t tid;
	char name[STUB_NAME_MAX];
};

struct stub_ctx {
	struct stub_obj obj;
	enum stub_sync mode;
	pthread_t device;
	pthread_cond_t work; /* an item was queued, or the context stops */
	struct stub_item *head, *tail;
	bool stopping;
	uint64_t last_seq, last_end; /* last launch queued, and its end */
	uint64_t retired_seq; /* last launch the device thread retired */
};

struct stub_stream {
	struct stub_obj obj;
	uint64_t last_seq, last_end;
};

struct stub_event {
	struct stub_obj obj;
	bool recorded;
	uint64_t seq, end;
};

struct stub_func {
	struct stub_obj obj;
	uintptr_t module;
	char name[STUB_NAME_MAX];
};

struct stub_graph_exec {
	struct stub_obj obj;
	uint64_t duration;
};

struct stub_alloc {
	struct stub_alloc *next;
	struct stub_ctx *ctx;
	uintptr_t base;
	size_t size;
};

/* a thread blocked in a blocking-mode wait */
struct stub_waiter {
	struct stub_waiter *next;
	const struct stub_ctx *ctx;
	uint64_t seq;
	bool signalled; /* the awaited launch is retired */
	bool has_byte; /* a byte was written to the device for this waiter */
};

/* what a wait logs */
struct stub_sync_rec {
	enum stub_fn fn;
	enum stub_sync mode;
	uint32_t ctx_id;
	uint64_t t_enter, seq;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* waiters signalled, or device bytes taken */
	bool initialized;
	int devfd, logfd;
	char devpath[PATH_MAX];
	pid_t fifo_owner; /* the pid that created the default FIFO */
	uint64_t launch_ns;
	int sync_override; /* enum stub_sync, or -1 */
	struct stub_obj *objs;
	struct stub_alloc *allocs;
	struct stub_waiter *waiters;
	unsigned int pending_bytes; /* written for waiters, not yet read */
	uintptr_t last_handle;
	uint32_t last_id[K_MAX];
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.changed = PTHREAD_COND_INITIALIZER,
	.devfd = -1,
	.logfd = -1,
	.sync_override = -1,
	.last_handle = 0x5c0000,
};

static __thread uintptr_t current_ctx;
static __thread pid_t cached_tid;

/* ---- small helpers ---- */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static pid_t tid(void)
{
	if (!cached_tid)
		cached_tid = gettid();
	return cached_tid;
}

static bool initialized(void)
{
	return __atomic_load_n(&g.initialized, __ATOMIC_ACQUIRE);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void stub_err(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void stub_err(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "stubcuda: %s\n", line);
}

/* One write(2) per line, O_APPEND: whole lines even from many threads. */
static void log_line(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...)
{
	int fd = __atomic_load_n(&g.logfd, __ATOMIC_ACQUIRE), n;
	char line[512];
	va_list ap;

	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (write(fd, line, n) < 0) {
		/* ground truth is best effort: the API call still succeeds */
	}
}

/* kernel names go into CSV fields: no commas, no line breaks */
static void copy_name(char *dst, const char *src)
{
	size_t i;

	for (i = 0; i < STUB_NAME_MAX - 1 && src[i]; i++)
		dst[i] = (src[i] == ',' || src[i] == '\n' || src[i] == '\r') ?
				 '_' : src[i];
	dst[i] = '\0';
}

/* The launch overhead: thread CPU time, so preemption stretches it. */
static void burn_cpu(uint64_t ns)
{
	uint64_t until;

	if (!ns)
		return;
	until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		cpu_relax();
}

static void nv_ioctls(enum stub_fn api, const unsigned long *cmds, size_t n)
{
	unsigned char params[STUBNV_PARAMS_MAX] __attribute__((aligned(8)));
	uint64_t t_enter, t_exit;
	int ret, err;
	size_t i;

	for (i = 0; i < n; i++) {
		memset(params, 0, sizeof(params));
		t_enter = mono_ns();
		ret = ioctl(g.devfd, cmds[i], params);
		err = ret < 0 ? errno : 0;
		t_exit = mono_ns();
		log_line("ioctl,%s,%" PRIu64 ",%" PRIu64 ",%#lx,%d,%d,%d\n",
			 fn_names[api], t_enter, t_exit, cmds[i], ret, err,
			 (int)tid());
	}
}

#define NV_IOCTLS(api, seq)                                      \
	do {                                                     \
		static const unsigned long cmds_[] = seq;        \
		nv_ioctls((api), cmds_, ARRAY_LEN(cmds_));       \
	} while (0)

/* ---- handles (under g.lock) ---- */

static void obj_add(struct stub_obj *o, enum stub_kind kind,
		    struct stub_ctx *ctx)
{
	g.last_handle += 0x100;
	o->handle = g.last_handle;
	o->kind = kind;
	o->id = ++g.last_id[kind];
	o->ctx = ctx;
	o->next = g.objs;
	g.objs = o;
}

static struct stub_obj *obj_find(const void *handle, enum stub_kind kind)
{
	uintptr_t h = (uintptr_t)handle;
	struct stub_obj *o;

	if (!h)
		return NULL;
	for (o = g.objs; o; o = o->next)
		if (o->handle == h && o->kind == kind)
			return o;
	return NULL;
}

static void obj_unlink(struct stub_obj *o)
{
	struct stub_obj **pp;

	for (pp = &g.objs; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return;
		}
	}
}

static struct stub_ctx *ctx_current(void)
{
	return (struct stub_ctx *)obj_find((const void *)current_ctx, K_CTX);
}

/* NULL and the special handles are the current context's default stream */
static CUresult stream_resolve(CUstream h, struct stub_ctx **ctx,
			       struct stub_stream **stream)
{
	*stream = NULL;
	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
		*ctx = ctx_current();
		return *ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	}
	*stream = (struct stub_stream *)obj_find(h, K_STREAM);
	if (!*stream)
		return CUDA_ERROR_INVALID_HANDLE;
	*ctx = (*stream)->obj.ctx;
	return CUDA_SUCCESS;
}

/* the allocation holding [ptr, ptr + n) */
static struct stub_alloc *alloc_find(CUdeviceptr ptr, size_t n)
{
	struct stub_alloc *a;

	for (a = g.allocs; a; a = a->next)
		if (ptr >= a->base && n <= a->size &&
		    ptr - a->base <= a->size - n)
			return a;
	return NULL;
}

/* Device threads run code of this library: a dlclose() must not unmap it. */
static void pin_library(void)
{
	Dl_info info;

	if (dladdr((void *)pin_library, &info) && info.dli_fname)
		dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static pthread_once_t pin_once = PTHREAD_ONCE_INIT;

/* ---- the device ---- */

/* Sleeps blocked on the device fd, so the time reads as GPU time. */
static void device_sleep_until(uint64_t t)
{
	/* no events: only the timeout ends it, not bytes for waiters */
	struct pollfd pfd = { .fd = g.devfd, .events = 0 };
	struct timespec ts;
	uint64_t now, left;

	while ((now = mono_ns()) < t) {
		left = t - now;
		ts.tv_sec = left / NSEC_PER_SEC;
		ts.tv_nsec = left % NSEC_PER_SEC;
		if (ppoll(&pfd, 1, &ts, NULL) > 0) {
			/* the fd reports an error: sleep on the clock */
			ts.tv_sec = t / NSEC_PER_SEC;
			ts.tv_nsec = t % NSEC_PER_SEC;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					NULL);
		}
	}
}

/* Under g.lock: launch seq of ctx is done; wake who waits for it. */
static void retire(struct stub_ctx *ctx, uint64_t seq)
{
	static const char one = 1;
	struct stub_waiter *w;
	bool woke = false;

	ctx->retired_seq = seq;
	for (w = g.waiters; w; w = w->next) {
		if (w->signalled || w->ctx != ctx || w->seq > seq)
			continue;
		w->signalled = true;
		woke = true;
		if (write(g.devfd, &one, 1) == 1) {
			w->has_byte = true;
			g.pending_bytes++;
		}
	}
	if (woke)
		pthread_cond_broadcast(&g.changed);
}

static void *device_main(void *arg)
{
	struct stub_ctx *ctx = arg;
	struct stub_item *it;
	char name[16];

	/* end kernels on time, not up to 50 us late */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	snprintf(name, sizeof(name), "stubgpu%u", ctx->obj.id % 10000000);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&g.lock);
	for (;;) {
		while (!ctx->head && !ctx->stopping)
			pthread_cond_wait(&ctx->work, &g.lock);
		it = ctx->head;
		if (!it)
			break;
		pthread_mutex_unlock(&g.lock);
		device_sleep_until(it->t_end);
		pthread_mutex_lock(&g.lock);
		ctx->head = it->next;
		if (!ctx->head)
			ctx->tail = NULL;
		retire(ctx, it->seq);
		pthread_mutex_unlock(&g.lock);
		log_line("kernel,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%d\n",
			 ctx->obj.id, it->stream_id, it->seq,
			 it->t_launch_enter, it->t_launch_exit, it->t_start,
			 it->t_end, it->duration,
			 fn_names[it->fn], it->name, (int)it->tid);
		free(it);
		pthread_mutex_lock(&g.lock);
	}
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* Under g.lock: fixes the item's place on the GPU timeline and queues it. */
static void enqueue(struct stub_ctx *ctx, struct stub_stream *stream,
		    struct stub_item *it)
{
	it->t_launch_exit = mono_ns();
	it->t_start = it->t_launch_exit > ctx->last_end ? it->t_launch_exit :
							  ctx->last_end;
	it->t_end = it->t_start + it->duration;
	it->seq = ++ctx->last_seq;
	ctx->last_end = it->t_end;
	if (stream) {
		stream->last_seq = it->seq;
		stream->last_end = it->t_end;
	}
	if (ctx->tail) {
		ctx->tail->next = it;
	} else {
		ctx->head = it;
		pthread_cond_signal(&ctx->work);
	}
	ctx->tail = it;
}

static CUresult launch(enum stub_fn fn, const void *target,
		       unsigned int grid_x, CUstream hstream,
		       void **kernel_params)
{
	bool graph = fn == FN_GRAPH_LAUNCH || fn == FN_GRAPH_LAUNCH_PTSZ;
	uint64_t t_enter = mono_ns(), duration = 0;
	struct stub_item *item = NULL;
	struct stub_stream *stream;
	struct stub_ctx *ctx;
	struct stub_obj *o;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!graph) {
		if (!grid_x || (kernel_params && !kernel_params[0]))
			return CUDA_ERROR_INVALID_VALUE;
		duration = kernel_params ?
				   *(const uint64_t *)kernel_params[0] :
				   (uint64_t)grid_x * 1000;
		if (duration > STUB_MAX_DURATION_NS)
			return CUDA_ERROR_INVALID_VALUE;
	}
	item = calloc(1, sizeof(*item));
	if (!item)
		return CUDA_ERROR_OUT_OF_MEMORY;
	burn_cpu(g.launch_ns);

	pthread_mutex_lock(&g.lock);
	res = stream_resolve(hstream, &ctx, &stream);
	if (res)
		goto cleanup;
	o = obj_find(target, graph ? K_GRAPH_EXEC : K_FUNC);
	if (!o) {
		res = CUDA_ERROR_INVALID_HANDLE;
		goto cleanup;
	}
	if (o->ctx != ctx) {
		res = CUDA_ERROR_INVALID_CONTEXT;
		goto cleanup;
	}
	if (graph) {
		duration = ((struct stub_graph_exec *)o)->duration;
		copy_name(item->name, "graph");
	} else {
		copy_name(item->name, ((struct stub_func *)o)->name);
	}
	item->fn = fn;
	item->duration = duration;
	item->t_launch_enter = t_enter;
	item->stream_id = stream ? stream->obj.id : 0;
	item->tid = tid();
	enqueue(ctx, stream, item);
	item = NULL;
cleanup:
	pthread_mutex_unlock(&g.lock);
	free(item);
	return res;
}

/* ---- waits ---- */

static void wait_spin(uint64_t end, bool yield)
{
	while (mono_ns() < end) {
		if (yield)
			sched_yield();
		else
			cpu_relax();
	}
}

/* bytes in the FIFO that no waiter of this process was given */
static void drain_foreign(void)
{
	char buf[256];

	while (read(g.devfd, buf, sizeof(buf)) > 0)
		;
}

/*
 * Under g.lock, returns without it. Blocks in poll() on the device fd until
 * the device thread retires launch seq and writes a byte for this waiter.
 * Each waiter reads only its own byte, and only once signalled; a waiter
 * that is not signalled while bytes of others are pending waits on a
 * condition for them to be taken, so it never spins on a readable fd.
 */
static void wait_block_unlock(const struct stub_ctx *ctx, uint64_t seq)
{
	struct stub_waiter w = { .ctx = ctx, .seq = seq };
	struct pollfd pfd = { .fd = g.devfd, .events = POLLIN };
	struct stub_waiter **pp;
	char byte;
	int n;

	if (ctx->retired_seq >= seq) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	w.next = g.waiters;
	g.waiters = &w;
	while (!w.signalled) {
		if (g.pending_bytes) {
			pthread_cond_wait(&g.changed, &g.lock);
			continue;
		}
		pthread_mutex_unlock(&g.lock);
		n = poll(&pfd, 1, -1);
		pthread_mutex_lock(&g.lock);
		if (n > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
			/* no usable device fd: the condition still works */
			if (!w.signalled)
				pthread_cond_wait(&g.changed, &g.lock);
		} else if (n > 0 && !w.signalled && !g.pending_bytes) {
			drain_foreign();
		}
	}
	for (pp = &g.waiters; *pp; pp = &(*pp)->next) {
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	}
	if (w.has_byte) {
		if (read(g.devfd, &byte, 1) < 0) {
			/* taken by a reader outside this process: no matter */
		}
		if (--g.pending_bytes == 0)
			pthread_cond_broadcast(&g.changed);
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * Under g.lock, returns without it: waits for launch seq of ctx, which
 * ends at `end`, in the context's mode, and fills rec for the log.
 */
static void wait_unlock(struct stub_ctx *ctx, uint64_t seq, uint64_t end,
			struct stub_sync_rec *rec)
{
	rec->mode = ctx->mode;
	rec->ctx_id = ctx->obj.id;
	rec->seq = seq;
	if (ctx->mode == SYNC_BLOCK) {
		wait_block_unlock(ctx, seq);
	} else {
		pthread_mutex_unlock(&g.lock);
		wait_spin(end, ctx->mode == SYNC_YIELD);
	}
}

static void log_sync(const struct stub_sync_rec *rec)
{
	log_line("sync,%s,%" PRIu64 ",%" PRIu64 ",%s,%u,%d,%" PRIu64 "\n",
		 fn_names[rec->fn], rec->t_enter, mono_ns(),
		 sync_names[rec->mode], rec->ctx_id, (int)tid(), rec->seq);
}

static CUresult stream_sync(enum stub_fn fn, CUstream h)
{
	struct stub_sync_rec rec = { .fn = fn, .t_enter = mono_ns() };
	struct stub_stream *stream;
	struct stub_ctx *ctx;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	res = stream_resolve(h, &ctx, &stream);
	if (res) {
		pthread_mutex_unlock(&g.lock);
		return res;
	}
	if (stream)
		wait_unlock(ctx, stream->last_seq, stream->last_end, &rec);
	else
		wait_unlock(ctx, ctx->last_seq, ctx->last_end, &rec);
	log_sync(&rec);
	return CUDA_SUCCESS;
}

static CUresult copy_dtoh(enum stub_fn fn, void *dst, CUdeviceptr src,
			  size_t n)
{
	struct stub_sync_rec rec = { .fn = fn, .t_enter = mono_ns() };
	struct stub_alloc *a;
	struct stub_ctx *ctx;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dst && n)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = alloc_find(src, n);
	if (!a) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	ctx = a->ctx;
	wait_unlock(ctx, ctx->last_seq, ctx->last_end, &rec);
	if (n)
		memcpy(dst, (const void *)(uintptr_t)src, n);
	log_sync(&rec);
	return CUDA_SUCCESS;
}

/* ---- initialisation ---- */

static CUresult read_env(void)
{
	const char *s;
	char *end;

	g.launch_ns = STUB_DEFAULT_LAUNCH_NS;
	g.sync_override = -1;
	s = getenv("STUBCUDA_LAUNCH_NS");
	if (s && *s) {
		errno = 0;
		g.launch_ns = strtoull(s, &end, 10);
		if (*s < '0' || *s > '9' || *end || errno ||
		    g.launch_ns > STUB_MAX_LAUNCH_NS) {
			stub_err("STUBCUDA_LAUNCH_NS=%s: want ns in [0, %llu]",
				 s, STUB_MAX_LAUNCH_NS);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	s = getenv("STUBCUDA_SYNC");
	if (s && *s) {
		for (size_t i = 0; i < ARRAY_LEN(sync_names); i++)
			if (!strcmp(s, sync_names[i]))
				g.sync_override = i;
		if (g.sync_override < 0) {
			stub_err("STUBCUDA_SYNC=%s: want spin, yield or block",
				 s);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return CUDA_SUCCESS;
}

static CUresult open_log(void)
{
	static const char header[] =
		"# kernel,ctx,stream,seq,t_launch_enter_ns,t_launch_exit_ns,"
		"t_start_ns,t_end_ns,duration_ns,fn,name,tid\n"
		"# sync,fn,t_enter_ns,t_exit_ns,mode,ctx,tid,seq\n"
		"# ioctl,api,t_enter_ns,t_exit_ns,cmd,ret,errno,tid\n"
		"# device,pid,major,minor,ino,path\n";
	const char *path = getenv("STUBCUDA_LOG");
	int fd;

	if (!path || !*path)
		return CUDA_SUCCESS;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		stub_err("STUBCUDA_LOG=%s: %s", path, strerror(errno));
		return CUDA_ERROR_INVALID_VALUE;
	}
	__atomic_store_n(&g.logfd, fd, __ATOMIC_RELEASE);
	log_line("%s", header);
	return CUDA_SUCCESS;
}

static CUresult open_device(void)
{
	const char *path = getenv("STUBCUDA_DEVICE");
	bool own_default = false;
	struct stat st;
	int fd;

	if (path && *path) {
		if (strlen(path) >= sizeof(g.devpath)) {
			stub_err("STUBCUDA_DEVICE: path too long");
			return CUDA_ERROR_NO_DEVICE;
		}
		strcpy(g.devpath, path);
	} else {
		snprintf(g.devpath, sizeof(g.devpath),
			 "/tmp/stubcuda-%d.nvidia0", (int)getpid());
		own_default = true;
	}
	if (stat(g.devpath, &st) == 0) {
		if (!S_ISFIFO(st.st_mode)) {
			stub_err("device %s: exists and is not a FIFO",
				 g.devpath);
			return CUDA_ERROR_NO_DEVICE;
		}
	} else if (mkfifo(g.devpath, 0600) && errno != EEXIST) {
		stub_err("device %s: mkfifo: %s", g.devpath, strerror(errno));
		return CUDA_ERROR_NO_DEVICE;
	}
	/* O_RDWR: opening a FIFO never blocks, and it always has a writer */
	fd = open(g.devpath, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		stub_err("device %s: %s", g.devpath, strerror(errno));
		return CUDA_ERROR_NO_DEVICE;
	}
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		stub_err("device %s: not a FIFO", g.devpath);
		close(fd);
		return CUDA_ERROR_NO_DEVICE;
	}
	g.devfd = fd;
	/* named after this process: ours to remove, even if left by another */
	if (own_default)
		g.fifo_owner = getpid();
	log_line("device,%d,%u,%u,%llu,%s\n", (int)getpid(),
		 major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino, g.devpath);
	return CUDA_SUCCESS;
}

__attribute__((destructor)) static void stub_fini(void)
{
	if (g.fifo_owner && g.fifo_owner == getpid())
		unlink(g.devpath);
}

CUresult cuInit(unsigned int Flags)
{
	CUresult res = CUDA_SUCCESS;
	int logfd;

	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	if (g.initialized)
		goto cleanup;
	res = read_env();
	if (!res)
		res = open_log();
	if (!res)
		res = open_device();
	if (res) {
		logfd = __atomic_exchange_n(&g.logfd, -1, __ATOMIC_ACQ_REL);
		if (logfd >= 0)
			close(logfd);
		goto cleanup;
	}
	NV_IOCTLS(FN_INIT, STUBNV_SEQ_INIT);
	__atomic_store_n(&g.initialized, true, __ATOMIC_RELEASE);
cleanup:
	pthread_mutex_unlock(&g.lock);
	return res;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = STUB_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*device = 0;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	*count = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	snprintf(name, len, "stubcuda simulated GPU");
	return CUDA_SUCCESS;
}

static const struct {
	CUresult code;
	const char *name, *text;
} error_table[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
	  "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY",
	  "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
	  "initialization error" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
	  "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
	  "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
	  "device kernel image is invalid" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
	  "invalid device context" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
	  "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND",
	  "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
	  "operation not supported" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_lookup(CUresult error, const char **pStr, bool name)
{
	size_t i;

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < ARRAY_LEN(error_table); i++) {
		if (error_table[i].code == error) {
			*pStr = name ? error_table[i].name :
				       error_table[i].text;
			return CUDA_SUCCESS;
		}
	}
	*pStr = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	return error_lookup(error, pStr, false);
}

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	return error_lookup(error, pStr, true);
}

/* ---- contexts ---- */

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct stub_ctx *ctx;
	sigset_t all, old;
	enum stub_sync mode;
	int err;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx || (flags & ~(CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST |
				CU_CTX_LMEM_RESIZE_TO_MAX)))
		return CUDA_ERROR_INVALID_VALUE;
	switch (flags & CU_CTX_SCHED_MASK) {
	case CU_CTX_SCHED_AUTO:
	case CU_CTX_SCHED_SPIN:
		mode = SYNC_SPIN;
		break;
	case CU_CTX_SCHED_YIELD:
		mode = SYNC_YIELD;
		break;
	case CU_CTX_SCHED_BLOCKING_SYNC:
		mode = SYNC_BLOCK;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (dev != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	if (g.sync_override >= 0)
		mode = g.sync_override;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->mode = mode;
	pthread_cond_init(&ctx->work, NULL);
	pthread_once(&pin_once, pin_library);

	pthread_mutex_lock(&g.lock);
	obj_add(&ctx->obj, K_CTX, ctx);
	/* signals are for the application's threads, not the device's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&ctx->device, NULL, device_main, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		obj_unlink(&ctx->obj);
		pthread_mutex_unlock(&g.lock);
		pthread_cond_destroy(&ctx->work);
		free(ctx);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	current_ctx = ctx->obj.handle;
	*pctx = (CUcontext)ctx->obj.handle;
	pthread_mutex_unlock(&g.lock);
	NV_IOCTLS(FN_CTX_CREATE, STUBNV_SEQ_CTX_CREATE);
	return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext hctx)
{
	struct stub_obj *owned = NULL, **pp, *o;
	struct stub_alloc *allocs = NULL, **ap, *a;
	struct stub_ctx *ctx;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	ctx = (struct stub_ctx *)obj_find(hctx, K_CTX);
	if (!ctx) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	/* unlink the context and all it owns: no call can find them now */
	for (pp = &g.objs; (o = *pp);) {
		if (o->ctx == ctx) {
			*pp = o->next;
			o->next = owned;
			owned = o;
		} else {
			pp = &o->next;
		}
	}
	for (ap = &g.allocs; (a = *ap);) {
		if (a->ctx == ctx) {
			*ap = a->next;
			a->next = allocs;
			allocs = a;
		} else {
			ap = &a->next;
		}
	}
	ctx->stopping = true;
	pthread_cond_signal(&ctx->work);
	if (current_ctx == ctx->obj.handle)
		current_ctx = 0;
	pthread_mutex_unlock(&g.lock);

	/* the device thread runs what is queued, then exits */
	pthread_join(ctx->device, NULL);
	NV_IOCTLS(FN_CTX_DESTROY, STUBNV_SEQ_CTX_DESTROY);
	while ((o = owned)) {
		owned = o->next;
		if (o != &ctx->obj)
			free(o);
	}
	while ((a = allocs)) {
		allocs = a->next;
		munmap((void *)a->base, a->size);
		free(a);
	}
	pthread_cond_destroy(&ctx->work);
	free(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext hctx)
{
	CUresult res = CUDA_SUCCESS;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hctx) {
		current_ctx = 0;
		return CUDA_SUCCESS;
	}
	pthread_mutex_lock(&g.lock);
	if (obj_find(hctx, K_CTX))
		current_ctx = (uintptr_t)hctx;
	else
		res = CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_unlock(&g.lock);
	return res;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	struct stub_ctx *ctx;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	ctx = ctx_current();
	*pctx = ctx ? (CUcontext)ctx->obj.handle : NULL;
	pthread_mutex_unlock(&g.lock);
	return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	struct stub_sync_rec rec = { .fn = FN_CTX_SYNC, .t_enter = mono_ns() };
	struct stub_ctx *ctx;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	ctx = ctx_current();
	if (!ctx) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	wait_unlock(ctx, ctx->last_seq, ctx->last_end, &rec);
	log_sync(&rec);
	return CUDA_SUCCESS;
}

/* ---- objects owned by the current context ---- */

/* Creates an object of `size` bytes in the current context. */
static CUresult obj_create(size_t size, enum stub_kind kind,
			   struct stub_obj **out)
{
	struct stub_obj *o = calloc(1, size);
	struct stub_ctx *ctx;

	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	ctx = ctx_current();
	if (!ctx) {
		pthread_mutex_unlock(&g.lock);
		free(o);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	obj_add(o, kind, ctx);
	pthread_mutex_unlock(&g.lock);
	*out = o;
	return CUDA_SUCCESS;
}

static CUresult obj_destroy(const void *handle, enum stub_kind kind)
{
	struct stub_obj *o;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	o = obj_find(handle, kind);
	if (o)
		obj_unlink(o);
	pthread_mutex_unlock(&g.lock);
	if (!o)
		return CUDA_ERROR_INVALID_HANDLE;
	free(o);
	return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	struct stub_obj *o;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!module || !image)
		return CUDA_ERROR_INVALID_VALUE;
	res = obj_create(sizeof(*o), K_MODULE, &o);
	if (res)
		return res;
	*module = (CUmodule)o->handle;
	NV_IOCTLS(FN_MODULE_LOAD, STUBNV_SEQ_MODULE_LOAD);
	return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	struct stub_obj *mod, *funcs = NULL, **pp, *o;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	mod = obj_find(hmod, K_MODULE);
	if (!mod) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	obj_unlink(mod);
	for (pp = &g.objs; (o = *pp);) {
		if (o->kind == K_FUNC &&
		    ((struct stub_func *)o)->module == mod->handle) {
			*pp = o->next;
			o->next = funcs;
			funcs = o;
		} else {
			pp = &o->next;
		}
	}
	pthread_mutex_unlock(&g.lock);
	NV_IOCTLS(FN_MODULE_UNLOAD, STUBNV_SEQ_MODULE_UNLOAD);
	while ((o = funcs)) {
		funcs = o->next;
		free(o);
	}
	free(mod);
	return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
			     const char *name)
{
	struct stub_func *f = NULL;
	char key[STUB_NAME_MAX];
	struct stub_obj *mod, *o;
	CUresult res = CUDA_SUCCESS;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	if (!*name)
		return CUDA_ERROR_NOT_FOUND;
	copy_name(key, name);
	pthread_mutex_lock(&g.lock);
	mod = obj_find(hmod, K_MODULE);
	if (!mod) {
		res = CUDA_ERROR_INVALID_HANDLE;
		goto cleanup;
	}
	/* one handle per name and module, as the real driver gives */
	for (o = g.objs; o; o = o->next) {
		if (o->kind == K_FUNC &&
		    ((struct stub_func *)o)->module == mod->handle &&
		    !strcmp(((struct stub_func *)o)->name, key)) {
			*hfunc = (CUfunction)o->handle;
			goto cleanup;
		}
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		res = CUDA_ERROR_OUT_OF_MEMORY;
		goto cleanup;
	}
	f->module = mod->handle;
	strcpy(f->name, key);
	obj_add(&f->obj, K_FUNC, mod->ctx);
	*hfunc = (CUfunction)f->obj.handle;
cleanup:
	pthread_mutex_unlock(&g.lock);
	return res;
}

/* ---- memory ---- */

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct stub_alloc *a = NULL;
	CUresult res = CUDA_SUCCESS;
	struct stub_ctx *ctx;
	void *p = MAP_FAILED;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	a = calloc(1, sizeof(*a));
	/* reserved, not committed: "weights" of many GB cost nothing */
	p = mmap(NULL, bytesize, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!a || p == MAP_FAILED) {
		res = CUDA_ERROR_OUT_OF_MEMORY;
		goto cleanup;
	}
	pthread_mutex_lock(&g.lock);
	ctx = ctx_current();
	if (ctx) {
		a->ctx = ctx;
		a->base = (uintptr_t)p;
		a->size = bytesize;
		a->next = g.allocs;
		g.allocs = a;
	}
	pthread_mutex_unlock(&g.lock);
	if (!ctx) {
		res = CUDA_ERROR_INVALID_CONTEXT;
		goto cleanup;
	}
	NV_IOCTLS(FN_MEM_ALLOC, STUBNV_SEQ_MEM_ALLOC);
	*dptr = (CUdeviceptr)(uintptr_t)p;
	a = NULL;
	p = MAP_FAILED;
cleanup:
	if (p != MAP_FAILED)
		munmap(p, bytesize);
	free(a);
	return res;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct stub_alloc **ap, *a;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	for (ap = &g.allocs; (a = *ap); ap = &a->next) {
		if (a->base == dptr) {
			*ap = a->next;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	NV_IOCTLS(FN_MEM_FREE, STUBNV_SEQ_MEM_FREE);
	munmap((void *)a->base, a->size);
	free(a);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
			 size_t ByteCount)
{
	struct stub_alloc *a;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!srcHost && ByteCount)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	a = alloc_find(dstDevice, ByteCount);
	pthread_mutex_unlock(&g.lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	if (ByteCount)
		memcpy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
			 size_t ByteCount)
{
	return copy_dtoh(FN_DTOH, dstHost, srcDevice, ByteCount);
}

CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice,
			      size_t ByteCount)
{
	return copy_dtoh(FN_DTOH_PTDS, dstHost, srcDevice, ByteCount);
}

/* ---- streams and events ---- */

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	struct stub_obj *o;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phStream || (Flags & ~CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	res = obj_create(sizeof(struct stub_stream), K_STREAM, &o);
	if (res)
		return res;
	*phStream = (CUstream)o->handle;
	NV_IOCTLS(FN_STREAM_CREATE, STUBNV_SEQ_STREAM_CREATE);
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
	CUresult res = obj_destroy(hStream, K_STREAM);

	if (!res)
		NV_IOCTLS(FN_STREAM_DESTROY, STUBNV_SEQ_STREAM_DESTROY);
	return res;
}

CUresult cuStreamQuery(CUstream hStream)
{
	struct stub_stream *stream;
	struct stub_ctx *ctx;
	uint64_t end;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	res = stream_resolve(hStream, &ctx, &stream);
	end = res ? 0 : stream ? stream->last_end : ctx->last_end;
	pthread_mutex_unlock(&g.lock);
	if (res)
		return res;
	return mono_ns() >= end ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuStreamSynchronize(CUstream hStream)
{
	return stream_sync(FN_STREAM_SYNC, hStream);
}

CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
	return stream_sync(FN_STREAM_SYNC_PTSZ, hStream);
}

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct stub_obj *o;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phEvent || (Flags & ~(CU_EVENT_BLOCKING_SYNC |
				   CU_EVENT_DISABLE_TIMING |
				   CU_EVENT_INTERPROCESS)))
		return CUDA_ERROR_INVALID_VALUE;
	res = obj_create(sizeof(struct stub_event), K_EVENT, &o);
	if (res)
		return res;
	*phEvent = (CUevent)o->handle;
	NV_IOCTLS(FN_EVENT_CREATE, STUBNV_SEQ_EVENT_CREATE);
	return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct stub_stream *stream;
	struct stub_event *ev;
	struct stub_ctx *ctx;
	CUresult res;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	ev = (struct stub_event *)obj_find(hEvent, K_EVENT);
	res = ev ? stream_resolve(hStream, &ctx, &stream) :
		   CUDA_ERROR_INVALID_HANDLE;
	if (!res && ctx != ev->obj.ctx)
		res = CUDA_ERROR_INVALID_CONTEXT;
	if (!res) {
		ev->recorded = true;
		ev->seq = stream ? stream->last_seq : ctx->last_seq;
		ev->end = stream ? stream->last_end : ctx->last_end;
	}
	pthread_mutex_unlock(&g.lock);
	return res;
}

CUresult cuEventQuery(CUevent hEvent)
{
	struct stub_event *ev;
	uint64_t end = 0;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	ev = (struct stub_event *)obj_find(hEvent, K_EVENT);
	if (ev && ev->recorded)
		end = ev->end;
	pthread_mutex_unlock(&g.lock);
	if (!ev)
		return CUDA_ERROR_INVALID_HANDLE;
	return mono_ns() >= end ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent hEvent)
{
	struct stub_sync_rec rec = { .fn = FN_EVENT_SYNC,
				     .t_enter = mono_ns() };
	struct stub_event *ev;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g.lock);
	ev = (struct stub_event *)obj_find(hEvent, K_EVENT);
	if (!ev) {
		pthread_mutex_unlock(&g.lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	/* never recorded: nothing to wait for */
	wait_unlock(ev->obj.ctx, ev->recorded ? ev->seq : 0,
		    ev->recorded ? ev->end : 0, &rec);
	log_sync(&rec);
	return CUDA_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent hEvent)
{
	return obj_destroy(hEvent, K_EVENT);
}

/* ---- launches ---- */

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
			unsigned int gridDimY, unsigned int gridDimZ,
			unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes,
			CUstream hStream, void **kernelParams, void **extra)
{
	return launch(FN_LAUNCH_KERNEL, f, gridDimX, hStream, kernelParams);
}

CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
			     unsigned int gridDimY, unsigned int gridDimZ,
			     unsigned int blockDimX, unsigned int blockDimY,
			     unsigned int blockDimZ,
			     unsigned int sharedMemBytes, CUstream hStream,
			     void **kernelParams, void **extra)
{
	return launch(FN_LAUNCH_KERNEL_PTSZ, f, gridDimX, hStream,
		      kernelParams);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
			  void **kernelParams, void **extra)
{
	if (!config)
		return initialized() ? CUDA_ERROR_INVALID_VALUE :
				       CUDA_ERROR_NOT_INITIALIZED;
	return launch(FN_LAUNCH_KERNEL_EX, f, config->gridDimX,
		      config->hStream, kernelParams);
}

CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra)
{
	if (!config)
		return initialized() ? CUDA_ERROR_INVALID_VALUE :
				       CUDA_ERROR_NOT_INITIALIZED;
	return launch(FN_LAUNCH_KERNEL_EX_PTSZ, f, config->gridDimX,
		      config->hStream, kernelParams);
}

/* ---- graphs ---- */

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	struct stub_obj *o;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phGraph || flags)
		return CUDA_ERROR_INVALID_VALUE;
	o = calloc(1, sizeof(*o));
	if (!o)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&g.lock);
	obj_add(o, K_GRAPH, NULL); /* a graph belongs to no context */
	pthread_mutex_unlock(&g.lock);
	*phGraph = (CUgraph)o->handle;
	return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph hGraph)
{
	return obj_destroy(hGraph, K_GRAPH);
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
				     CUgraph hGraph, unsigned long long flags)
{
	struct stub_obj *o;
	CUresult res;
	bool found;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!phGraphExec || (flags & ~STUB_GRAPH_FLAGS))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	found = obj_find(hGraph, K_GRAPH);
	pthread_mutex_unlock(&g.lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	res = obj_create(sizeof(struct stub_graph_exec), K_GRAPH_EXEC, &o);
	if (res)
		return res;
	*phGraphExec = (CUgraphExec)o->handle;
	return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	return obj_destroy(hGraphExec, K_GRAPH_EXEC);
}

CUresult stubcuGraphSetDuration(CUgraphExec hGraphExec, uint64_t ns)
{
	struct stub_graph_exec *ge;

	if (!initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ns > STUB_MAX_DURATION_NS)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g.lock);
	ge = (struct stub_graph_exec *)obj_find(hGraphExec, K_GRAPH_EXEC);
	if (ge)
		ge->duration = ns;
	pthread_mutex_unlock(&g.lock);
	return ge ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(FN_GRAPH_LAUNCH, hGraphExec, 0, hStream, NULL);
}

CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	return launch(FN_GRAPH_LAUNCH_PTSZ, hGraphExec, 0, hStream, NULL);
}
