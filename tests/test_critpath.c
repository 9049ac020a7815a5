/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Thread timelines and the critical-path walk (docs/design.md §4) on synthetic
 * event streams: exact nanoseconds per stage, t_dispatch and t_token, and
 * the closure invariant (stages sum to t_wire - t_arrive) for every
 * request of every test. */
#include <errno.h>
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
		TT_CHECK(!r->complete);
		TT_CHECK(r->segs == NULL && r->nsegs == 0);
		for (st = 0; st < TT_ST_MAX; st++)
			TT_CHECK_EQ_U64(r->stage_ns[st], 0);
		return;
	}
	for (st = 0; st < TT_ST_MAX; st++)
		sum += r->stage_ns[st];
	TT_CHECK_EQ_U64(sum, rq->t_wire - rq->t_arrive);
	TT_CHECK(r->complete == (r->incomplete == 0));
	t = rq->t_arrive;
	for (i = 0; i < r->nsegs; i++) {
		TT_CHECK_EQ_U64(r->segs[i].start, t);
		TT_CHECK(r->segs[i].dur > 0);
		TT_CHECK(r->segs[i].stage < TT_ST_MAX);
		by_stage[r->segs[i].stage] += r->segs[i].dur;
		t = r->segs[i].start + r->segs[i].dur;
	}
	TT_CHECK_EQ_U64(t, rq->t_wire);
	for (st = 0; st < TT_ST_MAX; st++)
		TT_CHECK_EQ_U64(by_stage[st], r->stage_ns[st]);
	TT_CHECK(r->t_dispatch <= r->t_token);
	TT_CHECK(r->t_token <= rq->t_first_write ||
		 rq->t_first_write < rq->t_read);
	TT_CHECK(r->t_dispatch >= rq->t_read || rq->t_read > rq->t_wire);
}

/* Walks n requests together and checks the closure of each. */
static void walk(struct tt_critpath *cp, const struct tt_cp_request *rqs,
		 size_t n, struct tt_cp_result *out)
{
	size_t i;

	TT_CHECK(tt_critpath_walk_all(cp, rqs, n, out) == 0);
	for (i = 0; i < n; i++)
		check_closure(&rqs[i], &out[i]);
}

static void free_results(struct tt_cp_result *r, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tt_cp_result_free(&r[i]);
}

/* Stage ns of r in the order of enum tt_stage, compared to want. */
static void check_stages(const struct tt_cp_result *r, const __u64 *want)
{
	int st;

	for (st = 0; st < TT_ST_MAX; st++) {
		if (r->stage_ns[st] != want[st])
			fprintf(stderr, "  stage %s: %llu ns, want %llu\n",
				tt_stage_name(st),
				(unsigned long long)r->stage_ns[st],
				(unsigned long long)want[st]);
		TT_CHECK_EQ_U64(r->stage_ns[st], want[st]);
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

static void test_names(void)
{
	static const char *const want[TT_ST_MAX] = {
		"network.in",	      "network.out", "scheduler.queue",
		"scheduler.runqueue", "storage.io",  "compute.gpu",
		"compute.cpu",	      "other.sleep", "other.lock",
		"other.unknown",
	};
	struct tt_critpath *cp = tt_critpath_new();
	struct stream s = { 0 };
	struct tt_event *ev;
	int st;

	for (st = 0; st < TT_ST_MAX; st++)
		TT_CHECK(!strcmp(tt_stage_name(st), want[st]));
	TT_CHECK(!strcmp(tt_stage_name(TT_ST_MAX), "?"));
	TT_CHECK(!strcmp(tt_cp_dispatch_name(TT_CP_DISP_HANDOFF), "handoff"));
	TT_CHECK(!strcmp(tt_cp_state_name(TT_CP_RUNNABLE), "runnable"));
	tt_critpath_free(cp);

	ev = ev_new(&s, TT_EV_FORK, 10, 101);
	ev->fork.child_tid = 102;
	ev->fork.child_tgid = 100;
	strcpy(ev->fork.comm, "python3");
	ev = ev_new(&s, TT_EV_COMM, 20, 102);
	strcpy(ev->comm.comm, "engine");
	cp = cp_feed(&s);
	TT_CHECK(tt_critpath_comm(cp, 102) &&
		 !strcmp(tt_critpath_comm(cp, 102), "engine"));
	TT_CHECK(tt_critpath_comm(cp, 101) == NULL);
	TT_CHECK(tt_critpath_comm(cp, 555) == NULL);
	tt_critpath_free(cp);
}

/* One thread reads, computes and writes; its wakeup by the arriving data
 * (softirq, untraced current) leaves runqueue time inside network.in. */
static void test_single_thread(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1050 * US, 1500 * US, 1600 * US, 101, 101);
	struct tt_cp_result r;
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 40 * US,
		[TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_CPU] = 450 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};

	sw_in(&s, 100 * US, 101);
	sw_out(&s, 200 * US, 101,
	       (struct blk){ .sys = NR_RECVFROM, .arg0 = 5, .mode = S_IFSOCK });
	wake(&s, 1000 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1010 * US, 101);
	sw_out(&s, 1700 * US, 101,
	       (struct blk){ .sys = NR_EPOLL_WAIT, .arg0 = 3 });
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1050 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_READ);
	TT_CHECK_EQ_U64(r.t_token, 1500 * US);
	/* runqueue, request in, on-cpu, response out */
	TT_CHECK_EQ_U64(r.nsegs, 4);
	if (r.nsegs == 4) {
		TT_CHECK_EQ_U64(r.segs[0].stage, TT_ST_RUNQUEUE);
		TT_CHECK_EQ_U64(r.segs[0].start, 1000 * US);
		TT_CHECK_EQ_U64(r.segs[0].tid, 101);
		TT_CHECK_EQ_U64(r.segs[1].stage, TT_ST_NET_IN);
		TT_CHECK_EQ_U64(r.segs[2].state, TT_CP_RUNNING);
		TT_CHECK(!strcmp(r.segs[2].reason, "on-cpu"));
	}
	tt_cp_result_free(&r);
	TT_CHECK(r.segs == NULL);
	tt_critpath_free(cp);
}

/* Reader hands to an engine through a futex; the engine computes and
 * wakes the writer. The reader's work between its read and the hand-off
 * is its own CPU time, not queueing: the idle engine picks the request up
 * at once. */
static void test_cross_thread(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 2100 * US, 2150 * US, 101, 103);
	struct tt_cp_result r;
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 965 * US,
		[TT_ST_RUNQUEUE] = 35 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	const struct tt_cp_segment *sg;

	sw_in(&s, 0, 101);
	sw_in(&s, 10 * US, 102);
	sw_out(&s, 50 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	sw_in(&s, 20 * US, 103);
	sw_out(&s, 60 * US, 103,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x8000 });
	wake(&s, 1200 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_out(&s, 1250 * US, 101, (struct blk){ .sys = NR_EPOLL_WAIT });
	sw_in(&s, 1230 * US, 102);
	wake(&s, 2000 * US, 102, 103, 0, NR_FUTEX, 0x8000);
	sw_out(&s, 2010 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	sw_in(&s, 2005 * US, 103);
	sw_out(&s, 2200 * US, 103,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x8000 });
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.t_enqueue, 1200 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_token, 2000 * US);
	sg = seg_at(&r, 1150 * US);
	TT_CHECK(sg && sg->tid == 101 && sg->stage == TT_ST_CPU &&
		 sg->state == TT_CP_RUNNING && sg->start == 1100 * US &&
		 sg->dur == 100 * US);
	sg = seg_at(&r, 1500 * US);
	TT_CHECK(sg && sg->tid == 102 && sg->stage == TT_ST_CPU &&
		 sg->start == 1230 * US && sg->dur == 770 * US);
	sg = seg_at(&r, 2001 * US);
	TT_CHECK(sg && sg->tid == 103 && sg->stage == TT_ST_RUNQUEUE);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Stream of a thread that blocks on a char device ioctl, woken by a hard
 * interrupt that lands on another traced thread (not a waker). */
static struct tt_critpath *gpu_stream(void)
{
	struct stream s = { 0 };

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101,
	       (struct blk){ .sys = NR_IOCTL,
			     .arg0 = 7,
			     .mode = S_IFCHR,
			     .rdev = GPU_RDEV });
	sw_in(&s, 1600 * US, 102);
	wake(&s, 1700 * US, 102, 101, TT_F_HARDIRQ, -1, 0);
	sw_out(&s, 1750 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x9 });
	sw_in(&s, 1710 * US, 101);
	return cp_feed(&s);
}

static void test_gpu_wait(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1800 * US, 1850 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_CPU] = 190 * US,
		[TT_ST_GPU] = 500 * US,	   [TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath *cp = gpu_stream();
	const struct tt_cp_segment *sg;
	struct tt_cp_result r;

	TT_CHECK(tt_critpath_add_gpu_rdev(cp, GPU_RDEV) == 0);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	sg = seg_at(&r, 1300 * US);
	TT_CHECK(sg && sg->state == TT_CP_BLOCKED && sg->tid == 101 &&
		 !strcmp(sg->reason, "ioctl gpu 195:0"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* the same wait on a device nobody said is a GPU */
	cp = gpu_stream();
	want[TT_ST_GPU] = 0;
	want[TT_ST_UNKNOWN] = 500 * US;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	sg = seg_at(&r, 1300 * US);
	TT_CHECK(sg && !strcmp(sg->reason, "ioctl chr 195:0"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* any minor of a GPU major */
	cp = gpu_stream();
	TT_CHECK(tt_critpath_add_gpu_major(cp, 195) == 0);
	want[TT_ST_GPU] = 500 * US;
	want[TT_ST_UNKNOWN] = 0;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Thread 101 runs from 900 us, waits in a from 1200 to 1500 us and in b
 * from 1560 to 1750 us, each wait ended by a hard interrupt. */
static struct tt_critpath *two_waits(struct blk a, struct blk b)
{
	struct stream s = { 0 };

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101, a);
	wake(&s, 1500 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1510 * US, 101);
	sw_out(&s, 1560 * US, 101, b);
	wake(&s, 1750 * US, UNTRACED, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1760 * US, 101);
	return cp_feed(&s);
}

/* A regular-file read in I/O wait and a file-backed page fault, both
 * ended by interrupts, are storage. */
static void test_storage_wait(void)
{
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1790 * US, 1800 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_CPU] = 180 * US,
		[TT_ST_STORAGE] = 490 * US, [TT_ST_RUNQUEUE] = 20 * US,
		[TT_ST_NET_OUT] = 10 * US,
	};
	const struct tt_cp_segment *sg;
	struct tt_cp_result r;

	cp = two_waits((struct blk){ .sys = NR_PREAD64,
				     .arg0 = 9,
				     .mode = S_IFREG,
				     .iowait = true },
		       (struct blk){ .sys = -1, .iowait = true });
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	sg = seg_at(&r, 1300 * US);
	TT_CHECK(sg && !strcmp(sg->reason, "pread64 file 8:1 iowait"));
	sg = seg_at(&r, 1600 * US);
	TT_CHECK(sg && !strcmp(sg->reason, "fault iowait"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* A preempted thread waits in the runqueue until it runs again. */
static void test_preempted(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1700 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 350 * US,
		[TT_ST_RUNQUEUE] = 150 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	const struct tt_cp_segment *sg;
	struct tt_cp_result r;

	sw_in(&s, 900 * US, 101);
	preempt(&s, 1300 * US, 101);
	sw_in(&s, 1450 * US, 101);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	sg = seg_at(&r, 1400 * US);
	TT_CHECK(sg && sg->state == TT_CP_RUNNABLE && sg->dur == 150 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Events added after a walk are seen by the next walk. */
static void test_add_after_walk(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1700 * US, 101, 101);
	struct tt_cp_result r;
	struct tt_event ev[3];
	int i;

	sw_in(&s, 900 * US, 101);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 500 * US);
	tt_cp_result_free(&r);
	preempt(&s, 1300 * US, 101);
	sw_in(&s, 1450 * US, 101);
	lost(&s, 1500 * US, 1510 * US);
	memcpy(ev, s.ev, sizeof(ev));
	free(s.ev);
	for (i = 0; i < 3; i++)
		TT_CHECK(tt_critpath_add(cp, &ev[i]) == 0);
	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 340 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_RUNQUEUE], 150 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_UNKNOWN], 10 * US);
	TT_CHECK_EQ_U64(r.incomplete, TT_CP_INC_LOST);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Reader -> tokenizer (pipe) -> engine (futex) -> writer (socket). */
static void test_chain(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 2000 * US, 2100 * US, 101, 104);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 827 * US,
		[TT_ST_RUNQUEUE] = 73 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	static const __u32 tids[] = {
		101, 101, 102, 102, 103, 103, 104, 104, 104
	};
	struct tt_cp_result r;
	size_t i;

	cp_chain(&s, 103);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.t_token, 1900 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.nsegs, sizeof(tids) / sizeof(tids[0]));
	for (i = 0; i < r.nsegs && i < sizeof(tids) / sizeof(tids[0]); i++)
		TT_CHECK_EQ_U64(r.segs[i].tid, tids[i]);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Front-end process and engine process: unix socket in, pipe back. */
static void test_cross_process(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1900 * US, 2000 * US, 101, 102);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 785 * US,
		[TT_ST_RUNQUEUE] = 15 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	const struct tt_cp_segment *sg;
	struct tt_cp_result r;

	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 201);
	sw_out(&s, 50 * US, 201,
	       (struct blk){ .sys = NR_RECVMSG, .arg0 = 3, .mode = S_IFSOCK });
	sw_in(&s, 7 * US, 102);
	sw_out(&s, 60 * US, 102,
	       (struct blk){ .sys = NR_READ, .arg0 = 8, .mode = S_IFIFO });
	wake(&s, 1200 * US, 101, 201, 0, NR_SENDMSG, 9);
	sw_in(&s, 1210 * US, 201);
	wake(&s, 1800 * US, 201, 102, 0, NR_WRITE, 4);
	sw_out(&s, 1820 * US, 201,
	       (struct blk){ .sys = NR_RECVMSG, .arg0 = 3, .mode = S_IFSOCK });
	sw_in(&s, 1805 * US, 102);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_token, 1800 * US);
	sg = seg_at(&r, 1500 * US);
	TT_CHECK(sg && sg->tid == 201 && sg->stage == TT_ST_CPU);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
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

static void test_busy_engine(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[3] = {
		req(1, 50 * US, 100 * US, 915 * US, 950 * US, 101, 112),
		req(2, 1000 * US, 1050 * US, 1920 * US, 1960 * US, 101, 113),
		req(3, 2200 * US, 2300 * US, 3920 * US, 4000 * US, 101, 111),
	};
	__u64 want_b[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 50 * US,
		[TT_ST_CPU] = 795 * US,
		[TT_ST_RUNQUEUE] = 20 * US,
		[TT_ST_NET_OUT] = 35 * US,
	};
	__u64 want_c[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 50 * US,
		[TT_ST_CPU] = 860 * US,
		[TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 40 * US,
	};
	__u64 want_a[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_QUEUE] = 595 * US,
		[TT_ST_CPU] = 1015 * US,   [TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 80 * US,
	};
	struct tt_cp_result r[3];
	__u32 w;
	int k;

	rqs[0].t_end = rqs[1].t_end = rqs[2].t_end = 5000 * US;
	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	for (w = 111; w <= 113; w++) {
		sw_in(&s, 1 * US, w);
		sw_out(&s, 2 * US, w,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = w });
	}
	wake(&s, 100 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_in(&s, 110 * US, 102);
	/* hand-offs of C and A while the engine runs: no blocked interval */
	wake(&s, 1060 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	wake(&s, 2310 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	busy_writer(&s, 900 * US, 112);
	for (k = 1; k <= 4; k++) {
		__u64 t = (k * 1000 + 900) * US;

		if (k == 1 || k == 2) {
			busy_writer(&s, t, 112);
			busy_writer(&s, t + 5 * US, 113);
		} else if (k == 3) {
			busy_writer(&s, t, 112);
			busy_writer(&s, t + 5 * US, 111);
			busy_writer(&s, t + 10 * US, 113);
		} else {
			busy_writer(&s, t, 111);
			busy_writer(&s, t + 5 * US, 112);
			busy_writer(&s, t + 10 * US, 113);
		}
	}
	preempt(&s, 5000 * US, 102);
	cp = cp_feed(&s);
	walk(cp, rqs, 3, r);

	check_stages(&r[0], want_b);
	TT_CHECK(r[0].complete);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 100 * US);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r[0].t_token, 900 * US);

	check_stages(&r[1], want_c);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 1050 * US);
	TT_CHECK_EQ_U64(r[1].dispatch, TT_CP_DISP_READ);

	check_stages(&r[2], want_a);
	TT_CHECK(r[2].complete);
	TT_CHECK_EQ_U64(r[2].t_dispatch, 2905 * US);
	/* queued from the reader's wake of the busy engine */
	TT_CHECK_EQ_U64(r[2].t_enqueue, 2310 * US);
	TT_CHECK_EQ_U64(r[2].dispatch, TT_CP_DISP_HANDOFF);
	TT_CHECK_EQ_U64(r[2].t_token, 3905 * US);
	free_results(r, 3);
	tt_critpath_free(cp);
}

/*
 * asyncio-like: one event-loop thread 101 reads and writes every request;
 * the busy engine 102 wakes it once per iteration (socket write) and they
 * share a GIL word. A's path leaves the engine through the GIL and comes
 * back to it: the burst already passed is not skipped a second time.
 */
static void test_busy_engine_shared_loop(void)
{
	const __u64 gil = 0x6000, q = 0x7000;
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[2] = {
		req(1, 50 * US, 100 * US, 915 * US, 950 * US, 101, 101),
		req(2, 2200 * US, 2300 * US, 3915 * US, 3950 * US, 101, 101),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 90 * US,  [TT_ST_RUNQUEUE] = 24 * US,
		[TT_ST_QUEUE] = 590 * US,  [TT_ST_CPU] = 1011 * US,
		[TT_ST_NET_OUT] = 35 * US,
	};
	struct blk epoll = { .sys = NR_EPOLL_WAIT, .arg0 = 3 };
	struct tt_cp_result r[2];
	int i, k;

	rqs[0].t_end = rqs[1].t_end = 5000 * US;
	/* other threads of the process take the GIL often: a lock */
	for (i = 0; i < 10; i++) {
		sw_in(&s, (10 + i * 8) * US, 103);
		sw_out(&s, (14 + i * 8) * US, 103,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	}
	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 10 * US, 102, (struct blk){ .sys = NR_FUTEX, .arg0 = q });
	wake(&s, 110 * US, 101, 102, 0, NR_FUTEX, q);
	sw_out(&s, 120 * US, 101, epoll);
	sw_in(&s, 120 * US, 102);
	for (k = 0; k <= 4; k++) {
		__u64 t = (k * 1000 + 900) * US;

		wake(&s, t, 102, 101, 0, NR_WRITE, 9);
		sw_in(&s, t + 10 * US, 101);
		sw_out(&s, t + 30 * US, 101, epoll);
	}
	/* A arrives, is read and queued while the engine runs */
	wake(&s, 2200 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 2210 * US, 101);
	wake(&s, 2310 * US, 101, 102, 0, NR_FUTEX, q);
	sw_out(&s, 2320 * US, 101, epoll);
	/* mid-iteration the loop takes the GIL and gives it back */
	wake(&s, 3390 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 3393 * US, 101);
	sw_out(&s, 3395 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	wake(&s, 3400 * US, 102, 101, 0, NR_FUTEX, gil);
	sw_out(&s, 3400 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = gil });
	sw_in(&s, 3402 * US, 101);
	wake(&s, 3450 * US, 101, 102, 0, NR_FUTEX, gil);
	sw_out(&s, 3460 * US, 101, epoll);
	sw_in(&s, 3452 * US, 102);
	preempt(&s, 5000 * US, 102);
	cp = cp_feed(&s);
	walk(cp, rqs, 2, r);
	TT_CHECK(r[0].complete);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 110 * US);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	check_stages(&r[1], want);
	TT_CHECK(r[1].complete);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 2900 * US);
	TT_CHECK_EQ_U64(r[1].t_enqueue, 2310 * US);
	TT_CHECK_EQ_U64(r[1].dispatch, TT_CP_DISP_HANDOFF);
	TT_CHECK_EQ_U64(r[1].t_token, 3900 * US);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/*
 * CPython-like: the reader/writer thread 101 hands the request to the
 * engine 102 through word 0x7000, then 102 wakes 101 through word to_l
 * and 101 wakes 102 through word to_e, n times each, before 101 writes
 * at *fw. With to_l == to_e the two threads pass a GIL back and forth.
 */
static struct tt_critpath *gil_stream(int n, __u64 to_l, __u64 to_e, __u64 *fw)
{
	struct stream s = { 0 };
	__u64 e_in = 1210 * US;
	int i;

	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	wake(&s, 1200 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_out(&s, 1205 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = to_l });
	sw_in(&s, e_in, 102);
	for (i = 0; i < n; i++) {
		wake(&s, e_in + 10 * US, 102, 101, 0, NR_FUTEX, to_l);
		sw_out(&s, e_in + 10 * US, 102,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = to_e });
		sw_in(&s, e_in + 12 * US, 101);
		wake(&s, e_in + 20 * US, 101, 102, 0, NR_FUTEX, to_e);
		sw_out(&s, e_in + 20 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = to_l });
		sw_in(&s, e_in + 22 * US, 102);
		e_in += 22 * US;
	}
	wake(&s, e_in + 10 * US, 102, 101, 0, NR_FUTEX, to_l);
	sw_out(&s, e_in + 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	sw_in(&s, e_in + 12 * US, 101);
	*fw = e_in + 20 * US;
	return cp_feed(&s);
}

static void test_gil_lock(void)
{
	const __u64 n = 100, gil = 0x6000;
	__u64 fw;
	struct tt_critpath *cp = gil_stream(n, gil, gil, &fw);
	struct tt_cp_request rqs[10] = {
		req(1, 1000 * US, 1100 * US, fw, fw + 50 * US, 101, 101),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = (n * 18 + 118) * US,
		[TT_ST_RUNQUEUE] = (10 + n * 4 + 2) * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath_stats st;
	struct tt_cp_result r[10];

	/* passed hundreds of times for one request */
	walk(cp, rqs, 1, r);
	check_stages(&r[0], want);
	TT_CHECK(r[0].complete);
	/* the GIL wakes by the reader are followed, not taken as pick-ups */
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	/* the writer's wakes were all through the lock */
	TT_CHECK_EQ_U64(r[0].t_token, fw);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.lock_words, 1);
	tt_cp_result_free(&r[0]);
	tt_critpath_free(cp);

	/*
	 * Passed twice, among ten requests (nine not walked): few waits per
	 * request, but each thread both waits on the word and wakes it.
	 */
	cp = gil_stream(2, gil, gil, &fw);
	rqs[0] = req(1, 1000 * US, 1100 * US, fw, fw + 50 * US, 101, 101);
	walk(cp, rqs, 10, r);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 0);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_CPU], (2 * 18 + 118) * US);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.lock_words, 1);
	free_results(r, 10);
	tt_critpath_free(cp);

	/* one word each way, waited on hundreds of times for one request */
	cp = gil_stream(n, 0x6100, 0x6200, &fw);
	rqs[0] = req(1, 1000 * US, 1100 * US, fw, fw + 50 * US, 101, 101);
	walk(cp, rqs, 1, r);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1200 * US);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.lock_words, 2);
	tt_cp_result_free(&r[0]);
	tt_critpath_free(cp);

	/* one word each way, each waited on by one thread: hand-offs, and
	 * the reader's last one is the pick-up; the exchanges before it are
	 * walked, nothing is queued */
	cp = gil_stream(2, 0x6100, 0x6200, &fw);
	rqs[0] = req(1, 1000 * US, 1100 * US, fw, fw + 50 * US, 101, 101);
	walk(cp, rqs, 10, r);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1252 * US);
	TT_CHECK_EQ_U64(r[0].t_enqueue, 1252 * US);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 0);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_CPU], 154 * US);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_RUNQUEUE], 20 * US);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.lock_words, 0);
	free_results(r, 10);
	tt_critpath_free(cp);
}

/* On TCP loopback the receiver's wakeup runs in softirq with the sender as
 * current: followed when the sender is traced, else a network wait. */
static struct tt_critpath *loopback_stream(__u32 sender, struct blk b)
{
	struct stream s = { 0 };

	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 201);
	sw_out(&s, 50 * US, 201, b);
	wake(&s, 1200 * US, sender, 201, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1210 * US, 201);
	return cp_feed(&s);
}

static void test_loopback_softirq(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1700 * US, 101, 201);
	struct blk sock = { .sys = NR_RECVFROM, .arg0 = 3, .mode = S_IFSOCK };
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 490 * US,
		[TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	struct tt_critpath *cp = loopback_stream(101, sock);
	const struct tt_cp_segment *sg;
	struct tt_cp_result r;

	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_token, 1200 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* an untraced sender: the wait on the socket is network */
	cp = loopback_stream(UNTRACED, sock);
	want[TT_ST_CPU] = 390 * US;
	want[TT_ST_NET_OUT] = 200 * US;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK_EQ_U64(r.t_dispatch, 1100 * US);
	sg = seg_at(&r, 1150 * US);
	TT_CHECK(sg && sg->tid == 201 && sg->state == TT_CP_BLOCKED &&
		 !strcmp(sg->reason, "recvfrom socket"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* a softirq landing on a traced thread does not end a sleep */
	cp = loopback_stream(101, (struct blk){ .sys = NR_NANOSLEEP });
	want[TT_ST_NET_OUT] = 100 * US;
	want[TT_ST_SLEEP] = 100 * US;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/* Records lost during the walk: that time is unknown, the request
 * incomplete; a later request clear of the loss stays complete. */
static void test_lost(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[2] = {
		req(1, 1000 * US, 1050 * US, 1500 * US, 1600 * US, 101, 101),
		req(2, 5000 * US, 5050 * US, 5500 * US, 5600 * US, 101, 101),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 40 * US,   [TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_CPU] = 350 * US,	    [TT_ST_UNKNOWN] = 100 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	const struct tt_cp_segment *sg;
	struct tt_cp_result r[2];
	int i;

	for (i = 0; i < 2; i++) {
		__u64 base = i * 4000 * US;

		sw_in(&s, base + 100 * US, 101);
		sw_out(&s, base + 200 * US, 101,
		       (struct blk){ .sys = NR_RECVFROM, .mode = S_IFSOCK });
		wake(&s, base + 1000 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
		sw_in(&s, base + 1010 * US, 101);
		sw_out(&s, base + 1700 * US, 101,
		       (struct blk){ .sys = NR_EPOLL_WAIT });
	}
	lost(&s, 1200 * US, 1300 * US);
	cp = cp_feed(&s);
	walk(cp, rqs, 2, r);
	check_stages(&r[0], want);
	TT_CHECK(!r[0].complete);
	TT_CHECK(r[0].incomplete & TT_CP_INC_LOST);
	sg = seg_at(&r[0], 1250 * US);
	TT_CHECK(sg && sg->state == TT_CP_NODATA && sg->start == 1200 * US &&
		 sg->dur == 100 * US);
	want[TT_ST_CPU] = 450 * US;
	want[TT_ST_UNKNOWN] = 0;
	check_stages(&r[1], want);
	TT_CHECK(r[1].complete);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/* Sleep, a futex nobody traced released, an unexplained wait; and a
 * writer with no events before part of the path. */
static void test_sleep_lock_unknown(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[2] = {
		req(1, 1000 * US, 1100 * US, 2100 * US, 2200 * US, 101, 101),
		req(2, 1000 * US, 1100 * US, 1600 * US, 1700 * US, 105, 105),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_CPU] = 395 * US,
		[TT_ST_SLEEP] = 100 * US,   [TT_ST_LOCK] = 200 * US,
		[TT_ST_UNKNOWN] = 300 * US, [TT_ST_RUNQUEUE] = 5 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	__u64 want2[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 100 * US,
		[TT_ST_UNKNOWN] = 400 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	const struct tt_cp_segment *sg;
	struct tt_cp_result r[2];

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101, (struct blk){ .sys = NR_NANOSLEEP });
	wake(&s, 1300 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1300 * US, 101);
	sw_out(&s, 1400 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x5000 });
	wake(&s, 1600 * US, UNTRACED, 101, 0, NR_FUTEX, 0x5000);
	sw_in(&s, 1605 * US, 101);
	sw_out(&s, 1700 * US, 101,
	       (struct blk){ .sys = NR_EPOLL_WAIT, .arg0 = 3 });
	wake(&s, 2000 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 2000 * US, 101);
	sw_in(&s, 1500 * US, 105);
	cp = cp_feed(&s);
	walk(cp, rqs, 2, r);
	check_stages(&r[0], want);
	TT_CHECK(r[0].complete);
	sg = seg_at(&r[0], 1500 * US);
	TT_CHECK(sg && !strcmp(sg->reason, "futex 0x5000"));
	sg = seg_at(&r[0], 1250 * US);
	TT_CHECK(sg && sg->stage == TT_ST_SLEEP &&
		 !strcmp(sg->reason, "nanosleep"));
	check_stages(&r[1], want2);
	TT_CHECK(!r[1].complete);
	TT_CHECK_EQ_U64(r[1].incomplete, TT_CP_INC_NO_DATA);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 1100 * US);
	sg = seg_at(&r[1], 1200 * US);
	TT_CHECK(sg && sg->state == TT_CP_NODATA && sg->tid == 105);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/* Unknown ends are not walked; inconsistent times are clamped. */
static void test_not_walked_and_clamps(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[5] = {
		req(1, 0, 1100 * US, 1500 * US, 1600 * US, 101, 101),
		req(2, 1000 * US, 1100 * US, 1500 * US, 0, 101, 101),
		req(3, 1000 * US, 1100 * US, 1500 * US, 1600 * US, 101, 0),
		/* read after the first write, write after the wire */
		req(4, 1000 * US, 1550 * US, 1500 * US, 1600 * US, 101, 101),
		req(5, 1000 * US, 0, 1700 * US, 1600 * US, 101, 101),
	};
	struct tt_cp_result r[5];

	sw_in(&s, 900 * US, 101);
	cp = cp_feed(&s);
	walk(cp, rqs, 5, r);
	TT_CHECK_EQ_U64(r[0].incomplete, TT_CP_INC_NOT_WALKED);
	TT_CHECK_EQ_U64(r[1].incomplete, TT_CP_INC_NOT_WALKED);
	TT_CHECK_EQ_U64(r[2].incomplete, TT_CP_INC_NOT_WALKED);
	TT_CHECK(r[3].complete);
	TT_CHECK_EQ_U64(r[3].t_dispatch, 1550 * US);
	TT_CHECK_EQ_U64(r[3].t_token, 1550 * US);
	TT_CHECK_EQ_U64(r[3].stage_ns[TT_ST_NET_IN], 550 * US);
	TT_CHECK_EQ_U64(r[3].stage_ns[TT_ST_NET_OUT], 50 * US);
	TT_CHECK_EQ_U64(r[4].incomplete, TT_CP_INC_NO_READ);
	TT_CHECK_EQ_U64(r[4].stage_ns[TT_ST_CPU], 600 * US);
	free_results(r, 5);
	tt_critpath_free(cp);
}

/* A wake traced just before its target's blocking switch-out completes
 * still hands the path over; one long before a later block does not. */
static void test_wake_race(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rqs[2] = {
		req(1, 1000 * US, 1100 * US, 1500 * US, 1600 * US, 101, 102),
		req(2, 3000 * US, 3100 * US, 3500 * US, 3600 * US, 103, 102),
	};
	struct tt_cp_result r[2];

	sw_in(&s, 0, 101);
	sw_in(&s, 0, 103);
	sw_in(&s, 5 * US, 102);
	wake(&s, 1200 * US, 101, 102, 0, NR_FUTEX, 0x10);
	sw_out(&s, 1203 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x10 });
	sw_in(&s, 1210 * US, 102);
	/* woken while running at 2000, blocks for another reason at 2500 */
	wake(&s, 2000 * US, 103, 102, 0, NR_FUTEX, 0x10);
	sw_out(&s, 2500 * US, 102, (struct blk){ .sys = NR_EPOLL_WAIT });
	wake(&s, 3200 * US, 0, 102, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 3200 * US, 102);
	cp = cp_feed(&s);
	walk(cp, rqs, 2, r);
	TT_CHECK(r[0].complete);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1203 * US);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 0);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_CPU], 393 * US);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_RUNQUEUE], 7 * US);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 3100 * US);
	TT_CHECK_EQ_U64(r[1].stage_ns[TT_ST_UNKNOWN], 100 * US);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/* A thread created for the request: the walk goes back to its creator. */
static void test_new_thread(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1500 * US, 1600 * US, 101, 106);
	struct tt_cp_result r;
	struct tt_event *ev;

	sw_in(&s, 0, 101);
	ev = ev_new(&s, TT_EV_FORK, 1190 * US, 101);
	ev->fork.child_tid = 106;
	ev->fork.child_tgid = 100;
	strcpy(ev->fork.comm, "worker");
	ev = ev_new(&s, TT_EV_WAKEUP_NEW, 1200 * US, 101);
	ev->wake.target_tid = 106;
	ev->wake.target_tgid = 100;
	ev->wake.waker_syscall = 56;
	sw_in(&s, 1210 * US, 106);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_RUNQUEUE], 10 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 390 * US);
	TT_CHECK(tt_critpath_comm(cp, 106) &&
		 !strcmp(tt_critpath_comm(cp, 106), "worker"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * Waits on anon inodes (eventfd, timerfd, epoll, io_uring) that nothing
 * traced ends are unknown, never storage: on recent kernels their shared
 * inode is S_IFREG, and io_uring sets in_iowait.
 */
static struct tt_critpath *anon_stream(bool anon)
{
	return two_waits((struct blk){ .sys = NR_READ,
				       .arg0 = 9,
				       .mode = S_IFREG,
				       .anon = anon },
			 (struct blk){ .sys = NR_IO_URING_ENTER,
				       .arg0 = 4,
				       .mode = S_IFREG,
				       .iowait = true,
				       .anon = anon });
}

static void test_anon_inode(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1790 * US, 1800 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_CPU] = 180 * US,
		[TT_ST_UNKNOWN] = 490 * US, [TT_ST_RUNQUEUE] = 20 * US,
		[TT_ST_NET_OUT] = 10 * US,
	};
	struct tt_cp_request rq2 =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1700 * US, 101, 102);
	__u64 want2[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 490 * US,
		[TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	struct tt_critpath *cp = anon_stream(true);
	const struct tt_cp_segment *sg;
	struct stream s = { 0 };
	struct tt_cp_result r;

	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	sg = seg_at(&r, 1300 * US);
	TT_CHECK(sg && sg->state == TT_CP_BLOCKED &&
		 !strcmp(sg->reason, "read anon"));
	sg = seg_at(&r, 1600 * US);
	TT_CHECK(sg && sg->stage == TT_ST_UNKNOWN &&
		 !strcmp(sg->reason, "io_uring_enter anon iowait"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* the same waits on real files are storage */
	cp = anon_stream(false);
	want[TT_ST_UNKNOWN] = 0;
	want[TT_ST_STORAGE] = 490 * US;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	sg = seg_at(&r, 1300 * US);
	TT_CHECK(sg && !strcmp(sg->reason, "read file 8:1"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* an eventfd a traced thread writes is a hand-off, followed */
	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 50 * US, 102,
	       (struct blk){ .sys = NR_READ,
			     .arg0 = 7,
			     .mode = S_IFREG,
			     .anon = true });
	wake(&s, 1200 * US, 101, 102, 0, NR_WRITE, 7);
	sw_in(&s, 1210 * US, 102);
	cp = cp_feed(&s);
	walk(cp, &rq2, 1, &r);
	check_stages(&r, want2);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
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

static void check_iv(const struct tt_cp_interval *iv, __u64 start, __u64 end,
		     enum tt_cp_state state, enum tt_stage stage,
		     const char *reason)
{
	TT_CHECK_EQ_U64(iv->start, start);
	TT_CHECK_EQ_U64(iv->end, end);
	TT_CHECK_EQ_U64(iv->state, state);
	TT_CHECK_EQ_U64(iv->stage, stage);
	if (strcmp(iv->reason, reason))
		fprintf(stderr, "  reason \"%s\", want \"%s\"\n", iv->reason,
			reason);
	TT_CHECK(!strcmp(iv->reason, reason));
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

	TT_CHECK_EQ_U64(tt_critpath_nthreads(cp), 2);
	TT_CHECK(tt_critpath_thread(cp, 0, &tid, &tgid) == 0 && tid == 101 &&
		 tgid == 100);
	TT_CHECK(tt_critpath_thread(cp, 1, &tid, &tgid) == 0 && tid == 102);
	TT_CHECK(tt_critpath_thread(cp, 2, &tid, &tgid) == -ERANGE);
	TT_CHECK(tt_critpath_intervals(cp, 555, 0, iv_collect, &l) == -ENOENT);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.first_ts, 100 * US);
	TT_CHECK_EQ_U64(st.last_ts, 1000 * US);

	TT_CHECK(tt_critpath_intervals(cp, 101, 0, iv_collect, &l) == 0);
	/* the switch-out after its exit is not a wait */
	TT_CHECK_EQ_U64(l.n, 6);
	if (l.n == 6) {
		check_iv(&l.v[0], 100 * US, 300 * US, TT_CP_RUNNING, TT_ST_CPU,
			 "on-cpu");
		check_iv(&l.v[1], 300 * US, 400 * US, TT_CP_RUNNABLE,
			 TT_ST_RUNQUEUE, "preempted");
		check_iv(&l.v[3], 500 * US, 700 * US, TT_CP_BLOCKED, TT_ST_LOCK,
			 "futex 0x42");
		check_iv(&l.v[4], 700 * US, 710 * US, TT_CP_RUNNABLE,
			 TT_ST_RUNQUEUE, "woken by 102");
		TT_CHECK_EQ_U64(l.v[4].waker_tid, 102);
		TT_CHECK_EQ_U64(l.v[1].waker_tid, 0);
		check_iv(&l.v[5], 710 * US, 820 * US, TT_CP_RUNNING, TT_ST_CPU,
			 "on-cpu");
		TT_CHECK(!l.v[5].open_end);
	}

	memset(&l, 0, sizeof(l));
	TT_CHECK(tt_critpath_intervals(cp, 102, 0, iv_collect, &l) == 0);
	TT_CHECK_EQ_U64(l.n, 2);
	if (l.n == 2) {
		check_iv(&l.v[0], 600 * US, 900 * US, TT_CP_RUNNING, TT_ST_CPU,
			 "on-cpu");
		TT_CHECK(!l.v[0].open_end);
		/* still blocked at the end of the trace */
		check_iv(&l.v[1], 900 * US, 1000 * US, TT_CP_BLOCKED,
			 TT_ST_UNKNOWN, "epoll_wait anon");
		TT_CHECK(l.v[1].open_end);
	}

	/* a view that ends later stretches the open state, not the rest */
	memset(&l, 0, sizeof(l));
	TT_CHECK(tt_critpath_intervals(cp, 102, 1500 * US, iv_collect, &l) ==
		 0);
	TT_CHECK(l.n == 2 && l.v[0].end == 900 * US &&
		 l.v[1].end == 1500 * US && l.v[1].open_end);
	memset(&l, 0, sizeof(l));
	TT_CHECK(tt_critpath_intervals(cp, 102, 950 * US, iv_collect, &l) == 0);
	TT_CHECK(l.n == 2 && l.v[1].end == 1000 * US);

	/* the callback stops the walk and its value comes back */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	TT_CHECK(tt_critpath_intervals(cp, 101, 0, iv_collect, &l) == 7);
	TT_CHECK_EQ_U64(l.n, 2);
	tt_critpath_free(cp);
}

/* ---- GPU ---- */

#define NR_PPOLL 271
/* _IOWR('F', 0x2A, 32): NV_ESC_RM_CONTROL on /dev/nvidiactl */
#define NV_RM_CONTROL 0xc020462aU
/* The stub's device node, a FIFO on a filesystem of its own. */
#define STUB_DEV ((0u << 20) | 42)
#define STUB_INO 777ULL

static const struct blk stub_poll = {
	.sys = NR_POLL,
	.arg0 = 0x7f00,
	.mode = S_IFIFO,
	.dev = STUB_DEV,
	.ino = STUB_INO,
};

static void add_stub_device(struct tt_critpath *cp)
{
	struct tt_dev_info d = {
		.path = "/tmp/ttftrace-test/stubcuda-4242.nvidia0",
		.kind = TT_GPU_USER,
		.dev = STUB_DEV,
		.ino = STUB_INO,
	};

	TT_CHECK(tt_critpath_add_gpu_device(cp, &d) == 0);
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

	TT_CHECK(tt_critpath_add_gpu_device(cp, &d) == 0);
}

/* seg_at(r, t) is (state, stage, reason) and, when start, starts there
 * and lasts dur. */
static void check_seg(const struct tt_cp_result *r, __u64 t, __u32 tid,
		      enum tt_cp_state state, enum tt_stage stage,
		      const char *reason, __u64 start, __u64 dur)
{
	const struct tt_cp_segment *sg = seg_at(r, t);

	TT_CHECK(sg != NULL);
	if (!sg)
		return;
	if (strcmp(sg->reason, reason))
		fprintf(stderr, "  at %llu: reason \"%s\", want \"%s\"\n",
			(unsigned long long)t, sg->reason, reason);
	TT_CHECK(!strcmp(sg->reason, reason));
	TT_CHECK_EQ_U64(sg->tid, tid);
	TT_CHECK_EQ_U64(sg->state, state);
	TT_CHECK_EQ_U64(sg->stage, stage);
	if (start) {
		TT_CHECK_EQ_U64(sg->start, start);
		TT_CHECK_EQ_U64(sg->dur, dur);
	}
}

/*
 * Spin-mode sync: on CPU inside cuStreamSynchronize is GPU time to the ns,
 * a preemption inside it stays runqueue; inside a launch it is launch
 * overhead (CPU). An engine with no sync before is idle: t_dispatch is
 * t_read.
 */
static void test_gpu_spin_sync(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_CPU] = 200 * US,
		[TT_ST_GPU] = 280 * US,	   [TT_ST_RUNQUEUE] = 20 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath_stats st;
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;
	struct tt_event *ev;

	sw_in(&s, 900 * US, 101);
	gpu_call(&s, 1150 * US, 1160 * US, 101, "cuLaunchKernel");
	gpu_call(&s, 1200 * US, 1500 * US, 101, "cuStreamSynchronize");
	preempt(&s, 1300 * US, 101);
	sw_in(&s, 1320 * US, 101);
	/* a call whose entry was not seen has no interval */
	ev = ev_new(&s, TT_EV_GPU_CALL, 1550 * US, 101);
	ev->call.fn = cuda_fn("cuCtxSynchronize");
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_READ);
	TT_CHECK_EQ_U64(r.t_dispatch, 1100 * US);
	TT_CHECK_EQ_U64(r.t_token, 1600 * US);
	check_seg(&r, 1155 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuLaunchKernel", 1150 * US, 10 * US);
	check_seg(&r, 1170 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1160 * US, 40 * US);
	check_seg(&r, 1250 * US, 101, TT_CP_RUNNING, TT_ST_GPU,
		  "sync cuStreamSynchronize", 1200 * US, 100 * US);
	check_seg(&r, 1310 * US, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
		  "runqueue", 1300 * US, 20 * US);
	check_seg(&r, 1400 * US, 101, TT_CP_RUNNING, TT_ST_GPU,
		  "sync cuStreamSynchronize", 1320 * US, 180 * US);
	check_seg(&r, 1550 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1500 * US, 100 * US);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.gpu_calls, 2);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * Blocking-mode sync with the stub's device: engine 101 (reader and
 * writer) launches, which wakes the device thread 103; it sleeps in ppoll
 * on the device FIFO until the kernel ends (a timer interrupt), then
 * writes a byte that wakes 101, blocked in poll on the FIFO inside
 * cuStreamSynchronize.
 */
static struct tt_critpath *blocking_sync(bool calls)
{
	struct stream s = { 0 };

	sw_in(&s, 900 * US, 101);
	sw_in(&s, 950 * US, 103);
	sw_out(&s, 1000 * US, 103,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x500 });
	wake(&s, 1158 * US, 101, 103, 0, NR_FUTEX, 0x500);
	sw_in(&s, 1159 * US, 103);
	sw_out(&s, 1165 * US, 103,
	       (struct blk){ .sys = NR_PPOLL,
			     .arg0 = 0x7f10,
			     .mode = S_IFIFO,
			     .dev = STUB_DEV,
			     .ino = STUB_INO });
	sw_out(&s, 1210 * US, 101, stub_poll);
	wake(&s, 1500 * US, 0, 103, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1502 * US, 103);
	wake(&s, 1540 * US, 103, 101, 0, NR_WRITE, 6);
	sw_out(&s, 1545 * US, 103,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x500 });
	sw_in(&s, 1550 * US, 101);
	if (calls) {
		gpu_call(&s, 1150 * US, 1160 * US, 101, "cuLaunchKernel");
		gpu_call(&s, 1200 * US, 1560 * US, 101, "cuStreamSynchronize");
	}
	return cp_feed(&s);
}

static void test_gpu_blocking_sync(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_CPU] = 140 * US,
		[TT_ST_GPU] = 350 * US,	   [TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct iv_list l = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;
	int pass;

	/* with and without the device registered: the sync call says it */
	for (pass = 0; pass < 2; pass++) {
		cp = blocking_sync(true);
		if (pass)
			add_stub_device(cp);
		walk(cp, &rq, 1, &r);
		check_stages(&r, want);
		TT_CHECK(r.complete);
		TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_READ);
		TT_CHECK_EQ_U64(r.t_token, 1600 * US);
		/* the device thread's wake is not followed */
		check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_GPU,
			  "sync cuStreamSynchronize", 1210 * US, 330 * US);
		check_seg(&r, 1545 * US, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
			  "runqueue", 1540 * US, 10 * US);
		check_seg(&r, 1555 * US, 101, TT_CP_RUNNING, TT_ST_GPU,
			  "sync cuStreamSynchronize", 1550 * US, 10 * US);
		tt_cp_result_free(&r);
		memset(&l, 0, sizeof(l));
		TT_CHECK(tt_critpath_intervals(cp, 101, 0, iv_collect, &l) ==
			 0);
		TT_CHECK(l.n >= 2);
		if (l.n >= 2)
			check_iv(&l.v[1], 1210 * US, 1540 * US, TT_CP_BLOCKED,
				 TT_ST_GPU, "sync cuStreamSynchronize");
		tt_critpath_free(cp);
	}

	/* no CUDA probes: the wait on the device FIFO is GPU time */
	cp = blocking_sync(false);
	add_stub_device(cp);
	walk(cp, &rq, 1, &r);
	want[TT_ST_CPU] = 160 * US;
	want[TT_ST_GPU] = 330 * US;
	check_stages(&r, want);
	check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_GPU,
		  "poll stubcuda-4242.nvidia0", 1210 * US, 330 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* nothing says GPU: the wake is followed into the device thread */
	cp = blocking_sync(false);
	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_GPU], 0);
	check_seg(&r, 1300 * US, 103, TT_CP_BLOCKED, TT_ST_UNKNOWN,
		  "ppoll pipe", 1165 * US, 335 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * An ioctl on /dev/nvidia0 blocks until a hard interrupt (landing on
 * traced thread 102) ends it: GPU time named by the ioctl, and the
 * driver's on-CPU time inside the ioctl is CPU named by it too.
 */
static struct tt_critpath *nvidia_ioctl(bool ioctl_ev)
{
	struct stream s = { 0 };

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101,
	       (struct blk){ .sys = NR_IOCTL,
			     .arg0 = 7,
			     .mode = S_IFCHR,
			     .rdev = GPU_RDEV });
	sw_in(&s, 1400 * US, 102);
	wake(&s, 1500 * US, 102, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1510 * US, 101);
	if (ioctl_ev)
		gpu_ioctl(&s, 1190 * US, 1520 * US, 101, NV_RM_CONTROL,
			  GPU_RDEV);
	return cp_feed(&s);
}

static void test_gpu_chardev(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_CPU] = 190 * US,
		[TT_ST_GPU] = 300 * US,	   [TT_ST_RUNQUEUE] = 10 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath_stats st;
	struct tt_critpath *cp = nvidia_ioctl(true);
	struct stream s = { 0 };
	struct tt_cp_result r;

	add_nvidia0(cp);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	check_seg(&r, 1195 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "ioctl NV_ESC_RM_CONTROL", 1190 * US, 10 * US);
	check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_GPU,
		  "ioctl NV_ESC_RM_CONTROL", 1200 * US, 300 * US);
	check_seg(&r, 1515 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "ioctl NV_ESC_RM_CONTROL", 1510 * US, 10 * US);
	check_seg(&r, 1550 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1520 * US, 80 * US);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.ioctls, 1);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* no ioctl event: the device's path names the wait */
	cp = nvidia_ioctl(false);
	add_nvidia0(cp);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_GPU,
		  "ioctl /dev/nvidia0", 1200 * US, 300 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* an ioctl event on a device nobody registered says nothing */
	cp = nvidia_ioctl(true);
	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_GPU], 0);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_UNKNOWN], 300 * US);
	check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_UNKNOWN,
		  "ioctl chr 195:0", 1200 * US, 300 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* a poll on the device that a traced thread ends: not followed */
	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101,
	       (struct blk){ .sys = NR_POLL,
			     .arg0 = 0x7f00,
			     .mode = S_IFCHR,
			     .rdev = GPU_RDEV });
	sw_in(&s, 1400 * US, 102);
	wake(&s, 1500 * US, 102, 101, 0, NR_WRITE, 9);
	sw_in(&s, 1510 * US, 101);
	cp = cp_feed(&s);
	add_nvidia0(cp);
	walk(cp, &rq, 1, &r);
	want[TT_ST_CPU] = 190 * US;
	check_stages(&r, want);
	check_seg(&r, 1300 * US, 101, TT_CP_BLOCKED, TT_ST_GPU,
		  "poll /dev/nvidia0", 1200 * US, 300 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * Blocked inside a launch on a lock that traced thread 102 releases: not
 * launch overhead nor GPU, the ordinary rules follow the holder.
 */
static void test_gpu_launch_blocked(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1300 * US, 1350 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = 198 * US,
		[TT_ST_RUNQUEUE] = 2 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;

	sw_in(&s, 900 * US, 101);
	sw_in(&s, 1000 * US, 102);
	gpu_call(&s, 1150 * US, 1180 * US, 101, "cuLaunchKernel_ptsz");
	sw_out(&s, 1155 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x77 });
	wake(&s, 1170 * US, 102, 101, 0, NR_FUTEX, 0x77);
	sw_in(&s, 1172 * US, 101);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_READ);
	check_seg(&r, 1175 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuLaunchKernel_ptsz", 1172 * US, 8 * US);
	check_seg(&r, 1150 * US, 102, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1100 * US, 70 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * An eager forward pass: 10 launches back to back make one CPU segment
 * (the time between them included); 7 stay pieces of their own; an ioctl
 * between two launches breaks the run.
 */
static void test_gpu_launch_run(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1900 * US, 1950 * US, 101, 101);
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;
	int i;

	sw_in(&s, 900 * US, 101);
	for (i = 0; i < 10; i++)
		gpu_call(&s, (1200 + i * 7) * US, (1205 + i * 7) * US, 101,
			 "cuLaunchKernel");
	for (i = 0; i < 7; i++)
		gpu_call(&s, (1400 + i * 7) * US, (1405 + i * 7) * US, 101,
			 "cuLaunchKernel");
	/* 4 + ioctl + 5 */
	for (i = 0; i < 10; i++)
		gpu_call(&s, (1600 + i * 7) * US, (1605 + i * 7) * US, 101,
			 "cuLaunchKernel");
	gpu_ioctl(&s, 1626 * US, 1627 * US, 101, NV_RM_CONTROL, GPU_RDEV);
	cp = cp_feed(&s);
	add_nvidia0(cp);
	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 800 * US);
	check_seg(&r, 1203 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch x10 cuLaunchKernel", 1200 * US, 68 * US);
	check_seg(&r, 1406 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1405 * US, 2 * US);
	check_seg(&r, 1409 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuLaunchKernel", 1407 * US, 5 * US);
	check_seg(&r, 1601 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuLaunchKernel", 1600 * US, 5 * US);
	check_seg(&r, 1626 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "ioctl NV_ESC_RM_CONTROL", 1626 * US, 1 * US);
	/* net.in, cpu, the run, cpu, 7 launches and 6 gaps, cpu, 10 launches
	 * and 9 gaps (one an ioctl and a bit), cpu, net.out */
	TT_CHECK_EQ_U64(r.nsegs, 40);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * Engine 102 runs iterations k = first..last back to back, on CPU all the
 * time: launches at k000 and k010 us (10 us each), a spin-wait sync over
 * [k100, k900) us, then hands tokens off until (k+1)000 us.
 */
static void engine_loop(struct stream *s, __u32 tid, int first, int last)
{
	int k;

	for (k = first; k <= last; k++) {
		__u64 t = k * 1000 * US;

		gpu_call(s, t, t + 10 * US, tid, "cuLaunchKernel");
		gpu_call(s, t + 10 * US, t + 20 * US, tid, "cuGraphLaunch");
		gpu_call(s, t + 100 * US, t + 900 * US, tid,
			 "cuStreamSynchronize");
	}
}

/* The request in rq[ri] walked with the rest, its rule and t_dispatch. */
static void check_dispatch(struct tt_critpath *cp, struct tt_cp_request *rqs,
			   size_t n, size_t ri, enum tt_cp_dispatch rule,
			   __u64 t_dispatch, const __u64 *want)
{
	struct tt_cp_result r[4];

	walk(cp, rqs, n, r);
	if (r[ri].dispatch != rule)
		fprintf(stderr, "  rule %s, want %s\n",
			tt_cp_dispatch_name(r[ri].dispatch),
			tt_cp_dispatch_name(rule));
	TT_CHECK_EQ_U64(r[ri].dispatch, rule);
	TT_CHECK_EQ_U64(r[ri].t_dispatch, t_dispatch);
	TT_CHECK(r[ri].complete);
	if (want)
		check_stages(&r[ri], want);
	free_results(r, n);
}

static void test_gpu_dispatch(void)
{
	struct tt_cp_request rq =
		req(1, 1250 * US, 1300 * US, 2950 * US, 3000 * US, 101, 102);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 50 * US,  [TT_ST_QUEUE] = 700 * US,
		[TT_ST_CPU] = 150 * US,	   [TT_ST_GPU] = 800 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	__u64 want_spin[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 50 * US,
		[TT_ST_QUEUE] = 700 * US,
		[TT_ST_CPU] = 950 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_cp_request rqs[2];
	struct stream s = { 0 };
	struct tt_critpath *cp;
	__u64 k;

	/*
	 * Requests reach the engine through a lock-free ring (no wake) and
	 * the engine writes the tokens itself: read during iteration 1, the
	 * request waits for iteration 2, whose first launch is at 2000 us.
	 */
	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	engine_loop(&s, 102, 1, 3);
	cp = cp_feed(&s);
	check_dispatch(cp, &rq, 1, 0, TT_CP_DISP_GPU, 2000 * US, want);
	/* read after iteration 1's sync ended: nothing shows a queue */
	rq.t_read = 1950 * US;
	check_dispatch(cp, &rq, 1, 0, TT_CP_DISP_READ, 1950 * US, NULL);
	rq.t_read = 1300 * US;
	tt_critpath_free(cp);

	/* tokens through memory too: writer 104 spins, nothing wakes it */
	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	sw_in(&s, 0, 104);
	engine_loop(&s, 102, 1, 3);
	cp = cp_feed(&s);
	rq.writer_tid = 104;
	check_dispatch(cp, &rq, 1, 0, TT_CP_DISP_GPU, 2000 * US, want_spin);
	tt_critpath_free(cp);

	/* ... unless two threads of the process sync: which one is unsure */
	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	sw_in(&s, 0, 104);
	engine_loop(&s, 102, 1, 3);
	gpu_call(&s, 1500 * US, 1600 * US, 105, "cuCtxSynchronize");
	cp = cp_feed(&s);
	check_dispatch(cp, &rq, 1, 0, TT_CP_DISP_READ, 1300 * US, NULL);
	tt_critpath_free(cp);

	/*
	 * Visible hand-offs win: the engine wakes the writers of the live
	 * requests after each sync (105 of request 2, then 104 of this one
	 * too): the queue ends at the previous iteration's hand-off.
	 */
	rqs[0] = req(1, 1250 * US, 1300 * US, 2960 * US, 3000 * US, 101, 104);
	rqs[1] = req(2, 50 * US, 100 * US, 1960 * US, 1990 * US, 101, 105);
	rqs[0].t_end = rqs[1].t_end = 5000 * US;
	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	sw_in(&s, 1 * US, 104);
	sw_out(&s, 2 * US, 104, (struct blk){ .sys = NR_FUTEX, .arg0 = 104 });
	sw_in(&s, 1 * US, 105);
	sw_out(&s, 2 * US, 105, (struct blk){ .sys = NR_FUTEX, .arg0 = 105 });
	engine_loop(&s, 102, 1, 3);
	for (k = 1; k <= 3; k++) {
		__u64 t = (k * 1000 + 950) * US;

		wake(&s, t - (k == 2 ? 5 * US : 0), 102, 105, 0, NR_FUTEX, 105);
		sw_in(&s, t + 5 * US, 105);
		sw_out(&s, t + 15 * US, 105,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 105 });
	}
	wake(&s, 2950 * US, 102, 104, 0, NR_FUTEX, 104);
	sw_in(&s, 2955 * US, 104);
	cp = cp_feed(&s);
	check_dispatch(cp, rqs, 2, 0, TT_CP_DISP_HANDOFF, 1950 * US, NULL);
	tt_critpath_free(cp);

	/*
	 * A pick-up wins: the engine finishes an iteration after the read,
	 * blocks, and the reader wakes it for this request.
	 */
	rq = req(1, 1250 * US, 1290 * US, 1850 * US, 1900 * US, 101, 102);
	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	gpu_call(&s, 1000 * US, 1010 * US, 102, "cuLaunchKernel");
	gpu_call(&s, 1100 * US, 1295 * US, 102, "cuStreamSynchronize");
	sw_out(&s, 1297 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x7000 });
	wake(&s, 1300 * US, 101, 102, 0, NR_FUTEX, 0x7000);
	sw_in(&s, 1305 * US, 102);
	gpu_call(&s, 1310 * US, 1320 * US, 102, "cuLaunchKernel");
	gpu_call(&s, 1400 * US, 1800 * US, 102, "cuStreamSynchronize");
	cp = cp_feed(&s);
	check_dispatch(cp, &rq, 1, 0, TT_CP_DISP_PICKUP, 1300 * US, NULL);
	tt_critpath_free(cp);
}

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

/* The read-only call iterator; a call with calls nested in it comes as
 * the pieces around them, and the innermost names the time. */
static void test_gpu_calls(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101, 101);
	struct call_list l = { 0 };
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;
	struct tt_event *ev;

	sw_in(&s, 900 * US, 101);
	gpu_call(&s, 1210 * US, 1220 * US, 101, "cuLaunchKernel");
	gpu_call(&s, 1230 * US, 1240 * US, 101, "cuLaunchKernelEx");
	gpu_call(&s, 1200 * US, 1300 * US, 101, "cuGraphLaunch");
	gpu_ioctl(&s, 1250 * US, 1260 * US, 101, NV_RM_CONTROL, GPU_RDEV);
	gpu_call(&s, 1400 * US, 1500 * US, 101, "cuMemcpyDtoH_v2");
	ev = ev_new(&s, TT_EV_GPU_CALL, 1560 * US, 101);
	ev->call.ts_enter = 1550 * US;
	ev->call.fn = 999;
	ev->call.ret = 700;
	cp = cp_feed(&s);
	add_nvidia0(cp);

	TT_CHECK(tt_critpath_calls(cp, 555, 0, UINT64_MAX, call_collect, &l) ==
		 -ENOENT);
	TT_CHECK(tt_critpath_calls(cp, 101, 1205 * US, 1450 * US, call_collect,
				   &l) == 0);
	/* graph, launch, graph, launch ex, graph (pieces), memcpy; ioctl */
	TT_CHECK_EQ_U64(l.n, 7);
	if (l.n == 7) {
		TT_CHECK(l.v[0].start == 1200 * US && l.v[0].end == 1210 * US &&
			 !strcmp(l.v[0].name, "cuGraphLaunch") &&
			 l.v[0].cls == TT_CUDA_GRAPH &&
			 l.v[0].kind == TT_CP_CALL_CUDA);
		TT_CHECK(l.v[1].start == 1210 * US && l.v[1].end == 1220 * US &&
			 !strcmp(l.v[1].name, "cuLaunchKernel") &&
			 l.v[1].cls == TT_CUDA_LAUNCH);
		TT_CHECK(l.v[2].start == 1220 * US && l.v[2].end == 1230 * US &&
			 !strcmp(l.v[2].name, "cuGraphLaunch"));
		TT_CHECK(l.v[4].start == 1240 * US && l.v[4].end == 1300 * US);
		TT_CHECK(!strcmp(l.v[5].name, "cuMemcpyDtoH_v2") &&
			 l.v[5].cls == TT_CUDA_SYNC);
		TT_CHECK(l.v[6].kind == TT_CP_CALL_IOCTL &&
			 l.v[6].cmd == NV_RM_CONTROL &&
			 l.v[6].start == 1250 * US &&
			 !strcmp(l.v[6].name, "NV_ESC_RM_CONTROL"));
	}
	memset(&l, 0, sizeof(l));
	TT_CHECK(tt_critpath_calls(cp, 101, 1500 * US, UINT64_MAX, call_collect,
				   &l) == 0);
	TT_CHECK(l.n == 1 && !strcmp(l.v[0].name, "cuda#999") &&
		 l.v[0].cls == 0 && l.v[0].ret == 700);

	walk(cp, &rq, 1, &r);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_GPU], 100 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 400 * US);
	check_seg(&r, 1205 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuGraphLaunch", 1200 * US, 10 * US);
	check_seg(&r, 1235 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
		  "launch cuLaunchKernelEx", 1230 * US, 10 * US);
	check_seg(&r, 1450 * US, 101, TT_CP_RUNNING, TT_ST_GPU,
		  "sync cuMemcpyDtoH_v2", 1400 * US, 100 * US);
	/* an unknown function is plain CPU */
	check_seg(&r, 1555 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1500 * US, 100 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * The producer's own work after the read is not queueing (pick-up): the
 * reader 101 tokenizes for 300 us after its read (preempted 50 us of it),
 * then wakes the idle engine 102, which wakes the writer 103.
 */
static void test_pickup_producer_work(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 1700 * US, 1750 * US, 101, 103);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = (250 + 190 + 90) * US,
		[TT_ST_RUNQUEUE] = (50 + 10 + 10) * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_cp_result r;

	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 10 * US, 102, (struct blk){ .sys = NR_FUTEX, .arg0 = 0x70 });
	sw_in(&s, 6 * US, 103);
	sw_out(&s, 11 * US, 103, (struct blk){ .sys = NR_FUTEX, .arg0 = 0x80 });
	preempt(&s, 1200 * US, 101);
	sw_in(&s, 1250 * US, 101);
	wake(&s, 1400 * US, 101, 102, 0, NR_FUTEX, 0x70);
	sw_out(&s, 1405 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	sw_in(&s, 1410 * US, 102);
	wake(&s, 1600 * US, 102, 103, 0, NR_FUTEX, 0x80);
	sw_out(&s, 1605 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x70 });
	sw_in(&s, 1610 * US, 103);
	cp = cp_feed(&s);
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_enqueue, 1400 * US);
	TT_CHECK_EQ_U64(r.t_dispatch, 1400 * US);
	TT_CHECK_EQ_U64(r.t_token, 1600 * US);
	check_seg(&r, 1150 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1100 * US, 100 * US);
	check_seg(&r, 1220 * US, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
		  "runqueue", 1200 * US, 50 * US);
	check_seg(&r, 1300 * US, 101, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1250 * US, 150 * US);
	check_seg(&r, 1405 * US, 102, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
		  "runqueue", 1400 * US, 10 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * A busy engine 102 (on CPU throughout) hands X's token to writer 111 at
 * 1500 us and A's to 112 at 2000 us. Reader 101 reads A at 1100 us,
 * tokenizes (preempted 50 us) and lets it go at 1300 us: blocking, or
 * (event_loop) reading request Y. Only [let go, 1500 us) is queued.
 */
static struct tt_critpath *busy_handoff(bool event_loop)
{
	struct stream s = { 0 };
	__u32 w;

	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	for (w = 111; w <= 112; w++) {
		sw_in(&s, 1, w);
		sw_out(&s, 2, w, (struct blk){ .sys = NR_FUTEX, .arg0 = w });
	}
	preempt(&s, 1200 * US, 101);
	sw_in(&s, 1250 * US, 101);
	if (!event_loop)
		sw_out(&s, 1300 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x90 });
	wake(&s, 1500 * US, 102, 111, 0, NR_FUTEX, 111);
	sw_in(&s, 1505 * US, 111);
	sw_out(&s, 1530 * US, 111,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 111 });
	wake(&s, 2000 * US, 102, 112, 0, NR_FUTEX, 112);
	sw_in(&s, 2010 * US, 112);
	return cp_feed(&s);
}

static void test_handoff_enqueue(void)
{
	struct tt_cp_request rqs[3] = {
		req(1, 50 * US, 100 * US, 1520 * US, 1560 * US, 101, 111),
		req(2, 1000 * US, 1100 * US, 2050 * US, 2100 * US, 101, 112),
		/* read by the event loop, never answered */
		req(3, 1340 * US, 1300 * US, 0, 0, 101, 0),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,   [TT_ST_CPU] = (150 + 540) * US,
		[TT_ST_RUNQUEUE] = 60 * US,  [TT_ST_QUEUE] = 200 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath *cp = busy_handoff(false);
	struct tt_cp_result r[3];
	int pass;

	for (pass = 0; pass < 2; pass++) {
		rqs[0].t_end = rqs[1].t_end = 5000 * US;
		walk(cp, rqs, pass ? 3 : 2, r);
		check_stages(&r[1], want);
		TT_CHECK(r[1].complete);
		TT_CHECK_EQ_U64(r[1].dispatch, TT_CP_DISP_HANDOFF);
		TT_CHECK_EQ_U64(r[1].t_dispatch, 1500 * US);
		TT_CHECK_EQ_U64(r[1].t_enqueue, 1300 * US);
		check_seg(&r[1], 1225 * US, 101, TT_CP_RUNNABLE,
			  TT_ST_RUNQUEUE, "runqueue", 1200 * US, 50 * US);
		check_seg(&r[1], 1275 * US, 101, TT_CP_RUNNING, TT_ST_CPU,
			  "on-cpu", 1250 * US, 50 * US);
		check_seg(&r[1], 1400 * US, 0, TT_CP_PHASE, TT_ST_QUEUE,
			  "queued", 1300 * US, 200 * US);
		check_seg(&r[1], 1600 * US, 102, TT_CP_RUNNING, TT_ST_CPU,
			  "on-cpu", 1500 * US, 500 * US);
		free_results(r, pass ? 3 : 2);
	}
	tt_critpath_free(cp);

	/* an event loop that never blocks lets A go when it reads Y */
	cp = busy_handoff(true);
	rqs[2].t_read = 1350 * US;
	walk(cp, rqs, 3, r);
	want[TT_ST_CPU] = (200 + 540) * US;
	want[TT_ST_QUEUE] = 150 * US;
	check_stages(&r[1], want);
	TT_CHECK_EQ_U64(r[1].t_enqueue, 1350 * US);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 1500 * US);
	free_results(r, 3);
	tt_critpath_free(cp);

	/* without Y it never let A go before the boundary: no queue */
	cp = busy_handoff(true);
	walk(cp, rqs, 2, r);
	want[TT_ST_CPU] = (350 + 540) * US;
	want[TT_ST_QUEUE] = 0;
	check_stages(&r[1], want);
	TT_CHECK_EQ_U64(r[1].t_enqueue, 1500 * US);
	TT_CHECK_EQ_U64(r[1].dispatch, TT_CP_DISP_HANDOFF);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/*
 * One request in flight: reader 101 (also the writer) wakes the idle
 * engine 102 at 1200 us through word 0x3ec; the engine sleeps 1 ms, then
 * signals the condition variable 0x420 at 2300 us while holding the
 * request's mutex 0x3d0: 101 runs, blocks on the mutex at 2330 us, and
 * the engine's unlock wakes it again at 2360 us (the engine on CPU all
 * the while). With double false the engine instead wakes 101 twice
 * through 0x420, sleeping between. No wake is a boundary to another
 * request: the engine picked the request up at 1200 us.
 */
static struct tt_critpath *one_in_flight(bool double_wake)
{
	struct stream s = { 0 };

	sw_in(&s, 0, 101);
	sw_in(&s, 5 * US, 102);
	sw_out(&s, 10 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3ec });
	wake(&s, 1200 * US, 101, 102, 0, NR_FUTEX, 0x3ec);
	sw_out(&s, 1210 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x420 });
	sw_in(&s, 1220 * US, 102);
	sw_out(&s, 1300 * US, 102, (struct blk){ .sys = NR_NANOSLEEP });
	wake(&s, 2290 * US, 0, 102, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 2290 * US, 102);
	if (double_wake) {
		wake(&s, 2300 * US, 102, 101, 0, NR_FUTEX, 0x420);
		sw_in(&s, 2310 * US, 101);
		sw_out(&s, 2330 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3d0 });
		wake(&s, 2360 * US, 102, 101, 0, NR_FUTEX, 0x3d0);
	} else {
		wake(&s, 2295 * US, 102, 101, 0, NR_FUTEX, 0x420);
		sw_out(&s, 2296 * US, 102, (struct blk){ .sys = NR_NANOSLEEP });
		sw_in(&s, 2310 * US, 101);
		sw_out(&s, 2330 * US, 101,
		       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x420 });
		wake(&s, 2350 * US, 0, 102, TT_F_HARDIRQ, -1, 0);
		sw_in(&s, 2350 * US, 102);
		wake(&s, 2360 * US, 102, 101, 0, NR_FUTEX, 0x420);
	}
	sw_out(&s, 2370 * US, 102,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3ec });
	sw_in(&s, 2380 * US, 101);
	return cp_feed(&s);
}

static void test_one_in_flight(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 2400 * US, 2450 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = (100 + 80 + 70 + 20) * US,
		[TT_ST_RUNQUEUE] = (20 + 20) * US,
		[TT_ST_SLEEP] = 990 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath *cp = one_in_flight(true);
	struct tt_cp_result r;

	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.t_token, 2360 * US);
	check_seg(&r, 1800 * US, 102, TT_CP_BLOCKED, TT_ST_SLEEP, "nanosleep",
		  1300 * US, 990 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);

	/* two wakes of the own writer with a sleep between: no boundary */
	cp = one_in_flight(false);
	walk(cp, &rq, 1, &r);
	TT_CHECK(r.complete);
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_dispatch, 1200 * US);
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_QUEUE], 0);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * A busy engine 102 and an event-loop writer 101 serving X and A: the
 * engine hands X's token to 101 at 1500 us (word 0x420), then both first
 * tokens of A at 2000 us, signalling 0x420 under the mutex 0x3d0 (101
 * blocks on it) and waking 101 again at the unlock 300 us later. That
 * double wake is one burst, A's own: the boundary is the hand-off at
 * 1500 us.
 */
static void test_double_wake_shared_writer(void)
{
	struct tt_cp_request rqs[2] = {
		req(1, 50 * US, 100 * US, 1520 * US, 1560 * US, 101, 101),
		req(2, 1000 * US, 1100 * US, 2350 * US, 2400 * US, 101, 101),
	};
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r[2];

	rqs[0].t_end = rqs[1].t_end = 5000 * US;
	sw_in(&s, 0, 102);
	sw_in(&s, 0, 101);
	sw_out(&s, 1150 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x420 });
	wake(&s, 1500 * US, 102, 101, 0, NR_FUTEX, 0x420);
	sw_in(&s, 1505 * US, 101);
	sw_out(&s, 1530 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x420 });
	wake(&s, 2000 * US, 102, 101, 0, NR_FUTEX, 0x420);
	sw_in(&s, 2005 * US, 101);
	sw_out(&s, 2010 * US, 101,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x3d0 });
	wake(&s, 2300 * US, 102, 101, 0, NR_FUTEX, 0x3d0);
	sw_in(&s, 2310 * US, 101);
	cp = cp_feed(&s);
	walk(cp, rqs, 2, r);
	TT_CHECK_EQ_U64(r[1].dispatch, TT_CP_DISP_HANDOFF);
	TT_CHECK_EQ_U64(r[1].t_dispatch, 1500 * US);
	TT_CHECK_EQ_U64(r[1].t_enqueue, 1150 * US);
	TT_CHECK_EQ_U64(r[1].stage_ns[TT_ST_QUEUE], 350 * US);
	TT_CHECK_EQ_U64(r[1].stage_ns[TT_ST_CPU], (50 + 800 + 40) * US);
	TT_CHECK_EQ_U64(r[1].stage_ns[TT_ST_RUNQUEUE], 10 * US);
	TT_CHECK(r[1].complete);
	free_results(r, 2);
	tt_critpath_free(cp);
}

/*
 * Threads asleep when the trace began: engine 201, of a process nothing
 * announced, and writer 102 first show up woken; 103 first shows up
 * woken by an interrupt. They were blocked since the first event (100 us;
 * the COMM at time 0 of a process table is not one).
 */
static void test_blocked_before_trace(void)
{
	struct tt_cp_request rqs[2] = {
		req(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101, 102),
		req(2, 1000 * US, 1050 * US, 1400 * US, 1450 * US, 101, 103),
	};
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US,
		[TT_ST_CPU] = (100 + 290 + 90) * US,
		[TT_ST_RUNQUEUE] = 20 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	__u64 want2[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 50 * US,    [TT_ST_UNKNOWN] = 250 * US,
		[TT_ST_RUNQUEUE] = 10 * US,  [TT_ST_CPU] = 90 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct tt_critpath_stats st;
	struct iv_list l = { 0 };
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r[2];

	comm(&s, 0, 101, "front-end");
	sw_in(&s, 100 * US, 101);
	wake(&s, 1200 * US, 101, 201, 0, NR_SENDMSG, 9);
	sw_in(&s, 1210 * US, 201);
	wake(&s, 1300 * US, 0, 103, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1310 * US, 103);
	wake(&s, 1500 * US, 201, 102, 0, NR_WRITE, 4);
	sw_in(&s, 1510 * US, 102);
	cp = cp_feed(&s);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.first_ts, 100 * US);
	walk(cp, rqs, 2, r);
	check_stages(&r[0], want);
	TT_CHECK(r[0].complete);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1200 * US);
	check_seg(&r[0], 1300 * US, 201, TT_CP_RUNNING, TT_ST_CPU, "on-cpu",
		  1210 * US, 290 * US);
	check_stages(&r[1], want2);
	TT_CHECK(r[1].complete);
	check_seg(&r[1], 1100 * US, 103, TT_CP_BLOCKED, TT_ST_UNKNOWN,
		  "blocked before trace", 1050 * US, 250 * US);
	TT_CHECK(tt_critpath_intervals(cp, 201, 0, iv_collect, &l) == 0);
	TT_CHECK(l.n >= 1);
	if (l.n >= 1)
		check_iv(&l.v[0], 100 * US, 1200 * US, TT_CP_BLOCKED,
			 TT_ST_UNKNOWN, "blocked before trace");
	free_results(r, 2);
	tt_critpath_free(cp);
}

/*
 * A slow upload: the reader is woken three times as its bytes come (at
 * 1000, 1300 and 1600 us) and waits for a CPU each time (20, 40 and
 * 30 us). Only the wait after the last bytes (t_last_arrive) delayed the
 * request; before them it waited for the network anyway.
 */
static void test_net_in_last_arrive(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 1650 * US, 1700 * US, 1750 * US, 101, 101);
	struct blk sock = { .sys = NR_RECVFROM, .arg0 = 5, .mode = S_IFSOCK };
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 560 * US,
		[TT_ST_RUNQUEUE] = 90 * US,
		[TT_ST_CPU] = 50 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;

	sw_in(&s, 0, 101);
	sw_out(&s, 10 * US, 101, sock);
	wake(&s, 1000 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1020 * US, 101);
	sw_out(&s, 1030 * US, 101, sock);
	wake(&s, 1300 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1340 * US, 101);
	sw_out(&s, 1350 * US, 101, sock);
	wake(&s, 1600 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1630 * US, 101);
	cp = cp_feed(&s);

	/* unknown last bytes: every wait counts, as before */
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	tt_cp_result_free(&r);

	rq.t_last_arrive = 1590 * US;
	walk(cp, &rq, 1, &r);
	want[TT_ST_NET_IN] = 620 * US;
	want[TT_ST_RUNQUEUE] = 30 * US;
	check_stages(&r, want);
	TT_CHECK(r.complete);
	check_seg(&r, 1610 * US, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
		  "runqueue", 1600 * US, 30 * US);
	TT_CHECK(seg_at(&r, 1310 * US) &&
		 seg_at(&r, 1310 * US)->stage == TT_ST_NET_IN);
	tt_cp_result_free(&r);

	/* the last bytes came while it waited: the rest of that wait counts */
	rq.t_last_arrive = 1320 * US;
	walk(cp, &rq, 1, &r);
	want[TT_ST_NET_IN] = 600 * US;
	want[TT_ST_RUNQUEUE] = 50 * US;
	check_stages(&r, want);
	check_seg(&r, 1330 * US, 101, TT_CP_RUNNABLE, TT_ST_RUNQUEUE,
		  "runqueue", 1320 * US, 20 * US);
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * An event loop preempted 100 times (10 us each) while a request waits for
 * it after its bytes came: the runqueue time stays exact, but its slices
 * are one segment, so N waiting requests keep O(N) segments, not O(N^2).
 */
static void test_reader_many_slices(void)
{
	struct tt_cp_request rq =
		req(1, 1000 * US, 3100 * US, 3150 * US, 3200 * US, 101, 101);
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 2100 * US - 1000 * US,
		[TT_ST_RUNQUEUE] = 1000 * US,
		[TT_ST_CPU] = 50 * US,
		[TT_ST_NET_OUT] = 50 * US,
	};
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_result r;

	sw_in(&s, 0, 101);
	for (int i = 0; i < 100; i++) {
		preempt(&s, 1100 * US + i * 20 * US, 101);
		sw_in(&s, 1110 * US + i * 20 * US, 101);
	}
	cp = cp_feed(&s);
	rq.t_last_arrive = 1000 * US;
	walk(cp, &rq, 1, &r);
	check_stages(&r, want);
	TT_CHECK(r.complete);
	TT_CHECK(r.nsegs < 10);
	TT_CHECK(seg_at(&r, 3050 * US) &&
		 seg_at(&r, 3050 * US)->stage == TT_ST_RUNQUEUE &&
		 strstr(seg_at(&r, 3050 * US)->reason, "100 slices"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

static __u64 rnd(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
	__u64 seed = 88172645463325252ULL, ts = 1000;
	struct tt_event ev;
	double t0, t1, t2;
	size_t i, n = 0;

	TT_CHECK(cp && rqs && res && bare);
	if (!cp || !rqs || !res || !bare)
		goto cleanup;
	t0 = now_s();
	for (n = 0; n < NEVENTS; n++) {
		__u32 a = rnd(&seed) % NTHREADS, b = rnd(&seed) % NTHREADS;

		ts += 1 + rnd(&seed) % 2000;
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
			ev.sw.prev_state = rnd(&seed) % 4 ? 1 : 0;
			ev.sw.syscall_nr = NR_FUTEX;
			ev.sw.arg0 = 0x1000 + a;
			running[a] = !running[a];
		}
		if (tt_critpath_add(cp, &ev))
			break;
	}
	t1 = now_s();
	for (i = 0; i < NREQ; i++) {
		__u64 a = 1000 + (rnd(&seed) % (ts - 100000000));

		rqs[i] = req(i + 1, a, a + 10000,
			     a + 10000 + rnd(&seed) % 5000000, 0,
			     101 + rnd(&seed) % NTHREADS,
			     101 + rnd(&seed) % NTHREADS);
		rqs[i].t_wire = rqs[i].t_first_write + 20000;
	}
	TT_CHECK(tt_critpath_walk_all(cp, rqs, NREQ, res) == 0);
	t2 = now_s();
	for (i = 0; i < NREQ; i++)
		check_closure(&rqs[i], &res[i]);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.events, NEVENTS);
	printf("  %zu events in %.3f s (%.2f M events/s), %llu intervals; "
	       "%d walks in %.3f s\n",
	       n, t1 - t0, n / (t1 - t0) / 1e6,
	       (unsigned long long)st.intervals, NREQ, t2 - t1);
	tt_critpath_set_drop_segments(cp, true);
	TT_CHECK(tt_critpath_walk_all(cp, rqs, NREQ, bare) == 0);
	for (i = 0; i < NREQ; i++) {
		TT_CHECK(!bare[i].segs && !bare[i].nsegs);
		TT_CHECK(!memcmp(bare[i].stage_ns, res[i].stage_ns,
				 sizeof(res[i].stage_ns)));
		TT_CHECK_EQ_U64(bare[i].t_dispatch, res[i].t_dispatch);
		TT_CHECK_EQ_U64(bare[i].t_enqueue, res[i].t_enqueue);
		TT_CHECK_EQ_U64(bare[i].t_token, res[i].t_token);
		TT_CHECK_EQ_U64(bare[i].incomplete, res[i].incomplete);
		TT_CHECK(bare[i].complete == res[i].complete);
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
	TT_RUN(test_single_thread);
	TT_RUN(test_cross_thread);
	TT_RUN(test_gpu_wait);
	TT_RUN(test_storage_wait);
	TT_RUN(test_preempted);
	TT_RUN(test_add_after_walk);
	TT_RUN(test_chain);
	TT_RUN(test_cross_process);
	TT_RUN(test_busy_engine);
	TT_RUN(test_busy_engine_shared_loop);
	TT_RUN(test_gil_lock);
	TT_RUN(test_loopback_softirq);
	TT_RUN(test_lost);
	TT_RUN(test_sleep_lock_unknown);
	TT_RUN(test_not_walked_and_clamps);
	TT_RUN(test_wake_race);
	TT_RUN(test_new_thread);
	TT_RUN(test_anon_inode);
	TT_RUN(test_intervals);
	TT_RUN(test_gpu_spin_sync);
	TT_RUN(test_gpu_blocking_sync);
	TT_RUN(test_gpu_chardev);
	TT_RUN(test_gpu_launch_blocked);
	TT_RUN(test_gpu_launch_run);
	TT_RUN(test_gpu_dispatch);
	TT_RUN(test_gpu_calls);
	TT_RUN(test_pickup_producer_work);
	TT_RUN(test_handoff_enqueue);
	TT_RUN(test_one_in_flight);
	TT_RUN(test_double_wake_shared_writer);
	TT_RUN(test_blocked_before_trace);
	TT_RUN(test_net_in_last_arrive);
	TT_RUN(test_reader_many_slices);
	TT_RUN(test_throughput);
	printf("  closure checked for %d requests\n", closure_checked);
	TT_EXIT();
}
