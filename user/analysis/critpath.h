/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-thread timelines and the critical-path walk that attributes each
 * request's TTFT to stages (docs/design.md §4): the façade of threads.c
 * (timelines, names), waits.c (why a thread waited), handoff.c (hand-offs
 * and dispatch rules), walk.c (the walk) and timeline.c (read API). Plain
 * C over the event stream: no BPF, no globals, deterministic. Feed every
 * event in timestamp order with tt_critpath_add(), then walk the requests
 * the analyzer rebuilt.
 */
#ifndef TT_CRITPATH_H
#define TT_CRITPATH_H

#include <stdbool.h>
#include <stddef.h>
#include "event.h"

/* A request as the analyzer sees it; 0 means unknown for every field. */
struct tt_cp_request {
	__u64 id;
	__u64 t_arrive; /* kernel had the first byte */
	__u64 t_read; /* the app read the whole request */
	__u64 t_first_read; /* its first read (0: t_read) */
	__u64 t_first_write; /* first token-carrying send (syscall entry) */
	__u64 t_headers; /* the send of the response's status line, 0: none */
	__u64 t_wire; /* that send reached the device */
	__u64 t_end; /* end of the response: its hand-offs count until then */
	/*
	 * The request's last bytes reached the kernel (its last sk_data_ready
	 * before t_read; 0: t_arrive): the reader's runqueue waits before it
	 * are network.in, the upload was not over yet.
	 */
	__u64 t_last_arrive;
	__u16 peer_port; /* its client's port (application markers' peer) */
	__u32 tgid; /* the server process that serves it, 0: unknown */
	__u32 reader_tid; /* thread that read the request (last RECV) */
	__u32 writer_tid; /* thread that did the first token write */
	/* a hop, sent by this traced thread on loopback: a request whose path
	 * meets its response takes its path (docs/design.md §4.11) */
	__u32 hop_sender_tid;
	/* its first token read by the gateway: then, by this thread */
	__u64 hop_read_t;
	__u32 hop_read_tid;
	/* encrypted, no plaintext of it seen (a TLS handshake's exchange, or
	 * a request no probe read): its read is no request's in a loop's
	 * order of reads and sends (rqindex.c) */
	bool tls_unread;
	bool conn_reused; /* an earlier request on its connection was seen */
	__u64 bytes_in; /* the request's bytes read */
};

/* Stages (docs/design.md §4.7); tt_stage_name() gives the JSON names. */
enum tt_stage {
	TT_ST_NET_IN, /* network.in */
	TT_ST_NET_OUT, /* network.out */
	TT_ST_BACKLOG, /* scheduler.backlog */
	TT_ST_QUEUE, /* scheduler.queue */
	TT_ST_RUNQUEUE, /* scheduler.runqueue */
	TT_ST_STORAGE, /* storage.io */
	TT_ST_GPU, /* compute.gpu */
	TT_ST_CPU, /* compute.cpu */
	TT_ST_SLEEP, /* other.sleep */
	TT_ST_LOCK, /* other.lock */
	TT_ST_UNKNOWN, /* other.unknown */
	TT_ST_MAX
};

/* The report's stage rows: the stages before other.*, then "other" whole
 * (other.sleep + other.lock + other.unknown). */
#define TT_ST_MAIN TT_ST_SLEEP
#define TT_ST_ROWS (TT_ST_MAIN + 1)

/* A request's time in stage row row, from its stage_ns[TT_ST_MAX]. */
static inline __u64 tt_stage_row_ns(const __u64 *stage_ns, unsigned int row)
{
	if (row < TT_ST_MAIN)
		return stage_ns[row];
	return stage_ns[TT_ST_SLEEP] + stage_ns[TT_ST_LOCK] +
	       stage_ns[TT_ST_UNKNOWN];
}

/* tt_cp_segment.state: the thread's state over the segment. */
enum tt_cp_state {
	TT_CP_PHASE = 0, /* a phase, not a thread state: network.*, queue */
	TT_CP_RUNNING,
	TT_CP_RUNNABLE,
	TT_CP_BLOCKED,
	TT_CP_NODATA, /* no events tell (before a thread's first, lost) */
};

struct tt_cp_segment {
	__u64 start, dur;
	__u32 tid; /* 0 for scheduler.queue */
	__u8 state; /* enum tt_cp_state */
	__u8 stage; /* enum tt_stage */
	char reason[32]; /* "on-cpu", "runqueue", "ioctl gpu 195:0", ... */
};

/* How t_dispatch was found (docs/design.md §4.4, in order of trust). */
enum tt_cp_dispatch {
	TT_CP_DISP_READ = 0, /* nothing better: t_dispatch = t_read */
	/* the consumer was woken by the reader (or a thread serving only this
	 * request): t_enqueue = that wake, no queue; t_dispatch = its first
	 * run after it (the wait for a CPU is scheduler.runqueue), holding
	 * the GIL when it waited for it (past a timed-out wait), no later
	 * than the token's hand-off */
	TT_CP_DISP_PICKUP,
	/* the consumer's last hand-off to another request; t_enqueue is where
	 * the reader let the request go (see tt_critpath_walk_all) */
	TT_CP_DISP_HANDOFF,
	/* the GPU rule: the first launch of the engine's iteration after the
	 * one that was running when the request was read */
	TT_CP_DISP_GPU,
	/* an application marker said so (record --mark dispatch=) */
	TT_CP_DISP_MARKER,
	/* the engine was preempted when the reader let the request go and
	 * woken by nobody: it took the request up when it ran again */
	TT_CP_DISP_RESUME,
	/* the engine took the request from a Go channel's buffer: the
	 * receive of the element the reader sent (docs/design.md §4.10) */
	TT_CP_DISP_CHANNEL,
	/* a worker took an application's lock released by a thread serving
	 * another request (one model behind a lock): queued until it held
	 * it, and the interpreter lock after it (docs/design.md §4.4) */
	TT_CP_DISP_LOCK,
	/* a batcher waited on its input again after taking requests from it
	 * (a dynamic batch filling, or its timeout): queued until that wait's
	 * end, when it ran to compute them (docs/design.md §4.4) */
	TT_CP_DISP_BATCH,
	/* a busy consumer read its input pipe after its last hand-off to
	 * another request, not waiting for it (but for the GIL): the request
	 * waited in the pipe till that read (docs/design.md §4.4) */
	TT_CP_DISP_TAKE,
	/* a worker, idle since the read but for its waits on locks (the
	 * interpreter lock, a word judged a lock), got such a lock from the
	 * reader: it took the request up when it first ran after (§4.4) */
	TT_CP_DISP_RELEASE,
	/* a busy consumer read a file after its last hand-off to another
	 * request and more of its CPU than a drain's: the hand-offs between
	 * woke nobody, and the read, this request's storage, is where it took
	 * it up (docs/design.md §4.4) */
	TT_CP_DISP_STORAGE,
	/* a callee (a process that computes what another calls it with and
	 * answers it) got its caller's call after the request was handed
	 * on: the call dispatched it, and the callee's wait for a CPU after
	 * it, however long, is scheduler.runqueue (docs/design.md §4.4) */
	TT_CP_DISP_CALL,
};

/* How t_enqueue was found (docs/design.md §4.4, §4.9). */
enum tt_cp_enqueue {
	TT_CP_ENQ_READ = 0, /* the queue starts at t_read */
	TT_CP_ENQ_PICKUP, /* the producer's wake of the consumer */
	TT_CP_ENQ_HANDOFF, /* where the reader let the request go */
	TT_CP_ENQ_MARKER, /* an application marker (record --mark enqueue=) */
	TT_CP_ENQ_CHANNEL, /* the reader's send on a Go channel */
	/* the reader's release of a lock to the worker that took the request
	 * up (TT_CP_DISP_RELEASE): it had queued it by then */
	TT_CP_ENQ_RELEASE,
	/* the request's share of its event loop's run of handlers, which
	 * marked none of their hand-offs (cp_loop_share()) */
	TT_CP_ENQ_SHARE,
};

/* tt_cp_result.incomplete */
/* t_arrive, t_wire, t_first_write or the writer unknown: not walked */
#define TT_CP_INC_NOT_WALKED (1u << 0)
#define TT_CP_INC_NO_READ (1u << 1) /* t_read unknown: taken as t_arrive */
#define TT_CP_INC_NO_DATA (1u << 2) /* the path met a thread's unknown time */
#define TT_CP_INC_LOST (1u << 3) /* a window of lost records overlaps */

struct tt_cp_result {
	/* Sums exactly to t_wire - t_arrive when walked; all 0 otherwise. */
	__u64 stage_ns[TT_ST_MAX];
	/*
	 * t_read <= t_enqueue <= t_dispatch <= t_token <= t_first_write.
	 * scheduler.queue lies in [t_enqueue, t_dispatch): the request waits
	 * after it was handed on (all of it, but for a pick-up's engine
	 * waiting for a CPU, which is scheduler.runqueue); the producer's own
	 * work on it between t_read and t_enqueue (parsing, tokenizing) is
	 * walked like any path.
	 */
	__u64 t_enqueue, t_dispatch, t_token;
	/* of the path, the time its threads waited on a runtime's own lock
	 * (CPython's GIL): inside the stages, never a stage of its own */
	__u64 gil_ns;
	/* of the path, the time the hypervisor took the CPU of the thread on
	 * it (steal, TT_EV_STEAL): inside the stages, never a stage */
	__u64 steal_ns;
	/* the start of the read loop of the path's first storage segment
	 * (cp_read_loop_start()) and its last one's end (0, 0 when none): the
	 * span the reads took, waits for a CPU or the GIL between them
	 * included, as a server's own clock around its reads */
	__u64 t_storage_start, t_storage_end;
	/* the hop whose path this one took (its tt_cp_request.id), 0: none */
	__u64 hop_id;
	__u8 dispatch; /* enum tt_cp_dispatch */
	__u8 enqueue; /* enum tt_cp_enqueue */
	bool token_marker; /* t_token is a token marker's (record --mark) */
	bool complete; /* incomplete == 0 */
	__u32 incomplete; /* TT_CP_INC_* */
	/*
	 * The path in time order: the segments tile [t_arrive, t_wire)
	 * exactly, each in one stage; consecutive walk segments of different
	 * tids are a jump to the waker at their boundary. NULL when not walked.
	 */
	struct tt_cp_segment *segs;
	size_t nsegs;
};

struct tt_critpath_stats {
	__u64 events; /* events fed */
	__u64 threads; /* traced threads with a timeline or a name */
	__u64 intervals; /* timeline state changes stored */
	__u64 wakes; /* wakeups stored */
	__u64 lost_windows;
	__u64 lock_words; /* futex words judged locks by the last walk */
	__u64 gpu_calls; /* TT_EV_GPU_CALL intervals stored */
	__u64 ioctls; /* TT_EV_IOCTL intervals stored */
	__u64 fileios; /* TT_EV_FILEIO intervals stored */
	__u64 first_ts, last_ts; /* earliest and latest event fed (0: none) */
	/* threads seen current (switching out, waking) while off CPU in their
	 * timeline: a switch-in the recording lacks, inferred there */
	__u64 missed_ins;
	/* application markers fed, and of the last walk's: bound to no
	 * request (an unknown key, a thread serving none), or bound outside
	 * their request's [t_read, t_first_write] (docs/design.md §4.9) */
	__u64 marks, marks_unbound, marks_outside;
	/* state records held now, and the most held at once: trimming
	 * (tt_critpath_trim) keeps these bounded on a long stream */
	__u64 held, held_max;
};

struct tt_critpath;

struct tt_critpath *tt_critpath_new(void);
void tt_critpath_free(struct tt_critpath *cp);

/*
 * Feeds one event, in timestamp order: SWITCH, WAKING, WAKEUP_NEW, FORK,
 * COMM, EXIT, LOST, IOCTL, GPU_CALL and FILEIO are used, the rest only count
 * (stats, time range; COMM records at time 0, a process table's, do not
 * count for it). The target of a wakeup is traced
 * (the recorder emits wakeups of traced threads only); a thread whose
 * first event is a wakeup (not WAKEUP_NEW) was blocked since the first
 * event fed: "blocked before trace", other.unknown unless a traced waker is
 * followed. A blocking wait on an anon inode (TT_SW_ANON_INODE:
 * eventfd, timerfd, epoll...) that no traced thread ends is other.unknown,
 * never storage. 0 or -ENOMEM. Events may be added after a walk (later
 * walks see them).
 *
 * GPU (docs/design.md §4.5): a TT_EV_GPU_CALL is the interval [ts_enter, h.ts) of a
 * CUDA driver call on its thread; one recorded at its entry only
 * (TT_CALL_ENTRY: a launch) ends at the thread's next CUDA call, ioctl or
 * file read when that starts less than LAUNCH_GAP_NS after it, else it is
 * an instant. Inside a sync call (TT_CUDA_SYNC) the
 * thread's on-CPU time is compute.gpu (spin-wait), a blocked wait is
 * compute.gpu whoever ends it (never followed), runnable time stays
 * scheduler.runqueue; inside a launch (TT_CUDA_LAUNCH, TT_CUDA_GRAPH) the
 * on-CPU time is compute.cpu, "launch <fn>" (launch overhead) and a
 * blocked wait is judged like any other (a GPU fd: gpu; a lock: followed).
 * Calls nested in a call cut it: the innermost call names the time. A
 * blocking wait on a registered GPU device fd is compute.gpu whoever ends
 * it (the waker may be a thread simulating the device, or an interrupt);
 * a TT_EV_IOCTL covering it names it ("ioctl NV_ESC_RM_CONTROL").
 *
 * Storage (docs/design.md §4.3): a TT_EV_FILEIO is the interval [ts_enter,
 * h.ts) of a read syscall on a regular file or block device. Inside it
 * the thread's on-CPU time is storage.io ("pread64 direct": copying,
 * pinning pages, submitting the I/O), a blocked wait is judged like any
 * other (a file read's: storage.io) and runnable time stays
 * scheduler.runqueue.
 */
int tt_critpath_add(struct tt_critpath *cp, const struct tt_event *ev);
/* Names thread tid of process tgid (the recording's process table): the
 * timelines are the one owner of thread names. 0 or -ENOMEM. */
int tt_critpath_name_thread(struct tt_critpath *cp, __u32 tid, __u32 tgid,
			    const char *comm);
/* Marks a process traced (e.g. from the recording's process table). */
int tt_critpath_add_tgid(struct tt_critpath *cp, __u32 tgid);
/*
 * A GPU device node of the recording's device table: blocking waits on an
 * fd of it are GPU time, its path names them ("poll /dev/nvidia0") and its
 * kind names its ioctls. A char device (rdev != 0) matches by rdev, any
 * node (a FIFO standing in for a device) by its dev and ino. 0 or -ENOMEM.
 */
int tt_critpath_add_gpu_device(struct tt_critpath *cp,
			       const struct tt_dev_info *d);
/* The same, known only by rdev (kernel encoding, major << 20 | minor), or
 * by any minor of a major (no path, no kind). */
int tt_critpath_add_gpu_rdev(struct tt_critpath *cp, __u32 rdev);
int tt_critpath_add_gpu_major(struct tt_critpath *cp, __u32 major);

/*
 * Walks every request of rqs[0..n) into out[0..n) (zeroed first). All the
 * requests of the recording should be given together: other requests'
 * hand-offs mark t_dispatch (a thread serves a request and no other when
 * none that began up to 5 s after its end names it: docs/design.md §3.5),
 * and a futex word waited on more than 4 times
 * per request, or passed back and forth (a thread both waits on it and
 * wakes it), is a lock: followed, never a hand-off. 0 or -ENOMEM (then out
 * holds nothing to free).
 *
 * Hand-offs: a consumer's wake of a thread serving this request and no
 * other live one (its reader or writer) is never a boundary to another
 * request; it marks the consumer's own burst. Two futex wakes of one
 * target on different words less than 1 ms apart, the waker running
 * between them (a condition variable signalled under its mutex, then the
 * unlock), are one hand-off.
 *
 * The queue: with a pick-up the producer's own work between t_read and its
 * wake of the consumer is walked on the producer (CPU, runqueue, ...) and
 * nothing is queued. With a hand-off boundary the request is queued from
 * where the reader let it go: its first wake of another thread (not
 * through a lock), its first block, or its next read or first write of
 * another request after t_read, whichever comes first (the enqueue of a
 * busy consumer makes no wakeup: the end of the reader's own work is the
 * best evidence); the reader's time before is walked. With the GPU rule
 * or none, the queue is [t_read, t_dispatch) as before.
 *
 * The GPU rule, when no pick-up or hand-off bounds the queue: on the latest
 * thread of the path that made sync calls (else on the one thread of the
 * writer's process that did: tokens passed through memory), the iteration
 * that made the token ends with the last sync before the token was handed
 * on; the sync before it (one followed by a hand-off, if the thread's
 * hand-offs can be seen) ended the previous iteration. If that one ended
 * after t_read, t_dispatch is the first launch after it and the path
 * before is queueing. On a path, 8 or more launches less than 50 us apart
 * are one CPU segment "launch xN <fn>", the time between them included.
 */
int tt_critpath_walk_all(struct tt_critpath *cp,
			 const struct tt_cp_request *rqs, size_t n,
			 struct tt_cp_result *out);
/*
 * Walks requests sel[0..nsel) of rqs[0..n) into out[0..nsel) (zeroed
 * first), the others seen as tt_critpath_walk_all() sees them: walking
 * them all in several calls gives what one call gives, as long as each
 * request is walked once it is ready (tt_critpath_ready) and rqs holds
 * then every request begun so far, the open ones as they stand. 0 or
 * -ENOMEM (then out holds nothing to free).
 */
int tt_critpath_walk_sel(struct tt_critpath *cp,
			 const struct tt_cp_request *rqs, size_t n,
			 const size_t *sel, size_t nsel,
			 struct tt_cp_result *out);
/* rq, ended, can be walked at time now (the last event fed) as it would be
 * at the recording's end: the requests that began within the lookahead
 * past its end (docs/design.md §3.5) have shown their threads. */
bool tt_critpath_ready(const struct tt_cp_request *rq, __u64 now);
/* Drops what no walk of a request that began at t or later can reach: per
 * thread, the state records older than t but the last few, the wakes,
 * blocks and calls they no longer refer to. */
void tt_critpath_trim(struct tt_critpath *cp, __u64 t);
/* One request alone: tt_critpath_walk_all(cp, rq, 1, out). */
int tt_critpath_walk(struct tt_critpath *cp, const struct tt_cp_request *rq,
		     struct tt_cp_result *out);
void tt_cp_result_free(struct tt_cp_result *r);
/* true: later walks leave results' segs NULL and keep their stage sums
 * (a report that prints no path needs none: tens of MB at 10 M events) */
void tt_critpath_set_drop_segments(struct tt_critpath *cp, bool drop);

/* "network.in", "compute.cpu", ...; "?" out of range. */
const char *tt_stage_name(enum tt_stage s);
/* A stage row's name (below TT_ST_ROWS): tt_stage_name(), or "other". */
const char *tt_stage_row_name(unsigned int row);
/* "running", "runnable", "blocked", "no-data", "phase". */
const char *tt_cp_state_name(enum tt_cp_state s);
/* "read", "pickup", "handoff", "gpu", "marker". */
const char *tt_cp_dispatch_name(enum tt_cp_dispatch d);
/* Why t_dispatch lies where rule d put it, in a line for the drill-down. */
const char *tt_cp_dispatch_why(enum tt_cp_dispatch d);
/* "read", "pickup", "handoff", "marker". */
const char *tt_cp_enqueue_name(enum tt_cp_enqueue e);
/* Latest name of thread tid (FORK, COMM), or NULL if unknown. */
const char *tt_critpath_comm(const struct tt_critpath *cp, __u32 tid);
void tt_critpath_stats(const struct tt_critpath *cp,
		       struct tt_critpath_stats *st);

/* ---- timelines, read-only (for renderers such as Perfetto) ---- */

/* One state of a thread's timeline: it holds over [start, end). */
struct tt_cp_interval {
	__u64 start, end; /* end > start */
	__u8 state; /* TT_CP_RUNNING, TT_CP_RUNNABLE or TT_CP_BLOCKED */
	/*
	 * RUNNING: compute.cpu; RUNNABLE: scheduler.runqueue; BLOCKED: where
	 * the wait goes when no traced thread ends it (a walk that meets it
	 * may follow the waker instead).
	 */
	__u8 stage;
	/* the thread's latest state: no event ended it, end is the last
	 * event fed or the caller's until */
	bool open_end;
	__u32 waker_tid; /* RUNNABLE after a wakeup in process context */
	/* BLOCKED: as tt_cp_segment.reason ("futex 0x7000", "read anon",
	 * "sync cuStreamSynchronize", "poll /dev/nvidia0");
	 * RUNNING: "on-cpu" (GPU calls inside it: tt_critpath_calls());
	 * RUNNABLE: "preempted", "woken by 102", "woken in softirq",
	 * "woken in hardirq" */
	char reason[32];
};

/* Threads with a timeline or a name, in the order first seen. */
size_t tt_critpath_nthreads(const struct tt_critpath *cp);
/* The i-th of them: 0, or -ERANGE when i >= nthreads. */
int tt_critpath_thread(const struct tt_critpath *cp, size_t i, __u32 *tid,
		       __u32 *tgid);

/* Called for each interval in time order; nonzero stops the iteration. */
typedef int (*tt_cp_interval_fn)(const struct tt_cp_interval *iv, void *ctx);
/*
 * Walks thread tid's timeline from its first event to the last event fed,
 * or to until when later (the end of a renderer's view; 0 for none), or
 * to its death after a TT_EV_EXIT. Empty intervals are skipped. Returns 0,
 * -ENOENT for an unknown tid, or what fn returned to stop. Do not feed
 * events from fn.
 */
int tt_critpath_intervals(const struct tt_critpath *cp, __u32 tid, __u64 until,
			  tt_cp_interval_fn fn, void *ctx);

enum tt_cp_call_kind {
	TT_CP_CALL_CUDA = 1, /* a CUDA driver call (TT_EV_GPU_CALL) */
	TT_CP_CALL_IOCTL = 2, /* an ioctl on a GPU device (TT_EV_IOCTL) */
	TT_CP_CALL_FILEIO = 3, /* a file read syscall (TT_EV_FILEIO) */
};

/* A GPU call of a thread over [start, end). */
struct tt_cp_call {
	__u64 start, end;
	__u8 kind; /* enum tt_cp_call_kind */
	__u8 cls; /* CUDA: enum tt_cuda_class (gpu.h), 0 when unknown */
	__u16 fn; /* CUDA: index in tt_cuda_fns() */
	__u32 cmd; /* ioctl: the command; file read: the syscall number */
	__s64 ret; /* CUresult, or the syscall's return */
	/* "cuStreamSynchronize", "cuda#40"; "NV_ESC_RM_CONTROL";
	 * "pread64 direct" */
	char name[40];
	/* CUDA: probed at its entry only: end inferred (docs/design.md §4.5),
	 * ret not known */
	bool entry_only;
};

typedef int (*tt_cp_call_fn)(const struct tt_cp_call *c, void *ctx);
/*
 * Calls fn for thread tid's calls that overlap [from, to): its CUDA
 * calls in time order, then its ioctls, then its file reads. A call with calls
 * nested in it comes as the pieces around them. Returns 0, -ENOENT for an
 * unknown tid, or what fn returned to stop.
 */
int tt_critpath_calls(const struct tt_critpath *cp, __u32 tid, __u64 from,
		      __u64 to, tt_cp_call_fn fn, void *ctx);

#endif /* TT_CRITPATH_H */
