// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Thread timelines: each traced thread's state changes (running,
 * runnable, blocked), its wakes, GPU calls (calls.c), ioctls and file
 * reads, and its name: the one owner of thread names (docs/design.md
 * §4.1).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "waits.h"
#include "gpu.h"
#include "tt_arch.h"

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
		free(cp->threads[i]->fileios);
		free(cp->threads[i]->steals);
		free(cp->threads[i]->takes);
		free(cp->threads[i]->dreads);
		free(cp->threads[i]->preads);
		free(cp->threads[i]->arrs);
		free(cp->threads[i]->freads);
		free(cp->threads[i]->msends);
		free(cp->threads[i]->polls);
		free(cp->threads[i]);
	}
	free(cp->threads);
	tt_hmap_free(&cp->tids);
	tt_hmap_free(&cp->tgids);
	tt_hmap_free(&cp->futex_words);
	free(cp->words);
	free(cp->blocks);
	free(cp->rtranges);
	free(cp->marks);
	free(cp->wakes);
	free(cp->lost);
	free(cp->lost_merged);
	cp_chans_free(cp);
	cp_pipes_free(cp);
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

struct cp_thread *cp_thread_find(const struct tt_critpath *cp, __u32 tid)
{
	struct cp_thread *th = cp->tid_cache[tid % CP_TID_CACHE];
	struct tt_hmap_ent *ent;

	if (th && th->tid == tid)
		return th;
	ent = tt_hmap_find(&cp->tids, tid, 0);
	return ent ? cp->threads[ent->val] : NULL;
}

static bool is_traced(const struct tt_critpath *cp, __u32 tid, __u32 tgid)
{
	if (!tid)
		return false;
	return cp_thread_find(cp, tid) || tt_hmap_find(&cp->tgids, tgid, 0);
}

int tt_critpath_add_tgid(struct tt_critpath *cp, __u32 tgid)
{
	if (!tgid)
		return 0;
	return tt_hmap_insert(&cp->tgids, tgid, 0, 0) ? 0 : -ENOMEM;
}

/* The thread tid, created (and its process marked traced) when new. */
struct cp_thread *cp_thread_ensure(struct tt_critpath *cp, __u32 tid,
				   __u32 tgid)
{
	struct cp_thread *th = cp_thread_find(cp, tid);

	if (th) {
		cp->tid_cache[tid % CP_TID_CACHE] = th;
		return th;
	}
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
	cp->tid_cache[tid % CP_TID_CACHE] = th;
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

/* How many of n intervals, sorted and disjoint, start before t: they are
 * structs of size stride whose first member is their __u64 start. */
size_t cp_starts_before(const void *v, size_t n, size_t stride, __u64 t)
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
		       offsetof(struct cp_ioctl, start) == 0 &&
		       offsetof(struct cp_fileio, start) == 0 &&
		       offsetof(struct cp_rec, ts) == 0 &&
		       offsetof(struct cp_arrival, ts) == 0 &&
		       offsetof(struct cp_dread, ts) == 0 &&
		       offsetof(struct cp_window, start) == 0,
	       "cp_starts_before() reads the time at offset 0");
_Static_assert(offsetof(struct cp_call, end) == sizeof(__u64) &&
		       offsetof(struct cp_ioctl, end) == sizeof(__u64) &&
		       offsetof(struct cp_fileio, end) == sizeof(__u64),
	       "an interval's end follows its start");

/* Largest k with recs[k].ts < t, or -1. */
long cp_rec_before(const struct cp_thread *th, __u64 t)
{
	return (long)cp_starts_before(th->recs, th->nrecs, sizeof(*th->recs),
				      t) -
	       1;
}

/* cp_rec_before(th, t), found from hint, its answer for a time no earlier
 * than t: a few records back from it are stepped through before a search
 * (callers walking back through time ask for nearby times). */
long cp_rec_before_from(const struct cp_thread *th, __u64 t, long hint)
{
	long k = hint < (long)th->nrecs ? hint : (long)th->nrecs - 1;
	int steps;

	if (k + 1 < (long)th->nrecs && th->recs[k + 1].ts < t)
		return cp_rec_before(th, t);
	for (steps = 0; k >= 0 && th->recs[k].ts >= t; k--)
		if (++steps > 8)
			break;
	if (k >= 0 && th->recs[k].ts >= t)
		k = (long)cp_starts_before(th->recs, k, sizeof(*th->recs), t) -
		    1;
	return k;
}

/* ---- feeding ---- */

void *cp_keyed_get(struct tt_hmap *ix, __u64 k1, __u64 k2, void **v, size_t *n,
		   size_t *cap, size_t size)
{
	struct tt_hmap_ent *ent;

	if (tt_grow(v, cap, *n + 1, size))
		return NULL;
	ent = tt_hmap_insert(ix, k1, k2, *n);
	if (!ent)
		return NULL;
	if (ent->val == *n)
		memset((char *)*v + (*n)++ * size, 0, size);
	return (char *)*v + ent->val * size;
}

/* The use of futex word (word, tgid), created when new. */
static struct cp_word *word_get(struct tt_critpath *cp, __u64 word, __u32 tgid)
{
	return cp_keyed_get(&cp->futex_words, word, tgid, (void **)&cp->words,
			    &cp->nwords, &cp->capwords, sizeof(*cp->words));
}

/* Notes tid among a word's first n waiters or wakers; returns its slot,
 * or -1 when all n are others. */
static int word_note(__u32 *tids, int n, __u32 tid)
{
	for (int i = 0; i < n; i++) {
		if (!tids[i] || tids[i] == tid) {
			tids[i] = tid;
			return i;
		}
	}
	return -1;
}

/*
 * th is current at ts (it switches out, or wakes another thread in process
 * context) while its timeline has it off CPU: its switch-in is missing from
 * the recording. sched_switch is not delivered for every switch (a kernel
 * seen here never reports switches away from its own agent's threads, so a
 * traced thread that one of them preempted comes back unseen; perf misses
 * them too), and records can be lost. It ran from ts at the latest: without
 * this it would stay runnable until its next switch-in, and its work and
 * hand-offs in between would look like a wait (docs/design.md §4.1).
 */
static int seen_running(struct tt_critpath *cp, struct cp_thread *th, __u64 ts)
{
	const struct cp_rec *last = th->nrecs ? &th->recs[th->nrecs - 1] : NULL;

	/* an event fed out of time order says nothing of the switch-in */
	if (!last || last->state == REC_RUNNING || ts <= last->ts)
		return 0;
	cp->missed_ins++;
	return rec_push(cp, th, ts, REC_RUNNING, NONE32, 0);
}

/* A futex wake of another word than the one th now blocks on: it ended a
 * wait that never slept (CPython's GIL taken back as its holder let it
 * go), not this one, which its own wake ends later. */
static bool other_word(const struct cp_wake *w, const struct cp_block *b)
{
	return w->syscall == TT_NR_futex && b->syscall == TT_NR_futex &&
	       w->arg0 != b->arg0;
}

/* th waited on futex word: into its ring of the last distinct ones */
static void note_waited_word(struct cp_thread *th, __u64 word)
{
	for (int i = 0; i < CP_THREAD_WORDS; i++)
		if (th->waited_words[i] == word)
			return;
	th->waited_words[th->waited_next++ % CP_THREAD_WORDS] = word;
}

static int switch_out(struct tt_critpath *cp, struct cp_thread *th, __u64 ts,
		      const struct tt_switch *sw)
{
	struct cp_block *b;
	__u32 bidx, pending = th->pending;
	__u8 flags = 0;
	int err;

	th->pending = NONE32;
	err = seen_running(cp, th, ts);
	if (err)
		return err;
	if (sw->prev_state == 0)
		return rec_push(cp, th, ts, REC_RUNNABLE, NONE32,
				REC_F_PREEMPT);
	if (tt_grow((void **)&cp->blocks, &cp->capblocks, cp->nblocks + 1,
		    sizeof(*cp->blocks)))
		return -ENOMEM;
	bidx = cp->nblocks++;
	b = &cp->blocks[bidx];
	*b = (struct cp_block){ .syscall = sw->syscall_nr, .arg0 = sw->arg0,
				.fd_mode = sw->fd_mode, .fd_rdev = sw->fd_rdev,
				.fd_dev = sw->fd_dev, .fd_ino = sw->fd_ino };
	if (sw->sw_flags & TT_SW_IOWAIT)
		flags |= REC_F_IOWAIT;
	if (sw->sw_flags & TT_SW_FD)
		flags |= REC_F_FD;
	if ((sw->sw_flags & (TT_SW_FD | TT_SW_ANON_INODE)) ==
	    (TT_SW_FD | TT_SW_ANON_INODE))
		flags |= REC_F_ANON;
	if (sw->sw_flags & TT_SW_TIMED)
		flags |= REC_F_TIMED;
	if (sw->sw_flags & TT_SW_GO_EXIT)
		flags |= REC_F_EXITED;
	if (sw->syscall_nr == TT_NR_futex) {
		struct cp_word *fw = word_get(cp, sw->arg0, th->tgid);

		if (!fw)
			return -ENOMEM;
		fw->waits++;
		if (word_note(fw->waiter, WORD_WAITERS, th->tid) < 0)
			fw->more_waiters = true;
		fw->last_run = fw->last_waiter == th->tid ? fw->last_run + 1 :
							    1;
		fw->last_waiter = th->tid;
		note_waited_word(th, sw->arg0);
		th->futex_waits++;
	}
	if (sw->syscall_nr == TT_NR_epoll_wait ||
	    sw->syscall_nr == TT_NR_epoll_pwait)
		th->epoll_waits++;
	err = rec_push(cp, th, ts, REC_BLOCKED, bidx, flags);
	if (err || pending == NONE32 || ts - th->pending_ts > WAKE_RACE_NS ||
	    other_word(&cp->wakes[pending], &cp->blocks[bidx]))
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
		th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
		if (!th)
			return -ENOMEM;
		err = switch_out(cp, th, ev->h.ts, sw);
		if (err)
			return err;
	}
	if ((sw->sw_flags & TT_SW_NEXT_TRACED) && sw->next_tid) {
		th = cp_thread_ensure(cp, sw->next_tid, sw->next_tgid);
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

/* Appends ev's wake, by waker when it is a traced thread in process
 * context (its hand-off), as *widx. */
static int wake_add(struct tt_critpath *cp, const struct tt_event *ev,
		    enum wake_ctx ctx, struct cp_thread *waker, __u32 *widx)
{
	const struct tt_wake *w = &ev->wake;
	struct cp_wake *wk;
	__s32 nr;

	if (tt_grow((void **)&cp->wakes, &cp->capwakes, cp->nwakes + 1,
		    sizeof(*cp->wakes)))
		return -ENOMEM;
	*widx = cp->nwakes++;
	wk = &cp->wakes[*widx];
	nr = ctx == CTX_PROCESS ? (w->waker_syscall & ~0x40000000) : -1;
	if (ev->h.flags & TT_F_RUNTIME)
		nr = CP_SYSCALL_SCHED;
	*wk = (struct cp_wake){
		.ts = ev->h.ts,
		.arg0 = ctx == CTX_PROCESS ? w->waker_arg0 : 0,
		.waker_tid = ev->h.tid,
		.target_tid = w->target_tid,
		.block = NONE32,
		.syscall = nr >= CP_SYSCALL_SCHED && nr <= INT16_MAX ? nr : -1,
		.ctx = ctx,
		.spawn = ev->h.type == TT_EV_WAKEUP_NEW,
	};
	if (waker && ctx == CTX_PROCESS) {
		int err = seen_running(cp, waker, ev->h.ts);

		if (err)
			return err;
		if (tt_grow((void **)&waker->wout, &waker->capwout,
			    waker->nwout + 1, sizeof(*waker->wout)))
			return -ENOMEM;
		waker->wout[waker->nwout++] = *widx;
		if (nr == TT_NR_futex) {
			struct cp_word *fw =
				word_get(cp, w->waker_arg0, waker->tgid);

			if (!fw)
				return -ENOMEM;
			word_note(fw->waker, 2, waker->tid);
			wk->solo = fw->last_waiter == wk->target_tid &&
				   fw->last_run >= WORD_SOLO_WAITS &&
				   waker->tid != wk->target_tid;
		}
	}
	return 0;
}

static int on_wake(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_wake *w = &ev->wake;
	bool new_thread = ev->h.type == TT_EV_WAKEUP_NEW;
	struct cp_thread *waker = NULL, *th;
	struct cp_rec *last;
	enum wake_ctx ctx;
	bool target_traced;
	__u32 widx;
	int err;

	if (ev->h.flags & TT_F_HARDIRQ)
		ctx = CTX_HARDIRQ;
	else if (ev->h.flags & TT_F_SOFTIRQ)
		ctx = CTX_SOFTIRQ;
	else
		ctx = CTX_PROCESS;
	if (ctx != CTX_HARDIRQ && is_traced(cp, ev->h.tid, ev->h.tgid)) {
		waker = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
		if (!waker)
			return -ENOMEM;
	}
	/* the recorder emits the wakeups of traced threads only */
	target_traced = w->target_tid != 0;
	if (!target_traced && !(waker && ctx == CTX_PROCESS))
		return 0;
	if (w->target_tid == ev->h.tid && ctx == CTX_PROCESS)
		return 0;
	err = wake_add(cp, ev, ctx, waker, &widx);
	if (err || !target_traced)
		return err;
	th = cp_thread_ensure(cp, w->target_tid, w->target_tgid);
	if (!th)
		return -ENOMEM;
	if (!th->nrecs && !new_thread) {
		/* asleep when the trace began: blocked since its first event */
		err = pretrace_block(cp, th, ev->h.ts);
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
		cp->wakes[widx].block = last->info;
	return rec_push(cp, th, ev->h.ts, REC_RUNNABLE, widx, 0);
}

const struct cp_wake *cp_block_wake(const struct tt_critpath *cp,
				    const struct cp_thread *th, size_t k)
{
	const struct cp_rec *r = &th->recs[k];

	if (k < 1 || r->state != REC_RUNNABLE || (r->flags & REC_F_DATA) ||
	    r->info == NONE32 || th->recs[k - 1].state != REC_BLOCKED)
		return NULL;
	return &cp->wakes[r->info];
}

/* Data at ts (wake widx) ended th's wait, not the room wake room of its
 * runnable record, dropped with the running one after it when th ran */
static int data_ends_wait(struct tt_critpath *cp, struct cp_thread *th,
			  __u64 ts, __u32 widx, const struct cp_wake *room,
			  bool ran)
{
	size_t drop = ran ? 2 : 1;
	int err;

	cp->wakes[widx].block = room->block;
	th->nrecs -= drop;
	cp->intervals -= drop;
	err = rec_push(cp, th, ts, REC_RUNNABLE, widx, 0);
	if (err || !ran)
		return err;
	return rec_push(cp, th, ts, REC_RUNNING, NONE32, 0);
}

/*
 * Data at ts (wake widx) to th, running: when a room wake (cp_room_wake())
 * took it from its block and it ran less than ROOM_RACE_NS before, its
 * receive found this data as it woke (the writer on the other CPU): the
 * data ended the wait, the room wake no hand-off to follow.
 */
static int room_race(struct tt_critpath *cp, struct cp_thread *th, __u64 ts,
		     __u32 widx)
{
	const struct cp_wake *room;

	if (th->nrecs < 3 || ts - th->recs[th->nrecs - 1].ts > ROOM_RACE_NS)
		return 0;
	room = cp_block_wake(cp, th, th->nrecs - 2);
	if (!room || !cp_room_wake(cp, room))
		return 0;
	return data_ends_wait(cp, th, ts, widx, room, true);
}

/*
 * A write to an eventfd or unix socket that th read last: a data hand-off
 * (docs/design.md §4.4). A reader asleep gets the kernel's wakeup, which
 * follows; one the kernel preempted gets none, though its wait for the
 * data ends here, as a wakeup's would: a runnable record with this wake.
 * A busy reader's is a hand-off of the writer only.
 */
static int on_data_wake(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_thread *waker, *th;
	const struct cp_rec *last;
	const struct cp_wake *room;
	__u32 widx;
	int err;

	if (ev->h.flags || !is_traced(cp, ev->h.tid, ev->h.tgid) ||
	    ev->wake.target_tid == ev->h.tid)
		return 0;
	th = cp_thread_find(cp, ev->wake.target_tid);
	if (th) {
		if (tt_grow((void **)&th->arrs, &th->caparrs, th->narrs + 1,
			    sizeof(*th->arrs)))
			return -ENOMEM;
		th->arrs[th->narrs++] = (struct cp_arrival){
			.ts = ev->h.ts,
			.writer = ev->h.tid,
			.kind = ev->wake.target_cpu,
		};
	}
	last = th && th->nrecs ? &th->recs[th->nrecs - 1] : NULL;
	if (!last || last->state == REC_BLOCKED)
		return 0;
	waker = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!waker)
		return -ENOMEM;
	err = wake_add(cp, ev, CTX_PROCESS, waker, &widx);
	if (!err && last->state == REC_RUNNING)
		return room_race(cp, th, ev->h.ts, widx);
	if (err || last->state != REC_RUNNABLE)
		return err;
	/* the wake that ended its block, if it is still waiting for a CPU */
	room = cp_block_wake(cp, th, th->nrecs - 1);
	/* woken for room by a receive, before any data: this data ends the
	 * wait, as the kernel's wakeup would have had it come first */
	if (room && cp_room_wake(cp, room))
		return data_ends_wait(cp, th, ev->h.ts, widx, room, false);
	/* woken from a block by this writer already: that wake ended the
	 * wait, and this data comes on top (a worker's second token to an
	 * event loop still waiting for a CPU after its first) */
	if (room && room->waker_tid == waker->tid && room->ctx == CTX_PROCESS)
		return 0;
	return rec_push(cp, th, ev->h.ts, REC_RUNNABLE, widx, REC_F_DATA);
}

bool cp_nr_send(int nr)
{
	return nr == TT_NR_write || nr == TT_NR_writev || nr == TT_NR_sendto ||
	       nr == TT_NR_sendmsg || nr == TT_NR_sendmmsg;
}

bool cp_room_wake(const struct tt_critpath *cp, const struct cp_wake *w)
{
	if (w->ctx != CTX_PROCESS ||
	    (w->syscall != TT_NR_read && w->syscall != TT_NR_readv &&
	     w->syscall != TT_NR_recvfrom && w->syscall != TT_NR_recvmsg &&
	     w->syscall != TT_NR_recvmmsg))
		return false;
	return w->block == NONE32 || !cp_nr_send(cp->blocks[w->block].syscall);
}

/* th reads what a data wake announced: the walk follows that wake only to
 * a reader that read before it handed on (walk.c). */
/* Appends ts to a thread's sorted times (events come in time order). */
static int times_push(__u64 **v, size_t *n, size_t *cap, __u64 ts)
{
	if (tt_grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = ts;
	return 0;
}

__u64 cp_time_in(const __u64 *v, size_t n, __u64 s, __u64 t)
{
	size_t i = cp_starts_before(v, n, sizeof(*v), s);

	return i < n && v[i] < t ? v[i] : 0;
}

static int on_data_read(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_thread *th = cp_thread_find(cp, ev->h.tid);
	__u32 kind = ev->wake.target_cpu;

	if (!th)
		return 0;
	if ((kind == TT_IPC_PIPE || kind == TT_IPC_PIPE_BEHIND) &&
	    times_push(&th->preads, &th->npreads, &th->cappreads, ev->h.ts))
		return -ENOMEM;
	if (kind == TT_IPC_PIPE_BEHIND)
		return 0;
	if (tt_grow((void **)&th->dreads, &th->capdreads, th->ndreads + 1,
		    sizeof(*th->dreads)))
		return -ENOMEM;
	th->dreads[th->ndreads++] =
		(struct cp_dread){ .ts = ev->h.ts, .kind = kind };
	return 0;
}

bool cp_dread_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	size_t i = cp_starts_before(th->dreads, th->ndreads,
				    sizeof(*th->dreads), s + 1);

	return i < th->ndreads && th->dreads[i].ts <= t;
}

__u64 cp_pipe_read_after(const struct cp_thread *th, __u64 s, __u64 t)
{
	return cp_time_in(th->preads, th->npreads, s + 1, t);
}

/* A message handed to ZMQ: a hand-off of its thread; or a loop's poll: a
 * turn of it (docs/design.md §4.4). Its thread may not have run in the
 * trace yet: it is made. */
static int on_msg_send(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_thread *th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);

	if (th && ev->h.type == TT_EV_POLL) {
		th->nempty_polls += ev->poll.nready == 0;
		return times_push(&th->polls, &th->npolls, &th->cappolls,
				  ev->h.ts);
	}
	return th ? times_push(&th->msends, &th->nmsends, &th->capmsends,
			       ev->h.ts) :
		    -ENOMEM;
}

__u64 cp_msend_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	return cp_time_in(th->msends, th->nmsends, s, t);
}

/*
 * A syscall interval [*start, ev's time) of ev's thread, after the last
 * of its kind, which ended at the latest time *ends holds (n of them):
 * its thread, or NULL with *err 0 when there is no interval (no entry
 * time, the probe came mid-call) or -ENOMEM. One that began before the
 * previous ended (a clock slip) starts at that end, so that a thread's
 * intervals stay sorted and disjoint.
 */
static struct cp_thread *sys_interval(struct tt_critpath *cp,
				      const struct tt_event *ev, __u64 *start,
				      size_t off_ptr, size_t off_n,
				      size_t off_cap, size_t stride, int *err)
{
	struct cp_thread *th;
	char *base;
	size_t n;
	__u64 prev_end;

	*err = 0;
	if (!ev->h.tid || !*start || *start >= ev->h.ts)
		return NULL;
	th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(&base, (char *)th + off_ptr, sizeof(base));
	memcpy(&n, (char *)th + off_n, sizeof(n));
	if (n) {
		/* every interval's end follows its start */
		memcpy(&prev_end, base + (n - 1) * stride + sizeof(__u64),
		       sizeof(prev_end));
		if (*start < prev_end)
			*start = prev_end;
	}
	if (*start >= ev->h.ts)
		return NULL;
	if (tt_grow((void **)((char *)th + off_ptr),
		    (size_t *)((char *)th + off_cap), n + 1, stride)) {
		*err = -ENOMEM;
		return NULL;
	}
	return th;
}

#define SYS_INTERVAL(cp, ev, start, arr, err)                        \
	sys_interval(cp, ev, start, offsetof(struct cp_thread, arr), \
		     offsetof(struct cp_thread, n##arr),             \
		     offsetof(struct cp_thread, cap##arr),           \
		     sizeof(*((struct cp_thread *)0)->arr), err)

static int on_ioctl(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_ioctl *io = &ev->ioc;
	__u64 start = io->ts_enter;
	struct cp_thread *th;
	int err;

	th = SYS_INTERVAL(cp, ev, &start, ioctls, &err);
	if (!th)
		return err;
	cp_call_close(th, start);
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

static int on_fileio(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_fileio *fi = &ev->fileio;
	__u64 start = fi->ts_enter;
	struct cp_thread *th;
	int err;

	th = SYS_INTERVAL(cp, ev, &start, fileios, &err);
	if (!th)
		return err;
	cp_call_close(th, start);
	th->fileios[th->nfileios++] = (struct cp_fileio){
		.start = start,
		.end = ev->h.ts,
		.ret = fi->ret,
		.syscall = fi->syscall,
		.mode = fi->mode,
		.f_flags = fi->f_flags,
	};
	cp->fileios++;
	return 0;
}

static int on_steal(struct tt_critpath *cp, const struct tt_event *ev)
{
	__u64 start = ev->steal.ts_on;
	struct cp_thread *th;
	int err;

	th = SYS_INTERVAL(cp, ev, &start, steals, &err);
	if (!th)
		return err;
	/* no more than the run lasted, whatever the clock said */
	th->steals[th->nsteals++] = (struct cp_steal){
		.start = start,
		.end = ev->h.ts,
		.ns = ev->steal.ns < ev->h.ts - start ? ev->steal.ns :
							ev->h.ts - start,
	};
	cp->steals++;
	return 0;
}

__u64 cp_steal_in(const struct cp_thread *th, __u64 s, __u64 t)
{
	size_t i = cp_starts_before(th->steals, th->nsteals,
				    sizeof(*th->steals), t);
	const struct cp_steal *st;
	__u64 a, b, sum = 0;

	while (i-- > 0 && th->steals[i].end > s) {
		st = &th->steals[i];
		a = st->start > s ? st->start : s;
		b = st->end < t ? st->end : t;
		if (b > a)
			sum += (__u64)((unsigned __int128)st->ns * (b - a) /
				       (st->end - st->start));
	}
	return sum;
}

static int set_comm(struct tt_critpath *cp, __u32 tid, __u32 tgid,
		    const char *comm)
{
	struct cp_thread *th = tid ? cp_thread_ensure(cp, tid, tgid) : NULL;

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
	case TT_EV_DATA_WAKE:
		return on_data_wake(cp, ev);
	case TT_EV_DATA_READ:
		return on_data_read(cp, ev);
	case TT_EV_MSG_SEND:
	case TT_EV_POLL:
		return on_msg_send(cp, ev);
	case TT_EV_PIPE_IO:
		return cp_pipe_add(cp, ev);
	case TT_EV_GPU_CALL:
		return cp_on_gpu_call(cp, ev);
	case TT_EV_IOCTL:
		return on_ioctl(cp, ev);
	case TT_EV_FILEIO:
		return on_fileio(cp, ev);
	case TT_EV_STEAL:
		return on_steal(cp, ev);
	case TT_EV_FORK:
		th = ev->h.tid ? cp_thread_ensure(cp, ev->h.tid, ev->h.tgid) :
				 NULL;
		if (ev->h.tid && !th)
			return -ENOMEM;
		return set_comm(cp, ev->fork.child_tid, ev->fork.child_tgid,
				ev->fork.comm);
	case TT_EV_COMM:
		return set_comm(cp, ev->h.tid, ev->h.tgid, ev->comm.comm);
	case TT_EV_EXIT:
		th = cp_thread_find(cp, ev->h.tid);
		if (th)
			th->exit_ts = ev->h.ts;
		return 0;
	case TT_EV_RTLOCK:
		return cp_add_rtrange(cp, ev);
	case TT_EV_MARK:
		return cp_mark_add(cp, ev);
	case TT_EV_GO_CHAN:
		return cp_chan_add(cp, ev);
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
	const struct cp_thread *th = cp_thread_find(cp, tid);

	return th && th->has_comm ? th->comm : NULL;
}
