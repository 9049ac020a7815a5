// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The flight recorder's ring (user/record/ring.h, docs/design.md §11.1):
 * it holds at least its window and not much more, whole events back in
 * the order added; the state an evicted event set up (a connection still
 * open, a thread's name, a runtime's lock range) comes first, and goes
 * when it ends; the byte cap wins over the window and says so.
 */
#include <string.h>
#include "ring.h"
#include "tt_test.h"

#define MS 1000000ULL
#define SEC 1000000000ULL

static struct tt_event recv_ev(__u64 ts, __u64 sk)
{
	struct tt_event ev = {
		.h = { .ts = ts, .tgid = 10, .tid = 11, .type = TT_EV_RECV }
	};

	ev.sock.sk = sk;
	ev.sock.len = (__s64)ts;
	return ev;
}

struct seen {
	size_t n;
	__u64 first_ts, prev_ts;
	bool ordered, intact;
	struct tt_event head[4];
};

static int collect(void *ctx, const struct tt_event *ev)
{
	struct seen *s = ctx;

	if (s->n < 4)
		s->head[s->n] = *ev;
	if (!s->n)
		s->first_ts = ev->h.ts;
	if (s->n && ev->h.ts < s->prev_ts)
		s->ordered = false;
	if (ev->h.type == TT_EV_RECV && ev->sock.len != (__s64)ev->h.ts)
		s->intact = false;
	s->prev_ts = ev->h.ts;
	s->n++;
	return 0;
}

static void test_window(void)
{
	struct tt_ring *r = tt_ring_new(1 * SEC, 1ULL << 30);
	struct tt_ring_stats st;
	struct seen s = { .ordered = true, .intact = true };
	__u64 last = 0, n = 0;

	ASSERT_TRUE(r != NULL, "ring");
	/* 3 s of events 10 us apart: many chunks */
	for (__u64 t = 1000; t < 3 * SEC; t += 10000, n++) {
		struct tt_event ev = recv_ev(t, 1);

		ASSERT_OK(tt_ring_add(r, &ev), "add");
		last = t;
	}
	tt_ring_stats(r, &st);
	ASSERT_EQ(st.last_ts, last, "newest");
	ASSERT_LE(st.first_ts, last - 1 * SEC, "at least the window");
	/* whole chunks go: at most one chunk's span (~65 ms here) more */
	ASSERT_GE(st.first_ts, last - 1 * SEC - 100 * MS, "not much more");
	ASSERT_LT(st.events, n, "older events gone");
	ASSERT_EQ(st.cut_chunks, 0, "no cut");
	ASSERT_OK(tt_ring_each(r, collect, &s), "each");
	ASSERT_EQ(s.n, st.events, "all held handed out");
	ASSERT_EQ(s.first_ts, st.first_ts, "oldest first");
	ASSERT_TRUE(s.ordered, "in order");
	ASSERT_TRUE(s.intact, "payloads whole");
	tt_ring_free(r);
}

static void test_kept_state(void)
{
	struct tt_ring *r = tt_ring_new(100 * MS, 1ULL << 30);
	struct tt_event ev = { .h = { .tgid = 10, .tid = 11 } };
	struct seen s = { .ordered = true, .intact = true };
	struct tt_ring_stats st;

	ev.h.type = TT_EV_CONN_OPEN;
	ev.h.ts = 1;
	ev.conn.sk = 0xa;
	ASSERT_OK(tt_ring_add(r, &ev), "open a");
	ev.h.ts = 2;
	ev.conn.sk = 0xb;
	ASSERT_OK(tt_ring_add(r, &ev), "open b");
	memset(&ev.conn, 0, sizeof(ev.conn));
	ev.h.type = TT_EV_COMM;
	ev.h.ts = 3;
	strcpy(ev.comm.comm, "engine");
	ASSERT_OK(tt_ring_add(r, &ev), "comm");
	ev.h.type = TT_EV_CONN_CLOSE;
	ev.h.ts = 4;
	ev.sock.sk = 0xb;
	ev.sock.len = 7; /* TCP_CLOSE: b is gone */
	ASSERT_OK(tt_ring_add(r, &ev), "close b");
	ev.h.ts = 5;
	ev.sock.sk = 0xa;
	ev.sock.len = TT_TCP_CLOSE_WAIT; /* a peer's FIN: a stays open */
	ASSERT_OK(tt_ring_add(r, &ev), "fin a");
	/* a thread that exits takes its name with it */
	ev = (struct tt_event){
		.h = { .ts = 6, .tgid = 10, .tid = 12, .type = TT_EV_COMM }
	};
	ASSERT_OK(tt_ring_add(r, &ev), "comm 12");
	ev.h.type = TT_EV_EXIT;
	ev.h.ts = 7;
	ASSERT_OK(tt_ring_add(r, &ev), "exit 12");
	/* 1 s of traffic: all of the above leaves the window */
	for (__u64 t = 10 * MS; t < 1 * SEC; t += 10000) {
		struct tt_event rv = recv_ev(t, 0xa);

		ASSERT_OK(tt_ring_add(r, &rv), "add");
	}
	tt_ring_stats(r, &st);
	ASSERT_EQ(st.sticky, 2, "connection a and thread 11's name kept");
	ASSERT_GT(st.first_ts, 7, "the first events left the window");
	ASSERT_OK(tt_ring_each(r, collect, &s), "each");
	ASSERT_EQ(s.head[0].h.type, TT_EV_CONN_OPEN, "a's open first");
	ASSERT_EQ(s.head[0].conn.sk, 0xa, "of a");
	ASSERT_EQ(s.head[1].h.type, TT_EV_COMM, "then the name");
	ASSERT_STREQ(s.head[1].comm.comm, "engine", "its name");
	ASSERT_EQ(s.head[2].h.type, TT_EV_RECV, "then the window");
	ASSERT_EQ(s.n, st.events + 2, "kept ones and the window");
	tt_ring_free(r);
}

static void test_byte_cap(void)
{
	struct tt_ring *r = tt_ring_new(100 * SEC, 1u << 20);
	struct tt_ring_stats st;

	for (__u64 t = 1; t < 200000; t++) {
		struct tt_event ev = recv_ev(t * 1000, 1);

		ASSERT_OK(tt_ring_add(r, &ev), "add");
	}
	tt_ring_stats(r, &st);
	ASSERT_GT(st.cut_chunks, 0, "the cap cut the window");
	ASSERT_LE(st.bytes, (1u << 20) + (64u << 10), "within the cap");
	ASSERT_GT(st.events, 10000, "still holds the newest");
	tt_ring_free(r);
}

static void test_unstored(void)
{
	struct tt_ring *r = tt_ring_new(SEC, 1u << 20);
	struct tt_event ev = { .h = { .ts = 1, .type = TT_EV_SEND_RAW } };
	struct tt_ring_stats st;

	ASSERT_OK(tt_ring_add(r, &ev), "skipped, no error");
	tt_ring_stats(r, &st);
	ASSERT_EQ(st.events, 0, "a type never stored is not held");
	tt_ring_free(r);
}

int main(void)
{
	TT_RUN(test_window);
	TT_RUN(test_kept_state);
	TT_RUN(test_byte_cap);
	TT_RUN(test_unstored);
	TT_EXIT();
}
