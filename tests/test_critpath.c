/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Thread timelines and the critical-path walk (DESIGN §4) on synthetic
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
 * wakes the writer. */
static void test_cross_thread(void)
{
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct tt_cp_request rq =
		req(1, 1000 * US, 1100 * US, 2100 * US, 2150 * US, 101, 103);
	struct tt_cp_result r;
	__u64 want[TT_ST_MAX] = {
		[TT_ST_NET_IN] = 100 * US, [TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = 865 * US,	   [TT_ST_RUNQUEUE] = 35 * US,
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
	TT_CHECK_EQ_U64(r.dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r.t_token, 2000 * US);
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

/* A regular-file read in I/O wait and a file-backed page fault, both
 * ended by interrupts, are storage. */
static void test_storage_wait(void)
{
	struct stream s = { 0 };
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

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101,
	       (struct blk){ .sys = NR_PREAD64,
			     .arg0 = 9,
			     .mode = S_IFREG,
			     .iowait = true });
	wake(&s, 1500 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1510 * US, 101);
	sw_out(&s, 1560 * US, 101, (struct blk){ .sys = -1, .iowait = true });
	wake(&s, 1750 * US, UNTRACED, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1760 * US, 101);
	cp = cp_feed(&s);
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
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = 727 * US,	    [TT_ST_RUNQUEUE] = 73 * US,
		[TT_ST_NET_OUT] = 100 * US,
	};
	static const __u32 tids[] = {
		101, 0, 102, 102, 103, 103, 104, 104, 104
	};
	struct tt_cp_result r;
	size_t i;

	sw_in(&s, 0, 101);
	sw_in(&s, 10 * US, 102);
	sw_out(&s, 50 * US, 102,
	       (struct blk){ .sys = NR_READ, .arg0 = 4, .mode = S_IFIFO });
	sw_in(&s, 20 * US, 103);
	sw_out(&s, 60 * US, 103, (struct blk){ .sys = NR_FUTEX, .arg0 = 0x10 });
	sw_in(&s, 30 * US, 104);
	sw_out(&s, 70 * US, 104,
	       (struct blk){ .sys = NR_RECVFROM, .arg0 = 6, .mode = S_IFSOCK });
	wake(&s, 1200 * US, 101, 102, 0, NR_WRITE, 5);
	sw_in(&s, 1220 * US, 102);
	wake(&s, 1500 * US, 102, 103, 0, NR_FUTEX, 0x10);
	sw_out(&s, 1510 * US, 102,
	       (struct blk){ .sys = NR_READ, .arg0 = 4, .mode = S_IFIFO });
	sw_in(&s, 1503 * US, 103);
	wake(&s, 1900 * US, 103, 104, 0, NR_WRITE, 7);
	sw_out(&s, 1910 * US, 103,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 0x10 });
	sw_in(&s, 1950 * US, 104);
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
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = 685 * US,	    [TT_ST_RUNQUEUE] = 15 * US,
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
		[TT_ST_NET_IN] = 100 * US, [TT_ST_QUEUE] = 605 * US,
		[TT_ST_CPU] = 1005 * US,   [TT_ST_RUNQUEUE] = 10 * US,
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
		[TT_ST_QUEUE] = 600 * US,  [TT_ST_CPU] = 1001 * US,
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
		[TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = (n * 18 + 18) * US,
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
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 100 * US);
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
	 * the reader's last one ends the queue */
	cp = gil_stream(2, 0x6100, 0x6200, &fw);
	rqs[0] = req(1, 1000 * US, 1100 * US, fw, fw + 50 * US, 101, 101);
	walk(cp, rqs, 10, r);
	TT_CHECK_EQ_U64(r[0].t_dispatch, 1252 * US);
	TT_CHECK_EQ_U64(r[0].dispatch, TT_CP_DISP_PICKUP);
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 152 * US);
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
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = 390 * US,	    [TT_ST_RUNQUEUE] = 10 * US,
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
	want[TT_ST_QUEUE] = 0;
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
	TT_CHECK_EQ_U64(r[0].stage_ns[TT_ST_QUEUE], 103 * US);
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
	TT_CHECK_EQ_U64(r.stage_ns[TT_ST_CPU], 290 * US);
	TT_CHECK(tt_critpath_comm(cp, 106) &&
		 !strcmp(tt_critpath_comm(cp, 106), "worker"));
	tt_cp_result_free(&r);
	tt_critpath_free(cp);
}

/*
 * Waits on anon inodes (eventfd, timerfd, epoll, io_uring) ended by an
 * interrupt or an untraced thread are unknown, never storage: on recent
 * kernels their shared inode is S_IFREG, and io_uring sets in_iowait.
 */
static struct tt_critpath *anon_stream(bool anon)
{
	struct stream s = { 0 };

	sw_in(&s, 900 * US, 101);
	sw_out(&s, 1200 * US, 101,
	       (struct blk){ .sys = NR_READ,
			     .arg0 = 9,
			     .mode = S_IFREG,
			     .anon = anon });
	wake(&s, 1500 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1510 * US, 101);
	sw_out(&s, 1560 * US, 101,
	       (struct blk){ .sys = NR_IO_URING_ENTER,
			     .arg0 = 4,
			     .mode = S_IFREG,
			     .iowait = true,
			     .anon = anon });
	wake(&s, 1750 * US, UNTRACED, 101, 0, NR_WRITE, 4);
	sw_in(&s, 1760 * US, 101);
	return cp_feed(&s);
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
		[TT_ST_NET_IN] = 100 * US,  [TT_ST_QUEUE] = 100 * US,
		[TT_ST_CPU] = 390 * US,	    [TT_ST_RUNQUEUE] = 10 * US,
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
	sw_out(&s, 500 * US, 101, (struct blk){ .sys = NR_FUTEX, .arg0 = 0x42 });
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
	TT_CHECK(tt_critpath_intervals(cp, 555, iv_collect, &l) == -ENOENT);
	tt_critpath_stats(cp, &st);
	TT_CHECK_EQ_U64(st.first_ts, 100 * US);
	TT_CHECK_EQ_U64(st.last_ts, 1000 * US);

	TT_CHECK(tt_critpath_intervals(cp, 101, iv_collect, &l) == 0);
	/* the switch-out after its exit is not a wait */
	TT_CHECK_EQ_U64(l.n, 6);
	if (l.n == 6) {
		check_iv(&l.v[0], 100 * US, 300 * US, TT_CP_RUNNING, TT_ST_CPU,
			 "on-cpu");
		check_iv(&l.v[1], 300 * US, 400 * US, TT_CP_RUNNABLE,
			 TT_ST_RUNQUEUE, "preempted");
		check_iv(&l.v[3], 500 * US, 700 * US, TT_CP_BLOCKED,
			 TT_ST_LOCK, "futex 0x42");
		check_iv(&l.v[4], 700 * US, 710 * US, TT_CP_RUNNABLE,
			 TT_ST_RUNQUEUE, "woken by 102");
		TT_CHECK_EQ_U64(l.v[4].waker_tid, 102);
		TT_CHECK_EQ_U64(l.v[1].waker_tid, 0);
		check_iv(&l.v[5], 710 * US, 820 * US, TT_CP_RUNNING, TT_ST_CPU,
			 "on-cpu");
		TT_CHECK(!l.v[5].open_end);
	}

	memset(&l, 0, sizeof(l));
	TT_CHECK(tt_critpath_intervals(cp, 102, iv_collect, &l) == 0);
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

	/* the callback stops the walk and its value comes back */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	TT_CHECK(tt_critpath_intervals(cp, 101, iv_collect, &l) == 7);
	TT_CHECK_EQ_U64(l.n, 2);
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
 * rates (no assertion on speed), checks the closure of the walks. */
static void test_throughput(void)
{
	enum { NTHREADS = 32, NEVENTS = 2000000, NREQ = 2000 };
	struct tt_critpath *cp = tt_critpath_new();
	struct tt_cp_request *rqs = calloc(NREQ, sizeof(*rqs));
	struct tt_cp_result *res = calloc(NREQ, sizeof(*res));
	bool running[NTHREADS] = { false };
	struct tt_critpath_stats st;
	__u64 seed = 88172645463325252ULL, ts = 1000;
	struct tt_event ev;
	double t0, t1, t2;
	size_t i, n = 0;

	TT_CHECK(cp && rqs && res);
	if (!cp || !rqs || !res)
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
	free_results(res, NREQ);
cleanup:
	free(rqs);
	free(res);
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
	TT_RUN(test_throughput);
	printf("  closure checked for %d requests\n", closure_checked);
	TT_EXIT();
}
