// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Goroutines as threads (docs/design.md §4.10): the Go runtime's state
 * changes, seen at runtime.casgstatus, rewrite a Go program's events into
 * events of its goroutines before the timelines are built.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "golift.h"

static bool is_go(const struct an_golift *gl, __u32 tgid)
{
	return gl->go_tgids.n && tt_hmap_find(&gl->go_tgids, tgid, 0);
}

/* The goroutine M runs, or M itself when it runs none (the scheduler). */
static __u32 on_m(const struct an_golift *gl, __u32 m)
{
	const struct tt_hmap_ent *e = tt_hmap_find(&gl->cur, m, 0);

	return e && e->val ? (__u32)e->val : m;
}

static int set_cur(struct an_golift *gl, __u32 m, __u32 g)
{
	return tt_hmap_put(&gl->cur, m, 0, g);
}

/* The goroutine tid of struct g gp in tgid, its name emitted when new. */
static int go_tid(struct an_golift *gl, const struct tt_event *ev, __u64 gp,
		  __u32 *tid, bool *fresh, an_golift_fn fn, void *ctx)
{
	struct tt_hmap_ent *e = tt_hmap_find(&gl->gs, gp, ev->h.tgid);
	struct tt_event name;

	*fresh = !e;
	if (e) {
		*tid = e->val;
		return 0;
	}
	if (gl->ngs == UINT32_MAX - TT_GO_TID_BASE)
		return -ENOSPC;
	*tid = TT_GO_TID_BASE + gl->ngs++;
	if (tt_hmap_put(&gl->gs, gp, ev->h.tgid, *tid))
		return -ENOMEM;
	memset(&name, 0, sizeof(name));
	name.h = ev->h;
	name.h.type = TT_EV_COMM;
	name.h.tid = *tid;
	name.h.flags = 0;
	snprintf(name.comm.comm, sizeof(name.comm.comm), "goroutine%u",
		 *tid - TT_GO_TID_BASE);
	return fn(ctx, &name);
}

/* A switch on ev's CPU at ev's time from prev to next, both of tgid;
 * prev_state 0 leaves prev runnable, else blocked (TT_GO_DEAD: exited). */
static int emit_switch(const struct tt_event *ev, __u32 prev, __u32 next,
		       __s64 prev_state, an_golift_fn fn, void *ctx)
{
	struct tt_event sw;

	memset(&sw, 0, sizeof(sw));
	sw.h = ev->h;
	sw.h.type = TT_EV_SWITCH;
	sw.h.tid = prev;
	sw.h.flags = 0;
	sw.sw = (struct tt_switch){
		.next_tid = next,
		.next_tgid = ev->h.tgid,
		.prev_state = prev_state,
		.syscall_nr = -1,
		.sw_flags = TT_SW_PREV_TRACED | TT_SW_NEXT_TRACED |
			    (prev_state == TT_GO_DEAD ? TT_SW_GO_EXIT : 0),
	};
	return fn(ctx, &sw);
}

/* A wake (type WAKING or WAKEUP_NEW) of target by waker at ev's time. */
static int emit_wake(const struct tt_event *ev, __u16 type, __u32 waker,
		     __u32 target, __u32 flags, an_golift_fn fn, void *ctx)
{
	struct tt_event wk;

	memset(&wk, 0, sizeof(wk));
	wk.h = ev->h;
	wk.h.type = type;
	wk.h.tid = waker;
	wk.h.flags = flags;
	wk.wake = (struct tt_wake){
		.target_tid = target,
		.target_tgid = ev->h.tgid,
		.waker_syscall = -1,
		.target_cpu = ev->h.cpu,
	};
	return fn(ctx, &wk);
}

/* gl->parked's values: a goroutine waiting, or exited (its g free) */
enum { GO_PARKED = 1, GO_EXITED = 2 };

/* Goroutine g, parked and readied by no ready(), runs on M (ev's thread):
 * the netpoller readied it (netpoll's list goes runnable without ready()),
 * mostly on this M just before: a runtime wake by M, which the walk follows
 * to the M's own wake (the socket's data: a hop's send, docs/design.md
 * §4.11). A goroutine first seen here (fresh: newproc is not probed) was
 * started, on its creator's P; its creator gave this M back (give_back in
 * lift_status): followed there, handing nothing off. So was a g seen to
 * exit: Go reuses them (HTTP/2's writeFrameAsync, one per frame). */
static int parked_runs(struct an_golift *gl, const struct tt_event *ev, __u32 g,
		       bool fresh, an_golift_fn fn, void *ctx)
{
	struct tt_hmap_ent *e = tt_hmap_find(&gl->parked, g, 0);

	if (!fresh && !e)
		return 0;
	fresh = fresh || e->val == GO_EXITED;
	tt_hmap_del(&gl->parked, g, 0);
	return emit_wake(ev, fresh ? TT_EV_WAKEUP_NEW : TT_EV_WAKING, ev->h.tid,
			 g, TT_F_RUNTIME, fn, ctx);
}

/* One runtime.casgstatus on M (ev's thread): the goroutine starts or
 * stops on M, or is readied by whatever M runs. */
static int lift_status(struct an_golift *gl, const struct tt_event *ev,
		       an_golift_fn fn, void *ctx)
{
	__u32 m = ev->h.tid, from = ev->go.from, to = ev->go.to;
	__u32 g, running = on_m(gl, m), flags;
	bool fresh;
	__u16 type;
	int err;

	err = go_tid(gl, ev, ev->go.g, &g, &fresh, fn, ctx);
	if (err)
		return err;
	gl->lifted++;
	if (to == TT_GO_RUNNING) {
		if (running == g)
			return 0;
		/* M gives way to g; a goroutine whose stop was not seen
		 * goes first, runnable */
		if (running != m) {
			err = emit_switch(ev, running, m, 0, fn, ctx);
			if (err)
				return err;
		}
		err = parked_runs(gl, ev, g, fresh, fn, ctx);
		if (!err)
			err = emit_switch(ev, m, g, 1, fn, ctx);
		return err ? err : set_cur(gl, m, g);
	}
	if (from == TT_GO_RUNNING || from == TT_GO_SYSCALL) {
		/* parked, preempted, yielded, exited or out of a syscall
		 * without its P: g leaves M */
		bool runnable = to == TT_GO_RUNNABLE || to == TT_GO_PREEMPTED;

		/* M runs the scheduler after g: what it starts or polls
		 * ready next follows g's work */
		err = emit_wake(ev, TT_EV_WAKING, g, m, TT_F_RUNTIME, fn, ctx);
		if (!err)
			err = emit_switch(ev, g, m,
					  runnable	   ? 0 :
					  to == TT_GO_DEAD ? TT_GO_DEAD :
							     1,
					  fn, ctx);
		if (!err && running == g)
			err = set_cur(gl, m, 0);
		if (!err && (to == TT_GO_WAITING || to == TT_GO_DEAD))
			err = tt_hmap_put(&gl->parked, g, 0,
					  to == TT_GO_DEAD ? GO_EXITED :
							     GO_PARKED);
		return err;
	}
	if (to != TT_GO_RUNNABLE ||
	    (from != TT_GO_WAITING && from != TT_GO_DEAD && from != TT_GO_IDLE))
		return 0;
	/* readied (a channel, a lock, a new goroutine): by the goroutine M
	 * runs, a hand-off; by the scheduler itself (netpoll, timers), a
	 * runtime wake */
	tt_hmap_del(&gl->parked, g, 0);
	/* a new goroutine is followed to its creator but hands nothing
	 * off: Go's libraries start their own (net/http's background read) */
	type = from == TT_GO_WAITING ? TT_EV_WAKING : TT_EV_WAKEUP_NEW;
	flags = running == m || from != TT_GO_WAITING ? TT_F_RUNTIME : 0;
	return emit_wake(ev, type, running, g, flags, fn, ctx);
}

static void remap(const struct an_golift *gl, __u32 tgid, __u32 *tid)
{
	if (*tid && is_go(gl, tgid))
		*tid = on_m(gl, *tid);
}

int an_golift(struct an_golift *gl, const struct tt_event *ev,
	      an_golift_fn fn, void *ctx)
{
	struct tt_event out;

	switch (ev->h.type) {
	case TT_EV_GO:
		/* state changes still in flight when the probe came off */
		if (gl->stopped.n && tt_hmap_find(&gl->stopped, ev->h.tgid, 0))
			return 0;
		if (!is_go(gl, ev->h.tgid) &&
		    !tt_hmap_insert(&gl->go_tgids, ev->h.tgid, 0, 1))
			return -ENOMEM;
		return lift_status(gl, ev, fn, ctx);
	case TT_EV_RTLOCK:
		/* the probe came off (record --goroutines=auto): threads again */
		if (ev->rtlock.kind == TT_RT_GO && !ev->rtlock.hi) {
			tt_hmap_del(&gl->go_tgids, ev->h.tgid, 0);
			if (tt_hmap_put(&gl->stopped, ev->h.tgid, 0, 1))
				return -ENOMEM;
		} else if (ev->rtlock.kind == TT_RT_GO) {
			/* followed again: the Go program it exec'd */
			tt_hmap_del(&gl->stopped, ev->h.tgid, 0);
		}
		return fn(ctx, ev);
	case TT_EV_EXIT:
		if (is_go(gl, ev->h.tgid))
			tt_hmap_del(&gl->cur, ev->h.tid, 0);
		return fn(ctx, ev);
	case TT_EV_FORK:
	case TT_EV_COMM:
	case TT_EV_LOST:
		return fn(ctx, ev);
	}
	if (!gl->go_tgids.n)
		return fn(ctx, ev);
	out = *ev;
	remap(gl, out.h.tgid, &out.h.tid);
	switch (ev->h.type) {
	case TT_EV_SWITCH:
		remap(gl, out.sw.next_tgid, &out.sw.next_tid);
		/* an M that runs a goroutine on both sides: nothing moved */
		if (out.sw.next_tid == out.h.tid)
			return 0;
		break;
	case TT_EV_WAKING:
	case TT_EV_WAKEUP_NEW:
		remap(gl, out.wake.target_tgid, &out.wake.target_tid);
		break;
	case TT_EV_DATA_WAKE:
		/* an M reads it, not a goroutine: channels hand Go's data on;
		 * a goroutine's write to another process's reader stays, its
		 * writer the goroutine on the M (a call to a callee) */
		if (is_go(gl, ev->wake.target_tgid))
			return 0;
		break;
	case TT_EV_DATA_READ:
		if (is_go(gl, ev->h.tgid))
			return 0;
		break;
	case TT_EV_PIPE_IO:
		/* an M read or wrote it, as a data wake's */
		if (is_go(gl, ev->h.tgid))
			return 0;
		break;
	case TT_EV_POLL:
		/* an M polled (the netpoller), no goroutine */
	case TT_EV_MSG_SEND:
		/* an M called it (cgo), not a goroutine */
		if (is_go(gl, ev->h.tgid))
			return 0;
		break;
	}
	return fn(ctx, &out);
}

void an_golift_free(struct an_golift *gl)
{
	tt_hmap_free(&gl->go_tgids);
	tt_hmap_free(&gl->gs);
	tt_hmap_free(&gl->cur);
	tt_hmap_free(&gl->stopped);
	tt_hmap_free(&gl->parked);
	memset(gl, 0, sizeof(*gl));
}
