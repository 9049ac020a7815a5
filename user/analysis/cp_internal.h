/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Private to the critical-path analysis (threads.c, waits.c, handoff.c,
 * walk.c, timeline.c): the timelines' records, the walk's state, and the
 * thresholds of its rules, each justified in docs/design.md §4.6.
 */
#ifndef TT_CP_INTERNAL_H
#define TT_CP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "containers.h"
#include "critpath.h"

#define NONE32 UINT32_MAX
/* A hand-off burst ends when the consumer blocks or runs this long. */
#define BURST_GAP_NS 150000ULL
/* A consumer switched out this soon after its hand-off was preempted at
 * once, by the thread it woke: the next request waits for its next run.
 * Later, it ran on and may have admitted one first (llama.cpp's loop does,
 * within 4 us; preempted 56-96 us after by a gateway's thread: §4.4). */
#define PREEMPT_AT_ONCE_NS 50000ULL
#define OTHER_AT_ONCE_NS 10000ULL /* ... by a thread it did not wake */
/* A wakee that preempts its waker does so at the wake's return from the
 * kernel: 0-2 us after it (docs/design.md §4.4, the release after a
 * boundary); later, the waker ran on. */
#define RELEASE_AT_ONCE_NS 3000ULL
/* A goroutine's (docs/design.md §4.10): each ready may start an M by a futex
 * syscall, tens of µs on a VM, under the uprobe of every state change. */
#define GO_BURST_GAP_NS 500000ULL
/* A thread the path crossed running less than this passed the request on
 * (an I/O thread, a queue's feeder): a pick-up through such relays is the
 * wake of the thread that computed (docs/design.md §4.4). */
#define RELAY_CPU_NS 500000ULL
/* ... or less than a RELAY_SHARE-th of what the thread that computed after
 * it ran: a relay's run (ZMQ's I/O thread) reads a millisecond when this
 * VM's CPU is taken from it, which no engine's short run does */
#define RELAY_SHARE 4
/* A relay's CPU from its wake to the last item it drains, one at a time,
 * from what the wake brought: a queue's feeder on a shared CPU took 950 us
 * for four tokens (docs/design.md §4.4) */
#define DRAIN_CPU_NS 1000000ULL
/* A reader that waits for the interpreter lock within this much CPU of its
 * read had not run the request's handler yet (docs/design.md §4.4) */
#define HANDLER_START_NS 100000ULL
/* A consumer preempted less than this much of its CPU before its first
 * storage read was on its way to it, the request taken up (odirect's engine
 * runs 60-140 us from its admission to its read: docs/design.md §4.4) */
#define READ_AFTER_PREEMPT_NS 100000ULL
/* Distinct wake targets answers_in() looks at per thread: an engine wakes
 * a writer among its first few. */
#define ANSWER_TARGETS 16
/* Threads between a hand-off's target and a thread that answers requests
 * that answers_in() looks through: a multiprocessing.Queue's feeder thread
 * answers through the model process, its feeder and the API's reader */
#define ANSWER_DEPTH 3
/* An event loop's reads of one epoll batch come back to back (a recv and
 * a parse each, 100-200 us): a longer gap is a new batch (loopfifo.c). */
#define LOOP_BATCH_NS 500000ULL
/* What a CPython loop's parse of a request's bytes may take beyond that
 * (h11: 1.2-2.4 ms for 200 KB here, loopfifo.c's polled_with()) */
#define PARSE_NS_PER_BYTE 16ULL
/* A wakeup may be traced just before its target's switch-out completes. */
#define WAKE_RACE_NS 50000ULL
/* A receive woken for room finds data sent this soon after it ran (3 us on
 * the other CPU in one tgi-py recording): the data ended its wait. */
#define ROOM_RACE_NS 50000ULL
/* A condvar signal and its mutex's unlock wake one target this close. */
#define DOUBLE_WAKE_NS 1000000ULL
/* One FUTEX_WAKE call wakes a condition variable's waiters one by one:
 * 0-170 us apart under load here (2190 wakes after one of another target
 * through the same word, three recordings); a step's notifies are ms
 * apart. */
#define BROADCAST_CALL_NS 250000ULL
/* A futex word waited on more than this many times per request is a lock, */
#define LOCK_WAITS_PER_REQ 4
/* and so is one that a thread both waits on and wakes, this often waited. */
#define LOCK_SHARED_WAITS 3
/* a futex word's offset in its page, the same in every process mapping it */
#define FUTEX_PAGE_MASK 0xfffULL
/* Back-to-back launches (less than this apart) on a path ... */
#define LAUNCH_GAP_NS 50000ULL
/* ... are charged as one segment from this many. */
#define LAUNCH_RUN 8
/* cp_rq_only() sees the requests that began up to this long after the one
 * walked ended, not the recording's end: a streaming walk cannot wait. */
#define CP_LOOKAHEAD_NS 5000000000ULL
/* A timeline trimmed at t keeps this many records before t: a walk reads
 * the record before the one it stands on, the resume rule one more. */
#define CP_TRIM_KEEP 2

enum rec_state {
	REC_RUNNING = 1,
	REC_RUNNABLE,
	REC_BLOCKED,
};

/* cp_rec.flags */
#define REC_F_IOWAIT (1u << 0) /* blocked in I/O wait */
#define REC_F_FD (1u << 1) /* the block's fd_* are valid */
#define REC_F_PREEMPT (1u << 2) /* runnable because preempted */
#define REC_F_ANON (1u << 3) /* the fd is an anon inode (eventfd, timerfd...) */
#define REC_F_PRETRACE (1u << 4) /* blocked since before the first event */
#define REC_F_DATA (1u << 5) /* runnable since a data wake, not a wakeup */
#define REC_F_TIMED (1u << 6) /* blocked in a futex wait with a timeout */
#define REC_F_EXITED (1u << 7) /* a goroutine's exit: its g runs anew next */

/* One state change of a thread: state holds from ts to the next record. */
struct cp_rec {
	__u64 ts;
	__u32 info; /* BLOCKED: index in blocks; RUNNABLE: in wakes or NONE32 */
	__u8 state; /* enum rec_state */
	__u8 flags; /* REC_F_* */
	__u16 pad;
};

/* What a thread blocked in, read at its switch-out. */
struct cp_block {
	__u64 arg0;
	__u64 fd_ino;
	__s32 syscall;
	__u32 fd_mode;
	__u32 fd_rdev;
	__u32 fd_dev;
};

/* A CUDA call of a thread, or a piece of one: a call with calls nested in
 * it is stored as the pieces around them, so that a thread's calls are
 * sorted and disjoint and the innermost names each instant. */
struct cp_call {
	__u64 start, end;
	__s32 ret;
	__u16 fn; /* index in tt_cuda_fns() */
	__u8 cls; /* enum tt_cuda_class, 0 for an unknown fn */
	__u8 flags; /* CP_CALL_* */
};

/* cp_call.flags: recorded at its entry only (TT_CALL_ENTRY): the end is
 * inferred (cp_call_close, docs/design.md §4.5) and ret is not known */
#define CP_CALL_ENTRY (1u << 0)

/* An ioctl on a GPU device node. */
struct cp_ioctl {
	__u64 start, end;
	__u64 ino;
	__s64 ret;
	__u32 cmd, rdev, dev;
};

/* A read syscall on a regular file or a block device (TT_EV_FILEIO). */
/* A run of the thread's that the hypervisor took ns of (TT_EV_STEAL):
 * [start, end) is the run, from its switch-in to its switch-out. */
struct cp_steal {
	__u64 start, end;
	__u64 ns;
};

struct cp_fileio {
	__u64 start, end;
	__s64 ret;
	__s32 syscall;
	__u32 mode;
	__u32 f_flags;
};

/* A registered GPU device node. */
struct cp_gpudev {
	__u32 rdev; /* 0: not a char device, known by dev and ino */
	__u32 dev;
	__u64 ino;
	__u32 kind; /* enum tt_gpu_kind */
	char path[64]; /* "" when unknown */
};

enum wake_ctx {
	CTX_PROCESS = 0, /* waker_tid is the waker */
	CTX_SOFTIRQ, /* waker_tid is current (the sender on loopback TCP) */
	CTX_HARDIRQ, /* waker_tid is whoever the interrupt landed on */
};

/* cp_wake.lock: the wake went through a lock, not a hand-off */
enum cp_lock {
	CP_LOCK_NONE = 0,
	CP_LOCK_WORD, /* a futex word used as a lock (§4.3's counts) */
	CP_LOCK_RUNTIME, /* a runtime's own lock: CPython's GIL (§4.3) */
	CP_LOCK_SCHED, /* a runtime's scheduler: Go's futexes, readyings (§4.10) */
};

/* cp_wake.syscall of a wake a runtime's scheduler made, no goroutine */
#define CP_SYSCALL_SCHED (-2)

/* A language runtime's lock range in a process (TT_EV_RTLOCK). */
struct cp_rtrange {
	__u64 lo, hi;
	__u32 tgid;
	__u32 kind; /* enum tt_rt_kind */
};

/* An application marker hit (TT_EV_MARK), in time order. */
struct cp_mark {
	__u64 ts;
	__u64 key;
	__u32 tid, tgid;
	__u16 kind; /* enum tt_mark_kind */
	bool has_key;
	bool value; /* the key means the same in every process */
	bool unread; /* a key was named but could not be read */
	__u16 peer; /* the port of the request's client, 0: not given */
};

/* The markers bound to one request (0: none of that kind). */
struct cp_rq_marks {
	__u64 enqueue, dispatch, token;
};

struct cp_wake {
	__u64 ts;
	__u64 arg0; /* the waker's first syscall argument (FUTEX_WAKE's word) */
	__u32 waker_tid;
	__u32 target_tid;
	__u32 block; /* the target's block, NONE32 if it was not blocked */
	__s16 syscall; /* the waker's syscall, -1 outside process context */
	__u8 ctx; /* enum wake_ctx */
	__u8 lock : 6; /* enum cp_lock: followed, never a hand-off */
	/* a futex wake of a word whose last WORD_SOLO_WAITS waits were all
	 * the target's (struct cp_word's last_waiter) */
	__u8 solo : 1;
	__u8 spawn : 1; /* the waker started the target (TT_EV_WAKEUP_NEW) */
};

static inline __u64 cp_clamp(__u64 x, __u64 lo, __u64 hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* w ends a wait on a lock its holder passes on (a word judged a lock, a
 * runtime's: the GIL), not on a runtime's scheduler nor a hand-off. */
static inline bool cp_lock_wake(const struct cp_wake *w)
{
	return w->lock == CP_LOCK_WORD || w->lock == CP_LOCK_RUNTIME;
}

/* w is a receive's wake of a thread that was not writing: the kernel's
 * news to a socket's or pipe's writers that a read made room, which
 * reaches its readers too (a unix socket's peer, an epoll on it). It
 * brings no data and hands nothing off (threads.c). */
bool cp_room_wake(const struct tt_critpath *cp, const struct cp_wake *w);
/* Syscall nr writes to a pipe or socket (write, writev, send*). */
bool cp_nr_send(int nr);

/* An element this thread took from a Go channel's buffer, and the send
 * that queued it: a hand-off that woke nobody (gochan.c). */
struct cp_take {
	__u64 ts; /* the receive */
	__u64 t_send;
	__u32 sender;
	__u32 pad;
};

/* Data a traced thread wrote for this one (a data wake, whatever the
 * reader was doing): what its next read took. */
struct cp_arrival {
	__u64 ts;
	__u32 writer;
	__u32 kind; /* enum tt_ipc_kind */
};

/* A read of what a data wake announced. */
struct cp_dread {
	__u64 ts;
	__u32 kind; /* enum tt_ipc_kind: an eventfd takes no socket's data */
	__u32 pad;
};

/* A pipe read that names the write whose bytes it took first (pipefifo.c). */
struct cp_fread {
	__u64 ts; /* the read's end */
	struct cp_arrival w; /* the write: its start, its writer */
};

/* A traced write to a pipe: its bytes [pos, pos + len) of the pipe's. */
struct cp_pwrite {
	__u64 pos; /* first: searched as cp_starts_before() searches times */
	__u64 ts;
	__u32 len;
	__u32 tid;
};

/* A pipe's traced writes, the latest ones (pipefifo.c). */
struct cp_pipe {
	struct cp_pwrite *w; /* in byte order */
	size_t n, cap;
};

/* A Go channel's sends, the latest CHAN_SENDS_KEPT at least (gochan.c). */
struct cp_chan {
	struct cp_send {
		__u64 ts;
		__u32 tid;
		__u32 pad;
	} *sends; /* in time order */
	size_t n, cap;
	__u64 base; /* sends before sends[0] */
};

#define CP_THREAD_WORDS 16

struct cp_thread {
	__u32 tid, tgid;
	struct cp_rec *recs;
	size_t nrecs, caprecs;
	__u32 *wout; /* wakes this thread made in process context */
	size_t nwout, capwout;
	__u32 *cand; /* wout less lock wakes, rebuilt by cp_prepare() */
	size_t ncand;
	struct cp_call *calls; /* sorted, disjoint */
	size_t ncalls, capcalls;
	size_t nsync; /* sync calls among them */
	struct cp_ioctl *ioctls; /* sorted, disjoint */
	size_t nioctls, capioctls;
	struct cp_fileio *fileios; /* sorted, disjoint */
	size_t nfileios, capfileios;
	struct cp_steal *steals; /* sorted, disjoint */
	size_t nsteals, capsteals;
	struct cp_take *takes; /* sorted */
	size_t ntakes, captakes;
	struct cp_dread *dreads; /* sorted */
	size_t ndreads, capdreads;
	/* its reads of a pipe a traced thread wrote to (after a data wake or
	 * behind unread data), sorted */
	__u64 *preads;
	size_t npreads, cappreads;
	struct cp_arrival *arrs; /* sorted */
	size_t narrs, caparrs;
	struct cp_fread *freads; /* sorted */
	size_t nfreads, capfreads;
	/* its messages handed to a messaging library (ZMQ), sorted: each a
	 * hand-off, whether or not it woke anyone; its polls that returned
	 * ready fds or none (TT_EV_POLL: an event loop's turns), sorted;
	 * how many returned none (older recorders wrote none of those) */
	__u64 *msends, *polls;
	size_t nmsends, capmsends, npolls, cappolls, nempty_polls;
	/* A wake seen while it ran: it may race the switch-out that follows. */
	__u32 pending;
	__u64 pending_ts;
	__u64 exit_ts; /* its TT_EV_EXIT, 0 if none seen */
	/* the last CP_THREAD_WORDS distinct futex words it waited on: a
	 * word's waiters past its first WORD_WAITERS are known this way */
	__u64 waited_words[CP_THREAD_WORDS];
	__u32 waited_next;
	__u32 futex_waits; /* its blocks in futex(2), all words */
	__u32 epoll_waits; /* its blocks in epoll_wait(2) (tokio.c) */
	bool has_comm;
	/* a thread a runtime started for itself (jvm.c): its wakes are the
	 * runtime's, never a hand-off */
	bool runtime_own;
	/* a worker of a work-stealing pool (tokio.c): its wakes of a sibling
	 * are the runtime's */
	bool pool_worker;
	/* serves no request, waits and wakes by futex(2) alone (rtpool.c) */
	bool futex_only;
	/* a runtime's helper pool's (rtpool.c): a wake of it hands nothing */
	bool rt_pool;
	char comm[TT_COMM_LEN];
};

/* jvm.c: sets runtime_own of HotSpot's own threads (by their names) */
void cp_mark_runtime_threads(struct tt_critpath *cp);
/* tokio.c: sets pool_worker of tokio's workers; a and b: of one pool */
void cp_mark_pool_workers(struct tt_critpath *cp);
bool cp_pool_siblings(const struct cp_thread *a, const struct cp_thread *b);

/* What ended a reader's block: its engine, a hand-off, data or a timeout
 * (STOP_NONE); a futex wake by a runtime's own thread (a JVM's safepoint,
 * its JIT's compile queue), or the address space's lock (STOP_RUNTIME);
 * one by another thread that reads requests, not through an interpreter's
 * lock: a peer of the reader (a Java monitor the handlers share, the engine
 * queue's put lock). */
enum cp_block_stop { STOP_NONE, STOP_RUNTIME, STOP_PEER };

/* rtpool.c: a wait in syscall nr, which maps or unmaps memory, is for the
 * address space's lock (an allocator's, a collector's): no one's data */
bool cp_mm_call(__s32 nr);

/* threads.c: the wake that took th from a block into its runnable record
 * k, not a data wake; NULL if none did */
const struct cp_wake *cp_block_wake(const struct tt_critpath *cp,
				    const struct cp_thread *th, size_t k);

struct rq_index;
/* stops.c: what ended th's block at record k */
enum cp_block_stop cp_block_stop(const struct tt_critpath *cp,
				 const struct rq_index *ix,
				 const struct cp_thread *th, size_t k);

/* locks.c: locks.h */
struct walk;
struct consumer;

/* The first of c's hand-off candidates (cand) after t; c->ncand: none. */
size_t cp_cand_after(const struct tt_critpath *cp, const struct cp_thread *c,
		     __u64 t);
/* th read what a data wake announced in (s, t]. */
bool cp_dread_in(const struct cp_thread *th, __u64 s, __u64 t);
/* th's first read in (s, t) of a pipe a traced thread wrote to, or 0: a
 * consumer taking its input (a multiprocessing queue's). */
__u64 cp_pipe_read_after(const struct cp_thread *th, __u64 s, __u64 t);
/* busyread.c: th's latest data read in (lo, t], back from its record k
 * through its runs and waits for the interpreter lock, of data that came
 * while th neither waited for it nor was woken by it, th a relay that
 * handed on at t_out, on a CPU less than cpu_limit in between: *r the
 * read, *a the data (docs/design.md §4.4, "A busy reader's data"). */
bool cp_busy_read(const struct tt_critpath *cp, const struct cp_thread *th,
		  long k, __u64 lo, __u64 t, __u64 t_out, __u64 cpu_limit,
		  __u64 *r, const struct cp_arrival **a);
/* th's time on a CPU in [s, t) */
__u64 cp_cpu_in(const struct cp_thread *th, __u64 s, __u64 t);
/* th's time in [s, t) not blocked: on a CPU or waiting for one */
__u64 cp_busy_in(const struct cp_thread *th, __u64 s, __u64 t);
/* The first of sorted times v[0, n) in [s, t), or 0; th's first message
 * send in [s, t), or 0 */
__u64 cp_time_in(const __u64 *v, size_t n, __u64 s, __u64 t);
__u64 cp_msend_in(const struct cp_thread *th, __u64 s, __u64 t);

/* A receive needs this many of its channel's latest sends kept: a
 * buffer larger than that ties nobody (its qcount is past them). */
#define CHAN_SENDS_KEPT 4096

/* gochan.c */
struct walk;
int cp_chan_add(struct tt_critpath *cp, const struct tt_event *ev);
void cp_chans_free(struct tt_critpath *cp);
/* Forgets the sends before t: a receive of one names no request still to
 * be walked (the base keeps the count). */
void cp_chans_trim(struct tt_critpath *cp, __u64 t);
/* pipefifo.c: a TT_EV_PIPE_IO (tt_critpath_add); 0 or -ENOMEM. */
int cp_pipe_add(struct tt_critpath *cp, const struct tt_event *ev);
void cp_pipes_trim(struct tt_critpath *cp, __u64 t);
void cp_pipes_free(struct tt_critpath *cp);
/* The last take of th's latest batch admission that ends in (s, t] and
 * holds a take pred accepts (in *own), or NULL. */
const struct cp_take *cp_take_in(const struct cp_thread *th, __u64 s, __u64 t,
				 bool (*pred)(const struct walk *wk,
					      const struct cp_take *tk),
				 const struct walk *wk,
				 const struct cp_take **own);

/* A futex word's use: how often it is waited on, and by whom both sides. */
#define WORD_WAITERS 4
struct cp_word {
	__u32 waits;
	/* the first WORD_WAITERS threads that waited on it; more_waiters:
	 * others did too */
	__u32 waiter[WORD_WAITERS];
	bool more_waiters;
	__u32 waker[2]; /* the first two threads that woke it */
	/* the thread of its latest wait, and how many waits in a row were
	 * that thread's: CPython allocates a lock for each wait on a
	 * Condition, and malloc's per-thread cache gives a freed one's
	 * address to the freeing thread's next (the notifier may free it), so
	 * a word's early waiters may be its later wakers */
	__u32 last_waiter, last_run;
};

/* a wake by another thread of a word its target waited on this many times
 * in a row, none of them the waker's, is a producer's (word_producer()) */
#define WORD_SOLO_WAITS 4

struct cp_window {
	__u64 start, end;
};

struct segvec {
	struct tt_cp_segment *v;
	size_t n, cap;
};

#define CP_TID_CACHE 64

struct tt_critpath {
	struct cp_thread **threads;
	size_t nthreads, capthreads;
	struct tt_hmap tids; /* tid -> index in threads */
	/* threads by tid % CP_TID_CACHE: most records are of a few threads,
	 * and a thread is never freed before the analysis ends */
	struct cp_thread *tid_cache[CP_TID_CACHE];
	struct tt_hmap tgids; /* traced processes */
	struct tt_hmap futex_words; /* (word, tgid) -> index in words */
	struct cp_word *words;
	size_t nwords, capwords;
	struct cp_block *blocks;
	size_t nblocks, capblocks;
	struct cp_wake *wakes;
	size_t nwakes, capwakes;
	struct cp_window *lost;
	size_t nlost, caplost;
	struct cp_rtrange *rtranges;
	size_t nrtranges, caprtranges;
	struct cp_mark *marks;
	size_t nmarks, capmarks;
	struct tt_hmap chan_ix; /* (hchan, tgid) -> index in chans */
	struct cp_chan *chans;
	size_t nchans, capchans;
	struct tt_hmap pipe_ix; /* pipe -> index in pipes */
	struct cp_pipe *pipes;
	size_t npipes, cappipes;
	/* of the last walk: markers bound to no request, and bound ones
	 * outside their request's [t_read, t_first_write] */
	__u64 marks_unbound, marks_outside;
	struct cp_window *lost_merged; /* sorted, disjoint: by cp_prepare() */
	size_t nlost_merged;
	__u32 *gpu_threads; /* threads with sync calls, by cp_prepare() */
	size_t ngpu_threads;
	struct cp_gpudev *gpu_devs;
	size_t ngpu_devs, capgpu_devs;
	__u32 *gpu_majors;
	size_t ngpu_majors, capgpu_majors;
	__u64 events;
	__u64 gpu_calls, ioctls, fileios, steals; /* stored */
	__u64 first_ts, last_ts; /* of the events fed ... */
	bool timed; /* ... when any was in time */
	__u64 intervals;
	__u64 missed_ins; /* switch-ins inferred by seen_running() */
	/* cp_prepare() ran for this many requests and events */
	size_t prep_nreq;
	__u64 prep_events;
	__u64 lock_limit; /* the waits that make a word a lock, for them */
	bool prepared;
	__u64 lock_words;
	/* dropped by tt_critpath_trim(): state records, wakes; the most state
	 * records held at once (at a trim, or now) */
	__u64 recs_dropped, wakes_dropped, held_max;
	/* the walk's buffers, reused from request to request: growing new
	 * ones for each of thousands of requests was a tenth of report */
	struct segvec walk_path, walk_segs;
	bool drop_segments; /* results keep their stage sums only */
	int hop_depth; /* hops being walked inside a walk (hop.c) */
};

struct rq_ent {
	__u32 tid;
	__u32 req;
	__u64 start, end; /* the request is alive in [start, end] */
	/* over the entries of this tid up to here: the two latest ends of
	 * distinct requests (end2 0 when none) */
	__u64 end1, end2;
	__u32 req1;
};

/* A thread's read (t_read) or first token write of a request. */
struct rq_act {
	__u32 tid;
	__u32 req;
	__u64 t;
	bool write; /* its first write, not its read */
};

/* A hop (its request's index) and a time of it: its first token's on the
 * wire (rq_index.hops), or its send's (hop.c). */
struct rq_hop {
	__u64 t;
	__u32 req;
};

/* qsort order of rq_hop: by time */
int cp_rq_hop_cmp(const void *a, const void *b);

/* A thread's entries in rq_index.e: [lo, hi). */
struct rq_tid {
	__u32 tid;
	__u32 lo, hi;
};

struct rq_index {
	struct rq_ent *e; /* alive from their arrival */
	size_t n;
	struct rq_ent *srv; /* served: alive from their read */
	size_t nsrv;
	/* each thread's entries, by tid: searched instead of e, 4 times
	 * smaller and mostly in cache (a scan asks about a few threads each
	 * time it enters a consumer) */
	struct rq_tid *tids;
	size_t ntids;
	struct rq_act *act; /* sorted by tid, then t */
	size_t nact;
	const struct tt_cp_request *rqs; /* the requests indexed */
	const struct cp_rq_marks *mk; /* their markers, NULL until bound */
	size_t nhops; /* of them, hops (tt_cp_request.hop_sender_tid) */
	struct rq_hop *hops; /* at their first token's t_wire, in order */
	/* the gateway's reads of the hops' first tokens, by tid, then t */
	struct rq_act *hop_reads;
	size_t nhop_reads;
	/* the responses' headers, by their writer, then t */
	struct rq_act *hdrs;
	size_t nhdrs;
	/* per request, of a hop: the request that sent it, when its sender
	 * read requests itself (an event loop), else NONE32 (hop.c) */
	__u32 *hop_owner;
	__u32 *owned_hop; /* per request, the hop it sent so, else NONE32 */
	size_t nrqs;
	/* per act, a read's own hand-off on a reader that serves several
	 * requests in turn (loopfifo.c), 0 if none; CP_TURN_AFTER | t: after
	 * the turn at t, its own made no wake; CP_TURN_BEFORE | t: before the
	 * read at t of the reader's next batch, its batch making no wake */
	__u64 *fifo;
};

#define CP_TURN_AFTER (1ULL << 63)
#define CP_TURN_BEFORE (1ULL << 62)

/* rtpool.c: sets rt_pool of a runtime's helper pool's threads (V8's platform
 * workers), by what they do for the requests of ix */
void cp_mark_rt_pools(struct tt_critpath *cp, const struct rq_index *ix);

struct walk {
	struct tt_critpath *cp;
	const struct rq_index *ix;
	const struct tt_cp_request *rq;
	__u32 ri;
	__u64 a, r, f, w; /* t_arrive, t_read, t_first_write, t_wire clamped */
	__u64 lookahead; /* requests beginning later serve no other for it */
	struct segvec path; /* walk segments, latest first */
	__u32 incomplete;
	__u64 nodata_end; /* the path has no data before it */
	__u64 t_enqueue; /* pick-up and hand-off: the queue starts here */
	__u64 t_chan_send; /* the channel rule: the send that queued it */
	struct cp_rq_marks mk; /* this request's markers, inside [r, f] */
	__u8 enqueue; /* enum tt_cp_enqueue */
	/* waits on a runtime's lock on the path, counted down to gil_low */
	__u64 gil_ns, gil_low;
	/* consumers whose burst with this request's own hand-off was passed */
	__u32 *passed;
	size_t npassed, cappassed;
	/* a lock wake was followed before the dispatch was found; on the
	 * second walk, lock waits of a thread woken by a hand-off are its own
	 * (docs/design.md §4.4) */
	bool lock_followed, detours;
	bool gil_followed; /* the same through a runtime's lock (the GIL) */
	/* the call rule's callee process: the caller's wakes of it are calls,
	 * another request's dispatch or this one's, never its hand-off */
	__u32 callee_tgid;
	/* the request's reader, looked up once; NULL if it has no timeline */
	const struct cp_thread *reader;
	bool resumes; /* third walk: the resume rule too (§4.4) */
	bool releases; /* last walk: the reader's release of a lock (§4.4) */
	__u64 hop_id; /* the hop whose path it took, 0: none (hop.c) */
	bool hop_probe; /* no rules: a walk that looks for a hop */
	/* the first threads the walk was on: a hop is this request's when
	 * one of them sent it or woke its sender (hop.c) */
	__u32 hop_tids[8];
	int nhop_tids;
	int err;
};

/* consumer.took: what its read after its boundary was */
enum cp_took {
	CP_TOOK_NONE = 0,
	CP_TOOK_PIPE, /* of its input pipe */
	CP_TOOK_FILE, /* of a file, the request's storage, its boundary stale */
};

/* What the walk knows of the consumer it is on (the thread it jumped to). */
struct consumer {
	bool entered; /* false on the writer, before any jump */
	bool has_tb;
	/* tb is its read after that burst, where it took the request up */
	enum cp_took took;
	/* reached through its release of the GIL, not handed the request:
	 * the threads it starts are others' (an accept loop's handlers) */
	bool holder;
	__u64 tb; /* the last wake of the previous hand-off burst */
	__u64 own_low; /* earliest wake of the own burst skipped, 0 if none */
	__u32 wakee_tgid; /* the process of the thread whose wait it ended */
};

/* rqindex.c */
int cp_rq_index_build(struct rq_index *ix, const struct tt_cp_request *rqs,
		      size_t n);
void cp_rq_index_free(struct rq_index *ix);
/* qsort order of rq_act: by tid, then time, then request */
int cp_rq_act_cmp(const void *a, const void *b);
/* Wake w by a reader hands work on: not to a runtime's own thread, nor
 * to a helper that answers it at once. */
bool cp_hands_on(const struct tt_critpath *cp, const struct rq_index *ix,
		 const struct cp_wake *w);
/* tid serves a request other than req that is alive at ts. */
bool cp_rq_other_alive(const struct rq_index *ix, __u32 tid, __u64 ts,
		       __u32 req);
/* A request of tid other than req arrived in [from, to]. */
bool cp_rq_other_arrived(const struct rq_index *ix, __u32 tid, __u32 req,
			 __u64 from, __u64 to);
/* tid serves requests other than req, read by ts, through (ts, the time
 * returned]: the latest end of those; 0 when none is alive past ts. */
__u64 cp_rq_other_until(const struct rq_index *ix, __u32 tid, __u64 ts,
			__u32 req);
/* The first read by tid of a request but req in (from, to), or 0. */
__u64 cp_rq_other_read(const struct rq_index *ix, __u32 tid, __u32 req,
		       __u64 from, __u64 to);
/* cp_rq_other_alive for a scan that asks about times going down: each
 * target's place in the index is kept and moves back, not searched again
 * (a busy engine's scan asks about thousands of its wakes); zeroed first. */
#define ALIVE_CURSORS 8
struct alive_scan {
	struct alive_cursor {
		__u32 tid;
		/* tid's entries from lo; those from pos start later */
		size_t lo, pos;
	} c[ALIVE_CURSORS];
	unsigned int n, next;
};
bool cp_alive_scan_ask(struct alive_scan *sc, const struct rq_index *ix,
		       __u32 tid, __u64 ts, __u32 req);
/* The first of n wakes (indices in cp->wakes, by time) at lo or later. */
size_t cp_wake_at(const struct tt_critpath *cp, const __u32 *idx, size_t n,
		  __u64 lo);
/* The first act of ix (by tid, then time) after tid's at t. */
size_t cp_act_after(const struct rq_index *ix, __u32 tid, __u64 t);
/* The same in n acts v sorted by tid, then time. */
size_t cp_acts_after(const struct rq_act *v, size_t n, __u32 tid, __u64 t);
/* tid's first read or write of a request other than req after t, or ~0. */
__u64 cp_rq_next_act(const struct rq_index *ix, __u32 tid, __u64 t, __u32 req);
/* tid sent a response's headers in (s, t). */
bool cp_headers_in(const struct rq_index *ix, __u32 tid, __u64 s, __u64 t);
/* tid serves request req and no other that began by limit. */
bool cp_rq_only(const struct rq_index *ix, __u32 tid, __u32 req, __u64 limit);

/* poller.c: a request read by a thread that writes no token and handed
 * at once to its writer by a write (gRPC's poller, grpc.aio's loop) is
 * read by the writer, at its read of that write */
void cp_poller_rebase(const struct tt_critpath *cp, struct tt_cp_request *rqs,
		      size_t n);
/* The reader's block at record k waits for the answer of a thread it had
 * just written to, which answered with data at once (a loop asking its
 * poller for a call's message): no end of its work on the request. */
bool cp_block_asked(const struct tt_critpath *cp, const struct cp_thread *th,
		    size_t k);
/* Consumer c, woken by the reader (an event loop) at t, answered the loop
 * with data before it waited again (but for the GIL): a callee that runs
 * the loop's step (vLLM V0's forward in run_in_executor). The step was
 * admitted at the wake; c's wait for a CPU after it is the step's. */
bool cp_loop_callee(const struct walk *wk, const struct cp_thread *c, __u64 t);

/* handoff.c */
/* a and b are futex wakes of one target through two words: a condition
 * variable's signal and its mutex's release, one hand-off (§4.4). */
bool cp_signal_and_release(const struct cp_wake *a, const struct cp_wake *b);
__u64 cp_find_token(const struct tt_critpath *cp, __u32 writer, __u64 from,
		    __u64 to);
/* Wakes of th, not through a lock, outside its GPU calls, in [lo, hi]:
 * its hand-offs (a wake inside a call is the driver's business); none of
 * process skip_tgid (0: any). */
bool cp_handoff_in(const struct tt_critpath *cp, const struct cp_thread *th,
		   __u64 lo, __u64 hi, __u32 skip_tgid);
__u64 cp_handoff_point(const struct walk *wk, __u64 tb,
		       const struct cp_thread *started);
/* helper.c: when the reader, a worker of a work-stealing pool, got the
 * answer of the blocking thread of its pool it woke after its read, if
 * before tb; else 0 */
__u64 cp_helper_answer(const struct walk *wk, __u64 tb);
/* The reader, which writes the response too, woke tid at t after it let
 * the request go: a helper it asked for what is already computed. */
bool cp_reader_asked_helper(const struct walk *wk, __u32 tid, __u64 t);
bool cp_own_passed(const struct walk *wk, __u32 tid);
/* c blocked in (t_old, t_new], k_new its cp_rec_before(c, t_new), but for
 * the runtime's lock when cp is given (the GIL hands nothing on). */
bool cp_blocked_in(const struct tt_critpath *cp, const struct cp_thread *c,
		   __u64 t_old, long k_new);
/* c's hand-off to another request at tb is a relay's drain of the wake
 * that led to its hand-off at tj (busyread.c) */
bool cp_relay_drain(const struct tt_critpath *cp, const struct cp_thread *c,
		    __u64 tb, __u64 tj);
void cp_scan_consumer(struct walk *wk, const struct cp_thread *c, __u64 tj,
		      __u64 floor, __u32 from, struct consumer *cs);

/* gpurule.c */
__u64 cp_gpu_dispatch(struct walk *wk, __u64 disp, __u8 *rule);

/* walk.c */
/* Appends [start, end) at the front (desc) or back (asc) of the time
 * order of v, merged with its neighbour when alike. */
int cp_seg_add(struct segvec *v, bool desc, __u64 start, __u64 end, __u32 tid,
	       __u8 state, __u8 stage, const char *reason);

/* stops.c: tid reads requests (a handler of a pool, a loop), not only
 * writes them */
bool cp_rq_reads(const struct rq_index *ix, __u32 tid);

/* batch.c */
/* Record j of th ends a wait on a pipe, socket or condition variable that
 * its timeout ended, or on a pipe, socket or condition variable (a timed
 * wait, the one before ended by a thread that reads requests) th had
 * waited on just before (less than RELAY_CPU_NS of run between): a
 * batcher collecting requests from its input; or, th apart
 * from the request's reader's process, a wait on a pipe that a write ended
 * (docs/design.md §4.4). */
bool cp_batch_end(const struct tt_critpath *cp, const struct rq_index *ix,
		  const struct cp_thread *th, long j, __u32 reader_tgid);
/* Consumer th, which the walk entered from another process (not a relay
 * to a thread of its own), became runnable at its record k by a call: a
 * write to it by a thread of another process, the one th's last hand-off
 * before it went to (its answer), after the request was handed on. A
 * callee (TGI's model shard) computes what its caller sends: the call
 * dispatched the request, and the callee's wait for a CPU after it is
 * scheduler.runqueue (docs/design.md §4.4, "A caller and its callee").
 * When it is, wk->callee_tgid names th's process (cp_handoff_point() takes
 * no call for a hand-off); else it stays 0. */
bool cp_call_taken(struct walk *wk, const struct cp_thread *th, long k,
		   const struct consumer *cs);

/* hop.c */
/* The hop (index in ix->rqs) whose first token's send by tid woke the
 * path at t, -1 if none. */
long cp_hop_at(const struct walk *wk, __u32 tid, __u64 t);
/* The walk goes on from hop's send, on its sender: that thread, *tid, *t
 * and *k its record then. */
struct cp_thread *cp_hop_jump(struct walk *wk, long hop, __u32 *tid, __u64 *t,
			      long *k);
/* The hop whose first token reached th's socket while th waited in the
 * block before its record k, which ended at t, -1 if none: a gateway
 * thread the runner's send did not wake (a busy M polled its data). */
long cp_hop_waited(const struct walk *wk, const struct cp_thread *th, long k,
		   __u64 t);
/* The walk has been on thread tid. */
void cp_hop_visit(struct walk *wk, __u32 tid);
/* ix->hop_owner: a sender that read requests sent their hops in the order
 * it read them (docs/design.md §4.11). */
int cp_hop_owners(struct rq_index *ix);
/* The hop the walk's request sent, known by the order its event loop
 * read and sent (cp_hop_owners), if its first token came by t; -1. */
long cp_hop_owned(const struct walk *wk, __u64 t);
/* While th was in rec (from lo) before t: the first token of hop owned
 * came in, th its sender (an event loop reads its upstream sockets
 * itself), or else (read) th read the first token of the latest hop this
 * request may take (sent after its read, no other's by the loop's order):
 * then, its hop in *hop; 0 if neither. */
__u64 cp_hop_came(const struct walk *wk, long owned, const struct cp_thread *th,
		  const struct cp_rec *rec, __u64 lo, __u64 t, bool read,
		  long *hop);
/* Puts hop hi's path, to t, on wk's (from its first token to t: the
 * delivery on its writer, or join's wait to run), and (not dispatched)
 * its queue and dispatch into *disp, *rule and wk: false when it could
 * not. */
bool cp_hop_take(struct walk *wk, long hi, __u64 t, __u32 join, bool dispatched,
		 __u64 *disp, __u8 *rule);

/* A gateway's request whose path meets a hop: walks with no rule first
 * (start's copy), kept in wk when it took a hop; its dispatch, else 0. */
__u64 cp_hop_first(const struct walk *start, struct walk *wk, __u8 *rule);

/* walk.c */
/* Walks wk's request back from its first write; its t_dispatch. */
__u64 cp_walk_path(struct walk *wk, __u8 *rule);
int cp_walk_one(struct tt_critpath *cp, const struct rq_index *ix,
		const struct tt_cp_request *rqs, size_t ri,
		const struct cp_rq_marks *mk, struct tt_cp_result *out);

/* reader.c */
/* [t_arrive, t_read) of the walked request, in time order, into out. */
int cp_reader_phase(const struct walk *wk, struct segvec *out);

/* loopfifo.c */
int cp_loop_fifo(const struct tt_critpath *cp, struct rq_index *ix);
__u64 cp_loop_handoff(const struct rq_index *ix, __u32 tid, __u64 t_read,
		      __u32 req);
/* A loop that ran a batch's handlers back to back, marking none of their
 * hand-offs, then sent their headers together (§4.4, "Handlers back to
 * back"): where the request's handler ended, its share of the loop's CPU
 * in the order of the reads; 0 when the reader made no such batch. */
__u64 cp_loop_share(const struct walk *wk);
/* The same, whatever the loop woke, when t (the consumer's pick-up) lies
 * nearer the end of an earlier handler than the request's: a wake of an
 * earlier handler's put. */
__u64 cp_loop_share_after(const struct walk *wk, __u64 t);
/* cp_loop_share() when the loop's wake of the consumer at t came after the
 * request's share, before the batch's end: its own engine task, stepping
 * in the turn that ran the handlers (vLLM V0's). */
__u64 cp_loop_share_before(const struct walk *wk, __u64 t);
/* w is the reader's start of a thread other than the one it started for
 * the request: a loop that reads a batch of requests, then starts a thread
 * for each (starlette's generate() threads), before their headers and its
 * next read, in the order it read them (§4.4). */
bool cp_loop_spawned_other(const struct walk *wk, const struct cp_wake *w);
/* The reader's engine loop took the request up at t, its wake of c (§4.4),
 * c computed from t when computed (a relay else): t_enqueue is the reader's
 * hand-off point s < t; returns s, or 0. */
__u64 cp_loop_step(struct walk *wk, const struct cp_thread *c, __u64 t,
		   bool computed);

/* threads.c */
/* Drops the first k of the n elements of size size at *v, and gives back
 * the memory of a buffer mostly empty then (cap NULL: never). */
void cp_drop_front(void **v, size_t *n, size_t *cap, size_t k, size_t size);
/* cp_drop_front(), and an array left empty goes (a request's own channel
 * or pipe, done with). */
void cp_drop_front_release(void **v, size_t *n, size_t *cap, size_t k,
			   size_t size);
/* The element of v keyed (k1, k2) in ix, zeroed and appended when new;
 * NULL when out of memory. */
void *cp_keyed_get(struct tt_hmap *ix, __u64 k1, __u64 k2, void **v, size_t *n,
		   size_t *cap, size_t size);
struct cp_thread *cp_thread_ensure(struct tt_critpath *cp, __u32 tid,
				   __u32 tgid);
/* calls.c: a TT_EV_GPU_CALL as its thread's call (tt_critpath_add); 0 or
 * -ENOMEM. */
int cp_on_gpu_call(struct tt_critpath *cp, const struct tt_event *ev);
/* th's last call, an entry-only launch, ended by t, the start of a later
 * call, ioctl or file read of th (docs/design.md §4.5). */
void cp_call_close(struct cp_thread *th, __u64 t);
long cp_rec_before(const struct cp_thread *th, __u64 t);
long cp_rec_before_from(const struct cp_thread *th, __u64 t, long hint);
/* How many of the n elements of v (stride bytes apart, sorted by the u64
 * time at their offset 0) start before t. */
size_t cp_starts_before(const void *v, size_t n, size_t stride, __u64 t);
struct cp_thread *cp_thread_find(const struct tt_critpath *cp, __u32 tid);

/* marks.c */
int cp_mark_add(struct tt_critpath *cp, const struct tt_event *ev);
/* Binds every marker to a request of rqs[0..n) into out[0..n) (zeroed
 * first; docs/design.md §4.9): 0 or -ENOMEM. */
int cp_marks_bind(struct tt_critpath *cp, const struct tt_cp_request *rqs,
		  size_t n, struct cp_rq_marks *out);

/* This request's markers, inside [t_read, t_first_write] as clamped, the
 * enqueue no later than the dispatch. */
void cp_take_marks(struct walk *wk, const struct cp_rq_marks *mk);

/* walk.c */
struct cp_thread *cp_wake_followed(const struct tt_critpath *cp,
				   const struct cp_thread *th, long k,
				   __u64 t_out);

#endif /* TT_CP_INTERNAL_H */
