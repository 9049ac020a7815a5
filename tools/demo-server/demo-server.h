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
 *
 * The files: main.c starts and stops it; options.c, engine.c, gpu.c,
 * frontend.c, proxy.c, http.c and json.c as declared below.
 */
#ifndef DEMO_SERVER_H
#define DEMO_SERVER_H

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

#include "../demo_common.h"
#include "../stubcuda/stubcuda.h"

/*
 * A USDT probe PROVIDER:NAME with one 8-byte argument in a register, as
 * <sys/sdt.h> writes it (not installed here): a nop where the probe fires
 * and a .note.stapsdt entry saying where it is and where its argument
 * lives, for `ttftrace record --mark KIND=usdt:demo-server:PROVIDER:NAME`.
 */
#define DEMO_USDT1(provider, name, arg)                                       \
	__asm__ __volatile__(                                                 \
		"990: nop\n"                                                  \
		".pushsection .note.stapsdt,\"?\",\"note\"\n"                   \
		".balign 4\n"                                                 \
		".4byte 992f-991f, 994f-993f, 3\n"                            \
		"991: .asciz \"stapsdt\"\n"                                   \
		"992: .balign 4\n"                                            \
		"993: .8byte 990b\n"                                          \
		".8byte _.stapsdt.base\n"                                     \
		".8byte 0\n"                                                  \
		".asciz \"" #provider "\"\n"                                   \
		".asciz \"" #name "\"\n"                                       \
		".asciz \"8@%0\"\n"                                            \
		"994: .balign 4\n"                                            \
		".popsection\n"                                               \
		".ifndef _.stapsdt.base\n"                                    \
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
		".weak _.stapsdt.base\n"                                      \
		".hidden _.stapsdt.base\n"                                    \
		"_.stapsdt.base: .space 1\n"                                  \
		".size _.stapsdt.base, 1\n"                                   \
		".popsection\n"                                               \
		".endif\n"                                                    \
		:                                                             \
		: "r"((unsigned long)(arg)))

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
	bool kv_uring;		/* --kv-uring */
};

/*
 * What the engine knows of a request, CLOCK_MONOTONIC ns. It travels as is
 * from the engine process to the front-end in --split mode.
 */
struct engine_truth {
	uint64_t t_enqueue, t_dispatch;
	/*
	 * The clock just before engine_submit() is called and just after
	 * engine_admitted() and the demo:admitted probe returned: with
	 * t_enqueue and t_dispatch they bracket a marker's trap on those
	 * functions, whatever preempts or delays the trap in between
	 */
	uint64_t t_submit_call, t_admitted_ret;
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
	/* the CPU time in those KV preads (ttftrace's storage.io with the
	 * blocked part, docs/design.md §4.3) */
	uint64_t io_cpu_ns;
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

/* an io_uring of one read at a time (uring.c) */
struct kv_ring {
	int fd;
	void *sq, *cq;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
	size_t sq_len, cq_len, sqes_len;
	unsigned int *sq_tail, *sq_array, *cq_head, *cq_tail;
	unsigned int sq_mask, cq_mask;
};

int kv_ring_open(struct kv_ring *r);
void kv_ring_close(struct kv_ring *r);
/* pread(2) through the ring: bytes read, or -1 with errno */
ssize_t kv_ring_pread(struct kv_ring *r, int fd, void *buf, size_t len,
		      uint64_t off);

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
	struct kv_ring kv_ring;	/* --kv-uring's, fd -1 without */
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

/* the name every message of the server starts with */
extern const char *const prog;

/* one line on stderr and exit status 2 */
#define usage_error(...) demo_usage_exit(prog, __VA_ARGS__)

/* where the engine thread's time went in the steps of one iteration */
struct step_cost {
	uint64_t runnable_ns, sleep_ns, io_ns, io_wait_ns, io_cpu_ns;
	uint64_t gpu_ns, kernel_ns, launch_cpu_ns, sync_wait_ns, sync_cpu_ns;
};

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

/* engine.c: delays, thread clocks, the engine thread and its queue, --split */
bool parse_us(const char *s, uint64_t *ns);
bool parse_delay_spec(const char *s, struct delay_spec *d);
uint64_t thread_cpu_ns(void);
uint64_t run_delay(int sched_fd);
int open_sched_stat(void);
uint64_t engine_run_delay(const struct engine *e);
void request_init(struct request *req, int notify_fd);
void request_destroy(struct request *req);
bool engine_submit(struct engine *e, struct request *req);
/* probed by ttftrace's marker test: a request admitted to the batch */
void engine_admitted(struct request *req);
int engine_start(struct engine *e, struct server *srv);
void engine_stop(struct engine *e);
void engine_join(struct engine *e);
int split_start(struct server *srv);
void split_stop(struct server *srv);

/* frontend.c: the front-end threads, token streaming, the ground-truth log */
int format_event(const struct server_opts *o, char *buf, size_t size,
		 const char *data);
int stream_start(const struct server_opts *o, struct conn *c, char *buf,
		 size_t size, uint64_t id, bool keep_alive);
void note_first_write(struct worker *w, struct request *req);
int write_token(struct worker *w, struct conn *c, struct request *req,
		const char *buf, size_t hlen, size_t len);
int stream_finish(const struct server_opts *o, struct conn *c);
void log_request(struct server *srv, const struct request *req,
		 const char *status);
bool server_stopping(struct server *srv);
void *worker_main(void *arg);

/* gpu.c: --gpu, the CUDA driver library and one iteration as kernels */
int engine_gpu_open(struct engine_gpu *g, const struct server_opts *o);
void engine_gpu_close(struct engine_gpu *g);
uint64_t engine_gpu_step(struct engine *e, uint64_t prefill_ns,
			 uint64_t decode_ns, struct step_cost *cost);

/* http.c: connection buffers, HTTP/1.1 requests and replies */
int conn_reserve(struct conn *c, size_t need);
ssize_t conn_fill(struct conn *c);
int send_json(struct conn *c, int code, bool keep_alive, const char *body);
int send_error(struct server *srv, struct conn *c, int code, bool keep_alive,
	       const char *msg);
bool header_value(const char *hdrs, const char *end, const char *name,
		  char *out, size_t size);
int read_request(struct server *srv, struct conn *c, struct http_req *hr);
void conn_consume(struct conn *c, size_t n);

/* json.c: the completion request body */
int parse_completion(const char *s, size_t len, struct completion_args *args,
		     const char **why);

/* options.c: --help and the command line */
void parse_args(int argc, char **argv, struct server_opts *o);

/* proxy.c: --proxy, relaying a request to another instance */
bool proxy_split(const char *spec, char *host, size_t size, char *port,
		 size_t port_size);
int proxy_resolve(struct server *srv);
bool proxy_completion(struct worker *w, struct conn *c, struct http_req *hr,
		      struct request *req);

#endif /* DEMO_SERVER_H */
