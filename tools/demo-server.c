/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * demo-server: a small OpenAI-style streaming completion server shaped like
 * real inference engines, for ttftrace to trace and to compare against.
 *
 * Front-end threads (one connection each, HTTP/1.1 keep-alive) read and
 * "tokenize" a request, then hand it to ONE engine thread through a
 * mutex+condvar queue. The engine runs continuous batching: at each
 * iteration boundary it admits up to --batch waiting requests, runs prefill
 * for the new ones (optionally reading their KV blocks from disk with
 * O_DIRECT), then a decode step that yields one token for every request in
 * the batch. Each token goes back to the request's front-end thread
 * (condvar or pipe), which writes it to the socket as an SSE event.
 *
 * Two more topologies: --split forks the engine into a process of its own,
 * joined to each front-end thread by a unix socket; --proxy makes this
 * instance a front-end that relays each request to another instance over
 * TCP. Every stage's time is a knob and every request leaves a ground-truth
 * row.
 *
 * With --gpu the engine thread dlopens a CUDA driver library (the stub of
 * tools/stubcuda, next to this program) when it starts, and each iteration
 * launches --kernels-per-step kernels whose simulated durations add up to
 * the iteration's prefill and decode time, then waits for them in
 * cuStreamSynchronize (spinning or blocked on the device fd, --gpu-sync).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <poll.h>
#include <sched.h>
#include <strings.h>
#include <linux/magic.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "demo_common.h"
#include "stubcuda/stubcuda.h"

#define MAX_HEADER_BYTES (64 * 1024)
#define DEFAULT_MAX_BODY (64ULL * 1024 * 1024)
#define MAX_TOKENS_LIMIT 1000000ULL
#define MAX_WORKERS 1024
#define MAX_BATCH 4096
#define EVENT_BUF 256
#define KV_ALIGN 4096
#define KV_CHUNK (1024 * 1024)	/* one pread, as a KV block load */
#define ROW_BUF 1024
#define MAX_KERNELS_PER_STEP 1024
#define GPU_ERR_LEN (PATH_MAX + 128)

/* framing, send_call, wait_mode, handoff, gpu_sync: in the order of the
 * names their options take (parse_choice returns the index) */
enum framing { FRAMING_SSE, FRAMING_CHUNKED };
/* the call that writes token events */
enum send_call { SEND_WRITE, SEND_WRITEV, SEND_SENDMSG };
enum wait_mode { WAIT_SLEEP, WAIT_SPIN };
enum handoff { HANDOFF_COND, HANDOFF_PIPE };
enum delay_kind { DELAY_FIXED, DELAY_UNIFORM, DELAY_EXP };
enum gpu_sync { GPU_SYNC_SPIN, GPU_SYNC_BLOCK };

/* how long a step takes: fixed, uniform in [a, b] or exponential of mean a */
struct delay_spec {
	enum delay_kind kind;
	uint64_t a_ns, b_ns;
};

struct server_opts {
	const char *addr;
	const char *port_file;
	const char *log_path;
	const char *kv_path;	/* --kv-file */
	const char *proxy;	/* --proxy HOST:PORT */
	const char *gpu_lib;	/* --gpu-lib; NULL: next to this program */
	int port;
	int workers;
	int batch;
	int engine_cpu;		/* -1: not pinned */
	uint64_t kv_read_bytes;
	uint64_t tokens;
	uint64_t token_interval_ns;
	uint64_t tokenize_ns_per_byte;
	uint64_t seed;
	uint64_t max_body;
	struct delay_spec prefill;
	enum wait_mode prefill_mode, decode_mode;
	enum framing framing;
	enum send_call send_call;
	enum handoff handoff;
	enum gpu_sync gpu_sync;
	int kernels_per_step;
	bool gpu;
	bool headers_with_body;
	bool split;
	bool quiet;
};

/*
 * What the engine knows of a request, CLOCK_MONOTONIC ns. It travels as is
 * from the engine process to the front-end in --split mode.
 */
struct engine_truth {
	uint64_t t_enqueue, t_dispatch;
	uint64_t t_prefill_start, t_prefill_end;
	uint64_t t_token;	/* first token handed to the front-end */
	/*
	 * Over the iteration that admitted the request, up to its first
	 * token: wall time in KV preads, and the part of it blocked (less
	 * the CPU and runqueue time in them); the engine thread's CPU time
	 * from dispatch on; wall minus CPU of the spin steps (the runqueue
	 * wait when they spin); blocked time of the sleep steps; the
	 * kernel's run_delay of the engine thread (schedstat) from the start
	 * of the iteration, and the part of it before the request was taken
	 * up (its wakeup).
	 */
	uint64_t io_ns, io_wait_ns, cpu_ns, runnable_ns, sleep_ns;
	uint64_t run_delay_ns, wake_delay_ns;
	/*
	 * --gpu, over the same iteration: the simulated GPU time its sync
	 * waited for (the kernels' time on the critical path: what the
	 * launches did not overlap), all its kernels' simulated time, the CPU
	 * time of the launches, the wall and CPU time of the sync.
	 */
	uint64_t gpu_ns, kernel_ns, launch_cpu_ns, sync_wait_ns, sync_cpu_ns;
	/*
	 * The iteration boundary it waited for: the engine's last token
	 * hand-off before taking it up; 0 when the engine was idle.
	 */
	uint64_t t_boundary;
};

/* a point of the engine thread's life: time, runqueue wait, CPU time */
struct engine_mark {
	uint64_t t, rd, cpu;
};

/*
 * One completion request. The front-end thread owns it; the engine holds a
 * pointer from enqueue until it sets done, and never touches it after.
 */
struct request {
	uint64_t id;
	int peer_port;
	size_t prompt_bytes;
	uint64_t max_tokens;
	bool stream;
	/* ground truth, CLOCK_MONOTONIC ns */
	uint64_t t_first_byte_read, t_read_done;
	uint64_t t_first_write, t_last_write;
	uint64_t tokenize_ns, tokenize_cpu_ns;
	/*
	 * The front-end thread's runqueue wait (schedstat): when the last
	 * read of the request began, from then to the first token write, and
	 * in that read (its wakeup once the last bytes came).
	 */
	uint64_t fe_rd_start, fe_run_delay, fe_read_wake;
	uint64_t tokens_written;
	int upstream_port;	/* --proxy: local port of the upstream link */
	struct engine_truth truth;
	/* engine -> front-end hand-off, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int notify_fd;		/* pipe write end for --handoff pipe, else -1 */
	int token_fd;		/* engine process: unix socket, else -1 */
	uint64_t produced;
	bool done;		/* engine released the request */
	bool aborted;		/* released because the server stops */
	bool cancelled;		/* front-end lost its client */
	struct request *next;	/* queue link, engine side */
};

struct server;
struct conn;

/* --gpu: the CUDA driver library and what the engine made with it */
struct engine_gpu {
	struct stubcuda_api cu;
	CUcontext ctx;
	CUfunction prefill, decode;
	CUstream stream;
	int status;		/* under the engine lock: 0 starting, 1 up, -1 */
	bool error_told;
	char err[GPU_ERR_LEN];	/* why it did not start */
};

struct engine {
	struct server *srv;
	pthread_t thread;
	pthread_mutex_t lock;	/* the request queue */
	pthread_cond_t cond;
	struct request *head, *tail;
	bool stopping;
	/* engine-private */
	struct request **batch;
	struct request **admitted;
	int nbatch;
	uint64_t rng;
	uint64_t iterations;
	int kv_fd;		/* O_DIRECT, -1 without --kv-file */
	void *kv_buf;
	uint64_t kv_blocks;	/* KV_ALIGN blocks where a read may start */
	uint64_t kv_rng;
	bool kv_error_told;
	int sched_fd;		/* the engine thread's schedstat, or -1 */
	struct engine_mark handoff;	/* the last token hand-off */
	bool handed_off;	/* since the engine last waited for work */
	struct engine_gpu gpu;
};

struct worker {
	struct server *srv;
	pthread_t thread;
	int index;
	int cur_fd;		/* connection served, under srv->conn_lock */
	int pipe_rd, pipe_wr;	/* token notifications for --handoff pipe */
	int engine_fd;		/* --split: unix socket to the engine */
	bool engine_gone;
	int up_fd;		/* --proxy: upstream link, under conn_lock */
	int up_port;
	struct conn *up;	/* its receive buffer */
	int sched_fd;		/* this thread's schedstat, or -1 */
};

struct server {
	struct server_opts opts;
	int listen_fd;
	int log_fd;
	pid_t engine_pid;	/* --split: the engine process, or 0 */
	int *engine_fds;	/* --split: front-end ends, one per worker */
	struct sockaddr_storage up_addr;	/* --proxy */
	socklen_t up_addrlen;
	pthread_mutex_t conn_lock;
	bool stopping;		/* under conn_lock */
	struct engine engine;
	struct worker *workers;
	int nworkers_started;
	atomic_uint_fast64_t next_id;
	atomic_uint_fast64_t n_ok, n_failed, n_http_errors;
};

/* a parsed HTTP request; pointers into the connection buffer */
struct http_req {
	char method[16];
	char path[256];
	const char *body;
	size_t body_len;
	size_t total_len;
	bool keep_alive;
	uint64_t t_first_byte_read, t_read_done;
};

struct conn {
	int fd;
	int peer_port;
	int sched_fd;		/* the worker's schedstat, or -1 */
	uint64_t rd_start;	/* its run delay when the last read began */
	uint64_t read_wake;	/* its run delay in that read */
	char *buf;
	size_t len, cap;
};

struct completion_args {
	size_t prompt_bytes;
	uint64_t max_tokens;
	bool has_max_tokens;
	bool stream;
};

static const char *prog = "demo-server";

/* one line on stderr and exit status 2 */
#define usage_error(...) demo_usage_exit(prog, __VA_ARGS__)

/* ---------------------------------------------------------------- delays */

static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static double rng_unit(uint64_t *state)
{
	return ((double)(rng_next(state) >> 11) + 1.0) / 9007199254740992.0;
}

static uint64_t delay_sample(const struct delay_spec *d, uint64_t *rng)
{
	switch (d->kind) {
	case DELAY_UNIFORM:
		return d->a_ns + rng_next(rng) % (d->b_ns - d->a_ns + 1);
	case DELAY_EXP:
		return (uint64_t)(-(double)d->a_ns * log(rng_unit(rng)));
	case DELAY_FIXED:
	default:
		return d->a_ns;
	}
}

static bool parse_us(const char *s, uint64_t *ns)
{
	uint64_t us;

	if (!parse_u64_range(s, 0, 3600ULL * 1000000, &us))
		return false;
	*ns = us * NSEC_PER_USEC;
	return true;
}

/* "N", "uniform:MIN:MAX" or "exp:MEAN", all in microseconds */
static bool parse_delay_spec(const char *s, struct delay_spec *d)
{
	char buf[128], *colon;

	if (!strncmp(s, "uniform:", 8)) {
		if (strlen(s + 8) >= sizeof(buf))
			return false;
		strcpy(buf, s + 8);
		colon = strchr(buf, ':');
		if (!colon)
			return false;
		*colon = '\0';
		d->kind = DELAY_UNIFORM;
		return parse_us(buf, &d->a_ns) &&
		       parse_us(colon + 1, &d->b_ns) && d->a_ns <= d->b_ns;
	}
	if (!strncmp(s, "exp:", 4)) {
		d->kind = DELAY_EXP;
		return parse_us(s + 4, &d->a_ns);
	}
	d->kind = DELAY_FIXED;
	return parse_us(s, &d->a_ns);
}

/* where the engine thread's time went in the steps of one iteration */
struct step_cost {
	uint64_t runnable_ns, sleep_ns, io_ns, io_wait_ns;
	uint64_t gpu_ns, kernel_ns, launch_cpu_ns, sync_wait_ns, sync_cpu_ns;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* a thread's runqueue wait so far, from its open schedstat; 0: unknown */
static uint64_t run_delay(int sched_fd)
{
	unsigned long long on_cpu, delay;
	char buf[128];
	ssize_t n;

	if (sched_fd < 0)
		return 0;
	n = pread(sched_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
		return 0;
	return delay;
}

/* the calling thread's own schedstat, to read its runqueue wait from */
static int open_sched_stat(void)
{
	return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

static uint64_t engine_run_delay(const struct engine *e)
{
	return run_delay(e->sched_fd);
}

/*
 * One stretch of "device" work; the one place later compute backends hook.
 * Spin steps stay on CPU until a wall-clock deadline, so what the thread
 * did not run of them it spent runnable; sleep steps are blocked, but for
 * the CPU and the runqueue wait around the sleep.
 */
static void engine_compute(const struct engine *e, uint64_t ns,
			   enum wait_mode mode, struct step_cost *cost)
{
	uint64_t wall0, cpu0, rd0, wall, cpu, rd;

	if (!ns)
		return;
	rd0 = engine_run_delay(e);
	wall0 = mono_ns();
	cpu0 = thread_cpu_ns();
	if (mode == WAIT_SPIN)
		spin_until_ns(wall0 + ns);
	else
		sleep_until_ns(wall0 + ns);
	wall = mono_ns() - wall0;
	cpu = thread_cpu_ns() - cpu0;
	rd = engine_run_delay(e) - rd0;
	if (mode == WAIT_SPIN)
		cost->runnable_ns += wall > cpu ? wall - cpu : 0;
	else
		cost->sleep_ns += wall > cpu + rd ? wall - cpu - rd : 0;
}

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
static int engine_gpu_open(struct engine_gpu *g, const struct server_opts *o)
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
static void engine_gpu_close(struct engine_gpu *g)
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
static uint64_t engine_gpu_step(struct engine *e, uint64_t prefill_ns,
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

/* ------------------------------------------------------- engine hand-off */

/* --split: one SOCK_SEQPACKET message between front-end and engine */
enum split_type { SPLIT_REQ = 1, SPLIT_CANCEL, SPLIT_TOKEN };
#define SPLIT_DONE 1u
#define SPLIT_ABORTED 2u

struct split_msg {
	uint32_t type;
	uint32_t flags;		/* TOKEN: SPLIT_DONE, SPLIT_ABORTED */
	uint64_t id;
	uint64_t max_tokens;		/* REQ */
	uint64_t prompt_bytes;		/* REQ */
	uint64_t produced;		/* TOKEN */
	struct engine_truth truth;	/* TOKEN */
};

static void request_init(struct request *req, int notify_fd)
{
	memset(req, 0, sizeof(*req));
	pthread_mutex_init(&req->lock, NULL);
	pthread_cond_init(&req->cond, NULL);
	req->notify_fd = notify_fd;
	req->token_fd = -1;
}

static void request_destroy(struct request *req)
{
	pthread_cond_destroy(&req->cond);
	pthread_mutex_destroy(&req->lock);
}

/* engine process: the token count and ground truth go in one message */
static void split_send_token(struct request *req)
{
	struct split_msg m = {
		.type = SPLIT_TOKEN,
		.id = req->id,
		.produced = req->produced,
		.truth = req->truth,
	};

	if (req->done)
		m.flags |= SPLIT_DONE;
	if (req->aborted)
		m.flags |= SPLIT_ABORTED;
	/* a front-end that went away is for the receiver to notice */
	while (send(req->token_fd, &m, sizeof(m), MSG_NOSIGNAL) < 0 &&
	       errno == EINTR)
		;
}

/* caller holds req->lock; wakes the front-end after a state change */
static void request_notify_locked(struct request *req)
{
	char byte = 't';

	if (req->token_fd >= 0) {
		split_send_token(req);
	} else if (req->notify_fd >= 0) {
		/* a full pipe already holds a pending wakeup */
		if (write(req->notify_fd, &byte, 1) < 0 && errno != EAGAIN)
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
	} else {
		pthread_cond_signal(&req->cond);
	}
}

/* engine side: final touch of a request */
static void request_release(struct request *req, bool aborted)
{
	pthread_mutex_lock(&req->lock);
	req->done = true;
	req->aborted = aborted;
	request_notify_locked(req);
	pthread_mutex_unlock(&req->lock);
}

/* queues the request; false when the engine is stopping */
static bool engine_submit(struct engine *e, struct request *req)
{
	bool accepted;

	pthread_mutex_lock(&e->lock);
	req->truth.t_enqueue = mono_ns();
	accepted = !e->stopping;
	if (accepted) {
		req->next = NULL;
		if (e->tail)
			e->tail->next = req;
		else
			e->head = req;
		e->tail = req;
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	return accepted;
}

/*
 * Iteration boundary: take waiting requests into the batch (blocking while
 * there is nothing to do: then *waited). Returns how many were admitted,
 * -1 on stop.
 */
static int engine_admit(struct engine *e, struct request **admitted,
			bool *waited)
{
	int max = e->srv->opts.batch;
	int n = 0;

	*waited = false;
	pthread_mutex_lock(&e->lock);
	while (!e->stopping && !e->nbatch && !e->head) {
		*waited = true;
		pthread_cond_wait(&e->cond, &e->lock);
	}
	if (e->stopping) {
		pthread_mutex_unlock(&e->lock);
		return -1;
	}
	while (e->head && e->nbatch < max) {
		struct request *req = e->head;

		e->head = req->next;
		if (!e->head)
			e->tail = NULL;
		req->next = NULL;
		req->truth.t_dispatch = mono_ns();
		e->batch[e->nbatch++] = req;
		admitted[n++] = req;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* one request's KV blocks: --kv-read-bytes from a random aligned offset */
static void engine_kv_read_one(struct engine *e)
{
	uint64_t left = e->srv->opts.kv_read_bytes;
	uint64_t off = rng_next(&e->kv_rng) % e->kv_blocks * KV_ALIGN;
	ssize_t n;

	while (left) {
		n = pread(e->kv_fd, e->kv_buf,
			  left < KV_CHUNK ? left : KV_CHUNK, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!e->kv_error_told)
				fprintf(stderr, "%s: kv read: %s\n", prog,
					n ? strerror(errno) : "end of file");
			e->kv_error_told = true;
			return;
		}
		left -= (uint64_t)n;
		off += (uint64_t)n;
	}
}

/* the KV blocks of n requests; the time blocked is wall less CPU, runqueue */
static void engine_kv_read(struct engine *e, int n, struct step_cost *cost)
{
	uint64_t wall0 = mono_ns(), cpu0 = thread_cpu_ns();
	uint64_t rd0 = engine_run_delay(e), wall, cpu, rd;
	int i;

	for (i = 0; i < n; i++)
		engine_kv_read_one(e);
	wall = mono_ns() - wall0;
	cpu = thread_cpu_ns() - cpu0;
	rd = engine_run_delay(e) - rd0;
	cost->io_ns += wall;
	cost->io_wait_ns += wall > cpu + rd ? wall - cpu - rd : 0;
}

/*
 * One iteration's work: the prefill of the newly admitted requests (their
 * KV blocks loaded, then compute for the sum of their prefill times), then
 * a decode step for the whole batch. On the CPU these are two steps; with
 * --gpu, both are the kernels of one launch burst and one sync.
 */
static void engine_step(struct engine *e, struct request **admitted, int n,
			struct step_cost *cost)
{
	const struct server_opts *o = &e->srv->opts;
	uint64_t total = 0, start, end;
	int i;

	for (i = 0; i < n; i++)
		total += delay_sample(&o->prefill, &e->rng);
	start = mono_ns();
	if (n && e->kv_fd >= 0)
		engine_kv_read(e, n, cost);
	if (o->gpu) {
		end = engine_gpu_step(e, total, o->token_interval_ns, cost);
	} else {
		engine_compute(e, total, o->prefill_mode, cost);
		end = mono_ns();
		engine_compute(e, o->token_interval_ns, o->decode_mode, cost);
	}
	for (i = 0; i < n; i++) {
		admitted[i]->truth.t_prefill_start = start;
		admitted[i]->truth.t_prefill_end = end;
	}
}

/*
 * What the iteration that admitted them cost, up to their first token,
 * from its start (the last hand-off before, or the wait for work).
 */
static void engine_account(struct engine *e, struct request **admitted, int n,
			   const struct step_cost *cost,
			   const struct engine_mark *start, uint64_t rd_admit)
{
	uint64_t rd_end = engine_run_delay(e);
	uint64_t cpu = thread_cpu_ns() - start->cpu;
	int i;

	for (i = 0; i < n; i++) {
		struct engine_truth *t = &admitted[i]->truth;

		t->io_ns = cost->io_ns;
		t->io_wait_ns = cost->io_wait_ns;
		t->cpu_ns = cpu;
		t->runnable_ns = cost->runnable_ns;
		t->sleep_ns = cost->sleep_ns;
		t->run_delay_ns = rd_end - start->rd;
		t->wake_delay_ns = rd_admit - start->rd;
		t->t_boundary = start->t;
		t->gpu_ns = cost->gpu_ns;
		t->kernel_ns = cost->kernel_ns;
		t->launch_cpu_ns = cost->launch_cpu_ns;
		t->sync_wait_ns = cost->sync_wait_ns;
		t->sync_cpu_ns = cost->sync_cpu_ns;
	}
}

/* hands one token to every request in the batch; drops finished ones */
static void engine_emit_tokens(struct engine *e)
{
	int i, kept = 0;

	for (i = 0; i < e->nbatch; i++) {
		struct request *req = e->batch[i];
		bool finished;

		/*
		 * The last hand-off ends the iteration: the woken front-end
		 * may preempt the engine before it unlocks, and that wait is
		 * the next iteration's runqueue time, not queueing.
		 */
		if (i == e->nbatch - 1) {
			e->handoff.rd = engine_run_delay(e);
			e->handoff.cpu = thread_cpu_ns();
			e->handoff.t = mono_ns();
			e->handed_off = true;
		}
		pthread_mutex_lock(&req->lock);
		if (!req->cancelled && !req->produced++)
			req->truth.t_token = mono_ns();
		finished = req->cancelled || req->produced >= req->max_tokens;
		if (finished)
			req->done = true;
		request_notify_locked(req);
		pthread_mutex_unlock(&req->lock);
		if (!finished)
			e->batch[kept++] = req;
	}
	e->nbatch = kept;
}

/* on stop: release everything running or waiting, as aborted */
static void engine_abort_all(struct engine *e)
{
	struct request *req, *next;
	int i;

	for (i = 0; i < e->nbatch; i++)
		request_release(e->batch[i], true);
	e->nbatch = 0;
	pthread_mutex_lock(&e->lock);
	req = e->head;
	e->head = e->tail = NULL;
	pthread_mutex_unlock(&e->lock);
	for (; req; req = next) {
		next = req->next;
		request_release(req, true);
	}
}

/* --gpu: sets up the GPU, then tells engine_start() how that went */
static bool engine_gpu_start(struct engine *e)
{
	int status = engine_gpu_open(&e->gpu, &e->srv->opts) ? -1 : 1;

	if (status < 0)
		engine_gpu_close(&e->gpu);
	pthread_mutex_lock(&e->lock);
	e->gpu.status = status;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return status > 0;
}

static void *engine_main(void *arg)
{
	struct engine *e = arg;
	struct engine_mark start;
	struct step_cost cost;
	uint64_t rd_admit;
	bool waited;
	int n;

	pthread_setname_np(pthread_self(), "demo-engine");
	/* thread-self: this thread's own runqueue wait, for the ground truth */
	e->sched_fd = open_sched_stat();
	if (e->srv->opts.gpu && !engine_gpu_start(e))
		goto cleanup;
	for (;;) {
		start.rd = engine_run_delay(e);
		n = engine_admit(e, e->admitted, &waited);
		if (n < 0)
			break;
		rd_admit = engine_run_delay(e);
		if (waited || !e->handed_off) {
			/* idle: the request's arrival woke it, no boundary */
			e->handed_off = false;
			start.t = 0;
			start.cpu = thread_cpu_ns();
		} else {
			start = e->handoff;
		}
		memset(&cost, 0, sizeof(cost));
		engine_step(e, e->admitted, n, &cost);
		if (n)
			engine_account(e, e->admitted, n, &cost, &start,
				       rd_admit);
		engine_emit_tokens(e);
		e->iterations++;
	}
	engine_abort_all(e);
	engine_gpu_close(&e->gpu);
cleanup:
	if (e->sched_fd >= 0)
		close(e->sched_fd);
	e->sched_fd = -1;
	return NULL;
}

/* the KV file, already checked by kv_check(): 0 or -errno */
static int engine_kv_open(struct engine *e, const struct server_opts *o)
{
	size_t buf_len = o->kv_read_bytes < KV_CHUNK ? o->kv_read_bytes :
						       KV_CHUNK;
	struct stat st;
	int err;

	e->kv_fd = open(o->kv_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (e->kv_fd < 0)
		return -errno;
	if (fstat(e->kv_fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < o->kv_read_bytes)
		return -ENOSPC;
	e->kv_blocks = ((uint64_t)st.st_size - o->kv_read_bytes) / KV_ALIGN + 1;
	e->kv_rng = o->seed ^ 0x6b762d7265616473ULL;
	err = posix_memalign(&e->kv_buf, KV_ALIGN, buf_len);
	if (err) {
		e->kv_buf = NULL;
		return -err;
	}
	return 0;
}

static void engine_kv_close(struct engine *e)
{
	if (e->kv_fd >= 0)
		close(e->kv_fd);
	e->kv_fd = -1;
	free(e->kv_buf);
	e->kv_buf = NULL;
}

static int engine_start(struct engine *e, struct server *srv)
{
	pthread_attr_t attr;
	cpu_set_t cpus;
	int err;

	e->srv = srv;
	e->rng = srv->opts.seed;
	e->kv_fd = -1;
	e->sched_fd = -1;
	e->batch = calloc(srv->opts.batch, sizeof(*e->batch));
	e->admitted = calloc(srv->opts.batch, sizeof(*e->admitted));
	if (!e->batch || !e->admitted) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (srv->opts.kv_path) {
		err = engine_kv_open(e, &srv->opts);
		if (err)
			goto cleanup;
	}
	err = -pthread_attr_init(&attr);
	if (err)
		goto cleanup;
	if (srv->opts.engine_cpu >= 0) {
		CPU_ZERO(&cpus);
		CPU_SET(srv->opts.engine_cpu, &cpus);
		err = -pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (!err)
		err = -pthread_create(&e->thread, &attr, engine_main, e);
	pthread_attr_destroy(&attr);
	if (!err && srv->opts.gpu) {
		/* the engine thread sets up the GPU: its errors are startup's */
		pthread_mutex_lock(&e->lock);
		while (!e->gpu.status)
			pthread_cond_wait(&e->cond, &e->lock);
		pthread_mutex_unlock(&e->lock);
		if (e->gpu.status < 0) {
			pthread_join(e->thread, NULL);
			err = -ENODEV;
		}
	}
	if (!err)
		return 0;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
cleanup:
	engine_kv_close(e);
	free(e->batch);
	free(e->admitted);
	e->batch = e->admitted = NULL;
	return err;
}

static void engine_stop(struct engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void engine_join(struct engine *e)
{
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	engine_kv_close(e);
	free(e->batch);
	free(e->admitted);
}

/* ------------------------------------------------ --split: engine side */

/* a front-end thread's slot, reused once the engine released it */
static void request_reuse_locked(struct request *req, const struct split_msg *m)
{
	memset(&req->truth, 0, sizeof(req->truth));
	req->id = m->id;
	req->max_tokens = m->max_tokens ? m->max_tokens : 1;
	req->prompt_bytes = m->prompt_bytes;
	req->produced = 0;
	req->done = req->aborted = req->cancelled = false;
	req->next = NULL;
}

/* one message from a front-end thread, for its slot */
static void split_receive(struct engine *e, struct request *slot,
			  const struct split_msg *m)
{
	bool busy = false;

	pthread_mutex_lock(&slot->lock);
	if (m->type == SPLIT_REQ) {
		busy = !slot->done;
		if (!busy)
			request_reuse_locked(slot, m);
	} else if (m->type == SPLIT_CANCEL && m->id == slot->id) {
		slot->cancelled = true;
	}
	pthread_mutex_unlock(&slot->lock);
	if (m->type != SPLIT_REQ)
		return;
	if (busy)
		fprintf(stderr, "%s: engine: request %llu before %llu ended\n",
			prog, (unsigned long long)m->id,
			(unsigned long long)slot->id);
	else if (!engine_submit(e, slot))
		request_release(slot, true);
}

/*
 * The engine process: its main thread receives the requests of every
 * front-end thread (poll over their unix sockets) and queues them to its
 * engine thread, which sends each token back over the same socket. Exits
 * once every front-end end is closed. Returns the exit status.
 */
static int split_engine_main(struct server *srv, int *fds)
{
	int n = srv->opts.workers, alive = n, i, err, ret = 1;
	struct request *slots = NULL;
	struct pollfd *pfds = NULL;
	struct split_msg m;
	ssize_t len;

	prctl(PR_SET_NAME, "demo-recv");
	pfds = calloc(n, sizeof(*pfds));
	slots = calloc(n, sizeof(*slots));
	if (!pfds || !slots) {
		fprintf(stderr, "%s: engine process: out of memory\n", prog);
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		request_init(&slots[i], -1);
		slots[i].token_fd = fds[i];
		slots[i].done = true;
		pfds[i].fd = fds[i];
		pfds[i].events = POLLIN;
	}
	err = engine_start(&srv->engine, srv);
	if (err) {
		fprintf(stderr, "%s: cannot start engine: %s\n", prog,
			srv->engine.gpu.err[0] ? srv->engine.gpu.err :
						 strerror(-err));
		goto cleanup;
	}
	while (alive) {
		if (poll(pfds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: engine poll: %s\n", prog,
				strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (pfds[i].fd < 0 || !pfds[i].revents)
				continue;
			len = recv(pfds[i].fd, &m, sizeof(m), MSG_DONTWAIT);
			if (len < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (len == (ssize_t)sizeof(m)) {
				split_receive(&srv->engine, &slots[i], &m);
				continue;
			}
			/* the front-end thread is gone: so is its request */
			pthread_mutex_lock(&slots[i].lock);
			slots[i].cancelled = true;
			pthread_mutex_unlock(&slots[i].lock);
			pfds[i].fd = -1;
			alive--;
		}
	}
	engine_stop(&srv->engine);
	engine_join(&srv->engine);
	ret = 0;
cleanup:
	for (i = 0; i < n; i++) {
		close(fds[i]);
		if (slots)
			request_destroy(&slots[i]);
	}
	free(slots);
	free(pfds);
	return ret;
}

/* forks the engine process, one unix socket per front-end thread */
static int split_start(struct server *srv)
{
	int n = srv->opts.workers, i, pair[2], err = 0;
	pid_t parent = getpid(), pid;
	int *engine_ends;

	srv->engine_fds = malloc(n * sizeof(*srv->engine_fds));
	engine_ends = malloc(n * sizeof(*engine_ends));
	if (!srv->engine_fds || !engine_ends) {
		free(engine_ends);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		srv->engine_fds[i] = engine_ends[i] = -1;
	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			       pair)) {
			err = -errno;
			goto cleanup;
		}
		srv->engine_fds[i] = pair[0];
		engine_ends[i] = pair[1];
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!pid) {
		/* the engine dies with the front-end, however that ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		for (i = 0; i < n; i++)
			close(srv->engine_fds[i]);
		i = split_engine_main(srv, engine_ends);
		fflush(stderr);
		_exit(i);
	}
	srv->engine_pid = pid;
cleanup:
	for (i = 0; i < n; i++)
		if (engine_ends[i] >= 0)
			close(engine_ends[i]);
	free(engine_ends);
	return err;
}

/* closes the front-end ends, then reaps the engine process (5 s at most) */
static void split_stop(struct server *srv)
{
	int i, status;

	if (!srv->engine_fds)
		return;
	for (i = 0; i < srv->opts.workers; i++)
		if (srv->engine_fds[i] >= 0)
			close(srv->engine_fds[i]);
	free(srv->engine_fds);
	srv->engine_fds = NULL;
	if (srv->engine_pid <= 0)
		return;
	for (i = 0; i < 500; i++) {
		if (waitpid(srv->engine_pid, &status, WNOHANG) ==
		    srv->engine_pid)
			return;
		sleep_until_ns(mono_ns() + 10 * NSEC_PER_MSEC);
	}
	fprintf(stderr, "%s: engine process did not stop: killed\n", prog);
	kill(srv->engine_pid, SIGKILL);
	waitpid(srv->engine_pid, &status, 0);
}

/* ------------------------------------------------------------------ JSON */

static const char *json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* a JSON string at p; sets *bytes to its decoded length in UTF-8 bytes */
static const char *json_string(const char *p, const char *end, size_t *bytes,
			       char *copy, size_t copy_size)
{
	size_t n = 0, add;

	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		char out = (char)c;

		if (c == '"') {
			if (copy && copy_size)
				copy[n < copy_size ? n : copy_size - 1] = '\0';
			if (bytes)
				*bytes = n;
			return p + 1;
		}
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			switch (*p) {
			case '"': case '\\': case '/':
				out = *p;
				break;
			case 'b': out = '\b'; break;
			case 'f': out = '\f'; break;
			case 'n': out = '\n'; break;
			case 'r': out = '\r'; break;
			case 't': out = '\t'; break;
			case 'u': {
				unsigned int cp = 0;
				int i;

				if (end - p < 5)
					return NULL;
				for (i = 1; i <= 4; i++) {
					char h = p[i];

					cp <<= 4;
					if (h >= '0' && h <= '9')
						cp |= h - '0';
					else if (h >= 'a' && h <= 'f')
						cp |= h - 'a' + 10;
					else if (h >= 'A' && h <= 'F')
						cp |= h - 'A' + 10;
					else
						return NULL;
				}
				p += 4;
				/* surrogates: 2 bytes each, 4 per pair */
				add = cp < 0x80 ? 1 : cp < 0x800 ? 2 :
				      (cp >= 0xd800 && cp < 0xe000) ? 2 : 3;
				for (; add; add--, n++)
					if (copy && n + 1 < copy_size)
						copy[n] = '?';
				continue;
			}
			default:
				return NULL;
			}
		}
		if (copy && n + 1 < copy_size)
			copy[n] = out;
		n++;
	}
	return NULL;
}

/* skips any JSON value; depth bounds nesting */
static const char *json_skip(const char *p, const char *end, int depth)
{
	char close;

	p = json_ws(p, end);
	if (p >= end || depth > 64)
		return NULL;
	if (*p == '"')
		return json_string(p, end, NULL, NULL, 0);
	if (*p == '{' || *p == '[') {
		close = *p == '{' ? '}' : ']';
		p = json_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p, end), end, NULL,
						NULL, 0);
				if (!p)
					return NULL;
				p = json_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p++;
			}
			p = json_skip(p, end, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p, end);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == close)
				return p + 1;
			return NULL;
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		while (p < end && strchr("+-.eE0123456789", *p))
			p++;
		return p;
	}
	if (end - p >= 4 && !memcmp(p, "true", 4))
		return p + 4;
	if (end - p >= 5 && !memcmp(p, "false", 5))
		return p + 5;
	if (end - p >= 4 && !memcmp(p, "null", 4))
		return p + 4;
	return NULL;
}

/* parses the completion body; on error *why says what is wrong */
static int parse_completion(const char *s, size_t len,
			    struct completion_args *args, const char **why)
{
	const char *p = s, *end = s + len;
	bool has_prompt = false;

	memset(args, 0, sizeof(*args));
	*why = "body is not a JSON object";
	p = json_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = json_ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto tail;
	}
	for (;;) {
		char key[32];
		const char *v;

		p = json_string(json_ws(p, end), end, NULL, key, sizeof(key));
		if (!p)
			return -1;
		p = json_ws(p, end);
		if (p >= end || *p++ != ':')
			return -1;
		v = json_ws(p, end);
		if (!strcmp(key, "prompt")) {
			*why = "\"prompt\" must be a string";
			p = json_string(v, end, &args->prompt_bytes, NULL, 0);
			has_prompt = true;
		} else if (!strcmp(key, "max_tokens")) {
			char num[24];
			uint64_t n;

			*why = "\"max_tokens\" must be in 1..1000000";
			p = json_skip(v, end, 0);
			if (!p || p - v >= (ptrdiff_t)sizeof(num))
				return -1;
			memcpy(num, v, p - v);
			num[p - v] = '\0';
			if (!parse_u64_range(num, 1, MAX_TOKENS_LIMIT, &n))
				return -1;
			args->max_tokens = n;
			args->has_max_tokens = true;
		} else if (!strcmp(key, "stream")) {
			*why = "\"stream\" must be true or false";
			if (end - v >= 4 && !memcmp(v, "true", 4)) {
				args->stream = true;
				p = v + 4;
			} else if (end - v >= 5 && !memcmp(v, "false", 5)) {
				args->stream = false;
				p = v + 5;
			} else {
				return -1;
			}
		} else {
			p = json_skip(v, end, 0);
		}
		if (!p)
			return -1;
		*why = "body is not a JSON object";
		p = json_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		return -1;
	}
tail:
	if (json_ws(p, end) != end) {
		*why = "trailing bytes after the JSON object";
		return -1;
	}
	if (!has_prompt) {
		*why = "\"prompt\" is required";
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ HTTP */

static int conn_reserve(struct conn *c, size_t need)
{
	char *nb;
	size_t cap = c->cap ? c->cap : 16384;

	if (need <= c->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	nb = realloc(c->buf, cap);
	if (!nb)
		return -ENOMEM;
	c->buf = nb;
	c->cap = cap;
	return 0;
}

/* one read(2) into the buffer: >0 bytes, 0 on EOF, -errno on error */
static ssize_t conn_fill(struct conn *c)
{
	ssize_t n;

	if (c->len == c->cap && conn_reserve(c, c->cap + 1))
		return -ENOMEM;
	do {
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	c->len += (size_t)n;
	return n;
}

/*
 * conn_fill() of a request read, noting the front-end's runqueue wait: only
 * the wakeup after the last bytes delays the request; earlier reads of a
 * slow upload wait for the network anyway.
 */
static ssize_t conn_fill_timed(struct conn *c)
{
	uint64_t rd0 = run_delay(c->sched_fd);
	ssize_t n = conn_fill(c);

	if (n > 0) {
		c->rd_start = rd0;
		c->read_wake = run_delay(c->sched_fd) - rd0;
	}
	return n;
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

static int send_json(struct conn *c, int code, bool keep_alive,
		     const char *body)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     code, status_text(code), strlen(body),
		     keep_alive ? "keep-alive" : "close", body);
	if (n < 0 || n >= (int)sizeof(buf))
		return -EINVAL;
	return write_all(c->fd, buf, n);
}

static int send_error(struct server *srv, struct conn *c, int code,
		      bool keep_alive, const char *msg)
{
	char body[512], esc[256];
	size_t i, n = 0;

	/* messages are ours, ASCII; only quotes need escaping */
	for (i = 0; msg[i] && n + 2 < sizeof(esc); i++) {
		if (msg[i] == '"' || msg[i] == '\\')
			esc[n++] = '\\';
		esc[n++] = msg[i];
	}
	esc[n] = '\0';
	atomic_fetch_add(&srv->n_http_errors, 1);
	snprintf(body, sizeof(body),
		 "{\"error\":{\"message\":\"%s\",\"code\":%d}}\n", esc, code);
	return send_json(c, code, keep_alive, body);
}

/* value of header `name` in the header block, copied; false when absent */
static bool header_value(const char *hdrs, const char *end, const char *name,
			 char *out, size_t size)
{
	size_t nlen = strlen(name);
	const char *line = hdrs;

	while (line < end) {
		const char *eol = memmem(line, end - line, "\r\n", 2);
		const char *v;
		size_t vlen;

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > nlen && line[nlen] == ':' &&
		    !strncasecmp(line, name, nlen)) {
			v = line + nlen + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			vlen = eol - v;
			while (vlen && (v[vlen - 1] == ' ' ||
					v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= size)
				vlen = size - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return true;
		}
		line = eol + 2;
	}
	return false;
}

/*
 * Reads one request (headers, then Content-Length body bytes) from the
 * connection. Returns 1 with hr filled, 0 on a clean EOF between requests,
 * -1 when the connection must close (an error answer was sent if possible).
 */
static int read_request(struct server *srv, struct conn *c,
			struct http_req *hr)
{
	const char *hend, *eol, *sp1, *sp2;
	char value[64], version[16];
	uint64_t content_length = 0;
	size_t hdr_len;
	ssize_t n;

	memset(hr, 0, sizeof(*hr));
	hr->t_read_done = mono_ns();
	c->rd_start = run_delay(c->sched_fd);
	c->read_wake = 0;
	/* pipelined bytes of this request were read with the previous one */
	if (c->len)
		hr->t_first_byte_read = hr->t_read_done;
	for (;;) {
		hend = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
		if (hend)
			break;
		if (c->len >= MAX_HEADER_BYTES) {
			send_error(srv, c, 431, false, "header too large");
			return -1;
		}
		n = conn_fill_timed(c);
		if (n <= 0)
			return n == 0 && c->len == 0 ? 0 : -1;
		hr->t_read_done = mono_ns();
		if (!hr->t_first_byte_read)
			hr->t_first_byte_read = hr->t_read_done;
	}
	hdr_len = hend - c->buf + 4;

	/* request line: METHOD SP TARGET SP HTTP/1.x */
	eol = memmem(c->buf, hdr_len, "\r\n", 2);
	sp1 = memchr(c->buf, ' ', eol - c->buf);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
	if (!sp1 || !sp2 || sp1 - c->buf >= (ptrdiff_t)sizeof(hr->method) ||
	    sp2 - sp1 - 1 >= (ptrdiff_t)sizeof(hr->path) ||
	    eol - sp2 - 1 >= (ptrdiff_t)sizeof(version) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7)) {
		send_error(srv, c, 400, false, "malformed request line");
		return -1;
	}
	memcpy(hr->method, c->buf, sp1 - c->buf);
	memcpy(hr->path, sp1 + 1, sp2 - sp1 - 1);
	memcpy(version, sp2 + 1, eol - sp2 - 1);
	version[eol - sp2 - 1] = '\0';
	hr->path[strcspn(hr->path, "?")] = '\0';

	hr->keep_alive = !strcmp(version, "HTTP/1.1");
	if (header_value(eol + 2, hend + 2, "Connection", value,
			 sizeof(value))) {
		if (strcasestr(value, "close"))
			hr->keep_alive = false;
		else if (strcasestr(value, "keep-alive"))
			hr->keep_alive = true;
	}
	if (header_value(eol + 2, hend + 2, "Transfer-Encoding", value,
			 sizeof(value))) {
		send_error(srv, c, 411, false,
			   "request bodies need Content-Length");
		return -1;
	}
	if (header_value(eol + 2, hend + 2, "Content-Length", value,
			 sizeof(value)) &&
	    !parse_u64_range(value, 0, UINT64_MAX, &content_length)) {
		send_error(srv, c, 400, false, "bad Content-Length");
		return -1;
	}
	if (content_length > srv->opts.max_body) {
		send_error(srv, c, 413, false, "body too large");
		return -1;
	}
	if (c->len < hdr_len + content_length &&
	    header_value(eol + 2, hend + 2, "Expect", value, sizeof(value)) &&
	    !strcasecmp(value, "100-continue")) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		if (write_all(c->fd, cont, sizeof(cont) - 1))
			return -1;
	}

	/* the body, read in a loop: large prompts span many reads */
	if (conn_reserve(c, hdr_len + content_length + 1)) {
		send_error(srv, c, 413, false, "out of memory for body");
		return -1;
	}
	while (c->len < hdr_len + content_length) {
		n = conn_fill_timed(c);
		if (n <= 0)
			return -1;
		hr->t_read_done = mono_ns();
	}
	hr->body = c->buf + hdr_len;
	hr->body_len = content_length;
	hr->total_len = hdr_len + content_length;
	return 1;
}

/* drops the request just handled, keeping pipelined bytes after it */
static void conn_consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

/* ------------------------------------------------------------ front-end */

/*
 * The prompt is "tokenized": CPU work proportional to its size, until a
 * wall-clock deadline. Returns the wall time; *cpu_ns the thread's CPU time
 * in it (the rest it spent runnable).
 */
static uint64_t tokenize(const char *prompt, size_t len, uint64_t burn_ns,
			 uint64_t *cpu_ns)
{
	uint64_t t0 = mono_ns(), deadline, hash = 1469598103934665603ULL;
	uint64_t cpu0 = thread_cpu_ns();
	size_t i;

	*cpu_ns = 0;
	if (!burn_ns || !len)
		return 0;
	deadline = t0 + burn_ns;
	do {
		for (i = 0; i < len; i++) {
			hash = (hash ^ (unsigned char)prompt[i]) *
			       1099511628211ULL;
			if ((i & 4095) == 4095 && mono_ns() >= deadline)
				break;
		}
	} while (mono_ns() < deadline);
	/* keeps the hashing from being optimised away */
	__asm__ volatile("" : : "r"(hash) : "memory");
	*cpu_ns = thread_cpu_ns() - cpu0;
	return mono_ns() - t0;
}

static int format_event(const struct server_opts *o, char *buf, size_t size,
			const char *data)
{
	int n;

	if (o->framing == FRAMING_CHUNKED) {
		size_t dlen = strlen(data) + 8;	/* "data: " + "\n\n" */

		n = snprintf(buf, size, "%zx\r\ndata: %s\n\n\r\n", dlen, data);
	} else {
		n = snprintf(buf, size, "data: %s\n\n", data);
	}
	return n < 0 || n >= (int)size ? -1 : n;
}

static int format_token_event(const struct server_opts *o, char *buf,
			      size_t size, uint64_t id, uint64_t k)
{
	char data[160];

	snprintf(data, sizeof(data),
		 "{\"id\":\"cmpl-%llu\",\"choices\":[{\"text\":\"tok%llu\","
		 "\"index\":0}]}",
		 (unsigned long long)id, (unsigned long long)k);
	return format_event(o, buf, size, data);
}

static int format_stream_headers(const struct server_opts *o, char *buf,
				 size_t size, uint64_t id, bool keep_alive)
{
	int n;

	n = snprintf(buf, size,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: text/event-stream\r\n"
		     "cache-control: no-cache\r\n"
		     "x-request-id: cmpl-%llu\r\n"
		     "connection: %s\r\n"
		     "%s\r\n",
		     (unsigned long long)id,
		     keep_alive ? "keep-alive" : "close",
		     o->framing == FRAMING_CHUNKED ?
		     "transfer-encoding: chunked\r\n" : "");
	return n < 0 || n >= (int)size ? -1 : n;
}

/* --split: queues the request in the engine process; false if it is gone */
static bool split_submit(struct worker *w, struct request *req)
{
	struct split_msg m = {
		.type = SPLIT_REQ,
		.id = req->id,
		.max_tokens = req->max_tokens,
		.prompt_bytes = req->prompt_bytes,
	};
	ssize_t n;

	if (w->engine_gone)
		return false;
	do
		n = send(w->engine_fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m))
		w->engine_gone = true;
	return !w->engine_gone;
}

/* --split: the engine process's next message about req */
static void split_wait(struct worker *w, struct request *req)
{
	struct split_msg m;
	ssize_t n;

	for (;;) {
		n = w->engine_gone ? 0 : recv(w->engine_fd, &m, sizeof(m), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m)) {
			/* the engine process stopped: as an in-process stop */
			w->engine_gone = true;
			req->done = req->aborted = true;
			return;
		}
		if (m.type != SPLIT_TOKEN || m.id != req->id)
			continue;	/* of a request given up before */
		req->produced = m.produced;
		req->truth = m.truth;
		req->done = m.flags & SPLIT_DONE;
		req->aborted = m.flags & SPLIT_ABORTED;
		return;
	}
}

/*
 * Waits for the engine to produce more tokens or release the request.
 * Returns the produced count; *done tells whether the engine released it.
 */
static uint64_t wait_tokens(struct worker *w, struct request *req,
			    uint64_t seen, bool *done)
{
	uint64_t produced;
	char drain[256];

	if (w->engine_fd >= 0) {
		/* --split: only this thread touches req on this side */
		while (!req->done && req->produced == seen)
			split_wait(w, req);
		*done = req->done;
		return req->produced;
	}
	pthread_mutex_lock(&req->lock);
	while (!req->done && req->produced == seen) {
		if (req->notify_fd < 0) {
			pthread_cond_wait(&req->cond, &req->lock);
			continue;
		}
		pthread_mutex_unlock(&req->lock);
		if (read(w->pipe_rd, drain, sizeof(drain)) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
			sleep_until_ns(mono_ns() + NSEC_PER_MSEC);
		}
		pthread_mutex_lock(&req->lock);
	}
	produced = req->produced;
	*done = req->done;
	pthread_mutex_unlock(&req->lock);
	return produced;
}

/* the client is gone: tell the engine, then wait until it lets go */
static void cancel_request(struct worker *w, struct request *req)
{
	bool done;
	uint64_t seen;

	pthread_mutex_lock(&req->lock);
	req->cancelled = true;
	seen = req->produced;
	pthread_mutex_unlock(&req->lock);
	if (w->engine_fd >= 0 && !w->engine_gone) {
		struct split_msg m = { .type = SPLIT_CANCEL, .id = req->id };

		if (send(w->engine_fd, &m, sizeof(m), MSG_NOSIGNAL) < 0)
			w->engine_gone = true;
	}
	do
		seen = wait_tokens(w, req, seen, &done);
	while (!done);
}

/* the first token write: its time, and the front-end's runqueue wait */
static void note_first_write(struct worker *w, struct request *req)
{
	req->t_first_write = req->t_last_write;
	if (w->sched_fd >= 0)
		req->fe_run_delay = run_delay(w->sched_fd) - req->fe_rd_start;
}

/*
 * One token event as iovecs, the way servers with vectored I/O write it
 * (hyper does): the headers when they travel with it, the chunk-size line
 * or "data: ", the payload, and the framing's trailing CRLF or blank line.
 */
static int write_vectored(const struct server_opts *o, int fd,
			  const char *buf, size_t hlen, size_t len)
{
	struct iovec iov[4];
	struct msghdr msg = { .msg_iov = iov };
	const char *ev = buf + hlen, *cut;
	size_t evlen = len - hlen, head;
	ssize_t n;
	int cnt = 0;

	if (hlen)
		iov[cnt++] = (struct iovec){ (void *)buf, hlen };
	cut = o->framing == FRAMING_CHUNKED ? memmem(ev, evlen, "\r\n", 2) :
					      NULL;
	head = cut ? (size_t)(cut + 2 - ev) : 6;	/* "data: " */
	if (evlen < head + 2)
		return -EINVAL;
	iov[cnt++] = (struct iovec){ (void *)ev, head };
	iov[cnt++] = (struct iovec){ (void *)(ev + head), evlen - head - 2 };
	iov[cnt++] = (struct iovec){ (void *)(ev + evlen - 2), 2 };
	msg.msg_iovlen = cnt;
	while (msg.msg_iovlen) {
		n = o->send_call == SEND_SENDMSG ?
			    sendmsg(fd, &msg, MSG_NOSIGNAL) :
			    writev(fd, msg.msg_iov, msg.msg_iovlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* a short write: on from where it stopped */
		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov->iov_len) {
			n -= msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= n;
		}
	}
	return 0;
}

/* Writes one token-carrying event (with the headers, hlen bytes, when they
 * travel with the first token), stamping the write times before it. */
static int write_token(struct worker *w, struct conn *c, struct request *req,
		       const char *buf, size_t hlen, size_t len)
{
	const struct server_opts *o = &w->srv->opts;
	int err;

	req->t_last_write = mono_ns();
	if (!req->tokens_written)
		note_first_write(w, req);
	if (o->send_call == SEND_WRITE)
		err = write_all(c->fd, buf, len);
	else
		err = write_vectored(o, c->fd, buf, hlen, len);
	if (!err)
		req->tokens_written++;
	return err;
}

/*
 * Streams tokens as SSE events as the engine produces them, headers first;
 * 0 or -errno (-ECANCELED: the server stopped). The caller ends the stream.
 */
static int stream_tokens(struct worker *w, struct conn *c,
			   struct request *req, bool keep_alive)
{
	const struct server_opts *o = &w->srv->opts;
	char buf[EVENT_BUF * 2 + 512];
	uint64_t produced = 0;
	bool done = false;
	int hlen = 0, n, err;

	hlen = format_stream_headers(o, buf, sizeof(buf), req->id, keep_alive);
	if (hlen < 0)
		return -EINVAL;
	if (!o->headers_with_body) {
		/* status line and headers in a write of their own */
		err = write_all(c->fd, buf, hlen);
		if (err)
			return err;
		hlen = 0;
	}
	while (!done) {
		produced = wait_tokens(w, req, req->tokens_written, &done);
		while (req->tokens_written < produced) {
			n = format_token_event(o, buf + hlen,
					       sizeof(buf) - hlen, req->id,
					       req->tokens_written);
			if (n < 0)
				return -EINVAL;
			err = write_token(w, c, req, buf, hlen, hlen + n);
			if (err)
				return err;
			hlen = 0;
		}
	}
	return req->aborted ? -ECANCELED : 0;
}

/* the end of a stream: [DONE], and the chunked terminator */
static int stream_finish(const struct server_opts *o, struct conn *c)
{
	char buf[64];
	int n;

	n = format_event(o, buf, sizeof(buf) - 5, "[DONE]");
	if (n < 0)
		return -EINVAL;
	if (o->framing == FRAMING_CHUNKED) {
		memcpy(buf + n, "0\r\n\r\n", 5);
		n += 5;
	}
	return write_all(c->fd, buf, n);
}

/* stream=false: one JSON body once every token is there */
static int whole_response(struct worker *w, struct conn *c,
			  struct request *req, bool keep_alive)
{
	uint64_t produced = 0, k;
	size_t cap, len = 0;
	bool done = false;
	char *body, *resp;
	int n, err = 0;

	while (!done)
		produced = wait_tokens(w, req, produced, &done);
	if (req->aborted)
		return -ECANCELED;
	cap = 256 + produced * 16;
	body = malloc(cap);
	resp = malloc(cap + 256);
	if (!body || !resp) {
		err = -ENOMEM;
		goto cleanup;
	}
	len = snprintf(body, cap,
		       "{\"id\":\"cmpl-%llu\",\"object\":\"text_completion\","
		       "\"choices\":[{\"text\":\"",
		       (unsigned long long)req->id);
	for (k = 0; k < produced; k++)
		len += snprintf(body + len, cap - len, "tok%llu",
				(unsigned long long)k);
	len += snprintf(body + len, cap - len,
			"\",\"index\":0,\"finish_reason\":\"length\"}]}\n");
	n = snprintf(resp, cap + 256,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     len, keep_alive ? "keep-alive" : "close", body);
	req->t_last_write = mono_ns();
	note_first_write(w, req);
	err = write_all(c->fd, resp, n);
	if (!err)
		req->tokens_written = produced;
cleanup:
	free(body);
	free(resp);
	return err;
}

static void log_request(struct server *srv, const struct request *req,
			const char *status)
{
	const struct engine_truth *t = &req->truth;
	char row[ROW_BUF];
	int n;

	if (srv->log_fd < 0)
		return;
	n = snprintf(row, sizeof(row),
		     "%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%zu,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu\n",
		     (unsigned long long)req->id, req->peer_port,
		     (unsigned long long)req->t_read_done,
		     (unsigned long long)t->t_enqueue,
		     (unsigned long long)t->t_dispatch,
		     (unsigned long long)t->t_prefill_start,
		     (unsigned long long)t->t_prefill_end,
		     (unsigned long long)req->t_first_write,
		     (unsigned long long)req->t_last_write,
		     (unsigned long long)req->tokens_written,
		     (unsigned long long)(t->t_prefill_end -
					  t->t_prefill_start),
		     (unsigned long long)(t->t_dispatch ?
					  t->t_dispatch - t->t_enqueue : 0),
		     (unsigned long long)req->tokenize_ns, req->prompt_bytes,
		     status,
		     (unsigned long long)t->io_ns,
		     (unsigned long long)t->io_wait_ns,
		     (unsigned long long)t->cpu_ns,
		     (unsigned long long)t->runnable_ns,
		     (unsigned long long)t->sleep_ns,
		     (unsigned long long)t->run_delay_ns,
		     (unsigned long long)t->wake_delay_ns,
		     (unsigned long long)req->t_first_byte_read,
		     (unsigned long long)t->t_token, req->upstream_port,
		     (unsigned long long)req->tokenize_cpu_ns,
		     (unsigned long long)req->fe_run_delay,
		     (unsigned long long)req->fe_read_wake,
		     (unsigned long long)t->gpu_ns,
		     (unsigned long long)t->kernel_ns,
		     (unsigned long long)t->launch_cpu_ns,
		     (unsigned long long)t->sync_wait_ns,
		     (unsigned long long)t->sync_cpu_ns,
		     (unsigned long long)t->t_boundary);
	if (n < 0 || n >= (int)sizeof(row))
		return;
	/* one O_APPEND write per row: rows stay whole, survive a kill */
	if (write_all(srv->log_fd, row, n))
		fprintf(stderr, "%s: log write: %s\n", prog, strerror(errno));
}

static bool server_stopping(struct server *srv)
{
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	pthread_mutex_unlock(&srv->conn_lock);
	return stopping;
}

/* ------------------------------------------------------------- --proxy */

/* "HOST:PORT" or "[V6ADDR]:PORT" split in two; false when malformed */
static bool proxy_split(const char *spec, char *host, size_t size,
			char *port, size_t port_size)
{
	const char *colon = strrchr(spec, ':');
	uint64_t v;

	if (!colon || colon == spec || (size_t)(colon - spec) >= size ||
	    strlen(colon + 1) >= port_size ||
	    !parse_u64_range(colon + 1, 1, 65535, &v))
		return false;
	memcpy(host, spec, colon - spec);
	host[colon - spec] = '\0';
	strcpy(port, colon + 1);
	/* a bare IPv6 address has colons of its own: it needs brackets */
	return !strchr(host, ':') || host[0] == '[';
}

/* resolves --proxy once, at startup; 0 or -EINVAL (said why) */
static int proxy_resolve(struct server *srv)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	}, *res = NULL;
	char host[256], port[16], hostbuf[256];
	int rc;

	proxy_split(srv->opts.proxy, host, sizeof(host), port, sizeof(port));
	rc = getaddrinfo(host_unbracket(host, hostbuf, sizeof(hostbuf)), port,
			 &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: cannot resolve --proxy %s: %s\n", prog,
			srv->opts.proxy, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(&srv->up_addr, res->ai_addr, res->ai_addrlen);
	srv->up_addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* a keep-alive link to the engine instance, this worker's own */
static int upstream_connect(struct worker *w)
{
	struct server *srv = w->srv;
	int fd, one = 1, err;
	bool stopping;

	fd = socket(srv->up_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&srv->up_addr, srv->up_addrlen)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* published so that a stop can shut it down under a blocked read */
	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	if (!stopping)
		w->up_fd = fd;
	pthread_mutex_unlock(&srv->conn_lock);
	if (stopping) {
		close(fd);
		return -ECANCELED;
	}
	w->up_port = socket_port(fd, false);
	w->up->fd = fd;
	w->up->len = 0;
	return 0;
}

static void upstream_close(struct worker *w)
{
	struct server *srv = w->srv;
	int fd;

	pthread_mutex_lock(&srv->conn_lock);
	fd = w->up_fd;
	w->up_fd = -1;
	pthread_mutex_unlock(&srv->conn_lock);
	if (fd >= 0)
		close(fd);
	w->up->fd = -1;
	w->up->len = 0;
}

/* forwards the client's body as a new request on the upstream link */
static int upstream_send(struct worker *w, const struct http_req *hr)
{
	size_t cap = hr->body_len + 256;
	char *buf = malloc(cap);
	int n, err;

	if (!buf)
		return -ENOMEM;
	n = snprintf(buf, cap,
		     "POST /v1/completions HTTP/1.1\r\n"
		     "Host: demo-engine\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n", hr->body_len);
	memcpy(buf + n, hr->body, hr->body_len);
	err = write_all(w->up_fd, buf, n + hr->body_len);
	free(buf);
	return err;
}

struct upstream_resp {
	int code;
	bool event_stream;
	bool close;
	uint64_t length;	/* Content-Length; event streams have none */
};

/* the upstream's status line and headers; 0 or -errno (-EPROTO: unusable) */
static int upstream_headers(struct worker *w, struct upstream_resp *r)
{
	struct conn *u = w->up;
	const char *hend, *eol;
	char value[64];
	ssize_t n;

	memset(r, 0, sizeof(*r));
	for (;;) {
		hend = u->len ? memmem(u->buf, u->len, "\r\n\r\n", 4) : NULL;
		if (hend)
			break;
		if (u->len >= MAX_HEADER_BYTES)
			return -EPROTO;
		n = conn_fill(u);
		if (n <= 0)
			return n ? (int)n : -ECONNRESET;
	}
	if (hend - u->buf < 12 || strncmp(u->buf, "HTTP/1.", 7))
		return -EPROTO;
	r->code = atoi(u->buf + 9);
	r->close = u->buf[7] == '0';
	eol = memmem(u->buf, hend + 2 - u->buf, "\r\n", 2);
	if (header_value(eol + 2, hend + 2, "Connection", value,
			 sizeof(value)))
		r->close = strcasestr(value, "close") != NULL;
	if (header_value(eol + 2, hend + 2, "Content-Type", value,
			 sizeof(value)))
		r->event_stream = !strncasecmp(value, "text/event-stream", 17);
	/* the engine instance must use plain SSE (--framing sse) */
	if (header_value(eol + 2, hend + 2, "Transfer-Encoding", value,
			 sizeof(value)))
		return -EPROTO;
	if (header_value(eol + 2, hend + 2, "Content-Length", value,
			 sizeof(value))) {
		if (!parse_u64_range(value, 0, DEFAULT_MAX_BODY, &r->length))
			return -EPROTO;
	} else if (!r->event_stream || r->code != 200) {
		return -EPROTO;
	}
	conn_consume(u, hend + 4 - u->buf);
	return 0;
}

/* the data of one SSE event (its "data:" line) into out; "" when none */
static int event_data(const char *ev, size_t len, char *out, size_t size)
{
	const char *line = ev, *end = ev + len, *eol;

	out[0] = '\0';
	for (; line < end; line = eol + 1) {
		size_t n;

		eol = memchr(line, '\n', end - line);
		if (!eol)
			eol = end;
		if (eol - line < 5 || memcmp(line, "data:", 5))
			continue;
		line += 5;
		if (line < eol && *line == ' ')
			line++;
		n = eol - line;
		if (n && line[n - 1] == '\r')
			n--;
		if (n >= size)
			return -1;
		memcpy(out, line, n);
		out[n] = '\0';
	}
	return 0;
}

/*
 * Relays the upstream's SSE events to the client as they come, each framed
 * as ours, up to its [DONE]. 0, or -errno; *up_failed: the upstream's fault.
 */
static int proxy_stream(struct worker *w, struct conn *c, struct request *req,
			bool keep_alive, bool *up_failed)
{
	const struct server_opts *o = &w->srv->opts;
	char buf[EVENT_BUF * 4 + 512], data[EVENT_BUF * 4];
	struct conn *u = w->up;
	const char *end;
	int hlen, n, err;
	ssize_t got;

	hlen = format_stream_headers(o, buf, sizeof(buf), req->id, keep_alive);
	if (hlen < 0)
		return -EINVAL;
	if (!o->headers_with_body) {
		err = write_all(c->fd, buf, hlen);
		if (err)
			return err;
		hlen = 0;
	}
	for (;;) {
		end = u->len ? memmem(u->buf, u->len, "\n\n", 2) : NULL;
		if (!end) {
			got = u->len > sizeof(data) ? -EPROTO : conn_fill(u);
			if (got <= 0) {
				*up_failed = true;
				return got ? (int)got : -ECONNRESET;
			}
			continue;
		}
		if (event_data(u->buf, end - u->buf, data, sizeof(data))) {
			*up_failed = true;
			return -EPROTO;
		}
		conn_consume(u, end + 2 - u->buf);
		if (!strcmp(data, "[DONE]"))
			return 0;
		if (!data[0])
			continue;	/* a comment, or a field not used */
		n = format_event(o, buf + hlen, sizeof(buf) - hlen, data);
		if (n < 0)
			return -EINVAL;
		err = write_token(w, c, req, buf, hlen, hlen + n);
		if (err)
			return err;
		hlen = 0;
	}
}

/* stream=false: the upstream's JSON body, relayed whole */
static int proxy_whole(struct worker *w, struct conn *c, struct request *req,
		       uint64_t length, bool keep_alive, bool *up_failed)
{
	struct conn *u = w->up;
	const char *p, *end;
	char head[256];
	ssize_t got;
	int n, err;

	if (conn_reserve(u, length + 1))
		return -ENOMEM;
	while (u->len < length) {
		got = conn_fill(u);
		if (got <= 0) {
			*up_failed = true;
			return got ? (int)got : -ECONNRESET;
		}
	}
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %llu\r\n"
		     "connection: %s\r\n\r\n",
		     (unsigned long long)length,
		     keep_alive ? "keep-alive" : "close");
	req->t_last_write = mono_ns();
	note_first_write(w, req);
	err = write_all(c->fd, head, n);
	if (!err)
		err = write_all(c->fd, u->buf, length);
	/* the engine's text is "tok0tok1...": one "tok" a token */
	for (p = u->buf, end = u->buf + length;
	     (p = memmem(p, end - p, "tok", 3)); p += 3)
		req->tokens_written++;
	conn_consume(u, length);
	return err;
}

/*
 * --proxy: forwards the request to the engine instance on this worker's
 * keep-alive link and relays its answer. Logs the row; false when the
 * client connection must close.
 */
static bool proxy_completion(struct worker *w, struct conn *c,
			     struct http_req *hr, struct request *req)
{
	struct server *srv = w->srv;
	const char *status = "ok";
	struct upstream_resp r = { 0 };
	bool up_failed = false, keep = hr->keep_alive;
	char msg[96];
	int err = 0;

	if (w->up_fd < 0)
		err = upstream_connect(w);
	if (!err) {
		req->upstream_port = w->up_port;
		req->truth.t_enqueue = mono_ns();
		err = upstream_send(w, hr);
	}
	if (!err)
		err = upstream_headers(w, &r);
	if (!err && r.code != 200)
		err = -EPROTO;
	if (err) {
		/* nothing went to the client yet: it gets a 502 */
		upstream_close(w);
		status = server_stopping(srv) ? "aborted" : "upstream_error";
		if (r.code && r.code != 200)
			snprintf(msg, sizeof(msg), "engine answered %d",
				 r.code);
		else
			snprintf(msg, sizeof(msg), "engine unreachable: %s",
				 strerror(-err));
		if (send_error(srv, c, 502, keep, msg))
			keep = false;
		log_request(srv, req, status);
		atomic_fetch_add(&srv->n_failed, 1);
		return keep;
	}
	if (r.event_stream)
		err = proxy_stream(w, c, req, keep, &up_failed);
	else
		err = proxy_whole(w, c, req, r.length, keep, &up_failed);
	/* a link with an unread answer on it cannot carry the next one */
	if (err || r.close)
		upstream_close(w);
	if (err && server_stopping(srv))
		status = "aborted";
	else if (err)
		status = up_failed ? "upstream_error" : "client_gone";
	log_request(srv, req, status);
	if (!err && req->stream && r.event_stream)
		err = stream_finish(&srv->opts, c);
	atomic_fetch_add(err ? &srv->n_failed : &srv->n_ok, 1);
	return !err && keep;
}

/* POST /v1/completions; false when the connection must close */
static bool handle_completion(struct worker *w, struct conn *c,
			      struct http_req *hr)
{
	struct server *srv = w->srv;
	struct completion_args args;
	struct request req;
	const char *why, *status = "ok";
	int err;

	if (parse_completion(hr->body, hr->body_len, &args, &why)) {
		send_error(srv, c, 400, hr->keep_alive, why);
		return hr->keep_alive;
	}
	request_init(&req, srv->opts.handoff == HANDOFF_PIPE ? w->pipe_wr : -1);
	req.id = atomic_fetch_add(&srv->next_id, 1);
	req.peer_port = c->peer_port;
	req.prompt_bytes = args.prompt_bytes;
	req.max_tokens = args.has_max_tokens ? args.max_tokens :
					       srv->opts.tokens;
	req.stream = args.stream;
	req.t_first_byte_read = hr->t_first_byte_read;
	req.fe_rd_start = c->rd_start;
	req.fe_read_wake = c->read_wake;
	req.t_read_done = hr->t_read_done;
	req.tokenize_ns = tokenize(hr->body, hr->body_len,
				   args.prompt_bytes *
				   srv->opts.tokenize_ns_per_byte,
				   &req.tokenize_cpu_ns);

	if (srv->opts.proxy) {
		bool keep = proxy_completion(w, c, hr, &req);

		request_destroy(&req);
		return keep;
	}
	if (!(w->engine_fd >= 0 ? split_submit(w, &req) :
				  engine_submit(&srv->engine, &req))) {
		send_error(srv, c, 503, false, "server is stopping");
		request_destroy(&req);
		return false;
	}
	if (req.stream)
		err = stream_tokens(w, c, &req, hr->keep_alive);
	else
		err = whole_response(w, c, &req, hr->keep_alive);
	if (err && err != -ECANCELED)
		cancel_request(w, &req);
	/* a stop shuts sockets down under streams: that is an abort too */
	if (err == -ECANCELED || (err && server_stopping(srv)))
		status = "aborted";
	else if (err)
		status = "client_gone";
	/* logged before [DONE]: a client that saw the end finds its row */
	log_request(srv, &req, status);
	if (!err && req.stream)
		err = stream_finish(&srv->opts, c);
	atomic_fetch_add(err ? &srv->n_failed : &srv->n_ok, 1);
	request_destroy(&req);
	return !err && hr->keep_alive;
}

/* one request: routes it; false when the connection must close */
static bool handle_request(struct worker *w, struct conn *c,
			   struct http_req *hr)
{
	struct server *srv = w->srv;

	if (!strcmp(hr->path, "/v1/completions")) {
		if (strcmp(hr->method, "POST")) {
			send_error(srv, c, 405, hr->keep_alive,
				   "use POST for /v1/completions");
			return hr->keep_alive;
		}
		return handle_completion(w, c, hr);
	}
	if (!strcmp(hr->path, "/health") && !strcmp(hr->method, "GET"))
		return !send_json(c, 200, hr->keep_alive,
				  "{\"status\":\"ok\"}\n") && hr->keep_alive;
	send_error(srv, c, 404, hr->keep_alive, "no such endpoint");
	return hr->keep_alive;
}

static void serve_connection(struct worker *w, int fd)
{
	struct conn c = { .fd = fd };
	struct http_req hr;
	int one = 1;

	/* token events are small writes; Nagle would hold them back */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.peer_port = socket_port(fd, true);
	c.sched_fd = w->sched_fd;
	while (read_request(w->srv, &c, &hr) > 0) {
		if (!handle_request(w, &c, &hr))
			break;
		conn_consume(&c, hr.total_len);
	}
	free(c.buf);
}

/* publishes the connection being served so a stop can shut it down */
static bool worker_set_conn(struct worker *w, int fd)
{
	struct server *srv = w->srv;
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	w->cur_fd = stopping ? -1 : fd;
	pthread_mutex_unlock(&srv->conn_lock);
	return !stopping;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct server *srv = w->srv;
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "demo-fe-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	w->sched_fd = open_sched_stat();
	for (;;) {
		fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE) {
				if (errno == EMFILE || errno == ENFILE)
					sleep_until_ns(mono_ns() +
						       10 * NSEC_PER_MSEC);
				continue;
			}
			break;	/* the listening socket was shut down */
		}
		if (!worker_set_conn(w, fd)) {
			close(fd);
			break;
		}
		serve_connection(w, fd);
		worker_set_conn(w, -1);
		close(fd);
	}
	if (w->sched_fd >= 0)
		close(w->sched_fd);
	w->sched_fd = -1;
	return NULL;
}

/* -------------------------------------------------------------- startup */

static int listen_on(const char *addr, int port, int *out_fd)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res = NULL, *ai;
	char portstr[16], hostbuf[128];
	int fd = -1, one = 1, rc;

	snprintf(portstr, sizeof(portstr), "%d", port);
	addr = host_unbracket(addr, hostbuf, sizeof(hostbuf));
	rc = getaddrinfo(addr, portstr, &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: bad address '%s': %s\n", prog, addr,
			gai_strerror(rc));
		return -EINVAL;
	}
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 1024))
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot listen on %s port %d: %s\n", prog,
			addr, port, strerror(-rc));
		return rc;
	}
	*out_fd = fd;
	return 0;
}

/* written whole, then renamed: a reader never sees a partial port */
static int write_port_file(const char *path, int port)
{
	char tmp[4096], line[16];
	int fd, n, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%d\n", port);
	err = write_all(fd, line, n);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int open_log(const char *path)
{
	static const char header[] =
		"id,peer_port,t_read_done_ns,t_enqueue_ns,t_dispatch_ns,"
		"t_prefill_start_ns,t_prefill_end_ns,t_first_token_write_ns,"
		"t_last_token_write_ns,tokens,prefill_ns,queue_ns,tokenize_ns,"
		"prompt_bytes,status,io_ns,io_wait_ns,engine_cpu_ns,"
		"engine_runnable_ns,"
		"engine_sleep_ns,engine_run_delay_ns,engine_wake_delay_ns,"
		"t_first_byte_read_ns,t_token_ns,upstream_port,"
		"tokenize_cpu_ns,fe_run_delay_ns,fe_read_wake_ns,gpu_ns,"
		"kernel_ns,launch_cpu_ns,sync_wait_ns,sync_cpu_ns,t_boundary_ns\n";
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, header, sizeof(header) - 1);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: demo-server [OPTIONS]\n"
"OpenAI-style streaming completion server (HTTP/1.1 keep-alive, SSE) shaped\n"
"like an inference engine: front-end threads parse and tokenize, one engine\n"
"thread batches requests (continuous batching), runs prefill and decode\n"
"steps, and hands each token back to the front-end that writes it.\n"
"\n"
"  POST /v1/completions  {\"prompt\": \"...\", \"max_tokens\": N, \"stream\": true}\n"
"  GET  /health\n"
"\n"
"Options:\n"
"  -a, --addr ADDR             listen address, IPv4 or IPv6 (default 127.0.0.1)\n"
"  -p, --port PORT             listen port (default 8000; 0 picks a free one)\n"
"      --port-file FILE        write the bound port to FILE once listening\n"
"  -w, --workers N             front-end threads, one connection each (default 4)\n"
"  -t, --tokens N              tokens per response unless max_tokens says (default 16)\n"
"  -i, --token-interval-us N   decode step time in us (default 2000)\n"
"      --prefill-us SPEC       prefill time per request, in us: N, uniform:MIN:MAX\n"
"                              or exp:MEAN (default 5000)\n"
"      --seed N                seed for random prefill times and KV offsets (default 1)\n"
"      --batch N               requests the engine runs together (default 8)\n"
"      --prefill-mode M        sleep|spin: how prefill spends its time (default sleep)\n"
"      --decode-mode M         sleep|spin: same for decode steps (default sleep)\n"
"      --tokenize-ns-per-byte N  CPU burn per prompt byte in the front-end (default 0)\n"
"      --engine-cpu N          pin the engine thread to CPU N\n"
"      --kv-file PATH          at prefill, read each new request's KV blocks from\n"
"                              PATH with O_DIRECT (PATH must be on a block device)\n"
"      --kv-read-bytes N       bytes read per request, a multiple of 4096, in\n"
"                              1 MiB preads from a random offset (--seed)\n"
"      --handoff H             cond|pipe: how tokens reach the front-end (default cond)\n"
"      --split                 run the engine in a process of its own (forked at\n"
"                              start): each front-end thread talks to it over its\n"
"                              own unix socket, requests one way, tokens back\n"
"      --proxy HOST:PORT       run no engine: relay each request to the demo-server\n"
"                              at HOST:PORT (its --framing sse) over a keep-alive\n"
"                              TCP link per front-end thread\n"
"      --gpu                   run prefill and decode as kernels on a CUDA driver\n"
"                              library (the stub GPU of tools/stubcuda: kernel\n"
"                              durations are simulated), dlopened by the engine\n"
"                              thread as it starts; STUBCUDA_DEVICE=PATH names\n"
"                              its device node. Each iteration launches N kernels\n"
"                              adding up to its prefill and decode time, then\n"
"                              waits in cuStreamSynchronize\n"
"      --gpu-sync M            spin|block: the sync spins on the CPU, or blocks on\n"
"                              the device fd (default spin)\n"
"      --gpu-lib PATH          the library (default libcuda.so.1 in the directory\n"
"                              of this program)\n"
"      --kernels-per-step N    kernels launched per iteration (default 8)\n"
"      --framing F             sse|chunked: plain SSE ended by [DONE], or each event\n"
"                              in an HTTP chunk (default sse)\n"
"      --headers-with-body     send the headers with the first token, one write\n"
"      --send-call C           write|writev|sendmsg: a token event in one buffer\n"
"                              (default), or as iovecs: the headers when they\n"
"                              travel with it, the chunk-size line or \"data: \",\n"
"                              the payload and the trailing CRLF or blank line\n"
"      --max-body-bytes N      largest request body accepted (default 67108864)\n"
"      --log FILE              ground-truth CSV, one row per request\n"
"  -q, --quiet                 print nothing but errors\n"
"  -h, --help                  this help\n"
"\n"
"Log columns (times CLOCK_MONOTONIC ns, durations ns):\n"
"  id, peer_port             request number, the client's port\n"
"  t_read_done_ns            the whole request was read\n"
"  t_enqueue_ns              handed to the engine (--split: the engine process\n"
"                            queued it; --proxy: sent to the engine instance)\n"
"  t_dispatch_ns             the engine took it up (admitted to the batch)\n"
"  t_prefill_start_ns, t_prefill_end_ns  its prefill step (KV reads included)\n"
"  t_first_token_write_ns, t_last_token_write_ns  token writes to the client\n"
"  tokens, prefill_ns, queue_ns (t_dispatch - t_enqueue), tokenize_ns,\n"
"  prompt_bytes, status (ok, client_gone, aborted, upstream_error)\n"
"  io_ns                     wall time in the KV preads of its prefill step\n"
"  io_wait_ns                the part of it blocked (less CPU and runqueue time)\n"
"  engine_cpu_ns             the engine thread's CPU time (CLOCK_THREAD_CPUTIME_ID)\n"
"                            from the start of the iteration that admitted it\n"
"                            (t_boundary_ns, else its dispatch) to its first\n"
"                            token: its prefill step (KV reads included) and\n"
"                            the decode step after\n"
"  engine_runnable_ns        wall minus CPU time over the compute steps among\n"
"                            those that spin: the engine's runqueue wait in them\n"
"  engine_sleep_ns           blocked time of the compute steps that sleep\n"
"  engine_run_delay_ns       the kernel's runqueue wait of the engine thread\n"
"                            (/proc schedstat) from the start of that iteration\n"
"                            (t_boundary_ns, else its wait for work: its wakeup\n"
"                            included) to its first token\n"
"  engine_wake_delay_ns      the part of it before the request was taken up\n"
"  t_first_byte_read_ns      the first read that returned bytes of the request\n"
"  t_token_ns                the engine handed its first token to the front-end\n"
"  upstream_port             --proxy: local port of the link to the engine\n"
"                            instance (its log's peer_port), else 0\n"
"  tokenize_cpu_ns           the front-end's CPU time in tokenize_ns\n"
"  fe_run_delay_ns           the kernel's runqueue wait of the front-end thread\n"
"                            from the start of the last read of the request\n"
"                            (earlier reads of a slow upload wait on the\n"
"                            network anyway) to its first token write\n"
"  fe_read_wake_ns           the part of it in that read: its wakeup once the\n"
"                            last bytes came\n"
"  gpu_ns                    --gpu: over the iteration that admitted the request\n"
"                            (its first token's): the simulated GPU time its sync\n"
"                            waited for, i.e. the kernels' time on the critical\n"
"                            path (what the launches did not overlap; for a\n"
"                            spinning sync, at most its CPU time: preempted, it\n"
"                            waits on the runqueue)\n"
"  kernel_ns                 the simulated time of all that iteration's kernels\n"
"  launch_cpu_ns             the engine thread's CPU time in its launches\n"
"  sync_wait_ns              wall time in its cuStreamSynchronize\n"
"  sync_cpu_ns               the engine thread's CPU time in it (all of it when\n"
"                            the sync spins: GPU time, not engine CPU work)\n"
"  t_boundary_ns             the iteration boundary the request waited for: the\n"
"                            engine's last token hand-off before it took the\n"
"                            request up (a front-end it wakes may preempt it\n"
"                            there); 0 when the engine was idle, woken for it\n"
"With --gpu, t_prefill_end_ns is the simulated end of the last prefill kernel.\n"
"Engine columns are 0 when the engine is another instance (--proxy); GPU\n"
"columns are 0 without --gpu.\n"
"\n"
"Plain SSE framing ends a response at [DONE] with no length: clients other\n"
"than loadgen should send 'Connection: close' or use --framing chunked.\n"
"\n"
"Examples:\n"
"  demo-server                                  # 127.0.0.1:8000, 5 ms prefill\n"
"  demo-server -p 0 --port-file /tmp/port --log /tmp/gt.csv\n"
"  demo-server -a :: --batch 2 --prefill-us exp:20000 --seed 7\n"
"  demo-server --framing chunked --headers-with-body -i 10000\n"
"  demo-server --engine-cpu 1 --prefill-mode spin   # and: cpuhog -c 1 -t 30\n"
"  demo-server --kv-file /var/tmp/kv --kv-read-bytes 8388608\n"
"  demo-server --split --batch 1\n"
"  STUBCUDA_DEVICE=/tmp/nvidia0 demo-server --gpu --gpu-sync block\n"
"  demo-server -p 8001 & demo-server --proxy 127.0.0.1:8001\n"
"  curl -N -H 'Connection: close' localhost:8000/v1/completions \\\n"
"       -d '{\"prompt\": \"hi\", \"max_tokens\": 4, \"stream\": true}'\n");
}

enum {
	OPT_PORT_FILE = 256,
	OPT_PREFILL_US,
	OPT_SEED,
	OPT_BATCH,
	OPT_FRAMING,
	OPT_HEADERS_WITH_BODY,
	OPT_SEND_CALL,
	OPT_LOG,
	OPT_TOKENIZE,
	OPT_PREFILL_MODE,
	OPT_DECODE_MODE,
	OPT_HANDOFF,
	OPT_MAX_BODY,
	OPT_ENGINE_CPU,
	OPT_KV_FILE,
	OPT_KV_READ_BYTES,
	OPT_SPLIT,
	OPT_PROXY,
	OPT_GPU,
	OPT_GPU_SYNC,
	OPT_GPU_LIB,
	OPT_KERNELS_PER_STEP,
};

/* The index of s in names (n of them), or a usage error naming them all
 * ("want a, b or c"). */
static int parse_choice(const char *opt, const char *s,
			const char *const *names, int n)
{
	char want[128];
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	want[0] = '\0';
	for (i = 0; i < n && len < sizeof(want); i++)
		len += snprintf(want + len, sizeof(want) - len, "%s%s",
				!i ? "" : i == n - 1 ? " or " : ", ",
				names[i]);
	usage_error("invalid %s '%s' (want %s)", opt, s, want);
	return 0;
}

#define PARSE_CHOICE(opt, s, ...)                                        \
	parse_choice(opt, s, (const char *const[]){ __VA_ARGS__ },       \
		     sizeof((const char *const[]){ __VA_ARGS__ }) /        \
			     sizeof(const char *))

static enum wait_mode parse_wait_mode(const char *opt, const char *s)
{
	return PARSE_CHOICE(opt, s, "sleep", "spin");
}

static uint64_t parse_num_opt(const char *opt, const char *s, uint64_t min,
			      uint64_t max)
{
	uint64_t v;

	if (!parse_u64_range(s, min, max, &v))
		usage_error("invalid %s '%s' (want %llu..%llu)", opt, s,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_args(int argc, char **argv, struct server_opts *o)
{
	static const struct option longopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE },
		{ "workers", required_argument, NULL, 'w' },
		{ "tokens", required_argument, NULL, 't' },
		{ "token-interval-us", required_argument, NULL, 'i' },
		{ "prefill-us", required_argument, NULL, OPT_PREFILL_US },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "framing", required_argument, NULL, OPT_FRAMING },
		{ "headers-with-body", no_argument, NULL,
		  OPT_HEADERS_WITH_BODY },
		{ "send-call", required_argument, NULL, OPT_SEND_CALL },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "tokenize-ns-per-byte", required_argument, NULL,
		  OPT_TOKENIZE },
		{ "prefill-mode", required_argument, NULL, OPT_PREFILL_MODE },
		{ "decode-mode", required_argument, NULL, OPT_DECODE_MODE },
		{ "handoff", required_argument, NULL, OPT_HANDOFF },
		{ "max-body-bytes", required_argument, NULL, OPT_MAX_BODY },
		{ "engine-cpu", required_argument, NULL, OPT_ENGINE_CPU },
		{ "kv-file", required_argument, NULL, OPT_KV_FILE },
		{ "kv-read-bytes", required_argument, NULL,
		  OPT_KV_READ_BYTES },
		{ "split", no_argument, NULL, OPT_SPLIT },
		{ "proxy", required_argument, NULL, OPT_PROXY },
		{ "gpu", no_argument, NULL, OPT_GPU },
		{ "gpu-sync", required_argument, NULL, OPT_GPU_SYNC },
		{ "gpu-lib", required_argument, NULL, OPT_GPU_LIB },
		{ "kernels-per-step", required_argument, NULL,
		  OPT_KERNELS_PER_STEP },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char host[256], port[16];
	bool handoff_set = false, cpu_modes_set = false, gpu_opts_set = false;
	int c;

	*o = (struct server_opts) {
		.engine_cpu = -1,
		.addr = "127.0.0.1",
		.port = 8000,
		.workers = 4,
		.batch = 8,
		.tokens = 16,
		.token_interval_ns = 2000 * NSEC_PER_USEC,
		.prefill = { DELAY_FIXED, 5000 * NSEC_PER_USEC, 0 },
		.seed = 1,
		.max_body = DEFAULT_MAX_BODY,
		.kernels_per_step = 8,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:w:t:i:qh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			o->port = parse_num_opt("--port", optarg, 0, 65535);
			break;
		case OPT_PORT_FILE:
			o->port_file = optarg;
			break;
		case 'w':
			o->workers = parse_num_opt("--workers", optarg, 1,
						   MAX_WORKERS);
			break;
		case 't':
			o->tokens = parse_num_opt("--tokens", optarg, 1,
						  MAX_TOKENS_LIMIT);
			break;
		case 'i':
			if (!parse_us(optarg, &o->token_interval_ns))
				usage_error("invalid --token-interval-us '%s'",
					    optarg);
			break;
		case OPT_PREFILL_US:
			if (!parse_delay_spec(optarg, &o->prefill))
				usage_error("invalid --prefill-us '%s' (want "
					    "N, uniform:MIN:MAX or exp:MEAN)",
					    optarg);
			break;
		case OPT_SEED:
			o->seed = parse_num_opt("--seed", optarg, 0,
						UINT64_MAX);
			break;
		case OPT_BATCH:
			o->batch = parse_num_opt("--batch", optarg, 1,
						 MAX_BATCH);
			break;
		case OPT_FRAMING:
			o->framing = PARSE_CHOICE("--framing", optarg, "sse",
						  "chunked");
			break;
		case OPT_HEADERS_WITH_BODY:
			o->headers_with_body = true;
			break;
		case OPT_SEND_CALL:
			o->send_call = PARSE_CHOICE("--send-call", optarg,
						    "write", "writev",
						    "sendmsg");
			break;
		case OPT_LOG:
			o->log_path = optarg;
			break;
		case OPT_TOKENIZE:
			o->tokenize_ns_per_byte =
				parse_num_opt("--tokenize-ns-per-byte", optarg,
					      0, 1000000);
			break;
		case OPT_PREFILL_MODE:
			o->prefill_mode = parse_wait_mode("--prefill-mode",
							  optarg);
			cpu_modes_set = true;
			break;
		case OPT_DECODE_MODE:
			o->decode_mode = parse_wait_mode("--decode-mode",
							 optarg);
			cpu_modes_set = true;
			break;
		case OPT_HANDOFF:
			o->handoff = PARSE_CHOICE("--handoff", optarg, "cond",
						  "pipe");
			handoff_set = true;
			break;
		case OPT_MAX_BODY:
			o->max_body = parse_num_opt("--max-body-bytes", optarg,
						    0, 1ULL << 32);
			break;
		case OPT_ENGINE_CPU:
			o->engine_cpu = parse_num_opt("--engine-cpu", optarg, 0,
						      CPU_SETSIZE - 1);
			break;
		case OPT_KV_FILE:
			o->kv_path = optarg;
			break;
		case OPT_KV_READ_BYTES:
			o->kv_read_bytes = parse_num_opt("--kv-read-bytes",
							 optarg, KV_ALIGN,
							 1ULL << 36);
			if (o->kv_read_bytes % KV_ALIGN)
				usage_error("invalid --kv-read-bytes '%s' "
					    "(want a multiple of %d)", optarg,
					    KV_ALIGN);
			break;
		case OPT_SPLIT:
			o->split = true;
			break;
		case OPT_PROXY:
			if (!proxy_split(optarg, host, sizeof(host), port,
					 sizeof(port)))
				usage_error("invalid --proxy '%s' (want "
					    "HOST:PORT, [IPV6]:PORT)", optarg);
			o->proxy = optarg;
			break;
		case OPT_GPU:
			o->gpu = true;
			break;
		case OPT_GPU_SYNC:
			o->gpu_sync = PARSE_CHOICE("--gpu-sync", optarg, "spin",
						   "block");
			gpu_opts_set = true;
			break;
		case OPT_GPU_LIB:
			if (!*optarg)
				usage_error("empty --gpu-lib");
			o->gpu_lib = optarg;
			gpu_opts_set = true;
			break;
		case OPT_KERNELS_PER_STEP:
			o->kernels_per_step =
				parse_num_opt("--kernels-per-step", optarg, 1,
					      MAX_KERNELS_PER_STEP);
			gpu_opts_set = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		default: /* -h, a missing value, an unknown option */
			demo_getopt_other(c, prog, argv, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->kv_path != !o->kv_read_bytes)
		usage_error("--kv-file and --kv-read-bytes go together");
	if (o->split && o->proxy)
		usage_error("--split and --proxy do not go together");
	if (o->proxy && (o->kv_path || o->engine_cpu >= 0 || o->gpu))
		usage_error("--proxy runs no engine: --kv-file, --engine-cpu "
			    "and --gpu belong to the engine instance");
	if (gpu_opts_set && !o->gpu)
		usage_error("--gpu-sync, --gpu-lib and --kernels-per-step go "
			    "with --gpu");
	if (o->gpu && cpu_modes_set)
		usage_error("--prefill-mode and --decode-mode are for the CPU "
			    "engine: with --gpu, --gpu-sync says how it waits");
	if (handoff_set && (o->split || o->proxy))
		usage_error("--handoff is for the in-process engine: --split "
			    "hands tokens over its unix sockets");
}

/*
 * The KV file must be read from a disk: a file system that refuses
 * O_DIRECT, or tmpfs (which accepts and ignores it), is an error.
 */
static void kv_check(const struct server_opts *o)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	fd = open(o->kv_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		fprintf(stderr, "%s: --kv-file %s: O_DIRECT refused by its "
			"file system (tmpfs?): put it on a block device\n",
			prog, o->kv_path);
		exit(2);
	}
	if (fd < 0) {
		fprintf(stderr, "%s: --kv-file %s: %s\n", prog, o->kv_path,
			strerror(errno));
		exit(2);
	}
	if (!fstatfs(fd, &sfs) && (sfs.f_type == TMPFS_MAGIC ||
				   sfs.f_type == RAMFS_MAGIC)) {
		fprintf(stderr, "%s: --kv-file %s: on tmpfs, O_DIRECT reads "
			"would not reach a disk: put it on a block device\n",
			prog, o->kv_path);
		exit(2);
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < o->kv_read_bytes) {
		fprintf(stderr, "%s: --kv-file %s: want a regular file of at "
			"least --kv-read-bytes (%llu)\n", prog, o->kv_path,
			(unsigned long long)o->kv_read_bytes);
		exit(2);
	}
	close(fd);
}

/* the engine thread may only be pinned where this process may run */
static void cpu_check(int cpu)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) ||
	    !CPU_ISSET(cpu, &allowed)) {
		fprintf(stderr, "%s: --engine-cpu %d: not a CPU this process "
			"may run on\n", prog, cpu);
		exit(2);
	}
}

static int workers_start(struct server *srv)
{
	int i, err, fds[2];

	srv->workers = calloc(srv->opts.workers, sizeof(*srv->workers));
	if (!srv->workers)
		return -ENOMEM;
	for (i = 0; i < srv->opts.workers; i++) {
		struct worker *w = &srv->workers[i];

		w->srv = srv;
		w->index = i;
		w->cur_fd = -1;
		w->pipe_rd = w->pipe_wr = -1;
		w->engine_fd = srv->engine_fds ? srv->engine_fds[i] : -1;
		w->up_fd = -1;
		w->sched_fd = -1;
		if (srv->opts.proxy) {
			w->up = calloc(1, sizeof(*w->up));
			if (!w->up)
				return -ENOMEM;
			w->up->fd = -1;
			w->up->sched_fd = -1;
		}
		if (srv->opts.handoff == HANDOFF_PIPE) {
			if (pipe2(fds, O_CLOEXEC))
				return -errno;
			w->pipe_rd = fds[0];
			w->pipe_wr = fds[1];
			fcntl(w->pipe_wr, F_SETFL, O_NONBLOCK);
		}
	}
	for (i = 0; i < srv->opts.workers; i++) {
		err = pthread_create(&srv->workers[i].thread, NULL,
				     worker_main, &srv->workers[i]);
		if (err)
			return -err;
		srv->nworkers_started++;
	}
	return 0;
}

/* unblocks every front-end thread: accept, idle reads, blocked writes */
static void workers_stop(struct server *srv)
{
	int i;

	pthread_mutex_lock(&srv->conn_lock);
	srv->stopping = true;
	shutdown(srv->listen_fd, SHUT_RDWR);
	for (i = 0; i < srv->opts.workers; i++) {
		struct worker *w = &srv->workers[i];

		if (w->cur_fd >= 0)
			shutdown(w->cur_fd, SHUT_RDWR);
		if (w->up_fd >= 0)
			shutdown(w->up_fd, SHUT_RDWR);
		/* the engine process sees it too, and stops */
		if (w->engine_fd >= 0)
			shutdown(w->engine_fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&srv->conn_lock);
}

static void workers_join(struct server *srv)
{
	int i;

	if (!srv->workers)
		return;
	for (i = 0; i < srv->opts.workers; i++) {
		if (i < srv->nworkers_started)
			pthread_join(srv->workers[i].thread, NULL);
		if (srv->workers[i].pipe_rd >= 0)
			close(srv->workers[i].pipe_rd);
		if (srv->workers[i].pipe_wr >= 0)
			close(srv->workers[i].pipe_wr);
		if (srv->workers[i].up) {
			if (srv->workers[i].up_fd >= 0)
				close(srv->workers[i].up_fd);
			free(srv->workers[i].up->buf);
			free(srv->workers[i].up);
		}
	}
	free(srv->workers);
	srv->workers = NULL;
}

int main(int argc, char **argv)
{
	struct server srv = { .listen_fd = -1, .log_fd = -1 };
	bool engine_up = false;
	sigset_t sigs;
	int err, sig, port, ret = 1;

	parse_args(argc, argv, &srv.opts);
	atomic_init(&srv.next_id, 1);
	pthread_mutex_init(&srv.conn_lock, NULL);

	/* threads inherit the mask; only main takes SIGINT/SIGTERM */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (srv.opts.kv_path)
		kv_check(&srv.opts);
	if (srv.opts.engine_cpu >= 0)
		cpu_check(srv.opts.engine_cpu);
	if (srv.opts.proxy && proxy_resolve(&srv))
		goto cleanup;
	/* before any thread or socket: the engine process gets none of them */
	if (srv.opts.split) {
		err = split_start(&srv);
		if (err) {
			fprintf(stderr, "%s: cannot start the engine process: "
				"%s\n", prog, strerror(-err));
			goto cleanup;
		}
	}
	if (srv.opts.log_path) {
		srv.log_fd = open_log(srv.opts.log_path);
		if (srv.log_fd < 0) {
			fprintf(stderr, "%s: cannot write log %s: %s\n", prog,
				srv.opts.log_path, strerror(-srv.log_fd));
			goto cleanup;
		}
	}
	if (listen_on(srv.opts.addr, srv.opts.port, &srv.listen_fd))
		goto cleanup;
	port = socket_port(srv.listen_fd, false);

	if (!srv.opts.split && !srv.opts.proxy) {
		err = engine_start(&srv.engine, &srv);
		if (err) {
			fprintf(stderr, "%s: cannot start engine: %s\n", prog,
				srv.engine.gpu.err[0] ? srv.engine.gpu.err :
							strerror(-err));
			goto cleanup;
		}
		engine_up = true;
	}
	err = workers_start(&srv);
	if (err) {
		fprintf(stderr, "%s: cannot start workers: %s\n", prog,
			strerror(-err));
		goto cleanup;
	}
	if (srv.opts.port_file) {
		err = write_port_file(srv.opts.port_file, port);
		if (err) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog,
				srv.opts.port_file, strerror(-err));
			goto cleanup;
		}
	}
	if (!srv.opts.quiet) {
		printf("%s: listening on %s port %d (workers %d, batch %d, "
		       "framing %s%s%s)\n", prog, srv.opts.addr, port,
		       srv.opts.workers, srv.opts.batch,
		       srv.opts.framing == FRAMING_CHUNKED ? "chunked" : "sse",
		       srv.opts.split ? ", engine process" :
		       srv.opts.proxy ? ", proxy to " : "",
		       srv.opts.proxy ? srv.opts.proxy : "");
		fflush(stdout);
	}
	while (sigwait(&sigs, &sig))
		;
	ret = 0;
cleanup:
	if (engine_up)
		engine_stop(&srv.engine);
	if (srv.listen_fd >= 0 && srv.workers)
		workers_stop(&srv);
	workers_join(&srv);
	if (engine_up)
		engine_join(&srv.engine);
	split_stop(&srv);
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	if (srv.log_fd >= 0 && fsync(srv.log_fd) && errno != EINVAL)
		fprintf(stderr, "%s: log sync: %s\n", prog, strerror(errno));
	if (srv.log_fd >= 0)
		close(srv.log_fd);
	if (!ret && !srv.opts.quiet)
		printf("%s: stopped: %llu requests ok, %llu failed, "
		       "%llu http errors\n", prog,
		       (unsigned long long)atomic_load(&srv.n_ok),
		       (unsigned long long)atomic_load(&srv.n_failed),
		       (unsigned long long)atomic_load(&srv.n_http_errors));
	pthread_mutex_destroy(&srv.conn_lock);
	return ret;
}
