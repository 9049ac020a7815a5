// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Goroutines as threads (docs/design.md §4.10): the pass that turns a Go
 * program's events into its goroutines' events, checked on what it emits
 * for a locked engine goroutine and a handler on Ms that the runtime's
 * own futex wakes move between, and on data to and from a Go process.
 */
#include <string.h>
#include "tt_test.h"
#include "golift.h"

#define TGID 700
#define M1 701 /* runs the handler */
#define M2 702 /* the engine's locked M */
#define MX 703 /* an idle M the runtime starts */
#define G_HANDLER 0xc000001000ULL
#define G_ENGINE 0xc000002000ULL
#define G_NEW 0xc000003000ULL

struct sink {
	struct tt_event ev[64];
	int n;
};

static int collect(void *ctx, const struct tt_event *ev)
{
	struct sink *s = ctx;

	if (s->n < 64)
		s->ev[s->n++] = *ev;
	return 0;
}

static struct tt_event mk(unsigned int type, __u64 ts, __u32 tid)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = TGID;
	ev.h.tid = tid;
	return ev;
}

static void feed_go(struct an_golift *gl, struct sink *s, __u64 ts, __u32 m,
		    __u64 g, __u32 from, __u32 to)
{
	struct tt_event ev = mk(TT_EV_GO, ts, m);

	ev.go.g = g;
	ev.go.from = from;
	ev.go.to = to;
	ASSERT_OK(an_golift(gl, &ev, collect, s), "an_golift go");
}

static void feed(struct an_golift *gl, struct sink *s, struct tt_event ev)
{
	ASSERT_OK(an_golift(gl, &ev, collect, s), "an_golift");
}

/* The events emitted of type type, in order. */
static int of_type(const struct sink *s, unsigned int type,
		   const struct tt_event **out, int max)
{
	int n = 0;

	for (int i = 0; i < s->n && n < max; i++)
		if (s->ev[i].h.type == type)
			out[n++] = &s->ev[i];
	return n;
}

static void test_untouched_without_go(void)
{
	struct an_golift gl = {};
	struct sink s = {};
	struct tt_event ev = mk(TT_EV_RECV, 10, M1);

	feed(&gl, &s, ev);
	ASSERT_EQ(s.n, 1, "one event out");
	ASSERT_EQ(s.ev[0].h.tid, M1, "recv keeps its thread");
	an_golift_free(&gl);
}

static void test_handler_and_locked_engine(void)
{
	const struct tt_event *sw[16], *wk[8], *comm[8];
	struct an_golift gl = {};
	struct sink s = {};
	struct tt_event ev;
	__u32 gh, ge;
	int nsw, nwk;

	/* the handler starts on M1 and reads the request */
	feed_go(&gl, &s, 100, M1, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	ev = mk(TT_EV_RECV, 110, M1);
	feed(&gl, &s, ev);
	ASSERT_EQ(of_type(&s, TT_EV_COMM, comm, 8), 1, "a name for it");
	gh = comm[0]->h.tid;
	ASSERT_GE(gh, TT_GO_TID_BASE, "goroutine tid range");
	ASSERT_EQ(s.ev[s.n - 1].h.tid, gh, "the read is the goroutine's");
	/* it readies the waiting engine: a hand-off from the handler */
	feed_go(&gl, &s, 120, M1, G_ENGINE, TT_GO_WAITING, TT_GO_RUNNABLE);
	nwk = of_type(&s, TT_EV_WAKING, wk, 8);
	ASSERT_EQ(nwk, 1, "one wake");
	ge = wk[0]->wake.target_tid;
	ASSERT_NEQ(ge, gh, "two goroutines");
	ASSERT_EQ(wk[0]->h.tid, gh, "woken by the handler");
	ASSERT_EQ(wk[0]->h.flags, 0, "a hand-off, not the runtime's");
	/* M1 futex-wakes the engine's locked M: the runtime's, from M1's
	 * goroutine, at the M level (its target runs no goroutine) */
	ev = mk(TT_EV_WAKING, 125, M1);
	ev.wake.target_tid = M2;
	ev.wake.target_tgid = TGID;
	ev.wake.waker_syscall = 202;
	feed(&gl, &s, ev);
	ASSERT_EQ(s.ev[s.n - 1].wake.target_tid, M2, "M-level target");
	/* the engine runs on M2, is preempted by Go, and runs again with no
	 * wake between: a runnable stretch, no hand-off */
	feed_go(&gl, &s, 130, M2, G_ENGINE, TT_GO_RUNNABLE, TT_GO_RUNNING);
	feed_go(&gl, &s, 500, M2, G_ENGINE, TT_GO_RUNNING, TT_GO_RUNNABLE);
	ev = mk(TT_EV_WAKING, 510, M2);
	ev.wake.target_tid = MX;
	ev.wake.target_tgid = TGID;
	ev.wake.waker_syscall = 202;
	feed(&gl, &s, ev);
	ASSERT_EQ(s.ev[s.n - 1].h.tid, M2, "the parking M wakes as itself");
	feed_go(&gl, &s, 600, M2, G_ENGINE, TT_GO_RUNNABLE, TT_GO_RUNNING);
	/* the kernel preempts M2 while it runs the engine: the goroutine's */
	ev = mk(TT_EV_SWITCH, 700, M2);
	ev.sw.next_tid = 0;
	ev.sw.sw_flags = TT_SW_PREV_TRACED;
	feed(&gl, &s, ev);
	ASSERT_EQ(s.ev[s.n - 1].h.tid, ge, "switch-out of the goroutine");
	/* a new goroutine: followed, never a hand-off */
	feed_go(&gl, &s, 800, M1, G_NEW, TT_GO_DEAD, TT_GO_RUNNABLE);
	ASSERT_EQ(s.ev[s.n - 1].h.type, TT_EV_WAKEUP_NEW, "new goroutine");
	ASSERT_EQ(s.ev[s.n - 1].h.flags, TT_F_RUNTIME, "start: the runtime's");
	/* the handler parks; the scheduler (no goroutine) readies it */
	feed_go(&gl, &s, 900, M1, G_HANDLER, TT_GO_RUNNING, TT_GO_WAITING);
	feed_go(&gl, &s, 950, M1, G_HANDLER, TT_GO_WAITING, TT_GO_RUNNABLE);
	ASSERT_EQ(s.ev[s.n - 1].h.tid, M1, "readied by the M itself");
	ASSERT_EQ(s.ev[s.n - 1].h.flags, TT_F_RUNTIME, "a runtime wake");

	nsw = of_type(&s, TT_EV_SWITCH, sw, 16);
	/* M1->handler, M2->engine, engine->M2 (runnable), M2->engine,
	 * engine out (kernel), handler->M1 (blocked) */
	ASSERT_EQ(nsw, 6, "switches");
	ASSERT_EQ(sw[0]->h.tid, M1, "M1 lends itself");
	ASSERT_EQ(sw[0]->sw.next_tid, gh, "to the handler");
	ASSERT_EQ(sw[2]->h.tid, ge, "the engine leaves M2");
	ASSERT_EQ(sw[2]->sw.prev_state, 0, "runnable: preempted by Go");
	ASSERT_EQ(sw[5]->h.tid, gh, "the handler parks");
	ASSERT_NEQ(sw[5]->sw.prev_state, 0, "blocked");
	ASSERT_EQ(gl.lifted, 8, "state changes lifted");
	an_golift_free(&gl);
}

/* The recorder's Go range of TGID at ts: hi 0, the probe came off */
static void go_range(struct an_golift *gl, struct sink *s, __u64 ts, __u64 hi)
{
	struct tt_event ev = mk(TT_EV_RTLOCK, ts, TGID);

	ev.rtlock.kind = TT_RT_GO;
	ev.rtlock.hi = hi;
	feed(gl, s, ev);
}

/* M1's read at ts: the tid it is lifted to */
static __u32 read_tid(struct an_golift *gl, struct sink *s, __u64 ts)
{
	feed(gl, s, mk(TT_EV_RECV, ts, M1));
	return s->ev[s->n - 1].h.tid;
}

/* The probe came off (record --goroutines=auto): M's events are its own
 * again, and state changes still in flight are dropped; until the process
 * exec'd another Go program the recorder follows. */
static void test_probe_taken_off(void)
{
	struct an_golift gl = {};
	struct sink s = {};

	feed_go(&gl, &s, 100, M1, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	ASSERT_GE(read_tid(&gl, &s, 110), TT_GO_TID_BASE, "the goroutine's read");
	go_range(&gl, &s, 120, 0);
	ASSERT_EQ(s.ev[s.n - 1].h.type, TT_EV_RTLOCK, "passed on");
	s.n = 0;
	feed_go(&gl, &s, 125, M1, G_HANDLER, TT_GO_RUNNING, TT_GO_WAITING);
	ASSERT_EQ(s.n, 0, "a late state change dropped");
	ASSERT_EQ(read_tid(&gl, &s, 130), M1, "the read is the thread's again");
	/* it exec'd another Go program, whose goroutines are followed */
	go_range(&gl, &s, 140, ~0ULL);
	s.n = 0;
	feed_go(&gl, &s, 150, M1, G_ENGINE, TT_GO_RUNNABLE, TT_GO_RUNNING);
	ASSERT_GT(s.n, 0, "the new program's state change lifted");
	ASSERT_GE(read_tid(&gl, &s, 160), TT_GO_TID_BASE, "its goroutine's read");
	an_golift_free(&gl);
}

/* s holds a runtime wake of target by waker, then a switch. */
static void runtime_wake(const struct sink *s, __u32 waker, __u32 target)
{
	ASSERT_EQ(s->n, 2, "a wake and a switch");
	ASSERT_EQ(s->ev[0].h.type, TT_EV_WAKING, "a wake");
	ASSERT_EQ(s->ev[0].h.tid, waker, "its waker");
	ASSERT_EQ(s->ev[0].wake.target_tid, target, "its target");
	ASSERT_EQ(s->ev[0].h.flags, TT_F_RUNTIME, "the runtime's");
	ASSERT_EQ(s->ev[1].h.type, TT_EV_SWITCH, "then a switch");
}

/* The wakes the runtime makes without ready() (docs/design.md §4.11): a
 * goroutine first seen running was started, one netpoll readied runs with
 * no ready seen, and a goroutine that stops gives its M back. */
static void test_runtime_wakes_without_ready(void)
{
	struct an_golift gl = {};
	struct sink s = {};
	__u32 gh;
	int i;

	/* first seen running: started, by the M's scheduler */
	feed_go(&gl, &s, 100, M1, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	ASSERT_EQ(s.ev[1].h.type, TT_EV_WAKEUP_NEW, "started");
	ASSERT_EQ(s.ev[1].h.tid, M1, "by its M");
	ASSERT_EQ(s.ev[1].h.flags, TT_F_RUNTIME, "the runtime's");
	gh = s.ev[1].wake.target_tid;
	ASSERT_EQ(s.ev[2].h.type, TT_EV_SWITCH, "then it runs");
	ASSERT_EQ(s.ev[2].sw.next_tid, gh, "on M1");
	/* it parks on a socket: it gives its M back to the scheduler */
	s.n = 0;
	feed_go(&gl, &s, 200, M1, G_HANDLER, TT_GO_RUNNING, TT_GO_WAITING);
	runtime_wake(&s, gh, M1);
	ASSERT_EQ(s.ev[1].h.tid, gh, "then the goroutine leaves");
	/* netpoll readied it on M2, no ready() seen: M2's runtime wake */
	s.n = 0;
	feed_go(&gl, &s, 300, M2, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	runtime_wake(&s, M2, gh);
	/* readied by ready(): that wake only */
	feed_go(&gl, &s, 400, M2, G_HANDLER, TT_GO_RUNNING, TT_GO_WAITING);
	feed_go(&gl, &s, 450, M1, G_HANDLER, TT_GO_WAITING, TT_GO_RUNNABLE);
	s.n = 0;
	feed_go(&gl, &s, 460, M2, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	for (i = 0; i < s.n; i++)
		ASSERT_NEQ(s.ev[i].h.type, TT_EV_WAKING, "no second wake");
	an_golift_free(&gl);
}

/* Go reuses a g: one seen to exit that runs again is a new goroutine
 * (HTTP/2's writeFrameAsync, one per frame), started by the M that runs
 * it when newproc's readying was not seen, by its creator when it was;
 * never one that waited since its exit, woken by nobody. */
static void test_reused_g(void)
{
	struct an_golift gl = {};
	struct sink s = {};
	__u32 gn, gh;
	int i;

	feed_go(&gl, &s, 100, M1, G_NEW, TT_GO_RUNNABLE, TT_GO_RUNNING);
	gn = s.ev[1].wake.target_tid;
	s.n = 0;
	feed_go(&gl, &s, 200, M1, G_NEW, TT_GO_RUNNING, TT_GO_DEAD);
	ASSERT_EQ(s.ev[1].h.type, TT_EV_SWITCH, "it leaves M1");
	ASSERT_TRUE(s.ev[1].sw.sw_flags & TT_SW_GO_EXIT, "exited, it says");
	s.n = 0;
	feed_go(&gl, &s, 300, M2, G_NEW, TT_GO_RUNNABLE, TT_GO_RUNNING);
	ASSERT_EQ(s.n, 2, "a start and a switch");
	ASSERT_EQ(s.ev[0].h.type, TT_EV_WAKEUP_NEW, "started again");
	ASSERT_EQ(s.ev[0].h.tid, M2, "by the M that runs it");
	ASSERT_EQ(s.ev[0].wake.target_tid, gn, "the same goroutine tid");
	ASSERT_EQ(s.ev[0].h.flags, TT_F_RUNTIME, "the runtime's");
	/* its creator's readying seen: that start only */
	feed_go(&gl, &s, 400, M2, G_NEW, TT_GO_RUNNING, TT_GO_DEAD);
	feed_go(&gl, &s, 450, M1, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	gh = s.ev[s.n - 1].sw.next_tid;
	s.n = 0;
	feed_go(&gl, &s, 500, M1, G_NEW, TT_GO_DEAD, TT_GO_RUNNABLE);
	ASSERT_EQ(s.ev[0].h.type, TT_EV_WAKEUP_NEW, "started");
	ASSERT_EQ(s.ev[0].h.tid, gh, "by its creator");
	s.n = 0;
	feed_go(&gl, &s, 520, M2, G_NEW, TT_GO_RUNNABLE, TT_GO_RUNNING);
	for (i = 0; i < s.n; i++)
		ASSERT_TRUE(s.ev[i].h.type == TT_EV_SWITCH, "no second start");
	an_golift_free(&gl);
}

/* Data to and from a Go process (docs/design.md §4.10): an M reads what
 * comes to it, not a goroutine, so data to a Go thread and a Go thread's
 * reads are dropped; a goroutine's write to another process's thread (a
 * router's call to its model shard) stays, written by the goroutine. */
static void test_data_wakes(void)
{
	struct an_golift gl = {};
	struct sink s = {};
	struct tt_event ev;
	__u32 gh;

	feed_go(&gl, &s, 100, M1, G_HANDLER, TT_GO_RUNNABLE, TT_GO_RUNNING);
	gh = s.ev[1].wake.target_tid;
	s.n = 0;
	ev = mk(TT_EV_DATA_WAKE, 110, M1);
	ev.wake.target_tid = 901;
	ev.wake.target_tgid = 900;
	feed(&gl, &s, ev);
	ASSERT_EQ(s.n, 1, "a write to another process kept");
	ASSERT_EQ(s.ev[0].h.tid, gh, "written by the goroutine");
	ASSERT_EQ(s.ev[0].wake.target_tid, 901, "to its reader");
	s.n = 0;
	ev = mk(TT_EV_DATA_WAKE, 120, 901);
	ev.h.tgid = 900;
	ev.wake.target_tid = M2;
	ev.wake.target_tgid = TGID;
	feed(&gl, &s, ev);
	ASSERT_EQ(s.n, 0, "data to an M dropped");
	ev = mk(TT_EV_DATA_READ, 130, M1);
	feed(&gl, &s, ev);
	ASSERT_EQ(s.n, 0, "an M's read dropped");
	an_golift_free(&gl);
}

int main(void)
{
	TT_RUN(test_data_wakes);
	TT_RUN(test_runtime_wakes_without_ready);
	TT_RUN(test_reused_g);
	TT_RUN(test_probe_taken_off);
	TT_RUN(test_untouched_without_go);
	TT_RUN(test_handler_and_locked_engine);
	TT_EXIT();
}
