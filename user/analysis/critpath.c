/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Thread timelines and the critical-path walk (DESIGN §4).
 *
 * Each traced thread gets an array of state changes (running, runnable,
 * blocked); the state of record k holds until record k + 1. Blocked
 * records point at what the thread blocked in, records that make a thread
 * runnable point at the wakeup (who woke it, from which context). A request
 * is walked backward from its first token write: running time is CPU,
 * runnable time is runqueue, a wakeup by a traced thread moves the walk to
 * the waker, any other wakeup charges the wait to its reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "containers.h"
#include "critpath.h"
#include "gpu.h"
#include "tt_arch.h"

#define NONE32 UINT32_MAX
/* A hand-off burst ends when the consumer blocks or runs this long. */
#define BURST_GAP_NS 100000ULL
/* A wakeup may be traced just before its target's switch-out completes. */
#define WAKE_RACE_NS 50000ULL
/* A condvar signal and its mutex's unlock wake one target this close. */
#define DOUBLE_WAKE_NS 1000000ULL
/* A futex word waited on more than this many times per request is a lock, */
#define LOCK_WAITS_PER_REQ 4
/* and so is one that a thread both waits on and wakes, this often waited. */
#define LOCK_SHARED_WAITS 3
/* Back-to-back launches (less than this apart) on a path ... */
#define LAUNCH_GAP_NS 50000ULL
/* ... are charged as one segment from this many. */
#define LAUNCH_RUN 8

/* The syscalls the drill-down names (tt_arch.h: this architecture's). */
static const struct {
	int nr;
	const char *name;
} syscall_names[] = { TT_SYSCALL_NAMES };

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

/*
 * A CUDA call of a thread, or a piece of one: a call with calls nested in
 * it is stored as the pieces around them, so that a thread's calls are
 * sorted and disjoint and the innermost names each instant.
 */
struct cp_call {
	__u64 start, end;
	__s32 ret;
	__u16 fn; /* index in tt_cuda_fns() */
	__u8 cls; /* enum tt_cuda_class, 0 for an unknown fn */
};

/* An ioctl on a GPU device node. */
struct cp_ioctl {
	__u64 start, end;
	__u64 ino;
	__s64 ret;
	__u32 cmd, rdev, dev;
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

struct cp_wake {
	__u64 ts;
	__u64 arg0; /* the waker's first syscall argument (FUTEX_WAKE's word) */
	__u32 waker_tid;
	__u32 target_tid;
	__u32 block; /* the target's block, NONE32 if it was not blocked */
	__s16 syscall; /* the waker's syscall, -1 outside process context */
	__u8 ctx; /* enum wake_ctx */
	__u8 lock; /* through a lock word: followed, never a hand-off */
};

struct cp_thread {
	__u32 tid, tgid;
	struct cp_rec *recs;
	size_t nrecs, caprecs;
	__u32 *wout; /* wakes this thread made in process context */
	size_t nwout, capwout;
	__u32 *cand; /* wout less lock wakes, rebuilt by prepare() */
	size_t ncand;
	struct cp_call *calls; /* sorted, disjoint */
	size_t ncalls, capcalls;
	size_t nsync; /* sync calls among them */
	struct cp_ioctl *ioctls; /* sorted, disjoint */
	size_t nioctls, capioctls;
	/* A wake seen while it ran: it may race the switch-out that follows. */
	__u32 pending;
	__u64 pending_ts;
	__u64 exit_ts; /* its TT_EV_EXIT, 0 if none seen */
	bool has_comm;
	char comm[TT_COMM_LEN];
};

/* A futex word's use: how often it is waited on, and by whom both sides. */
struct cp_word {
	__u32 waits;
	__u32 waiter[2]; /* the first two threads that waited on it */
	__u32 waker[2]; /* the first two threads that woke it */
};

struct cp_window {
	__u64 start, end;
};

struct segvec {
	struct tt_cp_segment *v;
	size_t n, cap;
};

struct tt_critpath {
	struct cp_thread **threads;
	size_t nthreads, capthreads;
	struct tt_hmap tids; /* tid -> index in threads */
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
	struct cp_window *lost_merged; /* sorted, disjoint: by prepare() */
	size_t nlost_merged;
	__u32 *gpu_threads; /* threads with sync calls, by prepare() */
	size_t ngpu_threads;
	struct cp_gpudev *gpu_devs;
	size_t ngpu_devs, capgpu_devs;
	__u32 *gpu_majors;
	size_t ngpu_majors, capgpu_majors;
	__u64 events;
	__u64 gpu_calls, ioctls; /* stored */
	__u64 first_ts, last_ts; /* of the events fed ... */
	bool timed; /* ... when any was in time */
	__u64 intervals;
	/* prepare() ran for this many requests and events */
	size_t prep_nreq;
	__u64 prep_events;
	bool prepared;
	__u64 lock_words;
	/* the walk's buffers, reused from request to request: growing new
	 * ones for each of thousands of requests was a tenth of report */
	struct segvec walk_path, walk_segs;
	bool drop_segments; /* results keep their stage sums only */
};

/* ---- object ---- */

struct tt_critpath *tt_critpath_new(void)
{
	return calloc(1, sizeof(struct tt_critpath));
}

void tt_critpath_free(struct tt_critpath *cp)
{
	size_t i;

	if (!cp)
		return;
	for (i = 0; i < cp->nthreads; i++) {
		free(cp->threads[i]->recs);
		free(cp->threads[i]->wout);
		free(cp->threads[i]->cand);
		free(cp->threads[i]->calls);
		free(cp->threads[i]->ioctls);
		free(cp->threads[i]);
	}
	free(cp->threads);
	tt_hmap_free(&cp->tids);
	tt_hmap_free(&cp->tgids);
	tt_hmap_free(&cp->futex_words);
	free(cp->words);
	free(cp->blocks);
	free(cp->wakes);
	free(cp->lost);
	free(cp->lost_merged);
	free(cp->gpu_devs);
	free(cp->gpu_threads);
	free(cp->gpu_majors);
	free(cp->walk_path.v);
	free(cp->walk_segs.v);
	free(cp);
}

void tt_critpath_set_drop_segments(struct tt_critpath *cp, bool drop)
{
	cp->drop_segments = drop;
}

static struct cp_thread *thread_find(const struct tt_critpath *cp, __u32 tid)
{
	struct tt_hmap_ent *ent = tt_hmap_find(&cp->tids, tid, 0);

	return ent ? cp->threads[ent->val] : NULL;
}

static bool is_traced(const struct tt_critpath *cp, __u32 tid, __u32 tgid)
{
	if (!tid)
		return false;
	return tt_hmap_find(&cp->tids, tid, 0) || tt_hmap_find(&cp->tgids, tgid, 0);
}

int tt_critpath_add_tgid(struct tt_critpath *cp, __u32 tgid)
{
	if (!tgid)
		return 0;
	return tt_hmap_insert(&cp->tgids, tgid, 0, 0) ? 0 : -ENOMEM;
}

/* The thread tid, created (and its process marked traced) when new. */
static struct cp_thread *thread_ensure(struct tt_critpath *cp, __u32 tid,
				       __u32 tgid)
{
	struct tt_hmap_ent *ent = tt_hmap_find(&cp->tids, tid, 0);
	struct cp_thread *th;

	if (ent)
		return cp->threads[ent->val];
	if (tt_grow((void **)&cp->threads, &cp->capthreads, cp->nthreads + 1,
		 sizeof(*cp->threads)))
		return NULL;
	th = calloc(1, sizeof(*th));
	if (!th)
		return NULL;
	if (!tt_hmap_insert(&cp->tids, tid, 0, cp->nthreads) ||
	    tt_critpath_add_tgid(cp, tgid)) {
		free(th);
		return NULL;
	}
	th->tid = tid;
	th->tgid = tgid;
	th->pending = NONE32;
	cp->threads[cp->nthreads++] = th;
	return th;
}

static int rec_push(struct tt_critpath *cp, struct cp_thread *th, __u64 ts,
		    enum rec_state state, __u32 info, __u8 flags)
{
	struct cp_rec *last = th->nrecs ? &th->recs[th->nrecs - 1] : NULL;

	if (last) {
		/* keep the records sorted even if the caller's order slips */
		if (ts < last->ts)
			ts = last->ts;
		if (last->state == state && info == NONE32 &&
		    last->info == NONE32 && last->flags == flags)
			return 0;
	}
	if (tt_grow((void **)&th->recs, &th->caprecs, th->nrecs + 1,
		 sizeof(*th->recs)))
		return -ENOMEM;
	th->recs[th->nrecs++] = (struct cp_rec){
		.ts = ts, .info = info, .state = state, .flags = flags
	};
	cp->intervals++;
	return 0;
}

/* Largest k with recs[k].ts < t, or -1. */
static long rec_before(const struct cp_thread *th, __u64 t)
{
	size_t lo = 0, hi = th->nrecs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (th->recs[mid].ts < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* ---- feeding ---- */

/* The use of futex word (word, tgid), created when new. */
static struct cp_word *word_get(struct tt_critpath *cp, __u64 word, __u32 tgid)
{
	struct tt_hmap_ent *ent;

	if (tt_grow((void **)&cp->words, &cp->capwords, cp->nwords + 1,
		 sizeof(*cp->words)))
		return NULL;
	ent = tt_hmap_insert(&cp->futex_words, word, tgid, cp->nwords);
	if (!ent)
		return NULL;
	if (ent->val == cp->nwords)
		memset(&cp->words[cp->nwords++], 0, sizeof(*cp->words));
	return &cp->words[ent->val];
}

static void word_note(__u32 *tids, __u32 tid)
{
	if (!tids[0])
		tids[0] = tid;
	else if (tids[0] != tid && !tids[1])
		tids[1] = tid;
}

static int switch_out(struct tt_critpath *cp, struct cp_thread *th, __u64 ts,
		      const struct tt_switch *sw)
{
	struct cp_block *b;
	__u32 bidx, pending = th->pending;
	__u8 flags = 0;
	int err;

	th->pending = NONE32;
	if (sw->prev_state == 0)
		return rec_push(cp, th, ts, REC_RUNNABLE, NONE32,
				REC_F_PREEMPT);
	if (tt_grow((void **)&cp->blocks, &cp->capblocks, cp->nblocks + 1,
		 sizeof(*cp->blocks)))
		return -ENOMEM;
	bidx = cp->nblocks++;
	b = &cp->blocks[bidx];
	b->syscall = sw->syscall_nr;
	b->arg0 = sw->arg0;
	b->fd_mode = sw->fd_mode;
	b->fd_rdev = sw->fd_rdev;
	b->fd_dev = sw->fd_dev;
	b->fd_ino = sw->fd_ino;
	if (sw->sw_flags & TT_SW_IOWAIT)
		flags |= REC_F_IOWAIT;
	if (sw->sw_flags & TT_SW_FD)
		flags |= REC_F_FD;
	if ((sw->sw_flags & (TT_SW_FD | TT_SW_ANON_INODE)) ==
	    (TT_SW_FD | TT_SW_ANON_INODE))
		flags |= REC_F_ANON;
	if (sw->syscall_nr == TT_NR_futex) {
		struct cp_word *fw = word_get(cp, sw->arg0, th->tgid);

		if (!fw)
			return -ENOMEM;
		fw->waits++;
		word_note(fw->waiter, th->tid);
	}
	err = rec_push(cp, th, ts, REC_BLOCKED, bidx, flags);
	if (err || pending == NONE32 || ts - th->pending_ts > WAKE_RACE_NS)
		return err;
	/* woken while still switching out: runnable from the switch on */
	cp->wakes[pending].block = bidx;
	return rec_push(cp, th, ts, REC_RUNNABLE, pending, 0);
}

static int on_switch(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_switch *sw = &ev->sw;
	struct cp_thread *th;
	int err;

	if ((sw->sw_flags & TT_SW_PREV_TRACED) && ev->h.tid) {
		th = thread_ensure(cp, ev->h.tid, ev->h.tgid);
		if (!th)
			return -ENOMEM;
		err = switch_out(cp, th, ev->h.ts, sw);
		if (err)
			return err;
	}
	if ((sw->sw_flags & TT_SW_NEXT_TRACED) && sw->next_tid) {
		th = thread_ensure(cp, sw->next_tid, sw->next_tgid);
		if (!th)
			return -ENOMEM;
		th->pending = NONE32;
		return rec_push(cp, th, ev->h.ts, REC_RUNNING, NONE32, 0);
	}
	return 0;
}

/*
 * A wakeup of th, which has no event before it, at ts: it was blocked
 * since the first event fed, in a wait nothing tells (syscall -1).
 */
static int pretrace_block(struct tt_critpath *cp, struct cp_thread *th,
			  __u64 ts)
{
	__u64 since = cp->first_ts < ts ? cp->first_ts : ts;

	if (tt_grow((void **)&cp->blocks, &cp->capblocks, cp->nblocks + 1,
		 sizeof(*cp->blocks)))
		return -ENOMEM;
	memset(&cp->blocks[cp->nblocks], 0, sizeof(*cp->blocks));
	cp->blocks[cp->nblocks].syscall = -1;
	return rec_push(cp, th, since, REC_BLOCKED, cp->nblocks++,
			REC_F_PRETRACE);
}

static int on_wake(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_wake *w = &ev->wake;
	bool new_thread = ev->h.type == TT_EV_WAKEUP_NEW;
	struct cp_thread *waker = NULL, *th;
	struct cp_rec *last;
	struct cp_wake *wk;
	enum wake_ctx ctx;
	bool target_traced;
	__u32 widx;
	__s32 nr;

	if (ev->h.flags & TT_F_HARDIRQ)
		ctx = CTX_HARDIRQ;
	else if (ev->h.flags & TT_F_SOFTIRQ)
		ctx = CTX_SOFTIRQ;
	else
		ctx = CTX_PROCESS;
	if (ctx != CTX_HARDIRQ && is_traced(cp, ev->h.tid, ev->h.tgid)) {
		waker = thread_ensure(cp, ev->h.tid, ev->h.tgid);
		if (!waker)
			return -ENOMEM;
	}
	/* the recorder emits the wakeups of traced threads only */
	target_traced = w->target_tid != 0;
	if (!target_traced && !(waker && ctx == CTX_PROCESS))
		return 0;
	if (w->target_tid == ev->h.tid && ctx == CTX_PROCESS)
		return 0;
	if (tt_grow((void **)&cp->wakes, &cp->capwakes, cp->nwakes + 1,
		 sizeof(*cp->wakes)))
		return -ENOMEM;
	widx = cp->nwakes++;
	wk = &cp->wakes[widx];
	nr = ctx == CTX_PROCESS ? (w->waker_syscall & ~0x40000000) : -1;
	*wk = (struct cp_wake){
		.ts = ev->h.ts,
		.arg0 = ctx == CTX_PROCESS ? w->waker_arg0 : 0,
		.waker_tid = ev->h.tid,
		.target_tid = w->target_tid,
		.block = NONE32,
		.syscall = nr >= -1 && nr <= INT16_MAX ? nr : -1,
		.ctx = ctx,
	};
	if (waker && ctx == CTX_PROCESS) {
		if (tt_grow((void **)&waker->wout, &waker->capwout,
			 waker->nwout + 1, sizeof(*waker->wout)))
			return -ENOMEM;
		waker->wout[waker->nwout++] = widx;
		if (nr == TT_NR_futex) {
			struct cp_word *fw =
				word_get(cp, w->waker_arg0, waker->tgid);

			if (!fw)
				return -ENOMEM;
			word_note(fw->waker, waker->tid);
		}
	}
	if (!target_traced)
		return 0;
	th = thread_ensure(cp, w->target_tid, w->target_tgid);
	if (!th)
		return -ENOMEM;
	if (!th->nrecs && !new_thread) {
		/* asleep when the trace began: blocked since its first event */
		int err = pretrace_block(cp, th, ev->h.ts);

		if (err)
			return err;
	}
	last = th->nrecs ? &th->recs[th->nrecs - 1] : NULL;
	if (last && last->state == REC_RUNNING && !new_thread) {
		/* not blocked yet: runnable only if its switch-out follows */
		th->pending = widx;
		th->pending_ts = ev->h.ts;
		return 0;
	}
	if (last && last->state != REC_BLOCKED)
		return 0;
	if (last)
		wk->block = last->info;
	return rec_push(cp, th, ev->h.ts, REC_RUNNABLE, widx, 0);
}

/*
 * Appends call c of th, which ended last. The calls that ended inside it
 * are nested in it: it is stored as the pieces around them. One that
 * began before the previous call ended (a clock slip) starts at that end.
 */
static int call_push(struct tt_critpath *cp, struct cp_thread *th,
		     struct cp_call c)
{
	struct cp_call *nested = NULL, piece;
	size_t j = th->ncalls, m, i;
	__u64 cur;

	while (j > 0 && th->calls[j - 1].start >= c.start)
		j--;
	cur = j ? th->calls[j - 1].end : 0;
	if (c.start < cur)
		c.start = cur;
	if (c.start >= c.end)
		return 0;
	m = th->ncalls - j;
	if (tt_grow((void **)&th->calls, &th->capcalls, th->ncalls + m + 1,
		 sizeof(*th->calls)))
		return -ENOMEM;
	if (m) {
		nested = malloc(m * sizeof(*nested));
		if (!nested)
			return -ENOMEM;
		memcpy(nested, &th->calls[j], m * sizeof(*nested));
	}
	th->ncalls = j;
	cur = c.start;
	for (i = 0; i <= m; i++) {
		piece = c;
		piece.start = cur;
		piece.end = i < m && nested[i].start < c.end ? nested[i].start :
							       c.end;
		if (piece.end > piece.start) {
			th->calls[th->ncalls++] = piece;
			cur = piece.end;
		}
		if (i < m && nested[i].end > cur && nested[i].start >= cur) {
			th->calls[th->ncalls++] = nested[i];
			cur = nested[i].end;
		}
	}
	free(nested);
	return 0;
}

static int on_gpu_call(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_gpu_call *gc = &ev->call;
	const struct tt_cuda_fn *fns;
	struct cp_thread *th;
	size_t nfns;
	__u8 cls;

	/* no entry time (the probe came mid-call): no interval */
	if (!ev->h.tid || !gc->ts_enter || gc->ts_enter >= ev->h.ts)
		return 0;
	th = thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th)
		return -ENOMEM;
	fns = tt_cuda_fns(&nfns);
	cls = gc->fn < nfns ? fns[gc->fn].cls : 0;
	cp->gpu_calls++;
	if (cls == TT_CUDA_SYNC)
		th->nsync++;
	return call_push(cp, th,
			 (struct cp_call){
				 .start = gc->ts_enter,
				 .end = ev->h.ts,
				 .ret = gc->ret,
				 .fn = gc->fn,
				 .cls = cls,
			 });
}

static int on_ioctl(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_ioctl *io = &ev->ioc;
	struct cp_thread *th;
	__u64 start = io->ts_enter;

	if (!ev->h.tid || !start || start >= ev->h.ts)
		return 0;
	th = thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th)
		return -ENOMEM;
	if (th->nioctls && start < th->ioctls[th->nioctls - 1].end)
		start = th->ioctls[th->nioctls - 1].end;
	if (start >= ev->h.ts)
		return 0;
	if (tt_grow((void **)&th->ioctls, &th->capioctls, th->nioctls + 1,
		 sizeof(*th->ioctls)))
		return -ENOMEM;
	th->ioctls[th->nioctls++] = (struct cp_ioctl){
		.start = start,
		.end = ev->h.ts,
		.ino = io->ino,
		.ret = io->ret,
		.cmd = io->cmd,
		.rdev = io->rdev,
		.dev = io->dev,
	};
	cp->ioctls++;
	return 0;
}

static int set_comm(struct tt_critpath *cp, __u32 tid, __u32 tgid,
		    const char *comm)
{
	struct cp_thread *th = tid ? thread_ensure(cp, tid, tgid) : NULL;

	if (!tid)
		return 0;
	if (!th)
		return -ENOMEM;
	memcpy(th->comm, comm, TT_COMM_LEN);
	th->comm[TT_COMM_LEN - 1] = '\0';
	th->has_comm = true;
	return 0;
}

int tt_critpath_name_thread(struct tt_critpath *cp, __u32 tid, __u32 tgid,
			    const char *comm)
{
	return set_comm(cp, tid, tgid, comm);
}

int tt_critpath_add(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_thread *th;

	/* a process table's COMM records (time 0) are not events in time */
	if (ev->h.type != TT_EV_COMM || ev->h.ts) {
		if (!cp->timed || ev->h.ts < cp->first_ts)
			cp->first_ts = ev->h.ts;
		if (!cp->timed || ev->h.ts > cp->last_ts)
			cp->last_ts = ev->h.ts;
		cp->timed = true;
	}
	cp->events++;
	switch (ev->h.type) {
	case TT_EV_SWITCH:
		return on_switch(cp, ev);
	case TT_EV_WAKING:
	case TT_EV_WAKEUP_NEW:
		return on_wake(cp, ev);
	case TT_EV_GPU_CALL:
		return on_gpu_call(cp, ev);
	case TT_EV_IOCTL:
		return on_ioctl(cp, ev);
	case TT_EV_FORK:
		th = ev->h.tid ? thread_ensure(cp, ev->h.tid, ev->h.tgid) :
				 NULL;
		if (ev->h.tid && !th)
			return -ENOMEM;
		return set_comm(cp, ev->fork.child_tid, ev->fork.child_tgid,
				ev->fork.comm);
	case TT_EV_COMM:
		return set_comm(cp, ev->h.tid, ev->h.tgid, ev->comm.comm);
	case TT_EV_EXIT:
		th = thread_find(cp, ev->h.tid);
		if (th)
			th->exit_ts = ev->h.ts;
		return 0;
	case TT_EV_LOST:
		if (tt_grow((void **)&cp->lost, &cp->caplost, cp->nlost + 1,
			 sizeof(*cp->lost)))
			return -ENOMEM;
		cp->lost[cp->nlost].start = ev->lost.since_ts < ev->h.ts ?
						    ev->lost.since_ts :
						    ev->h.ts;
		cp->lost[cp->nlost].end = ev->h.ts;
		cp->nlost++;
		return 0;
	default:
		return 0;
	}
}

static int add_u32(__u32 **v, size_t *n, size_t *cap, __u32 x)
{
	if (tt_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = x;
	return 0;
}

static int gpu_dev_add(struct tt_critpath *cp, __u32 rdev, __u32 dev, __u64 ino,
		       __u32 kind, const char *path)
{
	struct cp_gpudev *d;
	size_t n;

	if (!rdev && !ino)
		return 0;
	if (tt_grow((void **)&cp->gpu_devs, &cp->capgpu_devs, cp->ngpu_devs + 1,
		 sizeof(*cp->gpu_devs)))
		return -ENOMEM;
	d = &cp->gpu_devs[cp->ngpu_devs++];
	memset(d, 0, sizeof(*d));
	d->rdev = rdev;
	d->dev = dev;
	d->ino = ino;
	d->kind = kind;
	/* the table's path need not be terminated */
	n = strnlen(path, sizeof(d->path) - 1);
	memcpy(d->path, path, n);
	d->path[n] = '\0';
	return 0;
}

int tt_critpath_add_gpu_device(struct tt_critpath *cp,
			       const struct tt_dev_info *d)
{
	return gpu_dev_add(cp, d->rdev, d->dev, d->ino, d->kind, d->path);
}

int tt_critpath_add_gpu_rdev(struct tt_critpath *cp, __u32 rdev)
{
	return gpu_dev_add(cp, rdev, 0, 0, TT_GPU_UNKNOWN, "");
}

int tt_critpath_add_gpu_major(struct tt_critpath *cp, __u32 major)
{
	return add_u32(&cp->gpu_majors, &cp->ngpu_majors, &cp->capgpu_majors,
		       major);
}

const char *tt_critpath_comm(const struct tt_critpath *cp, __u32 tid)
{
	const struct cp_thread *th = thread_find(cp, tid);

	return th && th->has_comm ? th->comm : NULL;
}

void tt_critpath_stats(const struct tt_critpath *cp,
		       struct tt_critpath_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->events = cp->events;
	st->threads = cp->nthreads;
	st->intervals = cp->intervals;
	st->wakes = cp->nwakes;
	st->lost_windows = cp->nlost;
	st->lock_words = cp->lock_words;
	st->gpu_calls = cp->gpu_calls;
	st->ioctls = cp->ioctls;
	st->first_ts = cp->first_ts;
	st->last_ts = cp->last_ts;
}

/* ---- names ---- */

const char *tt_stage_name(enum tt_stage s)
{
	static const char *const names[TT_ST_MAX] = {
		[TT_ST_NET_IN] = "network.in",
		[TT_ST_NET_OUT] = "network.out",
		[TT_ST_QUEUE] = "scheduler.queue",
		[TT_ST_RUNQUEUE] = "scheduler.runqueue",
		[TT_ST_STORAGE] = "storage.io",
		[TT_ST_GPU] = "compute.gpu",
		[TT_ST_CPU] = "compute.cpu",
		[TT_ST_SLEEP] = "other.sleep",
		[TT_ST_LOCK] = "other.lock",
		[TT_ST_UNKNOWN] = "other.unknown",
	};

	return (unsigned int)s < TT_ST_MAX ? names[s] : "?";
}

const char *tt_cp_state_name(enum tt_cp_state s)
{
	switch (s) {
	case TT_CP_PHASE:
		return "phase";
	case TT_CP_RUNNING:
		return "running";
	case TT_CP_RUNNABLE:
		return "runnable";
	case TT_CP_BLOCKED:
		return "blocked";
	case TT_CP_NODATA:
		return "no-data";
	}
	return "?";
}

const char *tt_cp_dispatch_name(enum tt_cp_dispatch d)
{
	switch (d) {
	case TT_CP_DISP_READ:
		return "read";
	case TT_CP_DISP_PICKUP:
		return "pickup";
	case TT_CP_DISP_HANDOFF:
		return "handoff";
	case TT_CP_DISP_GPU:
		return "gpu";
	}
	return "?";
}

static const char *syscall_name(int nr)
{
	size_t i;

	for (i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
		if (syscall_names[i].nr == nr)
			return syscall_names[i].name;
	return NULL;
}

/* ---- classification of waits ---- */

/*
 * Whether a node is a registered GPU device: a char device (chr) by its
 * rdev or major, any node by dev and ino. *d gets the device registered
 * with the most detail (a path), or NULL for a major alone.
 */
static bool gpu_node(const struct tt_critpath *cp, bool chr, __u32 rdev,
		     __u32 dev, __u64 ino, const struct cp_gpudev **d)
{
	const struct cp_gpudev *g;
	bool major = false;
	size_t i;

	*d = NULL;
	for (i = 0; i < cp->ngpu_devs; i++) {
		g = &cp->gpu_devs[i];
		if (!((chr && g->rdev && g->rdev == rdev) ||
		      (g->ino && g->ino == ino && g->dev == dev)))
			continue;
		if (!*d || (!(*d)->path[0] && g->path[0]))
			*d = g;
	}
	for (i = 0; chr && !*d && i < cp->ngpu_majors; i++)
		major |= cp->gpu_majors[i] == rdev >> 20;
	return *d || major;
}

/* How many of n intervals, sorted and disjoint, start before t: they are
 * structs of size stride whose first member is their __u64 start. */
static size_t starts_before(const void *v, size_t n, size_t stride, __u64 t)
{
	size_t lo = 0, hi = n, mid;
	__u64 start;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		memcpy(&start, (const char *)v + mid * stride, sizeof(start));
		if (start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

_Static_assert(offsetof(struct cp_call, start) == 0 &&
		       offsetof(struct cp_ioctl, start) == 0,
	       "starts_before() reads start at offset 0");

/* Calls of th that start before t (they are sorted and disjoint). */
static size_t calls_before(const struct cp_thread *th, __u64 t)
{
	return starts_before(th->calls, th->ncalls, sizeof(*th->calls), t);
}

static size_t ioctls_before(const struct cp_thread *th, __u64 t)
{
	return starts_before(th->ioctls, th->nioctls, sizeof(*th->ioctls), t);
}

/* The call of th around instant t, or NULL. */
static const struct cp_call *call_at(const struct cp_thread *th, __u64 t)
{
	size_t i = calls_before(th, t + 1);

	return i && th->calls[i - 1].end > t ? &th->calls[i - 1] : NULL;
}

static const struct cp_ioctl *ioctl_at(const struct cp_thread *th, __u64 t)
{
	size_t i = ioctls_before(th, t + 1);

	return i && th->ioctls[i - 1].end > t ? &th->ioctls[i - 1] : NULL;
}

/* "a b" in buf, cut to fit: a reason is a label, not a record. */
static void label(char *buf, size_t len, const char *a, const char *b)
{
	size_t n = 0;

	while (*a && n + 1 < len)
		buf[n++] = *a++;
	if (n + 1 < len)
		buf[n++] = ' ';
	while (*b && n + 1 < len)
		buf[n++] = *b++;
	buf[n] = '\0';
}

static bool is_launch(const struct cp_call *c)
{
	return c->cls == TT_CUDA_LAUNCH || c->cls == TT_CUDA_GRAPH;
}

static void cuda_fn_name(__u16 fn, char *buf, size_t len)
{
	const struct tt_cuda_fn *fns;
	size_t n;

	fns = tt_cuda_fns(&n);
	if (fn < n)
		snprintf(buf, len, "%s", fns[fn].name);
	else
		snprintf(buf, len, "cuda#%u", fn);
}

/* The ioctl's name, decoded for the kind of its device. */
static void ioctl_name(const struct tt_critpath *cp, const struct cp_ioctl *io,
		       char *buf, size_t len)
{
	const struct cp_gpudev *d;

	gpu_node(cp, io->rdev != 0, io->rdev, io->dev, io->ino, &d);
	tt_gpu_ioctl_name(io->cmd, d ? d->kind : TT_GPU_UNKNOWN, buf, len);
}

static bool is_file_io(int nr)
{
	switch (nr) {
	case TT_NR_read:
	case TT_NR_write:
	case TT_NR_pread64:
	case TT_NR_pwrite64:
	case TT_NR_readv:
	case TT_NR_writev:
	case TT_NR_preadv:
	case TT_NR_pwritev:
	case TT_NR_preadv2:
	case TT_NR_pwritev2:
	case TT_NR_fsync:
	case TT_NR_fdatasync:
		return true;
	}
	return false;
}

static bool is_poll(int nr)
{
	switch (nr) {
	case TT_NR_poll:
	case TT_NR_select:
	case TT_NR_epoll_wait:
	case TT_NR_pselect6:
	case TT_NR_ppoll:
	case TT_NR_epoll_pwait:
	case TT_NR_epoll_pwait2:
		return true;
	}
	return false;
}

static __u32 fd_type(const struct cp_rec *rec, const struct cp_block *b)
{
	return rec->flags & REC_F_FD ? b->fd_mode & S_IFMT : 0;
}

/* Why a blocked record is a wait for the GPU, if it is one. */
struct gpu_wait {
	const struct cp_call *sync; /* the sync call it is in */
	const struct cp_ioctl *ioc; /* the GPU ioctl it is in */
	const struct cp_gpudev *dev; /* the device, when registered */
	bool fd; /* on a GPU device fd */
};

/*
 * A wait inside a sync call, or on a GPU device fd (or in an ioctl on
 * one): compute.gpu whoever ends it, and never followed: on real hardware
 * an interrupt ends it, with a simulated device its thread.
 */
static bool gpu_wait_of(const struct tt_critpath *cp,
			const struct cp_thread *th, const struct cp_rec *rec,
			struct gpu_wait *gw)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	__u32 type = fd_type(rec, b);
	const struct cp_gpudev *d;
	const struct cp_call *c;
	const struct cp_ioctl *io;

	memset(gw, 0, sizeof(*gw));
	if (!th)
		return false;
	c = th->ncalls ? call_at(th, rec->ts) : NULL;
	if (c && c->cls == TT_CUDA_SYNC)
		gw->sync = c;
	if (!cp->ngpu_devs && !cp->ngpu_majors)
		return gw->sync;
	if (type && !(rec->flags & REC_F_ANON) &&
	    gpu_node(cp, type == S_IFCHR, b->fd_rdev, b->fd_dev, b->fd_ino,
		     &gw->dev))
		gw->fd = true;
	io = b->syscall == TT_NR_ioctl && th->nioctls ? ioctl_at(th, rec->ts) :
						     NULL;
	if (io && gpu_node(cp, io->rdev != 0, io->rdev, io->dev, io->ino, &d)) {
		gw->ioc = io;
		gw->fd = true;
		if (d)
			gw->dev = d;
	}
	return gw->sync || gw->fd;
}

/* Where a blocked interval nobody traced ended goes (DESIGN §4). */
static enum tt_stage block_stage(const struct tt_critpath *cp,
				 const struct cp_rec *rec)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	__u32 type = fd_type(rec, b);

	/*
	 * eventfd, timerfd, signalfd, epoll, io_uring: one shared inode (and
	 * S_IFREG on recent kernels), so neither the mode nor an I/O wait
	 * (io_uring sets one) says storage; a timerfd looks like the rest.
	 */
	if (rec->flags & (REC_F_ANON | REC_F_PRETRACE))
		return TT_ST_UNKNOWN;
	if (rec->flags & REC_F_IOWAIT)
		return TT_ST_STORAGE;
	if ((type == S_IFREG || type == S_IFBLK) && is_file_io(b->syscall))
		return TT_ST_STORAGE;
	if (type == S_IFSOCK)
		return TT_ST_NET_OUT;
	if (b->syscall == TT_NR_nanosleep || b->syscall == TT_NR_clock_nanosleep)
		return TT_ST_SLEEP;
	if (b->syscall == TT_NR_futex)
		return TT_ST_LOCK;
	return TT_ST_UNKNOWN;
}

/* A wait a loopback TCP send can end: on a socket, or in a poll. */
static bool block_is_net(const struct tt_critpath *cp, const struct cp_rec *rec)
{
	const struct cp_block *b = &cp->blocks[rec->info];

	return fd_type(rec, b) == S_IFSOCK || is_poll(b->syscall);
}

/* "futex 0x7000", "read file 8:1 iowait"; on a GPU fd (gw not NULL)
 * "poll /dev/nvidia0", or "ioctl gpu 195:0" when the path is unknown. */
static void block_reason(const struct tt_critpath *cp, const struct cp_rec *rec,
			 const struct gpu_wait *gw, char *buf, size_t len)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	const char *name = syscall_name(b->syscall), *base;
	__u32 type = fd_type(rec, b);
	char sys[24], fd[24] = "";

	if (rec->flags & REC_F_PRETRACE) {
		snprintf(buf, len, "blocked before trace");
		return;
	}
	if (name)
		snprintf(sys, sizeof(sys), "%s", name);
	else if (b->syscall < 0)
		snprintf(sys, sizeof(sys), "%s",
			 rec->flags & REC_F_IOWAIT ? "fault" : "kernel");
	else
		snprintf(sys, sizeof(sys), "sys_%d", b->syscall);
	if (gw && gw->dev && gw->dev->path[0]) {
		/* the whole path if it fits, else its last part */
		base = strrchr(gw->dev->path, '/');
		if (strlen(sys) + 1 + strlen(gw->dev->path) < len || !base)
			label(buf, len, sys, gw->dev->path);
		else
			label(buf, len, sys, base + 1);
		return;
	}
	if (rec->flags & REC_F_ANON)
		type = 0;
	switch (type) {
	case S_IFCHR:
		snprintf(fd, sizeof(fd), " %s %u:%u", gw ? "gpu" : "chr",
			 b->fd_rdev >> 20, b->fd_rdev & 0xfffff);
		break;
	case S_IFREG:
		snprintf(fd, sizeof(fd), " file %u:%u", b->fd_dev >> 20,
			 b->fd_dev & 0xfffff);
		break;
	case S_IFBLK:
		snprintf(fd, sizeof(fd), " blk %u:%u", b->fd_rdev >> 20,
			 b->fd_rdev & 0xfffff);
		break;
	case S_IFSOCK:
		snprintf(fd, sizeof(fd), " socket");
		break;
	case S_IFIFO:
		snprintf(fd, sizeof(fd), " %spipe", gw ? "gpu " : "");
		break;
	default:
		if (gw)
			snprintf(fd, sizeof(fd), " gpu");
		else if (rec->flags & REC_F_ANON)
			snprintf(fd, sizeof(fd), " anon");
		else if (b->syscall == TT_NR_futex)
			snprintf(fd, sizeof(fd), " %#llx",
				 (unsigned long long)b->arg0);
		break;
	}
	snprintf(buf, len, "%s%s%s", sys, fd,
		 rec->flags & REC_F_IOWAIT ? " iowait" : "");
}

/* The stage and reason of blocked record rec of th, when not followed. */
static enum tt_stage block_judge(const struct tt_critpath *cp,
				 const struct cp_thread *th,
				 const struct cp_rec *rec, char *buf,
				 size_t len)
{
	struct gpu_wait gw;
	char name[40];

	if (!gpu_wait_of(cp, th, rec, &gw)) {
		block_reason(cp, rec, NULL, buf, len);
		return block_stage(cp, rec);
	}
	if (gw.sync) {
		cuda_fn_name(gw.sync->fn, name, sizeof(name));
		label(buf, len, "sync", name);
	} else if (gw.ioc) {
		ioctl_name(cp, gw.ioc, name, sizeof(name));
		label(buf, len, "ioctl", name);
	} else {
		block_reason(cp, rec, &gw, buf, len);
	}
	return TT_ST_GPU;
}

/* ---- preparation for walks ---- */

/* A lock (a GIL, a mutex) rather than a hand-off (DESIGN §4): waited on
 * many times per request, or passed back and forth between threads. */
static bool word_lock(const struct cp_word *fw, __u64 limit)
{
	bool shared = false;
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			if (fw->waiter[i] && fw->waiter[i] == fw->waker[j])
				shared = true;
	return fw->waits > limit || (shared && fw->waits >= LOCK_SHARED_WAITS);
}

static bool word_is_lock(const struct tt_critpath *cp, __u64 word, __u32 tgid,
			 __u64 limit)
{
	const struct tt_hmap_ent *ent = tt_hmap_find(&cp->futex_words, word, tgid);

	return ent && word_lock(&cp->words[ent->val], limit);
}

static __u32 tgid_of(const struct tt_critpath *cp, __u32 tid)
{
	const struct cp_thread *th = thread_find(cp, tid);

	return th ? th->tgid : 0;
}

static int cmp_window(const void *a, const void *b)
{
	const struct cp_window *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Judges futex words for n requests, filters hand-off candidates, merges
 * the lost windows. */
static int prepare(struct tt_critpath *cp, size_t nreq)
{
	__u64 limit = (__u64)LOCK_WAITS_PER_REQ * (nreq ? nreq : 1);
	struct cp_window *m;
	size_t i, j;

	if (cp->prepared && cp->prep_nreq == nreq &&
	    cp->prep_events == cp->events)
		return 0;
	cp->lock_words = 0;
	for (i = 0; i < cp->nwords; i++)
		if (word_lock(&cp->words[i], limit))
			cp->lock_words++;
	for (i = 0; i < cp->nwakes; i++) {
		struct cp_wake *w = &cp->wakes[i];
		const struct cp_block *b =
			w->block != NONE32 ? &cp->blocks[w->block] : NULL;

		w->lock = (w->syscall == TT_NR_futex &&
			   word_is_lock(cp, w->arg0, tgid_of(cp, w->waker_tid),
					limit)) ||
			  (b && b->syscall == TT_NR_futex &&
			   word_is_lock(cp, b->arg0, tgid_of(cp, w->target_tid),
					limit));
	}
	free(cp->gpu_threads);
	cp->ngpu_threads = 0;
	cp->gpu_threads = malloc((cp->nthreads ? cp->nthreads : 1) *
				 sizeof(*cp->gpu_threads));
	if (!cp->gpu_threads)
		return -ENOMEM;
	for (i = 0; i < cp->nthreads; i++) {
		struct cp_thread *th = cp->threads[i];

		if (th->nsync)
			cp->gpu_threads[cp->ngpu_threads++] = i;
		free(th->cand);
		th->cand = NULL;
		th->ncand = 0;
		if (!th->nwout)
			continue;
		th->cand = malloc(th->nwout * sizeof(*th->cand));
		if (!th->cand)
			return -ENOMEM;
		for (j = 0; j < th->nwout; j++)
			if (!cp->wakes[th->wout[j]].lock)
				th->cand[th->ncand++] = th->wout[j];
	}
	m = malloc((cp->nlost ? cp->nlost : 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (cp->nlost)
		memcpy(m, cp->lost, cp->nlost * sizeof(*m));
	qsort(m, cp->nlost, sizeof(*m), cmp_window);
	for (i = 0, j = 0; i < cp->nlost; i++) {
		if (j && m[i].start <= m[j - 1].end) {
			if (m[i].end > m[j - 1].end)
				m[j - 1].end = m[i].end;
		} else {
			m[j++] = m[i];
		}
	}
	free(cp->lost_merged);
	cp->lost_merged = m;
	cp->nlost_merged = j;
	cp->prep_nreq = nreq;
	cp->prep_events = cp->events;
	cp->prepared = true;
	return 0;
}

/* Index of the last merged lost window starting before t, or -1. */
static long lost_before(const struct tt_critpath *cp, __u64 t)
{
	size_t lo = 0, hi = cp->nlost_merged, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp->lost_merged[mid].start < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* ---- request threads: who serves which request, when ---- */

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
};

struct rq_index {
	struct rq_ent *e;
	size_t n;
	struct rq_act *act; /* sorted by tid, then t */
	size_t nact;
};

static int cmp_rq_ent(const void *a, const void *b)
{
	const struct rq_ent *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->req < y->req ? -1 : x->req > y->req;
}

static int cmp_rq_act(const void *a, const void *b)
{
	const struct rq_act *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->req < y->req ? -1 : x->req > y->req;
}

static void rq_index_free(struct rq_index *ix)
{
	free(ix->e);
	free(ix->act);
	memset(ix, 0, sizeof(*ix));
}

static int rq_index_build(struct rq_index *ix, const struct tt_cp_request *rqs,
			  size_t n)
{
	size_t i, k = 0;

	ix->e = malloc((n ? n : 1) * 2 * sizeof(*ix->e));
	ix->act = malloc((n ? n : 1) * 2 * sizeof(*ix->act));
	if (!ix->e || !ix->act)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct tt_cp_request *rq = &rqs[i];
		__u64 start = rq->t_arrive ? rq->t_arrive : rq->t_read;
		__u64 end = rq->t_end ? rq->t_end : UINT64_MAX;

		if (rq->reader_tid && rq->t_read)
			ix->act[ix->nact++] = (struct rq_act){
				.tid = rq->reader_tid, .req = i, .t = rq->t_read
			};
		if (rq->writer_tid && rq->t_first_write)
			ix->act[ix->nact++] = (struct rq_act){
				.tid = rq->writer_tid,
				.req = i,
				.t = rq->t_first_write
			};

		if (rq->reader_tid)
			ix->e[k++] = (struct rq_ent){ .tid = rq->reader_tid,
						      .req = i,
						      .start = start,
						      .end = end };
		if (rq->writer_tid && rq->writer_tid != rq->reader_tid)
			ix->e[k++] = (struct rq_ent){ .tid = rq->writer_tid,
						      .req = i,
						      .start = start,
						      .end = end };
	}
	qsort(ix->e, k, sizeof(*ix->e), cmp_rq_ent);
	qsort(ix->act, ix->nact, sizeof(*ix->act), cmp_rq_act);
	for (i = 0; i < k; i++) {
		struct rq_ent *e = &ix->e[i], *p = i ? &ix->e[i - 1] : NULL;

		if (!p || p->tid != e->tid) {
			e->end1 = e->end;
			e->req1 = e->req;
			e->end2 = 0;
		} else if (e->end >= p->end1) {
			e->end1 = e->end;
			e->req1 = e->req;
			e->end2 = p->end1;
		} else {
			e->end1 = p->end1;
			e->req1 = p->req1;
			e->end2 = e->end > p->end2 ? e->end : p->end2;
		}
	}
	ix->n = k;
	return 0;
}

/* First entry whose tid is >= tid, or > tid when above. */
static size_t rq_bound(const struct rq_index *ix, __u32 tid, bool above)
{
	size_t a = 0, b = ix->n, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (ix->e[mid].tid < tid || (above && ix->e[mid].tid == tid))
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* The entries of tid: [*lo, *hi). */
static void rq_range(const struct rq_index *ix, __u32 tid, size_t *lo,
		     size_t *hi)
{
	*lo = rq_bound(ix, tid, false);
	*hi = rq_bound(ix, tid, true);
}

/* tid serves a request other than req that is alive at ts. */
static bool rq_other_alive(const struct rq_index *ix, __u32 tid, __u64 ts,
			   __u32 req)
{
	size_t lo, hi, a, b, mid;
	const struct rq_ent *e;

	rq_range(ix, tid, &lo, &hi);
	a = lo;
	b = hi;
	while (a < b) {
		mid = a + (b - a) / 2;
		if (ix->e[mid].start <= ts)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == lo)
		return false;
	e = &ix->e[a - 1];
	return e->req1 != req ? e->end1 >= ts : e->end2 >= ts;
}

/* tid's first read or first write of a request other than req after t, or
 * UINT64_MAX. */
static __u64 rq_next_act(const struct rq_index *ix, __u32 tid, __u64 t,
			 __u32 req)
{
	size_t a = 0, b = ix->nact, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (ix->act[mid].tid < tid ||
		    (ix->act[mid].tid == tid && ix->act[mid].t <= t))
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < ix->nact && ix->act[a].tid == tid; a++)
		if (ix->act[a].req != req)
			return ix->act[a].t;
	return UINT64_MAX;
}

/* tid serves request req and no other. */
static bool rq_only(const struct rq_index *ix, __u32 tid, __u32 req)
{
	size_t lo, hi, i;

	rq_range(ix, tid, &lo, &hi);
	for (i = lo; i < hi; i++)
		if (ix->e[i].req != req)
			return false;
	return hi > lo;
}

/* ---- the walk ---- */

struct walk {
	struct tt_critpath *cp;
	const struct rq_index *ix;
	const struct tt_cp_request *rq;
	__u32 ri;
	__u64 a, r, f, w; /* t_arrive, t_read, t_first_write, t_wire clamped */
	struct segvec path; /* walk segments, latest first */
	__u32 incomplete;
	__u64 nodata_end; /* the path has no data before it */
	__u64 t_enqueue; /* pick-up and hand-off: the queue starts here */
	/* consumers whose burst with this request's own hand-off was passed */
	__u32 *passed;
	size_t npassed, cappassed;
	int err;
};

/* What the walk knows of the consumer it is on (the thread it jumped to). */
struct consumer {
	bool entered; /* false on the writer, before any jump */
	bool has_tb;
	__u64 tb; /* the last wake of the previous hand-off burst */
	__u64 own_low; /* earliest wake of the own burst skipped, 0 if none */
};

static bool seg_same(const struct tt_cp_segment *s, __u32 tid, __u8 state,
		     __u8 stage, const char *reason)
{
	return s->tid == tid && s->state == state && s->stage == stage &&
	       !strncmp(s->reason, reason, sizeof(s->reason));
}

/* Appends [start, end) at the front (desc) or back (asc) of the time
 * order of v, merged with its neighbour when alike. */
static int seg_add(struct segvec *v, bool desc, __u64 start, __u64 end,
		   __u32 tid, __u8 state, __u8 stage, const char *reason)
{
	struct tt_cp_segment *last = v->n ? &v->v[v->n - 1] : NULL;
	struct tt_cp_segment *s;

	if (end <= start)
		return 0;
	if (last && seg_same(last, tid, state, stage, reason)) {
		if (desc && last->start == end) {
			last->start = start;
			last->dur += end - start;
			return 0;
		}
		if (!desc && last->start + last->dur == start) {
			last->dur += end - start;
			return 0;
		}
	}
	if (tt_grow((void **)&v->v, &v->cap, v->n + 1, sizeof(*v->v)))
		return -ENOMEM;
	s = &v->v[v->n++];
	memset(s, 0, sizeof(*s));
	s->start = start;
	s->dur = end - start;
	s->tid = tid;
	s->state = state;
	s->stage = stage;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	return 0;
}

/* Charges [start, end) of the path, latest first; what lost windows cover
 * is other.unknown. */
static void charge(struct walk *wk, __u64 start, __u64 end, __u32 tid,
		   __u8 state, __u8 stage, const char *reason)
{
	const struct tt_critpath *cp = wk->cp;
	__u64 cur = end, ws, we;
	long j;

	if (wk->err || end <= start)
		return;
	for (j = lost_before(cp, end);
	     j >= 0 && cp->lost_merged[j].end > start && !wk->err; j--) {
		ws = cp->lost_merged[j].start > start ?
			     cp->lost_merged[j].start :
			     start;
		we = cp->lost_merged[j].end < cur ? cp->lost_merged[j].end :
						    cur;
		wk->err = seg_add(&wk->path, true, we, cur, tid, state, stage,
				  reason);
		if (!wk->err)
			wk->err = seg_add(&wk->path, true, ws, we, tid,
					  TT_CP_NODATA, TT_ST_UNKNOWN,
					  "lost events");
		wk->incomplete |= TT_CP_INC_LOST;
		cur = ws;
	}
	if (!wk->err)
		wk->err = seg_add(&wk->path, true, start, cur, tid, state,
				  stage, reason);
}

/* On-CPU time [s, t) of th outside CUDA calls, latest first: inside a GPU
 * ioctl it is the driver's work, named by the ioctl. */
static void charge_plain(struct walk *wk, const struct cp_thread *th, __u64 s,
			 __u64 t)
{
	char name[40], reason[32];
	size_t i = ioctls_before(th, t);
	__u64 a, b;

	for (; i > 0 && th->ioctls[i - 1].end > s && !wk->err; i--) {
		const struct cp_ioctl *io = &th->ioctls[i - 1];

		a = io->start > s ? io->start : s;
		b = io->end < t ? io->end : t;
		charge(wk, b, t, th->tid, TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
		ioctl_name(wk->cp, io, name, sizeof(name));
		label(reason, sizeof(reason), "ioctl", name);
		charge(wk, a, b, th->tid, TT_CP_RUNNING, TT_ST_CPU, reason);
		t = a;
	}
	charge(wk, s, t, th->tid, TT_CP_RUNNING, TT_ST_CPU, "on-cpu");
}

/*
 * The launches of th that end after s and come right before index i
 * (exclusive), each less than LAUNCH_GAP_NS before the next, with no other
 * call or ioctl between them: how many.
 */
static size_t launch_run(const struct cp_thread *th, size_t i, __u64 s)
{
	const struct cp_call *c, *next;
	size_t j = i;

	while (j > 0) {
		c = &th->calls[j - 1];
		next = j < i ? &th->calls[j] : NULL;
		if (!is_launch(c) || c->end <= s ||
		    (next && (next->start - c->end >= LAUNCH_GAP_NS ||
			      ioctls_before(th, next->start) !=
				      ioctls_before(th, c->end))))
			break;
		j--;
	}
	return i - j;
}

/*
 * On-CPU time [s, t) of th, latest first: inside a sync call it waits for
 * the GPU (spin-wait), inside a launch it is launch overhead. A run of
 * LAUNCH_RUN back-to-back launches or more (an eager framework's forward
 * pass) is one CPU segment "launch xN fn", the time between them included:
 * a path of thousands of alternating pieces says less and costs more.
 */
static void charge_running(struct walk *wk, const struct cp_thread *th, __u64 s,
			   __u64 t)
{
	char name[40], what[32], reason[32];
	size_t i = calls_before(th, t), m;
	__u64 a, b;

	while (i > 0 && th->calls[i - 1].end > s && !wk->err) {
		const struct cp_call *c = &th->calls[i - 1];

		if (c->cls != TT_CUDA_SYNC && !is_launch(c)) {
			i--;
			continue;
		}
		m = is_launch(c) ? launch_run(th, i, s) : 1;
		if (m < LAUNCH_RUN)
			m = 1;
		a = th->calls[i - m].start > s ? th->calls[i - m].start : s;
		b = c->end < t ? c->end : t;
		charge_plain(wk, th, b, t);
		cuda_fn_name(c->fn, name, sizeof(name));
		if (m > 1)
			snprintf(what, sizeof(what), "launch x%zu", m);
		else
			snprintf(what, sizeof(what), "%s",
				 c->cls == TT_CUDA_SYNC ? "sync" : "launch");
		label(reason, sizeof(reason), what, name);
		charge(wk, a, b, th->tid, TT_CP_RUNNING,
		       c->cls == TT_CUDA_SYNC ? TT_ST_GPU : TT_ST_CPU, reason);
		t = a;
		i -= m;
	}
	charge_plain(wk, th, s, t);
}

/*
 * The waker the walk moves to when it reaches the start of runnable
 * record k, or NULL: wakes by a traced thread in process context, and in
 * softirq by a traced current when the wait was one a loopback send ends.
 */
static struct cp_thread *wake_followed(const struct tt_critpath *cp,
				       const struct cp_thread *th, long k)
{
	const struct cp_rec *rec = &th->recs[k];
	const struct cp_wake *w;
	struct gpu_wait gw;

	if (rec->state != REC_RUNNABLE || rec->info == NONE32)
		return NULL;
	w = &cp->wakes[rec->info];
	if (w->waker_tid == th->tid || w->ctx == CTX_HARDIRQ)
		return NULL;
	/* whoever ends a wait for the GPU, the time is the GPU's */
	if (k > 0 && th->recs[k - 1].state == REC_BLOCKED &&
	    gpu_wait_of(cp, th, &th->recs[k - 1], &gw))
		return NULL;
	if (w->ctx == CTX_SOFTIRQ &&
	    !(k > 0 && th->recs[k - 1].state == REC_BLOCKED &&
	      block_is_net(cp, &th->recs[k - 1])))
		return NULL;
	return thread_find(cp, w->waker_tid);
}

/* This request's reader or writer. */
static bool rq_thread(const struct walk *wk, __u32 tid)
{
	return tid == wk->rq->reader_tid || tid == wk->rq->writer_tid;
}

/* This request's reader, writer or the thread the walk came from. */
static bool own_target(const struct walk *wk, __u32 tid, __u32 from)
{
	return rq_thread(wk, tid) || (from && tid == from);
}

/* c blocked in (t_old, t_new]. */
static bool blocked_in(const struct cp_thread *c, __u64 t_old, __u64 t_new)
{
	long k;

	for (k = rec_before(c, t_new); k >= 0; k--) {
		if (c->recs[k].state == REC_BLOCKED && c->recs[k].ts > t_old)
			return true;
		if (c->recs[k].ts <= t_old)
			break;
	}
	return false;
}

/* c blocked or ran more than BURST_GAP_NS in [t_old, t_new]. */
static bool burst_break(const struct cp_thread *c, __u64 t_old, __u64 t_new)
{
	__u64 run = 0, hi = t_new, lo;
	long k;

	for (k = rec_before(c, t_new); k >= 0; k--) {
		lo = c->recs[k].ts > t_old ? c->recs[k].ts : t_old;
		if (c->recs[k].state == REC_BLOCKED)
			return true;
		if (c->recs[k].state == REC_RUNNING) {
			run += hi - lo;
			if (run > BURST_GAP_NS)
				return true;
		}
		if (c->recs[k].ts <= t_old)
			break;
		hi = lo;
	}
	return false;
}

/*
 * c's wake w and its later wake of the same target are one hand-off: a
 * condition variable signalled under its mutex wakes the target, which
 * then blocks on the mutex c still holds, and c's unlock wakes it again,
 * through another word, c running all the while.
 */
static bool double_wake(const struct cp_thread *c, const struct cp_wake *w,
			const struct cp_wake *later)
{
	return w->target_tid == later->target_tid && w->syscall == TT_NR_futex &&
	       later->syscall == TT_NR_futex && w->arg0 != later->arg0 &&
	       later->ts - w->ts <= DOUBLE_WAKE_NS &&
	       !blocked_in(c, w->ts, later->ts);
}

static bool own_passed(const struct walk *wk, __u32 tid)
{
	size_t i;

	for (i = 0; i < wk->npassed; i++)
		if (wk->passed[i] == tid)
			return true;
	return false;
}

/* A burst of c's hand-offs being grouped by scan_consumer(). */
struct burst {
	bool open;
	bool own; /* carries this request's own hand-off */
	bool other; /* carries a hand-off to another request ... */
	__u64 other_ts; /* ... the latest at this time */
	const struct cp_wake *low; /* its earliest wake so far */
};

/*
 * Judges a burst scan_consumer() closed: true when its hand-off to another
 * request is the boundary. The first own burst back is skipped (may_skip
 * cleared); one that only wakes this request's own threads is never a
 * boundary.
 */
static bool burst_close(struct burst *b, bool *may_skip, struct consumer *cs)
{
	b->open = false;
	if (*may_skip && b->own) {
		cs->own_low = b->low->ts;
		*may_skip = false;
		return false;
	}
	if (!b->other)
		return false;
	cs->has_tb = true;
	cs->tb = b->other_ts;
	return true;
}

/*
 * Consumer c was entered at tj through a wake of thread from (0 when that
 * wake was through a lock). Its hand-offs before tj are its wakes of
 * threads serving other live requests, of from, and of this request's
 * reader and writer, grouped in bursts (a double wake is one). The first
 * burst back is skipped when it carries this request's own hand-off (the
 * wake of from, or one of this request's threads when c's own burst is
 * still ahead); the latest wake to another request in the next burst that
 * has one is the boundary tb. A wake of this request's own thread that
 * serves no other live request is never a boundary: with one request in
 * flight, a consumer that wakes its writer twice has handed nothing else
 * off.
 */
static void scan_consumer(struct walk *wk, const struct cp_thread *c, __u64 tj,
			  __u64 floor, __u32 from, struct consumer *cs)
{
	const struct tt_critpath *cp = wk->cp;
	bool may_skip = from || !own_passed(wk, c->tid), alive, mine;
	struct burst b = { 0 };
	size_t lo = 0, hi = c->ncand, mid;
	long i;

	cs->has_tb = false;
	cs->own_low = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp->wakes[c->cand[mid]].ts <= tj)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (long)lo - 1; i >= 0; i--) {
		const struct cp_wake *w = &cp->wakes[c->cand[i]];

		if (w->ts < floor)
			break;
		if (w->target_tid == c->tid)
			continue;
		alive = rq_other_alive(wk->ix, w->target_tid, w->ts, wk->ri);
		mine = own_target(wk, w->target_tid, from);
		if (!alive && !mine)
			continue;
		if (b.open && !double_wake(c, w, b.low) &&
		    burst_break(c, w->ts, b.low->ts) &&
		    burst_close(&b, &may_skip, cs))
			return;
		if (!b.open)
			b = (struct burst){ .open = true };
		if (mine)
			b.own = true;
		/* from serving no request here may hand off others' work */
		if (!b.other && (alive || !rq_thread(wk, w->target_tid))) {
			b.other = true;
			b.other_ts = w->ts;
		}
		b.low = w;
	}
	if (b.open)
		burst_close(&b, &may_skip, cs);
}

/*
 * Where the reader let the request go, for a queue that a busy consumer's
 * boundary tb ends: its first wake of another thread (not through a lock),
 * its first block, or its next read or first write of another request
 * after t_read, whichever comes first; tb when none comes before. The
 * enqueue makes no wakeup when the consumer is busy: the end of the
 * reader's own work on the request is the best evidence of it.
 */
static __u64 handoff_point(const struct walk *wk, __u64 tb)
{
	const struct cp_thread *th = thread_find(wk->cp, wk->rq->reader_tid);
	__u64 t = tb, next;
	size_t a = 0, b, mid;
	long k;

	if (!th)
		return wk->r;
	k = rec_before(th, wk->r + 1);
	for (k = k < 0 ? 0 : k; (size_t)k < th->nrecs && th->recs[k].ts < t;
	     k++) {
		if (th->recs[k].state == REC_BLOCKED) {
			t = th->recs[k].ts > wk->r ? th->recs[k].ts : wk->r;
			break;
		}
	}
	b = th->ncand;
	while (a < b) {
		mid = a + (b - a) / 2;
		if (wk->cp->wakes[th->cand[mid]].ts < wk->r)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < th->ncand && wk->cp->wakes[th->cand[a]].ts < t; a++) {
		if (wk->cp->wakes[th->cand[a]].target_tid != th->tid) {
			t = wk->cp->wakes[th->cand[a]].ts;
			break;
		}
	}
	next = rq_next_act(wk->ix, th->tid, wk->r, wk->ri);
	return next < t ? next : t;
}

/*
 * Walks back from (writer, t_first_write) to t_read, charging the path;
 * returns t_dispatch and sets *rule. Once the dispatch is found, the walk
 * goes on down to t_read without looking for another: with a pick-up on
 * the producer that woke the consumer, with a hand-off boundary on the
 * reader from where it let the request go, the time between being queued.
 */
static __u64 walk_path(struct walk *wk, __u8 *rule)
{
	struct tt_critpath *cp = wk->cp;
	const struct tt_cp_request *rq = wk->rq;
	struct cp_thread *th = thread_find(cp, rq->writer_tid), *waker;
	const struct cp_wake *w;
	struct consumer cs = { 0 };
	__u64 t = wk->f, floor = wk->r, s, disp = floor;
	const struct cp_rec *rec;
	char reason[32];
	bool boundary, dispatched = false;
	__u32 tid = rq->writer_tid, from;
	long k = th ? rec_before(th, t) : -1;
	__u8 stage;

	*rule = TT_CP_DISP_READ;
	while (t > floor && !wk->err) {
		if (!th || k < 0) {
			charge(wk, floor, t, tid, TT_CP_NODATA, TT_ST_UNKNOWN,
			       "no data");
			wk->incomplete |= TT_CP_INC_NO_DATA;
			wk->nodata_end = t;
			break;
		}
		rec = &th->recs[k];
		s = rec->ts > floor ? rec->ts : floor;
		boundary = !dispatched && cs.entered && cs.has_tb &&
			   cs.tb >= s && cs.tb <= t;
		if (boundary)
			s = cs.tb;
		switch (rec->state) {
		case REC_RUNNING:
			charge_running(wk, th, s, t);
			break;
		case REC_RUNNABLE:
			charge(wk, s, t, tid, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			       "runqueue");
			break;
		default:
			stage = block_judge(cp, th, rec, reason,
					    sizeof(reason));
			charge(wk, s, t, tid, TT_CP_BLOCKED, stage, reason);
			break;
		}
		t = s;
		if (boundary) {
			*rule = TT_CP_DISP_HANDOFF;
			disp = t;
			dispatched = true;
			s = handoff_point(wk, t);
			wk->t_enqueue = s;
			if (!wk->err)
				wk->err = seg_add(&wk->path, true, s, t, 0,
						  TT_CP_PHASE, TT_ST_QUEUE,
						  "queued");
			t = s;
			tid = rq->reader_tid;
			th = thread_find(cp, tid);
			k = th ? rec_before(th, t) : -1;
			continue;
		}
		waker = rec->ts >= floor ? wake_followed(cp, th, k) : NULL;
		if (!waker) {
			k--;
			continue;
		}
		/* the wait is the waker's path: move there at the wake */
		w = &cp->wakes[rec->info];
		if (!dispatched && cs.entered && cs.own_low &&
		    t <= cs.own_low && !own_passed(wk, th->tid)) {
			if (tt_grow((void **)&wk->passed, &wk->cappassed,
				 wk->npassed + 1, sizeof(*wk->passed))) {
				wk->err = -ENOMEM;
				break;
			}
			wk->passed[wk->npassed++] = th->tid;
		}
		if (!dispatched && !w->lock &&
		    ((rq->reader_tid && waker->tid == rq->reader_tid) ||
		     rq_only(wk->ix, waker->tid, wk->ri))) {
			*rule = TT_CP_DISP_PICKUP;
			disp = t;
			dispatched = true;
			wk->t_enqueue = t;
		}
		from = w->lock ? 0 : th->tid;
		th = waker;
		tid = th->tid;
		k = rec_before(th, t);
		if (dispatched)
			continue;
		cs.entered = true;
		scan_consumer(wk, th, t, floor, from, &cs);
	}
	return disp;
}

/* Wakes of th, not through a lock, outside its GPU calls, in [lo, hi]:
 * its hand-offs (a wake inside a call is the driver's business). */
static bool handoff_in(const struct tt_critpath *cp, const struct cp_thread *th,
		       __u64 lo, __u64 hi)
{
	size_t a = 0, b = th->ncand, mid;

	while (a < b) {
		mid = a + (b - a) / 2;
		if (cp->wakes[th->cand[mid]].ts < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < th->ncand; a++) {
		const struct cp_wake *w = &cp->wakes[th->cand[a]];

		if (w->ts > hi)
			break;
		if (w->target_tid != th->tid && !call_at(th, w->ts))
			return true;
	}
	return false;
}

/*
 * DESIGN §4's GPU rule on thread th, which handed the token on at ve: the
 * iteration that made it ends with th's last sync call ending in
 * (floor, ve]; it began with the first launch after the sync before it
 * that a hand-off followed (any sync, when th hands nothing off where the
 * walk can see it: a lock-free ring). That sync must end after floor: a
 * request read while the previous iteration still ran waited for the next
 * one. Returns the start of that first launch, or 0.
 */
static __u64 gpu_boundary(const struct tt_critpath *cp,
			  const struct cp_thread *th, __u64 floor, __u64 ve)
{
	const struct cp_call *c;
	long j = (long)calls_before(th, ve) - 1, i, first = -1;
	bool visible;

	for (; j >= 0; j--) {
		c = &th->calls[j];
		if (c->end <= floor)
			return 0;
		if (c->cls == TT_CUDA_SYNC && c->end <= ve)
			break;
	}
	if (j < 0)
		return 0;
	visible = handoff_in(cp, th, floor, ve);
	for (i = j - 1; i >= 0 && th->calls[i].end > floor; i--) {
		c = &th->calls[i];
		if (is_launch(c))
			first = i;
		else if (c->cls == TT_CUDA_SYNC && first >= 0 &&
			 (!visible ||
			  handoff_in(cp, th, c->end, th->calls[first].start)))
			return th->calls[first].start;
	}
	return 0;
}

/* The one thread of process tgid that syncs with the GPU, or NULL. */
static const struct cp_thread *gpu_engine(const struct tt_critpath *cp,
					  __u32 tgid)
{
	const struct cp_thread *found = NULL, *th;
	size_t i;

	for (i = 0; i < cp->ngpu_threads; i++) {
		th = cp->threads[cp->gpu_threads[i]];
		if (th->tgid != tgid)
			continue;
		if (found)
			return NULL;
		found = th;
	}
	return found;
}

/*
 * When neither a pick-up nor a hand-off ended the queue: the GPU rule on
 * the threads of the path, the latest first, else on the writer's
 * process's one GPU thread when the path never reached it (tokens passed
 * through memory: nothing wakes the writer). The path before the boundary
 * is dropped: that time is queueing. Returns t_dispatch.
 */
static __u64 gpu_dispatch(struct walk *wk, __u64 disp, __u8 *rule)
{
	const struct cp_thread *wr = thread_find(wk->cp, wk->rq->writer_tid);
	const struct cp_thread *th;
	struct segvec *p = &wk->path;
	__u64 ve = wk->f, tg = 0;
	bool tried = false;
	size_t i = 0, n;

	while (i < p->n && !tg) {
		th = thread_find(wk->cp, p->v[i].tid);
		if (th && th->nsync) {
			tg = gpu_boundary(wk->cp, th, wk->r, ve);
			tried = true;
		}
		/* the next visit: the thread before this one on the path */
		while (i + 1 < p->n && p->v[i + 1].tid == p->v[i].tid)
			i++;
		ve = p->v[i].start;
		i++;
	}
	th = !tried && wr ? gpu_engine(wk->cp, wr->tgid) : NULL;
	if (th)
		tg = gpu_boundary(wk->cp, th, wk->r, wk->f);
	if (!tg || tg <= disp || tg >= wk->f)
		return disp;
	for (n = p->n; n && p->v[n - 1].start + p->v[n - 1].dur <= tg; n--)
		;
	if (n && p->v[n - 1].start < tg) {
		p->v[n - 1].dur -= tg - p->v[n - 1].start;
		p->v[n - 1].start = tg;
	}
	p->n = n;
	if (tg >= wk->nodata_end)
		wk->incomplete &= ~TT_CP_INC_NO_DATA;
	*rule = TT_CP_DISP_GPU;
	return tg;
}

/* Latest wake of the writer the walk would follow, not through a lock, in
 * [from, to]; to when there is none (the writer made the token itself). */
static __u64 find_token(const struct tt_critpath *cp, __u32 writer, __u64 from,
			__u64 to)
{
	const struct cp_thread *th = thread_find(cp, writer);
	long k;

	if (!th)
		return to;
	for (k = rec_before(th, to + 1); k >= 0 && th->recs[k].ts >= from;
	     k--) {
		if (wake_followed(cp, th, k) &&
		    !cp->wakes[th->recs[k].info].lock)
			return th->recs[k].ts;
	}
	return to;
}

static __u64 clamp(__u64 x, __u64 lo, __u64 hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* More runnable slices than this in one reader phase are shown as one
 * segment: an event loop serving N connections is preempted O(N) times
 * while a request waits, and N requests would keep O(N^2) segments. */
#define READER_SLICES_MAX 32

/*
 * [t_arrive, t_read): network.in, less the reader's runnable time after the
 * last bytes came: before them it waited for the upload anyway.
 */
static int reader_phase(const struct walk *wk, struct segvec *out)
{
	const struct cp_thread *th = thread_find(wk->cp, wk->rq->reader_tid);
	__u32 tid = wk->rq->reader_tid;
	__u64 t = wk->a, s, e, last, runnable = 0;
	long k, first = 0;
	size_t slices = 0;
	char why[48];
	int err = 0;

	last = clamp(wk->rq->t_last_arrive ? wk->rq->t_last_arrive : wk->a,
		     wk->a, wk->r);
	if (th) {
		first = rec_before(th, last + 1);
		if (first < 0)
			first = 0;
		for (k = first; (size_t)k < th->nrecs && th->recs[k].ts < wk->r;
		     k++) {
			if (th->recs[k].state != REC_RUNNABLE)
				continue;
			s = th->recs[k].ts > last ? th->recs[k].ts : last;
			e = (size_t)k + 1 < th->nrecs ? th->recs[k + 1].ts :
							wk->r;
			if (e > wk->r)
				e = wk->r;
			if (e > s) {
				slices++;
				runnable += e - s;
			}
		}
	}
	if (slices > READER_SLICES_MAX) {
		/* the sums stay exact; the runnable time is drawn at the end */
		snprintf(why, sizeof(why), "runqueue (%zu slices)", slices);
		err = seg_add(out, false, t, wk->r - runnable, tid, TT_CP_PHASE,
			      TT_ST_NET_IN, "request in");
		if (!err)
			err = seg_add(out, false, wk->r - runnable, wk->r, tid,
				      TT_CP_RUNNABLE, TT_ST_RUNQUEUE, why);
		return err;
	}
	for (k = first; slices && (size_t)k < th->nrecs &&
			th->recs[k].ts < wk->r && !err;
	     k++) {
		if (th->recs[k].state != REC_RUNNABLE)
			continue;
		s = th->recs[k].ts > last ? th->recs[k].ts : last;
		e = (size_t)k + 1 < th->nrecs ? th->recs[k + 1].ts : wk->r;
		if (e > wk->r)
			e = wk->r;
		if (e <= s)
			continue;
		err = seg_add(out, false, t, s, tid, TT_CP_PHASE, TT_ST_NET_IN,
			      "request in");
		if (!err)
			err = seg_add(out, false, s, e, tid, TT_CP_RUNNABLE,
				      TT_ST_RUNQUEUE, "runqueue");
		t = e;
	}
	if (!err)
		err = seg_add(out, false, t, wk->r, tid, TT_CP_PHASE,
			      TT_ST_NET_IN, "request in");
	return err;
}

static int walk_one(struct tt_critpath *cp, const struct rq_index *ix,
		    const struct tt_cp_request *rqs, size_t ri,
		    struct tt_cp_result *out)
{
	const struct tt_cp_request *rq = &rqs[ri];
	struct walk wk = { .cp = cp, .ix = ix, .rq = rq, .ri = ri };
	struct segvec segs = cp->walk_segs;
	__u64 disp, j;
	__u8 rule;
	size_t i;
	long l;
	int err;

	memset(out, 0, sizeof(*out));
	if (!rq->t_arrive || !rq->t_wire || !rq->t_first_write ||
	    !rq->writer_tid || rq->t_wire < rq->t_arrive) {
		out->incomplete = TT_CP_INC_NOT_WALKED;
		return 0;
	}
	wk.path = cp->walk_path;
	wk.path.n = segs.n = 0;
	wk.a = rq->t_arrive;
	wk.w = rq->t_wire;
	if (!rq->t_read)
		wk.incomplete |= TT_CP_INC_NO_READ;
	wk.r = clamp(rq->t_read ? rq->t_read : wk.a, wk.a, wk.w);
	wk.f = clamp(rq->t_first_write, wk.r, wk.w);
	l = lost_before(cp, wk.w + 1);
	if (l >= 0 && cp->lost_merged[l].end >= wk.a)
		wk.incomplete |= TT_CP_INC_LOST;

	disp = walk_path(&wk, &rule);
	if (!wk.err && rule == TT_CP_DISP_READ)
		disp = gpu_dispatch(&wk, disp, &rule);
	err = wk.err;
	if (!err)
		err = reader_phase(&wk, &segs);
	/* with a pick-up or a hand-off the path holds its queue */
	if (!err && (rule == TT_CP_DISP_READ || rule == TT_CP_DISP_GPU)) {
		wk.t_enqueue = wk.r;
		err = seg_add(&segs, false, wk.r, disp, 0, TT_CP_PHASE,
			      TT_ST_QUEUE, "queued");
	}
	for (i = wk.path.n; i-- > 0 && !err;) {
		const struct tt_cp_segment *s = &wk.path.v[i];

		err = seg_add(&segs, false, s->start, s->start + s->dur, s->tid,
			      s->state, s->stage, s->reason);
	}
	if (!err)
		err = seg_add(&segs, false, wk.f, wk.w, rq->writer_tid,
			      TT_CP_PHASE, TT_ST_NET_OUT, "response out");
	cp->walk_path = wk.path;
	cp->walk_segs = segs;
	free(wk.passed);
	if (err)
		return err;
	for (i = 0, j = wk.a; i < segs.n; i++) {
		out->stage_ns[segs.v[i].stage] += segs.v[i].dur;
		j += segs.v[i].dur;
	}
	if (!cp->drop_segments && segs.n) {
		out->segs = malloc(segs.n * sizeof(*segs.v));
		if (!out->segs)
			return -ENOMEM;
		memcpy(out->segs, segs.v, segs.n * sizeof(*segs.v));
		out->nsegs = segs.n;
	}
	out->t_enqueue = wk.t_enqueue;
	out->t_dispatch = disp;
	out->t_token =
		clamp(find_token(cp, rq->writer_tid, disp, wk.f), disp, wk.f);
	out->dispatch = rule;
	out->incomplete = wk.incomplete;
	out->complete = !wk.incomplete && j == wk.w;
	return 0;
}

void tt_cp_result_free(struct tt_cp_result *r)
{
	if (!r)
		return;
	free(r->segs);
	r->segs = NULL;
	r->nsegs = 0;
}

int tt_critpath_walk_all(struct tt_critpath *cp,
			 const struct tt_cp_request *rqs, size_t n,
			 struct tt_cp_result *out)
{
	struct rq_index ix = { 0 };
	size_t i;
	int err;

	if (!n)
		return 0;
	memset(out, 0, n * sizeof(*out));
	err = prepare(cp, n);
	if (!err)
		err = rq_index_build(&ix, rqs, n);
	for (i = 0; i < n && !err; i++)
		err = walk_one(cp, &ix, rqs, i, &out[i]);
	rq_index_free(&ix);
	if (err) {
		for (i = 0; i < n; i++)
			tt_cp_result_free(&out[i]);
	}
	return err;
}

int tt_critpath_walk(struct tt_critpath *cp, const struct tt_cp_request *rq,
		     struct tt_cp_result *out)
{
	return tt_critpath_walk_all(cp, rq, 1, out);
}

/* ---- timelines, read-only, for renderers ---- */

size_t tt_critpath_nthreads(const struct tt_critpath *cp)
{
	return cp->nthreads;
}

int tt_critpath_thread(const struct tt_critpath *cp, size_t i, __u32 *tid,
		       __u32 *tgid)
{
	if (i >= cp->nthreads)
		return -ERANGE;
	*tid = cp->threads[i]->tid;
	*tgid = cp->threads[i]->tgid;
	return 0;
}

static void runnable_reason(const struct tt_critpath *cp,
			    const struct cp_rec *rec, struct tt_cp_interval *iv)
{
	const struct cp_wake *w;

	if (rec->info == NONE32) {
		snprintf(iv->reason, sizeof(iv->reason), "%s",
			 rec->flags & REC_F_PREEMPT ? "preempted" : "runnable");
		return;
	}
	w = &cp->wakes[rec->info];
	switch (w->ctx) {
	case CTX_PROCESS:
		iv->waker_tid = w->waker_tid;
		snprintf(iv->reason, sizeof(iv->reason), "woken by %u",
			 w->waker_tid);
		break;
	case CTX_SOFTIRQ:
		snprintf(iv->reason, sizeof(iv->reason), "woken in softirq");
		break;
	default:
		snprintf(iv->reason, sizeof(iv->reason), "woken in hardirq");
		break;
	}
}

int tt_critpath_intervals(const struct tt_critpath *cp, __u32 tid, __u64 until,
			  tt_cp_interval_fn fn, void *ctx)
{
	const struct cp_thread *th = thread_find(cp, tid);
	struct tt_cp_interval iv;
	size_t k, n;
	int ret;

	if (!th)
		return -ENOENT;
	n = th->nrecs;
	/* a thread's last switch-out after its exit is its death, not a wait */
	if (n && th->exit_ts && th->recs[n - 1].state == REC_BLOCKED &&
	    th->recs[n - 1].ts >= th->exit_ts)
		n--;
	for (k = 0; k < n; k++) {
		const struct cp_rec *rec = &th->recs[k];
		bool last = k + 1 == th->nrecs;
		__u64 end = !last		? th->recs[k + 1].ts :
			    until > cp->last_ts ? until :
						  cp->last_ts;

		if (end <= rec->ts)
			continue;
		memset(&iv, 0, sizeof(iv));
		iv.start = rec->ts;
		iv.end = end;
		iv.open_end = last;
		switch (rec->state) {
		case REC_RUNNING:
			iv.state = TT_CP_RUNNING;
			iv.stage = TT_ST_CPU;
			snprintf(iv.reason, sizeof(iv.reason), "on-cpu");
			break;
		case REC_RUNNABLE:
			iv.state = TT_CP_RUNNABLE;
			iv.stage = TT_ST_RUNQUEUE;
			runnable_reason(cp, rec, &iv);
			break;
		default:
			iv.state = TT_CP_BLOCKED;
			iv.stage = block_judge(cp, th, rec, iv.reason,
					       sizeof(iv.reason));
			break;
		}
		ret = fn(&iv, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int tt_critpath_calls(const struct tt_critpath *cp, __u32 tid, __u64 from,
		      __u64 to, tt_cp_call_fn fn, void *ctx)
{
	const struct cp_thread *th = thread_find(cp, tid);
	struct tt_cp_call c;
	size_t i;
	int ret;

	if (!th)
		return -ENOENT;
	/* the first that ends after from: the one before starts before it */
	i = calls_before(th, from);
	if (i && th->calls[i - 1].end > from)
		i--;
	for (; i < th->ncalls && th->calls[i].start < to; i++) {
		const struct cp_call *k = &th->calls[i];

		memset(&c, 0, sizeof(c));
		c.start = k->start;
		c.end = k->end;
		c.kind = TT_CP_CALL_CUDA;
		c.cls = k->cls;
		c.fn = k->fn;
		c.ret = k->ret;
		cuda_fn_name(k->fn, c.name, sizeof(c.name));
		ret = fn(&c, ctx);
		if (ret)
			return ret;
	}
	i = ioctls_before(th, from);
	if (i && th->ioctls[i - 1].end > from)
		i--;
	for (; i < th->nioctls && th->ioctls[i].start < to; i++) {
		const struct cp_ioctl *io = &th->ioctls[i];

		memset(&c, 0, sizeof(c));
		c.start = io->start;
		c.end = io->end;
		c.kind = TT_CP_CALL_IOCTL;
		c.cmd = io->cmd;
		c.ret = io->ret;
		ioctl_name(cp, io, c.name, sizeof(c.name));
		ret = fn(&c, ctx);
		if (ret)
			return ret;
	}
	return 0;
}
