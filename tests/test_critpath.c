/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Thread timelines and the critical-path walk (docs/design.md §4) on synthetic
 * event streams: exact nanoseconds per stage, t_dispatch and t_token, and
 * the closure invariant (stages sum to t_wire - t_arrive) for every
 * request of every test.
 *
 * Most cases are scenarios in one table: the events (steps, or a builder
 * for the loops), the GPU devices said, the requests walked together and
 * what each must give (stages, result fields, the segments at given times
 * or places), the stats and a timeline interval. run_group() walks every
 * scenario of a group and prints "PASS: group/scenario", then the group's
 * line as before. The API tests (names, intervals, throughput) stay code. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include "tt_test.h"
#include "critpath.h"
#include "cp_stream.h"

static int closure_checked;

/* The invariants every walked request must keep. */
static void check_closure(const struct tt_cp_request *rq,
			  const struct tt_cp_result *r)
{
	__u64 by_stage[TT_ST_MAX] = { 0 }, sum = 0, t;
	size_t i;
	int st;

	closure_checked++;
	if (r->incomplete & TT_CP_INC_NOT_WALKED) {
		ASSERT_FALSE(r->complete, "not walked: complete");
		ASSERT_NULL(r->segs, "not walked: segs");
		ASSERT_EQ(r->nsegs, 0, "not walked: nsegs");
		for (st = 0; st < TT_ST_MAX; st++)
			ASSERT_EQ(r->stage_ns[st], 0, "not walked: stage ns");
		return;
	}
	for (st = 0; st < TT_ST_MAX; st++)
		sum += r->stage_ns[st];
	ASSERT_EQ(sum, rq->t_wire - rq->t_arrive, "closure: stages sum");
	ASSERT_EQ(r->complete, r->incomplete == 0, "closure: complete");
	t = rq->t_arrive;
	for (i = 0; i < r->nsegs; i++) {
		ASSERT_EQ(r->segs[i].start, t, "closure: segment start");
		ASSERT_GT(r->segs[i].dur, 0, "closure: segment dur");
		ASSERT_LT(r->segs[i].stage, TT_ST_MAX,
			  "closure: segment stage");
		by_stage[r->segs[i].stage] += r->segs[i].dur;
		t = r->segs[i].start + r->segs[i].dur;
	}
	ASSERT_EQ(t, rq->t_wire, "closure: segments end");
	for (st = 0; st < TT_ST_MAX; st++)
		ASSERT_EQ(by_stage[st], r->stage_ns[st],
			  "closure: segments per stage");
	ASSERT_LE(r->t_dispatch, r->t_token, "closure: t_dispatch");
	ASSERT_TRUE(r->t_token <= rq->t_first_write ||
			    rq->t_first_write < rq->t_read,
		    "closure: t_token");
	ASSERT_TRUE(r->t_dispatch >= rq->t_read || rq->t_read > rq->t_wire,
		    "closure: t_dispatch after the read");
}

/* Walks n requests together and checks the closure of each. */
static void walk(struct tt_critpath *cp, const struct tt_cp_request *rqs,
		 size_t n, struct tt_cp_result *out)
{
	size_t i;

	ASSERT_OK(tt_critpath_walk_all(cp, rqs, n, out), "walk_all");
	for (i = 0; i < n; i++)
		check_closure(&rqs[i], &out[i]);
}

static void free_results(struct tt_cp_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tt_cp_result_free(&r[i]);
		ASSERT_NULL(r[i].segs, "freed result's segs");
	}
}

/* The segment covering time t, or NULL. */
static const struct tt_cp_segment *seg_at(const struct tt_cp_result *r, __u64 t)
{
	size_t i;

	for (i = 0; i < r->nsegs; i++)
		if (r->segs[i].start <= t &&
		    t < r->segs[i].start + r->segs[i].dur)
			return &r->segs[i];
	return NULL;
}

/* ---- the scenario table's parts ---- */

/* One event of a scenario; times in us. */
enum step_op {
	OP_END,
	OP_IN, /* the idle task hands the CPU to tid */
	OP_OUT, /* tid blocks in b */
	OP_PREEMPT, /* tid is preempted by an untraced thread */
	OP_WAKE, /* tid (current) wakes target; flags: the context */
	OP_LOST, /* records lost over [t0, t) */
	OP_COMM, /* tid's name is now name */
	OP_CALL, /* tid was in CUDA function name (or fn) over [t0, t) */
	OP_IOCTL, /* tid was in ioctl cmd on rdev over [t0, t) */
	OP_FORK, /* tid creates target, named name */
	OP_WAKE_NEW, /* tid wakes its new thread target */
	OP_EXIT, /* tid exits */
	OP_RTLOCK, /* tid's process has a runtime lock range [arg0, t0) */
	OP_MARK, /* tid hits marker kind cmd, with key arg0 if flags; its
		  * spec target */
	OP_FILEIO, /* tid was in file read sys (b.mode, flags) over [t0, t) */
	OP_CHAN, /* tid does Go channel op cmd on channel arg0, qcount flags */
	OP_DATA_WAKE, /* tid writes to an eventfd or socket target read last */
	OP_DATA_READ, /* tid reads what a data wake announced */
	OP_MSG_SEND, /* tid hands a message to ZMQ */
	OP_POLL, /* tid's epoll wait returned ready fds */
	OP_STEAL, /* tid's run [t0, t) lost arg0 us to the hypervisor */
	OP_PIPE_IO, /* tid writes or reads (cmd) bytes [t0, t0 + flags) of a
		     * pipe */
};

struct step {
	enum step_op op;
	__u64 t;
	__u32 tid, target;
	__u64 t0;
	struct blk b;
	__u32 flags;
	int sys;
	__u64 arg0;
	__u32 cmd, rdev;
	const char *name;
	__u16 fn; /* OP_CALL without a name: a raw function index */
	__s32 ret;
};

/* clang-format off */
#define E_IN(t_, tid_) { OP_IN, (t_) * US, tid_ }
#define E_OUT(t_, tid_, ...) { OP_OUT, (t_) * US, tid_, .b = { __VA_ARGS__ } }
#define E_PREEMPT(t_, tid_) { OP_PREEMPT, (t_) * US, tid_ }
#define E_WAKE(t_, cur, tgt, sys_, arg)                                       \
	{ OP_WAKE, (t_) * US, cur, tgt, .sys = sys_, .arg0 = arg }
#define E_IRQ(t_, cur, tgt)                                                   \
	{ OP_WAKE, (t_) * US, cur, tgt, .flags = TT_F_HARDIRQ, .sys = -1 }
#define E_SOFTIRQ(t_, cur, tgt)                                               \
	{ OP_WAKE, (t_) * US, cur, tgt, .flags = TT_F_SOFTIRQ, .sys = -1 }
#define E_LOST(since, t_) { OP_LOST, (t_) * US, .t0 = (since) * US }
#define E_COMM(t_, tid_, name_) { OP_COMM, (t_) * US, tid_, .name = name_ }
#define E_CALL(t0_, t_, tid_, name_)                                          \
	{ OP_CALL, (t_) * US, tid_, .t0 = (t0_) * US, .name = name_ }
/* a launch probed at its entry only (--gpu-probes=all) */
#define E_LAUNCH(t_, tid_, name_)                                             \
	{ OP_CALL, (t_) * US, tid_, .t0 = (t_) * US, .name = name_,           \
	  .flags = TT_CALL_ENTRY }
#define E_CALL_RAW(t0_, t_, tid_, fn_, ret_)                                  \
	{ OP_CALL, (t_) * US, tid_, .t0 = (t0_) * US, .fn = fn_, .ret = ret_ }
#define E_IOCTL(t0_, t_, tid_, cmd_, rdev_)                                   \
	{ OP_IOCTL, (t_) * US, tid_, .t0 = (t0_) * US, .cmd = cmd_,           \
	  .rdev = rdev_ }
#define E_FORK(t_, tid_, child, name_)                                        \
	{ OP_FORK, (t_) * US, tid_, child, .name = name_ }
#define E_WAKE_NEW(t_, tid_, child, sys_)                                     \
	{ OP_WAKE_NEW, (t_) * US, tid_, child, .sys = sys_ }
#define E_EXIT(t_, tid_) { OP_EXIT, (t_) * US, tid_ }
#define E_RTLOCK(t_, tid_, lo, hi)                                            \
	{ OP_RTLOCK, (t_) * US, tid_, .arg0 = lo, .t0 = hi }
/* tid's process a Go program: every futex word its runtime's */
#define E_RTLOCK_GO(t_, tid_)                                                 \
	{ OP_RTLOCK, (t_) * US, tid_, .t0 = ~0ULL, .cmd = TT_RT_GO }
#define E_MARK(t_, tid_, kind_, key_)                                         \
	{ OP_MARK, (t_) * US, tid_, .cmd = TT_MARK_##kind_, .arg0 = key_,     \
	  .flags = TT_MARK_F_KEY }
/* a Python marker's int or str key: the same in every process */
#define E_MARK_VALUE(t_, tid_, kind_, key_)                                   \
	{ OP_MARK, (t_) * US, tid_, .cmd = TT_MARK_##kind_, .arg0 = key_,     \
	  .flags = TT_MARK_F_KEY | TT_MARK_F_VALUE }
/* a Python marker's id with its client's port (peer=argM) */
#define E_MARK_PEER(t_, tid_, kind_, key_, port_)                             \
	{ OP_MARK, (t_) * US, tid_, TT_MARK_SPEC(0, port_),                   \
	  .cmd = TT_MARK_##kind_, .arg0 = key_,                               \
	  .flags = TT_MARK_F_KEY | TT_MARK_F_VALUE | TT_MARK_F_PEER }
/* loop 101's requests 1 and 2 of process 100, from clients' ports 5001
 * and 5002 */
#define PEER_RQS                                                              \
	RQ(1, 1000, 1100, 2100, 2150, 101, 103, .peer_port = 5001,            \
	   .tgid = 100),                                                      \
		RQ(2, 1000, 1150, 2150, 2200, 101, 103, .peer_port = 5002,    \
		   .tgid = 100)
/* engine 202 (process 200) dispatches ids 0xa at 1500 us, 0xb at 1700 */
#define ENGINE_DISPATCHES_AB                                                  \
	E_MARK_VALUE(1500, 202, DISPATCH, 0xa),                               \
		E_MARK_VALUE(1700, 202, DISPATCH, 0xb)
/* PEER_RQS' requests enqueued and dispatched at those times (us) */
#define PEER_WANTS(enq1, disp1, enq2, disp2)                                  \
	WANTS(MARKER_DISPATCHED(disp1, R_T(t_enqueue, enq1)),                 \
	      { 2, NULL, { R_T(t_dispatch, disp2), R_T(t_enqueue, enq2) } })
/* a marker whose key could not be read */
#define E_MARK_UNREAD(t_, tid_, kind_)                                        \
	{ OP_MARK, (t_) * US, tid_, .cmd = TT_MARK_##kind_,                   \
	  .flags = TT_MARK_F_KEY | TT_MARK_F_UNREAD }
#define E_MARK_NOKEY(t_, tid_, kind_)                                         \
	{ OP_MARK, (t_) * US, tid_, .cmd = TT_MARK_##kind_ }
#define E_FILEIO(t0_, t_, tid_, sys_, mode_, flags_)                          \
	{ OP_FILEIO, (t_) * US, tid_, .t0 = (t0_) * US, .sys = sys_,          \
	  .b = { .mode = mode_ }, .flags = flags_ }
/* the same returning ret_ (E_FILEIO's: 4096 bytes) */
#define E_FILEIO_RET(t0_, t_, tid_, sys_, mode_, ret_)                        \
	{ OP_FILEIO, (t_) * US, tid_, .t0 = (t0_) * US, .sys = sys_,          \
	  .b = { .mode = mode_ }, .cmd = 1, .ret = ret_ }
#define E_DATA(t_, cur, tgt, sys_, arg)                                       \
	{ OP_DATA_WAKE, (t_) * US, cur, tgt, .sys = sys_, .arg0 = arg }
#define E_DREAD(t_, tid_) { OP_DATA_READ, (t_) * US, tid_ }
/* the same of an eventfd's (EFD) or a unix socket's (UNIX) data */
#define E_DATA_K(t_, cur, tgt, kind_)                                         \
	{ OP_DATA_WAKE, (t_) * US, cur, tgt, .sys = NR_WRITE, .arg0 = 6,      \
	  .cmd = TT_IPC_##kind_ }
#define E_DREAD_K(t_, tid_, kind_)                                            \
	{ OP_DATA_READ, (t_) * US, tid_, .arg0 = TT_IPC_##kind_ }
/* waiter waits on futex word at t_ us, waker wakes it 2 us later, it runs
 * 4 us after t_ */
#define E_FUTEX_PASS(t_, waiter, waker, word)                                 \
	E_OUT(t_, waiter, .sys = NR_FUTEX, .arg0 = word),                     \
	E_WAKE((t_) + 2, waker, waiter, NR_FUTEX, word), E_IN((t_) + 4, waiter)
/* tid reads a pipe a traced thread wrote to behind unread data */
#define E_BREAD(t_, tid_)                                                     \
	{ OP_DATA_READ, (t_) * US, tid_, .arg0 = TT_IPC_PIPE_BEHIND }
#define E_MSG(t_, tid_) { OP_MSG_SEND, (t_) * US, tid_ }
#define E_POLL(t_, tid_) { OP_POLL, (t_) * US, tid_ }
/* a poll of tid that returned nothing (a turn without reads) */
#define E_POLL_NONE(t_, tid_) { OP_POLL, (t_) * US, tid_, .arg0 = 1 }
#define E_STEAL(t0_, t_, tid_, us_)                                           \
	{ OP_STEAL, (t_) * US, tid_, .t0 = (t0_) * US, .arg0 = us_ }
/* tid writes or reads bytes [pos, pos + len) of the pipe */
#define E_PIPE(t_, tid_, op_, pos_, len_)                                     \
	{ OP_PIPE_IO, (t_) * US, tid_, .t0 = pos_, .flags = len_,             \
	  .cmd = TT_PIPE_##op_ }
#define E_CHAN(t_, tid_, op_, ch_, qcount_)                                   \
	{ OP_CHAN, (t_) * US, tid_, .cmd = TT_GO_CHAN_##op_, .arg0 = ch_,     \
	  .flags = qcount_ }
/* the Go channel scenarios: reader 101 sends its element and waits for
 * its token, which engine 102 hands it at 1500 (docs/design.md §4.10) */
#define CHAN_SEND(q_) E_CHAN(300, 101, SEND, 0xc0, q_),                         \
	E_OUT(310, 101, .sys = NR_FUTEX, .arg0 = 0x10)
#define CHAN_TOKEN(t_) E_WAKE(t_, 102, 101, NR_FUTEX, 0x10), E_IN((t_) + 5, 101)
#define CHAN_RQ(t_) RQ(1, 50, 100, (t_) + 20, (t_) + 30, 101, 101)
/* a parenthesized list of designated initializers, unwrapped */
#define UNPAREN(...) __VA_ARGS__
/* clang-format on */

static void add_step(struct stream *s, const struct step *st)
{
	struct tt_event *ev;

	switch (st->op) {
	case OP_IN:
		sw_in(s, st->t, st->tid);
		break;
	case OP_OUT:
		sw_out(s, st->t, st->tid, st->b);
		break;
	case OP_PREEMPT:
		preempt(s, st->t, st->tid);
		break;
	case OP_WAKE:
		wake(s, st->t, st->tid, st->target, st->flags, st->sys,
		     st->arg0);
		break;
	case OP_LOST:
		lost(s, st->t0, st->t);
		break;
	case OP_COMM:
		comm(s, st->t, st->tid, st->name);
		break;
	case OP_CALL:
		ev = ev_new(s, TT_EV_GPU_CALL, st->t, st->tid);
		ev->call.ts_enter = st->t0;
		ev->call.fn = st->name ? cuda_fn(st->name) : st->fn;
		ev->call.ret = st->ret;
		ev->call.flags = st->flags;
		break;
	case OP_IOCTL:
		gpu_ioctl(s, st->t0, st->t, st->tid, st->cmd, st->rdev);
		break;
	case OP_FORK:
		ev = ev_new(s, TT_EV_FORK, st->t, st->tid);
		ev->fork.child_tid = st->target;
		ev->fork.child_tgid = TGID(st->target);
		strncpy(ev->fork.comm, st->name, sizeof(ev->fork.comm) - 1);
		break;
	case OP_WAKE_NEW:
		ev = ev_new(s, TT_EV_WAKEUP_NEW, st->t, st->tid);
		ev->wake.target_tid = st->target;
		ev->wake.target_tgid = TGID(st->target);
		ev->wake.waker_syscall = st->sys;
		break;
	case OP_EXIT:
		ev_new(s, TT_EV_EXIT, st->t, st->tid);
		break;
	case OP_RTLOCK:
		ev = ev_new(s, TT_EV_RTLOCK, st->t, st->tid);
		ev->rtlock.lo = st->arg0;
		ev->rtlock.hi = st->t0;
		ev->rtlock.kind = st->cmd ? st->cmd : TT_RT_CPYTHON;
		break;
	case OP_MARK:
		ev = ev_new(s, TT_EV_MARK, st->t, st->tid);
		ev->mark.kind = st->cmd;
		ev->mark.spec = st->target; /* TT_MARK_SPEC: the peer port */
		ev->mark.key = st->arg0;
		ev->mark.flags = st->flags;
		break;
	case OP_FILEIO:
		file_read(s, st->t0, st->t, st->tid, st->sys, st->b.mode,
			  st->flags);
		if (st->cmd)
			s->ev[s->n - 1].fileio.ret = st->ret;
		break;
	case OP_DATA_WAKE:
		wake(s, st->t, st->tid, st->target, 0, st->sys, st->arg0);
		s->ev[s->n - 1].h.type = TT_EV_DATA_WAKE;
		s->ev[s->n - 1].wake.target_cpu = st->cmd;
		break;
	case OP_DATA_READ:
		ev = ev_new(s, TT_EV_DATA_READ, st->t, st->tid);
		ev->wake.target_tid = st->tid;
		ev->wake.target_tgid = TGID(st->tid);
		ev->wake.target_cpu = st->arg0;
		break;
	case OP_MSG_SEND:
		ev = ev_new(s, TT_EV_MSG_SEND, st->t, st->tid);
		ev->msg.sock = 0x5000;
		ev->msg.fn = TT_MSG_ZMQ_MSG_SEND;
		break;
	case OP_POLL:
		ev = ev_new(s, TT_EV_POLL, st->t, st->tid);
		ev->poll.nready = st->arg0 ? 0 : 1;
		ev->poll.syscall_nr = NR_EPOLL_WAIT;
		break;
	case OP_STEAL:
		ev = ev_new(s, TT_EV_STEAL, st->t, st->tid);
		ev->steal.ns = st->arg0 * US;
		ev->steal.ts_on = st->t0;
		break;
	case OP_PIPE_IO:
		ev = ev_new(s, TT_EV_PIPE_IO, st->t, st->tid);
		ev->pipe.pipe = 0x6000;
		ev->pipe.pos = st->t0;
		ev->pipe.len = st->flags;
		ev->pipe.op = st->cmd;
		break;
	case OP_CHAN:
		ev = ev_new(s, TT_EV_GO_CHAN, st->t, st->tid);
		ev->go_chan.ch = st->arg0;
		ev->go_chan.op = st->cmd;
		ev->go_chan.qcount = st->flags;
		break;
	case OP_END:
		break;
	}
}

/* A field of a result, segment or stats struct and what it must be. */
enum want_cmp { W_EQ, W_HAS, W_LT };

struct fwant {
	const char *name; /* NULL ends a list */
	unsigned short off, size;
	enum want_cmp cmp;
	__u64 v;
};

/* clang-format off */
#define FW(type, f, c, val)                                                   \
	{ #f, offsetof(type, f), sizeof(((type *)0)->f), c, val }
/* of struct tt_cp_result: raw, a time in us, the stage's ns in us */
#define R(f, val) FW(struct tt_cp_result, f, W_EQ, val)
#define R_T(f, us) FW(struct tt_cp_result, f, W_EQ, (us) * US)
#define R_HAS(f, bits) FW(struct tt_cp_result, f, W_HAS, bits)
#define R_LT(f, val) FW(struct tt_cp_result, f, W_LT, val)
#define R_STAGE(st, us) R_T(stage_ns[st], us)
/* of struct tt_cp_segment */
#define G(f, val) FW(struct tt_cp_segment, f, W_EQ, val)
#define G_T(f, us) FW(struct tt_cp_segment, f, W_EQ, (us) * US)
/* of struct tt_critpath_stats */
#define STAT(f, val) FW(struct tt_critpath_stats, f, W_EQ, val)
/* clang-format on */

/* A segment of a walked request: the one covering at, or segs[idx - 1]. */
struct seg_want {
	__u64 at;
	size_t idx;
	const char *reason; /* NULL: not checked */
	bool reason_has; /* reason is in it, not all of it */
	struct fwant f[6];
};

/* the segment at time at (us) is (tid, state, stage, reason) over
 * [start, start + dur) us */
/* clang-format off */
#define SEG(at_, tid_, state_, stage_, reason_, start_, dur_)                 \
	{ .at = (at_) * US, .reason = reason_,                                \
	  .f = { G(tid, tid_), G(state, state_), G(stage, stage_),            \
		 G_T(start, start_), G_T(dur, dur_) } }
/* the same of thread 101 on CPU, compute.cpu */
#define CPU_101(at_, reason_, start_, dur_)                                   \
	SEG(at_, 101, TT_CP_RUNNING, TT_ST_CPU, reason_, start_, dur_)
/* the segment at time at (us) has reason (NULL: any) and fields */
#define SEG_AT(at_, reason_, ...)                                             \
	{ .at = (at_) * US, .reason = reason_, .f = { __VA_ARGS__ } }
/* the segment at time at (us) has a reason containing reason_ */
#define SEG_AT_HAS(at_, reason_, ...)                                         \
	{ .at = (at_) * US, .reason = reason_, .reason_has = true,            \
	  .f = { __VA_ARGS__ } }
/* segs[i] (from 0) has reason (NULL: any) and fields */
#define SEG_NTH(i, reason_, ...)                                              \
	{ .idx = (i) + 1, .reason = reason_, .f = { __VA_ARGS__ } }
/* clang-format on */

/* What walked request rq (from 1) must give. */
struct rq_want {
	size_t rq; /* 0 ends a list */
	const __u64 *stages; /* every stage's time in us, or NULL */
	struct fwant f[8];
	struct seg_want segs[10];
};

/* clang-format off */
/* a scenario's group (its case line before the table) and name */
#define SC(group_, name_) .group = group_, .name = name_
/* the requests walked together, and how many */
#define RQS(...)                                                              \
	.rqs = { __VA_ARGS__ },                                               \
	.nrq = sizeof((struct tt_cp_request[]){ __VA_ARGS__ }) /              \
	       sizeof(struct tt_cp_request)
#define STAGES(...) ((const __u64[TT_ST_MAX]){ __VA_ARGS__ })
#define WANTS(...) ((const struct rq_want[]){ __VA_ARGS__, { 0 } })
#define STEPS(...) ((const struct step[]){ __VA_ARGS__, { OP_END } })
#define RQ(id_, arrive, read, first_write, wire, reader, writer, ...)         \
	{ .id = id_, .t_arrive = (arrive) * US, .t_read = (read) * US,        \
	  .t_first_write = (first_write) * US, .t_wire = (wire) * US,         \
	  .reader_tid = reader, .writer_tid = writer, __VA_ARGS__ }
/* clang-format on */

/* One interval of a thread's timeline (tt_critpath_intervals), in us. */
struct iv_want {
	__u32 tid; /* 0: none */
	size_t idx;
	__u64 start, end;
	enum tt_cp_state state;
	enum tt_stage stage;
	const char *reason;
};

/* The GPU devices a scenario says before its walk. */
enum {
	DEV_GPU_RDEV = 1 << 0, /* tt_critpath_add_gpu_rdev(GPU_RDEV) */
	DEV_GPU_MAJOR = 1 << 1, /* tt_critpath_add_gpu_major(195) */
	DEV_STUB = 1 << 2, /* the stub's device FIFO */
	DEV_NVIDIA0 = 1 << 3, /* /dev/nvidia0 */
};

#define MAX_RQ 10

struct scenario {
	const char *group, *name;
	/* walks the previous scenario's critpath again, its steps added */
	bool reuse;
	/* the events in the order made (the feed sorts by time, stable) */
	const struct step *steps;
	/* events made by a loop, after the steps */
	void (*build)(struct stream *s, const __u64 *arg);
	__u64 arg[3];
	unsigned int gpu;
	size_t nrq;
	struct tt_cp_request rqs[MAX_RQ];
	const struct rq_want *want;
	struct fwant stats[3];
	struct iv_want iv;
	/* tt_critpath_comm(comm_tid) after the walk */
	__u32 comm_tid;
	const char *comm;
	/* checks of the critpath no table holds, before the walk */
	void (*extra)(struct tt_critpath *cp);
};

/* ---- the runner ---- */

static __u64 field_of(const void *base, const struct fwant *f)
{
	const char *p = (const char *)base + f->off;

	switch (f->size) {
	case 1:
		return *(const __u8 *)p;
	case 2:
		return *(const __u16 *)p;
	case 4:
		return *(const __u32 *)p;
	default:
		return *(const __u64 *)p;
	}
}

static void check_fields(const char *what, const void *base,
			 const struct fwant *f, size_t max)
{
	char name[160];
	__u64 v;
	size_t i;

	for (i = 0; i < max && f[i].name; i++) {
		snprintf(name, sizeof(name), "%s %s", what, f[i].name);
		v = field_of(base, &f[i]);
		if (f[i].cmp == W_HAS)
			ASSERT_EQ(v & f[i].v, f[i].v, name);
		else if (f[i].cmp == W_LT)
			ASSERT_LT(v, f[i].v, name);
		else
			ASSERT_EQ(v, f[i].v, name);
	}
}

static void check_seg_want(const char *what, const struct tt_cp_result *r,
			   const struct seg_want *w)
{
	const struct tt_cp_segment *sg;
	char name[160];

	if (w->idx) {
		snprintf(name, sizeof(name), "%s segs[%zu]", what, w->idx - 1);
		if (!ASSERT_LT(w->idx - 1, r->nsegs, name))
			return;
		sg = &r->segs[w->idx - 1];
	} else {
		snprintf(name, sizeof(name), "%s segment at %llu us", what,
			 (unsigned long long)(w->at / US));
		sg = seg_at(r, w->at);
		if (!ASSERT_OK_PTR(sg, name))
			return;
	}
	if (w->reason && w->reason_has)
		ASSERT_OK_PTR(strstr(sg->reason, w->reason), name);
	else if (w->reason)
		ASSERT_STREQ(sg->reason, w->reason, name);
	check_fields(name, sg, w->f, sizeof(w->f) / sizeof(w->f[0]));
}

static void check_rq_want(const char *sc, const struct tt_cp_result *r,
			  const struct rq_want *w)
{
	char what[128], name[160];
	size_t i;
	int st;

	snprintf(what, sizeof(what), "%s rq%zu", sc, w->rq);
	for (st = 0; w->stages && st < TT_ST_MAX; st++) {
		snprintf(name, sizeof(name), "%s stage %s", what,
			 tt_stage_name(st));
		ASSERT_EQ(r->stage_ns[st], w->stages[st] * US, name);
	}
	check_fields(what, r, w->f, sizeof(w->f) / sizeof(w->f[0]));
	for (i = 0; i < sizeof(w->segs) / sizeof(w->segs[0]); i++)
		if (w->segs[i].at || w->segs[i].idx)
			check_seg_want(what, r, &w->segs[i]);
}

struct iv_list {
	struct tt_cp_interval v[16];
	int n;
	int stop_after; /* return 7 after this many, 0: never */
};

static int iv_collect(const struct tt_cp_interval *iv, void *ctx)
{
	struct iv_list *l = ctx;

	if (l->n < 16)
		l->v[l->n] = *iv;
	l->n++;
	return l->stop_after && l->n == l->stop_after ? 7 : 0;
}

static void check_iv(const char *what, const struct tt_cp_interval *iv,
		     __u64 start, __u64 end, enum tt_cp_state state,
		     enum tt_stage stage, const char *reason)
{
	char name[160];

	snprintf(name, sizeof(name), "%s start", what);
	ASSERT_EQ(iv->start, start, name);
	snprintf(name, sizeof(name), "%s end", what);
	ASSERT_EQ(iv->end, end, name);
	snprintf(name, sizeof(name), "%s state", what);
	ASSERT_EQ(iv->state, state, name);
	snprintf(name, sizeof(name), "%s stage", what);
	ASSERT_EQ(iv->stage, stage, name);
	snprintf(name, sizeof(name), "%s reason", what);
	ASSERT_STREQ(iv->reason, reason, name);
}

static void check_iv_want(const char *sc, struct tt_critpath *cp,
			  const struct iv_want *w)
{
	struct iv_list l = { 0 };
	char what[160];

	snprintf(what, sizeof(what), "%s interval %zu of %u", sc, w->idx,
		 w->tid);
	ASSERT_OK(tt_critpath_intervals(cp, w->tid, 0, iv_collect, &l), what);
	if (ASSERT_GT(l.n, w->idx, what))
		check_iv(what, &l.v[w->idx], w->start * US, w->end * US,
			 w->state, w->stage, w->reason);
}

static void add_gpu(struct tt_critpath *cp, unsigned int gpu);

/* Feeds s to cp (already fed up to s's first time), as cp_feed does. */
static void feed_more(struct tt_critpath *cp, struct stream *s)
{
	size_t i;

	if (!s->n)
		return;
	for (i = 0; i < s->n; i++)
		s->ev[i].h.cpu = i;
	qsort(s->ev, s->n, sizeof(*s->ev), cp_cmp_ts);
	for (i = 0; i < s->n; i++)
		ASSERT_OK(tt_critpath_add(cp, &s->ev[i]), "add after a walk");
	free(s->ev);
	memset(s, 0, sizeof(*s));
}

/* The scenario's stream: its steps, then its builder's events. */
static void scenario_stream(const struct scenario *sc, struct stream *s)
{
	const struct step *step;

	for (step = sc->steps; step && step->op != OP_END; step++)
		add_step(s, step);
	if (sc->build)
		sc->build(s, sc->arg);
}

static bool same_result(const struct tt_cp_result *x,
			const struct tt_cp_result *y)
{
	return x->complete == y->complete && x->incomplete == y->incomplete &&
	       !memcmp(x->stage_ns, y->stage_ns, sizeof(x->stage_ns)) &&
	       x->t_dispatch == y->t_dispatch &&
	       x->t_enqueue == y->t_enqueue && x->t_token == y->t_token &&
	       x->gil_ns == y->gil_ns && x->dispatch == y->dispatch &&
	       x->t_storage_start == y->t_storage_start &&
	       x->t_storage_end == y->t_storage_end &&
	       x->enqueue == y->enqueue &&
	       x->token_marker == y->token_marker && x->nsegs == y->nsegs &&
	       (!x->nsegs || !memcmp(x->segs, y->segs,
				     x->nsegs * sizeof(*x->segs)));
}

/*
 * The scenario's timelines trimmed at its earliest arrival, what no walk
 * of its requests can reach dropped (docs/design.md §3.5), give every
 * request the walk r holds: stages, times, rules, segments.
 */
static void check_trimmed(const struct scenario *sc, const char *name,
			  const struct tt_cp_result *r)
{
	struct tt_cp_result t[MAX_RQ];
	struct stream s = { 0 };
	struct tt_critpath *cp;
	__u64 floor = UINT64_MAX;
	char what[160];
	size_t i;

	for (i = 0; i < sc->nrq; i++)
		if (sc->rqs[i].t_arrive && sc->rqs[i].t_arrive < floor)
			floor = sc->rqs[i].t_arrive;
	scenario_stream(sc, &s);
	cp = cp_feed(&s);
	add_gpu(cp, sc->gpu);
	if (sc->extra)
		sc->extra(cp);
	tt_critpath_trim(cp, floor);
	snprintf(what, sizeof(what), "%s trimmed", name);
	if (ASSERT_OK(tt_critpath_walk_all(cp, sc->rqs, sc->nrq, t), what)) {
		for (i = 0; i < sc->nrq; i++)
			ASSERT_TRUE(same_result(&r[i], &t[i]), what);
		free_results(t, sc->nrq);
	}
	tt_critpath_free(cp);
}

static void run_scenario(const struct scenario *sc, const char *name,
			 struct tt_critpath **cpp)
{
	struct tt_cp_result r[MAX_RQ];
	struct tt_critpath_stats st;
	struct stream s = { 0 };
	const struct rq_want *w;

	scenario_stream(sc, &s);
	if (sc->reuse && *cpp) {
		feed_more(*cpp, &s);
	} else {
		tt_critpath_free(*cpp);
		*cpp = cp_feed(&s);
	}
	add_gpu(*cpp, sc->gpu);
	if (sc->extra)
		sc->extra(*cpp);
	walk(*cpp, sc->rqs, sc->nrq, r);
	for (w = sc->want; w && w->rq; w++)
		if (ASSERT_LE(w->rq, sc->nrq, name))
			check_rq_want(name, &r[w->rq - 1], w);
	tt_critpath_stats(*cpp, &st);
	check_fields(name, &st, sc->stats,
		     sizeof(sc->stats) / sizeof(sc->stats[0]));
	if (sc->iv.tid)
		check_iv_want(name, *cpp, &sc->iv);
	if (sc->comm)
		ASSERT_STREQ(tt_critpath_comm(*cpp, sc->comm_tid), sc->comm,
			     name);
	/* a scenario fed onto the last one's timelines has no stream alone */
	if (!sc->reuse)
		check_trimmed(sc, name, r);
	free_results(r, sc->nrq);
}

/* ---- GPU devices ---- */

#define NR_PPOLL 271
/* _IOWR('F', 0x2A, 32): NV_ESC_RM_CONTROL on /dev/nvidiactl */
#define NV_RM_CONTROL 0xc020462aU
/* The stub's device node, a FIFO on a filesystem of its own. */
#define STUB_DEV ((0u << 20) | 42)
#define STUB_INO 777ULL

static void add_stub_device(struct tt_critpath *cp)
{
	struct tt_dev_info d = {
		.path = "/tmp/ttftrace-test/stubcuda-4242.nvidia0",
		.kind = TT_GPU_USER,
		.dev = STUB_DEV,
		.ino = STUB_INO,
	};

	ASSERT_OK(tt_critpath_add_gpu_device(cp, &d), "add stub device");
}

static void add_nvidia0(struct tt_critpath *cp)
{
	struct tt_dev_info d = {
		.path = "/dev/nvidia0",
		.rdev = GPU_RDEV,
		.kind = TT_GPU_NVIDIA,
		.dev = 5,
		.ino = 400,
	};

	ASSERT_OK(tt_critpath_add_gpu_device(cp, &d), "add /dev/nvidia0");
}

static void add_gpu(struct tt_critpath *cp, unsigned int gpu)
{
	if (gpu & DEV_GPU_RDEV)
		ASSERT_OK(tt_critpath_add_gpu_rdev(cp, GPU_RDEV), "gpu rdev");
	if (gpu & DEV_GPU_MAJOR)
		ASSERT_OK(tt_critpath_add_gpu_major(cp, 195), "gpu major");
	if (gpu & DEV_STUB)
		add_stub_device(cp);
	if (gpu & DEV_NVIDIA0)
		add_nvidia0(cp);
}

/* ---- streams made by loops (arg: the scenario's) ---- */

/* Reader 101 -> tokenizer 102 -> engine arg[0] -> writer 104 (cp_chain). */
static void build_chain(struct stream *s, const __u64 *arg)
{
	cp_chain(s, arg[0]);
}

/*
 * A busy engine (102) runs iterations back to back and ends each with a
 * burst of wakes of the active requests' writers (111 A, 112 B, 113 C);
 * 101 reads every request. A arrives during iteration 2 and is computed
 * in iteration 3: its queue ends at the last wake of iteration 2's burst,
 * not inside iteration 3's burst that also carries A's own hand-off.
 */
static void busy_writer(struct stream *s, __u64 t, __u32 tid)
{
	wake(s, t, 102, tid, 0, NR_FUTEX, tid);
	sw_in(s, t + 10 * US, tid);
	sw_out(s, t + 30 * US, tid,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = tid });
}

static void build_busy_engine(struct stream *s, const __u64 *arg)
{
	__u32 w;
	int k;

	sw_in(s, 0, 101);
	sw_in(s, 5 * US, 102);
	sw_out(s, 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	if (arg[0]) /* tokio's names: the engine a blocking thread */
		comm(s, 0, 102, "tokio-runtime-w");
	for (w = 111; w <= 113; w++) {
		sw_in(s, 1 * US, w);
		if (arg[0]) { /* ... and the writers its workers */
			comm(s, 0, w, "tokio-runtime-w");
			sw_out(s, 1 * US + 300, w,
			       (struct blk){ .sys = NR_EPOLL_WAIT, .arg0 = 4 });
			wake(s, 1 * US + 500, UNTRACED, w, TT_F_SOFTIRQ, -1, 0);
			sw_in(s, 1 * US + 600, w);
		}
		sw_out(s, 2 * US, w,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = w });
	}
	wake(s, 100 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_in(s, 110 * US, 102);
	/* hand-offs of C and A while the engine runs: no blocked interval */
	wake(s, 1060 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	wake(s, 2310 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	busy_writer(s, 900 * US, 112);
	for (k = 1; k <= 4; k++) {
		__u64 t = (k * 1000 + 900) * US;

		if (k == 1 || k == 2) {
			busy_writer(s, t, 112);
			busy_writer(s, t + 5 * US, 113);
		} else if (k == 3) {
			busy_writer(s, t, 112);
			busy_writer(s, t + 5 * US, 111);
			busy_writer(s, t + 10 * US, 113);
		} else {
			busy_writer(s, t, 111);
			busy_writer(s, t + 5 * US, 112);
			busy_writer(s, t + 10 * US, 113);
		}
	}
	preempt(s, 5000 * US, 102);
}

/*
 * asyncio-like: one event-loop thread 101 reads and writes every request;
 * the busy engine 102 wakes it once per iteration (socket write) and they
 * share a GIL word. A's path leaves the engine through the GIL and comes
 * back to it: the burst already passed is not skipped a second time.
 */
static void build_shared_loop(struct stream *s, const __u64 *arg)
{
	const __u64 gil = 0x6000, q = 0x7000;
	struct blk epoll = { .sys = NR_EPOLL_WAIT, .arg0 = 3 };
	int i, k;

	/* other threads of the process take the GIL often: a lock */
	for (i = 0; i < 10; i++) {
		sw_in(s, (10 + i * 8) * US, 103);
		sw_out(s, (14 + i * 8) * US, 103,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	}
	sw_in(s, 0, 101);
	sw_in(s, 5 * US, 102);
	sw_out(s, 10 * US, 102, (struct blk){ .sys = NR_FUTEX, .arg0 = q });
	wake(s, 110 * US, 101, 102, 0, NR_FUTEX, q);
	sw_out(s, 120 * US, 101, epoll);
	sw_in(s, 120 * US, 102);
	for (k = 0; k <= 4; k++) {
		__u64 t = (k * 1000 + 900) * US;

		wake(s, t, 102, 101, 0, NR_WRITE, 9);
		sw_in(s, t + 10 * US, 101);
		sw_out(s, t + 30 * US, 101, epoll);
	}
	/* A arrives, is read and queued while the engine runs */
	wake(s, 2200 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(s, 2210 * US, 101);
	wake(s, 2310 * US, 101, 102, 0, NR_FUTEX, q);
	sw_out(s, 2320 * US, 101, epoll);
	/* mid-iteration the loop takes the GIL and gives it back */
	wake(s, 3390 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(s, 3393 * US, 101);
	sw_out(s, 3395 * US, 101, (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	wake(s, 3400 * US, 102, 101, 0, NR_FUTEX, gil);
	sw_out(s, 3400 * US, 102, (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	sw_in(s, 3402 * US, 101);
	wake(s, 3450 * US, 101, 102, 0, NR_FUTEX, gil);
	sw_out(s, 3460 * US, 101, epoll);
	sw_in(s, 3452 * US, 102);
	preempt(s, 5000 * US, 102);
}

/*
 * CPython-like: the reader/writer thread 101 hands the request to the
 * engine 102 through word 0x7000, then 102 wakes 101 through word to_l
 * (arg[1]) and 101 wakes 102 through word to_e (arg[2]), n (arg[0]) times
 * each, before 101 writes at GIL_FW(n). With to_l == to_e the two threads
 * pass a GIL back and forth.
 */
#define GIL_FW(n) (1230 + 22 * (n))

static void build_gil(struct stream *s, const __u64 *arg)
{
	__u64 n = arg[0], to_l = arg[1], to_e = arg[2];
	__u64 e_in = 1210 * US;
	__u64 i;

	sw_in(s, 0, 101);
	sw_in(s, 5 * US, 102);
	sw_out(s, 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	wake(s, 1200 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_out(s, 1205 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = to_l });
	sw_in(s, e_in, 102);
	for (i = 0; i < n; i++) {
		wake(s, e_in + 10 * US, 102, 101, 0, NR_FUTEX, to_l);
		sw_out(s, e_in + 10 * US, 102,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = to_e });
		sw_in(s, e_in + 12 * US, 101);
		wake(s, e_in + 20 * US, 101, 102, 0, NR_FUTEX, to_e);
		sw_out(s, e_in + 20 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = to_l });
		sw_in(s, e_in + 22 * US, 102);
		e_in += 22 * US;
	}
	wake(s, e_in + 10 * US, 102, 101, 0, NR_FUTEX, to_l);
	sw_out(s, e_in + 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	sw_in(s, e_in + 12 * US, 101);
}

/* A cuLaunchKernel of tid over [enter, enter + len) us; with entry_only
 * probed at its entry only (--gpu-probes=all), its end not recorded. */
static void launch_us(struct stream *s, __u64 enter, __u64 len, __u32 tid,
		      bool entry_only)
{
	struct tt_event *ev;

	if (!entry_only) {
		gpu_call(s, enter * US, (enter + len) * US, tid,
			 "cuLaunchKernel");
		return;
	}
	ev = ev_new(s, TT_EV_GPU_CALL, enter * US, tid);
	ev->call.ts_enter = enter * US;
	ev->call.fn = cuda_fn("cuLaunchKernel");
	ev->call.flags = TT_CALL_ENTRY;
}

/* An eager forward pass: 10 launches back to back, 7, then 10 with an
 * ioctl between the 4th and the 5th; arg[0]: the launches at their entry
 * only. */
static void build_launch_run(struct stream *s, const __u64 *arg)
{
	int i;

	sw_in(s, 900 * US, 101);
	for (i = 0; i < 10; i++)
		launch_us(s, 1200 + i * 7, 5, 101, arg[0]);
	for (i = 0; i < 7; i++)
		launch_us(s, 1400 + i * 7, 5, 101, arg[0]);
	/* 4 + ioctl + 5 */
	for (i = 0; i < 10; i++)
		launch_us(s, 1600 + i * 7, 5, 101, arg[0]);
	gpu_ioctl(s, 1626 * US, 1627 * US, 101, NV_RM_CONTROL, GPU_RDEV);
}

/*
 * Engine arg[0] runs iterations k = arg[1]..arg[2] back to back, on CPU
 * all the time: launches at k000 and k010 us (10 us each), a spin-wait
 * sync over [k100, k900) us, then hands tokens off until (k+1)000 us.
 */
static void engine_loop(struct stream *s, const __u64 *arg, bool entry_only)
{
	__u64 k;

	for (k = arg[1]; k <= arg[2]; k++) {
		__u64 t = k * 1000 * US;

		launch_us(s, k * 1000, 10, arg[0], entry_only);
		gpu_call(s, t + 10 * US, t + 20 * US, arg[0], "cuGraphLaunch");
		gpu_call(s, t + 100 * US, t + 900 * US, arg[0],
			 "cuStreamSynchronize");
	}
}

static void build_engine_loop(struct stream *s, const __u64 *arg)
{
	engine_loop(s, arg, false);
}

/* the same, its launches probed at their entry only: each ends where the
 * graph launch 10 us later begins (docs/design.md §4.5) */
static void build_engine_loop_entry(struct stream *s, const __u64 *arg)
{
	engine_loop(s, arg, true);
}

/* clang-format off */
/* Requests reach engine 102 (build_) through a lock-free ring: read during
 * iteration 1, the request waits for iteration 2, whose first launch is at
 * 2000 us; its stages and dispatch */
#define RING_ENGINE(build_)                                                   \
	.steps = STEPS(E_IN(0, 101), E_IN(0, 102)), .build = build_,          \
	.arg = { 102, 1, 3 }, RQS(RQ(1, 1250, 1300, 2950, 3000, 101, 102))
#define RING_ENGINE_WANT                                                      \
	STAGES([TT_ST_NET_IN] = 50, [TT_ST_QUEUE] = 700, [TT_ST_CPU] = 150,   \
	       [TT_ST_GPU] = 800, [TT_ST_NET_OUT] = 50),                      \
	{ R(dispatch, TT_CP_DISP_GPU), R_T(t_dispatch, 2000),                 \
	  R(complete, true) }
/* clang-format on */

/*
 * A busy engine 102 (on CPU throughout) hands X's token to writer 111 at
 * 1500 us and A's to 112 at 2000 us, or (arg[1]) to reader 101 blocked on
 * 0x90. Reader 101 reads A at 1100 us, tokenizes (preempted 50 us) and
 * lets it go at 1300 us: blocking, or (event loop, arg[0]) reading request
 * Y. Only [let go, 1500 us) is queued.
 */
static void build_busy_handoff(struct stream *s, const __u64 *arg)
{
	__u32 w, a_writer = arg[1] ? 101 : 112;

	sw_in(s, 0, 101);
	sw_in(s, 0, 102);
	for (w = 111; w <= 112; w++) {
		sw_in(s, 1, w);
		sw_out(s, 2, w, (struct blk){ .sys = NR_FUTEX, .arg0 = w });
	}
	preempt(s, 1200 * US, 101);
	sw_in(s, 1250 * US, 101);
	if (!arg[0])
		sw_out(s, 1300 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	wake(s, 1500 * US, 102, 111, 0, NR_FUTEX, 111);
	sw_in(s, 1505 * US, 111);
	sw_out(s, 1530 * US, 111, (struct blk){ .sys = NR_FUTEX, .arg0 = 111 });
	wake(s, 2000 * US, 102, a_writer, 0, NR_FUTEX,
	     a_writer == 101 ? 0x90 : 112);
	sw_in(s, 2010 * US, a_writer);
}

/*
 * llama.cpp's server_response: handlers 111-116 and reader 101 wait on one
 * condition variable, 0x500, for every token; busy engine 102 notifies all
 * of them after every step (200, 400, 1500 and 2000 us) and never waits
 * on it. X's token (writer 111) is the 1500 us step's; A's (read by 101 at
 * 1100 us, which blocks at 1300 us) the 2000 us one's, 101 woken for
 * nothing at 1500 us and back on 0x500 at 1510 us.
 */
static void build_shared_cond(struct stream *s, const __u64 *arg)
{
	const struct blk cond = { .sys = NR_FUTEX, .arg0 = 0x500 };
	__u64 step[] = { 200, 400 };
	__u32 w;
	int i;

	sw_in(s, 0, 101);
	sw_in(s, 0, 102);
	for (w = 111; w <= 116; w++) {
		sw_in(s, w - 110, w);
		sw_out(s, w - 100, w, cond);
		for (i = 0; i < 2; i++) {
			wake(s, (step[i] + w - 110) * US, 102, w, 0, NR_FUTEX,
			     0x500);
			sw_in(s, (step[i] + 20 + w - 110) * US, w);
			sw_out(s, (step[i] + 30 + w - 110) * US, w, cond);
		}
	}
	sw_out(s, 1300 * US, 101, cond);
	wake(s, 1499 * US, 102, 101, 0, NR_FUTEX, 0x500);
	wake(s, 1500 * US, 102, 111, 0, NR_FUTEX, 0x500);
	sw_in(s, 1505 * US, 101);
	sw_out(s, 1510 * US, 101, cond);
	sw_in(s, 1506 * US, 111);
	sw_out(s, 1530 * US, 111, cond);
	wake(s, 2000 * US, 102, 101, 0, NR_FUTEX, 0x500);
	sw_in(s, 2010 * US, 101);
}

/* Writers 111 and 113 pass the mutex 0x3d0 between them (waits 1-3), and
 * (arg) engine 102 waits on it once: judged a lock passed around. */
static void passed_mutex(struct stream *s, bool engine_waits)
{
	const struct blk mutex = { .sys = NR_FUTEX, .arg0 = 0x3d0 };
	/* each turn's waiter and the thread that wakes it, 20 us apart */
	static const __u32 turn[][2] = {
		{ 102, 113 }, { 111, 113 }, { 113, 111 }, { 111, 113 }
	};
	int i;

	for (i = engine_waits ? 0 : 1; i < 4; i++) {
		sw_out(s, (10 + 20 * i) * US, turn[i][0], mutex);
		wake(s, (20 + 20 * i) * US, turn[i][1], turn[i][0], 0, NR_FUTEX,
		     0x3d0);
		sw_in(s, (25 + 20 * i) * US, turn[i][0]);
	}
	sw_out(s, 110 * US, 113, (struct blk){ .sys = NR_FUTEX, .arg0 = 113 });
}

/*
 * build_busy_handoff's requests, writers 111 and (for A) 112 waiting on
 * words cond and a_word under passed_mutex()'s mutex (which engine 102
 * waited on once, or not): 101 lets A go at 1300 us, and busy engine 102
 * signals X's writer 111 through cond at its boundary, 1500 us.
 */
static void cond_and_mutex(struct stream *s, bool engine_waits, __u64 a_word)
{
	const struct blk cond = { .sys = NR_FUTEX, .arg0 = 0x420 };
	__u32 w;

	sw_in(s, 0, 101);
	sw_in(s, 0, 102);
	for (w = 111; w <= 113; w++)
		sw_in(s, 1, w);
	passed_mutex(s, engine_waits);
	sw_out(s, 100 * US, 111, cond);
	sw_out(s, 100 * US, 112,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = a_word });
	preempt(s, 1200 * US, 101);
	sw_in(s, 1250 * US, 101);
	sw_out(s, 1300 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	wake(s, 1500 * US, 102, 111, 0, NR_FUTEX, 0x420);
}

/* Engine 102 wakes tid through word w at t us; tid runs 5 us later and
 * waits on word then at t + after us. */
static void woken_then_waits(struct stream *s, __u64 t, __u32 tid, __u64 w,
			     __u64 then, __u64 after)
{
	wake(s, t * US, 102, tid, 0, NR_FUTEX, w);
	sw_in(s, (t + 5) * US, tid);
	sw_out(s, (t + after) * US, tid,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = then });
}

/*
 * cond_and_mutex(), the engine waiting on the mutex once: preempted by 111
 * at 1502 us, which blocks on the mutex 102 holds at 1510; 102 runs at
 * 1600, releases the mutex, waking 111 (or, arg[1], 113, which its
 * boundary did not wake) at 1601, is preempted at arg[0] us and runs again
 * at 1700 to hand A's token to 112 at 2000 us.
 */
static void build_boundary_release(struct stream *s, const __u64 *arg)
{
	const struct blk cond = { .sys = NR_FUTEX, .arg0 = 0x420 };
	__u32 woken = arg[1] ? 113 : 111;

	cond_and_mutex(s, true, 0x420);
	preempt(s, 1502 * US, 102);
	sw_in(s, 1502 * US, 111);
	sw_out(s, 1510 * US, 111,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3d0 });
	sw_in(s, 1600 * US, 102);
	wake(s, 1601 * US, 102, woken, 0, NR_FUTEX, 0x3d0);
	preempt(s, arg[0] * US, 102);
	sw_in(s, arg[0] * US, woken);
	sw_out(s, arg[0] * US + 20 * US, woken, cond);
	sw_in(s, 1700 * US, 102);
	wake(s, 2000 * US, 102, 112, 0, NR_FUTEX, 0x420);
	sw_in(s, 2010 * US, 112);
}

/* cond_and_mutex() with the engine never on the mutex, and X's writer 111
 * back on the condition variable (1505-1530 us) after its signal. */
static void convoy_start(struct stream *s, __u64 a_word)
{
	cond_and_mutex(s, false, a_word);
	sw_in(s, 1505 * US, 111);
	sw_out(s, 1530 * US, 111,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x420 });
}

/*
 * A lock convoy after convoy_start(): engine 102 hands A's first token
 * to 112 at 1800 us through the condition variable 0x420 (arg[0]: through
 * the mutex, 112 waiting on the variable after), and X's next to 111;
 * 112 blocks at 1810 on the mutex, which 111 holds, and gets it only at
 * 102's release at 1995, after the next step (1990: 111 woken again).
 * A's writer had its token at 1800.
 */
static void build_convoy(struct stream *s, const __u64 *arg)
{
	__u64 first = arg[0] ? 0x3d0 : 0x420, then = arg[0] ? 0x420 : 0x3d0;

	convoy_start(s, first);
	woken_then_waits(s, 1800, 112, first, then, 10);
	woken_then_waits(s, 1801, 111, 0x420, 0x420, 29);
	wake(s, 1990 * US, 102, 111, 0, NR_FUTEX, 0x420);
	wake(s, 1995 * US, 102, 112, 0, NR_FUTEX, then);
	sw_in(s, 2000 * US, 112);
}

/*
 * convoy_start(): engine 102 signals A's first token to 112 at 1800 us,
 * which then blocks on the mutex at 1810, and Y's token to 113 at 2100;
 * after its next step it signals X's writer 111 (2400), which releases
 * the mutex to 112 at 2408.
 */
static void build_convoy_released(struct stream *s, const __u64 *arg)
{
	convoy_start(s, 0x420);
	woken_then_waits(s, 1800, 112, 0x420, 0x3d0, 10);
	woken_then_waits(s, 2100, 113, 0x420, 0x420, 20);
	wake(s, 2400 * US, 102, 111, 0, NR_FUTEX, 0x420);
	sw_in(s, 2405 * US, 111);
	wake(s, 2408 * US, 111, 112, 0, NR_FUTEX, 0x3d0);
	sw_in(s, 2410 * US, 112);
}

/*
 * A convoy through other writers after convoy_start(): engine 102
 * signals A's first token to 112 at 1800 us and X's next to 111 at 1801;
 * both block on the mutex (111 at 1808, 112 at 1810) that Y's writer 113
 * holds from 1700 while it hands Y's token to loop 101 (1900). 113 passes
 * the mutex to 111 at 1950, 111 to 112 at 1960. A's writer had its token
 * at 1800 (arg[0]: 112, woken by the reader at 1290, ran till it blocked
 * on the mutex at 1810, unsignalled).
 */
static void build_convoy_chain(struct stream *s, const __u64 *arg)
{
	convoy_start(s, 0x420);
	sw_in(s, 1700 * US, 113);
	if (arg[0]) {
		/* no signal: 112 runs from the reader's wake, and takes its
		 * token when it has the mutex */
		wake(s, 1290 * US, 101, 112, 0, NR_FUTEX, 0x90);
		sw_in(s, 1295 * US, 112);
		sw_out(s, 1810 * US, 112,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3d0 });
	} else {
		woken_then_waits(s, 1800, 112, 0x420, 0x3d0, 10);
	}
	woken_then_waits(s, 1801, 111, 0x420, 0x3d0, 7);
	wake(s, 1900 * US, 113, 101, 0, NR_WRITE, 6);
	sw_in(s, 1905 * US, 101);
	sw_out(s, 1910 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	wake(s, 1950 * US, 113, 111, 0, NR_FUTEX, 0x3d0);
	sw_in(s, 1955 * US, 111);
	wake(s, 1960 * US, 111, 112, 0, NR_FUTEX, 0x3d0);
	sw_in(s, 1965 * US, 112);
}

/*
 * build_busy_handoff's engine 102 notifies condition variable 0x420 at
 * each step's end: X's writer 111 at 1500 us, then Y's writer 113 at 2000
 * - arg[0] us and A's writer 112 at 2000, the engine on CPU between; with
 * arg[1], Y's writer waits on that word of its own instead.
 */
static void build_slow_broadcast(struct stream *s, const __u64 *arg)
{
	const struct blk cond = { .sys = NR_FUTEX, .arg0 = 0x420 };
	const __u64 y_word = arg[1] ? arg[1] : 0x420;
	__u32 w;

	sw_in(s, 0, 101);
	sw_in(s, 0, 102);
	for (w = 111; w <= 113; w++) {
		sw_in(s, 1, w);
		sw_out(s, 2, w,
		       w == 113 ? (struct blk){ .sys = NR_FUTEX,
						.arg0 = y_word } :
				  cond);
	}
	preempt(s, 1200 * US, 101);
	sw_in(s, 1250 * US, 101);
	sw_out(s, 1300 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	wake(s, 1500 * US, 102, 111, 0, NR_FUTEX, 0x420);
	sw_in(s, 1505 * US, 111);
	sw_out(s, 1530 * US, 111, cond);
	wake(s, (2000 - arg[0]) * US, 102, 113, 0, NR_FUTEX, y_word);
	wake(s, 2000 * US, 102, 112, 0, NR_FUTEX, 0x420);
	sw_in(s, 2010 * US, 112);
}

/* An event loop preempted 100 times (10 us each) from 1100 us. */
static void build_many_slices(struct stream *s, const __u64 *arg)
{
	int i;

	sw_in(s, 0, 101);
	for (i = 0; i < 100; i++) {
		preempt(s, 1100 * US + i * 20 * US, 101);
		sw_in(s, 1110 * US + i * 20 * US, 101);
	}
}

/* ---- streams several scenarios share ---- */

/* A thread that blocks on a char device ioctl, woken by a hard interrupt
 * that lands on another traced thread (not a waker). */
#define GPU_STREAM                                                          \
	STEPS(E_IN(900, 101),                                               \
	      E_OUT(1200, 101, .sys = NR_IOCTL, .arg0 = 7, .mode = S_IFCHR, \
		    .rdev = GPU_RDEV),                                      \
	      E_IN(1600, 102), E_IRQ(1700, 102, 101),                       \
	      E_OUT(1750, 102, .sys = NR_FUTEX, .arg0 = 0x9), E_IN(1710, 101))

/* Thread 101 runs from 900 us, waits in A from 1200 to 1500 us and in B
 * from 1560 to 1750 us (each a parenthesized blk), each wait ended by a
 * hard interrupt. */
#define TWO_WAITS(A, B)                                                \
	STEPS(E_IN(900, 101), E_OUT(1200, 101, UNPAREN A),             \
	      E_IRQ(1500, 0, 101), E_IN(1510, 101),                    \
	      E_OUT(1560, 101, UNPAREN B), E_IRQ(1750, UNTRACED, 101), \
	      E_IN(1760, 101))

/* Waits on anon inodes (eventfd, timerfd, epoll, io_uring), or not. */
#define ANON_STREAM(anon_)                                                     \
	TWO_WAITS((.sys = NR_READ, .arg0 = 9, .mode = S_IFREG, .anon = anon_), \
		  (.sys = NR_IO_URING_ENTER, .arg0 = 4, .mode = S_IFREG,       \
		   .iowait = true, .anon = anon_))

/* ANON_STREAM(true) with an io_uring_enter(2) call of 101's from s_ to
 * e_ us that submitted or reaped a request on a file (its FILEIO record) */
#define URING_STREAM(s_, e_)                                                  \
	STEPS(E_IN(900, 101),                                                 \
	      E_OUT(1200, 101, .sys = NR_READ, .arg0 = 9, .mode = S_IFREG,    \
		    .anon = true),                                            \
	      E_IRQ(1500, 0, 101), E_IN(1510, 101),                           \
	      E_FILEIO(s_, e_, 101, NR_IO_URING_ENTER, S_IFREG, 0),           \
	      E_OUT(1560, 101, .sys = NR_IO_URING_ENTER, .arg0 = 4,           \
		    .mode = S_IFREG, .iowait = true, .anon = true),           \
	      E_IRQ(1750, UNTRACED, 101), E_IN(1760, 101))

/* On TCP loopback the receiver's wakeup runs in softirq with the sender as
 * current. */
#define LOOPBACK(sender, B)                                          \
	STEPS(E_IN(0, 101), E_IN(5, 201), E_OUT(50, 201, UNPAREN B), \
	      E_SOFTIRQ(1200, sender, 201), E_IN(1210, 201))

#define SOCK_WAIT .sys = NR_RECVFROM, .arg0 = 3, .mode = S_IFSOCK

/*
 * Blocking-mode sync with the stub's device: engine 101 (reader and
 * writer) launches, which wakes the device thread 103; it sleeps in ppoll
 * on the device FIFO until the kernel ends (a timer interrupt), then
 * writes a byte that wakes 101, blocked in poll on the FIFO inside
 * cuStreamSynchronize; CALLS... the CUDA calls seen.
 */
#define BLOCKING_SYNC(...)                                              \
	STEPS(E_IN(900, 101), E_IN(950, 103),                           \
	      E_OUT(1000, 103, .sys = NR_FUTEX, .arg0 = 0x500),         \
	      E_WAKE(1158, 101, 103, NR_FUTEX, 0x500), E_IN(1159, 103), \
	      E_OUT(1165, 103, .sys = NR_PPOLL, .arg0 = 0x7f10,         \
		    .mode = S_IFIFO, .dev = STUB_DEV, .ino = STUB_INO), \
	      E_OUT(1210, 101, .sys = NR_POLL, .arg0 = 0x7f00,          \
		    .mode = S_IFIFO, .dev = STUB_DEV, .ino = STUB_INO), \
	      E_IRQ(1500, 0, 103), E_IN(1502, 103),                     \
	      E_WAKE(1540, 103, 101, NR_WRITE, 6),                      \
	      E_OUT(1545, 103, .sys = NR_FUTEX, .arg0 = 0x500),         \
	      E_IN(1550, 101) __VA_ARGS__)
#define SYNC_CALLS                                   \
	, E_CALL(1150, 1160, 101, "cuLaunchKernel"), \
		E_CALL(1200, 1560, 101, "cuStreamSynchronize")

/*
 * An ioctl on /dev/nvidia0 blocks until a hard interrupt (landing on
 * traced thread 102) ends it; ... the ioctl event, when seen.
 */
#define NVIDIA_IOCTL(...)                                                   \
	STEPS(E_IN(900, 101),                                               \
	      E_OUT(1200, 101, .sys = NR_IOCTL, .arg0 = 7, .mode = S_IFCHR, \
		    .rdev = GPU_RDEV),                                      \
	      E_IN(1400, 102), E_IRQ(1500, 102, 101),                       \
	      E_IN(1510, 101) __VA_ARGS__)
#define IOCTL_EVENT , E_IOCTL(1190, 1520, 101, NV_RM_CONTROL, GPU_RDEV)

/*
 * One request in flight: reader 101 (also the writer) wakes the idle
 * engine 102 at 1200 us through word 0x3ec; the engine sleeps 1 ms, then
 * (DOUBLE) signals the condition variable 0x420 at 2300 us while holding
 * the request's mutex 0x3d0: 101 runs, blocks on the mutex at 2330 us,
 * and the engine's unlock wakes it again at 2360 us (the engine on CPU all
 * the while); or (TWICE) the engine wakes 101 twice through 0x420,
 * sleeping between. No wake is a boundary to another request: the engine
 * picked the request up at 1200 us.
 */
#define ONE_IN_FLIGHT(...)                                            \
	STEPS(E_IN(0, 101), E_IN(5, 102),                             \
	      E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x3ec),         \
	      E_WAKE(1200, 101, 102, NR_FUTEX, 0x3ec),                \
	      E_OUT(1210, 101, .sys = NR_FUTEX, .arg0 = 0x420),       \
	      E_IN(1220, 102), E_OUT(1300, 102, .sys = NR_NANOSLEEP), \
	      E_IRQ(2290, 0, 102), E_IN(2290, 102), __VA_ARGS__,      \
	      E_OUT(2370, 102, .sys = NR_FUTEX, .arg0 = 0x3ec),       \
	      E_IN(2380, 101))
#define DOUBLE_WAKE                                               \
	E_WAKE(2300, 102, 101, NR_FUTEX, 0x420), E_IN(2310, 101), \
		E_OUT(2330, 101, .sys = NR_FUTEX, .arg0 = 0x3d0), \
		E_WAKE(2360, 102, 101, NR_FUTEX, 0x3d0)
#define TWO_WAKES                                                       \
	E_WAKE(2295, 102, 101, NR_FUTEX, 0x420),                        \
		E_OUT(2296, 102, .sys = NR_NANOSLEEP), E_IN(2310, 101), \
		E_OUT(2330, 101, .sys = NR_FUTEX, .arg0 = 0x420),       \
		E_IRQ(2350, 0, 102), E_IN(2350, 102),                   \
		E_WAKE(2360, 102, 101, NR_FUTEX, 0x420)

/* A slow upload: the reader is woken three times as its bytes come (at
 * 1000, 1300 and 1600 us) and waits for a CPU each time (20, 40 and
 * 30 us). */
#define SLOW_UPLOAD                                                            \
	STEPS(E_IN(0, 101),                                                    \
	      E_OUT(10, 101, .sys = NR_RECVFROM, .arg0 = 5, .mode = S_IFSOCK), \
	      E_SOFTIRQ(1000, UNTRACED, 101), E_IN(1020, 101),                 \
	      E_OUT(1030, 101, .sys = NR_RECVFROM, .arg0 = 5,                  \
		    .mode = S_IFSOCK),                                         \
	      E_SOFTIRQ(1300, UNTRACED, 101), E_IN(1340, 101),                 \
	      E_OUT(1350, 101, .sys = NR_RECVFROM, .arg0 = 5,                  \
		    .mode = S_IFSOCK),                                         \
	      E_SOFTIRQ(1600, UNTRACED, 101), E_IN(1630, 101))

/* The read-only call iterator; a call with calls nested in it comes as
 * the pieces around them, and the innermost names the time. */
struct call_list {
	struct tt_cp_call v[8];
	int n;
};

static int call_collect(const struct tt_cp_call *c, void *ctx)
{
	struct call_list *l = ctx;

	if (l->n < 8)
		l->v[l->n] = *c;
	l->n++;
	return 0;
}

static void check_calls(struct tt_critpath *cp)
{
	struct call_list l = { 0 };

	ASSERT_EQ(tt_critpath_calls(cp, 555, 0, UINT64_MAX, call_collect, &l),
		  -ENOENT, "calls of an unknown thread");
	ASSERT_OK(tt_critpath_calls(cp, 101, 1205 * US, 1450 * US, call_collect,
				    &l),
		  "calls");
	/* graph, launch, graph, launch ex, graph (pieces), memcpy; ioctl */
	if (ASSERT_EQ(l.n, 7, "calls")) {
		ASSERT_EQ(l.v[0].start, 1200 * US, "call 0 start");
		ASSERT_EQ(l.v[0].end, 1210 * US, "call 0 end");
		ASSERT_STREQ(l.v[0].name, "cuGraphLaunch", "call 0 name");
		ASSERT_EQ(l.v[0].cls, TT_CUDA_GRAPH, "call 0 class");
		ASSERT_EQ(l.v[0].kind, TT_CP_CALL_CUDA, "call 0 kind");
		ASSERT_EQ(l.v[1].start, 1210 * US, "call 1 start");
		ASSERT_EQ(l.v[1].end, 1220 * US, "call 1 end");
		ASSERT_STREQ(l.v[1].name, "cuLaunchKernel", "call 1 name");
		ASSERT_EQ(l.v[1].cls, TT_CUDA_LAUNCH, "call 1 class");
		ASSERT_EQ(l.v[2].start, 1220 * US, "call 2 start");
		ASSERT_EQ(l.v[2].end, 1230 * US, "call 2 end");
		ASSERT_STREQ(l.v[2].name, "cuGraphLaunch", "call 2 name");
		ASSERT_EQ(l.v[4].start, 1240 * US, "call 4 start");
		ASSERT_EQ(l.v[4].end, 1300 * US, "call 4 end");
		ASSERT_STREQ(l.v[5].name, "cuMemcpyDtoH_v2", "call 5 name");
		ASSERT_EQ(l.v[5].cls, TT_CUDA_SYNC, "call 5 class");
		ASSERT_EQ(l.v[6].kind, TT_CP_CALL_IOCTL, "call 6 kind");
		ASSERT_EQ(l.v[6].cmd, NV_RM_CONTROL, "call 6 cmd");
		ASSERT_EQ(l.v[6].start, 1250 * US, "call 6 start");
		ASSERT_STREQ(l.v[6].name, "NV_ESC_RM_CONTROL", "call 6 name");
	}
	memset(&l, 0, sizeof(l));
	ASSERT_OK(tt_critpath_calls(cp, 101, 1500 * US, UINT64_MAX,
				    call_collect, &l),
		  "calls from 1500 us");
	if (ASSERT_EQ(l.n, 1, "calls from 1500 us")) {
		ASSERT_STREQ(l.v[0].name, "cuda#999", "unknown call name");
		ASSERT_EQ(l.v[0].cls, 0, "unknown call class");
		ASSERT_EQ(l.v[0].ret, 700, "unknown call ret");
	}
}

/* File reads come after a thread's CUDA calls and ioctls: one that ends
 * at from is left out, one that ends after it is in. */
static void check_fileio_calls(struct tt_critpath *cp)
{
	struct call_list l = { 0 };

	ASSERT_OK(tt_critpath_calls(cp, 101, 1250 * US, 1500 * US, call_collect,
				    &l),
		  "calls");
	if (ASSERT_EQ(l.n, 2, "calls")) {
		ASSERT_EQ(l.v[0].kind, TT_CP_CALL_IOCTL, "call 0 kind");
		ASSERT_EQ(l.v[1].kind, TT_CP_CALL_FILEIO, "call 1 kind");
		ASSERT_EQ(l.v[1].start, 1300 * US, "call 1 start");
		ASSERT_EQ(l.v[1].end, 1400 * US, "call 1 end");
		ASSERT_EQ(l.v[1].cmd, NR_READ, "call 1 syscall");
		ASSERT_EQ(l.v[1].ret, 4096, "call 1 ret");
		ASSERT_STREQ(l.v[1].name, "read file", "call 1 name");
	}
	memset(&l, 0, sizeof(l));
	ASSERT_OK(tt_critpath_calls(cp, 101, 1400 * US, UINT64_MAX,
				    call_collect, &l),
		  "calls from 1400 us");
	ASSERT_EQ(l.n, 0, "calls from 1400 us");
}

/* X and A of build_busy_handoff, and Y read by the event loop at read */
#define HANDOFF_X_A                                               \
	RQ(1, 50, 100, 1520, 1560, 101, 111, .t_end = 5000 * US), \
		RQ(2, 1000, 1100, 2050, 2100, 101, 112, .t_end = 5000 * US)
#define HANDOFF_Y(read) RQ(3, 1340, read, 0, 0, 101, 0)
/* X as in HANDOFF_X_A; A written by its reader 101 (build_busy_handoff's
 * arg[1]), its headers at h us */
#define HEADERS_X_A(h)                                                      \
	RQ(1, 50, 100, 1520, 1560, 101, 111, .t_end = 5000 * US),           \
		RQ(2, 1000, 1100, 2050, 2100, 101, 101, .t_end = 5000 * US, \
		   .t_headers = (h)*US)
/* An event loop 101, a busy engine 102 preempted at 200 us, an I/O thread
 * 103 asleep; IO_HOP: the loop wakes it at t_, it runs, passes the message
 * on to 140 (the engine process's I/O thread) and sleeps again. */
#define LOOP_ENGINE_PREEMPTED                                                 \
	E_IN(0, 101), E_IN(0, 102),                                           \
	E_OUT(5, 103, .sys = NR_FUTEX, .arg0 = 0x30), E_PREEMPT(200, 102)
#define IO_HOP(t_)                                                            \
	E_WAKE(t_, 101, 103, NR_WRITE, 6), E_IN((t_) + 5, 103),               \
	E_WAKE((t_) + 7, 103, 140, NR_WRITE, 7),                              \
	E_OUT((t_) + 10, 103, .sys = NR_FUTEX, .arg0 = 0x30)
/* Loop 101 reads request 2 at 650 us and wakes I/O thread 103 at 700,
 * which answers it; engine 102 runs again at 900 and writes request 1's
 * token to 101 at 1500 */
#define LOOP_READS_ON                                                 \
	IO_HOP(700), E_IN(900, 102),                                  \
		E_OUT(1000, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
		E_IN(1090, 103), E_WAKE(1100, 103, 101, NR_WRITE, 7), \
		E_OUT(1105, 103, .sys = NR_FUTEX, .arg0 = 0x30),      \
		E_IN(1110, 101),                                      \
		E_OUT(1200, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
		E_WAKE(1500, 102, 101, NR_WRITE, 9), E_IN(1505, 101)
#define LONG_PROMPT 200000
#define LOOP_READS_ON_RQS \
	RQS(RQ(1, 50, 100, 1520, 1530, 101, 101), RQ(2, 600, 650, 0, 0, 101, 0))
/* ... request 1 a long prompt (200 KB) loop 101 read at 100 us */
#define POLLED_RQ1 RQ(1, 50, 100, 1520, 1530, 101, 101, .bytes_in = LONG_PROMPT)
/* ... and request 2 in by 60 us, its connection's use (...) */
#define POLLED_READS_RQS(...) \
	RQS(POLLED_RQ1, RQ(2, 60, 650, 0, 0, 101, 0, __VA_ARGS__))
/* ... with rq3 read in request 1's batch */
#define POLLED_READS_3_RQS(rq3, ...) \
	RQS(POLLED_RQ1, rq3, RQ(2, 60, 650, 0, 0, 101, 0, __VA_ARGS__))
/* A test_fallbacks case of POLLED_READS_RQS, request 2 its connection's
 * first, after POLLED_STEPS of the steps given: request 1 let go at enq us */
#define POLLED_NEW_CONN(name_, enq, ...)                                      \
	{                                                                     \
		SC("test_fallbacks", name_),                                  \
		.steps = POLLED_STEPS(__VA_ARGS__),                           \
		POLLED_READS_RQS(.conn_reused = false),                       \
		.want = WANT_DISPATCH(1, 900, enq, RESUME),                   \
	}
/* LOOP_READS_ON in a CPython process, after the steps given */
#define POLLED_STEPS(...)                                            \
	STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), LOOP_ENGINE_PREEMPTED, \
	      ##__VA_ARGS__, LOOP_READS_ON)
/* Loop 101 lets its request go at 300 us (blocks); engine e, its GIL at
 * 0x7000 in its process, preempted at 200 us, runs at 500 and hands the
 * token through that GIL to thread o at 1400 us, which writes to 101 */
#define ENGINE_BEHIND_GIL_AT(e, o, p)                                         \
	E_RTLOCK(0, e, 0x6f00, 0x7100), E_IN(0, 101), E_IN(0, e),             \
		E_OUT(5, o, .sys = NR_FUTEX, .arg0 = 0x7000),                 \
		E_PREEMPT(p, e),                                              \
		E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),             \
		E_IN(500, e), E_WAKE(1400, e, o, NR_FUTEX, 0x7000),           \
		E_OUT(1402, e, .sys = NR_FUTEX, .arg0 = 0x20), E_IN(1405, o), \
		E_WAKE(1500, o, 101, NR_WRITE, 9), E_IN(1505, 101)
#define ENGINE_BEHIND_GIL(e, o) ENGINE_BEHIND_GIL_AT(e, o, 200)
/* loop_turns' end: the loop blocks at 520 us, the engine runs at 600 and
 * hands the second request's token back at 1500 us, the I/O thread the
 * first's at 2500 */
#define LOOP_TURNS_TAIL                                                       \
	E_OUT(520, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(600, 102),     \
		E_WAKE(1500, 102, 101, NR_WRITE, 9), E_IN(1505, 101),         \
		E_IN(2490, 103), E_WAKE(2500, 103, 101, NR_WRITE, 6)
/* two requests loop 101 reads, the second answered first */
#define LOOP_TWO_RQS                                                          \
	RQS(RQ(1, 50, 100, 2000, 2010, 101, 101),                             \
	    RQ(2, 120, 150, 1520, 1530, 101, 101))
/* LOOP_TWO_RQS with the first's body read from 100 to 200 us */
#define LONG_BODY_RQS                                                         \
	RQS(RQ(1, 50, 200, 2000, 2010, 101, 101, .t_first_read = 100 * US),   \
	    RQ(2, 120, 150, 1520, 1530, 101, 101))
/* engine 102 runs at t_ us, hands the second's token to 101 at 1500 */
#define ENGINE_ANSWERS(t_)                                                    \
	E_IN(t_, 102), E_WAKE(1500, 102, 101, NR_WRITE, 9), E_IN(1505, 101)
/* thread from runs at t_ us, writes to thread to and waits again */
#define RELAY_ON(t_, from, to)                                                \
	E_IN(t_, from), E_WAKE((t_) + 5, from, to, NR_WRITE, 8),              \
		E_OUT((t_) + 6, from, .sys = NR_FUTEX, .arg0 = 0x50)
/* loop_turns' requests; the second handed on at enq us, resumed at 600 */
#define LOOP_TURNS_RQ_WANT(enq)                                               \
	LOOP_TWO_RQS, .want = WANTS({ 2,                                            \
				NULL,                                         \
				{ R(complete, true), R_T(t_dispatch, 600),    \
				  R_T(t_enqueue, enq),                        \
				  R_STAGE(TT_ST_QUEUE, 600 - (enq)),          \
				  R(dispatch, TT_CP_DISP_RESUME) } })
/* LOOP_TWO_RQS with headers sent by the loop at h1 us (0: none) and h2 us,
 * the second request let go at enq us */
#define LOOP_TURNS_HEADERS(h1, h2, enq)                                       \
	RQS(RQ(1, 50, 100, 2000, 2010, 101, 101, .t_headers = (h1) * US),     \
	    RQ(2, 120, 150, 1520, 1530, 101, 101, .t_headers = (h2) * US)),   \
		.want = WANTS({ 2,                                            \
				NULL,                                         \
				{ R(complete, true), R_T(t_dispatch, 600),    \
				  R_T(t_enqueue, enq),                        \
				  R(dispatch, TT_CP_DISP_RESUME) } })
/* The busy engine 102 preempted at 1400 and 1450 us, its hand-offs to X
 * (1500 us) and A (2000 us) seen; reader 101 blocks at 1300 us */
#define PREEMPTED_ENGINE                                                      \
	E_IN(0, 101), E_IN(0, 102), E_IN(1, 111),                             \
		E_OUT(2, 111, .sys = NR_FUTEX, .arg0 = 111), E_IN(1, 112),    \
		E_OUT(2, 112, .sys = NR_FUTEX, .arg0 = 112),                  \
		E_OUT(1300, 101, .sys = NR_FUTEX, .arg0 = 0x90),              \
		E_PREEMPT(1400, 102), E_PREEMPT(1450, 102),                   \
		E_WAKE(1500, 102, 111, NR_FUTEX, 111), E_IN(1505, 111),       \
		E_OUT(1530, 111, .sys = NR_FUTEX, .arg0 = 111),               \
		E_WAKE(2000, 102, 112, NR_FUTEX, 112), E_IN(2010, 112)
/* A (request 2) complete, dispatched at disp us by rule, queued from enq
 * us for q us; HANDOFF_A_WANT by the hand-off rule */
#define A_WANT(rule, disp, enq, q)                                   \
	WANTS({ 2,                                                   \
		NULL,                                                \
		{ R(complete, true), R(dispatch, TT_CP_DISP_##rule), \
		  R_T(t_dispatch, disp), R_T(t_enqueue, enq),        \
		  R_STAGE(TT_ST_QUEUE, q) } })
#define HANDOFF_A_WANT(disp, enq, q) A_WANT(HANDOFF, disp, enq, q)
/* 121, asleep on word 0x600, woken by reader 101 at 1150 us: it wakes
 * 112 and sleeps again */
#define POOL_WAKE_121                                                         \
	E_IN(0, 121), E_OUT(5, 121, .sys = NR_FUTEX, .arg0 = 0x600),          \
		E_WAKE(1150, 101, 121, NR_FUTEX, 0x600), E_IN(1155, 121),      \
		E_WAKE(1160, 121, 112, NR_FUTEX, 112),                         \
		E_OUT(1162, 121, .sys = NR_FUTEX, .arg0 = 0x600),              \
		E_IN(1165, 112), E_OUT(1170, 112, .sys = NR_FUTEX, .arg0 = 112)
/* build_busy_handoff's case name_ with more steps: A handed on at enq us,
 * dispatched at 1500 */
#define BUSY_HANDOFF_CASE(name_, enq, ...)                                    \
	{ SC("test_handoff_enqueue", name_), .build = build_busy_handoff,     \
	  .arg = { false }, .steps = STEPS(__VA_ARGS__), RQS(HANDOFF_X_A),     \
	  .want = HANDOFF_A_WANT(1500, enq, 1500 - (enq)) }
/* build_busy_handoff's reader 101 writing A, its block at 1300 us left
 * out: it waits for the GIL (0x7200) at 1270, released by 113 at 1280,
 * and for A's tokens from blk us; A handed on at enq us */
#define GIL_ALONE_CASE(name_, blk, enq)                                       \
	GIL_READER_CASE(name_, blk, enq, true, HEADERS_X_A(0))
/* ... with the requests given, A's writer 101 when writes (else 112) */
#define GIL_READER_CASE(name_, blk, enq, writes, ...)                         \
	{ SC("test_handoff_enqueue", name_), .build = build_busy_handoff,     \
	  .arg = { true, writes },                                            \
	  .steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 113),      \
			 E_OUT(1270, 101, .sys = NR_FUTEX, .arg0 = 0x7200),   \
			 E_WAKE(1280, 113, 101, NR_FUTEX, 0x7200),            \
			 E_IN(1285, 101),                                     \
			 E_OUT(blk, 101, .sys = NR_FUTEX, .arg0 = 0x90)),     \
	  RQS(__VA_ARGS__), .want = HANDOFF_A_WANT(1500, enq, 1500 - (enq)) }
/* ... with 122 and 123 asleep on 0x600 too: a pool */
#define POOL_OF_3                                                             \
	E_IN(0, 122), E_IN(0, 123),                                           \
		E_OUT(6, 122, .sys = NR_FUTEX, .arg0 = 0x600),                 \
		E_OUT(7, 123, .sys = NR_FUTEX, .arg0 = 0x600), POOL_WAKE_121
/* A handed on at its send at 1200 us, dispatched at the hand-off to X */
#define SENT_A_WANT HANDOFF_A_WANT(1500, 1200, 300)
/* reader 101 running, engine 102 and its relay 103 asleep */
#define RELAY_ASLEEP                                                          \
	E_IN(0, 101), E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x40),           \
		E_OUT(6, 103, .sys = NR_FUTEX, .arg0 = 0x41)
/* request rq_ complete, dispatched at disp us by rule, queued from enq */
#define WANT_DISPATCH(rq_, disp, enq, rule)                                   \
	WANTS({ rq_,                                                          \
		NULL,                                                         \
		{ R(complete, true), R_T(t_dispatch, disp),                   \
		  R_T(t_enqueue, enq), R(dispatch, TT_CP_DISP_##rule) } })
/* test_data_wake's I/O thread 202 with inputs of two kinds; it runs as
 * the steps after 203's write at 1500 us say */
/* clang-format off */
#define IO_THREAD_KINDS(name_, ...)                                           \
	{                                                                     \
		SC("test_data_wake", name_),                                  \
		.steps = STEPS(                                               \
			E_IN(0, 101), E_IN(0, 201), E_IN(0, 202),             \
			E_IN(0, 203),                                         \
			E_OUT(10, 201, .sys = NR_FUTEX, .arg0 = 0x70),        \
			E_OUT(20, 202, .sys = NR_EPOLL_WAIT, .arg0 = 7),      \
			E_WAKE(200, 101, 201, NR_FUTEX, 0x70),                \
			E_IN(205, 201),                                       \
			E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),     \
			E_DATA_K(1000, 201, 202, EVENTFD),                    \
			E_WAKE(1000, 201, 202, NR_WRITE, 6),                  \
			E_OUT(1010, 201, .sys = NR_FUTEX, .arg0 = 0x70),      \
			E_DATA_K(1500, 203, 202, UNIX), __VA_ARGS__,          \
			E_DREAD_K(2005, 202, EVENTFD),                        \
			E_DATA_K(2010, 202, 101, UNIX),                       \
			E_WAKE(2010, 202, 101, NR_SENDMSG, 0xb),              \
			E_IN(2015, 101), E_DREAD_K(2016, 101, UNIX),          \
			E_DREAD_K(2030, 202, UNIX),                           \
			E_OUT(2040, 202, .sys = NR_EPOLL_WAIT, .arg0 = 7)),   \
		RQS(RQ(1, 50, 100, 2100, 2110, 101, 101)),                    \
		.want = WANT_DISPATCH(1, 205, 200, PICKUP),                   \
	}
/* clang-format on */
/* the loop 101 wakes thread tgt at 1420 us, which passes it on to 140
 * at 2995 us and wakes then at 3000 */
#define LOOP_WAKE(tgt, then)                                                  \
	E_WAKE(1420, 101, tgt, NR_FUTEX, 0x5000 + (tgt)), E_IN(2990, tgt),    \
	E_WAKE(2995, tgt, 140, NR_WRITE, 7),                                  \
	E_WAKE(3000, tgt, then, NR_FUTEX, 0x5100 + (tgt))
/* A (request 2) handed on at enq us, queued q us until 1500 */
#define LOOP_A_WANT(enq, q)                                                   \
	WANTS({ 2,                                                            \
		NULL,                                                         \
		{ R_T(t_enqueue, enq), R_T(t_dispatch, 1500),                 \
		  R_STAGE(TT_ST_QUEUE, q) } })
/* A behind the blocking reader: queued from its block at 1300 us */
static const struct rq_want handoff_blocking_want[] = {
	{
		2,
		STAGES([TT_ST_BACKLOG] = 100, [TT_ST_CPU] = 150 + 540,
		       [TT_ST_RUNQUEUE] = 60, [TT_ST_QUEUE] = 200,
		       [TT_ST_NET_OUT] = 50),
		{ R(complete, true), R(dispatch, TT_CP_DISP_HANDOFF),
		  R_T(t_dispatch, 1500), R_T(t_enqueue, 1300) },
		{ SEG(1225, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE, "runqueue",
		      1200, 50),
		  SEG(1275, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu", 1250, 50),
		  SEG(1400, 0, TT_CP_PHASE, TT_ST_QUEUE, "queued", 1300, 200),
		  SEG(1600, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu", 1500,
		      500) },
	},
	{ 0 },
};

/* BLOCKING_SYNC with the calls seen, whether the device is said or not */
static const struct rq_want sync_calls_want[] = {
	{
		1,
		STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 140, [TT_ST_GPU] = 350,
		       [TT_ST_RUNQUEUE] = 10, [TT_ST_NET_OUT] = 50),
		{ R(complete, true), R(dispatch, TT_CP_DISP_READ),
		  R_T(t_token, 1600) },
		{ SEG(1300, 101, TT_CP_BLOCKED, TT_ST_GPU,
		      "sync cuStreamSynchronize", 1210, 330),
		  SEG(1545, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE, "runqueue",
		      1540, 10),
		  SEG(1555, 101, TT_CP_RUNNING, TT_ST_GPU,
		      "sync cuStreamSynchronize", 1550, 10) },
	},
	{ 0 },
};

/* ---- the scenarios, by the group their case line says ---- */

/* test_pickup_producer_work's engine loop in the reader's thread (vLLM
 * V0): loop 101 reads X at 100 us and hands X's step to worker 102 at
 * 250 (futex 0x300, the executor's queue); it reads A at 500 (woken at
 * 450), tokenizes and puts it where its engine task polls until 1500,
 * sends A's headers then (A's t_headers: h) and waits in epoll at 1600;
 * at 2000 the worker's result wakes it (the self-pipe: after, the steps
 * of res_); it writes X's token at 2050, hands the next step (A's) to
 * 102 at 2100, which computes until 3000 and wakes it with A's token,
 * written at 3050 */
/* clang-format off */
/* the loop's steps up to its wait at 1600 us */
#define ENGINE_LOOP_READ                                                      \
	E_IN(0, 101), E_IN(0, 102),                                           \
	E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x300),                       \
	E_WAKE(250, 101, 102, NR_FUTEX, 0x300), E_IN(255, 102),               \
	E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                     \
	E_SOFTIRQ(450, UNTRACED, 101), E_IN(460, 101),                        \
	E_OUT(1600, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3)
/* the worker's token for A at 3000 us, which the loop writes at 3050 */
#define ENGINE_LOOP_TOKEN                                                     \
	E_DATA(3000, 102, 101, NR_WRITE, 6),                                  \
	E_WAKE(3000, 102, 101, NR_WRITE, 6), E_IN(3005, 101)
/* the loop 101 puts a step on worker 102's queue at t_ us and waits for
 * the GIL, which 102 hands it and waits for in turn; 102 runs from t_+25 */
#define PUT_GIL_BACK(t_)                                                      \
	E_WAKE(t_, 101, 102, NR_FUTEX, 0x300),                                \
	E_OUT((t_) + 2, 101, .sys = NR_FUTEX, .arg0 = 0x7210),                \
	E_IN((t_) + 5, 102), E_WAKE((t_) + 8, 102, 101, NR_FUTEX, 0x7210),    \
	E_OUT((t_) + 10, 102, .sys = NR_FUTEX, .arg0 = 0x7220),               \
	E_IN((t_) + 12, 101), E_WAKE((t_) + 18, 101, 102, NR_FUTEX, 0x7220),  \
	E_IN((t_) + 25, 102)
#define ENGINE_LOOP_RQS(h)                                                    \
	RQS(RQ(1, 50, 100, 2050, 2060, 101, 101, .t_end = 5000 * US),         \
	    RQ(2, 400, 500, 3050, 3060, 101, 101, .t_end = 5000 * US,         \
	       .t_headers = (h) * US))
#define ENGINE_LOOP(name_, h, res_, ...)                                      \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			ENGINE_LOOP_READ,                                     \
			UNPAREN res_,                                         \
			E_IN(2005, 101),                                      \
			E_OUT(2010, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
			E_WAKE(2100, 101, 102, NR_FUTEX, 0x300),              \
			E_IN(2105, 102),                                      \
			E_OUT(2200, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			ENGINE_LOOP_TOKEN),                                   \
		ENGINE_LOOP_RQS(h),                                           \
		.want = WANTS({ 2, NULL, { R(complete, true),                 \
					   R(dispatch, TT_CP_DISP_PICKUP),    \
					   __VA_ARGS__ } }),                  \
	}
/* clang-format on */
/*
 * ENGINE_LOOP with B and C read right after A (510, 520 us), as Starlette
 * reads an epoll batch before any handler runs; the loop runs from 520 to
 * its headers (A's at ha_ us, B's hb_, C's hc_) without a wait or a
 * wake (EXTRA adds some; LOOP_NAMED, none) till it waits in epoll at 1600.
 * B's writer is bw_, the first request's first token written at f1_ us.
 * ENGINE_LOOP_BATCH adds requests MORE.
 */
#define LOOP_NAMED (E_COMM(1, 101, "loop"))
/* ENGINE_LOOP_READ's loop, its polls recorded: one that returned nothing
 * at 20 us, the batch's at 470, one at p_ us */
#define LOOP_POLLS(p_)                                                        \
	E_COMM(1, 101, "loop"), E_POLL_NONE(20, 101), E_POLL(470, 101),       \
		E_POLL(p_, 101)
/* ... running CPython */
#define TURN_POLLS(p_) LOOP_POLLS(p_), E_RTLOCK(0, 101, 0x7200, 0x7300)
/* ENGINE_LOOP_TURN's EXTRA: the self-pipe written at 505 us, after the
 * batch's first read, and read at 535, after the steps given */
#define PIPE_AT_POLL(...) \
	(E_DATA_K(505, 102, 101, UNIX), __VA_ARGS__, E_DREAD_K(535, 101, UNIX))
/* the loop wakes thread 104 (blocked at 5 us, again at 1300) at w_ us */
#define LOOP_WOKE(w_)                                                         \
	(E_OUT(5, 104, .sys = NR_FUTEX, .arg0 = 0x70),                        \
	 E_WAKE(w_, 101, 104, NR_FUTEX, 0x70), E_IN((w_) + 2, 104),           \
	 E_OUT(1300, 104, .sys = NR_FUTEX, .arg0 = 0x70))
/* clang-format off */
/* ENGINE_LOOP's loop without its wait at 1600 us: thread r_, running from
 * 0, waits on word w_ at 810; the loop wakes it at 1700 and waits in epoll
 * at 1800. EXTRA adds steps, MORE requests */
#define LOOP_STEP_AT_1700(name_, r_, w_, EXTRA, MORE, ...)                    \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			E_IN(0, 101), E_IN(0, r_),                            \
			E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),     \
			E_SOFTIRQ(450, UNTRACED, 101), E_IN(460, 101),        \
			E_OUT(810, r_, .sys = NR_FUTEX, .arg0 = (w_)),        \
			E_WAKE(1700, 101, r_, NR_FUTEX, (w_)),                \
			E_IN(1705, r_), UNPAREN EXTRA,                        \
			E_OUT(1800, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			ENGINE_LOOP_TOKEN),                                   \
		RQS(RQ(1, 50, 100, 1600, 1610, 101, 101, .t_end = 5000 * US), \
		    RQ(2, 400, 500, 3050, 3060, 101, 101, .t_end = 5000 * US, \
		       .t_headers = 1500 * US),                               \
		    UNPAREN MORE),                                            \
		.want = WANTS({ 2, NULL, { R(complete, true),                 \
					   R(dispatch, TT_CP_DISP_PICKUP),    \
					   __VA_ARGS__ } }),                  \
	}
/* ... r_ handing the loop a result at 800 us (the self-pipe) */
#define LOOP_RESULT_EARLY(name_, r_, w_, EXTRA, ...)                          \
	LOOP_STEP_AT_1700(name_, r_, w_,                                      \
			  (E_DATA(800, r_, 101, NR_WRITE, 6),                 \
			   E_WAKE(800, r_, 101, NR_WRITE, 6), UNPAREN EXTRA), \
			  (), __VA_ARGS__)
/* ... the loop waiting in epoll from 1510 us to 1545, then reading B (3) at
 * 1550, whose headers go at 1600 */
#define LOOP_READ_LATER(name_, r_, w_, EXTRA, ...)                            \
	LOOP_STEP_AT_1700(name_, r_, w_,                                      \
			  (E_OUT(1510, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), \
			   E_SOFTIRQ(1540, UNTRACED, 101), E_IN(1545, 101),   \
			   UNPAREN EXTRA),                                    \
			  (RQ(3, 1530, 1550, 3100, 3110, 101, 101,            \
			      .t_end = 5000 * US, .t_headers = 1600 * US)),   \
			  __VA_ARGS__)
/* a relay, 104, passing the loop's step to the worker at 1715 us */
#define LOOP_RELAY                                                            \
	E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x300),                       \
		E_WAKE(1715, 104, 102, NR_FUTEX, 0x300),                      \
		E_OUT(1718, 104, .sys = NR_FUTEX, .arg0 = 0x70),              \
		E_IN(1720, 102)
#define ENGINE_LOOP_BATCH(name_, ha_, hb_, hc_, bw_, f1_, EXTRA, MORE, ...)   \
	ENGINE_LOOP_BATCH_C(name_, ha_, hb_, hc_, bw_, f1_, 520, 0, EXTRA,    \
			    MORE, __VA_ARGS__)
/* ... its third request C, on a connection that served before, read from
 * fc_ (0: at once) to rc_ us (B a long prompt) */
#define ENGINE_LOOP_BATCH_C(name_, ha_, hb_, hc_, bw_, f1_, rc_, fc_, EXTRA,  \
			    MORE, ...)                                        \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			ENGINE_LOOP_READ, UNPAREN WORKER_RESULT,              \
			UNPAREN EXTRA, E_IN(2005, 101),                       \
			E_OUT(2010, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
			E_WAKE(2100, 101, 102, NR_FUTEX, 0x300),              \
			E_IN(2105, 102),                                      \
			E_OUT(2200, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			ENGINE_LOOP_TOKEN),                                   \
		RQS(RQ(1, 50, 100, f1_, (f1_) + 10, 101, 101,                 \
		       .t_end = 5000 * US),                                   \
		    RQ(2, 400, 500, 3050, 3060, 101, 101, .t_end = 5000 * US, \
		       .t_headers = (ha_) * US),                              \
		    RQ(3, 410, 510, 3100, 3110, 101, bw_, .t_end = 5000 * US, \
		       .t_headers = (hb_) * US, .bytes_in = LONG_PROMPT),     \
		    RQ(4, 420, rc_, 3150, 3160, 101, 101, .t_end = 5000 * US, \
		       .t_headers = (hc_) * US, .t_first_read = (fc_) * US,   \
		       .conn_reused = true),                                  \
		    UNPAREN MORE),                                            \
		.want = WANTS({ 2, NULL, { R(complete, true),                 \
					   R(dispatch, TT_CP_DISP_PICKUP),    \
					   R_T(t_dispatch, 2100),             \
					   __VA_ARGS__ } }),                  \
	}
#define ENGINE_LOOP_SHARE(name_, ha_, hb_, hc_, bw_, f1_, EXTRA, ...)         \
	ENGINE_LOOP_BATCH(name_, ha_, hb_, hc_, bw_, f1_, EXTRA, (),          \
			  __VA_ARGS__)
/* ENGINE_LOOP_SHARE without headers before the first tokens (MLC's
 * handlers await the engine's first output before they answer) */
#define ENGINE_LOOP_TURN(name_, f1_, EXTRA, ...)                              \
	ENGINE_LOOP_BATCH(name_, 0, 0, 0, 101, f1_, EXTRA, (), __VA_ARGS__)
/* clang-format on */
/*
 * test_double_wake_shared_writer's loop_gil_holder: A's headers at h_ us,
 * B read at rb_ (X done at 1600 when B comes after 2500), the tokens
 * handed to the loop by o_ (the output thread 103, or the executor 102
 * itself); EXTRA adds events (LOOP_GIL_NONE: none)
 */
#define LOOP_GIL_NONE (E_COMM(1, 102, "executor"))
/* clang-format off */
#define LOOP_GIL_HOLDER(name_, h_, rb_, o_, EXTRA, ...)                       \
	{                                                                     \
		SC("test_double_wake_shared_writer", name_),                  \
		.steps = STEPS(                                               \
			E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 102),       \
			E_IN(0, 101), E_IN(0, 103), UNPAREN EXTRA,            \
			E_OUT(5, 103, .sys = NR_FUTEX, .arg0 = 0x500),        \
			E_OUT(1150, 101, .sys = NR_FUTEX, .arg0 = 0x420),     \
			E_WAKE(1500, 102, 103, NR_FUTEX, 0x500),              \
			E_IN(1502, 103),                                      \
			E_WAKE(1505, o_, 101, NR_FUTEX, 0x420),               \
			E_OUT(1507, 103, .sys = NR_FUTEX, .arg0 = 0x500),     \
			E_IN(1510, 101),                                      \
			E_OUT(1800, 102, .sys = NR_FUTEX, .arg0 = 0x7210),    \
			E_WAKE(2500, 101, 102, NR_FUTEX, 0x7210),             \
			E_IN(2505, 102),                                      \
			E_OUT(2550, 101, .sys = NR_FUTEX, .arg0 = 0x420),     \
			E_WAKE(2700, 102, 103, NR_FUTEX, 0x500),              \
			E_IN(2702, 103),                                      \
			E_WAKE(2705, o_, 101, NR_FUTEX, 0x420),               \
			E_OUT(2707, 103, .sys = NR_FUTEX, .arg0 = 0x500),     \
			E_IN(2710, 101)),                                     \
		RQS(RQ(1, 50, 100, 1520, 1560, 101, 101,                      \
		       .t_end = ((rb_) > 2500 ? 1600 : 5000) * US),           \
		    RQ(2, 1000, 1100, 2750, 2800, 101, 101,                   \
		       .t_end = 5000 * US, .t_headers = (h_) * US),           \
		    RQ(3, (rb_) - 50, rb_, 4000, 4050, 101, 101,              \
		       .t_end = 5000 * US)),                                  \
		.want = WANTS({ 2, NULL,                                      \
				{ R(complete, true), __VA_ARGS__ } }),        \
	}
/* clang-format on */
/*
 * A, B and C read by loop 101 as in ENGINE_LOOP_SHARE, their headers at
 * 1420-1450 us; the loop's put wakes consumer 102 (blocked again at 260)
 * at w_, which waits for a CPU till 1500, then takes them up and hands
 * the tokens back at 3000: B_WANT and A_WANT say B's and A's figures
 * (SHARE_PICKUP: B's t_enqueue is its share, 1110)
 */
#define SHARE_B_WANT                                                          \
	({ 2, NULL,                                                           \
	   { R(dispatch, TT_CP_DISP_PICKUP), R_T(t_dispatch, 1500),           \
	     R(enqueue, TT_CP_ENQ_SHARE), R_T(t_enqueue, 1110) } })
/* clang-format off */
#define SHARE_PICKUP_WANT(name_, w_, B_WANT, A_WANT)                          \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			ENGINE_LOOP_READ,                                     \
			E_OUT(260, 102, .sys = NR_FUTEX, .arg0 = 0x300),      \
			E_WAKE(w_, 101, 102, NR_FUTEX, 0x300),                \
			E_IN(1500, 102), ENGINE_LOOP_TOKEN,                   \
			E_OUT(3010, 102, .sys = NR_FUTEX, .arg0 = 0x300)),    \
		RQS(RQ(2, 400, 500, 3050, 3060, 101, 101, .t_end = 5000 * US, \
		       .t_headers = 1420 * US),                               \
		    RQ(3, 410, 510, 3100, 3110, 101, 101, .t_end = 5000 * US, \
		       .t_headers = 1435 * US),                               \
		    RQ(4, 420, 520, 3150, 3160, 101, 101, .t_end = 5000 * US, \
		       .t_headers = 1450 * US)),                              \
		.want = WANTS(UNPAREN B_WANT, UNPAREN A_WANT),                 \
	}
#define SHARE_PICKUP(name_, w_, A_WANT)                                       \
	SHARE_PICKUP_WANT(name_, w_, SHARE_B_WANT, A_WANT)
/* clang-format on */
/* LOOP_CALLEE: loop 101 reads A at 1100 us and hands the step to worker
 * 102 at 1500, which runs from 3500, answers at 5500 and waits at w_;
 * LOOP_CALLEE_WITH: the worker's steps from 3500 to w_ (its answer) are
 * given */
#define LOOP_ANSWER                                                           \
	(E_DATA(5500, 102, 101, NR_WRITE, 6),                                 \
	 E_WAKE(5500, 102, 101, NR_WRITE, 6))
#define LOOP_CALLEE(name_, w_, ...)                                           \
	LOOP_CALLEE_WITH(name_, w_, LOOP_ANSWER, __VA_ARGS__)
#define LOOP_CALLEE_WITH(name_, w_, worker_, ...)                             \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			E_IN(0, 101), E_IN(0, 102),                           \
			E_OUT(20, 102, .sys = NR_FUTEX, .arg0 = 0x300),       \
			E_WAKE(1500, 101, 102, NR_FUTEX, 0x300),              \
			E_OUT(1510, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_IN(3500, 102), UNPAREN worker_,                     \
			E_OUT(w_, 102, .sys = NR_FUTEX, .arg0 = 0x300),       \
			E_IN(5505, 101), E_DREAD(5520, 101)),                 \
		RQS(RQ(1, 1000, 1100, 5600, 5610, 101, 101)),                 \
		.want = WANTS({ 1, NULL,                                      \
				{ R(complete, true), __VA_ARGS__ } }),        \
	}

/* An event loop (101) that read rq1, then rq3, and sent their hops 2
 * and 4 in that order: hop 2's first token woke its epoll wait, hop 4's
 * came in while it ran */
#define LOOP_HOP_STEPS                                                        \
	STEPS(E_IN(0, 101), E_IN(5, 301), E_OUT(50, 301, SOCK_WAIT),          \
	      E_IN(6, 303), E_OUT(60, 303, SOCK_WAIT),                        \
	      E_SOFTIRQ(210, 101, 301), E_IN(212, 301),                       \
	      E_SOFTIRQ(225, 101, 303), E_IN(227, 303),                       \
	      E_OUT(235, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3, .anon = true), \
	      E_SOFTIRQ(1310, 301, 101), E_IN(1315, 101),                     \
	      E_OUT(1320, 301, SOCK_WAIT), E_OUT(1350, 303, SOCK_WAIT))
#define LOOP_HOP_RQS                                                          \
	RQ(1, 90, 100, 1400, 1405, 101, 101),                                 \
		RQ(2, 205, 215, 1300, 1305, 301, 301, .hop_sender_tid = 101), \
		RQ(3, 140, 150, 1360, 1365, 101, 101),                        \
		RQ(4, 220, 230, 1340, 1345, 303, 303, .hop_sender_tid = 101)

/* POOL_CALL: pool thread 101 waits at t_ + 10 us, the poller wakes it at
 * t_ + 1150; it starts generate thread g_ at t_ + 2150 and waits for its
 * token, which comes at t_ + 12150 */
#define POOL_CALL(t_, g_)                                                     \
	E_OUT((t_) + 10, 101, .sys = NR_FUTEX, .arg0 = 0x600),                \
		E_WAKE((t_) + 1150, 103, 101, NR_FUTEX, 0x600),               \
		E_IN((t_) + 1155, 101), E_WAKE_NEW((t_) + 2150, 101, g_, 435), \
		E_IN((t_) + 2155, g_),                                        \
		E_OUT((t_) + 2160, 101, .sys = NR_FUTEX, .arg0 = 0x700),      \
		E_WAKE((t_) + 12150, g_, 101, NR_FUTEX, 0x700),               \
		E_IN((t_) + 12155, 101)

/* GO_BG_READ: the connection's goroutine h_ answers its last request up
 * to 990 us and is preempted at 1000; background goroutine r_ reads A at
 * 1100 and exits; h_ runs again at 1200, takes A from the buffer (no
 * wake), tokenizes and sends it on a channel at 2150 to the idle engine
 * e_, which runs at 2155 and hands h_ the token at 12150 */
#define GO_BG_READ(r_, h_, e_)                                                \
	E_IN(0, r_), E_IN(0, h_), E_IN(0, e_),                                \
		E_OUT(20, e_, .sys = -1), E_PREEMPT(1000, h_),                \
		E_OUT(1160, r_, .sys = -1), E_IN(1200, h_),                   \
		E_CHAN(2150, h_, SEND, 0xc0, 0), E_WAKE(2150, h_, e_, -1, 0), \
		E_IN(2155, e_), E_OUT(2160, h_, .sys = -1),                   \
		E_WAKE(12150, e_, h_, -1, 0), E_IN(12155, h_)

/* A, read by r_, and the connection's last request, read by its own
 * background reader (r_ + 3): both written by h_ */
#define GO_BG_RQS(r_, h_)                                                     \
	RQ(1, 1000, 1100, 12200, 12210, r_, h_),                              \
		RQ(2, 100, 150, 700, 710, (r_) + 3, h_, .t_end = 990 * US)
/* A taken up by h_: handed on at 2150 us, dispatched at the engine's run */
#define GO_BG_WANT                                                            \
	WANTS({ 1, NULL,                                                      \
		{ R(complete, true), R_T(t_enqueue, 2150),                    \
		  R_T(t_dispatch, 2155) } })
/* GO_BG_WAKE: the same, the connection's goroutine h_ parked at 1000 us
 * (waiting for the background read), woken by r_ at 1150 */
#define GO_BG_WAKE(r_, h_, e_)                                                \
	E_IN(0, r_), E_IN(0, h_), E_IN(0, e_),                                \
		E_OUT(20, e_, .sys = -1), E_OUT(1000, h_, .sys = -1),         \
		E_WAKE(1150, r_, h_, -1, 0), E_OUT(1160, r_, .sys = -1),      \
		E_IN(1200, h_), E_CHAN(2150, h_, SEND, 0xc0, 0),              \
		E_WAKE(2150, h_, e_, -1, 0), E_IN(2155, e_),                  \
		E_OUT(2160, h_, .sys = -1), E_WAKE(12150, e_, h_, -1, 0),     \
		E_IN(12155, h_)

/* GO_H2_WRITER: Go's HTTP/2 server, its frame reader r_ reading A at 1100
 * us and handing it to the idle engine e_ on a channel at 2150; g w_,
 * preempted at 1000 writing another stream's frame, runs at 1200 and exits
 * at 1250; the engine starts a goroutine on w_ anew at 12150 to write A's
 * token (writeFrameAsync: one per frame) */
#define GO_H2_WRITER(r_, w_, e_)                                              \
	E_IN(0, r_), E_IN(0, w_), E_IN(0, e_), E_OUT(20, e_, .sys = -1),      \
		E_PREEMPT(1000, w_), E_IN(1200, w_),                          \
		E_OUT(1250, w_, .sys = -1, .go_exit = true),                  \
		E_CHAN(2150, r_, SEND, 0xc0, 0), E_WAKE(2150, r_, e_, -1, 0), \
		E_IN(2155, e_), E_OUT(2160, r_, .sys = -1),                   \
		E_WAKE(12150, e_, w_, -1, 0), E_IN(12155, w_)

/*
 * POLLER_LOOP: gRPC's poller 103 (never blocked) reads call X at 100 us
 * and A at 1100, each time writing the loop 101 a notice (150, 1150),
 * which the loop reads (170, 1160); X's handler hands the step to worker
 * 102 at 500, whose result comes at 2500; the loop's next step at 2700
 * ends at 4705. ASK_ runs between A's notice and its handler (1230-2230,
 * then the loop waits in epoll): the loop's ask of the poller, its wait
 * and the answer.
 */
#define POLLER_ASK                                                            \
	(E_DATA(1200, 101, 103, NR_WRITE, 7),                                 \
	 E_OUT(1205, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                   \
	 E_DATA(1220, 103, 101, NR_WRITE, 6),                                 \
	 E_WAKE(1220, 103, 101, NR_WRITE, 6))
#define POLLER_LOOP(name_, ask_, ...)                                         \
	{                                                                     \
		SC("test_pickup_producer_work", name_),                       \
		.steps = STEPS(                                               \
			E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),             \
			E_OUT(10, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),      \
			E_OUT(20, 102, .sys = NR_FUTEX, .arg0 = 0x300),       \
			E_DATA(150, 103, 101, NR_WRITE, 6),                   \
			E_WAKE(150, 103, 101, NR_WRITE, 6), E_IN(155, 101),   \
			E_DREAD(170, 101),                                    \
			E_WAKE(500, 101, 102, NR_FUTEX, 0x300),               \
			E_IN(505, 102),                                       \
			E_OUT(510, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),     \
			E_DATA(1150, 103, 101, NR_WRITE, 6),                  \
			E_WAKE(1150, 103, 101, NR_WRITE, 6), E_IN(1155, 101), \
			E_DREAD(1160, 101), UNPAREN ask_, E_IN(1225, 101),    \
			E_DREAD(1230, 101),                                   \
			E_OUT(2230, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_DATA(2500, 102, 101, NR_WRITE, 6),                  \
			E_WAKE(2500, 102, 101, NR_WRITE, 6),                  \
			E_OUT(2505, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
			E_IN(2510, 101), E_DREAD(2515, 101),                  \
			E_WAKE(2700, 101, 102, NR_FUTEX, 0x300),              \
			E_IN(2705, 102),                                      \
			E_OUT(2710, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_DATA(4705, 102, 101, NR_WRITE, 6),                  \
			E_WAKE(4705, 102, 101, NR_WRITE, 6),                  \
			E_OUT(4710, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
			E_IN(4715, 101), E_DREAD(4720, 101)),                 \
		RQS(RQ(1, 50, 100, 2600, 2610, 103, 101),                     \
		    RQ(2, 1000, 1100, 4800, 4810, 103, 101)),                 \
		.want = WANTS({ 2, NULL,                                      \
				{ R(complete, true), __VA_ARGS__ } }),        \
	}

/* the worker's result through the loop's self-pipe at 2000 us */
#define WORKER_RESULT                         \
	(E_DATA(2000, 102, 101, NR_WRITE, 6), \
	 E_WAKE(2000, 102, 101, NR_WRITE, 6))

/* relay 102 (process 100) waits on its word of a semaphore the engine 201
 * (process 200) posts through 0x5f00a010, its own address of the page:
 * woken at t_ us, running from 5 later, blocked 10 before */
#define SEM_POST(t_, word)                                                    \
	E_OUT((t_) - 10, 102, .sys = NR_FUTEX, .arg0 = (word)),               \
		E_WAKE(t_, 201, 102, NR_FUTEX, 0x5f00a010),                   \
		E_IN((t_) + 5, 102)
/* test_cross_process's shared semaphore: ten posts before any request
 * make the relay's word a lock by its count; X (reader and writer 103)
 * is read at 150 us and blocks on its inbox 0x330; the engine's step
 * ends at 1000 (X's first token through the relay); A (101) is read at
 * 1200, put where the busy engine polls (no wake) and waits on 0x310 at
 * 1500; the next step ends at 2000 (X's second token), the one after
 * at 3000: A's first token, X's third */
/* clang-format off */
#define SHM_RELAY(name_, word, ...)                                           \
	{                                                                     \
		SC("test_cross_process", name_),                             \
		.steps = STEPS(                                               \
			E_IN(0, 101), E_IN(0, 103), E_IN(0, 201), E_IN(0, 102), \
			SEM_POST(20, word), SEM_POST(30, word),               \
			SEM_POST(40, word), SEM_POST(50, word),               \
			SEM_POST(60, word), SEM_POST(70, word),               \
			SEM_POST(80, word), SEM_POST(90, word),               \
			SEM_POST(100, word), SEM_POST(110, word),             \
			E_OUT(200, 103, .sys = NR_FUTEX, .arg0 = 0x330),      \
			SEM_POST(1000, word),                                 \
			E_WAKE(1010, 102, 103, NR_FUTEX, 0x330),              \
			E_IN(1015, 103),                                      \
			E_OUT(1060, 103, .sys = NR_FUTEX, .arg0 = 0x330),     \
			E_OUT(1500, 101, .sys = NR_FUTEX, .arg0 = 0x310),     \
			SEM_POST(2000, word),                                 \
			E_WAKE(2010, 102, 103, NR_FUTEX, 0x330),              \
			E_IN(2015, 103),                                      \
			E_OUT(2060, 103, .sys = NR_FUTEX, .arg0 = 0x330),     \
			SEM_POST(3000, word),                                 \
			E_WAKE(3010, 102, 101, NR_FUTEX, 0x310),              \
			E_WAKE(3012, 102, 103, NR_FUTEX, 0x330),              \
			E_OUT(3020, 102, .sys = NR_FUTEX, .arg0 = (word)),    \
			E_IN(3025, 101), E_IN(3030, 103)),                    \
		RQS(RQ(1, 100, 150, 1050, 1055, 103, 103,                     \
		       .t_end = 4000 * US),                                   \
		    RQ(2, 1100, 1200, 3050, 3060, 101, 101,                   \
		       .t_end = 4000 * US)),                                  \
		.want = WANTS({ 2, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */

/* test_cross_process's caller and callee (TGI's router and model shard):
 * batcher 102 (the router, process 100, in epoll on the shard's socket
 * and its readers' eventfd) calls shard 201 (process 200) over a unix
 * socket. A (101) is read at 100 and handed on at 150; 102's call at 200
 * wakes 201, which computes till its reply at 1000 and then does AFTER
 * (preempted, or blocked on its socket); 102 hands A a token at 1010. B
 * (103, read at 1100) is handed on by HANDOFF; 102's call at 1200 comes
 * to 201 as CALL; 201 runs at 3000, its read of the call waking 102's
 * epoll (room on the socket, no hand-off), and answers at 4000: B's
 * first token, handed to 103 at 4010. */
/* clang-format off */
#define CALLER_STEPS(AFTER, HANDOFF, CALL)                                    \
	E_IN(0, 101), E_IN(0, 102), E_IN(0, 201), E_IN(0, 103),               \
	E_OUT(10, 201, .sys = NR_RECVFROM, .arg0 = 3, .mode = S_IFSOCK),      \
	E_OUT(20, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),                      \
	E_WAKE(150, 101, 102, NR_WRITE, 7), E_IN(155, 102),                   \
	E_OUT(160, 101, .sys = NR_FUTEX, .arg0 = 0x20),                       \
	E_DATA(200, 102, 201, NR_WRITE, 6),                                   \
	E_WAKE(200, 102, 201, NR_WRITE, 6), E_IN(205, 201),                   \
	E_OUT(210, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),                     \
	E_WAKE(1000, 201, 102, NR_SENDMSG, 3), UNPAREN AFTER,                 \
	E_IN(1005, 102), E_WAKE(1010, 102, 101, NR_FUTEX, 0x20),              \
	E_IN(1015, 101), E_OUT(1020, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),   \
	E_OUT(1070, 101, .sys = NR_FUTEX, .arg0 = 0x20), UNPAREN HANDOFF,     \
	E_OUT(1210, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4), UNPAREN CALL,      \
	E_IN(3000, 201)
/* A and B, B's first token at 4050 */
#define CALLER_RQS                                                            \
	RQS(RQ(1, 50, 100, 1050, 1060, 101, 101, .t_end = 5000 * US),         \
	    RQ(2, 1050, 1100, 4050, 4060, 103, 103, .t_end = 5000 * US))
#define CALLEE(name_, AFTER, HANDOFF, CALL, ...)                              \
	{                                                                     \
		SC("test_cross_process", name_),                             \
		.steps = STEPS(                                               \
			CALLER_STEPS(AFTER, HANDOFF, CALL),                   \
			E_WAKE(3005, 201, 102, NR_RECVFROM, 3), E_IN(3007, 102), \
			E_OUT(3008, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),    \
			E_WAKE(4000, 201, 102, NR_SENDMSG, 3),                \
			E_OUT(4010, 201, .sys = NR_RECVFROM, .arg0 = 3,       \
			      .mode = S_IFSOCK),                              \
			E_IN(4005, 102), E_WAKE(4010, 102, 103, NR_FUTEX, 0x30), \
			E_OUT(4020, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),    \
			E_IN(4015, 103)),                                     \
		CALLER_RQS,                                                   \
		.want = WANTS({ 2, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */
/* B's reader hands it to 102 at 1150 */
#define B_HANDED                                                              \
	(E_WAKE(1150, 103, 102, NR_WRITE, 7), E_IN(1155, 102),                \
	 E_OUT(1160, 103, .sys = NR_FUTEX, .arg0 = 0x30))
/* the shard, preempted after its reply, is runnable when the call comes */
#define SHARD_PREEMPTED (E_PREEMPT(1002, 201))
/* the shard blocks on its socket after its reply */
#define SHARD_WAITS                                                           \
	(E_OUT(1002, 201, .sys = NR_RECVFROM, .arg0 = 3, .mode = S_IFSOCK))

/*
 * test_cross_process's router on tokio's work-stealing pool (TGI's, docs/
 * design.md §4.4 "A helper that answers the pool"): workers 101 and 102
 * (named NAME_), shard 201, which answered a call at 60 us. Worker 101
 * reads A at 100, sends its headers at 105 and asks helper H (110, a
 * blocking thread, named HNAME_) to validate it (110); HELPER: the helper's
 * steps after, as HELPER_ANSWERS: it tokenizes till 1115 and answers by
 * waking worker CALLER on the driver, which took A's task and calls the
 * shard at 1200 (A's prefill); the shard answers at 3000 and CALLER wakes
 * WRITER, parked, to steal the handler's task, which writes A's token at
 * 3020. RQS_: more requests, each after a comma.
 */
#define HELPER_ANSWERS(CALLER)                                                \
	(E_WAKE(1115, 110, CALLER, NR_WRITE, 9), E_IN(1118, CALLER),          \
	 E_OUT(1120, 110, .sys = NR_FUTEX, .arg0 = 0x60))
/* the helper waits for its next job from 600 to 700 us, then answers */
#define HELPER_SILENT(CALLER)                                                 \
	(E_OUT(600, 110, .sys = NR_FUTEX, .arg0 = 0x60),                      \
	 E_IRQ(700, UNTRACED, 110), E_IN(702, 110),                           \
	 UNPAREN HELPER_ANSWERS(CALLER))
#define TOKIO "tokio-runtime-w"
/* TOKIO_ROUTER's A dispatched by its call at 1200 us, queued from enq */
#define TOKIO_CALL(name_, NAME_, H, HNAME_, CALLER, WRITER, HELPER, enq)      \
	TOKIO_ROUTER(name_, NAME_, H, HNAME_, CALLER, WRITER, HELPER, (),     \
		     R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),     \
		     R_T(t_enqueue, enq))
/* the block of worker tid_ once idle: the driver's (epoll) for the caller */
#define TOKIO_PARK(t_, tid_, CALLER)                                          \
	E_OUT(t_, tid_,                                                       \
	      .sys = (tid_) == (CALLER) ? NR_EPOLL_WAIT : NR_FUTEX,           \
	      .arg0 = (tid_) == (CALLER) ? 4 : 0x61)
/* clang-format off */
#define TOKIO_ROUTER(name_, NAME_, H, HNAME_, CALLER, WRITER, HELPER, RQS_,   \
		     ...)                                                     \
	{                                                                     \
		SC("test_cross_process", name_),                             \
		.steps = STEPS(                                               \
			E_COMM(0, 101, NAME_), E_COMM(0, 102, NAME_),         \
			E_COMM(0, H, HNAME_), E_IN(0, 101), E_IN(0, 102),     \
			E_IN(0, H), E_IN(0, 201),                             \
			E_OUT(5, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),       \
			E_OUT(12, H, .sys = NR_FUTEX, .arg0 = 0x60),          \
			E_OUT(30, 101, .sys = NR_EPOLL_WAIT, .arg0 = 4),      \
			E_WAKE(60, 201, 102, NR_SENDMSG, 3), E_IN(61, 102),   \
			E_OUT(62, 201, .sys = NR_RECVFROM, .arg0 = 3,         \
			      .mode = S_IFSOCK),                              \
			TOKIO_PARK(70, 102, CALLER),                          \
			E_SOFTIRQ(95, UNTRACED, 101), E_IN(97, 101),          \
			E_WAKE(110, 101, H, NR_FUTEX, 0x60), E_IN(115, H),    \
			TOKIO_PARK(120, 101, CALLER),                         \
			UNPAREN HELPER, E_DATA(1200, CALLER, 201, NR_WRITE, 6),               \
			E_WAKE(1200, CALLER, 201, NR_WRITE, 6), E_IN(1205, 201), \
			E_OUT(1210, CALLER, .sys = NR_EPOLL_WAIT, .arg0 = 4), \
			E_WAKE(3000, 201, CALLER, NR_SENDMSG, 3),             \
			E_OUT(3002, 201, .sys = NR_RECVFROM, .arg0 = 3,       \
			      .mode = S_IFSOCK),                              \
			E_IN(3005, CALLER),                                   \
			E_WAKE(3010, CALLER, WRITER, NR_FUTEX, 0x61),         \
			E_OUT(3012, CALLER, .sys = NR_EPOLL_WAIT, .arg0 = 4), \
			E_IN(3015, WRITER)),                                  \
		RQS(RQ(1, 50, 100, 3020, 3030, 101, WRITER,                   \
		       .t_end = 5000 * US, .t_headers = 105 * US)             \
			    UNPAREN RQS_),                                    \
		.want = WANTS({ 1, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */

/* B, C, then A queued behind iteration 2 (build_busy_engine; tokio_: its
 * threads with tokio's names) */
/* clang-format off */
#define BUSY_ENGINE(name_, tokio_)                                            \
	{                                                                     \
		SC("test_busy_engine", name_),                               \
		.build = build_busy_engine, .arg = { tokio_ },                \
		RQS(RQ(1, 50, 100, 915, 950, 101, 112, .t_end = 5000 * US),   \
		    RQ(2, 1000, 1050, 1920, 1960, 101, 113,                   \
		       .t_end = 5000 * US),                                   \
		    RQ(3, 2200, 2300, 3920, 4000, 101, 111,                   \
		       .t_end = 5000 * US)),                                  \
		.want = WANTS(                                                \
			{ 1,                                                  \
			  STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 795,      \
				 [TT_ST_RUNQUEUE] = 20,                       \
				 [TT_ST_NET_OUT] = 35),                       \
			  { R(complete, true), R_T(t_dispatch, 110),          \
			    R(dispatch, TT_CP_DISP_PICKUP),                   \
			    R_T(t_token, 900) } },                            \
			{ 2,                                                  \
			  STAGES([TT_ST_BACKLOG] = 50, [TT_ST_CPU] = 860,     \
				 [TT_ST_RUNQUEUE] = 10,                       \
				 [TT_ST_NET_OUT] = 40),                       \
			  { R_T(t_dispatch, 1050),                            \
			    R(dispatch, TT_CP_DISP_READ) } },                 \
			/* queued from the reader's wake of the busy engine */ \
			{ 3,                                                  \
			  STAGES([TT_ST_BACKLOG] = 100, [TT_ST_QUEUE] = 595,  \
				 [TT_ST_CPU] = 1015, [TT_ST_RUNQUEUE] = 10,   \
				 [TT_ST_NET_OUT] = 80),                       \
			  { R(complete, true), R_T(t_dispatch, 2905),         \
			    R_T(t_enqueue, 2310),                             \
			    R(dispatch, TT_CP_DISP_HANDOFF),                  \
			    R_T(t_token, 3905) } }),                          \
	}
/* clang-format on */

/* test_cross_process's one-loop router (tools/scenarios' tgi-py): 102
 * reads B at 1100 and C at 1110, runs B's handler, whose append to the
 * queue wakes nobody, with EXTRA, and sends B's headers at 1150; its call
 * at 1200 reaches the preempted shard */
/* clang-format off */
#define LOOP_ROUTER(name_, EXTRA, ...)                                        \
	{                                                                     \
		SC("test_cross_process", name_),                             \
		.steps = STEPS(                                               \
			CALLER_STEPS(SHARD_PREEMPTED,                         \
				     (E_SOFTIRQ(1095, UNTRACED, 102),         \
				      E_IN(1097, 102), UNPAREN EXTRA),        \
				     (E_DATA(1200, 102, 201, NR_WRITE, 6))),  \
			E_WAKE(4000, 201, 102, NR_SENDMSG, 3),                \
			E_OUT(4010, 201, .sys = NR_RECVFROM, .arg0 = 3,       \
			      .mode = S_IFSOCK),                              \
			E_IN(4005, 102)),                                     \
		RQS(RQ(1, 50, 100, 1050, 1060, 101, 101, .t_end = 5000 * US), \
		    RQ(2, 1050, 1100, 4050, 4060, 102, 102,                   \
		       .t_end = 5000 * US, .t_headers = 1150 * US),           \
		    RQ(3, 1105, 1110, 0, 0, 102, 0)),                         \
		.want = WANTS({ 2, NULL, { R(complete, true),                 \
					   R(dispatch, TT_CP_DISP_CALL),      \
					   R_T(t_dispatch, 1200),             \
					   __VA_ARGS__ } }),                  \
	}
/* clang-format on */

/* test_cross_process's one-loop router with turns (tools/scenarios'
 * tgi-py): see loop_router_turns_after_headers; B's headers at hb_ us,
 * its t_enqueue want eb_ */
/* clang-format off */
#define LOOP_ROUTER_TURNS(name_, hb_, eb_)                                    \
	{                                                                     \
		SC("test_cross_process", name_),                             \
		.steps = STEPS(                                               \
			E_IN(0, 102), E_IN(0, 201),                           \
			E_OUT(20, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),      \
			E_WAKE(50, 201, 102, NR_SENDMSG, 3), E_IN(55, 102),   \
			E_OUT(60, 201, .sys = NR_RECVFROM, .arg0 = 3,         \
			      .mode = S_IFSOCK),                              \
			E_OUT(70, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),      \
			E_SOFTIRQ(1095, UNTRACED, 102), E_IN(1097, 102),      \
			E_DATA(1170, 102, 201, NR_WRITE, 6),                  \
			E_WAKE(1170, 102, 201, NR_WRITE, 6), E_IN(1175, 201), \
			E_DATA(1800, 201, 102, NR_SENDMSG, 3),                \
			E_OUT(1805, 201, .sys = NR_RECVFROM, .arg0 = 3,       \
			      .mode = S_IFSOCK),                              \
			E_DATA(1900, 102, 201, NR_WRITE, 6),                  \
			E_WAKE(1900, 102, 201, NR_WRITE, 6),                  \
			E_OUT(1910, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),    \
			E_IN(3000, 201),                                      \
			E_WAKE(4000, 201, 102, NR_SENDMSG, 3),                \
			E_OUT(4010, 201, .sys = NR_RECVFROM, .arg0 = 3,       \
			      .mode = S_IFSOCK),                              \
			E_IN(4005, 102)),                                     \
		RQS(RQ(2, 1050, 1100, 4050, 4060, 102, 102,                   \
		       .t_end = 5000 * US, .t_headers = (hb_) * US),          \
		    RQ(3, 1105, 1110, 0, 0, 102, 0),                          \
		    RQ(4, 1115, 1120, 4070, 4080, 102, 102,                   \
		       .t_end = 5000 * US, .t_headers = 1160 * US)),          \
		.want = WANTS({ 1, NULL,                                      \
				{ R(dispatch, TT_CP_DISP_CALL),               \
				  R_T(t_dispatch, 1900),                      \
				  R_T(t_enqueue, eb_) } },                    \
			      { 3, NULL,                                      \
				{ R(dispatch, TT_CP_DISP_CALL),               \
				  R_T(t_dispatch, 1900),                      \
				  R_T(t_enqueue, 1160) } }),                  \
	}
/* clang-format on */

/* request 1 dispatched by its marker at t_ us, and more fields */
#define MARKER_DISPATCHED(t_, ...)                                            \
	{ 1, NULL,                                                            \
	  { R(dispatch, TT_CP_DISP_MARKER), R_T(t_dispatch, t_),              \
	    __VA_ARGS__ } }
/* n markers, unbound of them unbound, none outside */
#define MARKS_UNBOUND(n, unbound)                                             \
	{ STAT(marks, n), STAT(marks_unbound, unbound),                       \
	  STAT(marks_outside, 0) }

/* Reader 101, in a CPython process (0x7200 the GIL), hands worker 102 a job
 * at 300 us (0x7100); 102 waits for the GIL from 320 until 101 lets it go
 * at 1000, and hands 101 the token at 2000 */
/* clang-format off */
#define LOCK_DETOUR_STEPS                                                     \
	E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 101),                       \
	E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x7100),                       \
	E_WAKE(300, 101, 102, NR_FUTEX, 0x7100), E_IN(310, 102),              \
	E_OUT(320, 102, .sys = NR_FUTEX, .arg0 = 0x7200),                     \
	E_WAKE(1000, 101, 102, NR_FUTEX, 0x7200),                             \
	E_OUT(1001, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(1005, 102),   \
	E_WAKE(2000, 102, 101, NR_WRITE, 9), E_IN(2005, 101)
/* clang-format on */

/* loop 101 marks ids 0xa and 0xb enqueued (Python ints); engine 202, in
 * another process, dispatches 0xb, then 0xa */
/* clang-format off */
#define LOOP_MARK_STEPS                                                       \
	E_MARK_VALUE(1200, 101, ENQUEUE, 0xa),                                \
	E_MARK_VALUE(1300, 101, ENQUEUE, 0xb),                                \
	E_MARK_VALUE(1500, 202, DISPATCH, 0xb),                               \
	E_MARK_VALUE(1700, 202, DISPATCH, 0xa)
/* clang-format on */

/* reader 101 hands to engine 102 through 0x7000 at 1200 us; the engine
 * wakes writer 103 through 0x8000 at 2000 us */
/* clang-format off */
#define FUTEX_PICKUP_STEPS                                                    \
	E_IN(0, 101), E_IN(10, 102),                                          \
	E_OUT(50, 102, .sys = NR_FUTEX, .arg0 = 0x7000),                      \
	E_IN(20, 103),                                                        \
	E_OUT(60, 103, .sys = NR_FUTEX, .arg0 = 0x8000),                      \
	E_WAKE(1200, 101, 102, NR_FUTEX, 0x7000),                             \
	E_OUT(1250, 101, .sys = NR_EPOLL_WAIT), E_IN(1230, 102),              \
	E_WAKE(2000, 102, 103, NR_FUTEX, 0x8000),                             \
	E_OUT(2010, 102, .sys = NR_FUTEX, .arg0 = 0x7000),                    \
	E_IN(2005, 103),                                                      \
	E_OUT(2200, 103, .sys = NR_FUTEX, .arg0 = 0x8000)
/* clang-format on */

/* Reader 101 wakes worker 104 (a pipe) at 1150 us; 104 wakes engine 103
 * (futex 0x7000) at 1200, which wakes 104 back (0x8000) at 1800 for the
 * token: 104 writes request 1, and serves no other request near it. */
/* clang-format off */
#define WORKER_PICKUP_STEPS WORKER_PICKUP_AT(1200, 1800)
/* the same with 104's wake of 103 at W us, 103's of 104 at TOK */
#define WORKER_PICKUP_AT(w, tok)                                              \
	E_IN(0, 101), E_IN(0, 103), E_IN(0, 104),                             \
	E_OUT(50, 103, .sys = NR_FUTEX, .arg0 = 0x7000),                      \
	E_OUT(60, 104, .sys = NR_READ, .arg0 = 8, .mode = S_IFIFO),           \
	E_WAKE(1150, 101, 104, NR_WRITE, 9), E_IN(1160, 104),                 \
	E_WAKE(w, 104, 103, NR_FUTEX, 0x7000), E_IN((w) + 10, 103),           \
	E_OUT((w) + 50, 104, .sys = NR_FUTEX, .arg0 = 0x8000),                \
	E_WAKE(tok, 103, 104, NR_FUTEX, 0x8000),                              \
	E_OUT((tok) + 20, 103, .sys = NR_FUTEX, .arg0 = 0x7000),              \
	E_IN((tok) + 5, 104)
/* test_lookahead's case NAME: WORKER_PICKUP_AT(1710, 4000), request 1
 * written at 4100 us and the request given: request 1 queued from ENQ us,
 * picked up at 1720 */
#define WORKER_HANDLER(name, enq, ...)                                        \
	WORKER_HANDLER_IN(name, enq, STEPS(WORKER_PICKUP_AT(1710, 4000)),     \
			  __VA_ARGS__)
/* the same with STEPS_ for the steps */
#define WORKER_HANDLER_IN(name, enq, steps_, ...)                             \
	{                                                                     \
		SC("test_lookahead", name),                                   \
		.steps = steps_,                                              \
		RQS(RQ(1, 1000, 1100, 4100, 4200, 101, 104,                   \
		       .t_end = 4300 * US),                                   \
		    __VA_ARGS__),                                             \
		.want = WANTS({ 1, NULL,                                      \
				{ R(dispatch, TT_CP_DISP_PICKUP),             \
				  R_T(t_enqueue, enq),                        \
				  R_T(t_dispatch, 1720) } }),                 \
	}
/* Loop 101 reads requests 1 and 2 in one poll (100, 110 us), then starts
 * a generate() thread for each in that order, waiting for its start: 105 at
 * 1200 (running at 1250, its start signalled at 1300), 106 at 1400 (1420,
 * 1450); it sends both headers (1500, 1510), asks pool thread 107 for
 * request 1's token at 1600, which 107 has (1650) */
/* clang-format off */
#define LOOP_SPAWNS                                                           \
	E_IN(0, 101), E_IN(0, 107),                                           \
	E_OUT(60, 107, .sys = NR_FUTEX, .arg0 = 0x8000),                      \
	E_FORK(1190, 101, 105, "python3"), E_WAKE_NEW(1200, 101, 105, 435),   \
	E_OUT(1210, 101, .sys = NR_FUTEX, .arg0 = 0x7000), E_IN(1250, 105),   \
	E_WAKE(1300, 105, 101, NR_FUTEX, 0x7000), E_IN(1305, 101),            \
	E_FORK(1390, 101, 106, "python3"), E_WAKE_NEW(1400, 101, 106, 435),   \
	E_OUT(1410, 101, .sys = NR_FUTEX, .arg0 = 0x7100), E_IN(1420, 106),   \
	E_WAKE(1450, 106, 101, NR_FUTEX, 0x7100), E_IN(1455, 101),            \
	E_WAKE(1600, 101, 107, NR_FUTEX, 0x8000),                             \
	E_OUT(1610, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(1612, 107),   \
	E_WAKE(1650, 107, 101, NR_WRITE, 6),                                  \
	E_OUT(1655, 107, .sys = NR_FUTEX, .arg0 = 0x8000), E_IN(1655, 101)
/* clang-format on */
/* test_lookahead's case NAME: LOOP_SPAWNS and the steps given, requests 1,
 * 2 and the (parenthesized) MORE, request ID picked up, queued from ENQ us,
 * taken up at DISP */
#define LOOP_SPAWNED(name, id, enq, disp, more, ...)                          \
	{                                                                     \
		SC("test_lookahead", name),                                   \
		.steps = STEPS(LOOP_SPAWNS, ##__VA_ARGS__),                   \
		LOOP_SPAWNS_RQS(1700, more),                                  \
		.want = WANTS({ id, NULL,                                     \
				{ R(dispatch, TT_CP_DISP_PICKUP),             \
				  R_T(t_enqueue, enq),                        \
				  R_T(t_dispatch, disp) } }),                 \
	}
/* test_lookahead's case NAME: LOOP_SPAWNS, 109 and 110 passing the model's
 * lock (0x9000) to each other before, the steps given, request 1's token
 * written at FW us: taken up at DISP by RULE */
#define LOOP_SPAWN_LOCK(name, fw, rule, disp, ...)                            \
	{                                                                     \
		SC("test_lookahead", name),                                   \
		.steps = STEPS(LOOP_SPAWNS, E_IN(0, 109), E_IN(0, 110),       \
			       E_FUTEX_PASS(20, 109, 110, 0x9000),            \
			       E_FUTEX_PASS(30, 110, 109, 0x9000),            \
			       __VA_ARGS__),                                  \
		LOOP_SPAWNS_RQS(fw, ()),                                      \
		.want = WANTS({ 1, NULL,                                      \
				{ R(dispatch, TT_CP_DISP_##rule),             \
				  R_T(t_enqueue, 1200),                       \
				  R_T(t_dispatch, disp) } }),                 \
	}
/* LOOP_SPAWNS' requests 1 (its token written at FW us) and 2, and the
 * (parenthesized) MORE */
#define LOOP_SPAWNS_RQS(fw, more)                                             \
	RQS(RQ(1, 50, 100, fw, (fw) + 10, 101, 101, .t_headers = 1500 * US,   \
	       .t_end = 3000 * US),                                           \
	    RQ(2, 60, 110, 2700, 2710, 101, 101, .t_headers = 1510 * US,      \
	       .t_end = 3000 * US) UNPAREN more)
/* WORKER_HANDLER_IN's case NAME with WORKER_PICKUP_AT(1710, 4000) and the
 * steps given, request 2 (104's) read 4.9 s later */
#define WORKER_HANDLER_ALSO(name, enq, ...)                                   \
	WORKER_HANDLER_IN(name, enq,                                          \
			  STEPS(WORKER_PICKUP_AT(1710, 4000), __VA_ARGS__),   \
			  WORKER_LATER_RQ)
/* WORKER_PICKUP_AT's reader 101 wakes the front's 201 (another process) at
 * 1105 us, waits, is woken by the front's data at 1135; 104 waits on 0xa000
 * from 1165 until the reader's wake at 1180 */
/* clang-format off */
#define HANDLER_FRONT_DATA                                                    \
	E_IN(0, 201), E_OUT(70, 201, .sys = NR_EPOLL_WAIT, .arg0 = 3),        \
	E_SOFTIRQ(1105, 101, 201), E_IN(1107, 201),                           \
	E_OUT(1110, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                    \
	E_SOFTIRQ(1135, 201, 101),                                            \
	E_OUT(1138, 201, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(1140, 101),   \
	E_OUT(1165, 104, .sys = NR_FUTEX, .arg0 = 0xa000),                    \
	E_WAKE(1180, 101, 104, NR_FUTEX, 0xa000), E_IN(1185, 104)
/* clang-format on */
#define WORKER_LATER_RQ                                                       \
	RQ(2, 4900000, 4900100, 4900900, 4901000, 101, 104,                   \
	   .t_end = 4901100 * US)
/* request 1, ended at 2.1 ms, and request 2 of worker 104 at start us */
#define WORKER_RQS(start)                                                     \
	RQS(RQ(1, 1000, 1100, 1900, 2000, 101, 104, .t_end = 2100 * US),      \
	    RQ(2, start, (start) + 100, (start) + 900, (start) + 1000, 101,   \
	       104, .t_end = ((start) + 1100) * US))
/* clang-format on */

/* The reader 101 hands request 1 on at 300 us to I/O thread 103, which
 * wakes engine 102 (futex 0x40) at 320; the engine hands the token back at
 * 1500: a pick-up through a relay, queued until the engine's wake. */
/* clang-format off */
#define RELAY_TAIL                                                            \
	E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(305, 103),     \
	E_WAKE(320, 103, 102, NR_FUTEX, 0x40),                                \
	E_OUT(322, 103, .sys = NR_FUTEX, .arg0 = 0x41), E_IN(330, 102),       \
	E_WAKE(1500, 102, 101, NR_WRITE, 9), E_IN(1505, 101)
#define RELAY_RQ_WANT                                                         \
	RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),                            \
	.want = WANTS({                                                       \
		1,                                                            \
		STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 200 + 1170 + 15,    \
		       [TT_ST_QUEUE] = 20, [TT_ST_RUNQUEUE] = 10 + 5,         \
		       [TT_ST_NET_OUT] = 10),                                 \
		{ R(complete, true), R_T(t_dispatch, 330),                    \
		  R_T(t_enqueue, 300), R(dispatch, TT_CP_DISP_PICKUP) },      \
	})
/* clang-format on */

/* from puts on to's queue q at t_ us, wakes to, then drops the GIL
 * (0x7200), which wakes to again: it runs at t_ + 25 */
/* clang-format off */
#define PUT_GIL(t_, from, to, q)                                              \
	E_WAKE(t_, from, to, NR_FUTEX, q), E_IN((t_) + 10, to),               \
	E_OUT((t_) + 15, to, .sys = NR_FUTEX, .arg0 = 0x7200),                \
	E_WAKE((t_) + 20, from, to, NR_FUTEX, 0x7200), E_IN((t_) + 25, to)
/* clang-format on */

/* Engine 102 puts a step's token on output thread 103's queue (0x50) at
 * t_ us, then drops the GIL (0x7200), waking 103 again; 103 hands the
 * token to reader 101 (0x60). */
/* clang-format off */
#define PUT_THEN_GIL(t_)                                                      \
	PUT_GIL(t_, 102, 103, 0x50),                                          \
	E_WAKE((t_) + 30, 103, 101, NR_FUTEX, 0x60),                          \
	E_OUT((t_) + 35, 103, .sys = NR_FUTEX, .arg0 = 0x50),                 \
	E_IN((t_) + 35, 101)
/* clang-format on */

/* test_fallbacks' case NAME: loop 101 starts worker 102 at 300 us, which
 * waits for the GIL (0x7200) from 320 to 1000; meanwhile the loop hands
 * worker 103 another request's job at 500, whose result comes back through
 * the loop's self-pipe at 700; TAIL from 1005, 102 running (HEAD before) */
/* clang-format off */
#define GIL_OF_LOOP(name, head, tail, ...)                                    \
	{                                                                     \
		SC("test_fallbacks", name),                                   \
		.steps = STEPS(                                               \
			E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 101),       \
			E_OUT(6, 103, .sys = NR_FUTEX, .arg0 = 0x7400),       \
			UNPAREN head, E_WAKE_NEW(300, 101, 102, 435),         \
			E_IN(310, 102),                                       \
			E_OUT(320, 102, .sys = NR_FUTEX, .arg0 = 0x7200),     \
			E_WAKE(500, 101, 103, NR_FUTEX, 0x7400),              \
			E_OUT(510, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),     \
			E_IN(515, 103), E_DATA(700, 103, 101, NR_WRITE, 6),   \
			E_WAKE(700, 103, 101, NR_WRITE, 6),                   \
			E_OUT(705, 103, .sys = NR_FUTEX, .arg0 = 0x7400),     \
			E_IN(710, 101), E_DREAD(712, 101),                    \
			E_WAKE(1000, 101, 102, NR_FUTEX, 0x7200),             \
			E_OUT(1001, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_IN(1005, 102), UNPAREN tail),                       \
		RQS(RQ(1, 50, 100, 2020, 2030, 101, 101),                     \
		    RQ(2, 400, 450, 3000, 3010, 101, 101)),                   \
		.want = WANTS({ 1, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */

/* test_lock_turn's threads: loop 101, workers 102 and 103; GIL 0x7000 */
/* workers 102 and 103 pass futex word w back and forth at t_ us */
#define WORD_PASS(t_, w)                                                      \
	E_OUT(t_, 103, .sys = NR_FUTEX, .arg0 = w),                           \
		E_WAKE((t_) + 2, 102, 103, NR_FUTEX, w), E_IN((t_) + 3, 103), \
		E_OUT((t_) + 4, 102, .sys = NR_FUTEX, .arg0 = w),             \
		E_WAKE((t_) + 6, 103, 102, NR_FUTEX, w), E_IN((t_) + 7, 102)
/* loop 101 and worker 103 pass word 0x500 back and forth at t_ us */
#define LOOP_PASS(t_)                                                         \
	E_OUT(t_, 103, .sys = NR_FUTEX, .arg0 = 0x500),                       \
		E_WAKE((t_) + 2, 101, 103, NR_FUTEX, 0x500),                  \
		E_IN((t_) + 3, 103),                                          \
		E_OUT((t_) + 4, 101, .sys = NR_FUTEX, .arg0 = 0x500),         \
		E_WAKE((t_) + 6, 103, 101, NR_FUTEX, 0x500), E_IN((t_) + 7, 101)
/* engine 102 waits on word 0x300 at t_ us, reader 101 wakes it 20 later */
#define WORD_WAIT_PUT(t_)                                                     \
	E_OUT(t_, 102, .sys = NR_FUTEX, .arg0 = 0x300),                       \
		E_WAKE((t_) + 20, 101, 102, NR_FUTEX, 0x300),                 \
		E_IN((t_) + 25, 102)
/* 101 wakes 102 through 0x300 at t_ us and blocks; 102 writes back at w */
#define PUT_RUN_WRITE(t_, w)                                                  \
	E_WAKE(t_, 101, 102, NR_FUTEX, 0x300), E_IN((t_) + 5, 102),           \
		E_OUT((t_) + 10, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),       \
		E_WAKE(w, 102, 101, NR_WRITE, 9), E_IN((w) + 5, 101)
#define MODEL_LOCK_HEAD                                                       \
	E_RTLOCK(0, 101, 0x6f00, 0x7100), E_IN(0, 101), E_IN(0, 102),         \
		E_IN(0, 103), WORD_PASS(10, 0x500), WORD_PASS(20, 0x500),     \
		WORD_PASS(30, 0x500)
#define MODEL_LOCK_STEPS MODEL_LOCK_HEAD, MODEL_LOCK_TAIL
#define MODEL_LOCK_TAIL                                                        \
	MODEL_LOCK_WAIT, E_WAKE(1500, 102, 101, NR_WRITE, 6), E_IN(1505, 101), \
		E_OUT(1520, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),             \
		MODEL_LOCK_TURN
#define MODEL_LOCK_WAIT                                                   \
	E_OUT(175, 102, .sys = NR_FUTEX, .arg0 = 0x300),                  \
		E_WAKE(180, 103, 102, NR_FUTEX, 0x300), E_IN(185, 102),   \
		E_OUT(190, 103, .sys = NR_FUTEX, .arg0 = 0x300),          \
		E_WAKE(1200, 101, 103, NR_FUTEX, 0x300), E_IN(1210, 103), \
		E_OUT(1220, 103, .sys = NR_FUTEX, .arg0 = 0x500),         \
		E_OUT(1250, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3)
#define MODEL_LOCK_TURN                                               \
	E_WAKE(3000, 102, 103, NR_FUTEX, 0x500), E_IN(3005, 103),     \
		E_OUT(3010, 103, .sys = NR_FUTEX, .arg0 = 0x7000),    \
		E_WAKE(3200, 102, 103, NR_FUTEX, 0x7000),             \
		E_OUT(3205, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
		E_IN(3210, 103), E_DATA(5000, 103, 101, NR_WRITE, 6), \
		E_WAKE(5000, 103, 101, NR_WRITE, 6)
/* test_lock_turn's wants: request 2 queued from the hand-off at 1200 us
 * to its turn at the lock, 3210 */
#define LOCK_TURN_WANT(...)                                        \
	WANTS({ 2,                                                 \
		NULL,                                              \
		{ R(complete, true), R(dispatch, TT_CP_DISP_LOCK), \
		  R_T(t_dispatch, 3210), R_T(t_enqueue, 1200),     \
		  __VA_ARGS__ } })
/* test_lock_turn's case NAME: MODEL_LOCK_STEPS with X's token relayed,
 * holder 102 waking 104 at 1500 us, which runs at RUN and wakes the loop
 * 25 us later */
/* clang-format off */
#define LOCK_RELAYED(name, run)                                               \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(                                               \
			MODEL_LOCK_HEAD, E_IN(100, 104), MODEL_LOCK_WAIT,     \
			E_OUT(1300, 104, .sys = NR_FUTEX, .arg0 = 0x900),     \
			E_WAKE(1500, 102, 104, NR_FUTEX, 0x900),              \
			E_IN(run, 104), E_WAKE((run) + 25, 104, 101, NR_WRITE, 6), \
			E_IN((run) + 30, 101),                                \
			E_OUT((run) + 35, 104, .sys = NR_FUTEX, .arg0 = 0x900), \
			E_OUT((run) + 40, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), \
			MODEL_LOCK_TURN),                                     \
		RQS(RQ(1, 200, 250, (run) + 33, (run) + 35, 101, 101,         \
		       .t_end = 6000 * US),                                   \
		    RQ(2, 1000, 1100, 5100, 5110, 101, 101,                   \
		       .t_end = 6000 * US)),                                  \
		.want = LOCK_TURN_WANT(),                                     \
	}
/* clang-format on */
/* loop 101 starts thread tid_ at t_ us and waits for the GIL it takes
 * first; tid_ then waits for the model lock 0x500 */
#define SPAWNED(t_, tid_)                                                     \
	E_WAKE_NEW(t_, 101, tid_, 435), E_IN((t_) + 5, tid_),                 \
		E_OUT((t_) + 6, 101, .sys = NR_FUTEX, .arg0 = 0x7000),        \
		E_WAKE((t_) + 15, tid_, 101, NR_FUTEX, 0x7000),               \
		E_IN((t_) + 17, 101),                                         \
		E_OUT((t_) + 20, tid_, .sys = NR_FUTEX, .arg0 = 0x500)
/* request id_ queued from its thread's start to its turn at the lock */
#define SPAWNED_WANT(id_, enq, disp)                                          \
	{ id_,                                                                \
	  NULL,                                                               \
	  { R(complete, true), R(dispatch, TT_CP_DISP_LOCK),                  \
	    R_T(t_enqueue, enq), R_T(t_dispatch, disp) } }
/* test_lock_turn's case NAME: grpc's pool thread 110, handed request 2's
 * call by poller 101, starts thread 106, hands it the GIL and waits; 106
 * waits for the model lock (the steps given after the others): request 2
 * queued from ENQ us */
#define HANDLER_STARTED(name, enq, ...)                                       \
	HANDLER_STARTED_RQS(name, enq, (), ##__VA_ARGS__)
/* the same with the requests RQS (parenthesized, each after a comma) */
#define HANDLER_STARTED_RQS(name, enq, rqs, ...)                              \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(MODEL_LOCK_HEAD, E_IN(0, 110),                 \
			E_OUT(50, 110, .sys = NR_FUTEX, .arg0 = 0x800),       \
			E_WAKE(1150, 101, 110, NR_FUTEX, 0x800),              \
			E_IN(1155, 110),                                      \
			E_OUT(1160, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_WAKE_NEW(1800, 110, 106, 435), E_IN(1805, 106),     \
			E_OUT(1806, 106, .sys = NR_FUTEX, .arg0 = 0x7000),    \
			E_WAKE(1809, 110, 106, NR_FUTEX, 0x7000),             \
			E_OUT(1810, 110, .sys = NR_FUTEX, .arg0 = 0x900),     \
			E_IN(1812, 106),                                      \
			E_OUT(1820, 106, .sys = NR_FUTEX, .arg0 = 0x500),     \
			E_WAKE(2500, 102, 101, NR_WRITE, 6), E_IN(2505, 101), \
			E_OUT(2520, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_WAKE(3000, 102, 106, NR_FUTEX, 0x500),              \
			E_OUT(3002, 102, .sys = NR_FUTEX, .arg0 = 0x600),     \
			E_IN(3005, 106),                                      \
			E_WAKE(3900, 106, 110, NR_FUTEX, 0x900),              \
			E_IN(3905, 110), ##__VA_ARGS__),                      \
		RQS(RQ(1, 200, 250, 2510, 2515, 101, 101,                     \
		       .t_end = 8000 * US),                                   \
		    RQ(2, 1000, 1100, 3910, 3915, 101, 110,                   \
		       .t_end = 8000 * US) UNPAREN rqs),                      \
		.want = WANTS(SPAWNED_WANT(2, enq, 3005)),                    \
	}
/* from releases the model lock to to at t_ us, which hands its token to
 * loop 101 900 us later */
#define LOCK_PASS(t_, from, to)                                               \
	E_WAKE(t_, from, to, NR_FUTEX, 0x500),                                \
		E_OUT((t_) + 2, from, .sys = NR_FUTEX, .arg0 = 0x600),        \
		E_IN((t_) + 5, to), E_DATA((t_) + 900, to, 101, NR_WRITE, 6), \
		E_WAKE((t_) + 900, to, 101, NR_WRITE, 6),                     \
		E_IN((t_) + 905, 101),                                        \
		E_OUT((t_) + 920, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3)
#define MODEL_LOCK_RQS                                                        \
	RQ(1, 200, 250, 1510, 1515, 101, 101, .t_end = 6000 * US),            \
		RQ(2, 1000, 1100, 5100, 5110, 101, 101, .t_end = 6000 * US)

/* llama-cpp-python's server (tools/scenarios' llamacpp-py): loop 101 reads
 * request 2 at 1100 us and hands worker 103 its lock.acquire() at 1200
 * (CALLER does, through 103's idle word CALLW); 103 waits for the model's
 * lock 0x500 from BLK while worker 104 computes request 1's last token
 * (650-2980) */
/* clang-format off */
#define LOOP_LOCK_CALL(caller, callw, blk)                                    \
	E_IN(0, 101), E_IN(0, 103), E_IN(0, 104),                             \
	E_OUT(100, 103, .sys = NR_FUTEX, .arg0 = callw),                      \
	E_OUT(500, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                     \
	E_DATA(590, 104, 101, NR_WRITE, 6),                                   \
	E_WAKE(590, 104, 101, NR_WRITE, 6), E_IN(595, 101),                   \
	E_OUT(610, 104, .sys = NR_FUTEX, .arg0 = 0x900),                      \
	E_WAKE(650, 101, 104, NR_FUTEX, 0x900), E_IN(655, 104),               \
	E_OUT(700, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                     \
	E_SOFTIRQ(1050, UNTRACED, 101), E_IN(1055, 101),                      \
	E_WAKE(1200, caller, 103, NR_FUTEX, callw), E_IN(1205, 103),          \
	E_OUT(blk, 103, .sys = NR_FUTEX, .arg0 = 0x500)
#define LOOP_LOCK_HEAD LOOP_LOCK_CALL(101, 0x800, 1225)
/* the loop runs from 2985 us (request 1's last token), then the steps
 * given, and, busy, hands 104 request 2's prefill at 4100 (its token back
 * at 14100) */
#define LOOP_LOCK_TAIL(...)                                                   \
	E_OUT(1250, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                    \
	E_DATA(2980, 104, 101, NR_WRITE, 6),                                  \
	E_WAKE(2980, 104, 101, NR_WRITE, 6), E_IN(2985, 101),                 \
	E_OUT(2990, 104, .sys = NR_FUTEX, .arg0 = 0x900), __VA_ARGS__,        \
	E_WAKE(4100, 101, 104, NR_FUTEX, 0x900), E_IN(4105, 104),             \
	E_OUT(4110, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                    \
	E_DATA(14100, 104, 101, NR_WRITE, 6),                                 \
	E_WAKE(14100, 104, 101, NR_WRITE, 6), E_IN(14105, 101)
/* the loop's release of the lock to 103 at 3000 us, 103's report at 3020 */
#define LOOP_LOCK_RELEASE                                                     \
	E_WAKE(3000, 101, 103, NR_FUTEX, 0x500), E_IN(3005, 103),             \
	E_OUT(3010, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                    \
	E_DATA(3020, 103, 101, NR_WRITE, 6),                                  \
	E_WAKE(3020, 103, 101, NR_WRITE, 6), E_IN(3025, 101),                 \
	E_OUT(3030, 103, .sys = NR_FUTEX, .arg0 = 0x800)
#define LOOP_LOCK_RQS(...) LOOP_LOCK_RQS_AT(3050, 1100), __VA_ARGS__
/* request 1 ends at END us, request 2 is read at READ */
#define LOOP_LOCK_RQS_AT(end, read)                                           \
	RQ(1, 200, 250, 600, 605, 101, 101, .t_end = (end) * US),             \
	RQ(2, 1000, read, 14110, 14115, 101, 101, .t_end = 20000 * US)
/* test_lock_turn's case NAME: LOOP_LOCK_HEAD, then the steps given (the
 * loop's release of the lock to 103); 104 computes on without a wait,
 * hands request 1's last chunk to the loop at 3900 and request 2's first
 * token at 14100 (the walk's boundary on 104 is its hand-off at 3900) */
#define LOOP_LOCK_RUN_ON(name, rule, disp, ...)                               \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(LOOP_LOCK_HEAD, __VA_ARGS__,                   \
			E_OUT(3040, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_DATA(3900, 104, 101, NR_WRITE, 6),                  \
			E_WAKE(3900, 104, 101, NR_WRITE, 6), E_IN(3905, 101), \
			E_OUT(3950, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_DATA(14100, 104, 101, NR_WRITE, 6),                 \
			E_WAKE(14100, 104, 101, NR_WRITE, 6),                 \
			E_IN(14105, 101)),                                    \
		RQS(LOOP_LOCK_RQS_AT(4000, 1100)),                            \
		.want = LOOP_LOCK_WANT(1250, rule, disp),                     \
	}
/* test_lock_turn's case NAME: LOOP_LOCK_CALL(CALLER, CALLW, BLK), the
 * loop's release at 3000 us, requests 1 and 2 as LOOP_LOCK_RQS_AT(END,
 * READ): no turn (the loop's step at 4100 is request 2's admission),
 * t_enqueue at ENQ */
#define LOOP_LOCK_NO_TURN(name, caller, callw, blk, end, read, enq)           \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(LOOP_LOCK_CALL(caller, callw, blk),            \
			       LOOP_LOCK_TAIL(LOOP_LOCK_RELEASE)),            \
		RQS(LOOP_LOCK_RQS_AT(end, read)),                             \
		.want = LOOP_LOCK_WANT(enq, TT_CP_DISP_PICKUP, 4100),         \
	}
/* request 2 queued from ENQ us (where the loop let it go: its wait at
 * 1250, or its hand-off to a worker that computed), dispatched by RULE at
 * DISP */
#define LOOP_LOCK_WANT(enq, rule, disp)                                       \
	WANTS({ 2, NULL, { R(complete, true), R(dispatch, rule),              \
			   R_T(t_enqueue, enq), R_T(t_dispatch, disp) } })
/* test_lock_turn's case NAME: the steps PRE, LOOP_LOCK_HEAD, the loop's
 * release at 3000 us; LOOP_LOCK_RQS with the requests given; request 2
 * dispatched by RULE at DISP */
#define LOOP_LOCK_RELEASED(name, pre, rule, disp, ...)                        \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(UNPAREN pre LOOP_LOCK_HEAD,                    \
			       LOOP_LOCK_TAIL(LOOP_LOCK_RELEASE)),            \
		RQS(LOOP_LOCK_RQS(__VA_ARGS__)),                              \
		.want = LOOP_LOCK_WANT(1250, rule, disp),                     \
	}
/* clang-format on */

/* test_lock_turn's case NAME: worker 103, preempted at 520 us, runs again
 * at RUN and waits for the GIL at 1655 until loop 101 lets it go at 1800 */
/* clang-format off */
#define GIL_FROM_READER(name, run, ...)                                       \
	{                                                                     \
		SC("test_lock_turn", name),                                   \
		.steps = STEPS(                                               \
			E_RTLOCK(0, 101, 0x6f00, 0x7100), E_IN(0, 101),       \
			E_IN(0, 103),                                         \
			E_OUT(400, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),     \
			E_DATA(500, 103, 101, NR_WRITE, 6),                   \
			E_WAKE(500, 103, 101, NR_WRITE, 6), E_IN(505, 101),   \
			E_PREEMPT(520, 103), E_IN(run, 103),                  \
			E_OUT(1655, 103, .sys = NR_FUTEX, .arg0 = 0x7000),    \
			E_WAKE(1800, 101, 103, NR_FUTEX, 0x7000),             \
			E_OUT(1810, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_IN(1815, 103), E_DATA(5000, 103, 101, NR_WRITE, 6), \
			E_WAKE(5000, 103, 101, NR_WRITE, 6), E_IN(5005, 101), \
			E_DREAD(5010, 101)),                                  \
		RQS(RQ(1, 200, 250, 510, 515, 101, 101, .t_end = 6000 * US),  \
		    RQ(2, 1000, 1100, 5100, 5110, 101, 101,                   \
		       .t_end = 6000 * US)),                                  \
		.want = WANTS({ 2, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */

/* test_storage_span's case NAME: handler 101 hands A to engine 102 at 1200
 * us, which reads (1225-1290 us, O_DIRECT), waits for the GIL at GIL_AT that
 * loop 105, woken by the network at 1250, holds until 1500, reads again
 * (1515-1710) and hands A's token at 2500; READ_LOOP_EXTRA steps before its
 * first read, READ_LOOP_GAP after it; READ_LOOP_FIRST that read's record;
 * READ_LOOP_HOLDER before A's hand-off (105 handing the engine work) */
/* clang-format off */
#define READ_LOOP(name, gil_at, ...)                                          \
	{                                                                     \
		SC("test_storage_span", name),                                \
		.steps = STEPS(                                               \
			E_IN(0, 105), E_IN(0, 102), E_IN(0, 101),             \
			E_RTLOCK(1, 101, 0x6f00, 0x7100),                     \
			E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x300),        \
			E_OUT(6, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),       \
			READ_LOOP_HOLDER                                      \
			E_WAKE(1200, 101, 102, NR_FUTEX, 0x300),              \
			E_OUT(1210, 101, .sys = NR_FUTEX, .arg0 = 0x101),     \
			READ_LOOP_EXTRA                                       \
			E_OUT(1230, 102, .sys = NR_PREAD64, .arg0 = 9,        \
			      .mode = S_IFREG, .iowait = true),               \
			E_IRQ(1250, 0, 105), E_IN(1255, 105),                 \
			E_IRQ(1280, 0, 102), E_IN(1285, 102),                 \
			READ_LOOP_FIRST                                       \
			READ_LOOP_GAP                                         \
			E_OUT(gil_at, 102, .sys = NR_FUTEX, .arg0 = 0x7000),  \
			E_WAKE(1500, 105, 102, NR_FUTEX, 0x7000),             \
			E_OUT(1505, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),    \
			E_IN(1510, 102),                                      \
			E_OUT(1520, 102, .sys = NR_PREAD64, .arg0 = 9,        \
			      .mode = S_IFREG, .iowait = true),               \
			E_IRQ(1700, 0, 102), E_IN(1705, 102),                 \
			E_FILEIO(1515, 1710, 102, NR_PREAD64, S_IFREG,        \
				 O_DIRECT_X86),                               \
			E_WAKE(2500, 102, 101, NR_FUTEX, 0x101),              \
			E_OUT(2510, 102, .sys = NR_FUTEX, .arg0 = 0x300),     \
			E_IN(2520, 101)),                                     \
		RQS(RQ(1, 1000, 1100, 2550, 2600, 101, 101,                   \
		       .t_end = 5000 * US) READ_LOOP_RQS),                    \
		.want = WANTS({ 1, NULL, { R(complete, true), __VA_ARGS__ } }), \
	}
/* clang-format on */
/* READ_LOOP's requests after A: none but where a case adds some */
#define READ_LOOP_RQS

/* test_pickup_producer_work's case NAME: reader 101, holding the GIL
 * (0x7200), wakes the idle engine 102 at 1400 us, which runs at 1410 and
 * waits for the GIL at 1420; the events after, then 102 wakes writer 103 at
 * 1600 us */
/* clang-format off */
#define PICKUP_THEN_GIL(name, disp, gil, ...)                                   \
	{                                                                     \
		SC("test_pickup_producer_work", name),                        \
		.steps = STEPS(                                               \
			E_RTLOCK(0, 101, 0x7100, 0x7300), E_IN(0, 101),       \
			E_IN(5, 102), E_OUT(10, 102, .sys = NR_FUTEX,         \
					    .arg0 = 0x70),                    \
			E_IN(6, 103), E_OUT(11, 103, .sys = NR_FUTEX,         \
					    .arg0 = 0x80),                    \
			E_WAKE(1400, 101, 102, NR_FUTEX, 0x70),               \
			E_IN(1410, 102),                                      \
			E_OUT(1420, 102, .sys = NR_FUTEX, .arg0 = 0x7200),    \
			__VA_ARGS__,                                          \
			E_WAKE(1600, 102, 103, NR_FUTEX, 0x80),               \
			E_OUT(1605, 102, .sys = NR_FUTEX, .arg0 = 0x70),      \
			E_IN(1610, 103)),                                     \
		RQS(RQ(1, 1000, 1100, 1700, 1750, 101, 103)),                 \
		.want = WANTS({ 1, NULL,                                      \
				{ R(complete, true),                          \
				  R(dispatch, TT_CP_DISP_PICKUP),             \
				  R_T(t_enqueue, 1400), R_T(t_dispatch, disp), \
				  R_T(gil_ns, gil) } }),                      \
	}
/* clang-format on */

/* x hands the loop 101 a token at t_ us (a write to its self-pipe) and
 * blocks on word w; 101 runs 5 us later */
#define HAND_BACK(t_, x, w)                                                   \
	E_WAKE(t_, x, 101, NR_WRITE, 9),                                      \
		E_OUT((t_) + 2, x, .sys = NR_FUTEX, .arg0 = w),               \
		E_IN((t_) + 5, 101)
/* build_busy_handoff's reader 101 waits for the GIL (0x7200) at AT us
 * until thread 113 lets it go at WOKEN: A queued from ENQ, Q us */
#define GIL_WAIT_AT(name, at, woken, enq, q)                                  \
	{                                                                     \
		SC("test_handoff_enqueue", name),                             \
		.build = build_busy_handoff, .arg = { false },                \
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300),              \
			       E_IN(0, 113),                                  \
			       E_OUT(at, 101, .sys = NR_FUTEX,                \
				     .arg0 = 0x7200),                         \
			       E_WAKE(woken, 113, 101, NR_FUTEX, 0x7200),     \
			       E_OUT((woken) + 2, 113, .sys = NR_FUTEX,       \
				     .arg0 = 0x80),                           \
			       E_IN((woken) + 5, 101)),                       \
		RQS(HANDOFF_X_A), .want = HANDOFF_A_WANT(1500, enq, q),       \
	}
/* Y, read and written by handler 113 */
#define HANDLER_Y3 RQ(3, 300, 350, 1902, 1903, 113, 113, .t_end = 5000 * US)
/* build_busy_handoff (A's writer: 101 with arg1) in a HotSpot process (its
 * "VM Thread" 120, its JIT compiler 121): reader 101 blocks on word 0x700
 * at AT us until thread BY, running since 0, wakes it 10 us later (113:
 * another handler): A queued from ENQ, Q us */
#define STOPPED_IN(name, at, by, arg1, rqs, enq, q)                          \
	{                                                                    \
		SC("test_handoff_enqueue", name),                            \
			.build = build_busy_handoff, .arg = { false, arg1 }, \
			.steps = STEPS(E_COMM(0, 120, "VM Thread"),          \
				       E_COMM(0, 121, "C2 CompilerThre"),    \
				       E_IN(0, by),                          \
				       E_OUT(at, 101, .sys = NR_FUTEX,       \
					     .arg0 = 0x700),                 \
				       E_WAKE((at) + 10, by, 101, NR_FUTEX,  \
					      0x700),                        \
				       E_OUT((at) + 12, by, .sys = NR_FUTEX, \
					     .arg0 = by),                    \
				       E_IN((at) + 15, 101)),                \
			rqs, .want = HANDOFF_A_WANT(1500, enq, q),           \
	}
#define STOPPED_AT(name, at, by, enq, q) \
	STOPPED_IN(name, at, by, false, RQS(HANDOFF_X_A, HANDLER_Y3), enq, q)
/* build_busy_handoff's engine 102, whose boundary is at 1500 us, switched
 * out at AT us and running again at 1600 us: A's t_dispatch DISP */
#define PREEMPTED_AT(name, at, disp)                                         \
	{                                                                    \
		SC("test_handoff_enqueue", name),                            \
			.build = build_busy_handoff, .arg = { false },       \
			.steps = STEPS(E_PREEMPT(at, 102), E_IN(1600, 102)), \
			RQS(HANDOFF_X_A),                                    \
			.want = HANDOFF_A_WANT(disp, 1300, 200)              \
	}
/* PREEMPTED_AT's engine switched out at AT us for thread 113, traced and
 * runnable since the network woke it at 1495 us */
#define PREEMPTED_BY_OTHER(name, at, disp)                                    \
	{                                                                     \
		SC("test_handoff_enqueue", name),                             \
			.build = build_busy_handoff, .arg = { false },        \
			.steps = STEPS(E_IN(0, 113),                          \
				       E_OUT(10, 113, .sys = NR_EPOLL_WAIT,   \
					     .arg0 = 3),                      \
				       E_SOFTIRQ(1495, UNTRACED, 113),        \
				       E_PREEMPT(at, 102), E_IN(at, 113),     \
				       E_IN(1600, 102)),                      \
			RQS(HANDOFF_X_A),                                     \
			.want = HANDOFF_A_WANT(disp, 1300, 200)               \
	}
/* build_boundary_release's case NAME: preempted at PRE us after the
 * release, which wakes 113 (OTHER) or 111: A dispatched at DISP us */
#define BOUNDARY_RELEASE(name, pre, other, disp)                 \
	{                                                        \
		SC("test_handoff_enqueue", name),                \
			.build = build_boundary_release,         \
			.arg = { pre, other }, RQS(HANDOFF_X_A), \
			.want = HANDOFF_A_WANT(disp, 1300, 200)  \
	}
/* build_convoy's case NAME (MUTEX_FIRST its arg): A dispatched at DISP
 * us, queued Q us */
#define CONVOY(name, mutex_first, disp, q)                             \
	{                                                              \
		SC("test_handoff_enqueue", name),                      \
			.build = build_convoy, .arg = { mutex_first }, \
			RQS(HANDOFF_X_A),                              \
			.want = HANDOFF_A_WANT(disp, 1300, q)          \
	}
/* build_slow_broadcast's case NAME, Y's writer woken GAP us before A's
 * (through WORD, 0: the condition variable's): A dispatched at DISP us */
#define SLOW_BROADCAST(name, gap, word, disp)                              \
	{                                                                  \
		SC("test_handoff_enqueue", name),                          \
			.build = build_slow_broadcast, .arg = { gap, word }, \
			RQS(HANDOFF_X_A, HANDOFF_Y3),                      \
			.want = HANDOFF_A_WANT(disp, 1300, disp - 1300)    \
	}
#define HANDOFF_Y3 RQ(3, 300, 350, 1902, 1903, 101, 113, .t_end = 5000 * US)
/* build_busy_handoff's engine 102 (CPython, GIL 0x7200), preempted at
 * once by the thread it woke at its boundary (1500 us), runs at 1520 to
 * hand the GIL to 113 (1535) and is preempted at once again; it runs again
 * at 1800 and reads at 1810 (READ: E_BREAD, its request pipe; E_DREAD, an
 * eventfd or socket): A's want W */
#define PREEMPTED_GIL(name, read, w)                                          \
	{                                                                     \
		SC("test_handoff_enqueue", name),                             \
			.build = build_busy_handoff, .arg = { false },        \
			.steps = STEPS(E_RTLOCK(0, 102, 0x7200, 0x7300),      \
				       E_IN(0, 113),                          \
				       E_OUT(3, 113, .sys = NR_FUTEX,         \
					     .arg0 = 0x7200),                 \
				       E_PREEMPT(1502, 102), E_IN(1520, 102), \
				       E_WAKE(1535, 102, 113, NR_FUTEX,       \
					      0x7200),                        \
				       E_PREEMPT(1536, 102), E_IN(1540, 113), \
				       E_OUT(1545, 113, .sys = NR_FUTEX,      \
					     .arg0 = 0x7300),                 \
				       E_IN(1800, 102), read(1810, 102)),     \
			RQS(HANDOFF_X_A), .want = w,                          \
	}
/* build_busy_handoff's engine 102 in CPython (GIL 0x7200), with thread
 * 113 of its process running at 0 us, then the steps */
#define BUSY_GIL_ENGINE(name, want_, ...)                                    \
	{                                                                    \
		SC("test_handoff_enqueue", name),                            \
			.build = build_busy_handoff, .arg = { false },       \
			.steps = STEPS(E_RTLOCK(0, 102, 0x7200, 0x7300),     \
				       E_IN(0, 113), __VA_ARGS__),           \
			RQS(HANDOFF_X_A), .want = want_,                     \
	}
/* BUSY_GIL_ENGINE's engine takes from its input pipe at take us and
 * waits at gil us for the GIL, which 113 holds for 50 us; it runs again
 * 100 us after its wait began */
#define TAKE_THEN_GIL(name, want_, take, gil)                                 \
	BUSY_GIL_ENGINE(name, want_,                                          \
			E_OUT(3, 113, .sys = NR_FUTEX, .arg0 = 0x7300),       \
			E_BREAD(take, 102), E_IN((gil)-5, 113),               \
			E_OUT(gil, 102, .sys = NR_FUTEX, .arg0 = 0x7200),     \
			E_WAKE((gil) + 50, 113, 102, NR_FUTEX, 0x7200),       \
			E_OUT((gil) + 52, 113, .sys = NR_FUTEX,               \
			      .arg0 = 0x7300),                                \
			E_IN((gil) + 100, 102))
/* A taken from the engine's input pipe at disp us: queued from 1300 */
#define TAKE_A_WANT(disp) A_WANT(TAKE, disp, 1300, (disp)-1300)
/* test_hop: gateway 101 reads its request at 100 and sends it on to the
 * runner (its bytes in at 205 wake runner reader 301 at 210), then waits
 * on the upstream socket; 301 reads at 220 and hands it to engine 302 at
 * 300, which sends its first token at 1300, waking 101 at 1310; 101 hands
 * the token to the gateway's writer 102 at 1400, which writes at 1500. */
#define HOP_STREAM STEPS(UNPAREN HOP_EVENTS(SOCK_WAIT))
#define HOP_EVENTS(...)                                                        \
	(E_IN(0, 101), E_IN(5, 301), E_OUT(50, 301, SOCK_WAIT),               \
	      E_IN(6, 302), E_OUT(60, 302, .sys = NR_FUTEX, .arg0 = 0x10),    \
	      E_IN(7, 102), E_OUT(70, 102, .sys = NR_FUTEX, .arg0 = 0x20),    \
	      E_SOFTIRQ(210, 101, 301), E_OUT(220, 101, __VA_ARGS__),         \
	      E_IN(215, 301), E_WAKE(300, 301, 302, NR_FUTEX, 0x10),          \
	      E_OUT(310, 301, .sys = NR_FUTEX, .arg0 = 0x30), E_IN(305, 302), \
	      E_SOFTIRQ(1310, 302, 101),                                      \
	      E_OUT(1320, 302, .sys = NR_FUTEX, .arg0 = 0x10),                \
	      E_IN(1315, 101), E_WAKE(1400, 101, 102, NR_FUTEX, 0x20),        \
	      E_OUT(1410, 101, SOCK_WAIT), E_IN(1405, 102),                   \
	      E_OUT(1600, 102, .sys = NR_FUTEX, .arg0 = 0x20))

/* test_hop's sender 103 (a Go client's writeLoop), woken by waker at 200
 * to send the hop, its bytes in at 205 */
#define SENDER_103(waker)                                                      \
	E_IN(8, 103), E_OUT(80, 103, .sys = NR_FUTEX, .arg0 = 0x50),          \
		E_WAKE(200, waker, 103, NR_FUTEX, 0x50), E_IN(202, 103),       \
		E_OUT(207, 103, .sys = NR_FUTEX, .arg0 = 0x50)

/* the hop taken: the runner engine's pick-up is the gateway request's */
#define HOP_TAKEN_FIELDS                                                       \
	{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),                   \
	  R_T(t_enqueue, 300), R_T(t_dispatch, 305), R(hop_id, 2) }
#define HOP_TAKEN_WANT(...) WANTS({ 1, NULL, HOP_TAKEN_FIELDS, { __VA_ARGS__ } })

/* no hop taken: the gateway relay's wake of its writer is the pick-up */
#define RELAY_PICKUP_WANT                                                      \
	WANTS({ 1,                                                             \
		NULL,                                                          \
		{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),           \
		  R_T(t_enqueue, 1400), R_T(t_dispatch, 1405), R(hop_id, 0) } })

/* loop 101 hands request 1 (read at 100 us) to its queue feeder 103 at
 * 300, whose write (320) wakes reader_, blocked reading the pipe (inode
 * 500) */
/* clang-format off */
#define PIPE_FEED(reader_)                                                    \
	E_IN(0, 101), E_IN(0, reader_), E_IN(0, 103),                         \
	E_OUT(10, reader_, .sys = NR_READ, .arg0 = 5, .mode = S_IFIFO,        \
	      .ino = 500),                                                    \
	E_OUT(20, 103, .sys = NR_FUTEX, .arg0 = 0x40),                        \
	E_WAKE(300, 101, 103, NR_FUTEX, 0x40),                                \
	E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(305, 103),     \
	E_WAKE(320, 103, reader_, NR_WRITE, 7),                               \
	E_OUT(322, 103, .sys = NR_FUTEX, .arg0 = 0x40)
/* test_batch's threads: loop 101, batcher 102 waiting in read on its
 * input pipe, the pipe's feeder 103; 102 runs at 330 us */
#define BATCH_HEAD PIPE_FEED(102), E_IN(330, 102)
/* request 2's bytes wake the loop 101 at t_ us; it hands the request to
 * the feeder 103 180 us later, whose write wakes 102 (t_ + 200) */
#define BATCH_NEXT(t_)                                                        \
	E_SOFTIRQ(t_, UNTRACED, 101), E_IN((t_) + 5, 101),                    \
		E_WAKE((t_) + 180, 101, 103, NR_FUTEX, 0x40),                 \
		E_OUT((t_) + 182, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),      \
		E_IN((t_) + 185, 103),                                        \
		E_WAKE((t_) + 200, 103, 102, NR_WRITE, 7),                    \
		E_OUT((t_) + 202, 103, .sys = NR_FUTEX, .arg0 = 0x40),        \
		E_IN((t_) + 205, 102)
/* PIPE_FEED(reader_): reader_ runs from 330 us and writes request 1's token
 * to the loop at 2330; taken up at 330 by rule_ */
#define PIPE_WRITE_WAKES(name, reader_, rule_)                                \
	{                                                                     \
		SC("test_batch", name),                                       \
		.steps = STEPS(PIPE_FEED(reader_), E_IN(330, reader_),        \
			       E_WAKE(2330, reader_, 101, NR_WRITE, 9),       \
			       E_IN(2335, 101)),                              \
		RQS(RQ(1, 50, 100, 2350, 2360, 101, 101)),                    \
		.want = WANTS({                                               \
			1,                                                    \
			NULL,                                                 \
			{ R(complete, true), R(dispatch, rule_),              \
			  R_T(t_dispatch, 330), R_T(t_enqueue, 300) },        \
		}),                                                           \
	}
/* test_batch's condition variable: handler 101's notify (futex 0x60) wakes
 * the batcher 102 at 300 us (waker_'s, when another), which waits on for
 * more (0x64, timed_) until handler 103's notify (880); it computes to
 * 10885 */
#define COND_FILLS(timed_) COND_FILLS_BY(timed_, 101)
#define COND_FILLS_BY(timed_, waker_)                                         \
	.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),              \
		       E_IN(0, 104),                                          \
		       E_OUT(5, 103, .sys = NR_RECVFROM, .arg0 = 4,           \
			     .mode = S_IFSOCK),                               \
		       E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x60),         \
		       E_WAKE(300, waker_, 102, NR_FUTEX, 0x60),              \
		       E_OUT(302, 101, .sys = NR_FUTEX, .arg0 = 0x80),        \
		       E_IN(305, 102),                                        \
		       E_OUT(350, 102, .sys = NR_FUTEX, .arg0 = 0x64,         \
			     .timed = timed_),                                \
		       E_SOFTIRQ(700, UNTRACED, 103), E_IN(705, 103),         \
		       E_WAKE(880, 103, 102, NR_FUTEX, 0x64),                 \
		       E_OUT(882, 103, .sys = NR_FUTEX, .arg0 = 0x80),        \
		       E_IN(885, 102),                                        \
		       E_WAKE(10885, 102, 101, NR_FUTEX, 0x80),               \
		       E_IN(10890, 101)),                                     \
	RQS(RQ(1, 50, 100, 10900, 10910, 101, 101),                           \
	    RQ(2, 700, 750, 20000, 20010, 103, 103))
/* test_batch's request 1: read at 100 us, handed on at enq_, queued to
 * the batcher's run at disp_ (its waits for a CPU, 5 + 5 us, runqueue) */
#define BATCH_WANT(cpu_, queue_, disp_, enq_)                                 \
	.want = WANTS({                                                       \
		1,                                                            \
		STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = cpu_,               \
		       [TT_ST_QUEUE] = queue_, [TT_ST_RUNQUEUE] = 5 + 5,      \
		       [TT_ST_NET_OUT] = 10),                                 \
		{ R(complete, true), R(dispatch, TT_CP_DISP_BATCH),           \
		  R_T(t_dispatch, disp_), R_T(t_enqueue, enq_) },             \
	})
/* request 1, handed on at hand_ us, queued to the end of 102's wait for
 * more (its timeout at 5400 us); 102 computes it to 15400 */
#define BATCH_TIMEOUT_WANT(hand_)                                             \
	RQS(RQ(1, 50, 100, 15420, 15430, 101, 101)),                          \
	BATCH_WANT((hand_) - 100 + 9995 + 15, 5400 - (hand_), 5405, hand_)
/* 102 takes it and waits in poll on the pipe from 400 us */
#define BATCH_POLL                                                            \
	E_OUT(400, 102, .sys = NR_POLL, .arg0 = 0x7f00, .mode = S_IFIFO,      \
	      .ino = 500)
/* clang-format on */

/* The loop 101 wakes the engine 102 at 300 us (its pick-up of request 1);
 * the loop's executor thread 104 waits on the engine's output pipe (inode
 * 600) */
/* clang-format off */
#define PIPE_RELAY_HEAD                                                       \
	E_IN(0, 101), E_IN(0, 102), E_IN(0, 104),                             \
	E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x40),                        \
	E_OUT(20, 104, .sys = NR_READ, .arg0 = 5, .mode = S_IFIFO,            \
	      .ino = 600),                                                    \
	E_WAKE(300, 101, 102, NR_FUTEX, 0x40),                                \
	E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IN(305, 102)
/* 104, reading the pipe, hands the loop request 2's token at `a` us, is
 * switched out, back at `b`, and hands it request 1's at `c`: request 1 was
 * picked up at 300 */
#define RELAY_DRAIN_TAIL(a, b, c)                                             \
	E_WAKE(a, 104, 101, NR_WRITE, 9),                                     \
	E_PREEMPT((a) + 5, 104), E_IN((a) + 6, 101),                          \
	E_OUT((a) + 20, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),                \
	E_IN(b, 104), E_WAKE(c, 104, 101, NR_WRITE, 9),                       \
	E_OUT((c) + 2, 104, .sys = NR_READ, .arg0 = 5, .mode = S_IFIFO,       \
	      .ino = 600),                                                    \
	E_IN((c) + 5, 101)
#define RELAY_DRAIN_RQS_WANT(a, c)                                            \
	RQS(RQ(1, 50, 100, (c) + 15, (c) + 20, 101, 101),                     \
	    RQ(2, 60, 110, (a) + 10, (a) + 15, 101, 101,                      \
	       .t_end = ((a) + 20) * US)),                                    \
	.want = WANTS({                                                       \
		1,                                                            \
		NULL,                                                         \
		{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),          \
		  R_T(t_dispatch, 305), R_T(t_enqueue, 300) },                \
	})
/* test_batch: the engine 102 writes requests 1's and 2's tokens to the
 * pipe (10300 us), waking the loop's executor thread 104 blocked reading
 * it; 104 reads (10310), then RELAY_DRAIN_TAIL(a, b, c) */
#define RELAY_DRAINS(name, a, b, c)                                           \
	{                                                                     \
		SC("test_batch", name),                                       \
		.steps = STEPS(PIPE_RELAY_HEAD,                               \
			       E_DATA(10300, 102, 104, NR_WRITE, 5),          \
			       E_WAKE(10300, 102, 104, NR_WRITE, 5),          \
			       E_OUT(10302, 102, .sys = NR_FUTEX,             \
				     .arg0 = 0x40),                           \
			       E_IN(10305, 104), E_DREAD(10310, 104),         \
			       RELAY_DRAIN_TAIL(a, b, c)),                    \
		RELAY_DRAIN_RQS_WANT(a, c),                                   \
	}
/* test_data_wake's busy readers: loop 101 (GIL 0x7200) hands the
 * request to engine 202 (another process) at 100 us, whose token goes to
 * executor 103's pipe at 5000 while 103 waits for work (0x40); the
 * engine runs on until 5900 */
#define BUSY_HEAD                                                             \
	E_RTLOCK(0, 101, 0x7100, 0x7300), E_IN(0, 101),                       \
		E_OUT(5, 202, .sys = NR_READ, .arg0 = 5),                     \
		E_OUT(30, 104, .sys = NR_FUTEX, .arg0 = 0x44),                \
		E_OUT(50, 103, .sys = NR_FUTEX, .arg0 = 0x40),                \
		E_WAKE(100, 101, 202, NR_WRITE, 5), E_IN(105, 202),           \
		E_DATA(5000, 202, 103, NR_WRITE, 7),                          \
		E_OUT(5900, 202, .sys = NR_READ, .arg0 = 5)
/* thread 205 runs at 5400 us and writes to tgt's pipe at 5500 */
#define BUSY_THIRD(tgt)                                                       \
	E_IN(5400, 205), E_DATA(5500, 205, tgt, NR_WRITE, 7),                 \
		E_OUT(5510, 205, .sys = NR_FUTEX, .arg0 = 0x48)
/* the loop asks 103 at 6000 us, which reads its pipe at r_ */
#define BUSY_ASKED(r_)                                                        \
	E_WAKE(6000, 101, 103, NR_FUTEX, 0x40), E_IN(6005, 103),              \
		E_DREAD(r_, 103)
/* BUSY_HEAD, the steps (the loop's read of 103's data among them), 103
 * writing to the loop's eventfd at t_ us; the loop waits for the GIL
 * (0x7200) that 104 holds from t_ + 90 to t_ + 130 and sends the token at
 * t_ + 180 */
#define BUSY_READER(name, t_, want_, ...)                                     \
	{                                                                     \
		SC("test_data_wake", name),                                   \
		.steps = STEPS(BUSY_HEAD, __VA_ARGS__,                        \
			       E_DATA(t_, 103, 101, NR_WRITE, 9),             \
			       E_OUT((t_) + 10, 103, .sys = NR_FUTEX,         \
				     .arg0 = 0x40),                           \
			       E_IN((t_) + 20, 104),                          \
			       E_OUT((t_) + 90, 101, .sys = NR_FUTEX,         \
				     .arg0 = 0x7200),                         \
			       E_WAKE((t_) + 130, 104, 101, NR_FUTEX, 0x7200),\
			       E_OUT((t_) + 132, 104, .sys = NR_FUTEX,        \
				     .arg0 = 0x44),                           \
			       E_IN((t_) + 135, 101)),                        \
		RQS(RQ(1, 10, 20, (t_) + 180, (t_) + 190, 101, 101)),         \
		.want = want_,                                                \
	}
/* BUSY_HEAD, 103 asked, writing to the loop's eventfd at 6020 us; the
 * loop, on a CPU all along, reads it at 6100 and sends the token at 6800
 * (the requests: the token's, 1, and those given) */
#define BUSY_LOOP_READ(name, want_, ...)                                      \
	{                                                                     \
		SC("test_data_wake", name),                                   \
		.steps = STEPS(BUSY_HEAD, BUSY_ASKED(6010),                   \
			       E_DATA(6020, 103, 101, NR_WRITE, 9),           \
			       E_OUT(6030, 103, .sys = NR_FUTEX,              \
				     .arg0 = 0x40),                           \
			       E_DREAD(6100, 101)),                           \
		RQS(RQ(1, 10, 20, 6800, 6810, 101, 101), __VA_ARGS__),        \
		.want = want_,                                                \
	}
/* test_handoff_enqueue's case NAME: build_busy_handoff's threads and X,
 * but A's token at 4000 us (engine 102 wakes 112); 102 hands X's token to
 * 111 at 1500 (its last visible hand-off), runs on (its later hand-offs
 * waking nobody) and reads a file from r_ us */
#define STALE_BOUNDARY(name, r_, want_, ...)                                  \
	{                                                                     \
		SC("test_handoff_enqueue", name),                             \
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(1, 111),      \
			       E_OUT(2, 111, .sys = NR_FUTEX, .arg0 = 111),   \
			       E_IN(1, 112),                                  \
			       E_OUT(2, 112, .sys = NR_FUTEX, .arg0 = 112),   \
			       E_PREEMPT(1200, 101), E_IN(1250, 101),         \
			       E_OUT(1300, 101, .sys = NR_FUTEX,              \
				     .arg0 = 0x90),                           \
			       E_WAKE(1500, 102, 111, NR_FUTEX, 111),         \
			       E_IN(1505, 111),                               \
			       E_OUT(1530, 111, .sys = NR_FUTEX,              \
				     .arg0 = 111),                            \
			       E_FILEIO(r_, (r_) + 100, 102, NR_PREAD64,      \
					S_IFREG, 0),                          \
			       __VA_ARGS__                                    \
			       E_WAKE(4000, 102, 112, NR_FUTEX, 112),         \
			       E_IN(4010, 112)),                              \
		RQS(RQ(1, 50, 100, 1520, 1560, 101, 111,                      \
		       .t_end = 5000 * US),                                   \
		    RQ(2, 1000, 1100, 4050, 4100, 101, 112,                   \
		       .t_end = 5000 * US)),                                  \
		.want = want_,                                                \
	}
/* clang-format on */

static const struct scenario scenarios[] = {
	/* One thread reads, computes and writes; its wakeup by the arriving
	 * data (softirq, untraced current) leaves runqueue time inside
	 * network.in. */
	{
		SC("test_single_thread", "read_compute_write"),
		.steps = STEPS(E_IN(100, 101),
			       E_OUT(200, 101, .sys = NR_RECVFROM, .arg0 = 5,
				     .mode = S_IFSOCK),
			       E_SOFTIRQ(1000, UNTRACED, 101), E_IN(1010, 101),
			       E_OUT(1700, 101, .sys = NR_EPOLL_WAIT,
				     .arg0 = 3)),
		RQS(RQ(1, 1000, 1050, 1500, 1600, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 40, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_CPU] = 450, [TT_ST_NET_OUT] = 100),
			{ R(complete, true), R_T(t_dispatch, 1050),
			  R(dispatch, TT_CP_DISP_READ), R_T(t_token, 1500),
			  /* runqueue, request in, on-cpu, response out */
			  R(nsegs, 4) },
			{ SEG_NTH(0, NULL, G(stage, TT_ST_RUNQUEUE),
				  G_T(start, 1000), G(tid, 101)),
			  SEG_NTH(1, NULL, G(stage, TT_ST_NET_IN)),
			  SEG_NTH(2, "on-cpu", G(state, TT_CP_RUNNING)) },
		}),
	},
	/* Reader hands to an engine through a futex; the engine computes and
	 * wakes the writer. The reader's work between its read and the
	 * hand-off is its own CPU time, not queueing: the idle engine picks
	 * the request up at once. */
	{
		SC("test_cross_thread", "futex_pickup"),
		.steps = STEPS(
			FUTEX_PICKUP_STEPS),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 965,
			       [TT_ST_RUNQUEUE] = 35, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R_T(t_dispatch, 1230),
			  R_T(t_enqueue, 1200), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_token, 2000) },
			{ SEG_AT(1150, NULL, G(tid, 101), G(stage, TT_ST_CPU),
				 G(state, TT_CP_RUNNING), G_T(start, 1100),
				 G_T(dur, 100)),
			  SEG_AT(1500, NULL, G(tid, 102), G(stage, TT_ST_CPU),
				 G_T(start, 1230), G_T(dur, 770)),
			  SEG_AT(2001, NULL, G(tid, 103),
				 G(stage, TT_ST_RUNQUEUE)) },
		}),
	},
	/* A wait on a char device said to be a GPU, by rdev. */
	{
		SC("test_gpu_wait", "gpu_rdev"),
		.steps = GPU_STREAM,
		.gpu = DEV_GPU_RDEV,
		RQS(RQ(1, 1000, 1100, 1800, 1850, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 500, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG_AT(1300, "ioctl gpu 195:0",
				 G(state, TT_CP_BLOCKED), G(tid, 101)) },
		}),
	},
	/* the same wait on a device nobody said is a GPU */
	{
		SC("test_gpu_wait", "unsaid_chardev"),
		.steps = GPU_STREAM,
		RQS(RQ(1, 1000, 1100, 1800, 1850, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_UNKNOWN] = 500, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{},
			{ SEG_AT(1300, "ioctl chr 195:0") },
		}),
	},
	/* any minor of a GPU major */
	{
		SC("test_gpu_wait", "gpu_major"),
		.steps = GPU_STREAM,
		.gpu = DEV_GPU_MAJOR,
		RQS(RQ(1, 1000, 1100, 1800, 1850, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 500, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
		}),
	},
	/* A regular-file read in I/O wait and a file-backed page fault, both
	 * ended by interrupts, are storage. */
	{
		SC("test_storage_wait", "read_and_fault"),
		.steps = TWO_WAITS((.sys = NR_PREAD64, .arg0 = 9,
				    .mode = S_IFREG, .iowait = true),
				   (.sys = -1, .iowait = true)),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 180,
			       [TT_ST_STORAGE] = 490, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true) },
			{ SEG_AT(1300, "pread64 file 8:1 iowait"),
			  SEG_AT(1600, "fault iowait") },
		}),
	},
	/*
	 * CPU inside a file read is storage (docs/design.md §4.3): an
	 * O_DIRECT pread64 from 1150 to 1520 us copies and submits on CPU
	 * (50 us), waits for the disk (300 us), waits to run (runqueue, 10 us)
	 * and finishes on CPU (10 us); outside it the CPU is compute.
	 */
	{
		SC("test_storage_cpu", "direct_read"),
		.steps = STEPS(E_IN(900, 101),
			       E_OUT(1200, 101, .sys = NR_PREAD64, .arg0 = 9,
				     .mode = S_IFREG, .iowait = true),
			       E_IRQ(1500, 0, 101), E_IN(1510, 101),
			       E_FILEIO(1150, 1520, 101, NR_PREAD64, S_IFREG,
					O_DIRECT_X86),
			       E_OUT(1560, 101, .sys = -1, .iowait = true),
			       E_IRQ(1750, UNTRACED, 101), E_IN(1760, 101)),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 120,
			       [TT_ST_STORAGE] = 550, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 10),
			/* the span holds the wait to run inside the read */
			{ R(complete, true), R_T(t_storage_start, 1150),
			  R_T(t_storage_end, 1750) },
			{ SEG(1120, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1100, 50),
			  SEG(1175, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "pread64 direct", 1150, 50),
			  SEG(1300, 101, TT_CP_BLOCKED, TT_ST_STORAGE,
			      "pread64 file 8:1 iowait", 1200, 300),
			  SEG(1505, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1500, 10),
			  SEG(1515, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "pread64 direct", 1510, 10),
			  SEG(1530, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1520, 40) },
		}),
		.stats = { STAT(fileios, 1) },
	},
	/* A page-cache hit: the whole read on CPU, storage all the same;
	 * one that began before t_read counts from t_read; another
	 * thread's read, off the path, counts for nothing. */
	{
		SC("test_storage_cpu", "cached_read_clipped"),
		.steps = STEPS(E_IN(900, 101), E_IN(900, 102),
			       E_FILEIO(1050, 1150, 101, NR_READ, S_IFREG, 0),
			       E_FILEIO(1300, 1400, 101, NR_READ, S_IFREG, 0),
			       E_FILEIO(1200, 1500, 102, NR_READ, S_IFREG, 0)),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 350,
			       [TT_ST_STORAGE] = 150, [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1120, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "read file", 1100, 50),
			  SEG(1350, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "read file", 1300, 100) },
		}),
		.stats = { STAT(fileios, 3) },
	},
	/* A block device read (a raw weights partition) is named so; a
	 * read that overlaps the previous one (a clock slip) starts at its
	 * end, and one without an entry time is no interval. */
	{
		SC("test_storage_cpu", "blkdev_and_slip"),
		.steps = STEPS(E_IN(900, 101),
			       E_FILEIO(1200, 1300, 101, NR_PREAD64, S_IFBLK,
					0),
			       E_FILEIO(1250, 1350, 101, NR_READ, S_IFREG, 0),
			       E_FILEIO(0, 1500, 101, NR_READ, S_IFREG, 0)),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 350,
			       [TT_ST_STORAGE] = 150, [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1250, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "pread64 blkdev", 1200, 100),
			  SEG(1320, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "read file", 1300, 50) },
		}),
		.stats = { STAT(fileios, 2) },
	},
	/* A file read beside a GPU ioctl on one thread: each names its own
	 * on-CPU time, compute.cpu for the ioctl, storage.io for the read. */
	{
		SC("test_storage_cpu", "beside_ioctl"),
		.steps = STEPS(E_IN(900, 101),
			       E_IOCTL(1200, 1300, 101, NV_RM_CONTROL,
				       GPU_RDEV),
			       E_FILEIO(1300, 1400, 101, NR_READ, S_IFREG, 0)),
		.gpu = DEV_NVIDIA0,
		.extra = check_fileio_calls,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 400,
			       [TT_ST_STORAGE] = 100, [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1250, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "ioctl NV_ESC_RM_CONTROL", 1200, 100),
			  SEG(1350, 101, TT_CP_RUNNING, TT_ST_STORAGE,
			      "read file", 1300, 100) },
		}),
	},
	/*
	 * The hypervisor took 80 us of the reader's run [900, 1300): of it,
	 * [1000, 1300) is on the path, 60 us spread evenly; a steal in
	 * another thread's run is not the request's. The stages are as
	 * without it (test_preempted/runqueue): steal is inside them.
	 */
	{
		SC("test_steal", "share_of_run"),
		.steps = STEPS(E_IN(500, 102), E_IN(900, 101),
			       E_STEAL(500, 1200, 102, 100),
			       E_OUT(1200, 102, .sys = NR_FUTEX, .arg0 = 0x99),
			       E_STEAL(900, 1300, 101, 80),
			       E_PREEMPT(1300, 101), E_IN(1450, 101)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 350,
			       [TT_ST_RUNQUEUE] = 150, [TT_ST_NET_OUT] = 100),
			{ R(complete, true), R_T(steal_ns, 60) },
		}),
	},
	/* A preempted thread waits in the runqueue until it runs again. */
	{
		SC("test_preempted", "runqueue"),
		.steps = STEPS(E_IN(900, 101), E_PREEMPT(1300, 101),
			       E_IN(1450, 101)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 350,
			       [TT_ST_RUNQUEUE] = 150, [TT_ST_NET_OUT] = 100),
			{ R(complete, true) },
			{ SEG_AT(1400, NULL, G(state, TT_CP_RUNNABLE),
				 G_T(dur, 150)) },
		}),
	},
	/* Events added after a walk are seen by the next walk. */
	{
		SC("test_add_after_walk", "first"),
		.steps = STEPS(E_IN(900, 101)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 101)),
		.want = WANTS({ 1, NULL, { R_STAGE(TT_ST_CPU, 500) } }),
	},
	{
		SC("test_add_after_walk", "more"),
		.reuse = true,
		.steps = STEPS(E_PREEMPT(1300, 101), E_IN(1450, 101),
			       E_LOST(1500, 1510)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_CPU, 340), R_STAGE(TT_ST_RUNQUEUE, 150),
			  R_STAGE(TT_ST_UNKNOWN, 10),
			  R(incomplete, TT_CP_INC_LOST) },
		}),
	},
	/* Reader -> tokenizer (pipe) -> engine (futex) -> writer (socket). */
	{
		SC("test_chain", "pipe_futex_socket"),
		.build = build_chain,
		.arg = { 103 },
		RQS(RQ(1, 1000, 1100, 2000, 2100, 101, 104)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 827,
			       [TT_ST_RUNQUEUE] = 73, [TT_ST_NET_OUT] = 100),
			{ R(complete, true), R_T(t_dispatch, 1220),
			  R_T(t_token, 1900), R(dispatch, TT_CP_DISP_PICKUP),
			  R(nsegs, 9) },
			{ SEG_NTH(0, NULL, G(tid, 101)),
			  SEG_NTH(1, NULL, G(tid, 101)),
			  SEG_NTH(2, NULL, G(tid, 102)),
			  SEG_NTH(3, NULL, G(tid, 102)),
			  SEG_NTH(4, NULL, G(tid, 103)),
			  SEG_NTH(5, NULL, G(tid, 103)),
			  SEG_NTH(6, NULL, G(tid, 104)),
			  SEG_NTH(7, NULL, G(tid, 104)),
			  SEG_NTH(8, NULL, G(tid, 104)) },
		}),
	},
	/* The writer's wake of the engine is request 1's pick-up: the
	 * writer's next request began more than CP_LOOKAHEAD_NS (5 s) after
	 * 1's end, which a walk does not look (docs/design.md §3.5). */
	{
		SC("test_lookahead", "next_request_past_it"),
		.steps = STEPS(WORKER_PICKUP_STEPS),
		WORKER_RQS(5100000),
		.want = WANTS({ 1, NULL,
				{ R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(t_dispatch, 1210) } }),
	},
	/* Within it the writer serves two requests: its wake is no
	 * pick-up, the reader's wake of it is, the writer a relay to the
	 * worker (queued until the worker's wake, taken up when it ran). */
	{
		SC("test_lookahead", "next_request_within_it"),
		.steps = STEPS(WORKER_PICKUP_STEPS),
		WORKER_RQS(4900000),
		.want = WANTS({ 1, NULL,
				{ R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(t_enqueue, 1150), R_T(t_dispatch, 1210) } }),
	},
	/* The same with 104, request 1's writer, computing 550 us before its
	 * wake of the engine (which computes until 4000 us), request 2 not
	 * yet come: 104 is request 1's own handler, handed it by the reader
	 * (grpc's poller and a pool thread that tokenizes), no relay; queued
	 * from its hand-off (without the test: t_enqueue 1150) */
	WORKER_HANDLER("next_request_handler", 1710, WORKER_LATER_RQ),
	/* The same with the engine computing 780 us to the token at 2500 us,
	 * less than four times the 550 us of 104 before its wake of it: 104
	 * is no relay but the engine computes still, 104 the request's own
	 * handler that handed it on (without the test: t_enqueue 1150,
	 * t_dispatch 1160, 104 the computing thread) */
	WORKER_HANDLER_IN("next_request_handler_short", 1710,
			  STEPS(WORKER_PICKUP_AT(1710, 2500)), WORKER_LATER_RQ),
	/* Reader 101 wakes relay 105 at 1150 us, which wakes 104 at 1200;
	 * 104, request 1's writer serving no other, computes to its write
	 * at 4100: it is the computing thread, 105 a relay (queued until
	 * 104's wake; without the test: taken up at 105's run, 1160) */
	{
		SC("test_lookahead", "handler_computes"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 104), E_IN(0, 105),
			       E_OUT(60, 104, .sys = NR_FUTEX, .arg0 = 0x7000),
			       E_OUT(70, 105, .sys = NR_FUTEX, .arg0 = 0x7100),
			       E_WAKE(1150, 101, 105, NR_FUTEX, 0x7100),
			       E_IN(1160, 105),
			       E_WAKE(1200, 105, 104, NR_FUTEX, 0x7000),
			       E_OUT(1205, 105, .sys = NR_FUTEX, .arg0 = 0x7100),
			       E_IN(1210, 104)),
		RQS(RQ(1, 1000, 1100, 4100, 4200, 101, 104,
		       .t_end = 4300 * US),
		    WORKER_LATER_RQ),
		.want = WANTS({ 1, NULL,
				{ R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(t_enqueue, 1150),
				  R_T(t_dispatch, 1210) } }),
	},
	/* Loop 101 reads request 1 and starts its generate() thread 105 at
	 * 1200 us, waiting for its start (0x7000); 105 runs at 1300, signals
	 * it at 1350 and computes on, putting the token where no thread waits.
	 * The loop, runnable until 2000 (a hog), sends the headers until 2600
	 * and asks pool thread 106 for the token, which 106 has: the loop is
	 * no computing thread, 105 is, taken up when it ran (without the
	 * test: at the loop's run, 2000, its 600 us of CPU taken for the
	 * compute) */
	{
		SC("test_lookahead", "loop_not_the_engine"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 106),
			       E_OUT(60, 106, .sys = NR_FUTEX, .arg0 = 0x8000),
			       E_FORK(1190, 101, 105, "python3"),
			       E_WAKE_NEW(1200, 101, 105, 435),
			       E_OUT(1210, 101, .sys = NR_FUTEX, .arg0 = 0x7000),
			       E_IN(1300, 105),
			       E_WAKE(1350, 105, 101, NR_FUTEX, 0x7000),
			       E_IN(2000, 101),
			       E_WAKE(2600, 101, 106, NR_FUTEX, 0x8000),
			       E_IN(2612, 106), E_WAKE(2650, 106, 101, NR_WRITE, 6),
			       E_OUT(2610, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(2660, 101),
			       E_OUT(2655, 106, .sys = NR_FUTEX, .arg0 = 0x8000)),
		RQS(RQ(1, 1000, 1100, 2700, 2750, 101, 101,
		       .t_end = 2800 * US)),
		.want = WANTS({ 1, NULL,
				{ R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(t_enqueue, 1200),
				  R_T(t_dispatch, 1300) } }),
	},
	/* LOOP_SPAWNS: 105 is request 1's thread, taken up when it ran
	 * (without the test: 106's start, a thread the loop started for
	 * request 2, at 1400) */
	LOOP_SPAWNED("loop_spawned_in_order", 1, 1200, 1250, ()),
	/* LOOP_SPAWN_LOCK with 105, after its start's signal, waiting from
	 * 1320 us for the model's lock until 109 lets it go at 1550: request
	 * 1 queued until 105 held it (without the test: taken up at its
	 * start, 1250) */
	LOOP_SPAWN_LOCK("loop_spawned_lock", 1700, LOCK, 1560,
			E_OUT(1320, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(1550, 109, 105, NR_FUTEX, 0x9000),
			E_IN(1560, 105)),
	/* The same with the lock let go by 111, which never waited on it
	 * (its release reads as a hand-off): still the model's lock 105
	 * waited on (without the test: taken up at its start, 1250) */
	LOOP_SPAWN_LOCK("loop_spawned_lock_holder", 1700, LOCK, 1560,
			E_IN(0, 111),
			E_OUT(1320, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(1550, 111, 105, NR_FUTEX, 0x9000),
			E_IN(1560, 105)),
	/* The same with no wake seen at 105's run at 1560 us (a lost
	 * event): no release to say when it held the lock */
	LOOP_SPAWN_LOCK("loop_spawned_lock_unwoken", 1700, PICKUP, 1250,
			E_OUT(1320, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_IN(1560, 105)),
	/* The same with the lock let go at 1800, after request 1's token
	 * went out: not its admission */
	LOOP_SPAWN_LOCK("loop_spawned_lock_late", 1700, PICKUP, 1250,
			E_OUT(1320, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(1800, 109, 105, NR_FUTEX, 0x9000),
			E_IN(1810, 105)),
	/* The same with 105 computing 650 us before it waits at 1900, the
	 * token written at 2100: a lock taken after its work began */
	LOOP_SPAWN_LOCK("loop_spawned_lock_after_work", 2100, PICKUP, 1250,
			E_OUT(1900, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(1950, 109, 105, NR_FUTEX, 0x9000),
			E_IN(1960, 105)),
	/* The same with 105 reading a pipe from 1320 to 1340 us first (110
	 * writes it) and waiting for the lock from 1350: not a thread that
	 * went for the lock at once */
	LOOP_SPAWN_LOCK("loop_spawned_read_then_lock", 1700, PICKUP, 1250,
			E_OUT(1320, 105, .sys = NR_READ, .arg0 = 8,
			      .mode = S_IFIFO),
			E_WAKE(1340, 110, 105, NR_WRITE, 9), E_IN(1342, 105),
			E_OUT(1350, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(1550, 109, 105, NR_FUTEX, 0x9000),
			E_IN(1560, 105)),
	/* Request 2's thread is the second the loop started, 106 (with the
	 * first for each: 105's start, 1200 us) */
	LOOP_SPAWNED("loop_spawned_second", 2, 1400, 1420, ()),
	/* The same with thread 108 started at 1550 us, after the headers
	 * (anyio's pool growing): not one of the batch's */
	LOOP_SPAWNED("loop_spawned_after_headers", 1, 1200, 1250, (),
		     E_FORK(1540, 101, 108, "python3"),
		     E_WAKE_NEW(1550, 101, 108, 435), E_IN(1560, 108)),
	/* The same with 108 started at 1470, before the headers: three
	 * starts for two reads, no pairing; the walk's pick-up, 106's */
	LOOP_SPAWNED("loop_spawned_unpaired", 1, 1400, 1420, (),
		     E_FORK(1460, 101, 108, "python3"),
		     E_WAKE_NEW(1470, 101, 108, 435), E_IN(1480, 108)),
	/* The same with request 3 read at 1350 us, between the starts: the
	 * batch's starts end there, one for two reads, no pairing */
	LOOP_SPAWNED("loop_spawned_read_between", 1, 1400, 1420,
		     (, RQ(3, 1340, 1350, 2800, 2810, 101, 101,
			   .t_end = 3000 * US))),
	/* The same with 104 preempted from 1300 to 1650 us, on a CPU 200 us
	 * of its 550 (beside CPU hogs): its tokenizing still, not a relay's
	 * hand-on (without the test: t_enqueue 1150) */
	WORKER_HANDLER_ALSO("next_request_handler_preempted", 1710,
			    E_PREEMPT(1300, 104), E_IN(1650, 104)),
	/* The same with 104 woken by reader 101 at 1105 us first (grpc's
	 * pool thread handed the call's headers), waking 101 back at 1130 (it
	 * asks for the message) and waiting for it: the loop step's pattern,
	 * a result handed back to the reader, but 104 is the request's own
	 * handler, whose work the queue does not hold (without the test:
	 * t_enqueue 1108, t_dispatch 1150) */
	WORKER_HANDLER_ALSO("next_request_handler_asked", 1710,
			    E_WAKE(1105, 101, 104, NR_WRITE, 9),
			    E_OUT(1108, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			    E_IN(1110, 104), E_WAKE(1130, 104, 101, NR_WRITE, 10),
			    E_OUT(1132, 104, .sys = NR_READ, .arg0 = 8,
				  .mode = S_IFIFO),
			    E_IN(1135, 101)),
	/* The same with 104 waiting for the GIL from 1165 us, which reader
	 * 101 lets go at 1180, the reader woken at 1140 by the front's
	 * data (201, another process, woken by the reader's window update
	 * at 1105): the reader's hand-off at 1150 is 104's way on, not the
	 * GIL holder's path to the front (without the test: t_enqueue 1105,
	 * the front's wake a pick-up through relays) */
	WORKER_HANDLER_ALSO("next_request_handler_gil", 1710,
			    E_RTLOCK(0, 101, 0x9f00, 0xa100),
			    HANDLER_FRONT_DATA),
	/* The same with 0xa000 an application's mutex, 101 and 104 passing
	 * it to each other before: no GIL, the walk goes to its holder
	 * (with any lock: t_enqueue 1710, the front's data a relay) */
	WORKER_HANDLER_ALSO("next_request_handler_mutex", 1105,
			    E_FUTEX_PASS(10, 101, 104, 0xa000),
			    E_FUTEX_PASS(20, 101, 104, 0xa000),
			    E_FUTEX_PASS(30, 104, 101, 0xa000),
			    HANDLER_FRONT_DATA),
	/* The same with request 2 read at 950 us, written by 104 too: 104
	 * serves two requests when the reader wakes it, a relay (without the
	 * test: t_enqueue 1710) */
	WORKER_HANDLER("next_request_handler_two", 1150,
		       RQ(2, 900, 950, 4150, 4250, 101, 104,
			  .t_end = 4350 * US)),
	/* Front-end process and engine process: unix socket in, pipe back. */
	{
		SC("test_cross_process", "unix_socket_pipe"),
		.steps = STEPS(E_IN(0, 101), E_IN(5, 201),
			       E_OUT(50, 201, .sys = NR_RECVMSG, .arg0 = 3,
				     .mode = S_IFSOCK),
			       E_IN(7, 102),
			       E_OUT(60, 102, .sys = NR_READ, .arg0 = 8,
				     .mode = S_IFIFO),
			       E_WAKE(1200, 101, 201, NR_SENDMSG, 9),
			       E_IN(1210, 201),
			       E_WAKE(1800, 201, 102, NR_WRITE, 4),
			       E_OUT(1820, 201, .sys = NR_RECVMSG, .arg0 = 3,
				     .mode = S_IFSOCK),
			       E_IN(1805, 102)),
		RQS(RQ(1, 1000, 1100, 1900, 2000, 101, 102)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 785,
			       [TT_ST_RUNQUEUE] = 15, [TT_ST_NET_OUT] = 100),
			{ R(complete, true), R_T(t_dispatch, 1210),
			  R(dispatch, TT_CP_DISP_PICKUP), R_T(t_token, 1800) },
			{ SEG_AT(1500, NULL, G(tid, 201), G(stage, TT_ST_CPU)) },
		}),
	},
	/*
	 * A shared semaphore (POSIX, process-shared: Triton's Python backend,
	 * tools/scenarios' shm): the engine's posts wake the relay through
	 * the engine's address of the page, the relay waits at its own.
	 * The same offset in the page: the engine's wakes are hand-offs,
	 * its post at 2000 us A's boundary (without: lock wakes, read at
	 * 1200)
	 */
	SHM_RELAY("shared_semaphore", 0x7f00a010,
		  R(dispatch, TT_CP_DISP_HANDOFF), R_T(t_dispatch, 2000),
		  R_T(t_enqueue, 1500)),
	/* The same with the relay blocked at another offset: another word,
	 * its wakes a lock's, no boundary (read) */
	SHM_RELAY("shared_other_offset", 0x7f00a018,
		  R(dispatch, TT_CP_DISP_READ), R_T(t_dispatch, 1200)),
	/*
	 * A caller and its callee (TGI's router and shard, tools/scenarios'
	 * tgi): the shard computes what the router's call sends it, so B's
	 * queue ends at the call after B was handed on (1200 us), though a
	 * busy CPU ran the shard only at 3000, and that wait is the shard's
	 * for a CPU. Preempted after its reply: the call is data to a
	 * runnable thread (without the rule: no rule, read; with the room
	 * wake at 3005 taken for a hand-off: 3005).
	 */
	CALLEE("callee_preempted", SHARD_PREEMPTED, B_HANDED,
	       (E_DATA(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),
	       R_T(t_enqueue, 1150)),
	/* Blocked on its socket: the call wakes it (without the rule: a
	 * pick-up at 3000) */
	CALLEE("callee_woken", SHARD_WAITS, B_HANDED,
	       (E_DATA(1200, 102, 201, NR_WRITE, 6),
		E_WAKE(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),
	       R_T(t_enqueue, 1150)),
	/* Blocked, then woken by the router's read of its reply at 1006 (room
	 * on the socket, no data): the call at 1200 ends its wait, as the
	 * kernel's wakeup would have had it come first (without: the room
	 * wake, a read's, is no call: a pick-up at 3000) */
	CALLEE("callee_room_woken",
	       (E_OUT(1002, 201, .sys = NR_RECVFROM, .arg0 = 3,
		      .mode = S_IFSOCK),
		E_WAKE(1006, 102, 201, NR_READ, 3)),
	       B_HANDED, (E_DATA(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),
	       R_T(t_enqueue, 1150)),
	/* The room wake at 1195 took it from its block and it ran at 1198,
	 * the call's data at 1200 (the router on the other CPU): its receive
	 * found the data as it woke, the call ended the wait (without: the
	 * room wake followed, a pick-up at the shard's run, 1198) */
	CALLEE("callee_room_raced",
	       (E_OUT(1002, 201, .sys = NR_RECVFROM, .arg0 = 3,
		      .mode = S_IFSOCK),
		E_WAKE(1195, 102, 201, NR_READ, 3), E_IN(1198, 201)),
	       B_HANDED, (E_DATA(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),
	       R_T(t_enqueue, 1150)),
	/* B handed on at 1250, after the router's call at 1200 (a call for A,
	 * 102 woken by A's reader at 1150): that call did not carry B */
	CALLEE("call_before_handoff", SHARD_PREEMPTED,
	       (E_WAKE(1150, 101, 102, NR_WRITE, 7), E_IN(1155, 102),
		E_WAKE(1250, 103, 102, NR_WRITE, 7), E_IN(1255, 102),
		E_OUT(1260, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),
		E_OUT(1270, 103, .sys = NR_FUTEX, .arg0 = 0x30)),
	       (E_DATA(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_RESUME), R_T(t_dispatch, 3000)),
	/* The shard woke a thread of its own (202) after its reply, as an
	 * engine hands its results to its queue's feeder (mpq): no answer to
	 * a caller that the call follows, no rule (read) */
	CALLEE("call_after_own_handoff",
	       (E_WAKE(1001, 201, 202, NR_FUTEX, 0x50), E_PREEMPT(1002, 201)),
	       B_HANDED, (E_DATA(1200, 102, 201, NR_WRITE, 6)),
	       R(dispatch, TT_CP_DISP_READ), R_T(t_dispatch, 1100)),
	/* A post of a semaphore in shared memory is no call: it carries no
	 * request, the woken process takes it from its ring (shm's model)
	 * when it runs: a pick-up at 3000 */
	CALLEE("call_by_semaphore",
	       (E_OUT(1002, 201, .sys = NR_FUTEX, .arg0 = 0x7f00b000)),
	       B_HANDED, (E_WAKE(1200, 102, 201, NR_FUTEX, 0x7f00b000)),
	       R(dispatch, TT_CP_DISP_PICKUP), R_T(t_dispatch, 3000)),
	/* The data came from the shard's own thread 202, which 201 had
	 * handed its last output to (an in-process I/O thread, SGLang's or
	 * vLLM's engine): no caller in another process, no call (no rule:
	 * read) */
	CALLEE("call_from_own_thread",
	       (E_WAKE(1001, 201, 202, NR_WRITE, 8), E_PREEMPT(1002, 201)),
	       B_HANDED,
	       (E_IN(1190, 202), E_DATA(1200, 202, 201, NR_WRITE, 6),
		E_OUT(1205, 202, .sys = NR_EPOLL_WAIT, .arg0 = 9)),
	       R(dispatch, TT_CP_DISP_READ)),
	/* B's turn ends at its headers, not at C's read (without: t_enqueue
	 * 1110) */
	LOOP_ROUTER("loop_router_headers", (E_COMM(1098, 102, "router")),
		    R_T(t_enqueue, 1150)),
	/* The loop woke a thread between (104, which answers nothing): its
	 * turn was no wakeless one, and the headers say nothing of it (a
	 * LitServe handler's headers go out milliseconds after its put):
	 * the next act, C's read */
	LOOP_ROUTER("loop_router_woke_other",
		    (E_OUT(5, 104, .sys = NR_FUTEX, .arg0 = 0x70),
		     E_WAKE(1120, 102, 104, NR_FUTEX, 0x70), E_IN(1122, 104),
		     E_OUT(1125, 104, .sys = NR_FUTEX, .arg0 = 0x70)),
		    R_T(t_enqueue, 1110)),
	/* The one-loop router with B alone in flight: it reads B at 1100 and
	 * calls the waiting shard at 1200 in the same turn, its headers go
	 * with the token. No hand-off before the call: the call is B's, its
	 * queue ends there (without: a pick-up when the shard ran, 3000) */
	{
		SC("test_cross_process", "loop_router_alone"),
		.steps = STEPS(
			CALLER_STEPS(SHARD_WAITS,
				     (E_SOFTIRQ(1095, UNTRACED, 102),
				      E_IN(1097, 102)),
				     (E_DATA(1200, 102, 201, NR_WRITE, 6),
				      E_WAKE(1200, 102, 201, NR_WRITE, 6))),
			E_WAKE(4000, 201, 102, NR_SENDMSG, 3),
			E_OUT(4010, 201, .sys = NR_RECVFROM, .arg0 = 3,
			      .mode = S_IFSOCK),
			E_IN(4005, 102)),
		RQS(RQ(1, 50, 100, 1050, 1060, 101, 101, .t_end = 5000 * US),
		    RQ(2, 1050, 1100, 4050, 4060, 102, 102,
		       .t_end = 5000 * US)),
		.want = WANTS({ 2, NULL,
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_CALL),
				  R_T(t_dispatch, 1200),
				  R_T(t_enqueue, 1200) } }),
	},
	/* TGI's router on tokio (tools/scenarios' tgi-rs), its threads named
	 * NAME_: TOKIO_ROUTER below */
	TOKIO_CALL("tokio_helper_answers", TOKIO, 110, TOKIO, 102, 101,
		   HELPER_ANSWERS(102), 1115),
	/* the same threads unnamed (no pool that moves tasks): 101's wake of
	 * the helper at 110 is A's hand-off */
	TOKIO_CALL("pool_unnamed", "router", 110, "router", 102, 101,
		   HELPER_ANSWERS(102), 110),
	/* a helper of another name (a thread the application started): no
	 * blocking thread of the pool, the old rules (A's hand-off where the
	 * reader let it go, its wait after the ask at 120 us) */
	TOKIO_CALL("tokio_other_helper", TOKIO, 110, "validator", 102, 101,
		   HELPER_ANSWERS(102), 120),
	/* the helper answers the reader, which calls the shard and then has
	 * 102 steal the handler's task (without tokio's workers known: the
	 * reader's wake of 102 at 3010 a pick-up, t_enqueue there) */
	TOKIO_CALL("tokio_sibling_writes", TOKIO, 110, TOKIO, 101, 102,
		   HELPER_ANSWERS(101), 1115),
	TOKIO_ROUTER("pool_unnamed_sibling", "router", 110, "router", 101, 102,
		     HELPER_ANSWERS(101), (), R(dispatch, TT_CP_DISP_PICKUP),
		     R_T(t_dispatch, 3015), R_T(t_enqueue, 3010)),
	/* the helper slept from 600 to 700 us before it woke 102: what it
	 * did after may be another request's, the wake at 1115 that one's
	 * answer; A's hand-off stays where the reader let it go (120 us) */
	TOKIO_CALL("tokio_helper_slept", TOKIO, 110, TOKIO, 102, 101,
		   (E_OUT(600, 110, .sys = NR_NANOSLEEP),
		    E_IRQ(700, UNTRACED, 110), E_IN(702, 110),
		    UNPAREN HELPER_ANSWERS(102)), 120),
	/* it waited for its next job from 600 to 700 us: it had answered A
	 * then, silently (no worker parked), and its wake at 1115 answers
	 * the job that woke it */
	TOKIO_CALL("tokio_helper_silent", TOKIO, 110, TOKIO, 102, 101,
		   HELPER_SILENT(102), 600),
	/* the same threads unnamed: a thread that owns its request may wait
	 * for its helper visibly, the rule is a pool's (A's hand-off the
	 * ask) */
	TOKIO_CALL("pool_unnamed_silent", "router", 110, "router", 102, 101,
		   HELPER_SILENT(102), 110),
	/* the reader woke 102 at 108 us (a task it queued, for 102 to steal)
	 * before it asked the helper: a worker is no helper, the ask is 110
	 * us */
	TOKIO_CALL("tokio_sibling_first", TOKIO, 110, TOKIO, 101, 102,
		   (E_WAKE(108, 101, 102, NR_FUTEX, 0x61), E_IN(109, 102),
		    E_OUT(112, 102, .sys = NR_FUTEX, .arg0 = 0x61),
		    UNPAREN HELPER_ANSWERS(101)), 1115),
	/* the helper woke 103, no worker (a thread of the application's), at
	 * 600 us: no answer; its answer is its wake of 102 at 1115 */
	TOKIO_CALL("tokio_helper_wakes_other", TOKIO, 110, TOKIO, 102, 101,
		   (E_OUT(5, 103, .sys = NR_FUTEX, .arg0 = 0x70),
		    E_WAKE(600, 110, 103, NR_FUTEX, 0x70), E_IN(605, 103),
		    E_OUT(610, 103, .sys = NR_FUTEX, .arg0 = 0x70),
		    UNPAREN HELPER_ANSWERS(102)), 1115),
	/* a blocking thread of another tokio process (310, an engine's) that
	 * the reader woke is no helper of its pool: it waits at 600 us, and
	 * 102 runs at 1118 for a client's data; A's hand-off stays where the
	 * reader let it go (120 us) */
	TOKIO_CALL("tokio_other_process", TOKIO, 310, TOKIO, 102, 101,
		   (E_OUT(600, 310, .sys = NR_FUTEX, .arg0 = 0x60),
		    E_SOFTIRQ(1115, UNTRACED, 102), E_IN(1118, 102)), 120),
	/* ... and a worker of that process (waiting in epoll at 600 us) that
	 * wakes 102, a writer of requests, at 900: the reader handed A to
	 * another process there (110 us), no wake of tokio's own */
	TOKIO_CALL("tokio_other_process_worker", TOKIO, 310, TOKIO, 101, 102,
		   (E_OUT(600, 310, .sys = NR_EPOLL_WAIT, .arg0 = 4),
		    E_IRQ(890, UNTRACED, 310), E_IN(892, 310),
		    E_WAKE(900, 310, 102, NR_WRITE, 9), E_IN(905, 102),
		    E_OUT(910, 102, .sys = NR_FUTEX, .arg0 = 0x61),
		    E_OUT(915, 310, .sys = NR_EPOLL_WAIT, .arg0 = 4),
		    E_SOFTIRQ(1115, UNTRACED, 101), E_IN(1118, 101)), 110),
	/* the helper's first wake went to 310, a worker of another tokio
	 * process, at 600 us: no answer to its pool; its answer is its wake
	 * of 102 at 1115 */
	TOKIO_CALL("tokio_helper_wakes_other_pool", TOKIO, 110, TOKIO, 102, 101,
		   (E_OUT(5, 310, .sys = NR_EPOLL_WAIT, .arg0 = 4),
		    E_WAKE(600, 110, 310, NR_WRITE, 9), E_IN(605, 310),
		    E_OUT(610, 310, .sys = NR_EPOLL_WAIT, .arg0 = 4),
		    E_COMM(0, 310, TOKIO), UNPAREN HELPER_ANSWERS(102)), 1115),
	/* 102, woken by a client at 1190, calls the shard at 1200 before the
	 * helper answers at 1250: its answer came after the call that carried
	 * A, no answer of A's validation (A's hand-off stays at 120 us) */
	TOKIO_CALL("tokio_answer_after_call", TOKIO, 110, TOKIO, 102, 101,
		   (E_SOFTIRQ(1190, UNTRACED, 102), E_IN(1192, 102),
		    E_WAKE(1250, 110, 102, NR_WRITE, 9), E_IN(1252, 102),
		    E_OUT(1255, 110, .sys = NR_FUTEX, .arg0 = 0x60),
		    E_OUT(1260, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4)), 120),
	/* the reader read B at 106 us before its ask at 110: the ask is B's
	 * (a task reads and asks in one poll), A's hand-off where the reader
	 * turned to B */
	TOKIO_ROUTER("tokio_ask_after_other", TOKIO, 110, TOKIO, 102, 101,
		     HELPER_ANSWERS(102),
		     (, RQ(2, 104, 106, 0, 0, 101, 0)),
		     R(dispatch, TT_CP_DISP_CALL), R_T(t_dispatch, 1200),
		     R_T(t_enqueue, 106)),
	/* a blocking thread that computes A itself (inference run with
	 * spawn_blocking) answers the reader with its token: that answer came
	 * after A was taken up, no helper's; A's hand-off stays the ask, its
	 * pick-up the engine's run (115 us) */
	{
		SC("test_cross_process", "tokio_blocking_engine"),
		.steps = STEPS(
			E_COMM(0, 101, TOKIO), E_COMM(0, 110, TOKIO),
			E_IN(0, 101),
			E_IN(0, 110),
			E_OUT(12, 110, .sys = NR_FUTEX, .arg0 = 0x60),
			E_OUT(30, 101, .sys = NR_EPOLL_WAIT, .arg0 = 4),
			E_SOFTIRQ(95, UNTRACED, 101), E_IN(97, 101),
			E_WAKE(110, 101, 110, NR_FUTEX, 0x60), E_IN(115, 110),
			E_OUT(120, 101, .sys = NR_EPOLL_WAIT, .arg0 = 4),
			E_WAKE(1115, 110, 101, NR_WRITE, 9), E_IN(1118, 101),
			E_OUT(1120, 110, .sys = NR_FUTEX, .arg0 = 0x60)),
		RQS(RQ(1, 50, 100, 1125, 1130, 101, 101, .t_end = 5000 * US,
		       .t_headers = 105 * US)),
		.want = WANTS({ 1, NULL, { R(complete, true),
					   R(dispatch, TT_CP_DISP_PICKUP),
					   R_T(t_dispatch, 115),
					   R_T(t_enqueue, 110) } }),
	},
	/*
	 * The one-loop router reads B, C and D (1100-1120 us) and sends B's
	 * and D's headers (1150, 1160) before its calls: 1170 for the
	 * running batch, answered at 1800 (data: the loop runs on), and 1900
	 * with B, C and D, answered at 4000. The loop's turns go to B (1170)
	 * and C (1900), D's after C's, but the handlers had let B and D go at
	 * their headers, waking nobody (without: B at its turn, 1170; D,
	 * whose turn is past the call, at the first wake after its read,
	 * 1170)
	 */
	LOOP_ROUTER_TURNS("loop_router_turns_after_headers", 1150, 1150),
	/* B's headers at 1185, after the call for the running batch: that
	 * call is no hand-off of B's (B went with the call at 1900), its
	 * headers are (without: the call at 1170, its turn) */
	LOOP_ROUTER_TURNS("loop_router_call_before_headers", 1185, 1185),
	/* 201 is the shard's I/O thread (ZMQ's, vLLM's engine process): it
	 * relays the call at 3600 to compute thread 202, which answers
	 * through it; the walk enters 201 from its own process, a relay, no
	 * callee, however long its run (600 us): no rule finds 202's take
	 * (read; without the test: the call at 1200) */
	{
		SC("test_cross_process", "call_to_relay"),
		.steps = STEPS(
			CALLER_STEPS(SHARD_PREEMPTED, B_HANDED,
				     (E_DATA(1200, 102, 201, NR_WRITE, 6))),
			E_IN(0, 202),
			E_OUT(5, 202, .sys = NR_FUTEX, .arg0 = 0x50),
			E_WAKE(3600, 201, 202, NR_FUTEX, 0x50),
			E_OUT(3610, 201, .sys = NR_FUTEX, .arg0 = 0x60),
			E_IN(3605, 202), E_WAKE(4000, 202, 201, NR_FUTEX, 0x60),
			E_OUT(4008, 202, .sys = NR_FUTEX, .arg0 = 0x50),
			E_IN(4005, 201), E_WAKE(4010, 201, 102, NR_SENDMSG, 3),
			E_OUT(4020, 201, .sys = NR_RECVFROM, .arg0 = 3,
			      .mode = S_IFSOCK),
			E_IN(4015, 102), E_WAKE(4020, 102, 103, NR_FUTEX, 0x30),
			E_OUT(4030, 102, .sys = NR_EPOLL_WAIT, .arg0 = 4),
			E_IN(4025, 103)),
		CALLER_RQS,
		.want = WANTS({ 2,
				NULL,
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_READ) } }),
	},
	/* B, C, then A queued behind iteration 2 (build_busy_engine). */
	BUSY_ENGINE("iteration_boundary", false),
	/* the same with tokio's names, the engine a blocking thread
	 * (spawn_blocking) and the writers workers: its wakes of them are
	 * its iterations' ends, not the runtime's (without: A's hand-off
	 * lost, t_dispatch at its read) */
	BUSY_ENGINE("iteration_boundary_tokio", true),
	/* An event loop and a busy engine sharing a GIL (build_shared_loop). */
	{
		SC("test_busy_engine_shared_loop", "gil_round_trip"),
		.build = build_shared_loop,
		RQS(RQ(1, 50, 100, 915, 950, 101, 101, .t_end = 5000 * US),
		    RQ(2, 2200, 2300, 3915, 3950, 101, 101, .t_end = 5000 * US)),
		.want = WANTS(
			{
				1,
				NULL,
				{ R(complete, true), R_T(t_dispatch, 120),
				  R(dispatch, TT_CP_DISP_PICKUP) },
			},
			{
				2,
				STAGES([TT_ST_NET_IN] = 90, [TT_ST_RUNQUEUE] = 24,
				       [TT_ST_QUEUE] = 590, [TT_ST_CPU] = 1011,
				       [TT_ST_NET_OUT] = 35),
				{ R(complete, true), R_T(t_dispatch, 2900),
				  R_T(t_enqueue, 2310),
				  R(dispatch, TT_CP_DISP_HANDOFF),
				  R_T(t_token, 3900) },
			}),
	},
	/* A GIL passed hundreds of times for one request: the GIL wakes by
	 * the reader are followed, not taken as pick-ups, and the writer's
	 * wakes were all through the lock. */
	{
		SC("test_gil_lock", "gil_100"),
		.build = build_gil,
		.arg = { 100, 0x6000, 0x6000 },
		RQS(RQ(1, 1000, 1100, GIL_FW(100), GIL_FW(100) + 50, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 100 * 18 + 118,
			       [TT_ST_RUNQUEUE] = 10 + 100 * 4 + 2,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R_T(t_dispatch, 1210),
			  R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_token, GIL_FW(100)) },
		}),
		.stats = { STAT(lock_words, 1) },
	},
	/* Passed twice, among ten requests (nine not walked): few waits per
	 * request, but each thread both waits on the word and wakes it. */
	{
		SC("test_gil_lock", "gil_2_of_10"),
		.build = build_gil,
		.arg = { 2, 0x6000, 0x6000 },
		.nrq = 10,
		.rqs = { RQ(1, 1000, 1100, GIL_FW(2), GIL_FW(2) + 50, 101,
			    101) },
		.want = WANTS({
			1,
			NULL,
			{ R_T(t_dispatch, 1210), R_STAGE(TT_ST_QUEUE, 0),
			  R_STAGE(TT_ST_CPU, 2 * 18 + 118) },
		}),
		.stats = { STAT(lock_words, 1) },
	},
	/* one word each way, waited on hundreds of times for one request */
	{
		SC("test_gil_lock", "two_words_100"),
		.build = build_gil,
		.arg = { 100, 0x6100, 0x6200 },
		RQS(RQ(1, 1000, 1100, GIL_FW(100), GIL_FW(100) + 50, 101, 101)),
		.want = WANTS({ 1, NULL, { R_T(t_dispatch, 1210) } }),
		.stats = { STAT(lock_words, 2) },
	},
	/* one word each way, each waited on by one thread: hand-offs; the
	 * reader's first is the pick-up, the later ones (after it let the
	 * request go, round trips with the engine of under RELAY_CPU_NS) are
	 * walked, nothing is queued */
	{
		SC("test_gil_lock", "two_words_2_of_10"),
		.build = build_gil,
		.arg = { 2, 0x6100, 0x6200 },
		.nrq = 10,
		.rqs = { RQ(1, 1000, 1100, GIL_FW(2), GIL_FW(2) + 50, 101,
			    101) },
		.want = WANTS({
			1,
			NULL,
			{ R_T(t_dispatch, 1210), R_T(t_enqueue, 1200),
			  R(dispatch, TT_CP_DISP_PICKUP),
			  R_STAGE(TT_ST_QUEUE, 0), R_STAGE(TT_ST_CPU, 154),
			  R_STAGE(TT_ST_RUNQUEUE, 20) },
		}),
		.stats = { STAT(lock_words, 0) },
	},
	/* The fallbacks when no rule finds the dispatch (docs/design.md
	 * §4.4). A busy engine preempted when the reader let the request go
	 * (no wake: it polls its queue) takes it up when it runs again. */
	{
		SC("test_fallbacks", "resume"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_PREEMPT(200, 102),
			       E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(500, 102),
			       E_WAKE(1500, 102, 101, NR_WRITE, 9),
			       E_IN(1505, 101)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 200 + 1000 + 15,
			       [TT_ST_QUEUE] = 200, [TT_ST_RUNQUEUE] = 5,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R_T(t_dispatch, 500),
			  R_T(t_enqueue, 300),
			  R(dispatch, TT_CP_DISP_RESUME) },
		}),
	},
	/* The resume rule past an interpreter lock: engine 202 runs in a
	 * process of its own (vLLM's EngineCore behind its API's loop 101),
	 * preempted at 200 us, and hands its token to its output thread 203
	 * through its GIL at 1400 us. Its run at 500 us, after the loop let the
	 * request go at 300 us, takes the request up: the lock is not the
	 * loop's. */
	{
		SC("test_fallbacks", "resume_past_gil_other_process"),
		.steps = STEPS(ENGINE_BEHIND_GIL(202, 203)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),
		.want = WANT_DISPATCH(1, 500, 300, RESUME),
	},
	/* The same engine in the loop's own process (102, 103 beside 101):
	 * which of them runs is the GIL's doing, no resume */
	{
		SC("test_fallbacks", "no_resume_past_own_gil"),
		.steps = STEPS(ENGINE_BEHIND_GIL(102, 103)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),
		.want = WANT_DISPATCH(1, 100, 100, READ),
	},
	/* The same engine preempted since before the read (80 us): no GIL
	 * kept it from the request, a CPU did; its run at 500 took it up
	 * (TensorRT-LLM's executor beside a compile) */
	{
		SC("test_fallbacks", "resume_preempted_before_read"),
		.steps = STEPS(ENGINE_BEHIND_GIL_AT(102, 103, 80)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),
		.want = WANT_DISPATCH(1, 500, 300, RESUME),
	},
	/* The same engine, the loop running on: it reads request 2 at
	 * 650 us, more than LOOP_BATCH_NS after request 1 (Node runs each
	 * handler at its read), and wakes I/O thread 103, which answers, at
	 * 700: request 1 went before request 2's read, not at that wake */
	{
		SC("test_fallbacks", "handler_at_its_read"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, LOOP_READS_ON),
		LOOP_READS_ON_RQS,
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* The same with request 2's body read from 620 us (Node reads a long
	 * prompt in 64 KB reads): request 1 went before the loop began to
	 * read it (without: at its last read, 650) */
	{
		SC("test_fallbacks", "handler_before_long_read"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, LOOP_READS_ON),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101),
		    RQ(2, 600, 650, 0, 0, 101, 0, .t_first_read = 620 * US)),
		.want = WANT_DISPATCH(1, 900, 620, RESUME),
	},
	/* ... with request 3 read at 80 us, in request 1's batch (its
	 * headers at 300: no share of the loop's CPU): their handlers ran in
	 * the loop's next turn, which may have read a part of request 2
	 * (asyncio reads every ready socket first): request 1 went before
	 * request 2's last read, 650 (without: its first, 630) */
	{
		SC("test_fallbacks", "batch_before_long_read"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, LOOP_READS_ON),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101),
		    RQ(3, 40, 80, 0, 0, 101, 101, .t_headers = 300 * US),
		    RQ(2, 600, 650, 0, 0, 101, 0, .t_first_read = 630 * US)),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* The same with the loop preempted from 150 to 600 us: 50 us of its
	 * CPU between the reads, one epoll batch whose handlers run after
	 * it: request 1 goes at the wake at 700 (without: at 2's read, as
	 * if its handler had run in the gap) */
	{
		SC("test_fallbacks", "reads_split_by_preemption"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_PREEMPT(150, 101),
			       E_IN(600, 101), LOOP_READS_ON),
		LOOP_READS_ON_RQS,
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* handler_at_its_read's loop running CPython, request 1 a long
	 * prompt, request 2's bytes in the kernel by 60 us, before request
	 * 1's read, on a connection that served one before: one poll returned
	 * both, and asyncio reads all it polled before it runs a handler, the
	 * 550 us between the reads request 1's parse (h11 parses a long
	 * prompt for 1-2 ms): request 1 goes at the wake at 700 (without: at
	 * 2's read, 650) */
	{
		SC("test_fallbacks", "polled_reads_asyncio"),
		.steps = POLLED_STEPS(),
		POLLED_READS_RQS(.conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* The same with request 2 its connection's first: a later turn of the
	 * loop accepted it, after request 1's handler */
	{
		SC("test_fallbacks", "polled_reads_new_conn"),
		.steps = POLLED_STEPS(),
		POLLED_READS_RQS(.conn_reused = false),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... or request 1 a 64-byte prompt: 550 us are no parse of it, a
	 * handler's run (a loop that ran its engine's step between its poll
	 * and its reads: vLLM V0's) */
	{
		SC("test_fallbacks", "polled_reads_short"),
		.steps = POLLED_STEPS(),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101, .bytes_in = 64),
		    RQ(2, 60, 650, 0, 0, 101, 0, .conn_reused = true)),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... or the loop Node's, which runs a handler at its read */
	{
		SC("test_fallbacks", "polled_reads_node"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, LOOP_READS_ON),
		POLLED_READS_RQS(.conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... or request 2 in after request 1's read (at 120 us): a later
	 * poll returned it */
	{
		SC("test_fallbacks", "polled_reads_late"),
		.steps = POLLED_STEPS(),
		RQS(POLLED_RQ1,
		    RQ(2, 120, 650, 0, 0, 101, 0, .conn_reused = true)),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* The same with request 2's read at 650 us the rest of a body begun
	 * at 40, on a new connection, the loop waiting from 45 to 90 us:
	 * uvicorn stops polling a socket whose body passed 64 KB until its
	 * handler asks for more, which it did in a turn before the poll that
	 * returned both */
	{
		SC("test_fallbacks", "polled_reads_rest"),
		.steps = POLLED_STEPS(E_OUT(45, 101, .sys = NR_EPOLL_WAIT,
						  .arg0 = 3),
				      E_IN(90, 101)),
		POLLED_READS_RQS(.conn_reused = false, .t_first_read = 40 * US),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* ... but that body begun at 90 us, after request 3's read at 80
	 * began the batch: its handler asked for the rest after the batch,
	 * a later poll returned it */
	{
		SC("test_fallbacks", "polled_reads_rest_in_batch"),
		.steps = POLLED_STEPS(),
		POLLED_READS_3_RQS(RQ(3, 30, 80, 0, 0, 101, 0),
				   .t_first_read = 90 * US),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... or request 3's headers sent at 300 us, between the reads: a
	 * handler ran, the loop polled again */
	{
		SC("test_fallbacks", "polled_reads_headers"),
		.steps = POLLED_STEPS(),
		POLLED_READS_3_RQS(RQ(3, 30, 80, 0, 0, 101, 101,
				      .t_headers = 300 * US),
				   .conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... or request 3, read at 80 us, handed on at 300 (a wake of 104)
	 * before request 2's read: the loop ran handlers between, polled
	 * again */
	{
		SC("test_fallbacks", "polled_reads_handed_on"),
		.steps = POLLED_STEPS(UNPAREN LOOP_WOKE(300)),
		POLLED_READS_3_RQS(RQ(3, 30, 80, 0, 0, 101, 0),
				   .conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* polled_reads_asyncio with the loop's polls recorded (from 90 us
	 * on), one returning at 400, between the reads: two polls' reads,
	 * which tells nothing of the handlers (aiohttp runs those of a poll's
	 * reads after the next poll's reads): the CPU between tells */
	{
		SC("test_fallbacks", "polled_reads_poll_between"),
		.steps = POLLED_STEPS(E_POLL(90, 101), E_POLL(400, 101)),
		POLLED_READS_RQS(.conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* polled_reads_new_conn with the loop's polls recorded and none
	 * between the reads: one poll's, whatever the connection (aiohttp
	 * reads each body's rest at the next poll, before any handler ran) */
	{
		SC("test_fallbacks", "polled_reads_no_poll_between"),
		.steps = POLLED_STEPS(E_POLL(90, 101)),
		POLLED_READS_RQS(.conn_reused = false),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* ... or the loop Node's: one poll's reads, a handler run at each */
	{
		SC("test_fallbacks", "polled_reads_node_polls"),
		.steps = STEPS(E_POLL(90, 101), LOOP_ENGINE_PREEMPTED,
			       LOOP_READS_ON),
		POLLED_READS_RQS(.conn_reused = false),
		.want = WANT_DISPATCH(1, 900, 650, RESUME),
	},
	/* ... but the loop's first recorded poll at 400 us, after request 1's
	 * read (it was no reader of a traced connection before): whether one
	 * returned before is unknown, the CPU between tells */
	{
		SC("test_fallbacks", "polled_reads_polls_from_later"),
		.steps = POLLED_STEPS(E_POLL(400, 101)),
		POLLED_READS_RQS(.conn_reused = true),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* polled_reads_new_conn with the loop's polls recorded, those that
	 * returned nothing too (one at 20 us): request 2 read 50 us of CPU
	 * after the first poll since request 1's read, no more than a
	 * handler's start: no handler ran before it (aiohttp runs a poll's
	 * handlers only after the second poll), one batch */
	POLLED_NEW_CONN("polled_reads_at_poll", 700, E_POLL_NONE(20, 101),
			E_POLL(90, 101), E_POLL(600, 101)),
	/* ... but the loop handed something on at 620 us (a wake of 104),
	 * between the poll and the read: a handler ran */
	POLLED_NEW_CONN("polled_reads_at_poll_handed_on", 650,
			UNPAREN LOOP_WOKE(620), E_POLL_NONE(20, 101),
			E_POLL(90, 101), E_POLL(600, 101)),
	/* ... or that poll the second since the read (one returned nothing
	 * at 300 us): uvicorn and aiohttp ran the handlers by then */
	POLLED_NEW_CONN("polled_reads_at_second_poll", 650,
			E_POLL_NONE(20, 101), E_POLL(90, 101),
			E_POLL_NONE(300, 101), E_POLL(600, 101)),
	/* ... or 150 us of CPU after it: a handler's (uvicorn runs them
	 * after the first poll, before its reads) */
	POLLED_NEW_CONN("polled_reads_after_poll", 650, E_POLL_NONE(20, 101),
			E_POLL(90, 101), E_POLL(500, 101)),
	/* ... or the loop's polls recorded only from 600 us on (it was no
	 * reader of a traced connection before): whether one returned
	 * between the reads is unknown */
	POLLED_NEW_CONN("polled_reads_at_poll_polls_from_later", 650,
			E_POLL(600, 101), E_POLL_NONE(1110, 101)),
	/* ... or no poll that returned nothing recorded (an older recorder
	 * left them out): the first poll seen may be a later one */
	POLLED_NEW_CONN("polled_reads_at_poll_unknown", 650, E_POLL(90, 101),
			E_POLL(600, 101)),
	/* Go channels (docs/design.md §4.10): a busy engine takes the
	 * reader's element from the channel's buffer at a step's end, no wake
	 * anywhere: the receive is the dispatch, the send the enqueue. */
	{
		SC("test_go_channel", "take"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102),
			       CHAN_SEND(0),
			       E_CHAN(800, 102, RECV, 0xc0, 1),
			       CHAN_TOKEN(1500)),
		RQS(CHAN_RQ(1500)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 200 + 700 + 15,
			       [TT_ST_QUEUE] = 500, [TT_ST_RUNQUEUE] = 5,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R_T(t_dispatch, 800),
			  R_T(t_enqueue, 300),
			  R(dispatch, TT_CP_DISP_CHANNEL) },
		}),
	},
	/* Two requests' elements in the buffer: the first receive takes the
	 * older (another reader's), the second this request's. */
	{
		SC("test_go_channel", "fifo"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),
			       E_CHAN(250, 103, SEND, 0xc0, 0),
			       CHAN_SEND(1),
			       E_CHAN(800, 102, RECV, 0xc0, 2),
			       E_CHAN(820, 102, RECV, 0xc0, 1),
			       CHAN_TOKEN(1500)),
		RQS(CHAN_RQ(1500)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R_T(t_dispatch, 820),
			  R_T(t_enqueue, 300), R_STAGE(TT_ST_QUEUE, 520),
			  R(dispatch, TT_CP_DISP_CHANNEL) },
		}),
	},
	/* The drain loop is preempted between this request's take and the
	 * next: the batch is admitted at its last take, the wait queued. */
	{
		SC("test_go_channel", "batch_end"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),
			       CHAN_SEND(0),
			       E_CHAN(800, 102, RECV, 0xc0, 1),
			       E_PREEMPT(810, 102),
			       E_CHAN(900, 103, SEND, 0xc0, 0),
			       E_IN(1200, 102),
			       E_CHAN(1210, 102, RECV, 0xc0, 1),
			       CHAN_TOKEN(1500)),
		RQS(CHAN_RQ(1500)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 200 + 290 + 15,
			       [TT_ST_QUEUE] = 910, [TT_ST_RUNQUEUE] = 5,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R_T(t_dispatch, 1210),
			  R_T(t_enqueue, 300),
			  R(dispatch, TT_CP_DISP_CHANNEL) },
		}),
	},
	/* After the take, the engine's hand-off to another request (the
	 * step's tokens, a burst split by a preemption) is not a boundary:
	 * the take was the admission. */
	{
		SC("test_go_channel", "take_before_handoff"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),
			       E_OUT(40, 103, .sys = NR_FUTEX, .arg0 = 0x50),
			       CHAN_SEND(0),
			       E_CHAN(800, 102, RECV, 0xc0, 1),
			       E_WAKE(1400, 102, 103, NR_FUTEX, 0x50),
			       E_IN(1405, 103),
			       CHAN_TOKEN(1700)),
		RQS(CHAN_RQ(1700),
		    RQ(2, 20, 30, 1410, 1420, 103, 103, .t_end = 3000 * US)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R_T(t_dispatch, 800),
			  R_T(t_enqueue, 300),
			  R(dispatch, TT_CP_DISP_CHANNEL) },
		}),
	},
	/* The engine took only another reader's element: not this request's
	 * dispatch (a later send of this reader's is never matched to it). */
	{
		SC("test_go_channel", "other_request"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),
			       E_CHAN(250, 103, SEND, 0xc0, 0),
			       E_CHAN(300, 101, SEND, 0xc1, 0),
			       E_OUT(310, 101, .sys = NR_FUTEX, .arg0 = 0x10),
			       E_CHAN(800, 102, RECV, 0xc0, 1),
			       CHAN_TOKEN(1500)),
		RQS(CHAN_RQ(1500)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R_T(t_enqueue, 100),
			  R(dispatch, TT_CP_DISP_READ) },
		}),
	},
	/* Woken for another request just before this one was let go, and
	 * still runnable then: it takes this one up too when it runs. */
	{
		SC("test_fallbacks", "resume_after_other_wake"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 103),
			       E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x20),
			       E_WAKE(250, 103, 102, NR_FUTEX, 0x20),
			       E_OUT(260, 103, .sys = NR_EPOLL_WAIT, .arg0 = 4),
			       E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(400, 102),
			       E_WAKE(1500, 102, 101, NR_WRITE, 9),
			       E_IN(1505, 101)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R_T(t_dispatch, 400),
			  R_T(t_enqueue, 300), R_STAGE(TT_ST_QUEUE, 100),
			  R(dispatch, TT_CP_DISP_RESUME) },
		}),
	},
	/* An event loop reads two requests, then runs their handlers in
	 * turn, each ending with a wake of an I/O thread (which answers: it
	 * hands the loop what comes back, at 2500 us): the second request's
	 * hand-off is the second wake, not the first after its read
	 * (loopfifo.c); the engine, preempted then, takes it up when it runs
	 * again. */
	{
		SC("test_fallbacks", "loop_turns"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300), IO_HOP(500),
			       LOOP_TURNS_TAIL),
		LOOP_TURNS_RQ_WANT(500),
	},
	/* loop_turns with the second request's headers sent at 250 us, its
	 * loop waking nobody since its read: its handler let it go then,
	 * whatever turn the later wake gives it (without: its turn, 500) */
	{
		SC("test_fallbacks", "loop_turns_headers_first"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300), IO_HOP(500),
			       LOOP_TURNS_TAIL),
		LOOP_TURNS_HEADERS(0, 250, 250),
	},
	/* loop_turns with the first request's headers at 310 us, after its
	 * turn (300), and the second's at 450, not together (aiohttp's
	 * handler sends its headers once it put the request): the second's
	 * handler ran after the first's and woke nobody (an mp.Queue's
	 * feeder busy), the wake at 500 is a later one's (without: its turn,
	 * 500) */
	{
		SC("test_fallbacks", "loop_turns_headers_after_turn"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300), IO_HOP(500),
			       LOOP_TURNS_TAIL),
		LOOP_TURNS_HEADERS(310, 450, 450),
	},
	/* An event loop reads two requests, and their handlers send their
	 * headers at 200 and 250 us, waking nobody (the engine busy), before
	 * the loop's one wake at 300: the second request, which the turns
	 * leave "after the last", was let go at its headers (without: where
	 * the loop blocked, 520) */
	{
		SC("test_fallbacks", "loop_turns_headers_before_last"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300),
			       LOOP_TURNS_TAIL),
		LOOP_TURNS_HEADERS(200, 250, 250),
	},
	/* ... the first request's headers at 310 us, after the turn, the
	 * second's at 400, the loop waking nobody between: the second was
	 * let go at its headers (without: where the loop blocked, 520) */
	{
		SC("test_fallbacks", "loop_turns_headers_after_last"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300),
			       LOOP_TURNS_TAIL),
		LOOP_TURNS_HEADERS(310, 400, 400),
	},
	/*
	 * loop_turns with the I/O thread's answer four wakes away: 103 wakes
	 * only 140, which wakes 141, which wakes 142, which wakes the loop
	 * (tools/scenarios' mpq: the API's feeder thread, the model, its
	 * feeder, the API's reader thread, the loop). Its wakes hand work on
	 * all the same: the second request's is its turn, 500 us (looking
	 * two wakes deep: none is, and its queue starts at the loop's block)
	 */
	{
		SC("test_fallbacks", "loop_turns_deep_answer"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, IO_HOP(300), IO_HOP(500),
			       E_OUT(520, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(600, 102), RELAY_ON(700, 140, 141),
			       RELAY_ON(710, 141, 142), RELAY_ON(720, 142, 101),
			       E_IN(730, 101),
			       E_OUT(735, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(1500, 102, 101, NR_WRITE, 9),
			       E_IN(1505, 101)),
		LOOP_TURNS_RQ_WANT(500),
	},
	/* loop_turns with the loop's ZMQ sends seen (record's message
	 * probes): the first handler's send at 300 us woke nobody (ZMQ's I/O
	 * thread was awake), the second's at 495 us did. Each request's turn
	 * is its send: the second's is 495 us, not the one wake's turn */
	{
		SC("test_msg_send", "loop_turns"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(300, 101),
			       E_MSG(495, 101), IO_HOP(500), LOOP_TURNS_TAIL),
		LOOP_TURNS_RQ_WANT(495),
	},
	/* handler_at_its_read's loop, its handlers' sends seen, the first
	 * request's at 700 us, after the second's read (aiohttp reads the
	 * next request before it runs the last one's handler), the second's
	 * at 750 us. Reads 550 us apart are no batches then: each request's
	 * turn is its send (not "before the next read", 650 us) */
	{
		SC("test_msg_send", "no_batches"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(700, 101),
			       E_MSG(750, 101), IO_HOP(760),
			       E_IN(900, 102),
			       E_OUT(1000, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(1090, 103), E_WAKE(1100, 103, 101, NR_WRITE, 7),
			       E_OUT(1105, 103, .sys = NR_FUTEX, .arg0 = 0x30),
			       E_IN(1110, 101),
			       E_OUT(1200, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(1500, 102, 101, NR_WRITE, 9),
			       E_IN(1505, 101)),
		RQS(RQ(1, 50, 100, 1520, 1530, 101, 101),
		    RQ(2, 600, 650, 0, 0, 101, 0)),
		.want = WANT_DISPATCH(1, 900, 700, RESUME),
	},
	/* A loop that reads long prompts (uvicorn parsing 200 KB bodies):
	 * the first two requests read at 100 and 150 us, the third at 800,
	 * 650 us of the loop's CPU later with no send between: that CPU was
	 * the reads' own, the three one batch, whose handlers send at 850,
	 * 900 and 950. The second was handed on at its send (without the
	 * test: at its share of the CPU up to the third read, 800) */
	{
		SC("test_msg_send", "long_reads_one_batch"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(850, 101),
			       E_MSG(900, 101), E_MSG(950, 101), IO_HOP(955),
			       E_OUT(1000, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       ENGINE_ANSWERS(1100), E_IN(2490, 103),
			       E_WAKE(2500, 103, 101, NR_WRITE, 6)),
		RQS(RQ(1, 50, 100, 2000, 2010, 101, 101),
		    RQ(2, 120, 150, 1520, 1530, 101, 101),
		    RQ(3, 700, 800, 0, 0, 101, 0)),
		.want = WANT_DISPATCH(2, 1100, 900, RESUME),
	},
	/* loop_turns with the first request's body long: its reads began at
	 * 100 us, before the second's whole request (150), and ended at 200,
	 * the loop reading on in between: its handler, begun at its headers,
	 * runs first (aiohttp). The second's turn is the second send, 495 us
	 * (without the order: the first, 300) */
	{
		SC("test_msg_send", "long_body_turn_order"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(300, 101),
			       E_MSG(495, 101), IO_HOP(500), LOOP_TURNS_TAIL),
		LONG_BODY_RQS,
		.want = WANT_DISPATCH(2, 600, 495, RESUME),
	},
	/* The same with the loop waiting at 160-180 us, between the first
	 * body's reads: it ran its handlers' turns there, the first handler
	 * waits for its body's end, after the second's read: the second's
	 * turn is the first send, 300 us */
	{
		SC("test_msg_send", "long_body_waited"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED,
			       E_OUT(160, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_SOFTIRQ(180, UNTRACED, 101), E_IN(185, 101),
			       E_MSG(300, 101), E_MSG(495, 101), IO_HOP(500),
			       LOOP_TURNS_TAIL),
		LONG_BODY_RQS,
		.want = WANT_DISPATCH(2, 600, 300, RESUME),
	},
	/* The same with a third request read at 60 us, whose handler sent at
	 * 170, between the first body's reads: the loop ran handlers there,
	 * the second's turn is the send at 300 us */
	{
		SC("test_msg_send", "long_body_sent_between"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(170, 101),
			       E_MSG(300, 101), E_MSG(495, 101), IO_HOP(500),
			       LOOP_TURNS_TAIL),
		RQS(RQ(1, 50, 200, 2000, 2010, 101, 101,
		       .t_first_read = 100 * US),
		    RQ(2, 120, 150, 1520, 1530, 101, 101),
		    RQ(3, 40, 60, 0, 0, 101, 0)),
		.want = WANT_DISPATCH(2, 600, 300, RESUME),
	},
	/* preempted_engine's reader handing X and A to ZMQ (at 120 and 1200
	 * us), A before it blocks at 1300 us: its send is the hand-off, the
	 * queue starts there */
	{
		SC("test_msg_send", "reader_send"),
		.steps = STEPS(
			PREEMPTED_ENGINE, E_MSG(120, 101), E_MSG(1200, 101)),
		RQS(HANDOFF_X_A),
		.want = SENT_A_WANT,
	},
	/* The same with X read by another thread: A's reader reads A only
	 * (no turns to take), its send at 1200 us is still A's hand-off */
	{
		SC("test_msg_send", "reader_send_one"),
		.steps = STEPS(
			PREEMPTED_ENGINE, E_MSG(1200, 101)),
		RQS(RQ(1, 50, 100, 1520, 1560, 110, 111, .t_end = 5000 * US),
		    RQ(2, 1000, 1100, 2050, 2100, 101, 112,
		       .t_end = 5000 * US)),
		.want = SENT_A_WANT,
	},
	/* A loop that blocks between its handlers (aiohttp awaits): the
	 * first request's send at 300 us, a block at 320 us, the second's send
	 * at 700 us. The second was handed on at its send, not at the block
	 * nor at the first send after its read */
	{
		SC("test_msg_send", "loop_blocks_before_turn"),
		.steps = STEPS(LOOP_ENGINE_PREEMPTED, E_MSG(300, 101),
			       E_OUT(320, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(590, 103), E_WAKE(600, 103, 101, NR_WRITE, 7),
			       E_OUT(605, 103, .sys = NR_FUTEX, .arg0 = 0x30),
			       E_IN(610, 101), E_MSG(700, 101),
			       E_OUT(720, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       ENGINE_ANSWERS(900)),
		LOOP_TWO_RQS,
		.want = WANT_DISPATCH(2, 900, 700, RESUME),
	},
	/* A pick-up of two requests through ZMQ's I/O thread 103, woken once,
	 * by the first send (300 us): the second request's send (500 us) woke
	 * nobody. The engine, woken at 320 us, runs at 800 us and takes both:
	 * the second was handed on at its own send */
	{
		SC("test_msg_send", "pickup_after_own_send"),
		.steps = STEPS(RELAY_ASLEEP,
			       E_MSG(300, 101), E_WAKE(301, 101, 103, NR_WRITE, 6),
			       E_IN(305, 103), E_WAKE(320, 103, 102, NR_FUTEX, 0x40),
			       E_OUT(325, 103, .sys = NR_FUTEX, .arg0 = 0x41),
			       E_MSG(500, 101),
			       E_OUT(520, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       ENGINE_ANSWERS(800)),
		LOOP_TWO_RQS,
		.want = WANT_DISPATCH(2, 800, 500, PICKUP),
	},
	/* A pick-up through a relay (the reader's send wakes an I/O thread
	 * that wakes the engine): queued until the engine's wake, the relay's
	 * time in it. */
	{
		SC("test_fallbacks", "pickup_via_relay"),
		.steps = STEPS(RELAY_ASLEEP,
			       E_WAKE(300, 101, 103, NR_WRITE, 6),
			       RELAY_TAIL),
		RELAY_RQ_WANT,
	},
	/* A relay that ran 695 us (more than RELAY_CPU_NS: this VM takes the
	 * CPU from ZMQ's I/O threads for as long) puts the request on engine
	 * 102's queue (0x40), then drops the GIL, which wakes 102 again: the
	 * walk enters the engine through the GIL, yet the relay handed off
	 * to it, and the engine's 5 ms make the relay a relay. Queued from
	 * the reader's wake until the engine's, t_dispatch its run (vLLM's
	 * EngineCore behind ZMQ and its input thread; with either rule gone
	 * t_dispatch is the relay's run at 305 us, not the engine's at
	 * 1025) */
	{
		SC("test_fallbacks", "pickup_via_slow_relay_then_gil"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), RELAY_ASLEEP,
			       E_WAKE(300, 101, 103, NR_WRITE, 6),
			       E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(305, 103), PUT_GIL(1000, 103, 102, 0x40),
			       E_OUT(1030, 103, .sys = NR_FUTEX, .arg0 = 0x41),
			       E_WAKE(6000, 102, 101, NR_WRITE, 9),
			       E_IN(6005, 101)),
		RQS(RQ(1, 50, 100, 6020, 6030, 101, 101)),
		.want = WANT_DISPATCH(1, 1025, 300, PICKUP),
	},
	/* The same, the relay preempted before the reader's write to its
	 * eventfd: no wakeup, the data wake ends its wait for the request,
	 * which it reads at 306 us (without it: the resume rule, t_dispatch
	 * at the relay's run) */
	{
		SC("test_data_wake", "relay_preempted"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 103),
			       E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_PREEMPT(200, 103),
			       E_DATA(300, 101, 103, NR_WRITE, 6),
			       E_DREAD(306, 103), RELAY_TAIL),
		RELAY_RQ_WANT,
	},
	/* An event loop 101 woken by its worker 102's first step at 1000 us
	 * writes A's token at 1100 and, preempted at 1150, B's at 1350; the
	 * worker's next step written at 1200 is read only at 1400: B's token
	 * came with the first step, the data wake is not its path (with it:
	 * t_token 1200, t_dispatch the step before) */
	{
		SC("test_data_wake", "read_after_handing_on"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_OUT(50, 101,
			       .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(1000, 102, 101, NR_WRITE, 6),
			       E_IN(1005, 101), E_PREEMPT(1150, 101),
			       E_DATA(1200, 102, 101, NR_WRITE, 6),
			       E_IN(1300, 101), E_DREAD(1400, 101)),
		RQS(RQ(1, 10, 20, 1100, 1110, 101, 101),
		    RQ(2, 15, 25, 1350, 1360, 101, 101)),
		.want = WANTS({
			2,
			NULL,
			{ R(complete, true), R_T(t_token, 1000) },
		}),
	},
	/* Loop 101 hands the request to engine 202 (another process) at 100
	 * us. The token (5000 us) waits in executor 103's pipe while 103
	 * waits for work, until the loop, busy all along, asks it at 6000;
	 * 103 reads it at 6010 and writes it to the loop's eventfd at 6020.
	 * The loop reads that at 6100, waits for the GIL (0x7200) 104 holds
	 * until 6150 and sends at 6200. The reads lead back to the engine
	 * (without them, or without the step past the GIL wait, the walk
	 * never reaches it: no dispatch) */
	BUSY_READER("busy_reader_takes_data", 6020,
		    WANT_DISPATCH(1, 105, 100, PICKUP), BUSY_ASKED(6010),
		    E_DREAD(6100, 101)),
	/*
	 * An I/O thread's inputs of two kinds (ZMQ's, as SGLang's
	 * detokenizer's beside a compile): engine 201, woken by loop 101 at
	 * 200 us, signals its I/O thread 202's eventfd at 1000, waking it;
	 * 202 waits for a CPU, and 203 writes to its socket at 1500 (data to
	 * it awake). 202 runs at 2000, reads the eventfd and sends to 101:
	 * the engine's message, a pick-up at 205 (following the later data,
	 * 203's: no dispatch, t_read).
	 */
	IO_THREAD_KINDS("busy_reader_read_kind", E_IN(2000, 202)),
	/* The same with 202 on a CPU from 1600 to 1610, reading the socket
	 * (203's data): its eventfd read later takes the engine's signal,
	 * the oldest since its eventfd read before (the oldest since its
	 * read before, of any kind: none, and the walk follows 203's data) */
	IO_THREAD_KINDS("busy_reader_kind_since", E_IN(1600, 202),
			E_DREAD_K(1605, 202, UNIX), E_PREEMPT(1610, 202),
			E_IN(2000, 202)),
	/* The loop, serving request 2 too, ran 700 us between its read and
	 * the token's send (others' sends, reads, tokenizing): more than a
	 * relay's CPU, but an event loop's CPU is its requests', and its read
	 * still names the data (with a relay's limit: no dispatch, t_read) */
	BUSY_LOOP_READ("busy_loop_serves_others",
		       WANT_DISPATCH(1, 105, 100, PICKUP),
		       RQ(2, 6200, 6300, 9000, 9010, 101, 101)),
	/* The same loop serving this request alone: its 700 us after the
	 * read are this request's work, and the relay's limit stands */
	BUSY_LOOP_READ("busy_loop_alone",
		       WANTS({ 1,
			       NULL,
			       { R_T(t_dispatch, 20),
				 R(dispatch, TT_CP_DISP_READ) } }),
		       RQ(2, 7000, 7100, 9000, 9010, 101, 101)),
	/* The engine, asked again by the loop at 5995, writes to 103's pipe
	 * again at 6002, while 103 waits for a CPU: data behind its first,
	 * no wakeup; the read takes the first (following the later data: a
	 * pick-up at 6001) */
	BUSY_READER("busy_reader_more_data", 6020,
		    WANT_DISPATCH(1, 105, 100, PICKUP),
		    E_WAKE(5995, 101, 202, NR_FUTEX, 0x50),
		    E_WAKE(6000, 101, 103, NR_FUTEX, 0x40), E_IN(6001, 202),
		    E_DATA(6002, 202, 103, NR_WRITE, 7),
		    E_OUT(6003, 202, .sys = NR_READ, .arg0 = 5),
		    E_IN(6005, 103), E_DREAD(6010, 103), E_DREAD(6100, 101)),
	/* The same, 103 computing 700 us after its read: no relay, its read
	 * is its input (the dispatch rules judge it) */
	BUSY_READER("busy_reader_computes", 6710,
		    WANT_DISPATCH(1, 6005, 6000, PICKUP), BUSY_ASKED(6010),
		    E_DREAD(6790, 101)),
	/* Thread 205 writes to 103's pipe too, at 5500: the read takes the
	 * oldest data, the engine's */
	BUSY_READER("busy_reader_takes_oldest", 6020,
		    WANT_DISPATCH(1, 105, 100, PICKUP), BUSY_THIRD(103),
		    BUSY_ASKED(6010), E_DREAD(6100, 101)),
	/* The loop reads nothing: its wait for the GIL leads to the holder
	 * 104, whose read at 6045 took the data 205 (woken by the loop at
	 * 5390) wrote at 5500: the holder's own work, no token's path, and
	 * no dispatch found (taking it: 205's pick-up, t_dispatch 5400) */
	BUSY_READER("busy_reader_lock_holder", 6020,
		    WANTS({ 1,
			    NULL,
			    { R(complete, false), R_T(t_dispatch, 20),
			      R(dispatch, TT_CP_DISP_READ) } }),
		    E_OUT(5300, 205, .sys = NR_FUTEX, .arg0 = 0x48),
		    E_WAKE(5390, 101, 205, NR_FUTEX, 0x48), BUSY_THIRD(104),
		    BUSY_ASKED(6010), E_DREAD(6045, 104)),
	/* 205, asked by the loop at 5390, writes a message to 103's pipe at
	 * 5500 behind the engine's (5000); 103 reads both: its latest read
	 * names 205's write, which the walk follows (the oldest data: the
	 * engine's, t_dispatch 105) */
	BUSY_READER("busy_reader_names_write", 6020,
		    WANT_DISPATCH(1, 5400, 5390, PICKUP),
		    E_OUT(5300, 205, .sys = NR_FUTEX, .arg0 = 0x48),
		    E_WAKE(5390, 101, 205, NR_FUTEX, 0x48), BUSY_THIRD(103),
		    E_PIPE(5000, 202, WRITE, 0, 48),
		    E_PIPE(5500, 205, WRITE, 48, 48), BUSY_ASKED(6010),
		    E_PIPE(6008, 103, READ, 0, 48),
		    E_PIPE(6012, 103, READ, 48, 48), E_DREAD(6100, 101)),
	/* The same, the writes counted out of byte order (205's bytes first:
	 * writers racing on two CPUs); 103's read of 205's bytes names 205's
	 * write still (unsorted, it named none: the engine's data, 105) */
	BUSY_READER("busy_reader_names_raced_write", 6020,
		    WANT_DISPATCH(1, 5400, 5390, PICKUP),
		    E_OUT(5300, 205, .sys = NR_FUTEX, .arg0 = 0x48),
		    E_WAKE(5390, 101, 205, NR_FUTEX, 0x48), BUSY_THIRD(103),
		    E_PIPE(5000, 202, WRITE, 48, 48),
		    E_PIPE(5100, 202, WRITE, 96, 48),
		    E_PIPE(5500, 205, WRITE, 0, 48), BUSY_ASKED(6010),
		    E_PIPE(6012, 103, READ, 0, 48), E_DREAD(6100, 101)),
	/* 103, asked at 6000, writes to its own pipe at 6006 and waits; 205,
	 * asked by the loop at 6007, wakes it at 6009; 103 reads its own
	 * bytes back at 6012: no hand-off named, the walk follows 205's wake
	 * (naming 103's own write: the loop's ask of 103, t_dispatch 6005) */
	BUSY_READER("busy_reader_own_bytes", 6020,
		    WANT_DISPATCH(1, 6008, 6007, PICKUP),
		    E_OUT(5300, 205, .sys = NR_FUTEX, .arg0 = 0x48),
		    E_WAKE(6000, 101, 103, NR_FUTEX, 0x40), E_IN(6005, 103),
		    E_PIPE(6006, 103, WRITE, 0, 48),
		    E_OUT(6007, 103, .sys = NR_FUTEX, .arg0 = 0x4c),
		    E_WAKE(6007, 101, 205, NR_FUTEX, 0x48), E_IN(6008, 205),
		    E_WAKE(6009, 205, 103, NR_FUTEX, 0x4c),
		    E_OUT(6010, 205, .sys = NR_FUTEX, .arg0 = 0x48),
		    E_IN(6010, 103), E_PIPE(6012, 103, READ, 0, 48),
		    E_DREAD(6100, 101)),
	/* The engine wakes 103 at 5800 (0x40) after its data at 5000: the
	 * walk follows that hand-off, 103's wait until then its own */
	BUSY_READER("busy_reader_woken_after", 6020,
		    WANTS({ 1,
			    NULL,
			    { R(complete, true), R_T(t_dispatch, 105),
			      R_STAGE(TT_ST_CPU, 6125) } }),
		    E_WAKE(5800, 202, 103, NR_FUTEX, 0x40), E_IN(5805, 103),
		    E_DREAD(6010, 103), E_DREAD(6100, 101)),
	/* A relay asleep on the eventfd: the kernel's wakeup follows the data
	 * wake, which adds nothing (the same path as a plain wakeup) */
	{
		SC("test_data_wake", "relay_asleep"),
		.steps = STEPS(E_IN(0, 101),
			       E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_OUT(6, 103, .sys = NR_READ, .arg0 = 6,
				     .mode = S_IFREG, .anon = true),
			       E_DATA(300, 101, 103, NR_WRITE, 6),
			       E_WAKE(300, 101, 103, NR_WRITE, 6),
			       RELAY_TAIL),
		RELAY_RQ_WANT,
	},
	/* A busy engine 102 (CPython, GIL 0x7200) puts each step's tokens on
	 * output thread 103's queue (0x50), then drops the GIL, which wakes
	 * 103 again: the walk enters the engine through the GIL, yet 103 is
	 * still the thread it handed off to, and the step before B's is the
	 * boundary (B, read before A was handed on: the reader's wake of the
	 * engine is A's turn, B's made none, B queued from the reader's
	 * block) */
	{
		SC("test_gil_lock", "engine_put_then_gil"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 101),
			       E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_OUT(6, 103, .sys = NR_FUTEX, .arg0 = 0x50),
			       E_WAKE(200, 101, 102, NR_FUTEX, 0x40),
			       E_IN(210, 102),
			       E_OUT(400, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       PUT_THEN_GIL(1200),
			       E_OUT(1300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       PUT_THEN_GIL(2200)),
		RQS(RQ(1, 50, 100, 1240, 1250, 101, 101),
		    RQ(2, 120, 150, 2240, 2250, 101, 101)),
		.want = WANT_DISPATCH(2, 1200, 400, HANDOFF),
	},
	/* A worker woken by the reader's hand-off, then blocked on the GIL
	 * the reader holds: following the lock finds no dispatch, the worker's
	 * own timeline does (a pick-up, taken up once it held the GIL), the
	 * wait is the lock's. */
	{
		SC("test_fallbacks", "lock_detour"),
		.steps = STEPS(LOCK_DETOUR_STEPS),
		RQS(RQ(1, 50, 100, 2020, 2030, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50, [TT_ST_CPU] = 200 + 10 + 995 + 15,
			       [TT_ST_RUNQUEUE] = 10 + 5 + 5, [TT_ST_LOCK] = 680,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R_T(t_dispatch, 1005),
			  R(dispatch, TT_CP_DISP_PICKUP), R_T(gil_ns, 680) },
		}),
	},
	/* The same with the process's CPython range taken back at 1 us (it
	 * exec'd another program): 0x7200 is no GIL, a hand-off; 102 is
	 * queued until its wake through it at 1000, nothing counted as the
	 * GIL's (with the range kept: queued from 300, 680 us of GIL) */
	{
		SC("test_fallbacks", "lock_detour_range_gone"),
		.steps = STEPS(LOCK_DETOUR_STEPS, E_RTLOCK(1, 101, 0, 0)),
		RQS(RQ(1, 50, 100, 2020, 2030, 101, 101)),
		.want = WANTS({ 1, NULL,
				{ R(complete, true), R_T(t_enqueue, 1000),
				  R_T(t_dispatch, 1005),
				  R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(gil_ns, 0) } }),
	},
	/* The same with worker 102 a thread the loop starts for the request
	 * (transformers' generate() in a thread per request) and the loop,
	 * before it lets the GIL go, handing worker 103 a job for another
	 * request (anyio's worker threads serving starlette's streams:
	 * tools/scenarios' hf) at 500 us, which hands the loop its result at
	 * 700. Followed, the GIL led to the loop, 103 and its wake by the
	 * reader: t_enqueue 500; the wait is the GIL's, and the worker's own
	 * timeline has the hand-off, 300 */
	GIL_OF_LOOP("gil_of_loop", (E_IN(0, 104)),
		    (E_WAKE(2000, 102, 101, NR_WRITE, 9), E_IN(2005, 101)),
		    R_T(t_enqueue, 300), R_T(t_dispatch, 1005),
		    R(dispatch, TT_CP_DISP_PICKUP), R_T(gil_ns, 680)),
	/* The same with the token handed to the loop by 105 at 1400 us; the
	 * loop then waits for the GIL 102 holds until 1600: the walk comes to
	 * 102 as the GIL's holder, not handed the request (lit's feeder
	 * thread, handed another request's put), and follows the GIL on */
	GIL_OF_LOOP("gil_of_loop_holder", (E_IN(0, 105)),
		    (E_DATA(1400, 105, 101, NR_WRITE, 6),
		     E_WAKE(1400, 105, 101, NR_WRITE, 6), E_IN(1405, 101),
		     E_DREAD(1410, 101),
		     E_OUT(1500, 101, .sys = NR_FUTEX, .arg0 = 0x7200),
		     E_WAKE(1600, 102, 101, NR_FUTEX, 0x7200),
		     E_OUT(1605, 102, .sys = NR_FUTEX, .arg0 = 0x7600),
		     E_IN(1610, 101)),
		    R_T(t_enqueue, 500)),
	/* On TCP loopback the receiver's wakeup runs in softirq with the
	 * sender as current: followed when the sender is traced... */
	{
		SC("test_loopback_softirq", "traced_sender"),
		.steps = LOOPBACK(101, (SOCK_WAIT)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 201)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 490,
			       [TT_ST_RUNQUEUE] = 10, [TT_ST_NET_OUT] = 100),
			{ R(complete, true), R_T(t_dispatch, 1210),
			  R(dispatch, TT_CP_DISP_PICKUP), R_T(t_token, 1600) },
		}),
	},
	/* ... an untraced sender: the wait on the socket is network */
	{
		SC("test_loopback_softirq", "untraced_sender"),
		.steps = LOOPBACK(UNTRACED, (SOCK_WAIT)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 201)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 390,
			       [TT_ST_RUNQUEUE] = 10, [TT_ST_NET_OUT] = 200),
			{ R_T(t_dispatch, 1100) },
			{ SEG_AT(1150, "recvfrom socket", G(tid, 201),
				 G(state, TT_CP_BLOCKED)) },
		}),
	},
	/* a softirq landing on a traced thread does not end a sleep */
	{
		SC("test_loopback_softirq", "sleep"),
		.steps = LOOPBACK(101, (.sys = NR_NANOSLEEP)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 201)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 390,
			       [TT_ST_RUNQUEUE] = 10, [TT_ST_NET_OUT] = 100,
			       [TT_ST_SLEEP] = 100),
		}),
	},
	/* Records lost during the walk: that time is unknown, the request
	 * incomplete; a later request clear of the loss stays complete. */
	{
		SC("test_lost", "lost_window"),
		.steps = STEPS(
			E_IN(100, 101),
			E_OUT(200, 101, .sys = NR_RECVFROM, .mode = S_IFSOCK),
			E_SOFTIRQ(1000, UNTRACED, 101), E_IN(1010, 101),
			E_OUT(1700, 101, .sys = NR_EPOLL_WAIT), E_IN(4100, 101),
			E_OUT(4200, 101, .sys = NR_RECVFROM, .mode = S_IFSOCK),
			E_SOFTIRQ(5000, UNTRACED, 101), E_IN(5010, 101),
			E_OUT(5700, 101, .sys = NR_EPOLL_WAIT),
			E_LOST(1200, 1300)),
		RQS(RQ(1, 1000, 1050, 1500, 1600, 101, 101),
		    RQ(2, 5000, 5050, 5500, 5600, 101, 101)),
		.want = WANTS(
			{
				1,
				STAGES([TT_ST_NET_IN] = 40, [TT_ST_RUNQUEUE] = 10,
				       [TT_ST_CPU] = 350, [TT_ST_UNKNOWN] = 100,
				       [TT_ST_NET_OUT] = 100),
				{ R(complete, false),
				  R_HAS(incomplete, TT_CP_INC_LOST) },
				{ SEG_AT(1250, NULL, G(state, TT_CP_NODATA),
					 G_T(start, 1200), G_T(dur, 100)) },
			},
			{
				2,
				STAGES([TT_ST_NET_IN] = 40, [TT_ST_RUNQUEUE] = 10,
				       [TT_ST_CPU] = 450, [TT_ST_NET_OUT] = 100),
				{ R(complete, true) },
			}),
	},
	/* Sleep, a futex nobody traced released, an unexplained wait; and a
	 * writer with no events before part of the path. */
	{
		SC("test_sleep_lock_unknown", "waits"),
		.steps = STEPS(
			E_IN(900, 101), E_OUT(1200, 101, .sys = NR_NANOSLEEP),
			E_IRQ(1300, 0, 101), E_IN(1300, 101),
			E_OUT(1400, 101, .sys = NR_FUTEX, .arg0 = 0x5000),
			E_WAKE(1600, UNTRACED, 101, NR_FUTEX, 0x5000),
			E_IN(1605, 101),
			E_OUT(1700, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			E_IRQ(2000, 0, 101), E_IN(2000, 101), E_IN(1500, 105)),
		RQS(RQ(1, 1000, 1100, 2100, 2200, 101, 101),
		    RQ(2, 1000, 1100, 1600, 1700, 105, 105)),
		.want = WANTS(
			{
				1,
				STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 395,
				       [TT_ST_SLEEP] = 100, [TT_ST_LOCK] = 200,
				       [TT_ST_UNKNOWN] = 300, [TT_ST_RUNQUEUE] = 5,
				       [TT_ST_NET_OUT] = 100),
				{ R(complete, true) },
				{ SEG_AT(1500, "futex 0x5000"),
				  SEG_AT(1250, "nanosleep",
					 G(stage, TT_ST_SLEEP)) },
			},
			{
				2,
				STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 100,
				       [TT_ST_UNKNOWN] = 400,
				       [TT_ST_NET_OUT] = 100),
				{ R(complete, false),
				  R(incomplete, TT_CP_INC_NO_DATA),
				  R_T(t_dispatch, 1100) },
				{ SEG_AT(1200, NULL, G(state, TT_CP_NODATA),
					 G(tid, 105)) },
			}),
	},
	/* Unknown ends are not walked; inconsistent times are clamped. */
	{
		SC("test_not_walked_and_clamps", "ends"),
		.steps = STEPS(E_IN(900, 101)),
		RQS(RQ(1, 0, 1100, 1500, 1600, 101, 101),
		    RQ(2, 1000, 1100, 1500, 0, 101, 101),
		    RQ(3, 1000, 1100, 1500, 1600, 101, 0),
		    /* read after the first write, write after the
			  * wire */
		    RQ(4, 1000, 1550, 1500, 1600, 101, 101),
		    RQ(5, 1000, 0, 1700, 1600, 101, 101)),
		.want = WANTS(
			{ 1, NULL, { R(incomplete, TT_CP_INC_NOT_WALKED) } },
			{ 2, NULL, { R(incomplete, TT_CP_INC_NOT_WALKED) } },
			{ 3, NULL, { R(incomplete, TT_CP_INC_NOT_WALKED) } },
			{
				4,
				NULL,
				{ R(complete, true), R_T(t_dispatch, 1550),
				  R_T(t_token, 1550), R_STAGE(TT_ST_NET_IN, 100),
				  /* 2 and 3, read at 1100 us, never ended */
				  R_STAGE(TT_ST_BACKLOG, 450),
				  R_STAGE(TT_ST_NET_OUT, 50) },
			},
			{
				5,
				NULL,
				{ R(incomplete, TT_CP_INC_NO_READ),
				  R_STAGE(TT_ST_CPU, 600) },
			}),
	},
	/* A wake traced just before its target's blocking switch-out
	 * completes still hands the path over; one long before a later block
	 * does not. */
	{
		SC("test_wake_race", "wake_before_block"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 103), E_IN(5, 102),
			       E_WAKE(1200, 101, 102, NR_FUTEX, 0x10),
			       E_OUT(1203, 102, .sys = NR_FUTEX, .arg0 = 0x10),
			       E_IN(1210, 102),
			       /* woken while running at 2000, blocks for
				* another reason at 2500 */
			       E_WAKE(2000, 103, 102, NR_FUTEX, 0x10),
			       E_OUT(2500, 102, .sys = NR_EPOLL_WAIT),
			       E_IRQ(3200, 0, 102), E_IN(3200, 102)),
		RQS(RQ(1, 1000, 1100, 1500, 1600, 101, 102),
		    RQ(2, 3000, 3100, 3500, 3600, 103, 102)),
		.want = WANTS(
			{
				1,
				NULL,
				{ R(complete, true), R_T(t_dispatch, 1210),
				  R_STAGE(TT_ST_QUEUE, 0),
				  R_STAGE(TT_ST_CPU, 393),
				  R_STAGE(TT_ST_RUNQUEUE, 7) },
			},
			{
				2,
				NULL,
				{ R_T(t_dispatch, 3100),
				  R_STAGE(TT_ST_UNKNOWN, 100) },
			}),
	},
	/* A handler woken through the GIL (0x7200) while it runs, just before
	 * it blocks on its own Condition's word (0x500): that wake ended a
	 * wait for the GIL that never slept, not this one; the engine's
	 * notify at 5000 us ends it (the race rule alone kept the handler
	 * runnable from its block, t_token at 1000) */
	{
		SC("test_wake_race", "other_word_before_block"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 101),
			       E_IN(0, 102), E_WAKE(1000, 102, 101, NR_FUTEX, 0x7200),
			       E_OUT(1020, 101, .sys = NR_FUTEX, .arg0 = 0x500),
			       E_WAKE(5000, 102, 101, NR_FUTEX, 0x500),
			       E_IN(5005, 101)),
		RQS(RQ(1, 50, 100, 5020, 5030, 101, 101)),
		.want = WANTS({ 1,
				NULL,
				{ R(complete, true), R_T(t_token, 5000),
				  R_STAGE(TT_ST_RUNQUEUE, 5) } }),
	},
	/* A thread created for the request: the walk goes back to its
	 * creator. */
	{
		SC("test_new_thread", "fork"),
		.steps = STEPS(E_IN(0, 101), E_FORK(1190, 101, 106, "worker"),
			       E_WAKE_NEW(1200, 101, 106, 56), E_IN(1210, 106)),
		RQS(RQ(1, 1000, 1100, 1500, 1600, 101, 106)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R_T(t_dispatch, 1210),
			  R_STAGE(TT_ST_RUNQUEUE, 10), R_STAGE(TT_ST_CPU, 390) },
		}),
		.comm_tid = 106,
		.comm = "worker",
	},
	/* Waits on anon inodes (eventfd, timerfd, epoll, io_uring) that
	 * nothing traced ends are unknown, never storage: on recent kernels
	 * their shared inode is S_IFREG, and io_uring sets in_iowait. */
	{
		SC("test_anon_inode", "anon_unknown"),
		.steps = ANON_STREAM(true),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 180,
			       [TT_ST_UNKNOWN] = 490, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true) },
			{ SEG_AT(1300, "read anon", G(state, TT_CP_BLOCKED)),
			  SEG_AT(1600, "io_uring_enter anon iowait",
				 G(stage, TT_ST_UNKNOWN)) },
		}),
	},
	/* the same waits on real files are storage */
	{
		SC("test_anon_inode", "files_storage"),
		.steps = ANON_STREAM(false),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 180,
			       [TT_ST_STORAGE] = 490, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 10),
			{},
			{ SEG_AT(1300, "read file 8:1") },
		}),
	},
	/* a wait in an io_uring_enter(2) call that submitted or reaped a
	 * request on a file (its FILEIO record, 1550 to 1755 us): storage,
	 * as its CPU is; the anon read stays unknown */
	{
		SC("test_anon_inode", "uring_file_call"),
		.steps = URING_STREAM(1550, 1755),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 170,
			       [TT_ST_UNKNOWN] = 300, [TT_ST_STORAGE] = 200,
			       [TT_ST_RUNQUEUE] = 20, [TT_ST_NET_OUT] = 10),
			{},
			{ SEG_AT(1600, "io_uring_enter file iowait",
				 G(stage, TT_ST_STORAGE)) },
		}),
	},
	/* that call returned before the wait: another call's wait, on
	 * whatever the ring holds, is unknown */
	{
		SC("test_anon_inode", "uring_file_call_before"),
		.steps = URING_STREAM(1520, 1540),
		RQS(RQ(1, 1000, 1100, 1790, 1800, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 160,
			       [TT_ST_STORAGE] = 20,
			       [TT_ST_UNKNOWN] = 490, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 10),
			{},
			{ SEG_AT(1600, "io_uring_enter anon iowait") },
		}),
	},
	/* an eventfd a traced thread writes is a hand-off, followed */
	{
		SC("test_anon_inode", "eventfd_handoff"),
		.steps = STEPS(E_IN(0, 101), E_IN(5, 102),
			       E_OUT(50, 102, .sys = NR_READ, .arg0 = 7,
				     .mode = S_IFREG, .anon = true),
			       E_WAKE(1200, 101, 102, NR_WRITE, 7),
			       E_IN(1210, 102)),
		RQS(RQ(1, 1000, 1100, 1600, 1700, 101, 102)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 490,
			       [TT_ST_RUNQUEUE] = 10, [TT_ST_NET_OUT] = 100),
			{ R_T(t_dispatch, 1210),
			  R(dispatch, TT_CP_DISP_PICKUP) },
		}),
	},
	/* Spin-mode sync: on CPU inside cuStreamSynchronize is GPU time to
	 * the ns, a preemption inside it stays runqueue; inside a launch it
	 * is launch overhead (CPU). An engine with no sync before is idle:
	 * t_dispatch is t_read. A call whose entry was not seen has no
	 * interval. */
	{
		SC("test_gpu_spin_sync", "spin"),
		.steps = STEPS(E_IN(900, 101),
			       E_CALL(1150, 1160, 101, "cuLaunchKernel"),
			       E_CALL(1200, 1500, 101, "cuStreamSynchronize"),
			       E_PREEMPT(1300, 101), E_IN(1320, 101),
			       E_CALL(0, 1550, 101, "cuCtxSynchronize")),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 200,
			       [TT_ST_GPU] = 280, [TT_ST_RUNQUEUE] = 20,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_READ),
			  R_T(t_dispatch, 1100), R_T(t_token, 1600) },
			{ SEG(1155, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuLaunchKernel", 1150, 10),
			  SEG(1170, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1160, 40),
			  SEG(1250, 101, TT_CP_RUNNING, TT_ST_GPU,
			      "sync cuStreamSynchronize", 1200, 100),
			  SEG(1310, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1300, 20),
			  SEG(1400, 101, TT_CP_RUNNING, TT_ST_GPU,
			      "sync cuStreamSynchronize", 1320, 180),
			  SEG(1550, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1500, 100) },
		}),
		.stats = { STAT(gpu_calls, 2) },
	},
	/* A launch probed at its entry only (--gpu-probes=all) ends where
	 * the sync 40 us later begins (not at the ioctl inside the sync, whose
	 * record comes first); one 60 us before the next call stays an
	 * instant: its time is plain on-CPU, compute.cpu all the same. */
	{
		SC("test_gpu_spin_sync", "entry_only_launch"),
		.steps = STEPS(E_IN(900, 101),
			       E_LAUNCH(1150, 101, "cuLaunchKernel"),
			       E_IOCTL(1195, 1196, 101, NV_RM_CONTROL, GPU_RDEV),
			       E_CALL(1190, 1500, 101, "cuStreamSynchronize"),
			       E_LAUNCH(1510, 101, "cuLaunchKernel_ptsz"),
			       E_CALL(1570, 1580, 101, "cuGraphLaunch")),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 310, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_READ) },
			{ CPU_101(1155, "launch cuLaunchKernel", 1150, 40),
			  SEG(1250, 101, TT_CP_RUNNING, TT_ST_GPU,
			      "sync cuStreamSynchronize", 1190, 310),
			  CPU_101(1510, "on-cpu", 1500, 70),
			  CPU_101(1575, "launch cuGraphLaunch", 1570, 10) },
		}),
		.stats = { STAT(gpu_calls, 4) },
	},
	/* Blocking-mode sync (BLOCKING_SYNC), with the calls seen, without
	 * and with the device registered: the sync call says it, and the
	 * device thread's wake is not followed. */
	{
		SC("test_gpu_blocking_sync", "calls"),
		.steps = BLOCKING_SYNC(SYNC_CALLS),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = sync_calls_want,
		.iv = { 101, 1, 1210, 1540, TT_CP_BLOCKED, TT_ST_GPU,
			"sync cuStreamSynchronize" },
	},
	{
		SC("test_gpu_blocking_sync", "calls_stub_device"),
		.steps = BLOCKING_SYNC(SYNC_CALLS),
		.gpu = DEV_STUB,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = sync_calls_want,
		.iv = { 101, 1, 1210, 1540, TT_CP_BLOCKED, TT_ST_GPU,
			"sync cuStreamSynchronize" },
	},
	/* no CUDA probes: the wait on the device FIFO is GPU time */
	{
		SC("test_gpu_blocking_sync", "stub_device_no_calls"),
		.steps = BLOCKING_SYNC(),
		.gpu = DEV_STUB,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 160,
			       [TT_ST_GPU] = 330, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{},
			{ SEG(1300, 101, TT_CP_BLOCKED, TT_ST_GPU,
			      "poll stubcuda-4242.nvidia0", 1210, 330) },
		}),
	},
	/* nothing says GPU: the wake is followed into the device thread */
	{
		SC("test_gpu_blocking_sync", "nothing_said"),
		.steps = BLOCKING_SYNC(),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_GPU, 0) },
			{ SEG(1300, 103, TT_CP_BLOCKED, TT_ST_UNKNOWN,
			      "ppoll pipe", 1165, 335) },
		}),
	},
	/* An ioctl on /dev/nvidia0 ended by an interrupt: GPU time named by
	 * the ioctl, and the driver's on-CPU time inside the ioctl is CPU
	 * named by it too. */
	{
		SC("test_gpu_chardev", "nvidia_ioctl"),
		.steps = NVIDIA_IOCTL(IOCTL_EVENT),
		.gpu = DEV_NVIDIA0,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 300, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1195, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "ioctl NV_ESC_RM_CONTROL", 1190, 10),
			  SEG(1300, 101, TT_CP_BLOCKED, TT_ST_GPU,
			      "ioctl NV_ESC_RM_CONTROL", 1200, 300),
			  SEG(1515, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "ioctl NV_ESC_RM_CONTROL", 1510, 10),
			  SEG(1550, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1520, 80) },
		}),
		.stats = { STAT(ioctls, 1) },
	},
	/* no ioctl event: the device's path names the wait */
	{
		SC("test_gpu_chardev", "no_ioctl_event"),
		.steps = NVIDIA_IOCTL(),
		.gpu = DEV_NVIDIA0,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 300, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{},
			{ SEG(1300, 101, TT_CP_BLOCKED, TT_ST_GPU,
			      "ioctl /dev/nvidia0", 1200, 300) },
		}),
	},
	/* an ioctl event on a device nobody registered says nothing */
	{
		SC("test_gpu_chardev", "unregistered_device"),
		.steps = NVIDIA_IOCTL(IOCTL_EVENT),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_GPU, 0), R_STAGE(TT_ST_UNKNOWN, 300) },
			{ SEG(1300, 101, TT_CP_BLOCKED, TT_ST_UNKNOWN,
			      "ioctl chr 195:0", 1200, 300) },
		}),
	},
	/* a poll on the device that a traced thread ends: not followed */
	{
		SC("test_gpu_chardev", "poll_traced_waker"),
		.steps = STEPS(E_IN(900, 101),
			       E_OUT(1200, 101, .sys = NR_POLL, .arg0 = 0x7f00,
				     .mode = S_IFCHR, .rdev = GPU_RDEV),
			       E_IN(1400, 102),
			       E_WAKE(1500, 102, 101, NR_WRITE, 9),
			       E_IN(1510, 101)),
		.gpu = DEV_NVIDIA0,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 190,
			       [TT_ST_GPU] = 300, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{},
			{ SEG(1300, 101, TT_CP_BLOCKED, TT_ST_GPU,
			      "poll /dev/nvidia0", 1200, 300) },
		}),
	},
	/* Blocked inside a launch on a lock that traced thread 102 releases:
	 * not launch overhead nor GPU, the ordinary rules follow the
	 * holder. */
	{
		SC("test_gpu_launch_blocked", "lock_in_launch"),
		.steps = STEPS(E_IN(900, 101), E_IN(1000, 102),
			       E_CALL(1150, 1180, 101, "cuLaunchKernel_ptsz"),
			       E_OUT(1155, 101, .sys = NR_FUTEX, .arg0 = 0x77),
			       E_WAKE(1170, 102, 101, NR_FUTEX, 0x77),
			       E_IN(1172, 101)),
		RQS(RQ(1, 1000, 1100, 1300, 1350, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 198,
			       [TT_ST_RUNQUEUE] = 2, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_READ) },
			{ SEG(1175, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuLaunchKernel_ptsz", 1172, 8),
			  SEG(1150, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1100, 70) },
		}),
	},
	/* An eager forward pass: 10 launches back to back make one CPU
	 * segment (the time between them included); 7 stay pieces of their
	 * own; an ioctl between two launches breaks the run. */
	{
		SC("test_gpu_launch_run", "launch_runs"),
		.build = build_launch_run,
		.gpu = DEV_NVIDIA0,
		RQS(RQ(1, 1000, 1100, 1900, 1950, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_CPU, 800),
			  /* net.in, cpu, the run, cpu, 7 launches and 6
			   * gaps, cpu, 10 launches and 9 gaps (one an ioctl
			   * and a bit), cpu, net.out */
			  R(nsegs, 40) },
			{ SEG(1203, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch x10 cuLaunchKernel", 1200, 68),
			  SEG(1406, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1405, 2),
			  SEG(1409, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuLaunchKernel", 1407, 5),
			  SEG(1601, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuLaunchKernel", 1600, 5),
			  SEG(1626, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "ioctl NV_ESC_RM_CONTROL", 1626, 1) },
		}),
	},
	/* The same launches probed at their entry only: each ends where the
	 * next call or ioctl begins, less than LAUNCH_GAP_NS after it, or is
	 * an instant (the last of each group). The same stages; the run ends
	 * at its last launch's entry, the 7 make one piece, the ioctl still
	 * breaks the last run. */
	{
		SC("test_gpu_launch_run", "entry_only"),
		.build = build_launch_run,
		.arg = { 1 },
		.gpu = DEV_NVIDIA0,
		RQS(RQ(1, 1000, 1100, 1900, 1950, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_CPU, 800) },
			{ CPU_101(1203, "launch x10 cuLaunchKernel", 1200, 63),
			  CPU_101(1300, "on-cpu", 1263, 137),
			  CPU_101(1406, "launch cuLaunchKernel", 1400, 42),
			  CPU_101(1601, "launch cuLaunchKernel", 1600, 26),
			  CPU_101(1626, "ioctl NV_ESC_RM_CONTROL", 1626, 1),
			  CPU_101(1627, "on-cpu", 1627, 1),
			  CPU_101(1630, "launch cuLaunchKernel", 1628, 35) },
		}),
		.stats = { STAT(gpu_calls, 27) },
	},
	/* Requests reach the engine through a lock-free ring (no wake) and
	 * the engine writes the tokens itself: read during iteration 1, the
	 * request waits for iteration 2, whose first launch is at 2000 us. */
	{
		SC("test_gpu_dispatch", "ring_engine_writes"),
		RING_ENGINE(build_engine_loop),
		.want = WANTS({ 1, RING_ENGINE_WANT }),
	},
	/* read after iteration 1's sync ended: nothing shows a queue */
	{
		SC("test_gpu_dispatch", "read_after_sync"),
		.reuse = true,
		RQS(RQ(1, 1250, 1950, 2950, 3000, 101, 102)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_READ), R_T(t_dispatch, 1950),
			  R(complete, true) },
		}),
	},
	/* tokens through memory too: writer 104 spins, nothing wakes it */
	{
		SC("test_gpu_dispatch", "spinning_writer"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 104)),
		.build = build_engine_loop,
		.arg = { 102, 1, 3 },
		RQS(RQ(1, 1250, 1300, 2950, 3000, 101, 104)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50, [TT_ST_QUEUE] = 700,
			       [TT_ST_CPU] = 950, [TT_ST_NET_OUT] = 50),
			{ R(dispatch, TT_CP_DISP_GPU), R_T(t_dispatch, 2000),
			  R(complete, true) },
		}),
	},
	/* ... unless two threads of the process sync: which one is unsure */
	{
		SC("test_gpu_dispatch", "two_syncing_threads"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 104),
			       E_CALL(1500, 1600, 105, "cuCtxSynchronize")),
		.build = build_engine_loop,
		.arg = { 102, 1, 3 },
		RQS(RQ(1, 1250, 1300, 2950, 3000, 101, 104)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_READ), R_T(t_dispatch, 1300),
			  R(complete, true) },
		}),
	},
	/* Visible hand-offs win: the engine wakes the writers of the live
	 * requests after each sync (105 of request 2, then 104 of this one
	 * too): the queue ends at the previous iteration's hand-off. */
	{
		SC("test_gpu_dispatch", "visible_handoffs"),
		.steps = STEPS(
			E_IN(0, 101), E_IN(0, 102), E_IN(1, 104),
			E_OUT(2, 104, .sys = NR_FUTEX, .arg0 = 104),
			E_IN(1, 105),
			E_OUT(2, 105, .sys = NR_FUTEX, .arg0 = 105),
			E_WAKE(1950, 102, 105, NR_FUTEX, 105), E_IN(1955, 105),
			E_OUT(1965, 105, .sys = NR_FUTEX, .arg0 = 105),
			E_WAKE(2945, 102, 105, NR_FUTEX, 105), E_IN(2955, 105),
			E_OUT(2965, 105, .sys = NR_FUTEX, .arg0 = 105),
			E_WAKE(3950, 102, 105, NR_FUTEX, 105), E_IN(3955, 105),
			E_OUT(3965, 105, .sys = NR_FUTEX, .arg0 = 105),
			E_WAKE(2950, 102, 104, NR_FUTEX, 104), E_IN(2955, 104)),
		.build = build_engine_loop,
		.arg = { 102, 1, 3 },
		RQS(RQ(1, 1250, 1300, 2960, 3000, 101, 104, .t_end = 5000 * US),
		    RQ(2, 50, 100, 1960, 1990, 101, 105, .t_end = 5000 * US)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_HANDOFF),
			  R_T(t_dispatch, 1950), R(complete, true) },
		}),
	},
	/* A pick-up wins: the engine finishes an iteration after the read,
	 * blocks, and the reader wakes it for this request. */
	{
		SC("test_gpu_dispatch", "pickup"),
		.steps =
			STEPS(E_IN(0, 101), E_IN(0, 102),
			      E_CALL(1000, 1010, 102, "cuLaunchKernel"),
			      E_CALL(1100, 1295, 102, "cuStreamSynchronize"),
			      E_OUT(1297, 102, .sys = NR_FUTEX, .arg0 = 0x7000),
			      E_WAKE(1300, 101, 102, NR_FUTEX, 0x7000),
			      E_IN(1305, 102),
			      E_CALL(1310, 1320, 102, "cuLaunchKernel"),
			      E_CALL(1400, 1800, 102, "cuStreamSynchronize")),
		RQS(RQ(1, 1250, 1290, 1850, 1900, 101, 102)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_PICKUP), R_T(t_dispatch, 1305),
			  R(complete, true) },
		}),
	},
	/* The ring engine, its launches probed at their entry only: each
	 * ends where the graph launch 10 us later begins, the same stages
	 * and t_dispatch at the first launch's entry. */
	{
		SC("test_gpu_dispatch", "ring_engine_entry_only"),
		RING_ENGINE(build_engine_loop_entry),
		.want = WANTS({ 1, RING_ENGINE_WANT,
				{ SEG(2005, 102, TT_CP_RUNNING, TT_ST_CPU,
				      "launch cuLaunchKernel", 2000, 10) } }),
	},
	/* The call iterator (check_calls), then the walk: nested calls come
	 * as pieces, the innermost names the time; an unknown function is
	 * plain CPU. */
	{
		SC("test_gpu_calls", "nested_calls"),
		.steps =
			STEPS(E_IN(900, 101),
			      E_CALL(1210, 1220, 101, "cuLaunchKernel"),
			      E_CALL(1230, 1240, 101, "cuLaunchKernelEx"),
			      E_CALL(1200, 1300, 101, "cuGraphLaunch"),
			      E_IOCTL(1250, 1260, 101, NV_RM_CONTROL, GPU_RDEV),
			      E_CALL(1400, 1500, 101, "cuMemcpyDtoH_v2"),
			      E_CALL_RAW(1550, 1560, 101, 999, 700)),
		.gpu = DEV_NVIDIA0,
		.extra = check_calls,
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R_STAGE(TT_ST_GPU, 100), R_STAGE(TT_ST_CPU, 400) },
			{ SEG(1205, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuGraphLaunch", 1200, 10),
			  SEG(1235, 101, TT_CP_RUNNING, TT_ST_CPU,
			      "launch cuLaunchKernelEx", 1230, 10),
			  SEG(1450, 101, TT_CP_RUNNING, TT_ST_GPU,
			      "sync cuMemcpyDtoH_v2", 1400, 100),
			  SEG(1555, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1500, 100) },
		}),
	},
	/* gRPC's synchronous server: poller 103 reads A at 1100 us and wakes
	 * thread 101 of its pool at 1150, which tokenizes and starts A's
	 * generate thread 102 at 2150 (LocalAI's transformers backend); 102
	 * computes to 12150 and hands 101 the token: A let go at the start
	 * (without the rebase: at the pool's wake, 1150); 101 serves B next
	 * the same way */
	{
		SC("test_pickup_producer_work", "poller_pool"),
		.steps = STEPS(E_IN(0, 103), E_IN(0, 101), POOL_CALL(0, 102),
			       POOL_CALL(12200, 104)),
		/* B, the pool thread's next */
		RQS(RQ(1, 1000, 1100, 12200, 12210, 103, 101),
		    RQ(2, 13000, 13100, 24400, 24410, 103, 101)),
		.want = WANTS({ 1, NULL,
				{ R(complete, true), R_T(t_enqueue, 2150) } }),
	},
	/* Go's HTTP server (docs/design.md §4.4, "A poller in front of the
	 * loop"): a background goroutine reads the connection's next request
	 * (a TLS record, all of it) while the connection's goroutine is still
	 * on the last, which takes it from the buffer, woken by nobody, and
	 * hands it on at 2150 us. Without the rebase: the connection's
	 * goroutine taken for the engine, resumed at 1200 (t_dispatch), its
	 * tokenizing compute. */
	{
		SC("test_pickup_producer_work", "go_background_read"),
		.steps = STEPS(GO_BG_READ(0x80000001, 0x80000002, 0x80000003)),
		RQS(GO_BG_RQS(0x80000001, 0x80000002)),
		.want = GO_BG_WANT,
	},
	/* the same, the connection's goroutine waiting for the background
	 * read, which wakes it (a sync.Cond); the reader's g, reused, wrote
	 * another connection's token before */
	{
		SC("test_pickup_producer_work", "go_background_read_woken"),
		.steps = STEPS(GO_BG_WAKE(0x80000001, 0x80000002, 0x80000003)),
		RQS(GO_BG_RQS(0x80000001, 0x80000002),
		    RQ(3, 10, 15, 30, 40, 0x80000005, 0x80000001,
		       .t_end = 50 * US)),
		.want = GO_BG_WANT,
	},
	/* Go's HTTP/2 server: the token's writer is a goroutine started for
	 * the frame on a g that another one, busy at the read, ran on and
	 * exited: not the reader's hand-off's taker (without go_exited():
	 * read by it at 1200, network.in 200 us) */
	{
		SC("test_pickup_producer_work", "go_h2_frame_writer"),
		.steps = STEPS(GO_H2_WRITER(0x80000001, 0x80000002,
					    0x80000003)),
		RQS(RQ(1, 1000, 1100, 12200, 12210, 0x80000001, 0x80000002)),
		.want = WANTS({ 1, NULL,
				{ R(complete, true), R_T(t_enqueue, 2150),
				  R_T(t_dispatch, 2155),
				  R_STAGE(TT_ST_NET_IN, 100) } }),
	},
	/* threads, not goroutines: a reader that woke nobody is no poller,
	 * the rules read it (the handler, resumed, taken for the engine) */
	{
		SC("test_pickup_producer_work", "thread_background_read"),
		.steps = STEPS(GO_BG_READ(201, 202, 203)),
		RQS(GO_BG_RQS(201, 202)),
		.want = WANTS({ 1, NULL, { R(complete, true),
					   R_T(t_dispatch, 1200) } }),
	},
	/* vLLM V0's loop 101 hands its step's forward to worker 102 at 1500
	 * us (run_in_executor), the worker waits 2 ms for a CPU beside two
	 * hogs, computes, answers the loop at 5500 and waits again: the step
	 * admitted A at the hand-off (without the rule: at the worker's run,
	 * 3500) */
	LOOP_CALLEE("loop_callee", 5510, R_T(t_dispatch, 1500),
		    R(dispatch, TT_CP_DISP_PICKUP)),
	/* a worker that goes on computing the request's tokens after its
	 * first answer (an executor holding the model: pool) took A up when
	 * it ran */
	LOOP_CALLEE("loop_callee_computes_on", 7000, R_T(t_dispatch, 3500)),
	/* a worker that answers through a lock's word, not the loop's
	 * socket pair (an engine thread's condition variable), while 104
	 * writes to the loop: no callee */
	LOOP_CALLEE_WITH("loop_callee_no_answer", 5510,
			 (E_IN(5390, 104), E_DATA(5400, 104, 101, NR_WRITE, 6),
			  E_WAKE(5400, 104, 101, NR_WRITE, 6), E_IN(5402, 101),
			  E_DREAD(5404, 101),
			  E_OUT(5406, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			  E_WAKE(5500, 102, 101, NR_FUTEX, 0x500)),
			 R_T(t_dispatch, 3500)),
	/* gRPC's poller 103 reads each call and writes the loop 101 a notice;
	 * the loop runs the servicer and vLLM V0's engine, whose forward is
	 * worker 102's (grpc.aio, tools/scenarios' localai). X is taken into
	 * the step at 500 us; A, read at 1100, noticed at 1150, its handler
	 * run from 1230 after the loop asked the poller for its message
	 * (1200-1220), let go at the loop's wait at 2230, waits for the step
	 * X's result ends: dispatched at 2700 (without the rebase: at the
	 * loop's pick-up, 1155; without the ask: queued from 1205) */
	POLLER_LOOP("poller_loop", POLLER_ASK,
		    R_T(t_enqueue, 2230), R_T(t_dispatch, 2700),
		    R(dispatch, TT_CP_DISP_PICKUP)),
	/* a wait the poller's data ends, though the loop asked it nothing
	 * (104 wrote to it): the loop's work on A ended there, queued from
	 * 1205 */
	POLLER_LOOP("poller_loop_other_wait",
		    (E_IN(1190, 104), E_DATA(1195, 104, 103, NR_WRITE, 7),
		     E_OUT(1205, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
		     E_DATA(1220, 103, 101, NR_WRITE, 6),
		     E_WAKE(1220, 103, 101, NR_WRITE, 6)),
		    R_T(t_enqueue, 1205), R_T(t_dispatch, 2700)),
	/* The engine loop in the reader's thread (vLLM V0): A queued from
	 * its headers at 1500 us to its step's hand-off to the worker at
	 * 2100, dispatched there (without the rule: enqueued and
	 * dispatched at the worker's wake, 2100 and 2105, no queue) */
	ENGINE_LOOP("engine_loop_step", 1500, WORKER_RESULT,
		    R_T(t_enqueue, 1500), R_T(t_dispatch, 2100),
		    R(enqueue, TT_CP_ENQ_HANDOFF), R_STAGE(TT_ST_QUEUE, 600)),
	/* A, B and C read in one batch, their handlers run back to back and
	 * their headers sent together at 1420-1450 us: A's handler let it go
	 * at its third of the loop's CPU from C's read to the first headers,
	 * less a headers' start (15 us, as between the headers): 815
	 * (without the rule: at its headers, 1420) */
	ENGINE_LOOP_SHARE("engine_loop_share", 1420, 1435, 1450, 101, 2050,
			  LOOP_NAMED, R_T(t_enqueue, 815),
			  R(enqueue, TT_CP_ENQ_SHARE)),
	/* C's long body read from 520 to 1045 us, the loop's CPU between its
	 * own: one batch of three, A's a third of the CPU from C's last read
	 * to the headers, less a headers' start (120 of 375 less 15), 1165
	 * (without: A and B a batch that C's read ended, 777.5) */
	ENGINE_LOOP_BATCH_C("engine_loop_share_long_read", 1420, 1435, 1450,
			    101, 2050, 1045, 520, LOOP_NAMED, (),
			    R_T(t_enqueue, 1165), R(enqueue, TT_CP_ENQ_SHARE)),
	/* C read whole at 1045 us by a CPython loop, in by 420, before A's
	 * read: one poll returned the three (h11 parsed B's long body in
	 * between), one batch: 1165 (without: 777.5) */
	ENGINE_LOOP_BATCH_C("engine_loop_share_polled", 1420, 1435, 1450, 101,
			    2050, 1045, 0,
			    (UNPAREN LOOP_NAMED,
			     E_RTLOCK(0, 101, 0x7200, 0x7300)),
			    (), R_T(t_enqueue, 1165),
			    R(enqueue, TT_CP_ENQ_SHARE)),
	/* The same by another loop (Node's runs a handler at its read): A
	 * and B a batch that C's read ended */
	ENGINE_LOOP_BATCH_C("engine_loop_share_polled_node", 1420, 1435, 1450,
			    101, 2050, 1045, 0, LOOP_NAMED, (),
			    R_T(t_enqueue, 777.5),
			    R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop preempted from 600 to 900 us: a third of its CPU (195 of
	 * 600 less 15), 1015 */
	ENGINE_LOOP_SHARE("engine_loop_share_preempted", 1420, 1435, 1450,
			  101, 2050, (E_PREEMPT(600, 101), E_IN(900, 101)),
			  R_T(t_enqueue, 1015), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop preempted from 800 to 841 us, its headers 10 us apart
	 * from 1420: A's share (283 of 859 us of CPU, less 10) ends 3 us
	 * into its run after the preemption, within a headers' start of it:
	 * A's handler had ended at the preemption, 800 (without: 844) */
	ENGINE_LOOP_SHARE("engine_loop_share_tail", 1420, 1430, 1440, 101,
			  2050, (E_PREEMPT(800, 101), E_IN(841, 101)),
			  R_T(t_enqueue, 800), R(enqueue, TT_CP_ENQ_SHARE)),
	/* Each handler's headers sent as it let its request go (aiohttp's
	 * prepare()): A's at 700 us, B's at 1000; the headers are the point
	 * (without the test: a third of the CPU to 700, less a headers'
	 * start) */
	ENGINE_LOOP_SHARE("engine_loop_share_each", 700, 1000, 1440, 101, 2050,
			  LOOP_NAMED, R_T(t_enqueue, 700),
			  R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* B's headers before A's: no run of handlers in the order of the
	 * reads, A's headers are its point */
	ENGINE_LOOP_SHARE("engine_loop_share_unordered", 1430, 1420, 1440, 101,
			  2050, LOOP_NAMED, R_T(t_enqueue, 1430),
			  R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The loop waited in epoll at 1000-1100 us, before the headers: it
	 * had nothing to do, the handlers had run (their hand-offs done) by
	 * that next turn: A's a third of 480 us of CPU, 680 (without the
	 * turn: the wait, 1000) */
	ENGINE_LOOP_SHARE("engine_loop_share_waited", 1420, 1430, 1440, 101,
			  2050,
			  (E_OUT(1000, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			   E_SOFTIRQ(1100, UNTRACED, 101), E_IN(1105, 101)),
			  R_T(t_enqueue, 680), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop woke thread 104 at 700 us, in A's share (A's handler the
	 * batch's first): A's own hand-off (to a thread pool), which the
	 * share leaves to the other rules */
	ENGINE_LOOP_SHARE("engine_loop_share_woke", 1420, 1430, 1440, 101, 2050,
			  LOOP_WOKE(700),
			  R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* B's first token written by another thread (103): B's headers are
	 * not the loop's, A's are its point */
	ENGINE_LOOP_SHARE("engine_loop_share_other_writer", 1420, 1430, 1440,
			  103, 2050, LOOP_NAMED, R_T(t_enqueue, 1420),
			  R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The loop wrote the first request's first token at 1200 us, amid
	 * the run: not the handlers' CPU alone, A's headers are its point */
	ENGINE_LOOP_SHARE("engine_loop_share_token_between", 1420, 1430, 1440,
			  101, 1200, LOOP_NAMED, R_T(t_enqueue, 1420),
			  R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The loop's put of A wakes consumer 102 at 700 us, which waits for
	 * a CPU till 1500 and takes A and B up then. B's pick-up is no wake
	 * of its own: its handler began after it (at 815), its put at its
	 * share, 1110; A's is the wake */
	SHARE_PICKUP("engine_loop_share_pickup", 700,
		     ({ 1, NULL,
			{ R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 1500), R(enqueue, TT_CP_ENQ_PICKUP),
			  R_T(t_enqueue, 700) } })),
	/* The wake at 600 us, in the first half of A's share: no earlier
	 * handler's put (A's is the batch's first), A's own */
	SHARE_PICKUP("engine_loop_share_pickup_first", 600,
		     ({ 1, NULL,
			{ R(enqueue, TT_CP_ENQ_PICKUP),
			  R_T(t_enqueue, 600) } })),
	/* The loop's wake of 102 at 1410 us, after C's share (1405) and
	 * before the headers: the loop's own engine task took the batch up
	 * in the turn that ran its handlers (vLLM V0's AsyncLLMEngine): A's
	 * and B's puts at their shares, 815 and 1110 (without: the wake),
	 * and the step, handed to its callee at the wake, admitted them
	 * there (without the callee: at 102's run, 1500) */
	SHARE_PICKUP_WANT("engine_loop_share_step", 1410,
			  ({ 2, NULL,
			     { R(dispatch, TT_CP_DISP_PICKUP),
			       R_T(t_dispatch, 1410),
			       R(enqueue, TT_CP_ENQ_SHARE),
			       R_T(t_enqueue, 1110) } }),
			  ({ 1, NULL,
			     { R(dispatch, TT_CP_DISP_PICKUP),
			       R_T(t_dispatch, 1410),
			       R(enqueue, TT_CP_ENQ_SHARE),
			       R_T(t_enqueue, 815) } })),
	/* The same wake at 1460 us, after the headers: in a later turn,
	 * nothing says the batch's handlers came before it, and the wake is
	 * the pick-up of both */
	SHARE_PICKUP_WANT("engine_loop_share_step_late", 1460,
			  ({ 2, NULL,
			     { R(enqueue, TT_CP_ENQ_PICKUP),
			       R_T(t_enqueue, 1460) } }),
			  ({ 1, NULL,
			     { R(enqueue, TT_CP_ENQ_PICKUP),
			       R_T(t_enqueue, 1460) } })),
	/* The wake at 850 us, 35 us into B's share: still nearer A's end
	 * (815) than B's (1110), A's put; B's is its share */
	SHARE_PICKUP("engine_loop_share_pickup_late", 850,
		     ({ 1, NULL,
			{ R(enqueue, TT_CP_ENQ_PICKUP),
			  R_T(t_enqueue, 850) } })),
	/* No headers before the tokens: the batch's handlers ran from C's
	 * read to the loop's next poll, 1600 us; A's at the first third of
	 * that CPU, 880 (without: the wait, 1600) */
	ENGINE_LOOP_TURN("engine_loop_share_turn", 2050, LOOP_NAMED,
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop read its self-pipe at 1300 us, written at 1000 (after
	 * the batch's reads: its next turn read it): A's a third of 780 us
	 * of CPU, 780 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe", 2050,
			 (E_DATA_K(1000, 102, 101, UNIX),
			  E_DREAD_K(1300, 101, UNIX)),
			 R_T(t_enqueue, 780), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The same pipe written at 505 us and read by a CPython loop 5 us
	 * after its first poll since the batch's reads, at 530, right after
	 * them, its polls recorded (those that returned nothing too): no
	 * handler ran before it (aiohttp runs a batch's handlers after the
	 * second poll), no end; the poll at 1600 is: 880 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_at_poll", 2050,
			 PIPE_AT_POLL(TURN_POLLS(530)),
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* ... or by Node's loop (no rule of CPython's): an end, A's a third
	 * of 15 us of CPU, 525 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_at_poll_node", 2050,
			 PIPE_AT_POLL(LOOP_POLLS(530)),
			 R_T(t_enqueue, 525), R(enqueue, TT_CP_ENQ_SHARE)),
	/* ... but the loop sent an earlier request's headers at 527 us,
	 * between the reads and the poll: a handler ran before it (uvloop
	 * runs a batch's handlers before its next poll), an end: 525 */
	ENGINE_LOOP_BATCH("engine_loop_share_turn_pipe_at_poll_headers", 0, 0,
			  0, 101, 2050,
			  PIPE_AT_POLL(TURN_POLLS(530)),
			  (RQ(5, 10, 20, 3200, 3210, 101, 101,
			      .t_headers = 527 * US, .t_end = 5000 * US)),
			  R_T(t_enqueue, 525), R(enqueue, TT_CP_ENQ_SHARE)),
	/* ... or it woke thread 104 at 527 us, between the reads and the
	 * poll: a handler handed on before it, an end: 525 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_at_poll_woke", 2050,
			 PIPE_AT_POLL(TURN_POLLS(530), UNPAREN LOOP_WOKE(527)),
			 R_T(t_enqueue, 525), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop read request D (its connection's first) at 1030 us, 10 us
	 * after its first poll since the batch's reads, at 1020, right after
	 * them (500 us of CPU, a parse's): no handler ran before it, no end
	 * of theirs (D not of the batch: more than a batch's gap after C):
	 * A's at 880 */
	ENGINE_LOOP_BATCH("engine_loop_share_turn_read_at_poll", 0, 0, 0, 101,
			  2050, (TURN_POLLS(1020)),
			  (RQ(5, 1000, 1030, 3200, 3210, 101, 101,
			      .t_end = 5000 * US)),
			  R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* turn_pipe's read 10 us after the first poll since the batch's
	 * reads, at 1290 us, 770 us of CPU after them, more than a parse of
	 * C's request: the handlers may have run before that poll (uvloop
	 * runs them before it), an end: 780 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_late_poll", 2050,
			 (E_DATA_K(1000, 102, 101, UNIX), TURN_POLLS(1290),
			  E_DREAD_K(1300, 101, UNIX)),
			 R_T(t_enqueue, 780), R(enqueue, TT_CP_ENQ_SHARE)),
	/* turn_pipe_at_poll's read after the second poll since the batch's
	 * reads (one returned nothing at 525 us): the handlers ran before it
	 * (MLC's uvicorn runs them after the first), an end: 525 */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_second_poll", 2050,
			 PIPE_AT_POLL(E_POLL_NONE(525, 101), TURN_POLLS(530)),
			 R_T(t_enqueue, 525), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The same pipe written at 470 us, before the batch's reads: read in
	 * the turn that read them (the handlers not run yet), no end of
	 * theirs; the poll at 1600 is */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_early", 2050,
			 (E_DATA_K(470, 102, 101, UNIX),
			  E_DREAD_K(1300, 101, UNIX)),
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The same with an eventfd written at 1000 us: new data, but not
	 * what the read at 1300 took (the unix socket's, written before the
	 * reads), so still no end there */
	ENGINE_LOOP_TURN("engine_loop_share_turn_pipe_other", 2050,
			 (E_DATA_K(470, 102, 101, UNIX),
			  E_DATA_K(1000, 102, 101, EVENTFD),
			  E_DREAD_K(1300, 101, UNIX)),
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop read request D at 1300 us (ready at a poll that did not
	 * wait): the batch's handlers ended there, A's at 780 */
	ENGINE_LOOP_BATCH("engine_loop_share_turn_read", 0, 0, 0, 101, 2050,
			  LOOP_NAMED,
			  (RQ(5, 1250, 1300, 3200, 3210, 101, 101,
			      .t_end = 5000 * US)),
			  R_T(t_enqueue, 780), R(enqueue, TT_CP_ENQ_SHARE)),
	/* The loop wrote the first request's token at 1200 us, read before
	 * the batch: its stream's task ran among the handlers, no end of
	 * theirs; the poll at 1600 is, A's at 880 (MLC's loop with long
	 * prompts: without, A's t_enqueue fell back to the loop's next read,
	 * B's at 510) */
	ENGINE_LOOP_TURN("engine_loop_share_turn_token", 1200, LOOP_NAMED,
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* A fourth request of the batch, read at 525 us, wrote its token at
	 * 1200: a handler may send its own (MLC's awaits the first output),
	 * so no end of the batch's (A's falls back to B's read, 510) */
	ENGINE_LOOP_BATCH("engine_loop_share_turn_own_token", 0, 0, 0, 101,
			  2050, LOOP_NAMED,
			  (RQ(5, 430, 525, 1200, 1210, 101, 101,
			      .t_end = 5000 * US)),
			  R_T(t_enqueue, 510), R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The loop waited on a futex at 1000-1050 us (woken by 102): a
	 * handler's own wait, not a poll, so no end of the batch's */
	ENGINE_LOOP_TURN("engine_loop_share_turn_waited", 2050,
			 (E_OUT(1000, 101, .sys = NR_FUTEX, .arg0 = 0x900),
			  E_WAKE(1050, 102, 101, NR_FUTEX, 0x900),
			  E_IN(1050, 101)),
			 R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The loop woke thread 104 at 600 us, in the first half of A's share
	 * (520-880): A's own hand-off (its handler is the batch's first, no
	 * earlier one's put), which the share leaves to the other rules */
	ENGINE_LOOP_TURN("engine_loop_share_turn_woke", 2050,
			 LOOP_WOKE(600),
			 R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The same wake at 505 us, between A's read and C's: a handler ran
	 * between the reads, not one run of handlers after them */
	ENGINE_LOOP_TURN("engine_loop_share_turn_woke_between", 2050,
			 LOOP_WOKE(505),
			 R(enqueue, TT_CP_ENQ_HANDOFF)),
	/* The same wake at 900 us, in the first half of B's share: B's or
	 * A's put, no sign that A's share is wrong */
	ENGINE_LOOP_TURN("engine_loop_share_turn_woke_late", 2050,
			 LOOP_WOKE(900),
			 R_T(t_enqueue, 880), R(enqueue, TT_CP_ENQ_SHARE)),
	/* A busy engine 102 ends a step at 700 us (X's token to its reader
	 * 111) and waits for a CPU until 1700, when it takes A, B and C up,
	 * put by the loop's handlers after 520, no headers before the
	 * tokens: A's put at its share, 880, after the walk's cut at the
	 * engine's hand-off (without: B's read, 510) */
	{
		SC("test_pickup_producer_work", "engine_loop_share_after_cut"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 111),
			       E_OUT(110, 111, .sys = NR_FUTEX, .arg0 = 0x90),
			       E_OUT(300, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_SOFTIRQ(450, UNTRACED, 101), E_IN(460, 101),
			       E_WAKE(700, 102, 111, NR_FUTEX, 0x90),
			       E_IN(705, 111), E_PREEMPT(710, 102),
			       E_OUT(800, 111, .sys = NR_FUTEX, .arg0 = 0x90),
			       E_OUT(1600, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(1700, 102), ENGINE_LOOP_TOKEN),
		RQS(RQ(1, 50, 100, 750, 760, 111, 111),
		    RQ(2, 400, 500, 3050, 3060, 101, 101, .t_end = 5000 * US),
		    RQ(3, 410, 510, 3100, 3110, 101, 101, .t_end = 5000 * US),
		    RQ(4, 420, 520, 3150, 3160, 101, 101, .t_end = 5000 * US)),
		.want = WANTS({ 2, NULL, { R(complete, true),
					   R(dispatch, TT_CP_DISP_HANDOFF),
					   R_T(t_dispatch, 1700),
					   R(enqueue, TT_CP_ENQ_SHARE),
					   R_T(t_enqueue, 880) } }),
	},
	/* The same without headers sent: from the loop's first block after
	 * A's read, 1600 us */
	ENGINE_LOOP("engine_loop_no_headers", 0, WORKER_RESULT,
		    R_T(t_enqueue, 1600), R_T(t_dispatch, 2100),
		    R_STAGE(TT_ST_QUEUE, 500)),
	/* The same with the loop woken at 2000 us by the network, not by
	 * the worker (which woke another thread at 1900): no step of the
	 * worker's ended the loop's wait, and its wake at 2100 is A's own
	 * hand-off (pick-up) */
	ENGINE_LOOP("engine_loop_other_wake", 1500,
		    (E_WAKE(1900, 102, 150, NR_FUTEX, 0x900),
		     E_SOFTIRQ(2000, UNTRACED, 101)),
		    R_T(t_enqueue, 2100), R_T(t_dispatch, 2105),
		    R(enqueue, TT_CP_ENQ_PICKUP)),
	/* The same with the loop's wait ended at 2000 us by its timer, as a
	 * batcher's delay for more requests ends (Ray Serve's
	 * batch_wait_timeout_s): A waited in the loop from its headers, as
	 * with the worker's result */
	ENGINE_LOOP("engine_loop_timer", 1500, (E_IRQ(2000, UNTRACED, 101)),
		    R_T(t_enqueue, 1500), R_T(t_dispatch, 2100),
		    R(enqueue, TT_CP_ENQ_HANDOFF), R_STAGE(TT_ST_QUEUE, 600)),
	/* The same with A's headers sent at 2050 us, after the timer: the
	 * loop had not let A go while it waited, and its wake at 2100 is A's
	 * own hand-off (pick-up) */
	ENGINE_LOOP("engine_loop_timer_before", 2050,
		    (E_IRQ(2000, UNTRACED, 101)), R_T(t_enqueue, 2100),
		    R_T(t_dispatch, 2105), R(enqueue, TT_CP_ENQ_PICKUP)),
	/* X's step done at 800 us, while the loop ran A's handler: the
	 * loop takes the result after the handlers it runs, sends A's
	 * headers at 1500 and hands the next step (A's) to the worker at
	 * 1700, not waiting between. A waited for X's step from its
	 * headers (without the rule: enqueued and dispatched at the
	 * worker's wake, 1700 and 1705, no queue) */
	LOOP_RESULT_EARLY("engine_loop_step_result_early", 102, 0x300,
			  LOOP_NAMED, R(enqueue, TT_CP_ENQ_HANDOFF),
			  R_T(t_enqueue, 1500), R_T(t_dispatch, 1700),
			  R_STAGE(TT_ST_QUEUE, 200)),
	/* The same from a relay, 104, which passes the step to the worker
	 * at 1715 (LitServe's getter of the responses): no step of a worker
	 * the loop waited for, A's pick-up the loop's wake, its dispatch
	 * the worker's run (with the rule: enqueued at its headers) */
	LOOP_RESULT_EARLY("engine_loop_relay_result", 104, 0x70, (LOOP_RELAY),
			  R(enqueue, TT_CP_ENQ_PICKUP), R_T(t_enqueue, 1700),
			  R_T(t_dispatch, 1720)),
	/* A's headers at 1500 us, no result of the worker's since its read;
	 * the loop reads B at 1550, after a poll, and hands a step to the
	 * worker at 1700 (a batcher whose batch B filled: tools/scenarios'
	 * v0-delay): A waited for the step from its headers (without the
	 * rule: enqueued at the worker's wake, no queue) */
	LOOP_READ_LATER("engine_loop_read_later", 102, 0x300, LOOP_NAMED,
			R(enqueue, TT_CP_ENQ_HANDOFF), R_T(t_enqueue, 1500),
			R_T(t_dispatch, 1700)),
	/* The same with A's handler waking thread 104 at 1000 us, before
	 * its headers (Hugging Face's generate thread started): not let go
	 * silently, the wake at 1700 its own hand-off (with the rule:
	 * enqueued at its headers) */
	LOOP_READ_LATER("engine_loop_read_later_woke", 102, 0x300,
			LOOP_WOKE(1000), R(enqueue, TT_CP_ENQ_PICKUP),
			R_T(t_enqueue, 1700), R_T(t_dispatch, 1705)),
	/* ... and with the loop's wake at 1700 us of a relay */
	LOOP_READ_LATER("engine_loop_read_later_relay", 104, 0x70, (LOOP_RELAY),
			R(enqueue, TT_CP_ENQ_PICKUP), R_T(t_enqueue, 1700),
			R_T(t_dispatch, 1720)),
	/* engine_loop_timer's step handed on as CPython's executor does: the
	 * loop's put wakes worker 102 at 2100 us, which hands the loop the
	 * GIL it waits for and waits for it in turn, till the loop drops it
	 * at 2118; 102 computes from 2125. Still the loop's step: A queued
	 * from its headers to the put (without the loop's step first: queued
	 * from the put to the GIL's wake, t_dispatch 2125) */
	{
		SC("test_pickup_producer_work", "engine_loop_timer_gil"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300),
			       ENGINE_LOOP_READ, E_IRQ(2000, UNTRACED, 101),
			       E_IN(2005, 101),
			       E_OUT(2010, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			       PUT_GIL_BACK(2100),
			       E_OUT(2200, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       ENGINE_LOOP_TOKEN),
		ENGINE_LOOP_RQS(1500),
		.want = WANTS({ 2, NULL,
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_PICKUP),
				  R(enqueue, TT_CP_ENQ_HANDOFF),
				  R_T(t_enqueue, 1500), R_T(t_dispatch, 2100) } }),
	},
	/* The producer's own work after the read is not queueing (pick-up):
	 * the reader 101 tokenizes for 300 us after its read (preempted
	 * 50 us of it), then wakes the idle engine 102, which wakes the
	 * writer 103. */
	{
		SC("test_pickup_producer_work", "tokenize_then_wake"),
		.steps = STEPS(E_IN(0, 101), E_IN(5, 102),
			       E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x70),
			       E_IN(6, 103),
			       E_OUT(11, 103, .sys = NR_FUTEX, .arg0 = 0x80),
			       E_PREEMPT(1200, 101), E_IN(1250, 101),
			       E_WAKE(1400, 101, 102, NR_FUTEX, 0x70),
			       E_OUT(1405, 101, .sys = NR_FUTEX, .arg0 = 0x90),
			       E_IN(1410, 102),
			       E_WAKE(1600, 102, 103, NR_FUTEX, 0x80),
			       E_OUT(1605, 102, .sys = NR_FUTEX, .arg0 = 0x70),
			       E_IN(1610, 103)),
		RQS(RQ(1, 1000, 1100, 1700, 1750, 101, 103)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 250 + 190 + 90,
			       [TT_ST_RUNQUEUE] = 50 + 10 + 10,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_enqueue, 1400), R_T(t_dispatch, 1410),
			  R_T(t_token, 1600) },
			{ SEG(1150, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1100, 100),
			  SEG(1220, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1200, 50),
			  SEG(1300, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1250, 150),
			  SEG(1405, 102, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1400, 10) },
		}),
	},
	/* the engine woke to take the request up but must hold the GIL to
	 * return from its wait: 101 let it go at 1440 us, the engine ran 10 us
	 * and waited again (it let it go at once: a holder asked to drop it)
	 * until 1480; taken up when it ran then (1490), both waits the GIL's
	 * (past the first only: 1450, 3.2 ms early in odirect beside two CPU
	 * hogs; without: t_dispatch 1410) */
	PICKUP_THEN_GIL("pickup_then_gil", 1490, 20 + 20,
			E_WAKE(1440, 101, 102, NR_FUTEX, 0x7200),
			E_OUT(1485, 101, .sys = NR_FUTEX, .arg0 = 0x90),
			E_IN(1450, 102),
			E_OUT(1460, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
			E_WAKE(1480, 101, 102, NR_FUTEX, 0x7200),
			E_IN(1490, 102)),
	/* its wait timed out at 1470 us (CPython asks the holder to drop
	 * the lock then) and it waited again until 101 let it go at 1500:
	 * held from 1510 (without going past a timed-out wait: 1475) */
	PICKUP_THEN_GIL("pickup_then_gil_timeout", 1510, 50 + 20,
			E_IRQ(1470, 103, 102), E_IN(1475, 102),
			E_OUT(1480, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
			E_WAKE(1500, 101, 102, NR_FUTEX, 0x7200),
			E_OUT(1505, 101, .sys = NR_FUTEX, .arg0 = 0x90),
			E_IN(1510, 102)),
	/* A hand-off to a busy engine (build_busy_handoff): walked with X and
	 * A, then again with Y read by the event loop, never answered. */
	{
		SC("test_handoff_enqueue", "blocking_reader"),
		.build = build_busy_handoff,
		.arg = { false },
		RQS(HANDOFF_X_A),
		.want = handoff_blocking_want,
	},
	{
		SC("test_handoff_enqueue", "blocking_reader_with_y"),
		.reuse = true,
		RQS(HANDOFF_X_A, HANDOFF_Y(1300)),
		.want = handoff_blocking_want,
	},
	/* the reader waits for the GIL (0x7200) 10 us after its read of A,
	 * before its handler ran, until thread 113 lets it go: that wait is
	 * no end of its work on A, its block at 1300 us is (A queued from
	 * 1110 us before) */
	GIL_WAIT_AT("gil_before_handler", 1110, 1150, 1300, 200),
	/* its wait for the GIL after 130 us of its handler (1280 us) is its
	 * first block, as any: it may have let A go before (a put to a busy
	 * engine wakes nobody) */
	GIL_WAIT_AT("gil_after_handler", 1280, 1290, 1280, 220),
	/* a HotSpot reader stopped on a lock its JIT compiler or another
	 * handler held (a Java monitor, the queue's put lock), or at a
	 * safepoint the VM thread ended, before its handler ran or after:
	 * no end of its work on A */
	STOPPED_AT("jvm_compiler_stop", 1110, 121, 1300, 200),
	STOPPED_AT("monitor_stop_before_handler", 1110, 113, 1300, 200),
	STOPPED_AT("jvm_safepoint_after_handler", 1280, 120, 1300, 200),
	/* a peer's stop after 130 us of its handler is its first block, as
	 * any (a handler waits for its tokens on locks the handlers share,
	 * llama.cpp's server_response), unless its headers for A came after
	 * it (at 1298 us): then it had not let A go */
	STOPPED_AT("monitor_stop_after_handler", 1280, 113, 1280, 220),
	STOPPED_IN("monitor_stop_before_headers", 1280, 113, true,
		   RQS(HEADERS_X_A(1298), HANDLER_Y3), 1300, 200),
	/* a stop the engine ends (here: the engine of another request's
	 * token, 102) is a block as any: the end of its work */
	STOPPED_AT("engine_stop_after_handler", 1280, 102, 1280, 220),
	/* a thread that only writes requests (Z's writer 114, Z read by
	 * 101) is no peer handler: its wake 10 us after the read hands the
	 * reader something (another request's token), the end of its work */
	STOPPED_IN("writer_stop_before_handler", 1110, 114, false,
		   RQS(HANDOFF_X_A, RQ(4, 300, 350, 1902, 1903, 101, 114,
				       .t_end = 5000 * US)),
		   1110, 390),
	/* data a peer handler sent over loopback (its softirq's wake names
	 * it) ends a wait in epoll 10 us after the read: no lock's stop */
	{
		SC("test_handoff_enqueue", "peer_data_before_handler"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_IN(0, 113),
			       E_OUT(1110, 101, .sys = NR_EPOLL_WAIT,
				     .arg0 = 3),
			       E_SOFTIRQ(1120, 113, 101),
			       E_OUT(1122, 113, .sys = NR_FUTEX, .arg0 = 113),
			       E_IN(1125, 101)),
		RQS(HANDOFF_X_A, HANDLER_Y3),
		.want = HANDOFF_A_WANT(1500, 1110, 390),
	},
	/* the reader queues a method for the JIT at 1150 us, waking its
	 * compiler 121 (which wakes handler 112 at 1160, a lock it held):
	 * the runtime's wake, never a hand-off (docs/design.md §4.3) */
	{
		SC("test_handoff_enqueue", "jvm_compiler_wake"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_COMM(0, 120, "VM Thread"),
			       E_COMM(0, 121, "C2 CompilerThre"), E_IN(0, 121),
			       E_OUT(5, 121, .sys = NR_FUTEX, .arg0 = 0x600),
			       E_WAKE(1150, 101, 121, NR_FUTEX, 0x600),
			       E_IN(1155, 121),
			       E_WAKE(1160, 121, 112, NR_FUTEX, 112),
			       E_OUT(1162, 121, .sys = NR_FUTEX, .arg0 = 0x600),
			       E_IN(1165, 112),
			       E_OUT(1170, 112, .sys = NR_FUTEX, .arg0 = 112)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* V8's platform workers (named "node", as Node's loop is): threads
	 * 121-123 serve no request and wait on one word; reader 101 wakes
	 * 121 at 1150 us (a garbage collection's task), which wakes a
	 * request's thread (112) after. A runtime's helper pool: no hand-off,
	 * the reader's block at 1300 us is */
	BUSY_HANDOFF_CASE("rt_pool_wake", 1300, POOL_OF_3),
	/* ... and the reader waits for the task's end (1180-1190 us, a
	 * collection's join), woken by the pool: no end of its work on A */
	BUSY_HANDOFF_CASE("rt_pool_join", 1300, POOL_OF_3,
			  E_OUT(1180, 101, .sys = NR_FUTEX, .arg0 = 0x610),
			  E_IN(1185, 122),
			  E_WAKE(1190, 122, 101, NR_FUTEX, 0x610),
			  E_OUT(1192, 122, .sys = NR_FUTEX, .arg0 = 0x600),
			  E_IN(1195, 101)),
	/* the same thread alone on its word: no pool, its wake hands A on */
	BUSY_HANDOFF_CASE("rt_pool_alone", 1150, POOL_WAKE_121),
	/* 122 and 123 asleep on 0x604, the other word of 121's condition
	 * variable (glibc's waiters take the two in turn): one pool of 3
	 * (without the pair: no pool, 1150) */
	BUSY_HANDOFF_CASE("rt_pool_pair", 1300, E_IN(0, 122), E_IN(0, 123),
			  E_OUT(6, 122, .sys = NR_FUTEX, .arg0 = 0x604),
			  E_OUT(7, 123, .sys = NR_FUTEX, .arg0 = 0x604),
			  POOL_WAKE_121),
	/* POOL_OF_3 with 123 waiting in a page fault first (3-5 us): a
	 * fault's wait is the address space's, still a pool (without: 1150) */
	BUSY_HANDOFF_CASE("rt_pool_fault", 1300, E_IN(0, 122), E_IN(0, 123),
			  E_OUT(3, 123, .sys = -1), E_IN(5, 123),
			  E_OUT(6, 122, .sys = NR_FUTEX, .arg0 = 0x600),
			  E_OUT(7, 123, .sys = NR_FUTEX, .arg0 = 0x600),
			  POOL_WAKE_121),
	/* the reader waits in mmap(2) at 1180-1190 us for the address
	 * space's lock, which 124's munmap(2) held (Node's loop while V8's
	 * workers free a long prompt's heap): a stop on the way, not the end
	 * of its work on A (without: 1180) */
	BUSY_HANDOFF_CASE("reader_waits_mm", 1300, E_IN(0, 124),
			  E_OUT(1180, 101, .sys = NR_MMAP),
			  E_WAKE(1190, 124, 101, NR_MUNMAP, 0),
			  E_IN(1195, 101)),
	/* A thread per connection that writes A too (http.server's handler,
	 * CPython, GIL 0x7200): it waits for the GIL at 1270 us, 120 us of
	 * its CPU after the read, and runs on 115 us before it waits for A's
	 * tokens (1400): its tokenizing of a long prompt, A handed on at that
	 * last wait (without the rule: at the GIL wait, 1270) */
	GIL_ALONE_CASE("gil_alone_runs_on", 1400, 1400),
	/* ... the same waiting for its tokens 20 us after the GIL wait: it
	 * had put A before that wait, its end */
	GIL_ALONE_CASE("gil_alone_after_put", 1305, 1270),
	/* gil_alone_runs_on with A written by another thread (112): the
	 * reader may have handed A on before its GIL wait, its end */
	GIL_READER_CASE("gil_reader_not_writer", 1400, 1270, false,
			HANDOFF_X_A),
	/* ... with the reader reading Y at 1350 us, before A's first token:
	 * an event loop, whose GIL wait may follow A's put (without: Y's
	 * read, 1350) */
	GIL_READER_CASE("gil_reader_reads_on", 1400, 1270, true,
			HEADERS_X_A(0), HANDOFF_Y(1350)),
	/* the reader, which writes A too, sent its headers at 1150 us and
	 * then waited for a CPU before its block at 1300 us: it had handed A
	 * on by the headers */
	{
		SC("test_handoff_enqueue", "headers_then_runqueue"),
		.build = build_busy_handoff,
		.arg = { false, true },
		RQS(HEADERS_X_A(1150)),
		.want = HANDOFF_A_WANT(1500, 1150, 350),
	},
	/* its headers after the wait: nothing tells the hand-off came
	 * before the wait, the block stays its point */
	{
		SC("test_handoff_enqueue", "headers_after_runqueue"),
		.build = build_busy_handoff,
		.arg = { false, true },
		RQS(HEADERS_X_A(1260)),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* a condition variable waited on many times per request by more
	 * threads than a word keeps, notified by an engine that never waits
	 * on it: its notifies are hand-offs, the step before A's token
	 * (1500 us) its boundary; taken for a lock's, A had no dispatch */
	{
		SC("test_handoff_enqueue", "shared_condition"),
		.build = build_shared_cond,
		RQS(HEADERS_X_A(0)),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* the engine, preempted by the writer it woke at its boundary, takes
	 * A up when it runs again at 1600 us: t_dispatch there, its wait for
	 * a CPU scheduler.runqueue, the queue still ending at the boundary */
	PREEMPTED_AT("preempted_at_boundary", 1502, 1600),
	/* switched out 70 us after its boundary, not at once: it ran on and
	 * may have taken A up (llama.cpp's loop does within 4 us), so the
	 * boundary stands */
	PREEMPTED_AT("preempted_later", 1570, 1500),
	/* preempted at once by the writer it woke at its boundary (111 runs
	 * from 1505 us): as preempted_at_boundary */
	PREEMPTED_AT("preempted_by_wakee", 1505, 1600),
	/* preempted 20 us after its boundary by a traced thread it did not
	 * wake (a gateway's loop that its runner's answer woke): it had run
	 * on (llama.cpp's loop admits within 4 us), the boundary stands */
	PREEMPTED_BY_OTHER("preempted_by_other", 1520, 1500),
	/* preempted 20 us after its boundary by a thread it woke at 1515 us
	 * (114, no request's): the engine's own wakee, at once */
	{
		SC("test_handoff_enqueue", "preempted_by_late_wakee"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_IN(0, 114),
			       E_OUT(10, 114, .sys = NR_FUTEX, .arg0 = 0x114),
			       E_WAKE(1515, 102, 114, NR_FUTEX, 0x114),
			       E_PREEMPT(1520, 102), E_IN(1520, 114),
			       E_IN(1600, 102)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1600, 1300, 200),
	},
	/* preempted 40 us after its boundary by a thread not traced (a CPU
	 * hog), 115 running on the other CPU since 1400 us: at once */
	{
		SC("test_handoff_enqueue", "preempted_beside_running"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_IN(1400, 115), E_PREEMPT(1540, 102),
			       E_IN(1600, 102)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1600, 1300, 200),
	},
	/* the same 3 us after it: a CPython engine has admitted nothing yet
	 * (OTHER_AT_ONCE_NS), A taken up at its next run */
	PREEMPTED_BY_OTHER("preempted_by_other_at_once", 1503, 1600),
	/* preempted at once by the writer it woke at its boundary, the
	 * engine runs at 1600 us only to release the mutex that writer then
	 * waited on, and is preempted at once again (1 us after the wake):
	 * it takes A up when it runs next, at 1700 */
	BOUNDARY_RELEASE("release_preempted", 1602, 0, 1700),
	/* preempted 14 us after the release: it ran on, and may have taken
	 * A up then (RELEASE_AT_ONCE_NS) */
	BOUNDARY_RELEASE("release_ran_on", 1615, 0, 1600),
	/* the release wakes a thread its boundary did not: no part of that
	 * hand-off */
	BOUNDARY_RELEASE("release_other", 1602, 1, 1600),
	/* the word released is CPython's GIL: a runtime's lock, no mutex
	 * the hand-off was signalled under (the engine hands it on and runs
	 * to admit) */
	{
		SC("test_handoff_enqueue", "release_of_gil"),
		.build = build_boundary_release,
		.arg = { 1602, 0 },
		.steps = STEPS(E_RTLOCK(0, 102, 0x300, 0x400)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1600, 1300, 200),
	},
	/* A's writer, handed its first token at 1800 us through the
	 * condition variable, waits on the mutex till the engine's release
	 * after its next step (1995): the hand-off was the signal, the
	 * boundary the hand-off to X before it (1500), not the signal to X
	 * at 1801 */
	CONVOY("convoy_signal_then_mutex", false, 1500, 200),
	/* A's writer, handed its token at 1800 us, gets the mutex from X's
	 * writer, which the engine signalled after its next step (2400): the
	 * mutex's wait is a detour from the signal, no walk through X's
	 * writer to that later step (its boundary then Y's token, 2100) */
	{
		SC("test_handoff_enqueue", "convoy_released_by_writer"),
		.build = build_convoy_released,
		RQS(RQ(1, 50, 100, 1520, 1560, 101, 111, .t_end = 5000 * US),
		    RQ(2, 1000, 1100, 2600, 2650, 101, 112, .t_end = 5000 * US),
		    HANDOFF_Y3),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* A's writer, handed its token at 1800 us, waits on the mutex behind
	 * X's writer, which Y's writer releases at 1950: 111's wait is X's
	 * own turn, not A's (a lock's turn only for a thread that serves no
	 * other request) */
	{
		SC("test_handoff_enqueue", "convoy_through_writers"),
		.build = build_convoy_chain,
		RQS(HANDOFF_X_A, HANDOFF_Y3),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* the same with A's writer unsignalled, woken by its reader (no
	 * detour: the walk follows the mutex's holders): X's writer's wait
	 * for the mutex Y's writer released is X's own turn, no rule `lock`
	 * for A at 1955; the reader's wake is the pick-up */
	{
		SC("test_handoff_enqueue", "writers_turn_not_lock"),
		.build = build_convoy_chain,
		.arg = { true },
		RQS(HANDOFF_X_A, HANDOFF_Y3),
		.want = A_WANT(PICKUP, 1295, 1290, 0),
	},
	/* build_convoy_released's mutex as CPython's GIL: a convoy on the
	 * GIL the writers pass around, the same detour (its wait counted in
	 * gil_ns) */
	{
		SC("test_handoff_enqueue", "convoy_released_gil"),
		.build = build_convoy_released,
		.steps = STEPS(E_RTLOCK(0, 102, 0x300, 0x400)),
		RQS(RQ(1, 50, 100, 1520, 1560, 101, 111, .t_end = 5000 * US),
		    RQ(2, 1000, 1100, 2600, 2650, 101, 112, .t_end = 5000 * US),
		    HANDOFF_Y3),
		.want = WANTS({ 2,
				NULL,
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_HANDOFF),
				  R_T(t_dispatch, 1500), R_T(t_enqueue, 1300),
				  R(gil_ns, 598 * US) } }),
	},
	/* the other way round (woken through the mutex at 1800 us, then
	 * waiting on the condition variable till 1995): the hand-off is the
	 * signal at 1995, the boundary the previous step's, its wake of X at
	 * 1801 */
	CONVOY("convoy_mutex_then_signal", true, 1801, 501),
	/* one FUTEX_WAKE call, slow under load, wakes Y's writer 200 us
	 * before A's: one broadcast, A's own, the boundary the step before
	 * (as a burst: the wake of Y, 1800) */
	SLOW_BROADCAST("slow_broadcast", 200, 0, 1500),
	/* 300 us apart, past one call (BROADCAST_CALL_NS): two steps */
	SLOW_BROADCAST("two_broadcasts", 300, 0, 1700),
	/* Y's writer woken through a word of its own 120 us of the engine's
	 * CPU before A's: one burst (BURST_GAP_NS), as Node's worker posting
	 * a step's tokens, its wakes of the main loop that many posts apart
	 * (at 100 us: the boundary the wake of Y, 1880) */
	SLOW_BROADCAST("burst_posts_apart", 120, 0x430, 1500),
	/* 200 us: two bursts, Y's wake the boundary */
	SLOW_BROADCAST("bursts_apart", 200, 0x430, 1800),
	/* busy past its boundary (the previous batch's last step, its tokens
	 * put while its feeder was busy: no wake), the engine reads its
	 * request pipe at 1700 us: A waited in the pipe till then */
	{
		SC("test_handoff_enqueue", "pipe_read_after_boundary"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_BREAD(1700, 102)),
		RQS(HANDOFF_X_A),
		.want = TAKE_A_WANT(1700),
	},
	/* the same, then waiting for the GIL (0x7200) that 113 holds till
	 * 1800 us and for a CPU till 1850: A waited till then (LitServe's
	 * worker, its batch collected, while its feeder pickles tokens); the
	 * engine's run, GIL wait and wait for a CPU stay their stages */
	TAKE_THEN_GIL("pipe_read_then_gil", A_WANT(TAKE, 1850, 1300, 400), 1700,
		      1750),
	/* the same GIL wait after 510 us of its CPU since the take at 1505
	 * (past A's hand-off at 2000): its batch had started, the take stands
	 * (without the limit: t_dispatch 2115) */
	TAKE_THEN_GIL("pipe_read_run_then_gil", A_WANT(TAKE, 1505, 1300, 205),
		      1505, 2015),
	/* 1200 us of its CPU after its boundary, the engine reads a file
	 * (the weights or cache A's prefill needs): its hand-offs since woke
	 * nobody (X's writer busy), the boundary is stale, A was taken up at
	 * the read (the odirect scenario beside a CPU hog: t_dispatch
	 * 1.7-3.5 ms early); without: 1500 */
	STALE_BOUNDARY("storage_after_stale_boundary", 2700,
		       A_WANT(STORAGE, 2700, 1300, 1400)),
	/* read 600 us after: it may have taken A up at the boundary and
	 * read after its bookkeeping, the boundary stands */
	STALE_BOUNDARY("storage_soon_after_boundary", 2100,
		       HANDOFF_A_WANT(1500, 1300, 200)),
	/* the hypervisor took 700 us of those 1200: 500 us of its own, the
	 * boundary stands */
	STALE_BOUNDARY("storage_after_steal", 2700,
		       HANDOFF_A_WANT(1500, 1300, 200),
		       E_STEAL(1600, 2600, 102, 700),),
	/* a wait for the GIL (0x7200) between, which 113 held: no wait for
	 * input, the read is still A's storage (1090 us of its CPU) */
	STALE_BOUNDARY("storage_after_gil", 2700,
		       A_WANT(STORAGE, 2700, 1300, 1400),
		       E_RTLOCK(0, 102, 0x7200, 0x7300), E_IN(0, 113),
		       E_OUT(2000, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
		       E_WAKE(2100, 113, 102, NR_FUTEX, 0x7200),
		       E_OUT(2102, 113, .sys = NR_FUTEX, .arg0 = 0x7300),
		       E_IN(2110, 102), ),
	/* preempted at 2600, 50 us of its CPU before the read: it had taken
	 * A up, its wait for a CPU is A's (odirect beside a compile: 8 ms
	 * of queue that was the engine's runqueue); without: 2700 */
	STALE_BOUNDARY("storage_after_preemption", 2700,
		       A_WANT(STORAGE, 2600, 1300, 1300),
		       E_PREEMPT(2600, 102), E_IN(2650, 102), ),
	/* its storage span from that preemption, t_dispatch itself (without:
	 * 2700, the read) */
	STALE_BOUNDARY("storage_span_from_preemption", 2700,
		       WANTS({ 2,
			       NULL,
			       { R(dispatch, TT_CP_DISP_STORAGE),
				 R_T(t_dispatch, 2600),
				 R_T(t_storage_start, 2600) } }),
		       E_PREEMPT(2600, 102), E_IN(2650, 102), ),
	/* 250 us of its CPU since: it may have admitted A after, the read
	 * stands */
	STALE_BOUNDARY("storage_long_after_preemption", 2700,
		       A_WANT(STORAGE, 2700, 1300, 1400),
		       E_PREEMPT(2400, 102), E_IN(2450, 102), ),
	/* preempted, then it waited for its input (epoll, an interrupt's
	 * wake) before the read: no storage rule, the preemption no less
	 * (a second reviewer's case: storage 2500 without the wait's check) */
	STALE_BOUNDARY("storage_preempted_then_wait", 2700,
		       HANDOFF_A_WANT(1500, 1300, 200),
		       E_PREEMPT(2500, 102), E_IN(2550, 102),
		       E_OUT(2560, 102, .sys = NR_EPOLL_WAIT, .arg0 = 3),
		       E_IRQ(2640, 101, 102), E_IN(2650, 102), ),
	/* preempted, then a wait for the GIL (0x7200, 113's) before the
	 * read: 60 us of its CPU, the preemption stands (without going past
	 * the GIL's wait: 2650) */
	STALE_BOUNDARY("storage_preempted_then_gil", 2650,
		       A_WANT(STORAGE, 2500, 1300, 1200),
		       E_RTLOCK(0, 102, 0x7200, 0x7300), E_IN(0, 113),
		       E_OUT(1, 113, .sys = NR_FUTEX, .arg0 = 0x7300),
		       E_PREEMPT(2500, 102), E_IN(2520, 102),
		       E_OUT(2540, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
		       E_WAKE(2600, 113, 102, NR_FUTEX, 0x7200),
		       E_IN(2610, 102), ),
	/* it waited (for its input) between: a pick-up's or a batch's, no
	 * storage rule */
	STALE_BOUNDARY("storage_after_wait", 2700,
		       HANDOFF_A_WANT(1500, 1300, 200),
		       E_OUT(2000, 102, .sys = NR_EPOLL_WAIT, .arg0 = 3),
		       E_IRQ(2100, 101, 102), E_IN(2110, 102),),
	/* a read of an eventfd or a socket there is no such take */
	{
		SC("test_handoff_enqueue", "other_read_after_boundary"),
		.build = build_busy_handoff,
		.arg = { false },
		.steps = STEPS(E_DREAD(1700, 102)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1500, 1300, 200),
	},
	/* nor a read after it waited (in epoll_wait, an interrupt's wake): a
	 * relay reading what it was handed */
	BUSY_GIL_ENGINE("pipe_read_after_wait",
			HANDOFF_A_WANT(1500, 1300, 200),
			E_OUT(1600, 102, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			E_IRQ(1650, 113, 102),
			E_OUT(1652, 113, .sys = NR_FUTEX, .arg0 = 0x7300),
			E_IN(1655, 102), E_BREAD(1700, 102)),
	/* a wait for the GIL hands nothing on: LitServe's worker, busy with
	 * its batch's last puts under a CPU hog, waited for the GIL its
	 * feeder held, then read its next batch from its pipe (without:
	 * the boundary, 1500) */
	BUSY_GIL_ENGINE("pipe_read_after_gil", TAKE_A_WANT(1700),
			E_OUT(1600, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
			E_WAKE(1650, 113, 102, NR_FUTEX, 0x7200),
			E_OUT(1652, 113, .sys = NR_FUTEX, .arg0 = 0x7300),
			E_IN(1655, 102), E_BREAD(1700, 102)),
	/* past its GIL hand-backs and its wait for a CPU, it reads its
	 * request pipe (LitServe's worker collating its next batch): queued
	 * till then, the wait for a CPU included */
	PREEMPTED_GIL("preempted_gil_then_read", E_BREAD, TAKE_A_WANT(1810)),
	/* no pipe read (vLLM's loop admits from an in-process queue as soon
	 * as it runs): its first run after the boundary, the rest of its
	 * wait for a CPU scheduler.runqueue */
	PREEMPTED_GIL("preempted_gil_no_take", E_DREAD,
		      HANDOFF_A_WANT(1520, 1300, 200)),
	/* the same engine behind an event loop that hands requests to ZMQ:
	 * A's send (1550 us) comes after the boundary, before the engine ran
	 * again (1600 us): handed on then, nothing queued */
	{
		SC("test_msg_send", "send_after_boundary"),
		.build = build_busy_handoff,
		.arg = { true },
		.steps = STEPS(E_MSG(120, 101), E_MSG(1550, 101),
			       E_PREEMPT(1502, 102), E_IN(1600, 102)),
		RQS(HANDOFF_X_A),
		.want = HANDOFF_A_WANT(1600, 1550, 0),
	},
	/* an event loop that never blocks lets A go when it reads Y */
	{
		SC("test_handoff_enqueue", "event_loop_reads_y"),
		.build = build_busy_handoff,
		.arg = { true },
		RQS(HANDOFF_X_A, HANDOFF_Y(1350)),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 100, [TT_ST_CPU] = 200 + 540,
			       [TT_ST_RUNQUEUE] = 60, [TT_ST_QUEUE] = 150,
			       [TT_ST_NET_OUT] = 50),
			{ R_T(t_enqueue, 1350), R_T(t_dispatch, 1500) },
		}),
	},
	/* the same loop, A's handler run after Y's read (asyncio runs a
	 * request's task after the reads of its epoll batch): A goes when
	 * the loop wakes its sender thread for it at 1420 us, not at Y's
	 * read (vLLM's API process: tokenize, then a ZMQ send; the sender
	 * answers, handing the loop what comes back at 3000 us) */
	{
		SC("test_handoff_enqueue", "event_loop_handler_after_y"),
		.reuse = true,
		.steps = STEPS(LOOP_WAKE(120, 101)),
		RQS(HANDOFF_X_A, HANDOFF_Y(1350)),
		.want = LOOP_A_WANT(1420, 80),
	},
	/* the same, a helper the loop set to read the answers woken at 1380
	 * us, after Y's read, which answered the loop at once (LitServe's
	 * executor thread reading the response queue): not A's hand-off */
	{
		SC("test_handoff_enqueue", "event_loop_answer_helper"),
		.build = build_busy_handoff,
		.arg = { true },
		.steps = STEPS(E_WAKE(1380, 101, 123, NR_FUTEX, 0x5123),
			       E_IN(1385, 123), E_WAKE(1390, 123, 101, NR_WRITE, 8),
			       E_OUT(1392, 123, .sys = NR_FUTEX, .arg0 = 0x5123),
			       LOOP_WAKE(120, 101)),
		RQS(HANDOFF_X_A, HANDOFF_Y(1350)),
		.want = LOOP_A_WANT(1420, 80),
	},
	/* the loop starts a worker for A at 1420 us (an executor's new
	 * thread), which tells it at once that it runs: A's hand-off */
	{
		SC("test_handoff_enqueue", "event_loop_new_worker"),
		.build = build_busy_handoff,
		.arg = { true },
		.steps = STEPS(E_FORK(1415, 101, 124, "worker"),
			       E_WAKE_NEW(1420, 101, 124, 56), E_IN(1425, 124),
			       E_WAKE(1430, 124, 101, NR_FUTEX, 0x5124)),
		RQS(HANDOFF_X_A, HANDOFF_Y(1350)),
		.want = LOOP_A_WANT(1420, 80),
	},
	/* the same loop waking a runtime's own thread at 1420 us (V8's
	 * platform workers: it wakes only another of them, nobody that
	 * serves a request): no hand-off, A still goes at Y's read */
	{
		SC("test_handoff_enqueue", "event_loop_runtime_wake"),
		.build = build_busy_handoff,
		.arg = { true },
		.steps = STEPS(LOOP_WAKE(121, 122)),
		RQS(HANDOFF_X_A, HANDOFF_Y(1350)),
		.want = LOOP_A_WANT(1350, 150),
	},
	/* without Y it never let A go before the boundary: no queue */
	{
		SC("test_handoff_enqueue", "event_loop_alone"),
		.build = build_busy_handoff,
		.arg = { true },
		RQS(HANDOFF_X_A),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 100, [TT_ST_CPU] = 350 + 540,
			       [TT_ST_RUNQUEUE] = 60, [TT_ST_NET_OUT] = 50),
			{ R_T(t_enqueue, 1500),
			  R(dispatch, TT_CP_DISP_HANDOFF) },
		}),
	},
	/* One request in flight (ONE_IN_FLIGHT): a wake under the mutex and
	 * one at its unlock ... */
	{
		SC("test_one_in_flight", "cond_under_mutex"),
		.steps = ONE_IN_FLIGHT(DOUBLE_WAKE),
		RQS(RQ(1, 1000, 1100, 2400, 2450, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100,
			       [TT_ST_CPU] = 100 + 80 + 70 + 20,
			       [TT_ST_RUNQUEUE] = 20 + 20, [TT_ST_SLEEP] = 990,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 1220), R_T(t_token, 2360) },
			{ SEG(1800, 102, TT_CP_BLOCKED, TT_ST_SLEEP,
			      "nanosleep", 1300, 990) },
		}),
	},
	/* ... two wakes of the own writer with a sleep between: no
	 * boundary */
	{
		SC("test_one_in_flight", "two_wakes"),
		.steps = ONE_IN_FLIGHT(TWO_WAKES),
		RQS(RQ(1, 1000, 1100, 2400, 2450, 101, 101)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 1220), R_STAGE(TT_ST_QUEUE, 0) },
		}),
	},
	/* A busy engine 102 and an event-loop writer 101 serving X and A:
	 * the engine hands X's token to 101 at 1500 us (word 0x420), then
	 * both first tokens of A at 2000 us, signalling 0x420 under the
	 * mutex 0x3d0 (101 blocks on it) and waking 101 again at the unlock
	 * 300 us later. That double wake is one burst, A's own: the boundary
	 * is the hand-off at 1500 us. */
	{
		SC("test_double_wake_shared_writer", "one_burst"),
		.steps = STEPS(E_IN(0, 102), E_IN(0, 101),
			       E_OUT(1150, 101, .sys = NR_FUTEX, .arg0 = 0x420),
			       E_WAKE(1500, 102, 101, NR_FUTEX, 0x420),
			       E_IN(1505, 101),
			       E_OUT(1530, 101, .sys = NR_FUTEX, .arg0 = 0x420),
			       E_WAKE(2000, 102, 101, NR_FUTEX, 0x420),
			       E_IN(2005, 101),
			       E_OUT(2010, 101, .sys = NR_FUTEX, .arg0 = 0x3d0),
			       E_WAKE(2300, 102, 101, NR_FUTEX, 0x3d0),
			       E_IN(2310, 101)),
		RQS(RQ(1, 50, 100, 1520, 1560, 101, 101, .t_end = 5000 * US),
		    RQ(2, 1000, 1100, 2350, 2400, 101, 101, .t_end = 5000 * US)),
		.want = WANTS({
			2,
			NULL,
			{ R(dispatch, TT_CP_DISP_HANDOFF), R_T(t_dispatch, 1500),
			  R_T(t_enqueue, 1150), R_STAGE(TT_ST_QUEUE, 350),
			  R_STAGE(TT_ST_CPU, 50 + 800 + 40),
			  R_STAGE(TT_ST_RUNQUEUE, 10), R(complete, true) },
		}),
	},
	/*
	 * TensorRT-LLM's in-process executor (tools/scenarios' trtllm): the
	 * event loop 101 reads A at 1100 us, sends its headers at 1140 and
	 * waits; the busy executor 102 ends a step at 1500 (X's token to
	 * output thread 103, which hands it to the loop), then runs A's
	 * forward and waits for the GIL (1800) that the loop holds, reading
	 * and tokenizing B; the loop lets it go at 2500; A's token goes the
	 * same way at 2700. The loop's GIL was another request's work: the
	 * path is the executor's again below its wait, the step's end at
	 * 1500 A's dispatch (without the rule: followed down the loop's
	 * history to A's read)
	 */
	LOOP_GIL_HOLDER("loop_gil_holder", 1140, 1600, 103, LOOP_GIL_NONE,
			R(dispatch, TT_CP_DISP_HANDOFF), R_T(t_dispatch, 1500),
			R_T(gil_ns, 700)),
	/* A's headers sent after the executor began to wait (1900 us): the
	 * loop had not let A go, its history is A's */
	LOOP_GIL_HOLDER("loop_gil_holder_headers_late", 1900, 1600, 103,
			LOOP_GIL_NONE, R(dispatch, TT_CP_DISP_READ)),
	/* B read after the GIL's release (2600 us), X done: the loop served
	 * no other request then */
	LOOP_GIL_HOLDER("loop_gil_holder_alone", 1140, 2600, 103,
			LOOP_GIL_NONE, R(dispatch, TT_CP_DISP_READ)),
	/* The executor hands the loop its tokens itself: its history may
	 * hold A's */
	LOOP_GIL_HOLDER("loop_gil_holder_handed", 1140, 1600, 102,
			LOOP_GIL_NONE, R(dispatch, TT_CP_DISP_READ)),
	/* The loop woke the executor at 1300 us (a put to an idle one): the
	 * loop handed it work, its history may hold A's, followed as before
	 * (a pick-up) */
	LOOP_GIL_HOLDER("loop_gil_holder_woken", 1140, 1600, 103,
			(E_OUT(1200, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			 E_WAKE(1300, 101, 102, NR_FUTEX, 0x300),
			 E_IN(1305, 102)),
			R(dispatch, TT_CP_DISP_PICKUP)),
	/* Threads asleep when the trace began: engine 201, of a process
	 * nothing announced, and writer 102 first show up woken; 103 first
	 * shows up woken by an interrupt. They were blocked since the first
	 * event (100 us; the COMM at time 0 of a process table is not one). */
	{
		SC("test_blocked_before_trace", "first_seen_woken"),
		.steps = STEPS(
			E_COMM(0, 101, "front-end"), E_IN(100, 101),
			E_WAKE(1200, 101, 201, NR_SENDMSG, 9), E_IN(1210, 201),
			E_IRQ(1300, 0, 103), E_IN(1310, 103),
			E_WAKE(1500, 201, 102, NR_WRITE, 4), E_IN(1510, 102)),
		RQS(RQ(1, 1000, 1100, 1600, 1650, 101, 102),
		    RQ(2, 1000, 1050, 1400, 1450, 101, 103)),
		.want = WANTS(
			{
				1,
				/* 101 read 2 first, at 1050 us: on its way
				 * to it from 1's arrival */
				STAGES([TT_ST_BACKLOG] = 100,
				       [TT_ST_CPU] = 100 + 290 + 90,
				       [TT_ST_RUNQUEUE] = 20,
				       [TT_ST_NET_OUT] = 50),
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_PICKUP),
				  R_T(t_dispatch, 1210) },
				{ SEG(1300, 201, TT_CP_RUNNING, TT_ST_CPU,
				      "on-cpu", 1210, 290) },
			},
			{
				2,
				STAGES([TT_ST_NET_IN] = 50, [TT_ST_UNKNOWN] = 250,
				       [TT_ST_RUNQUEUE] = 10, [TT_ST_CPU] = 90,
				       [TT_ST_NET_OUT] = 50),
				{ R(complete, true) },
				{ SEG(1100, 103, TT_CP_BLOCKED, TT_ST_UNKNOWN,
				      "blocked before trace", 1050, 250) },
			}),
		.stats = { STAT(first_ts, 100 * US) },
		.iv = { 201, 0, 100, 1200, TT_CP_BLOCKED, TT_ST_UNKNOWN,
			"blocked before trace" },
	},
	/* A slow upload (SLOW_UPLOAD). Unknown last bytes: every wait
	 * counts, as before ... */
	{
		SC("test_net_in_last_arrive", "unknown_last_bytes"),
		.steps = SLOW_UPLOAD,
		RQS(RQ(1, 1000, 1650, 1700, 1750, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 560, [TT_ST_RUNQUEUE] = 90,
			       [TT_ST_CPU] = 50, [TT_ST_NET_OUT] = 50),
		}),
	},
	/* ... only the wait after the last bytes (t_last_arrive) delayed the
	 * request; before them it waited for the network anyway ... */
	{
		SC("test_net_in_last_arrive", "last_bytes_before_wake"),
		.reuse = true,
		RQS(RQ(1, 1000, 1650, 1700, 1750, 101, 101,
		       .t_last_arrive = 1590 * US)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 620, [TT_ST_RUNQUEUE] = 30,
			       [TT_ST_CPU] = 50, [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1610, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1600, 30),
			  SEG_AT(1310, NULL, G(stage, TT_ST_NET_IN)) },
		}),
	},
	/* ... and when they came while it waited, the rest of that wait
	 * counts */
	{
		SC("test_net_in_last_arrive", "last_bytes_in_wait"),
		.reuse = true,
		RQS(RQ(1, 1000, 1650, 1700, 1750, 101, 101,
		       .t_last_arrive = 1320 * US)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 600, [TT_ST_RUNQUEUE] = 50,
			       [TT_ST_CPU] = 50, [TT_ST_NET_OUT] = 50),
			{},
			{ SEG(1330, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 1320, 20) },
		}),
	},
	/* An event loop preempted 100 times (10 us each) while a request
	 * waits for it after its bytes came: the runqueue time stays exact,
	 * but its slices are one segment, so N waiting requests keep O(N)
	 * segments, not O(N^2). */
	{
		SC("test_reader_many_slices", "preempted_100"),
		.build = build_many_slices,
		RQS(RQ(1, 1000, 3100, 3150, 3200, 101, 101,
		       .t_last_arrive = 1000 * US)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 2100 - 1000,
			       [TT_ST_RUNQUEUE] = 1000, [TT_ST_CPU] = 50,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R_LT(nsegs, 10) },
			{ SEG_AT_HAS(3050, "100 slices",
				     G(stage, TT_ST_RUNQUEUE)) },
		}),
	},
	/* Worker 101 serves X (read at 100 us, ended at 1500): it waits for
	 * X's token (300-1200 us), waits to run, writes it and runs on. A,
	 * of a connection it takes next, came whole at 1000 us: while X is
	 * served, A waits on the worker (scheduler.backlog), whatever its
	 * state, and after X until the worker reads A (it was not woken for
	 * A: still on X's connection). */
	{
		SC("test_reader_backlog", "worker_busy"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102),
			       E_OUT(300, 101, .sys = NR_FUTEX, .arg0 = 0x10),
			       E_WAKE(1200, 102, 101, NR_FUTEX, 0x10),
			       E_IN(1210, 101)),
		RQS(RQ(1, 50, 100, 1250, 1260, 101, 101, .t_end = 1500 * US),
		    RQ(2, 1000, 1600, 1700, 1750, 101, 101,
		       .t_last_arrive = 1000 * US)),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 600, [TT_ST_CPU] = 100,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true) },
			{ SEG(1100, 101, TT_CP_PHASE, TT_ST_BACKLOG,
			      "reader busy", 1000, 600) },
		}),
	},
	/* An event loop 101 streams X (alive until 5000 us) and is running
	 * when A comes: A waits for the loop (backlog) ... */
	{
		SC("test_reader_backlog", "loop_running"),
		.steps = STEPS(E_IN(0, 101)),
		RQS(RQ(1, 50, 100, 200, 250, 101, 101, .t_end = 5000 * US),
		    RQ(2, 1000, 1050, 1100, 1150, 101, 101, .t_end = 5000 * US)),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 50, [TT_ST_CPU] = 50,
			       [TT_ST_NET_OUT] = 50),
		}),
	},
	/* ... but a loop asleep in epoll_wait, woken by A's bytes (a softirq
	 * wake), came for A: its wait for a CPU is scheduler.runqueue, its
	 * run to the read network.in, X alive or not */
	{
		SC("test_reader_backlog", "loop_woken"),
		.steps = STEPS(E_IN(0, 101),
			       E_OUT(900, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_SOFTIRQ(1000, UNTRACED, 101), E_IN(1020, 101)),
		RQS(RQ(1, 50, 100, 200, 250, 101, 101, .t_end = 5000 * US),
		    RQ(2, 1000, 1050, 1100, 1150, 101, 101, .t_end = 5000 * US)),
		.want = WANTS({
			2,
			STAGES([TT_ST_RUNQUEUE] = 20, [TT_ST_NET_IN] = 30,
			       [TT_ST_CPU] = 50, [TT_ST_NET_OUT] = 50),
		}),
	},
	/* Worker 101, idle in epoll_wait, is woken for X (950 us) and waits
	 * to run until 1020 us; A comes whole at 1000 us, and the worker
	 * reads X first (1050 us): from A's arrival it is on its way to X,
	 * A's backlog all along, its wait to run X's (without: A's runqueue
	 * 20 us and network.in 30) */
	{
		SC("test_reader_backlog", "woken_for_other"),
		.steps = STEPS(E_IN(0, 101),
			       E_OUT(900, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_SOFTIRQ(950, UNTRACED, 101), E_IN(1020, 101)),
		RQS(RQ(1, 940, 1050, 1100, 1150, 101, 101, .t_end = 1300 * US),
		    RQ(2, 1000, 1400, 1450, 1500, 101, 101,
		       .t_last_arrive = 1000 * US)),
		.want = WANTS(
			{
				1,
				STAGES([TT_ST_NET_IN] = 10 + 30,
				       [TT_ST_RUNQUEUE] = 70, [TT_ST_CPU] = 50,
				       [TT_ST_NET_OUT] = 50),
			},
			{
				2,
				STAGES([TT_ST_BACKLOG] = 400, [TT_ST_CPU] = 50,
				       [TT_ST_NET_OUT] = 50),
				{ R(complete, true) },
				{ SEG(1200, 101, TT_CP_PHASE, TT_ST_BACKLOG,
				      "reader busy", 1000, 400) },
			}),
	},
	/* Worker 101 runs when A comes whole (1000 us) and reads X, its
	 * first, which came after (1010 us): on its way to X from X's
	 * arrival, not before (A's network.in 10 us; without: backlog from
	 * 1000 us, or from X's read) */
	{
		SC("test_reader_backlog", "first_read_came_later"),
		.steps = STEPS(E_IN(0, 101)),
		RQS(RQ(1, 1010, 1030, 1060, 1070, 101, 101, .t_end = 1080 * US),
		    RQ(2, 1000, 1100, 1150, 1200, 101, 101,
		       .t_last_arrive = 1000 * US)),
		.want = WANTS({
			2,
			STAGES([TT_ST_NET_IN] = 10, [TT_ST_BACKLOG] = 90,
			       [TT_ST_CPU] = 50, [TT_ST_NET_OUT] = 50),
		}),
	},
	/* Worker 101 waits in recv for its connection's next request X2 when
	 * A comes (X1 ended at 800 us): it serves that connection until X2
	 * comes (1297 us), X2 from then on (its wake at 1300 us, its read at
	 * 1310 us) and to A's read: A's backlog, all of it. X2's own
	 * wait, its bytes in 3 us before they wake the worker, is no backlog
	 * of X1's. */
	{
		SC("test_reader_backlog", "next_request_wake"),
		.steps = STEPS(E_IN(0, 101), E_OUT(900, 101, SOCK_WAIT),
			       E_SOFTIRQ(1300, UNTRACED, 101), E_IN(1305, 101)),
		RQS(RQ(1, 50, 100, 200, 250, 101, 101, .t_end = 800 * US),
		    RQ(2, 1000, 1900, 1950, 2000, 101, 101),
		    RQ(3, 1297, 1310, 1400, 1450, 101, 101, .t_end = 1800 * US)),
		.want = WANTS(
			{
				2,
				STAGES([TT_ST_BACKLOG] = 900, [TT_ST_CPU] = 50,
				       [TT_ST_NET_OUT] = 50),
				{ R(complete, true) },
				{ SEG(1500, 101, TT_CP_PHASE, TT_ST_BACKLOG,
				      "reader busy", 1000, 900) },
			},
			{
				3,
				STAGES([TT_ST_RUNQUEUE] = 5,
				       [TT_ST_NET_IN] = 3 + 5, [TT_ST_CPU] = 90,
				       [TT_ST_NET_OUT] = 50),
			}),
	},
	/* Worker 101 serves X (read at 100 us, ended at 1200) while A waits
	 * (since 1000 us), then waits in recv on X's connection until the
	 * client's FIN wakes it (1500 us) and takes A's connection: held by
	 * X's connection until then, A's backlog. That wake is taken for
	 * A's (a network wake, nothing else arrived): the rest is A's wait to
	 * run and network.in. */
	{
		SC("test_reader_backlog", "connection_tail"),
		.steps = STEPS(E_IN(0, 101), E_OUT(1210, 101, SOCK_WAIT),
			       E_SOFTIRQ(1500, UNTRACED, 101), E_IN(1505, 101)),
		RQS(RQ(1, 50, 100, 200, 250, 101, 101, .t_end = 1200 * US),
		    RQ(2, 1000, 1600, 1700, 1750, 101, 101)),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 500, [TT_ST_RUNQUEUE] = 5,
			       [TT_ST_NET_IN] = 95, [TT_ST_CPU] = 100,
			       [TT_ST_NET_OUT] = 50),
		}),
	},
	/* The busy engine 102 is preempted at 1400 us and again at 1450 us;
	 * the recording has no switch-in between or after (a switch away
	 * from a thread the kernel does not trace), though it runs on: it
	 * hands X's token to 111 at 1500 us and A's to 112 at 2000 us.
	 * Its own switch-out and wake say it ran: A is queued from the
	 * reader's block (1300 us) to the hand-off to X (1500 us), not the
	 * engine runnable for 600 us. Run B gil, request 48. */
	{
		SC("test_missed_switch_in", "preempted_engine"),
		.steps = STEPS(
			PREEMPTED_ENGINE),
		RQS(HANDOFF_X_A),
		.want = WANTS({
			2,
			STAGES([TT_ST_BACKLOG] = 100, [TT_ST_CPU] = 200 + 540,
			       [TT_ST_RUNQUEUE] = 10, [TT_ST_QUEUE] = 200,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_HANDOFF),
			  R_T(t_dispatch, 1500), R_T(t_enqueue, 1300) },
			{ SEG(1600, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1500, 500) },
		}),
		/* at the switch-out at 1450 us and the wake at 1500 us */
		.stats = { STAT(missed_ins, 2) },
	},
	/* futex_pickup's events, with 0x7000 inside the process's CPython
	 * runtime state (the recorder found _PyRuntime there): the reader's
	 * wake of the engine is a GIL release, waited on once. It is followed
	 * (the engine waited for the GIL the reader held) but is no pick-up,
	 * and the engine's wait for it, from the read on, is the GIL's. The
	 * engine, idle since before the read, could take the request up only
	 * once it held the GIL: the last rule, gil, bounds the dispatch
	 * there (the stages stay; without it: read, t_dispatch 1100). */
	{
		SC("test_runtime_lock", "gil_wake_not_pickup"),
		.steps = STEPS(
			E_RTLOCK(0, 101, 0x6f00, 0x7100),
			FUTEX_PICKUP_STEPS),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 965,
			       [TT_ST_RUNQUEUE] = 35, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_RELEASE),
			  R_T(t_dispatch, 1230), R(enqueue, TT_CP_ENQ_RELEASE),
			  R_T(t_enqueue, 1200), R_T(gil_ns, 100) },
		}),
	},
	/* The writer waits for the GIL and nothing traced ends the wait (an
	 * interrupt's wake): other.lock, named "GIL", counted in gil_ns. */
	{
		SC("test_runtime_lock", "gil_wait_not_followed"),
		.steps = STEPS(
			E_RTLOCK(0, 101, 0x6f00, 0x7100),
			E_IN(0, 101),
			E_OUT(1500, 101, .sys = NR_FUTEX, .arg0 = 0x7000),
			E_IRQ(1800, 102, 101), E_IN(1810, 101)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 101)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 400 + 290,
			       [TT_ST_LOCK] = 300, [TT_ST_RUNQUEUE] = 10,
			       [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R_T(gil_ns, 300) },
			{ SEG(1600, 101, TT_CP_BLOCKED, TT_ST_LOCK, "GIL", 1500,
			      300) },
		}),
	},
	/*
	 * The GIL's holder busy with another request (odirect under a CPU
	 * hog): engine 102 hands X's last token to X's handler 111 at 2000 us
	 * (A's boundary), admits A and reads its weights (2010-2500 us), then
	 * waits for the GIL (2520 us) that 111, runnable since 2000 us, took
	 * at 2550 us and releases at 2600 us. 111's path counts while the
	 * engine waited; below that the path is the engine's own, its read
	 * and its hand-off at 2000 us, not 111's wait since then.
	 */
	{
		SC("test_runtime_lock", "holder_busy_with_another"),
		.steps = STEPS(
			E_RTLOCK(0, 101, 0x6f00, 0x7100),
			E_IN(0, 101), E_IN(0, 102), E_IN(1, 111),
			E_OUT(2, 111, .sys = NR_FUTEX, .arg0 = 0x111),
			E_OUT(1300, 101, .sys = NR_FUTEX, .arg0 = 0x101),
			E_WAKE(2000, 102, 111, NR_FUTEX, 0x111),
			E_OUT(2010, 102, .sys = NR_PREAD64, .arg0 = 9,
			      .mode = S_IFREG, .iowait = true),
			E_IRQ(2500, 0, 102), E_IN(2505, 102),
			E_OUT(2520, 102, .sys = NR_FUTEX, .arg0 = 0x7000),
			E_IN(2550, 111),
			E_WAKE(2600, 111, 102, NR_FUTEX, 0x7000),
			E_IN(2605, 102),
			E_WAKE(3000, 102, 101, NR_FUTEX, 0x101),
			E_IN(3010, 101)),
		RQS(RQ(1, 50, 100, 900, 950, 111, 111, .t_end = 5000 * US),
		    RQ(2, 1000, 1100, 3050, 3100, 101, 101,
		       .t_end = 5000 * US)),
		.want = WANTS({
			2,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 710,
			       [TT_ST_QUEUE] = 700, [TT_ST_STORAGE] = 490,
			       [TT_ST_RUNQUEUE] = 50, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_HANDOFF),
			  R_T(t_dispatch, 2000), R_T(t_enqueue, 1300),
			  R_T(gil_ns, 80), R_T(t_storage_start, 2010),
			  R_T(t_storage_end, 2500) },
			{ SEG(2535, 111, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			      "runqueue", 2520, 30),
			  SEG(2575, 111, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      2550, 50) },
		}),
	},
	/*
	 * The GIL's holder an accept loop (ThreadingHTTPServer's, odirect
	 * and nagle at a new batch of connections): handler 101 hands A to
	 * idle engine 102 at 1200 us (futex 0x300); 102 waits for the GIL
	 * (1230 us) that loop 105 holds while it starts X's handler 111
	 * (1300 us) and releases at 1500. The loop was not handed A: the
	 * thread it started is X's, no boundary of A's engine. A is taken up
	 * when the engine, woken by its handler, holds the GIL (pickup,
	 * 1510 us); without: handoff, 1300 (+6.5 ms in a run with a compile).
	 */
	{
		SC("test_runtime_lock", "holder_starts_a_thread"),
		.steps = STEPS(
			/* the loop asleep in epoll, the engine on its queue */
			E_IN(0, 105), E_IN(0, 102), E_IN(0, 101),
			E_RTLOCK(1, 101, 0x6f00, 0x7100),
			E_OUT(6, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			/* a new connection: the loop takes the GIL */
			E_IRQ(1150, 0, 105), E_IN(1160, 105),
			/* A handed to the engine, which waits for the GIL */
			E_WAKE(1200, 101, 102, NR_FUTEX, 0x300),
			E_OUT(1210, 101, .sys = NR_FUTEX, .arg0 = 0x101),
			E_IN(1220, 102),
			E_OUT(1230, 102, .sys = NR_FUTEX, .arg0 = 0x7000),
			/* X's handler started, the GIL released */
			E_WAKE_NEW(1300, 105, 111, 56), E_IN(1305, 111),
			E_OUT(1450, 111, .sys = NR_FUTEX, .arg0 = 0x111),
			E_WAKE(1500, 105, 102, NR_FUTEX, 0x7000),
			E_OUT(1505, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			/* A's first token to its handler */
			E_IN(1510, 102), E_WAKE(2500, 102, 101, NR_FUTEX, 0x101),
			E_OUT(2510, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			E_IN(2520, 101)),
		RQS(RQ(1, 1000, 1100, 2550, 2600, 101, 101,
		       .t_end = 5000 * US),
		    RQ(2, 1250, 1400, 4000, 4050, 111, 111,
		       .t_end = 5000 * US)),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 1510), R_T(t_enqueue, 1200) },
		}),
	},
	/*
	 * A server's clock around its read loop (tools/scenarios' odirect at
	 * a burst of new connections): the GIL's holder over the engine, the
	 * accept loop, never handed it work: the path is the engine's again
	 * below its wait, its first read on it (storage 60 + 190 us; followed
	 * there, the path was the accept loop's wait in epoll and A's
	 * dispatch its read: 183 ms early in a run beside a CPU hog).
	 */
#define READ_LOOP_FIRST                                                        \
	E_FILEIO(1225, 1290, 102, NR_PREAD64, S_IFREG, O_DIRECT_X86),
#define READ_LOOP_EXTRA E_IN(1220, 102),
#define READ_LOOP_GAP
#define READ_LOOP_HOLDER
	READ_LOOP("read_loop_accept_loop_gil", 1295,
		  R(dispatch, TT_CP_DISP_PICKUP), R_T(t_dispatch, 1220),
		  R_T(t_storage_start, 1225), R_T(t_storage_end, 1710),
		  R_T(stage_ns[TT_ST_STORAGE], 250), R_T(gil_ns, 205),
		  R_T(stage_ns[TT_ST_NET_OUT], 50)),
	/* The same, the engine then waiting for the GIL (1720-1800 us) that
	 * handler 111, reading request 2, holds: back on the engine at 1720,
	 * brought there by its hand-off still, so back again at its first wait
	 * (storage 250; taken for one a lock brought it to: 190) */
#undef READ_LOOP_EXTRA
#undef READ_LOOP_RQS
#define READ_LOOP_EXTRA                                                        \
	E_IN(1220, 102), E_IN(0, 111),                                         \
		E_OUT(7, 111, .sys = NR_EPOLL_WAIT, .arg0 = 4),                \
		E_IRQ(1600, 0, 111), E_IN(1605, 111),                          \
		E_OUT(1720, 102, .sys = NR_FUTEX, .arg0 = 0x7000),             \
		E_WAKE(1800, 111, 102, NR_FUTEX, 0x7000),                      \
		E_OUT(1805, 111, .sys = NR_FUTEX, .arg0 = 0x111),              \
		E_IN(1810, 102),
#define READ_LOOP_RQS                                                          \
	, RQ(2, 1600, 1650, 4000, 4050, 111, 111, .t_end = 5000 * US)
	READ_LOOP("read_loop_two_holders", 1295,
		  R(dispatch, TT_CP_DISP_PICKUP), R_T(t_dispatch, 1220),
		  R_T(stage_ns[TT_ST_STORAGE], 250), R_T(gil_ns, 205 + 80)),
#undef READ_LOOP_RQS
#define READ_LOOP_RQS
#undef READ_LOOP_EXTRA
	/* The same with the engine handing the accept loop work (1222 us), as
	 * an engine hands its output thread tokens: the holder's history may
	 * hold the request's, followed (storage 190: the first read off the
	 * path; returned: 250) */
#define READ_LOOP_EXTRA                                                        \
	E_IN(1220, 102), E_WAKE(1222, 102, 105, NR_FUTEX, 0x105),               \
		E_IN(1223, 105),                                               \
		E_OUT(1240, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),
	READ_LOOP("read_loop_holder_handed", 1295,
		  R_T(stage_ns[TT_ST_STORAGE], 190)),
#undef READ_LOOP_EXTRA
#define READ_LOOP_EXTRA E_IN(1220, 102),
#undef READ_LOOP_HOLDER
	/* The same holder having handed the engine work since A came (1020
	 * us): its history may be the engine's input, followed past the
	 * engine's first read; the storage span starts at that read all the
	 * same, the two apart by a GIL wait and 10 us of CPU (without: 1515
	 * us). */
#define READ_LOOP_HOLDER                                                       \
	E_IRQ(1010, 0, 105), E_IN(1015, 105),                                  \
		E_WAKE(1020, 105, 102, NR_FUTEX, 0x300), E_IN(1025, 102),      \
		E_OUT(1030, 102, .sys = NR_FUTEX, .arg0 = 0x300),             \
		E_OUT(1035, 105, .sys = NR_EPOLL_WAIT, .arg0 = 3),
	READ_LOOP("read_loop_past_gil", 1295, R_T(t_storage_start, 1225),
		  R_T(t_storage_end, 1710)),
	/* The engine computing 150 us between its reads: two loops, the
	 * span the second's (with no CPU bound: 1225) */
	READ_LOOP("read_loop_apart", 1440, R_T(t_storage_start, 1515)),
#undef READ_LOOP_GAP
	/* The engine waiting for input between its reads (an epoll wait the
	 * network ends): two loops (counting only GIL waits: 1225) */
#define READ_LOOP_GAP                                                          \
	E_OUT(1291, 102, .sys = NR_EPOLL_WAIT, .arg0 = 3), E_IRQ(1292, 0, 102), \
		E_IN(1293, 102),
	READ_LOOP("read_loop_input_between", 1295, R_T(t_storage_start, 1515)),
#undef READ_LOOP_GAP
#undef READ_LOOP_EXTRA
	/* The engine preempted at 1221 us on its way to its first read: the
	 * span from there (without: 1225) */
#define READ_LOOP_EXTRA E_IN(1220, 102), E_PREEMPT(1221, 102), E_IN(1223, 102),
#define READ_LOOP_GAP
	READ_LOOP("read_loop_preempted", 1295, R_T(t_storage_start, 1221)),
#undef READ_LOOP_EXTRA
#undef READ_LOOP_FIRST
	/* The first read an io_uring_enter call that reaped a read it had
	 * not submitted (its return, 0, counts submissions): of the loop
	 * (counting returns above 0 only: 1515) */
#define READ_LOOP_FIRST                                                        \
	E_FILEIO_RET(1225, 1290, 102, NR_IO_URING_ENTER, S_IFREG, 0),
#define READ_LOOP_EXTRA E_IN(1220, 102),
	READ_LOOP("read_loop_uring_reap", 1295, R_T(t_storage_start, 1225)),
#undef READ_LOOP_FIRST
	/* a read that failed (EAGAIN): no storage, no loop (1515) */
#define READ_LOOP_FIRST                                                        \
	E_FILEIO_RET(1225, 1290, 102, NR_PREAD64, S_IFREG, -11),
	READ_LOOP("read_loop_failed_read", 1295, R_T(t_storage_start, 1515)),
#undef READ_LOOP_FIRST
#undef READ_LOOP_GAP
#undef READ_LOOP_EXTRA
#undef READ_LOOP_HOLDER
	/*
	 * One model behind an application's lock (tools/scenarios' pool):
	 * loop 101 reads A at 1100 us and hands it to idle worker 103 (futex
	 * 0x300, the pool's queue) at 1200; 103 blocks on the model's lock
	 * 0x500 at 1220, which worker 102 holds for X (X's token to the loop
	 * at 1500). 102 releases it at 3000; 103 tries for the GIL (0x7000)
	 * at 3010, gets it at 3200 and runs from 3210 to A's token at 5000.
	 * Queued from the hand-off to the lock held: t_enqueue 1200,
	 * t_dispatch 3210 (rule lock), not the GIL holder's work. The lock
	 * passed back and forth first is a lock; so is the queue's word by
	 * worker 103's wake of it at 180 us, but the loop that only ever
	 * woke it hands A on through it (a producer's wake).
	 */
	{
		SC("test_lock_turn", "model_lock"),
		.steps = STEPS(MODEL_LOCK_STEPS),
		RQS(MODEL_LOCK_RQS),
		.want = LOCK_TURN_WANT(R_T(t_token, 5000),
				       R_STAGE(TT_ST_QUEUE, 1800)),
	},
	/*
	 * A thread pool's worker busy with the last request when the loop
	 * queues the next (tools/scenarios' pool beside a CPU hog): worker
	 * 103 hands X's token to loop 101 at 500 us and is preempted at 520;
	 * 101 reads A at 1100 and tokenizes it; 103 runs again at 1650 and
	 * waits for the GIL (0x7000), which 101 lets go at 1800 (A queued
	 * without a wake: the pool's queue had no waiter); 103 takes A and
	 * hands its token at 5000. Rule gil: t_enqueue 1800, t_dispatch
	 * 1815 (without it: read, 1100).
	 */
	GIL_FROM_READER("gil_from_reader", 1650,
			R(dispatch, TT_CP_DISP_RELEASE), R(enqueue, TT_CP_ENQ_RELEASE),
			R_T(t_enqueue, 1800), R_T(t_dispatch, 1815),
			R_T(t_token, 5000)),
	/* The same with 103 on a CPU from 1150 us to its wait: 505 us past
	 * the read, it could have taken A then; no rule (without the CPU
	 * bound: gil, 1815) */
	GIL_FROM_READER("gil_after_worker_ran", 1150,
			R(dispatch, TT_CP_DISP_READ), R_T(t_dispatch, 1100)),
	/* The same through a word the loop and worker 103 passed back and
	 * forth (judged a lock, as a Condition's recycled waiter lock often
	 * is): 103, waiting on it since 50 us, is woken through it by the
	 * loop at 1200 after the read; the loop, handed the token at 5000,
	 * waits for the GIL 103 holds until 5020. Rule release at 103's run,
	 * 1210 (without the rule: read, 1100; the resume rule is not tried
	 * past the GIL) */
	{
		SC("test_lock_turn", "release_of_a_word"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x6f00, 0x7100), E_IN(0, 101),
			       E_IN(0, 103), LOOP_PASS(10), LOOP_PASS(20),
			       LOOP_PASS(30),
			       E_OUT(50, 103, .sys = NR_FUTEX, .arg0 = 0x500),
			       E_WAKE(1200, 101, 103, NR_FUTEX, 0x500),
			       E_IN(1210, 103),
			       E_OUT(1250, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_DATA(5000, 103, 101, NR_WRITE, 6),
			       E_WAKE(5000, 103, 101, NR_WRITE, 6),
			       E_IN(5005, 101),
			       E_OUT(5006, 101, .sys = NR_FUTEX, .arg0 = 0x7000),
			       E_WAKE(5020, 103, 101, NR_FUTEX, 0x7000),
			       E_IN(5025, 101), E_DREAD(5030, 101),
			       E_OUT(5040, 103, .sys = NR_FUTEX, .arg0 = 0x500)),
		RQS(RQ(1, 1000, 1100, 5100, 5110, 101, 101)),
		.want = WANTS({ 1,
				NULL,
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_RELEASE),
				  R(enqueue, TT_CP_ENQ_RELEASE),
				  R_T(t_enqueue, 1200), R_T(t_dispatch, 1210) } }),
	},
	/* CPython allocates a lock for each wait on a Condition, and malloc
	 * hands a freed one's address to another thread: word 0x300 was
	 * reader 101's wait (woken by engine 102), then engine 102 waits on
	 * it four times in a row, each woken by 101's put. By its whole
	 * history it is a lock the two pass around; its last waits make
	 * 101's wakes a producer's: two pick-ups (without: both read) */
	{
		SC("test_lock_turn", "recycled_waiter_word"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102),
			       E_OUT(10, 101, .sys = NR_FUTEX, .arg0 = 0x300),
			       E_WAKE(20, 102, 101, NR_FUTEX, 0x300),
			       E_IN(25, 101), WORD_WAIT_PUT(100),
			       WORD_WAIT_PUT(200), WORD_WAIT_PUT(300),
			       E_OUT(400, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			       PUT_RUN_WRITE(600, 1500),
			       E_OUT(1600, 102, .sys = NR_FUTEX, .arg0 = 0x300),
			       PUT_RUN_WRITE(1800, 2500)),
		RQS(RQ(1, 450, 500, 1520, 1530, 101, 101),
		    RQ(2, 1650, 1700, 2520, 2530, 101, 101)),
		.want = WANTS(
			{ 1,
			  NULL,
			  { R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			    R_T(t_dispatch, 605), R_T(t_enqueue, 600) } },
			{ 2,
			  NULL,
			  { R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			    R_T(t_dispatch, 1805), R_T(t_enqueue, 1800) } }),
	},
	/* The same with the pool's queue word passed between the workers
	 * twice more (CPython's SimpleQueue releases it for the next
	 * waiter): still the loop, which only ever woke it, hands A on */
	{
		SC("test_lock_turn", "queue_passed_among_workers"),
		.steps = STEPS(MODEL_LOCK_HEAD, WORD_PASS(40, 0x300),
			       WORD_PASS(50, 0x300), MODEL_LOCK_TAIL),
		RQS(MODEL_LOCK_RQS),
		.want = LOCK_TURN_WANT(),
	},
	/* The same with A's second token handed to the loop at 5200 us while
	 * the loop, woken by the first at 5000, still waits for a CPU: the
	 * wait ended at the first, and 103's hand-off at 5000 is A's own,
	 * no boundary */
	{
		SC("test_lock_turn", "second_token_same_worker"),
		.steps = STEPS(MODEL_LOCK_STEPS, E_DATA(5200, 103, 101, NR_WRITE, 6),
			       E_IN(5300, 101), E_DREAD(5310, 101)),
		RQS(RQ(1, 200, 250, 1510, 1515, 101, 101, .t_end = 6000 * US),
		    RQ(2, 1000, 1100, 5400, 5410, 101, 101,
		       .t_end = 6000 * US)),
		.want = LOCK_TURN_WANT(R_T(t_token, 5000)),
	},
	/*
	 * The model lock with X's token relayed (a thread per request,
	 * transformers' TextIteratorStreamer read by starlette's
	 * iterate_in_threadpool): holder 102 puts it on a queue.Queue whose
	 * getter, anyio's worker 104, runs at 1505 us and hands it to loop
	 * 101 at 1530. 102 still held the lock for X: rule lock, as above
	 * (without the relay: handoff, at 103's run at 1210).
	 */
	/* A thread per request (tools/scenarios' hf at the start of a burst):
	 * loop 101 reads A-D at 1100-1130 us, then runs their handlers, each
	 * starting its thread (106-109, at 1200-1500) and waiting for the GIL
	 * the new thread takes first; each thread waits for the model lock 102
	 * holds for X, and gets it in turn (106 at 3000 ... 109 at 6000). D
	 * was handed on at 109's start, 1500 (without: the loop's first one
	 * after its read) */
	{
		SC("test_lock_turn", "thread_per_request"),
		.steps = STEPS(MODEL_LOCK_HEAD, SPAWNED(1200, 106),
			       SPAWNED(1300, 107), SPAWNED(1400, 108),
			       SPAWNED(1500, 109),
			       E_OUT(1550, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(1600, 102, 101, NR_WRITE, 6),
			       E_IN(1605, 101),
			       E_OUT(1620, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       LOCK_PASS(3000, 102, 106), LOCK_PASS(4000, 106, 107),
			       LOCK_PASS(5000, 107, 108), LOCK_PASS(6000, 108, 109)),
		RQS(RQ(1, 200, 250, 1610, 1615, 101, 101, .t_end = 8000 * US),
		    RQ(2, 1000, 1100, 3910, 3915, 101, 101,
		       .t_end = 8000 * US),
		    RQ(3, 1005, 1110, 4910, 4915, 101, 101,
		       .t_end = 8000 * US),
		    RQ(4, 1010, 1120, 5910, 5915, 101, 101,
		       .t_end = 8000 * US),
		    RQ(5, 1015, 1130, 6910, 6915, 101, 101,
		       .t_end = 8000 * US)),
		.want = WANTS(SPAWNED_WANT(2, 1200, 3005),
			      SPAWNED_WANT(3, 1300, 4005),
			      SPAWNED_WANT(4, 1400, 5005),
			      SPAWNED_WANT(5, 1500, 6005)),
	},
	/* grpc's synchronous server (tools/scenarios' localai-hf): poller 101
	 * reads request 2 and hands the call to pool thread 110 at 1150 us,
	 * which tokenizes, starts thread 106 at 1800 and writes what 106
	 * hands it; 106 waits for the model lock 102 holds for request 1
	 * (its token to 101 at 2500), and gets it at 3000. Queued from 110's
	 * start of 106, 110's work before (without the test: from the
	 * poller's hand-off, 1150) */
	HANDLER_STARTED("handler_started_thread", 1800),
	/* The same with 110 also request 3's writer, its call still open: 110
	 * serves two calls, its start of 106 no hand-off of request 2's alone;
	 * queued from where the poller let it go (without the test: 1800) */
	HANDLER_STARTED_RQS("handler_started_thread_two", 1160,
			    (, RQ(3, 900, 1000, 5000, 5005, 101, 110,
				  .t_end = 6000 * US))),
	/* The same with the poller's enqueue marker at 2600 us (request 1
	 * answered): the marker says where (without the test: 1800) */
	HANDLER_STARTED("handler_started_thread_marked", 2600,
			E_MARK(2600, 101, ENQUEUE, 0xa)),
	LOCK_RELAYED("model_lock_relayed", 1505),
	/* The same with the worker waiting 700 us for a CPU first (beside two
	 * CPU hogs): its run, not a time, bounds its hand-on */
	LOCK_RELAYED("model_lock_relayed_late", 2200),
	/* llama-cpp-python's server: request 2's turn at the model's lock is
	 * the loop's release to worker 103 at 3000 us (the end of request 1),
	 * 103 waiting in the call the loop handed it; the loop hands the
	 * prefill to 104 only at 4100 (without: pickup, 4100) */
	LOOP_LOCK_RELEASED("loop_lock", (), TT_CP_DISP_LOCK, 3005),
	/* The same in a process the recorder took for a Go program (looked at
	 * as it forked, before it exec'd Python), then found CPython in: the
	 * process runs CPython, its words no longer all a runtime's (without:
	 * pickup, 4100) */
	LOOP_LOCK_RELEASED("loop_lock_exec",
			   (E_RTLOCK_GO(0, 101),
			    E_RTLOCK(1, 101, 0x7200, 0x7300), ),
			   TT_CP_DISP_LOCK, 3005),
	/* The same with 103 the writer of request 3, read by the loop at 2950
	 * us, its first token due at 5000: the release hands 103 request 3's
	 * call (grpc's pool thread, writing its call's response), no turn of
	 * request 2's (without the test: lock, 3005) */
	LOOP_LOCK_RELEASED("loop_lock_pool_thread", (), TT_CP_DISP_PICKUP,
			   4100,
			   RQ(3, 2900, 2950, 5000, 5005, 101, 103,
			      .t_end = 6000 * US)),
	/* The same with 103 one of a runtime's helper pool (V8's workers: 105
	 * and 106 asleep on its idle word's pair, no report to the loop): the
	 * loop's release of its lock is no request's turn (without the test:
	 * lock, 3005) */
	{
		SC("test_lock_turn", "loop_lock_rt_pool"),
		.steps = STEPS(LOOP_LOCK_HEAD, E_IN(0, 105), E_IN(0, 106),
			       E_OUT(5, 105, .sys = NR_FUTEX, .arg0 = 0x800),
			       E_OUT(6, 106, .sys = NR_FUTEX, .arg0 = 0x804),
			       LOOP_LOCK_TAIL(
				       E_WAKE(3000, 101, 103, NR_FUTEX, 0x500),
				       E_IN(3005, 103),
				       E_OUT(3010, 101, .sys = NR_EPOLL_WAIT,
					     .arg0 = 3),
				       E_SOFTIRQ(3020, UNTRACED, 101),
				       E_IN(3025, 101),
				       E_OUT(3030, 103, .sys = NR_FUTEX,
					     .arg0 = 0x800))),
		RQS(LOOP_LOCK_RQS()),
		.want = LOOP_LOCK_WANT(1250, TT_CP_DISP_PICKUP, 4100),
	},
	/* The same with request 3's first token written at 3500 us, after the
	 * release: the release was its turn, not request 2's */
	LOOP_LOCK_RELEASED("loop_lock_other_token", (), TT_CP_DISP_PICKUP,
			   4100,
			   RQ(3, 2900, 2986, 3500, 3505, 101, 101,
			      .t_end = 3600 * US)),
	/* The same with the loop's wake of 103 through 0x500 40 us after it
	 * handed 103 the call, before it let request 2 go (a condition
	 * variable's signal and its mutex's release): no turn */
	{
		SC("test_lock_turn", "loop_lock_signal"),
		.steps = STEPS(LOOP_LOCK_HEAD,
			       E_WAKE(1240, 101, 103, NR_FUTEX, 0x500),
			       E_IN(1245, 103),
			       E_OUT(1260, 103, .sys = NR_FUTEX, .arg0 = 0x800),
			       LOOP_LOCK_TAIL(E_OUT(3010, 101,
						    .sys = NR_EPOLL_WAIT,
						    .arg0 = 3),
					      E_SOFTIRQ(3020, UNTRACED, 101),
					      E_IN(3025, 101))),
		RQS(LOOP_LOCK_RQS()),
		.want = LOOP_LOCK_WANT(1250, TT_CP_DISP_PICKUP, 4100),
	},
	/* The walk's boundary a hand-off of the worker that computes request
	 * 2, after the release (without the rule: handoff, at 3900 us); and
	 * the release 40 us after the call, the loop running between: a
	 * signal and its mutex's release, no turn */
	LOOP_LOCK_RUN_ON("loop_lock_run_on", TT_CP_DISP_LOCK, 3005,
			 E_OUT(1250, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			 E_SOFTIRQ(2990, UNTRACED, 101), E_IN(2995, 101),
			 LOOP_LOCK_RELEASE),
	LOOP_LOCK_RUN_ON("loop_lock_run_on_signal", TT_CP_DISP_HANDOFF, 3900,
			 E_WAKE(1240, 101, 103, NR_FUTEX, 0x500),
			 E_IN(1245, 103),
			 E_OUT(1250, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			 E_OUT(1260, 103, .sys = NR_FUTEX, .arg0 = 0x800)),
	/* No turn either: request 1 over at 2900 us (the loop serves nobody
	 * else at its release); request 2 read at 1230, after 103 began to
	 * wait; 103 computing 695 us in the call before it waits; 103 woken
	 * through the word it waits on (a queue's consumer waiting again);
	 * 103 handed the call by another worker (104) */
	LOOP_LOCK_NO_TURN("loop_lock_idle", 101, 0x800, 1225, 2900, 1100, 1250),
	LOOP_LOCK_NO_TURN("loop_lock_waited_before", 101, 0x800, 1225, 3050,
			  1230, 1250),
	LOOP_LOCK_NO_TURN("loop_lock_busy_call", 101, 0x800, 1900, 3050, 1100,
			  1200),
	LOOP_LOCK_NO_TURN("loop_lock_same_word", 101, 0x500, 1225, 3050, 1100,
			  1250),
	LOOP_LOCK_NO_TURN("loop_lock_other_caller", 104, 0x800, 1225, 3050,
			  1100, 1250),
	/* The futex pick-up above, marked (docs/design.md §4.9): the reader
	 * enqueues with key 0xa at 1150 us, the engine dispatches that key
	 * at 1700 us and hands its first token on at 1900 us. The markers
	 * override the pick-up: queued [1150, 1700), the engine's CPU from
	 * the dispatch on, t_token the marker's. */
	{
		SC("test_markers", "marker_overrides_pickup"),
		.steps = STEPS(
			FUTEX_PICKUP_STEPS,
			E_MARK(1150, 101, ENQUEUE, 0xa),
			E_MARK(1700, 102, DISPATCH, 0xa),
			E_MARK(1900, 102, TOKEN, 0xa)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_QUEUE] = 550,
			       [TT_ST_CPU] = 50 + 300 + 95,
			       [TT_ST_RUNQUEUE] = 5, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_MARKER),
			  R_T(t_dispatch, 1700), R(enqueue, TT_CP_ENQ_MARKER),
			  R_T(t_enqueue, 1150), R_T(t_token, 1900),
			  R(token_marker, true) },
			{ SEG(1120, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1100, 50),
			  SEG(1400, 0, TT_CP_PHASE, TT_ST_QUEUE, "queued", 1150,
			      550),
			  SEG(1800, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1700, 300) },
		}),
		.stats = { STAT(marks, 3), STAT(marks_unbound, 0),
			   STAT(marks_outside, 0) },
	},
	/* A keyless dispatch marker names its thread's current request (the
	 * one it read last): the reader's at 1150 us. The enqueue stays the
	 * inferred one (where the reader let the request go: at once), and a
	 * keyless token marker after the first write is outside the request,
	 * counted and ignored. */
	{
		SC("test_markers", "keyless_current_request"),
		.steps = STEPS(
			FUTEX_PICKUP_STEPS,
			E_MARK_NOKEY(1150, 101, DISPATCH),
			E_MARK_NOKEY(2500, 101, TOKEN)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 965,
			       [TT_ST_RUNQUEUE] = 35, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_MARKER),
			  R_T(t_dispatch, 1150), R(enqueue, TT_CP_ENQ_HANDOFF),
			  R_T(t_enqueue, 1150), R_T(t_token, 2000),
			  R(token_marker, false) },
		}),
		.stats = { STAT(marks, 2), STAT(marks_unbound, 0),
			   STAT(marks_outside, 1) },
	},
	/* Two requests through one engine: reader 101 enqueues key 0xa,
	 * reader 104 key 0xb; the engine dispatches 0xb at 1500 us, an
	 * unknown key 0xc at 1600 us (counted, ignored) and 0xa at 1700 us.
	 * Each request gets its own key's dispatch, whichever thread marked
	 * it. */
	{
		SC("test_markers", "keys_across_threads"),
		.steps = STEPS(
			FUTEX_PICKUP_STEPS,
			E_IN(0, 104), E_IN(20, 105),
			E_OUT(70, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_WAKE(2002, 102, 105, NR_FUTEX, 0x9000),
			E_IN(2008, 105),
			E_OUT(2300, 105, .sys = NR_FUTEX, .arg0 = 0x9000),
			E_MARK(1150, 101, ENQUEUE, 0xa),
			E_MARK(1160, 104, ENQUEUE, 0xb),
			E_MARK(1500, 102, DISPATCH, 0xb),
			E_MARK(1600, 102, DISPATCH, 0xc),
			E_MARK(1700, 102, DISPATCH, 0xa)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103),
		    RQ(2, 1000, 1150, 2150, 2200, 104, 105)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_QUEUE] = 550,
			       [TT_ST_CPU] = 50 + 300 + 95,
			       [TT_ST_RUNQUEUE] = 5, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_MARKER),
			  R_T(t_dispatch, 1700), R_T(t_enqueue, 1150),
			  R_T(t_token, 2000) },
		}, {
			2,
			STAGES([TT_ST_NET_IN] = 150, [TT_ST_QUEUE] = 340,
			       [TT_ST_CPU] = 10 + 502 + 142,
			       [TT_ST_RUNQUEUE] = 6, [TT_ST_NET_OUT] = 50),
			{ R(complete, true), R(dispatch, TT_CP_DISP_MARKER),
			  R_T(t_dispatch, 1500), R(enqueue, TT_CP_ENQ_MARKER),
			  R_T(t_enqueue, 1160), R_T(t_token, 2002) },
			{ SEG(1155, 104, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1150, 10),
			  SEG(1600, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
			      1500, 502) },
		}),
		.stats = { STAT(marks, 5), STAT(marks_unbound, 1),
			   STAT(marks_outside, 0) },
	},
	/* An event loop 101 reads requests 1 and 2 (1100, 1150 us), then runs
	 * their handlers in that order: each marks its enqueue (keys 0xa at
	 * 1200, 0xb at 1300), so each marker names the earliest request it
	 * read that is unmarked, not the one it read last. An engine in
	 * another process (200) dispatches by those ids (0xb at 1500, 0xa at
	 * 1700): a value key bound in one process is looked up from any. */
	{
		SC("test_markers", "loop_marks_in_order"),
		.steps = STEPS(FUTEX_PICKUP_STEPS, LOOP_MARK_STEPS),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103),
		    RQ(2, 1000, 1150, 2150, 2200, 101, 103)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_MARKER), R_T(t_dispatch, 1700),
			  R(enqueue, TT_CP_ENQ_MARKER), R_T(t_enqueue, 1200) },
		}, {
			2,
			NULL,
			{ R(dispatch, TT_CP_DISP_MARKER), R_T(t_dispatch, 1500),
			  R(enqueue, TT_CP_ENQ_MARKER), R_T(t_enqueue, 1300) },
		}),
		.stats = { STAT(marks, 4), STAT(marks_unbound, 0),
			   STAT(marks_outside, 0) },
	},
	/* The loop of loop_marks_in_order, its handlers marking out of the
	 * order read (request 2's first, at 1200 us), each with its
	 * client's port: each marker names its own connection's request.
	 * Request 1's handler marks again (a re-queue, 1350): with its own
	 * request marked, it stays with it (the first counts), never taking
	 * the other client's. */
	{
		SC("test_markers", "loop_marks_by_peer"),
		.steps = STEPS(FUTEX_PICKUP_STEPS,
			       E_MARK_PEER(1200, 101, ENQUEUE, 0xb, 5002),
			       E_MARK_PEER(1300, 101, ENQUEUE, 0xa, 5001),
			       E_MARK_PEER(1350, 101, ENQUEUE, 0xa, 5001),
			       ENGINE_DISPATCHES_AB),
		RQS(PEER_RQS),
		.want = PEER_WANTS(1300, 1500, 1200, 1700),
		.stats = MARKS_UNBOUND(5, 0),
	},
	/* Another process (300) reads a request from a client of the same
	 * port (a hop's port, another host's client): process 100's marker
	 * names its own process's request. */
	{
		SC("test_markers", "peer_own_process"),
		.steps = STEPS(FUTEX_PICKUP_STEPS,
			       E_MARK_PEER(1200, 101, ENQUEUE, 0xa, 5001),
			       E_MARK_VALUE(1500, 202, DISPATCH, 0xa)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103, .peer_port = 5001,
		       .tgid = 100),
		    RQ(3, 1000, 1050, 2300, 2350, 301, 301, .peer_port = 5001,
		       .tgid = 300)),
		.want = WANTS(MARKER_DISPATCHED(1500, R_T(t_enqueue, 1200))),
		.stats = MARKS_UNBOUND(2, 0),
	},
	/* 101 read request 9 at 100 us, whose client left unanswered (its
	 * connection ended at 200); then request 1, enqueued with key 0 at
	 * 1150, dispatched by the engine at 1700. Request 9 is no longer
	 * open: the markers are request 1's. A marker whose key could not be
	 * read (1600, its key 0 as the BPF side leaves it) names no request. */
	{
		SC("test_markers", "unanswered_not_open"),
		.steps = STEPS(FUTEX_PICKUP_STEPS,
			       E_MARK(1150, 101, ENQUEUE, 0),
			       E_MARK_UNREAD(1600, 102, DISPATCH),
			       E_MARK(1700, 102, DISPATCH, 0)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103),
		    RQ(9, 50, 100, 0, 0, 101, 0, .t_end = 200 * US)),
		.want = WANTS(MARKER_DISPATCHED(1700, R(enqueue, TT_CP_ENQ_MARKER),
						R_T(t_enqueue, 1150))),
		.stats = MARKS_UNBOUND(3, 1),
	},
	/* Two forked workers (100, 200) key by a pointer, the same address
	 * in both: worker 200's dispatch of 0xa (its enqueue unseen) names
	 * no request of worker 100's; only a value key crosses processes. */
	{
		SC("test_markers", "pointer_key_own_process"),
		.steps = STEPS(FUTEX_PICKUP_STEPS,
			       E_MARK(1150, 101, ENQUEUE, 0xa),
			       E_MARK(1300, 202, DISPATCH, 0xa),
			       E_MARK(1700, 102, DISPATCH, 0xa)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 103)),
		.want = WANTS(MARKER_DISPATCHED(1700)),
		.stats = MARKS_UNBOUND(3, 1),
	},
	/* The writer has no events: the path from the first write back is
	 * no data, down to the dispatch marker, which still ends the queue;
	 * the reader's time before it is walked. */
	{
		SC("test_markers", "marker_cuts_no_data"),
		.steps = STEPS(E_IN(0, 101),
			       E_MARK_NOKEY(1150, 101, DISPATCH)),
		RQS(RQ(1, 1000, 1100, 2100, 2150, 101, 109)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 100, [TT_ST_CPU] = 50,
			       [TT_ST_UNKNOWN] = 950, [TT_ST_NET_OUT] = 50),
			{ R(complete, false), R_HAS(incomplete, TT_CP_INC_NO_DATA),
			  R(dispatch, TT_CP_DISP_MARKER), R_T(t_dispatch, 1150),
			  R_T(t_enqueue, 1150) },
		}),
	},
	/* A batcher 102 (LitServe's collate_requests) waits in read on its
	 * input pipe; the loop 101 hands request 1 to the pipe's feeder 103
	 * (300 us), whose write wakes 102 (320). 102 takes it and waits in
	 * poll on the pipe for more, until its timeout (5400), then computes:
	 * queued from the hand-off to the end of that wait, taken up when
	 * 102 ran after it. */
	{
		SC("test_batch", "timeout"),
		.steps = STEPS(BATCH_HEAD, BATCH_POLL,
			       E_IRQ(5400, 0, 102), E_IN(5405, 102),
			       E_WAKE(15400, 102, 101, NR_WRITE, 9),
			       E_IN(15405, 101)),
		BATCH_TIMEOUT_WANT(300),
	},
	/* ... also when 102, busy when the feeder wrote (320 us), took the
	 * request without waiting: its timeout ends the wait (the feeder woke
	 * nobody, so the reader let the request go at its block, 302 us) */
	{
		SC("test_batch", "timeout_no_wait"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102), E_IN(0, 103),
			       E_OUT(20, 103, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_WAKE(300, 101, 103, NR_FUTEX, 0x40),
			       E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(305, 103),
			       E_OUT(322, 103, .sys = NR_FUTEX, .arg0 = 0x40),
			       BATCH_POLL, E_IRQ(5400, 0, 102), E_IN(5405, 102),
			       E_WAKE(15400, 102, 101, NR_WRITE, 9),
			       E_IN(15405, 101)),
		BATCH_TIMEOUT_WANT(302),
	},
	/* ... or until request 2, read at 750 and handed on at 880, fills the
	 * batch (its write wakes 102 at 900): both requests were queued to
	 * that wait's end, each from its own hand-off. */
	{
		SC("test_batch", "fills"),
		.steps = STEPS(BATCH_HEAD, BATCH_POLL,
			       BATCH_NEXT(700),
			       E_WAKE(10950, 102, 101, NR_WRITE, 9),
			       E_IN(10955, 101)),
		RQS(RQ(1, 50, 100, 10970, 10980, 101, 101),
		    RQ(2, 700, 750, 10990, 11000, 101, 101)),
		.want = WANTS(
			{
				1,
				STAGES([TT_ST_NET_IN] = 50,
				       [TT_ST_CPU] = 200 + 10045 + 15,
				       [TT_ST_QUEUE] = 600,
				       [TT_ST_RUNQUEUE] = 5 + 5,
				       [TT_ST_NET_OUT] = 10),
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_BATCH),
				  R_T(t_dispatch, 905), R_T(t_enqueue, 300) },
			},
			{
				2,
				STAGES([TT_ST_NET_IN] = 45,
				       [TT_ST_CPU] = 130 + 10045 + 35,
				       [TT_ST_QUEUE] = 20,
				       [TT_ST_RUNQUEUE] = 5 + 5 + 5,
				       [TT_ST_NET_OUT] = 10),
				{ R(complete, true),
				  R(dispatch, TT_CP_DISP_BATCH),
				  R_T(t_dispatch, 905), R_T(t_enqueue, 880) },
			}),
	},
	/* A batcher on a condition variable (Triton's max_queue_delay): the
	 * loop's notify (futex 0x60, 300 us) wakes 102, which waits on for
	 * more (its other group word, 0x64) until its timeout (5350): queued
	 * to that wait's end. */
	{
		SC("test_batch", "cond_timeout"),
		.steps = STEPS(E_IN(0, 101), E_IN(0, 102),
			       E_OUT(10, 102, .sys = NR_FUTEX, .arg0 = 0x60),
			       E_WAKE(300, 101, 102, NR_FUTEX, 0x60),
			       E_OUT(302, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(305, 102),
			       E_OUT(350, 102, .sys = NR_FUTEX, .arg0 = 0x64),
			       E_IRQ(5350, 0, 102), E_IN(5355, 102),
			       E_WAKE(15350, 102, 101, NR_WRITE, 9),
			       E_IN(15355, 101)),
		RQS(RQ(1, 50, 100, 15370, 15380, 101, 101)),
		BATCH_WANT(200 + 9995 + 15, 5050, 5355, 300),
	},
	/* ... and when request 2's notify (futex 0x64, from its handler 103
	 * at 880 us) fills the batch: a timed wait (the batcher's) on the
	 * condition variable it had waited on just before ended there, and
	 * request 1 was queued to its end, not picked up by that notify */
	{
		SC("test_batch", "cond_fills"),
		COND_FILLS(true), BATCH_WANT(200 + 10000 + 10, 580, 885, 300),
	},
	/* Control: the wait before the timed one ended by a thread that
	 * reads no request (104, an engine: TRT-LLM's await_response thread,
	 * woken for a step's responses, waits for more) is no batcher's:
	 * nothing on request 1's path bounds its queue */
	{
		SC("test_batch", "cond_fed_by_engine"),
		COND_FILLS_BY(true, 104),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_READ),
			  R_STAGE(TT_ST_QUEUE, 0) },
		}),
	},
	/* Control: the same with an untimed wait (CPython's Condition, an
	 * output thread's queue) is no batcher's: request 2's notify is
	 * followed, and nothing on request 1's path bounds its queue */
	{
		SC("test_batch", "cond_untimed"),
		COND_FILLS(false),
		.want = WANTS({
			1,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_READ),
			  R_STAGE(TT_ST_QUEUE, 0) },
		}),
	},
	/* Control: 102 computes request 1 (2 ms) between its two waits on
	 * the pipe, so the second is no batch's: request 2's write wakes it,
	 * a pick-up. */
	{
		SC("test_batch", "one_at_a_time"),
		.steps = STEPS(BATCH_HEAD,
			       E_WAKE(2400, 102, 101, NR_WRITE, 9),
			       E_OUT(2402, 102, .sys = NR_READ, .arg0 = 5,
				     .mode = S_IFIFO, .ino = 500),
			       E_IN(2405, 101),
			       E_OUT(2420, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       BATCH_NEXT(2700),
			       E_WAKE(4900, 102, 101, NR_WRITE, 9),
			       E_IN(4905, 101)),
		RQS(RQ(1, 50, 100, 2410, 2420, 101, 101, .t_end = 2420 * US),
		    RQ(2, 2700, 2750, 4920, 4930, 101, 101)),
		.want = WANTS({
			2,
			STAGES([TT_ST_NET_IN] = 45,
			       [TT_ST_CPU] = 130 + 1995 + 15,
			       [TT_ST_QUEUE] = 20, [TT_ST_RUNQUEUE] = 5 + 5 + 5,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 2905), R_T(t_enqueue, 2880) },
		}),
	},
	/* An engine 202 in a process apart from the loop's (LitServe's
	 * worker) blocked reading its input pipe; the loop's queue feeder
	 * 103 writes request 1 to it (320 us): 202 took the request up when
	 * it ran after that write, whoever wrote it (a feeder serving every
	 * request, behind others in its buffer) */
	PIPE_WRITE_WAKES("pipe_write_apart", 202, TT_CP_DISP_BATCH),
	/* Control: a pipe reader of the loop's own process (its executor
	 * thread reading a response pipe) is a relay: the feeder's write
	 * that woke it is a pick-up */
	PIPE_WRITE_WAKES("pipe_write_same_process", 102, TT_CP_DISP_PICKUP),
	/* The engine 102, woken by the loop 101 (300 us), computes request 1
	 * and writes its token to a pipe (10300), waking the loop's executor
	 * thread 104 blocked reading it; 104 hands the loop another
	 * request's token (10320), and the loop writes it, then asks 104
	 * for the next (10340): 104 reads request 1's token, already there,
	 * and hands it over (10360). That ask took nothing up: request 1 was
	 * picked up at 300. */
	{
		SC("test_batch", "reader_asks_relay"),
		.steps = STEPS(PIPE_RELAY_HEAD,
			       E_WAKE(10300, 102, 104, NR_WRITE, 8),
			       E_OUT(10302, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_IN(10305, 104),
			       HAND_BACK(10320, 104, 0x90),
			       E_WAKE(10340, 101, 104, NR_FUTEX, 0x90),
			       E_OUT(10342, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_IN(10345, 104), HAND_BACK(10360, 104, 0x90)),
		RQS(RQ(1, 50, 100, 10370, 10380, 101, 101),
		    RQ(2, 5000, 5050, 10330, 10340, 101, 101,
		       .t_end = 10340 * US)),
		.want = WANTS({
			1,
			STAGES([TT_ST_NET_IN] = 50,
			       [TT_ST_CPU] = 200 + 9995 + 15 + 15 + 15 + 5,
			       [TT_ST_RUNQUEUE] = 5 + 5 + 5 + 5 + 5,
			       [TT_ST_NET_OUT] = 10),
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_dispatch, 305), R_T(t_enqueue, 300) },
		}),
	},
	/* The engine 102, woken by the loop 101 (300 us), computes requests
	 * 1 and 2 and writes both tokens to a pipe (10300), waking the
	 * loop's executor thread 104 blocked reading it. 104 takes 695 us
	 * (a CPU shared with other work) to hand the loop request 2's token
	 * (11000), is switched out (11005) and, back at 11200, takes 150 us,
	 * more than a burst gap, to hand over request 1's, there since
	 * 10300. 104 drained what one wake brought: its hand-off of request
	 * 2 ends no step, and request 1 was picked up at 300 (with the burst
	 * split, its t_dispatch read 11200). */
	RELAY_DRAINS("relay_drains_slowly", 11000, 11200, 11350),
	/* The same, 104 handing over request 2's token 55 us after its read
	 * (10360), switched out, and back at 11200 taking 600 us (its CPU
	 * shared) for request 1's: the CPU between the two tokens ends no
	 * step either (a queue's feeder, 615 us in a lit-uvloop run). */
	RELAY_DRAINS("relay_drains_switched_out", 10360, 11200, 11800),
	/* The same, 104 woken by the pipe while the engine 102 holds the GIL
	 * (0x7200): it waits for it (10310) until 102 lets it go (10400). A
	 * wait for a lock is part of the drain: request 1 was picked up at
	 * 300, not at 104's run after request 2's token. */
	{
		SC("test_batch", "relay_drains_after_gil"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300),
			       PIPE_RELAY_HEAD,
			       E_DATA(10300, 102, 104, NR_WRITE, 5),
			       E_WAKE(10300, 102, 104, NR_WRITE, 5),
			       E_IN(10305, 104),
			       E_OUT(10310, 104, .sys = NR_FUTEX, .arg0 = 0x7200),
			       E_WAKE(10400, 102, 104, NR_FUTEX, 0x7200),
			       E_OUT(10402, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_IN(10405, 104), E_DREAD(10410, 104),
			       RELAY_DRAIN_TAIL(11000, 11200, 11350)),
		RELAY_DRAIN_RQS_WANT(11000, 11350),
	},
	/* The engine 102 (CPython, GIL 0x7200) ends X's step by putting its
	 * token on output thread 103's queue (1000 us) and then waits for
	 * the GIL 103 holds while it hands the token on; 103's release wakes
	 * it (1300) and it computes A, handed on while it was busy. That wake
	 * is no hand-off to 102: A's queue ends at X's put, not at the step
	 * before it nor in 103's work for X. */
	{
		SC("test_batch", "lock_after_step"),
		.steps = STEPS(E_RTLOCK(0, 101, 0x7200, 0x7300), E_IN(0, 101),
			       E_OUT(5, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_OUT(6, 103, .sys = NR_FUTEX, .arg0 = 0x50),
			       E_WAKE(200, 101, 102, NR_FUTEX, 0x40),
			       E_IN(210, 102),
			       E_OUT(220, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_SOFTIRQ(400, UNTRACED, 101), E_IN(405, 101),
			       E_OUT(600, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(500, 102, 103, NR_FUTEX, 0x50),
			       E_IN(505, 103),
			       E_OUT(520, 103, .sys = NR_FUTEX, .arg0 = 0x50),
			       E_WAKE(1000, 102, 103, NR_FUTEX, 0x50),
			       E_IN(1005, 103),
			       E_OUT(1200, 102, .sys = NR_FUTEX, .arg0 = 0x7200),
			       E_WAKE(1250, 103, 101, NR_WRITE, 9),
			       E_IN(1255, 101),
			       E_OUT(1270, 101, .sys = NR_EPOLL_WAIT, .arg0 = 3),
			       E_WAKE(1300, 103, 102, NR_FUTEX, 0x7200),
			       E_OUT(1302, 103, .sys = NR_FUTEX, .arg0 = 0x50),
			       E_IN(1305, 102),
			       E_WAKE(11305, 102, 103, NR_FUTEX, 0x50),
			       E_OUT(11307, 102, .sys = NR_FUTEX, .arg0 = 0x40),
			       E_IN(11310, 103),
			       HAND_BACK(11320, 103, 0x50)),
		RQS(RQ(1, 50, 100, 1260, 1270, 101, 101, .t_end = 1270 * US),
		    RQ(2, 400, 450, 11340, 11350, 101, 101)),
		.want = WANTS({
			2,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_HANDOFF),
			  R_T(t_dispatch, 1000), R_T(t_enqueue, 600) },
		}),
	},
	/* A gateway's request through a hop (docs/design.md §4.11): the
	 * runner's queue and dispatch are the gateway request's, its path
	 * the hop's from the gateway's send on. */
	{
		SC("test_hop", "through_runner"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 1300, 1305, 301, 302, .hop_sender_tid = 101)),
		.want = WANTS({
			1,
			NULL,
			HOP_TAKEN_FIELDS,
			{ SEG_AT(1307, "hop out", G(tid, 302)),
			  SEG_AT(207, "hop in", G(tid, 301)),
			  SEG_AT(212, "runqueue", G(tid, 301)),
			  SEG_AT(700, "on-cpu", G(tid, 302)),
			  SEG_AT(150, "on-cpu", G(tid, 101)) },
		}, {
			/* the hop itself, walked as any request */
			2,
			NULL,
			{ R(complete, true), R(dispatch, TT_CP_DISP_PICKUP),
			  R_T(t_enqueue, 300), R_T(t_dispatch, 305),
			  R(hop_id, 0) },
		}),
	},
	/* a dispatch marker of the gateway's, before it sends the hop: the
	 * user said where the queue ends, the walk is as before, no hop */
	{
		SC("test_hop", "marker_wins"),
		.steps = STEPS(UNPAREN HOP_EVENTS(SOCK_WAIT),
			       E_MARK_NOKEY(150, 101, DISPATCH)),
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 1300, 1305, 301, 302, .hop_sender_tid = 101)),
		.want = WANTS({
			1,
			NULL,
			{ R(dispatch, TT_CP_DISP_MARKER), R_T(t_dispatch, 150),
			  R(hop_id, 0) },
		}),
	},
	/* the gateway's relay parked as a goroutine does (no socket read):
	 * the hop's first token came while it waited and a later send woke
	 * it (a busy M polled the data ready); its wait to run after the
	 * bytes were in is scheduler.runqueue */
	{
		SC("test_hop", "came_while_parked"),
		.steps = STEPS(UNPAREN HOP_EVENTS(.sys = -1)),
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 400, 401, 301, 302, .hop_sender_tid = 101)),
		.want = HOP_TAKEN_WANT(SEG_AT(800, "hop data in", G(tid, 101),
					      G(stage, TT_ST_RUNQUEUE))),
	},
	/* an event loop (101) that read rq1, then rq3, and sent their hops
	 * 2 and 4 in that order: hop 2's first token woke its epoll wait,
	 * hop 4's came in while it ran. Each request takes its own hop, in
	 * the order the loop read and sent, not the one that woke it. */
	{
		SC("test_hop", "event_loop_order"),
		.steps = LOOP_HOP_STEPS,
		RQS(LOOP_HOP_RQS),
		.want = WANTS({ 1, NULL, { R(complete, true), R(hop_id, 2),
					    R_T(t_dispatch, 215) } },
			      { 3, NULL, { R(complete, true), R(hop_id, 4),
					    R_T(t_dispatch, 230) },
				{ SEG_AT(1350, "on-cpu", G(tid, 101)),
				  SEG_AT(1342, "hop out", G(tid, 303)) } }),
	},
	/* the same, nginx terminating TLS: the loop read a handshake's
	 * exchange (5: no plaintext, no token) before rq1. It is no request
	 * the loop forwarded: hop 2 is still rq1's, hop 4 rq3's. */
	{
		SC("test_hop", "event_loop_tls_handshake"),
		.steps = LOOP_HOP_STEPS,
		RQS(LOOP_HOP_RQS,
		    RQ(5, 20, 30, 0, 0, 101, 0, .tls_unread = true)),
		.want = WANTS({ 1, NULL, { R(complete, true), R(hop_id, 2),
					    R_T(t_dispatch, 215) } },
			      { 3, NULL, { R(complete, true), R(hop_id, 4),
					    R_T(t_dispatch, 230) } }),
	},
	/* the same requests, the runner's not known for a hop: the gateway
	 * relay's wake of its writer is taken for the pick-up */
	{
		SC("test_hop", "not_a_hop"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 1300, 1305, 301, 302)),
		.want = RELAY_PICKUP_WANT,
	},
	/* the hop sent by a thread the relay woke (a Go client's
	 * writeLoop): this request's, the walk goes on there */
	{
		SC("test_hop", "sender_woken"),
		.steps = STEPS(UNPAREN HOP_EVENTS(SOCK_WAIT), SENDER_103(101)),
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 1300, 1305, 301, 302, .hop_sender_tid = 103)),
		.want = HOP_TAKEN_WANT(SEG_AT(204, "on-cpu", G(tid, 103)),
				       SEG_AT(201, "runqueue", G(tid, 103))),
	},
	/* a hop whose first token came while the relay was parked, but
	 * whose sender was handed it by a thread (104) this path is not on:
	 * another request's */
	{
		SC("test_hop", "another_requests"),
		.steps = STEPS(UNPAREN HOP_EVENTS(.sys = -1), E_IN(9, 104),
			       SENDER_103(104),
			       E_OUT(201, 104, .sys = NR_FUTEX, .arg0 = 0x60)),
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 400, 401, 301, 302, .hop_sender_tid = 103)),
		.want = RELAY_PICKUP_WANT,
	},
	/* a hop whose first token went out long before the wake of a
	 * thread blocked reading its socket: a later send of it, not its
	 * first token, woke the gateway */
	{
		SC("test_hop", "late_wake"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 306, 307, 301, 302, .hop_sender_tid = 101)),
		.want = RELAY_PICKUP_WANT,
	},
	/* the same, and the gateway's read of the hop's first token seen
	 * (on its client socket, at 1330: a Go M woken for something else
	 * polled it): the hop is taken there, its wait to be read after
	 * its bytes were in scheduler.runqueue */
	{
		SC("test_hop", "read_by_relay"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 205, 220, 306, 307, 301, 302, .hop_sender_tid = 101,
		       .hop_read_t = 1330 * US, .hop_read_tid = 101)),
		.want = HOP_TAKEN_WANT(SEG_AT(800, "hop data in", G(tid, 101),
					      G(stage, TT_ST_RUNQUEUE)),
				       SEG_AT(1350, "on-cpu", G(tid, 101))),
	},
	/* a long upload the gateway streams on (Caddy, Go's httputil): its
	 * hop went out at 205, after the first read (100), before the last
	 * (210). The hop is this request's; its path joins after the last
	 * read, the upload's until then. */
	{
		SC("test_hop", "streamed_upload"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 210, 1500, 1505, 101, 102,
		       .t_first_read = 100 * US),
		    RQ(2, 205, 220, 1300, 1305, 301, 302, .hop_sender_tid = 101)),
		.want = HOP_TAKEN_WANT(SEG_AT(212, "runqueue", G(tid, 301)),
				       SEG_AT(700, "on-cpu", G(tid, 302)),
				       SEG_AT(207, "request in", G(tid, 101))),
	},
	/* a read of a hop sent before this request was read: another
	 * request's, not taken */
	{
		SC("test_hop", "read_of_another"),
		.steps = HOP_STREAM,
		RQS(RQ(1, 90, 100, 1500, 1505, 101, 102),
		    RQ(2, 95, 220, 306, 307, 301, 302, .hop_sender_tid = 101,
		       .hop_read_t = 1330 * US, .hop_read_tid = 101)),
		.want = RELAY_PICKUP_WANT,
	},
};

#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* Every scenario of group, each its own case, on one critpath when they
 * say reuse. */
static void run_group(const char *group)
{
	struct tt_critpath *cp = NULL;
	char name[128];
	size_t i;
	int before;

	for (i = 0; i < N_SCENARIOS; i++) {
		if (strcmp(scenarios[i].group, group))
			continue;
		snprintf(name, sizeof(name), "%s/%s", group, scenarios[i].name);
		before = tt_test.failed_checks;
		run_scenario(&scenarios[i], name, &cp);
		tt_report(name, before);
	}
	tt_critpath_free(cp);
}

#define TT_RUN_GROUP(group)                          \
	do {                                         \
		int _before = tt_test.failed_checks; \
		run_group(#group);                   \
		tt_report(#group, _before);          \
	} while (0)

static void test_names(void)
{
	static const char *const want[TT_ST_MAX] = {
		"network.in",	   "network.out",	 "scheduler.backlog",
		"scheduler.queue", "scheduler.runqueue", "storage.io",
		"compute.gpu",	   "compute.cpu",	 "other.sleep",
		"other.lock",	   "other.unknown",
	};
	const __u64 stage_ns[TT_ST_MAX] = { [TT_ST_CPU] = 1,
					    [TT_ST_SLEEP] = 2,
					    [TT_ST_LOCK] = 4,
					    [TT_ST_UNKNOWN] = 8 };
	struct tt_critpath *cp = tt_critpath_new();
	int rule;
	struct stream s = { 0 };
	struct tt_event *ev;
	int st;

	for (st = 0; st < TT_ST_MAX; st++)
		ASSERT_STREQ(tt_stage_name(st), want[st], "stage name");
	ASSERT_STREQ(tt_stage_name(TT_ST_MAX), "?", "stage name past the end");
	/* the report's rows: the stages before other.*, then other whole */
	for (st = 0; st < TT_ST_MAIN; st++)
		ASSERT_STREQ(tt_stage_row_name(st), want[st], "row name");
	ASSERT_STREQ(tt_stage_row_name(TT_ST_MAIN), "other", "row other");
	ASSERT_STREQ(tt_stage_row_name(TT_ST_ROWS), "?", "row past the end");
	ASSERT_EQ(tt_stage_row_ns(stage_ns, TT_ST_CPU), 1, "row compute.cpu");
	ASSERT_EQ(tt_stage_row_ns(stage_ns, TT_ST_MAIN), 14, "row other");
	ASSERT_STREQ(tt_cp_dispatch_name(TT_CP_DISP_HANDOFF), "handoff",
		     "dispatch name");
	ASSERT_STREQ(tt_cp_dispatch_name(TT_CP_DISP_CALL), "call",
		     "dispatch name of the last rule");
	/* every rule named, and its line in the drill-down its own */
	for (rule = TT_CP_DISP_PICKUP; rule <= TT_CP_DISP_CALL; rule++) {
		ASSERT_NEQ(strcmp(tt_cp_dispatch_name(rule), "?"), 0,
			   "a rule's name");
		ASSERT_NEQ(strcmp(tt_cp_dispatch_why(rule),
				  tt_cp_dispatch_why(TT_CP_DISP_READ)),
			   0, "a rule's why");
	}
	ASSERT_STREQ(tt_cp_state_name(TT_CP_RUNNABLE), "runnable",
		     "state name");
	tt_critpath_free(cp);

	ev = ev_new(&s, TT_EV_FORK, 10, 101);
	ev->fork.child_tid = 102;
	ev->fork.child_tgid = 100;
	strcpy(ev->fork.comm, "python3");
	ev = ev_new(&s, TT_EV_COMM, 20, 102);
	strcpy(ev->comm.comm, "engine");
	cp = cp_feed(&s);
	ASSERT_STREQ(tt_critpath_comm(cp, 102), "engine", "renamed thread");
	ASSERT_NULL(tt_critpath_comm(cp, 101), "forking thread's name");
	ASSERT_NULL(tt_critpath_comm(cp, 555), "unknown thread's name");
	tt_critpath_free(cp);
}

/* The read-only timeline iterator renderers use. */
static void test_intervals(void)
{
	struct stream s = { 0 };
	struct tt_critpath_stats st;
	struct iv_list l = { 0 };
	struct tt_critpath *cp;
	__u32 tid, tgid;

	sw_in(&s, 100 * US, 101);
	preempt(&s, 300 * US, 101);
	sw_in(&s, 400 * US, 101);
	sw_out(&s, 500 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x42 });
	sw_in(&s, 600 * US, 102);
	wake(&s, 700 * US, 102, 101, 0, NR_FUTEX, 0x42);
	sw_in(&s, 710 * US, 101);
	ev_new(&s, TT_EV_EXIT, 800 * US, 101);
	sw_out(&s, 820 * US, 101, (struct blk){ .sys = -1 });
	sw_out(&s, 900 * US, 102,
	       (struct blk){ .sys = NR_EPOLL_WAIT,
			     .arg0 = 3,
			     .mode = S_IFREG,
			     .anon = true });
	comm(&s, 1000 * US, 102, "engine");
	cp = cp_feed(&s);

	ASSERT_EQ(tt_critpath_nthreads(cp), 2, "nthreads");
	if (ASSERT_OK(tt_critpath_thread(cp, 0, &tid, &tgid), "thread 0")) {
		ASSERT_EQ(tid, 101, "thread 0 tid");
		ASSERT_EQ(tgid, 100, "thread 0 tgid");
	}
	if (ASSERT_OK(tt_critpath_thread(cp, 1, &tid, &tgid), "thread 1"))
		ASSERT_EQ(tid, 102, "thread 1 tid");
	ASSERT_EQ(tt_critpath_thread(cp, 2, &tid, &tgid), -ERANGE,
		  "thread past the end");
	ASSERT_EQ(tt_critpath_intervals(cp, 555, 0, iv_collect, &l), -ENOENT,
		  "intervals of an unknown thread");
	tt_critpath_stats(cp, &st);
	ASSERT_EQ(st.first_ts, 100 * US, "first_ts");
	ASSERT_EQ(st.last_ts, 1000 * US, "last_ts");

	ASSERT_OK(tt_critpath_intervals(cp, 101, 0, iv_collect, &l),
		  "intervals of 101");
	/* the switch-out after its exit is not a wait */
	if (ASSERT_EQ(l.n, 6, "intervals of 101")) {
		check_iv("101 interval 0", &l.v[0], 100 * US, 300 * US,
			 TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
		check_iv("101 interval 1", &l.v[1], 300 * US, 400 * US,
			 TT_CP_RUNNABLE, TT_ST_RUNQUEUE, "preempted");
		check_iv("101 interval 3", &l.v[3], 500 * US, 700 * US,
			 TT_CP_BLOCKED, TT_ST_LOCK, "futex 0x42");
		check_iv("101 interval 4", &l.v[4], 700 * US, 710 * US,
			 TT_CP_RUNNABLE, TT_ST_RUNQUEUE, "woken by 102");
		ASSERT_EQ(l.v[4].waker_tid, 102, "101 interval 4 waker");
		ASSERT_EQ(l.v[1].waker_tid, 0, "101 interval 1 waker");
		check_iv("101 interval 5", &l.v[5], 710 * US, 820 * US,
			 TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
		ASSERT_FALSE(l.v[5].open_end, "101 interval 5 open end");
	}

	memset(&l, 0, sizeof(l));
	ASSERT_OK(tt_critpath_intervals(cp, 102, 0, iv_collect, &l),
		  "intervals of 102");
	if (ASSERT_EQ(l.n, 2, "intervals of 102")) {
		check_iv("102 interval 0", &l.v[0], 600 * US, 900 * US,
			 TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
		ASSERT_FALSE(l.v[0].open_end, "102 interval 0 open end");
		/* still blocked at the end of the trace */
		check_iv("102 interval 1", &l.v[1], 900 * US, 1000 * US,
			 TT_CP_BLOCKED, TT_ST_UNKNOWN, "epoll_wait anon");
		ASSERT_TRUE(l.v[1].open_end, "102 interval 1 open end");
	}

	/* a view that ends later stretches the open state, not the rest */
	memset(&l, 0, sizeof(l));
	ASSERT_OK(tt_critpath_intervals(cp, 102, 1500 * US, iv_collect, &l),
		  "intervals of 102 until 1500 us");
	if (ASSERT_EQ(l.n, 2, "intervals of 102 until 1500 us")) {
		ASSERT_EQ(l.v[0].end, 900 * US, "until 1500 us: closed end");
		ASSERT_EQ(l.v[1].end, 1500 * US, "until 1500 us: open end");
		ASSERT_TRUE(l.v[1].open_end, "until 1500 us: open");
	}
	memset(&l, 0, sizeof(l));
	ASSERT_OK(tt_critpath_intervals(cp, 102, 950 * US, iv_collect, &l),
		  "intervals of 102 until 950 us");
	if (ASSERT_EQ(l.n, 2, "intervals of 102 until 950 us"))
		ASSERT_EQ(l.v[1].end, 1000 * US, "until 950 us: end");

	/* the callback stops the walk and its value comes back */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	ASSERT_EQ(tt_critpath_intervals(cp, 101, 0, iv_collect, &l), 7,
		  "stopped intervals");
	ASSERT_EQ(l.n, 2, "intervals before the stop");
	tt_critpath_free(cp);
}

/* ~2 M events of 32 threads switching and waking each other; prints the
 * rates (no assertion on speed), checks the closure of the walks, and
 * that walks keeping no segments find the same stages and times. */
static void test_throughput(void)
{
	enum { NTHREADS = 32, NEVENTS = 2000000, NREQ = 2000 };
	struct tt_critpath *cp = tt_critpath_new();
	struct tt_cp_request *rqs = calloc(NREQ, sizeof(*rqs));
	struct tt_cp_result *res = calloc(NREQ, sizeof(*res));
	struct tt_cp_result *bare = calloc(NREQ, sizeof(*bare));
	bool running[NTHREADS] = { false };
	struct tt_critpath_stats st;
	uint64_t seed = 88172645463325252ULL;
	__u64 ts = 1000;
	struct tt_event ev;
	double t0, t1, t2;
	size_t i, n = 0;

	if (!ASSERT_OK_PTR(cp, "critpath") || !ASSERT_OK_PTR(rqs, "requests") ||
	    !ASSERT_OK_PTR(res, "results") ||
	    !ASSERT_OK_PTR(bare, "bare results"))
		goto cleanup;
	t0 = tt_now_s();
	for (n = 0; n < NEVENTS; n++) {
		__u32 a = tt_rnd(&seed) % NTHREADS,
		      b = tt_rnd(&seed) % NTHREADS;

		ts += 1 + tt_rnd(&seed) % 2000;
		memset(&ev, 0, sizeof(ev));
		ev.h.ts = ts;
		ev.h.tgid = 100;
		if (running[a] && !running[b]) {
			ev.h.type = TT_EV_WAKING;
			ev.h.tid = 101 + a;
			ev.wake.target_tid = 101 + b;
			ev.wake.target_tgid = 100;
			ev.wake.waker_syscall = NR_FUTEX;
			ev.wake.waker_arg0 = 0x1000 + b;
		} else {
			ev.h.type = TT_EV_SWITCH;
			ev.h.tid = running[a] ? 101 + a : 0;
			ev.sw.next_tid = running[a] ? 0 : 101 + a;
			ev.sw.next_tgid = 100;
			ev.sw.sw_flags = running[a] ? TT_SW_PREV_TRACED :
						      TT_SW_NEXT_TRACED;
			ev.sw.prev_state = tt_rnd(&seed) % 4 ? 1 : 0;
			ev.sw.syscall_nr = NR_FUTEX;
			ev.sw.arg0 = 0x1000 + a;
			running[a] = !running[a];
		}
		if (tt_critpath_add(cp, &ev))
			break;
	}
	t1 = tt_now_s();
	for (i = 0; i < NREQ; i++) {
		__u64 a = 1000 + (tt_rnd(&seed) % (ts - 100000000));

		rqs[i] = req(i + 1, a, a + 10000,
			     a + 10000 + tt_rnd(&seed) % 5000000, 0,
			     101 + tt_rnd(&seed) % NTHREADS,
			     101 + tt_rnd(&seed) % NTHREADS);
		rqs[i].t_wire = rqs[i].t_first_write + 20000;
	}
	ASSERT_OK(tt_critpath_walk_all(cp, rqs, NREQ, res), "walk_all");
	t2 = tt_now_s();
	for (i = 0; i < NREQ; i++)
		check_closure(&rqs[i], &res[i]);
	tt_critpath_stats(cp, &st);
	ASSERT_EQ(st.events, NEVENTS, "events");
	printf("  %zu events in %.3f s (%.2f M events/s), %llu intervals; "
	       "%d walks in %.3f s\n",
	       n, t1 - t0, n / (t1 - t0) / 1e6,
	       (unsigned long long)st.intervals, NREQ, t2 - t1);
	tt_critpath_set_drop_segments(cp, true);
	ASSERT_OK(tt_critpath_walk_all(cp, rqs, NREQ, bare),
		  "walk_all keeping no segments");
	for (i = 0; i < NREQ; i++) {
		ASSERT_NULL(bare[i].segs, "bare segs");
		ASSERT_EQ(bare[i].nsegs, 0, "bare nsegs");
		ASSERT_OK(memcmp(bare[i].stage_ns, res[i].stage_ns,
				 sizeof(res[i].stage_ns)),
			  "bare stage_ns");
		ASSERT_EQ(bare[i].t_dispatch, res[i].t_dispatch,
			  "bare t_dispatch");
		ASSERT_EQ(bare[i].t_enqueue, res[i].t_enqueue,
			  "bare t_enqueue");
		ASSERT_EQ(bare[i].t_token, res[i].t_token, "bare t_token");
		ASSERT_EQ(bare[i].incomplete, res[i].incomplete,
			  "bare incomplete");
		ASSERT_EQ(bare[i].complete, res[i].complete, "bare complete");
	}
	free_results(res, NREQ);
	free_results(bare, NREQ);
cleanup:
	free(rqs);
	free(res);
	free(bare);
	tt_critpath_free(cp);
}

int main(void)
{
	TT_RUN(test_names);
	TT_RUN_GROUP(test_single_thread);
	TT_RUN_GROUP(test_cross_thread);
	TT_RUN_GROUP(test_gpu_wait);
	TT_RUN_GROUP(test_storage_wait);
	TT_RUN_GROUP(test_storage_cpu);
	TT_RUN_GROUP(test_storage_span);
	TT_RUN_GROUP(test_steal);
	TT_RUN_GROUP(test_preempted);
	TT_RUN_GROUP(test_add_after_walk);
	TT_RUN_GROUP(test_chain);
	TT_RUN_GROUP(test_lookahead);
	TT_RUN_GROUP(test_cross_process);
	TT_RUN_GROUP(test_busy_engine);
	TT_RUN_GROUP(test_busy_engine_shared_loop);
	TT_RUN_GROUP(test_gil_lock);
	TT_RUN_GROUP(test_fallbacks);
	TT_RUN_GROUP(test_go_channel);
	TT_RUN_GROUP(test_data_wake);
	TT_RUN_GROUP(test_msg_send);
	TT_RUN_GROUP(test_loopback_softirq);
	TT_RUN_GROUP(test_lost);
	TT_RUN_GROUP(test_sleep_lock_unknown);
	TT_RUN_GROUP(test_not_walked_and_clamps);
	TT_RUN_GROUP(test_wake_race);
	TT_RUN_GROUP(test_new_thread);
	TT_RUN_GROUP(test_anon_inode);
	TT_RUN(test_intervals);
	TT_RUN_GROUP(test_gpu_spin_sync);
	TT_RUN_GROUP(test_gpu_blocking_sync);
	TT_RUN_GROUP(test_gpu_chardev);
	TT_RUN_GROUP(test_gpu_launch_blocked);
	TT_RUN_GROUP(test_gpu_launch_run);
	TT_RUN_GROUP(test_gpu_dispatch);
	TT_RUN_GROUP(test_gpu_calls);
	TT_RUN_GROUP(test_pickup_producer_work);
	TT_RUN_GROUP(test_handoff_enqueue);
	TT_RUN_GROUP(test_one_in_flight);
	TT_RUN_GROUP(test_double_wake_shared_writer);
	TT_RUN_GROUP(test_blocked_before_trace);
	TT_RUN_GROUP(test_net_in_last_arrive);
	TT_RUN_GROUP(test_reader_many_slices);
	TT_RUN_GROUP(test_reader_backlog);
	TT_RUN_GROUP(test_missed_switch_in);
	TT_RUN_GROUP(test_runtime_lock);
	TT_RUN_GROUP(test_lock_turn);
	TT_RUN_GROUP(test_markers);
	TT_RUN_GROUP(test_batch);
	TT_RUN_GROUP(test_hop);
	TT_RUN(test_throughput);
	printf("  closure checked for %d requests\n", closure_checked);
	TT_EXIT();
}
