// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The live core's store (user/analysis/window.c, docs/design.md §10.1):
 * what it keeps for analyses to come, and no more. Its counting is tested
 * end to end by tests/test_top.sh against report.
 */
#include <stdlib.h>
#include <string.h>
#include "tt_test.h"
#include "window.h"

#define MS 1000000ULL
#define S 1000000000ULL

struct seen {
	__u64 first_ts, n, opens;
	__u64 sk[4];
};

static int look(void *ctx, const struct tt_event *ev)
{
	struct seen *s = ctx;

	if (ev->h.type == TT_EV_CONN_OPEN) {
		if (s->opens < 4)
			s->sk[s->opens] = ev->conn.sk;
		s->opens++;
		return 0;
	}
	if (!s->n || ev->h.ts < s->first_ts)
		s->first_ts = ev->h.ts;
	s->n++;
	return 0;
}

static void add(struct tt_window *w, unsigned int type, __u64 ts, __u64 sk,
		__s64 len)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = ev.h.tid = 100;
	ev.sock.sk = sk;
	ev.sock.len = len;
	ASSERT_EQ(tt_window_add(w, &ev), 0, "tt_window_add");
}

/* 30 s of 4000 events a second, two connections opened at the start, one
 * closed at 5 s; refreshed at the end. */
static struct tt_window *fill(__u64 keep_ns, size_t max_events)
{
	struct tt_window_opts o = { .keep_ns = keep_ns,
				    .max_events = max_events };
	struct tt_window *w = tt_window_new(&o);
	__u64 t;

	ASSERT_OK_PTR(w, "w");
	if (!w)
		return NULL;
	add(w, TT_EV_CONN_OPEN, 1 * MS, 0xa, 0);
	add(w, TT_EV_CONN_OPEN, 2 * MS, 0xb, 0);
	for (t = 3 * MS; t < 30 * S; t += 250000) {
		add(w, TT_EV_COMM, t, 0, 0);
		if (t == 5 * S)
			add(w, TT_EV_CONN_CLOSE, t, 0xb, 7);
		/* a refresh a second, as the recorder's thread does */
		if (t % S == 0)
			ASSERT_EQ(tt_window_refresh(w, t, false), 0, "refresh");
	}
	ASSERT_EQ(tt_window_refresh(w, 30 * S, false), 0, "refresh");
	return w;
}

static void test_keeps_the_guard_only(void)
{
	struct tt_window *w = fill(0, 0);
	struct seen s = {};

	if (!w)
		return;
	/* no request in flight: the analysis needs the guard, the store
	 * holds it and the chunk (4096 events, about 1 s here) it began in */
	ASSERT_EQ(tt_window_each(w, 0, look, &s), 0, "each");
	ASSERT_GE(s.first_ts, 30 * S - TT_LIVE_GUARD_NS - 1100 * MS, "first_ts");
	ASSERT_LE(s.n, 4096 * 3, "kept");
	/* from 20 s on: the open connection's CONN_OPEN first, not the
	 * one closed at 5 s */
	memset(&s, 0, sizeof(s));
	ASSERT_EQ(tt_window_each(w, 29 * S, look, &s), 0, "each");
	ASSERT_EQ(s.opens, 1, "opens");
	ASSERT_EQ(s.sk[0], 0xa, "the open connection");
	tt_window_free(w);
}

static void test_keep_ns(void)
{
	struct tt_window *w = fill(10 * S, 0);
	struct seen s = {};

	if (!w)
		return;
	ASSERT_EQ(tt_window_each(w, 0, look, &s), 0, "each");
	ASSERT_LE(s.first_ts, 20 * S, "the last 10 s kept");
	ASSERT_GE(s.first_ts, 20 * S - 1100 * MS, "and not much more");
	tt_window_free(w);
}

static void test_max_events(void)
{
	struct tt_window *w = fill(0, 1);
	struct tt_live_frame f;
	struct seen s = {};

	if (!w)
		return;
	/* the cap leaves the newest chunk at least */
	ASSERT_EQ(tt_window_each(w, 0, look, &s), 0, "each");
	ASSERT_LE(s.n, 4096, "kept");
	ASSERT_GT(s.n, 0, "kept");
	ASSERT_EQ(tt_window_frame(w, TT_LIVE_BY_TTFT, &f), 0, "frame");
	ASSERT_EQ(f.totals.events, 2 + 1 + (30 * S - 3 * MS + 249999) / 250000,
		  "every event counted");
	ASSERT_LE(f.kept_events, 4096, "kept_events");
	tt_window_free(w);
}

int main(void)
{
	TT_RUN(test_keeps_the_guard_only);
	TT_RUN(test_keep_ns);
	TT_RUN(test_max_events);
	TT_EXIT();
}
