/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Percentiles, number formatting, and the text and JSON renderers: the
 * summary, the stage breakdown, the request table and one request's
 * critical path. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "analyzer.h"
#include "otlp.h"
#include "report.h"
#include "stats.h"
#include "tt_arch.h"
#include "tt_test.h"

#define US 1000ULL
#define MS 1000000ULL

/* ---- a tiny JSON checker: is the text one valid JSON value? ---- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    p[i]) ||
					    !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth)
{
	if (!p || depth > 32)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

static bool json_valid(const char *s)
{
	const char *end = json_value(s, 0);

	return end && *json_ws(end) == '\0';
}

/* ---- building an analysis ---- */

static struct tt_event mk(unsigned int type, __u64 ts)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = 100;
	ev.h.tid = 101;
	return ev;
}

static void add(struct tt_analyzer *a, const struct tt_event *ev)
{
	ASSERT_OK(tt_analyzer_add(a, ev), "tt_analyzer_add");
}

static void open_conn(struct tt_analyzer *a, __u64 sk, const char *ip,
		      __u16 port)
{
	struct tt_event ev = mk(TT_EV_CONN_OPEN, 0);

	ev.conn.sk = sk;
	ev.conn.rport = port;
	ev.conn.lport = 8000;
	ev.conn.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	inet_pton(ev.conn.family, ip, ev.conn.raddr);
	add(a, &ev);
}

static void sock_ev(struct tt_analyzer *a, unsigned int type, __u64 ts,
		    __u64 sk, __s64 len)
{
	struct tt_event ev = mk(type, ts);

	ev.sock.sk = sk;
	ev.sock.len = len;
	add(a, &ev);
}

/* A send of 50 bytes; status: it begins with a status line (0: SSE) */
static void send_status_ev(struct tt_analyzer *a, __u64 ts_enter, __u64 sk,
			   __u32 seq, unsigned int cls, unsigned int tokens,
			   unsigned int status)
{
	struct tt_event ev = mk(TT_EV_SEND, ts_enter + 10 * US);

	ev.send.sk = sk;
	ev.send.len = 50;
	ev.send.ts_enter = ts_enter;
	ev.send.seq = seq;
	ev.send.cls = cls;
	ev.send.tokens = tokens;
	ev.send.flags = status ? TT_SEND_F_HEADERS : TT_SEND_F_SSE;
	ev.send.status = status;
	add(a, &ev);
	if (cls == TT_SEND_DONE)
		return;
	ev = mk(TT_EV_XMIT, ts_enter + 5 * US);
	ev.xmit.sk = sk;
	ev.xmit.seq = seq;
	ev.xmit.end_seq = seq + 50;
	add(a, &ev);
}

static void send_ev(struct tt_analyzer *a, __u64 ts_enter, __u64 sk, __u32 seq,
		    unsigned int cls, unsigned int tokens)
{
	send_status_ev(a, ts_enter, sk, seq, cls, tokens, 0);
}

/* Arrives at t0, first token at t0 + first (wire 5 us later), 3 tokens
 * 2 ms apart; [DONE] unless cut (then the connection closes). */
static void request(struct tt_analyzer *a, __u64 sk, __u64 t0, __u64 first,
		    bool cut)
{
	sock_ev(a, TT_EV_DATA_READY, t0, sk, 100);
	sock_ev(a, TT_EV_RECV, t0 + 10 * US, sk, 100);
	send_ev(a, t0 + first, sk, 1000, TT_SEND_TOKEN, 1);
	send_ev(a, t0 + first + 2 * MS, sk, 1050, TT_SEND_TOKEN, 1);
	send_ev(a, t0 + first + 4 * MS, sk, 1100, TT_SEND_TOKEN, 1);
	if (cut)
		sock_ev(a, TT_EV_CONN_CLOSE, t0 + first + 5 * MS, sk,
			7 /* TCP_CLOSE: reset */);
	else
		send_ev(a, t0 + first + 5 * MS, sk, 1150, TT_SEND_DONE, 0);
}

/* The idle task hands the CPU to thread tid of process 100. */
static struct tt_event sw_in(__u64 ts, __u32 tid)
{
	struct tt_event ev = mk(TT_EV_SWITCH, ts);

	ev.h.tgid = ev.h.tid = 0;
	ev.sw.next_tid = tid;
	ev.sw.next_tgid = 100;
	ev.sw.sw_flags = TT_SW_NEXT_TRACED;
	ev.sw.syscall_nr = -1;
	return ev;
}

/* 3 complete requests (TTFT 10.005, 20.005, 30.005 ms) and one cut short
 * (TTFT 5.005 ms, from [::1]:5555); 3 records lost before any of them.
 * The one thread runs throughout: all compute.cpu from read to write. */
static struct tt_analyzer *sample(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_event ev = sw_in(0, 101);

	add(a, &ev);
	ev = mk(TT_EV_LOST, 500 * US);

	ev.lost.count = 3;
	ev.lost.since_ts = 100 * US;
	ev.lost.lost_cpu = 1;
	add(a, &ev);
	open_conn(a, 0x10, "10.0.0.1", 1000);
	open_conn(a, 0x20, "10.0.0.2", 2000);
	open_conn(a, 0x30, "::1", 5555);
	request(a, 0x10, 1 * MS, 10 * MS, false);
	request(a, 0x20, 2 * MS, 30 * MS, false);
	request(a, 0x30, 3 * MS, 5 * MS, true);
	request(a, 0x10, 100 * MS, 20 * MS, false);
	tt_analyzer_finish(a);
	return a;
}

/* ---- a server with a reader, an engine and a writer ---- */

#define READER 101
#define ENGINE 102
#define WRITER 103
#define NR_FUTEX TT_NR_futex
#define HANDOFF_WORD 0x1000
#define TOKEN_WORD 0x2000

struct evbuf {
	struct tt_event v[256];
	size_t n;
};

static struct tt_event *ev_push(struct evbuf *b, unsigned int type, __u64 ts,
				__u32 tid)
{
	struct tt_event *ev;

	if (b->n == sizeof(b->v) / sizeof(b->v[0]))
		abort();
	ev = &b->v[b->n++];
	*ev = mk(type, ts);
	ev->h.tid = tid;
	ev->h.cpu = b->n; /* the order of equal times, for the sort */
	return ev;
}

static void ev_block(struct evbuf *b, __u64 ts, __u32 tid, __u64 word)
{
	struct tt_event *ev = ev_push(b, TT_EV_SWITCH, ts, tid);

	ev->sw.prev_state = 1;
	ev->sw.syscall_nr = NR_FUTEX;
	ev->sw.arg0 = word;
	ev->sw.sw_flags = TT_SW_PREV_TRACED;
}

static void ev_run(struct evbuf *b, __u64 ts, __u32 tid)
{
	struct tt_event *ev = ev_push(b, TT_EV_SWITCH, ts, 0);

	ev->h.tgid = 0;
	ev->sw.next_tid = tid;
	ev->sw.next_tgid = 100;
	ev->sw.sw_flags = TT_SW_NEXT_TRACED;
	ev->sw.syscall_nr = -1;
}

static void ev_wake(struct evbuf *b, __u64 ts, __u32 waker, __u32 target,
		    __u64 word)
{
	struct tt_event *ev = ev_push(b, TT_EV_WAKING, ts, waker);

	ev->wake.target_tid = target;
	ev->wake.target_tgid = 100;
	ev->wake.waker_syscall = NR_FUTEX;
	ev->wake.waker_arg0 = word;
}

static int cmp_ev(const void *x, const void *y)
{
	const struct tt_event *p = x, *q = y;

	if (p->h.ts != q->h.ts)
		return p->h.ts < q->h.ts ? -1 : 1;
	return p->h.cpu < q->h.cpu ? -1 : p->h.cpu > q->h.cpu;
}

/*
 * One request on connection sk from port: arrives at t0, read 10 us later
 * by the reader, which wakes the engine at +20 us; the engine waits rq
 * for a CPU and computes for cpu, then wakes the writer, which waits
 * 10 us, runs 10 us and sends the first token (and the end), on the wire
 * 5 us later. TTFT = 45 us + rq + cpu.
 */
static void staged_request(struct evbuf *b, __u64 sk, __u16 port, __u64 t0,
			   __u64 rq, __u64 cpu)
{
	__u64 t = t0 + 20 * US + rq + cpu;
	struct tt_event *ev;

	ev = ev_push(b, TT_EV_CONN_OPEN, t0 - 1 * MS, 0);
	ev->conn.sk = sk;
	ev->conn.rport = port;
	ev->conn.lport = 8000;
	ev->conn.family = AF_INET;
	inet_pton(AF_INET, "10.9.9.9", ev->conn.raddr);
	ev = ev_push(b, TT_EV_DATA_READY, t0, 0);
	ev->sock.sk = sk;
	ev->sock.len = 100;
	ev = ev_push(b, TT_EV_RECV, t0 + 10 * US, READER);
	ev->sock.sk = sk;
	ev->sock.len = 100;
	ev_wake(b, t0 + 20 * US, READER, ENGINE, HANDOFF_WORD);
	ev_run(b, t0 + 20 * US + rq, ENGINE);
	ev_wake(b, t, ENGINE, WRITER, TOKEN_WORD);
	ev_block(b, t + 1 * US, ENGINE, HANDOFF_WORD);
	ev_run(b, t + 10 * US, WRITER);
	ev = ev_push(b, TT_EV_SEND, t + 20 * US + 10 * US, WRITER);
	ev->send.sk = sk;
	ev->send.len = 50;
	ev->send.ts_enter = t + 20 * US;
	ev->send.seq = 1;
	ev->send.cls = TT_SEND_TOKEN_DONE;
	ev->send.tokens = 1;
	ev->send.flags = TT_SEND_F_SSE;
	ev = ev_push(b, TT_EV_XMIT, t + 25 * US, 0);
	ev->xmit.sk = sk;
	ev->xmit.seq = 1;
	ev->xmit.end_seq = 51;
	ev_block(b, t + 40 * US, WRITER, TOKEN_WORD);
}

/*
 * Three requests, one after another (ids by arrival):
 *   #1 at 10 ms: engine runqueue 0.1 ms, cpu 2 ms  -> TTFT 2.145 ms
 *   #2 at 30 ms: engine runqueue 1 ms,   cpu 4 ms  -> TTFT 5.045 ms
 *   #3 at 50 ms: engine runqueue 3 ms,   cpu 1 ms  -> TTFT 4.045 ms
 * Stages of each: network.in 10 us, runqueue engine's + 10 us (writer),
 * compute.cpu engine's + 20 us (the reader's 10 us up to the hand-off,
 * the writer's), network.out 5 us; nothing queued (the engine is idle). The p50 request is #3, the p90 and p99 one #2.
 */
/* A marker of kind at time t by tid, keyed by key. */
static void ev_mark(struct evbuf *b, __u64 t, __u32 tid, __u16 kind, __u64 key)
{
	struct tt_event *ev = ev_push(b, TT_EV_MARK, t, tid);

	ev->mark.kind = kind;
	ev->mark.key = key;
	ev->mark.flags = TT_MARK_F_KEY;
}

/* staged_sample(), with (marked) application markers: the reader enqueues
 * each request keyed by its socket 5 us after its read, the engine
 * dispatches it 500 us into its CPU time, and once a key nothing bound. */
/* with stolen, the hypervisor took 500 us of #3's engine run
 * [53.020, 54.021) ms: 499.5 us of it on the path, up to its wake of the
 * writer at 54.020 */
static struct tt_analyzer *staged_sample_with(bool marked, bool stolen)
{
	static const char *const names[] = { "reader", "engine", "writer" };
	struct tt_analyzer *a = tt_analyzer_new();
	struct evbuf *b = calloc(1, sizeof(*b));
	struct tt_event *ev;
	size_t i;

	if (!b)
		abort();
	for (i = 0; i < 3; i++) {
		ev_run(b, 0, READER + i);
		ev = ev_push(b, TT_EV_COMM, 1, READER + i);
		strcpy(ev->comm.comm, names[i]);
	}
	ev_block(b, 1 * MS, ENGINE, HANDOFF_WORD);
	ev_block(b, 1 * MS, WRITER, TOKEN_WORD);
	staged_request(b, 0x100, 1001, 10 * MS, 100 * US, 2 * MS);
	staged_request(b, 0x200, 1002, 30 * MS, 1 * MS, 4 * MS);
	staged_request(b, 0x300, 1003, 50 * MS, 3 * MS, 1 * MS);
	if (marked) {
		ev_mark(b, 50 * MS + 15 * US, READER, TT_MARK_ENQUEUE, 0x300);
		ev_mark(b, 50 * MS + 20 * US + 3 * MS + 500 * US, ENGINE,
			TT_MARK_DISPATCH, 0x300);
		ev_mark(b, 51 * MS, ENGINE, TT_MARK_DISPATCH, 0x999);
	}
	if (stolen) {
		ev = ev_push(b, TT_EV_STEAL, 54 * MS + 21 * US, ENGINE);
		ev->steal.ns = 500 * US;
		ev->steal.ts_on = 53 * MS + 20 * US;
	}
	qsort(b->v, b->n, sizeof(b->v[0]), cmp_ev);
	for (i = 0; i < b->n; i++)
		add(a, &b->v[i]);
	tt_analyzer_finish(a);
	free(b);
	return a;
}

static struct tt_analyzer *staged_sample_marked(bool marked)
{
	return staged_sample_with(marked, false);
}

static struct tt_analyzer *staged_sample(void)
{
	return staged_sample_marked(false);
}

/* Renders into a string (free it). */
static char *render(const struct tt_analyzer *a,
		    const struct tt_file_meta *meta,
		    const struct tt_report_opts *o, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		abort();
	err = json ? tt_report_json(f, a, meta, o) :
		     tt_report_text(f, a, meta, o);
	ASSERT_EQ(err, 0, "err");
	fclose(f);
	return buf;
}

/* The four numbers after "name" at the start of a line of text. */
static int row(const char *text, const char *name, double v[4])
{
	const char *p = text;
	size_t k = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, k) && p[k] == ' ')
			return sscanf(p + k, "%lf %lf %lf %lf", &v[0], &v[1],
				      &v[2], &v[3]);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* The line that starts with "name " in text, or NULL. */
static const char *line_of(const char *text, const char *name)
{
	const char *p = text;
	size_t k = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, k) && p[k] == ' ')
			return p;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* A stage row of the summary: mean, p50, p90, p99 (ms) and share (%). */
static bool stage_row(const char *text, const char *name, double mean,
		      double p50, double p90, double p99, double share)
{
	const char *line = line_of(text, name);
	double v[5];

	if (!line || sscanf(line + strlen(name), "%lf %lf %lf %lf %lf%%", &v[0],
			    &v[1], &v[2], &v[3], &v[4]) != 5) {
		fprintf(stderr, "  no stage row %s\n", name);
		return false;
	}
	if (v[0] != mean || v[1] != p50 || v[2] != p90 || v[3] != p99 ||
	    v[4] != share) {
		fprintf(stderr, "  %s: %.3f %.3f %.3f %.3f %.1f%%\n", name,
			v[0], v[1], v[2], v[3], v[4]);
		return false;
	}
	return true;
}

/* The stages of every complete request sum to its TTFT. */
static void check_closure(const struct tt_analyzer *a)
{
	const struct tt_request *r;
	__u64 sum;
	size_t i;
	int k;

	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		if (!r->complete)
			continue;
		ASSERT_TRUE(r->attributed, "r.attributed");
		for (k = 0, sum = 0; k < TT_ST_MAX; k++)
			sum += r->stage_ns[k];
		ASSERT_EQ(sum, r->ttft, "sum");
	}
}

/* ---- tests ---- */

static void test_percentiles(void)
{
	__u64 v[100], ten[10] = { 100, 90, 80, 70, 60, 50, 40, 30, 20, 10 };
	__u64 three[3] = { 7, 3, 5 };
	struct tt_summary s;
	size_t i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i;
	tt_summarize(v, 100, &s);
	ASSERT_EQ(s.n, 100, "s.n");
	ASSERT_EQ(s.min, 1, "s.min");
	ASSERT_EQ(s.p50, 50, "s.p50");
	ASSERT_EQ(s.p90, 90, "s.p90");
	ASSERT_EQ(s.p99, 99, "s.p99");
	ASSERT_EQ(s.max, 100, "s.max");
	ASSERT_EQ(s.mean, 50, "s.mean"); /* 50.5 rounded down */
	/* nearest rank: ceil(p/100 * n) */
	tt_summarize(ten, 10, &s);
	ASSERT_EQ(s.p50, 50, "s.p50");
	ASSERT_EQ(s.p90, 90, "s.p90");
	ASSERT_EQ(s.p99, 100, "s.p99");
	ASSERT_EQ(tt_percentile_sorted(ten, 10, 0), 10, "tt_percentile_sorted");
	ASSERT_EQ(tt_percentile_sorted(ten, 10, 10), 10,
		  "tt_percentile_sorted");
	ASSERT_EQ(tt_percentile_sorted(ten, 10, 11), 20,
		  "tt_percentile_sorted");
	ASSERT_EQ(tt_percentile_sorted(ten, 10, 100), 100,
		  "tt_percentile_sorted");
	tt_summarize(three, 3, &s);
	ASSERT_EQ(s.p50, 5, "s.p50");
	ASSERT_EQ(s.p90, 7, "s.p90");
	tt_summarize(three, 1, &s);
	ASSERT_EQ(s.p50, 3, "s.p50");
	ASSERT_EQ(s.p99, 3, "s.p99");
	tt_summarize(NULL, 0, &s);
	ASSERT_EQ(s.n, 0, "s.n");
	ASSERT_EQ(s.p50, 0, "s.p50");
	ASSERT_EQ(tt_percentile_sorted(NULL, 0, 50), 0, "tt_percentile_sorted");
}

static int cmp_u64_test(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* tt_sort_u64 sorts large arrays by radix: the same order as qsort, for
 * values spread over 64 bits, values sharing their high digits (latencies)
 * and many equal ones. */
static void test_sort_large(void)
{
	static const __u64 masks[] = { ~0ull, 0xffffffull, 0x7ull };
	size_t n = 50000, i, bad;
	__u64 *v = malloc(n * sizeof(*v)), *w = malloc(n * sizeof(*w));
	__u64 x = 88172645463325252ull;

	ASSERT_TRUE(v && w, "allocated");
	for (size_t m = 0; v && w && m < sizeof(masks) / sizeof(*masks); m++) {
		for (i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[i] = w[i] =
				(x & masks[m]) + (m == 1 ? 5000000000ull : 0);
		}
		tt_sort_u64(v, n);
		qsort(w, n, sizeof(*w), cmp_u64_test);
		for (i = 0, bad = 0; i < n; i++)
			bad += v[i] != w[i];
		ASSERT_EQ(bad, 0, "values out of qsort's order");
	}
	free(v);
	free(w);
}

static void test_fmt_and_vec(void)
{
	struct tt_u64vec vec = {};
	char buf[32];
	size_t i;

	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 1234567), "1.235",
		     "tt_fmt_ms");
	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 0), "0.000", "tt_fmt_ms");
	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 499), "0.000", "tt_fmt_ms");
	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 500), "0.001", "tt_fmt_ms");
	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 20005000), "20.005",
		     "tt_fmt_ms");
	ASSERT_STREQ(tt_fmt_ms(buf, sizeof(buf), 999999600), "1000.000",
		     "tt_fmt_ms");
	for (i = 0; i < 1000; i++)
		ASSERT_OK(tt_u64vec_push(&vec, i * 3), "tt_u64vec_push");
	ASSERT_EQ(vec.n, 1000, "vec.n");
	ASSERT_EQ(vec.v[999], 2997, "vec.v[999]");
	tt_u64vec_free(&vec);
	ASSERT_TRUE(vec.v == NULL && vec.n == 0, "vec.v == NULL && vec.n == 0");
}

static void test_peer(void)
{
	struct tt_request r;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.family = AF_INET;
	r.rport = 443;
	inet_pton(AF_INET, "192.0.2.7", r.raddr);
	ASSERT_STREQ(tt_report_peer(&r, buf, sizeof(buf)), "192.0.2.7:443",
		     "tt_report_peer");
	r.family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::5", r.raddr);
	ASSERT_STREQ(tt_report_peer(&r, buf, sizeof(buf)), "[2001:db8::5]:443",
		     "tt_report_peer");
	inet_pton(AF_INET6, "::ffff:198.51.100.1", r.raddr);
	ASSERT_STREQ(tt_report_peer(&r, buf, sizeof(buf)), "198.51.100.1:443",
		     "tt_report_peer");
	r.family = 0;
	ASSERT_STREQ(tt_report_peer(&r, buf, sizeof(buf)), "unknown",
		     "tt_report_peer");
}

/* Issue 13 item 3: two streams, a quick 429 and a 200 with no token: the
 * last two are counted apart and stay out of the percentiles, --all too. */
static void test_errors_apart(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = {};
	struct tt_event ev = sw_in(0, 101);
	double v[4];
	char *out;
	int all;

	add(a, &ev);
	open_conn(a, 0x10, "10.0.0.1", 1000);
	open_conn(a, 0x20, "10.0.0.2", 2000);
	request(a, 0x10, 1 * MS, 10 * MS, false);
	request(a, 0x20, 2 * MS, 20 * MS, false);
	sock_ev(a, TT_EV_DATA_READY, 40 * MS, 0x10, 100);
	sock_ev(a, TT_EV_RECV, 40 * MS + 10 * US, 0x10, 100);
	send_status_ev(a, 40 * MS + 50 * US, 0x10, 2000, TT_SEND_OTHER, 0, 429);
	sock_ev(a, TT_EV_DATA_READY, 50 * MS, 0x20, 100);
	sock_ev(a, TT_EV_RECV, 50 * MS + 10 * US, 0x20, 100);
	send_status_ev(a, 50 * MS + 70 * US, 0x20, 2000, TT_SEND_OTHER, 0, 200);
	sock_ev(a, TT_EV_CONN_CLOSE, 60 * MS, 0x10, 7);
	sock_ev(a, TT_EV_CONN_CLOSE, 60 * MS, 0x20, 7);
	tt_analyzer_finish(a);
	for (all = 0; all < 2; all++) {
		o.include_incomplete = all;
		out = render(a, NULL, &o, false);
		ASSERT_TRUE(strstr(out,
				"requests: 4 (complete 2, incomplete 2)\n"), "strstr(out, 'requests: 4 (complete 2, incompl...");
		ASSERT_TRUE(strstr(out,
				"errors: 1 (status not 2xx), no token: 1;"), "strstr(out, 'errors: 1 (status not 2xx), no t...");
		ASSERT_TRUE(row(out, "TTFT", v) == 4, "row(out, 'TTFT', v) == 4");
		ASSERT_TRUE(v[0] == 10.005 && v[3] == 20.005, "v[0] == 10.005 && v[3] == 20.005");
		ASSERT_TRUE(strstr(out, "(2 requests)"), "strstr(out, '(2 requests)')");
		free(out);
		out = render(a, NULL, &o, true);
		ASSERT_TRUE(strstr(out, "\"complete\":2,\"incomplete\":2,"
				     "\"errors\":1,\"no_token\":1,"), "strstr(out, ''complete':2,'incomplete':2,' ''...");
		ASSERT_TRUE(strstr(out, "\"complete\":false,\"status\":429,"), "strstr(out, ''complete':false,'status':429,')");
		ASSERT_TRUE(strstr(out, "\"incomplete_reason\":\"error\""), "strstr(out, ''incomplete_reason':'error'')");
		ASSERT_TRUE(strstr(out, "\"incomplete_reason\":\"no-token\""), "strstr(out, ''incomplete_reason':'no-token'')");
		ASSERT_TRUE(strstr(out, "\"ttft_ns\":{\"p50\":10005000,"), "strstr(out, ''ttft_ns':{'p50':10005000,')");
		ASSERT_TRUE(strstr(out, "\"n\":2}"), "strstr(out, ''n':2}')");
		free(out);
	}
	tt_analyzer_free(a);
}

static void test_text_summary(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = {};
	struct tt_file_meta meta;
	double v[4];
	char *out;

	memset(&meta, 0, sizeof(meta));
	strcpy(meta.hostname, "gpu-node-7");
	strcpy(meta.kernel, "6.18.0 #1 SMP PREEMPT_DYNAMIC");
	strcpy(meta.options, "ttftrace record -p 1234");
	out = render(a, &meta, &o, false);
	ASSERT_OK_PTR(strstr(out, "host: gpu-node-7  kernel: 6.18.0"),
		      "strstr");
	ASSERT_TRUE(strstr(out, "recorded with: ttftrace record -p 1234\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "requests: 4 (complete 3, incomplete 1)\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "incomplete: closed-mid-stream 1\n"), "strstr");
	ASSERT_TRUE(
		strstr(out,
		       "drops: 3 lost records (cpu1 3); requests overlapping"),
		"strstr");
	ASSERT_EQ(row(out, "TTFT", v), 4, "row");
	ASSERT_TRUE(v[0] == 20.005 && v[1] == 30.005 && v[2] == 30.005 &&
			    v[3] == 30.005,
		    "v[0] == 20.005 && v[1] == 30.005 && v...");
	ASSERT_TRUE(strstr(out, "(3 requests)"), "strstr");
	ASSERT_EQ(row(out, "TPOT", v), 4, "row");
	ASSERT_TRUE(v[0] == 2.0 && v[1] == 2.0 && v[2] == 2.0,
		    "v[0] == 2.0 && v[1] == 2.0 && v[2] ==...");
	ASSERT_EQ(row(out, "ITL", v), 4, "row");
	ASSERT_TRUE(v[0] == 2.0 && v[3] == 2.0, "v[0] == 2.0 && v[3] == 2.0");
	ASSERT_TRUE(strstr(out, "(6 gaps)"), "strstr");
	ASSERT_FALSE(strstr(out, "TTFT_MS"),
		     "strstr"); /* no table unless asked */
	free(out);

	/* counting the incomplete one too: {5, 10, 20, 30} ms */
	o.include_incomplete = true;
	out = render(a, NULL, &o, false);
	ASSERT_FALSE(strstr(out, "host:"), "strstr");
	ASSERT_EQ(row(out, "TTFT", v), 4, "row");
	ASSERT_TRUE(v[0] == 10.005 && v[1] == 30.005 && v[3] == 30.005,
		    "v[0] == 10.005 && v[1] == 30.005 && v...");
	ASSERT_TRUE(strstr(out, "(4 requests)"), "strstr");
	ASSERT_TRUE(strstr(out, "(8 gaps)"), "strstr");
	ASSERT_TRUE(strstr(out, "incomplete requests included"), "strstr");
	free(out);
	tt_analyzer_free(a);
}

static void test_text_requests_table(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = { .requests = true };
	char *out = render(a, NULL, &o, false);
	const char *line;

	ASSERT_TRUE(strstr(out, "TTFT_MS") && strstr(out, "ARRIVE>READ") &&
			    strstr(out, "READ>WRITE") &&
			    strstr(out, "WRITE>WIRE") &&
			    strstr(out, "TOKENS") && strstr(out, "TPOT_MS") &&
			    strstr(out, "DOMINANT"),
		    "strstr");
	/* request 1: 10.0.0.1:1000, arrive->read 10 us, read->write
	 * 9.990 ms, write->wire 5 us, 3 tokens, TPOT 2 ms */
	line = strstr(out, "10.0.0.1:1000");
	ASSERT_OK_PTR(line, "line");
	if (line) {
		char peer[64], ttft[32], ar[32], rw[32], ww[32], tpot[32],
			e2e[32], dom[32], slo[32], status[64];
		unsigned int tokens;

		ASSERT_EQ(sscanf(line,
				 "%63s %31s %31s %31s %31s %u %31s %31s %31s %31s %63s",
				 peer, ttft, ar, rw, ww, &tokens, tpot, e2e, dom,
				 slo, status),
			  11, "sscanf");
		/* E2E: arrive to the last token on the wire; no --slo */
		ASSERT_STREQ(e2e, "14.005", "e2e");
		ASSERT_STREQ(slo, "-", "slo");
		ASSERT_STREQ(dom, "compute.cpu", "dom");
		ASSERT_STREQ(ttft, "10.005", "ttft");
		ASSERT_STREQ(ar, "0.010", "ar");
		ASSERT_STREQ(rw, "9.990", "rw");
		ASSERT_STREQ(ww, "0.005", "ww");
		ASSERT_EQ(tokens, 3, "tokens");
		ASSERT_STREQ(tpot, "2.000", "tpot");
		ASSERT_STREQ(status, "complete", "status");
	}
	line = strstr(out, "[::1]:5555");
	ASSERT_TRUE(line && strstr(line, "closed-mid-stream"),
		    "line && strstr(line, \"closed-mid-stre...");
	free(out);
	tt_analyzer_free(a);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_json(void)
{
	static const char first[] =
		"{\"requests\":[{\"id\":1,\"peer\":\"10.0.0.1:1000\","
		"\"t_arrive_ns\":1000000,\"t_read_ns\":1010000,"
		"\"t_first_write_ns\":11000000,\"t_wire_ns\":11005000,"
		"\"ttft_ns\":10005000,\"tokens\":3,\"tpot_ns\":2000000,"
		"\"complete\":true,";
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = { .json = true };
	struct tt_file_meta meta;
	char *out;

	memset(&meta, 0, sizeof(meta));
	strcpy(meta.hostname, "host\"7");
	strcpy(meta.kernel, "6.18.0\\x");
	strcpy(meta.options, "record -c 'a\tb'\n");
	out = render(a, &meta, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(starts_with(out, first), "starts_with");
	ASSERT_TRUE(strstr(out, "{\"id\":3,\"peer\":\"[::1]:5555\","),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"ttft_ns\":5005000,\"tokens\":3,"
				"\"tpot_ns\":2000000,\"complete\":false"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"incomplete_reason\":\"closed-mid-stream\""),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"closed_mid_stream\":true"), "strstr");
	ASSERT_TRUE(strstr(out, "\"summary\":{\"requests\":4,\"complete\":3,"
				"\"incomplete\":1,"),
		    "strstr");
	ASSERT_TRUE(strstr(out,
			   "\"ttft_ns\":{\"p50\":20005000,\"p90\":30005000,"
			   "\"p99\":30005000,\"max\":30005000,\"n\":3}"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"tpot_ns\":{\"p50\":2000000,\"p90\":2000000,"
				"\"p99\":2000000,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"itl_ns\":{\"p50\":2000000,"), "strstr");
	ASSERT_TRUE(strstr(out, "\"drops\":3,\"drops_per_cpu\":{\"1\":3}"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"hostname\":\"host\\\"7\""), "strstr");
	ASSERT_TRUE(strstr(out, "\"kernel\":\"6.18.0\\\\x\""), "strstr");
	ASSERT_TRUE(strstr(out, "\"options\":\"record -c 'a\\u0009b'\\u000a\""),
		    "strstr");
	ASSERT_EQ(out[strlen(out) - 1], '\n', "out[strlen(out) - 1]");
	free(out);
	tt_analyzer_free(a);
}

/* Tokens emitted 2 ms apart that reach the device together (Nagle): ITL
 * is the wire's, the summary and the request say the gaps were bunched,
 * and JSON keeps the emit gaps (itl_emit_ns); the request ended by its
 * [DONE] ("end":"done"). */
static void test_itl_bunched(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = {};
	struct tt_event ev;
	double v[4];
	char *out;
	int i;

	ev = sw_in(0, 101); /* one thread runs throughout: a complete path */
	add(a, &ev);
	open_conn(a, 0x40, "10.0.0.4", 4000);
	sock_ev(a, TT_EV_DATA_READY, 1 * MS, 0x40, 100);
	sock_ev(a, TT_EV_RECV, 1 * MS + 10 * US, 0x40, 100);
	for (i = 0; i < 3; i++) {
		ev = mk(TT_EV_SEND, (10 + 2 * i) * MS + 10 * US);
		ev.send.sk = 0x40;
		ev.send.len = 50;
		ev.send.ts_enter = (10 + 2 * i) * MS;
		ev.send.seq = 1000 + 50 * i;
		ev.send.cls = TT_SEND_TOKEN;
		ev.send.tokens = 1;
		ev.send.flags = TT_SEND_F_SSE;
		add(a, &ev);
	}
	send_ev(a, 15 * MS, 0x40, 1150, TT_SEND_DONE, 0);
	ev = mk(TT_EV_XMIT, 50 * MS);
	ev.xmit.sk = 0x40;
	ev.xmit.seq = 1000;
	ev.xmit.end_seq = 1200;
	add(a, &ev);
	tt_analyzer_finish(a);
	out = render(a, NULL, &o, false);
	ASSERT_EQ(row(out, "ITL", v), 4, "row ITL");
	ASSERT_TRUE(v[0] == 0 && v[3] == 0, "ITL at the wire: 0");
	ASSERT_TRUE(strstr(out, "ITL (wire): 2 of 2 gap(s) emitted apart left "
				"together"),
		    "the text says the gaps were bunched");
	free(out);
	out = render(a, NULL, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(strstr(out, "\"itl_at_wire\":true,\"itl_bunched\":2,"),
		    "the request's itl_at_wire, itl_bunched");
	ASSERT_TRUE(strstr(out, "\"end\":\"done\""), "the request's end");
	ASSERT_TRUE(strstr(out, "\"bunched\":1,\"itl_bunched\":2,"),
		    "the summary's bunched counts");
	ASSERT_TRUE(strstr(out, "\"itl_ns\":{\"p50\":0,"), "itl_ns");
	ASSERT_TRUE(strstr(out, "\"itl_emit_ns\":{\"p50\":2000000,"),
		    "itl_emit_ns");
	free(out);
	tt_analyzer_free(a);
}

static void test_empty(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = {};
	char *out;

	tt_analyzer_finish(a);
	out = render(a, NULL, &o, false);
	ASSERT_TRUE(strstr(out, "requests: 0 (complete 0, incomplete 0)\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "drops: 0 lost records\n"), "strstr");
	ASSERT_TRUE(strstr(out, "(no requests)"), "strstr");
	free(out);
	out = render(a, NULL, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(
		starts_with(out,
			    "{\"requests\":[],\"summary\":{\"requests\":0,"),
		"starts_with");
	ASSERT_TRUE(strstr(out, "\"ttft_ns\":{\"p50\":null,\"p90\":null,"
				"\"p99\":null,\"max\":null,\"n\":0}"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"drops\":0"), "strstr");
	ASSERT_FALSE(strstr(out, "\"meta\""), "strstr");
	free(out);
	tt_analyzer_free(a);
}

static void test_unknown_values_are_null(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = { .requests = true };
	char *out;

	/* a request read on a connection opened before tracing, never
	 * answered */
	open_conn(a, 0x40, "10.0.0.4", 4000);
	sock_ev(a, TT_EV_RECV, 1 * MS, 0x40, 10);
	tt_analyzer_finish(a);
	out = render(a, NULL, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(strstr(out,
			   "\"t_arrive_ns\":null,\"t_read_ns\":1000000,"
			   "\"t_first_write_ns\":null,\"t_wire_ns\":null,"
			   "\"ttft_ns\":null,\"tokens\":0,\"tpot_ns\":null,"
			   "\"complete\":false"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "no-arrive,no-response,open-at-end"), "strstr");
	free(out);
	out = render(a, NULL, &o, false);
	ASSERT_TRUE(strstr(out, "no-arrive,no-response,open-at-end"), "strstr");
	free(out);
	tt_analyzer_free(a);
}

static void test_stage_breakdown(void)
{
	struct tt_analyzer *a = staged_sample();
	struct tt_report_opts o = {};
	const char *p;
	char *out;

	check_closure(a);
	ASSERT_EQ(tt_analyzer_nrequests(a), 3, "tt_analyzer_nrequests");
	out = render(a, NULL, &o, false);
	ASSERT_TRUE(strstr(out, "requests: 3 (complete 3, incomplete 0)\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "stage (ms)") && strstr(out, "(3 requests)"),
		    "strstr");
	/* summed TTFT 11.235 ms */
	ASSERT_TRUE(stage_row(out, "network.in", 0.010, 0.010, 0.010, 0.010,
			      0.3),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "network.out", 0.005, 0.005, 0.005, 0.005,
			      0.1),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "scheduler.queue", 0, 0, 0, 0, 0),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "scheduler.runqueue", 1.377, 1.010, 3.010,
			      3.010, 36.8),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "storage.io", 0, 0, 0, 0, 0), "stage_row");
	ASSERT_TRUE(stage_row(out, "compute.gpu", 0, 0, 0, 0, 0), "stage_row");
	ASSERT_TRUE(stage_row(out, "compute.cpu", 2.353, 2.020, 4.020, 4.020,
			      62.8),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "other", 0, 0, 0, 0, 0), "stage_row");
	ASSERT_TRUE(stage_row(out, "  other.sleep", 0, 0, 0, 0, 0),
		    "stage_row");
	ASSERT_TRUE(stage_row(out, "  other.lock", 0, 0, 0, 0, 0), "stage_row");
	ASSERT_TRUE(stage_row(out, "  other.unknown", 0, 0, 0, 0, 0),
		    "stage_row");
	/* the stages of the p50 (#3), p90 and p99 (#2) requests */
	p = strstr(out, "breakdown of the p50 / p90 / p99 request (ms):\n");
	ASSERT_OK_PTR(p, "p");
	if (p) {
		double v[4];
		char id[3][16];

		ASSERT_TRUE(line_of(p, "request") &&
				    sscanf(line_of(p, "request") + 7,
					   "%15s %15s %15s", id[0], id[1],
					   id[2]) == 3,
			    "line_of(p, \"request\") && sscanf(line_...");
		ASSERT_TRUE(!strcmp(id[0], "#3") && !strcmp(id[1], "#2") &&
				    !strcmp(id[2], "#2"),
			    "!strcmp(id[0], \"#3\") && !strcmp(id[1]...");
		ASSERT_EQ(row(p, "TTFT", v), 3, "row");
		ASSERT_TRUE(v[0] == 4.045 && v[1] == 5.045 && v[2] == 5.045,
			    "v[0] == 4.045 && v[1] == 5.045 && v[2...");
		ASSERT_EQ(row(p, "scheduler.runqueue", v), 3, "row");
		ASSERT_TRUE(v[0] == 3.010 && v[1] == 1.010 && v[2] == 1.010,
			    "v[0] == 3.010 && v[1] == 1.010 && v[2...");
		ASSERT_EQ(row(p, "compute.cpu", v), 3, "row");
		ASSERT_TRUE(v[0] == 1.020 && v[1] == 4.020 && v[2] == 4.020,
			    "v[0] == 1.020 && v[1] == 4.020 && v[2...");
		ASSERT_EQ(row(p, "  other.lock", v), 3, "row");
		ASSERT_TRUE(v[0] == 0 && v[1] == 0 && v[2] == 0,
			    "v[0] == 0 && v[1] == 0 && v[2] == 0");
	}
	free(out);

	/* the table's DOMINANT column */
	o.requests = true;
	out = render(a, NULL, &o, false);
	p = strstr(out, "10.9.9.9:1003");
	ASSERT_TRUE(p && strstr(p, " scheduler.runqueue ") &&
			    strstr(p, " scheduler.runqueue ") < strchr(p, '\n'),
		    "p && strstr(p, \" scheduler.runqueue \"...");
	p = strstr(out, "10.9.9.9:1002");
	ASSERT_TRUE(p && strstr(p, " compute.cpu ") &&
			    strstr(p, " compute.cpu ") < strchr(p, '\n'),
		    "p && strstr(p, \" compute.cpu \") && st...");
	free(out);
	tt_analyzer_free(a);
}

static void test_stage_json(void)
{
	struct tt_analyzer *a = staged_sample();
	struct tt_report_opts o = { .json = true };
	char *out = render(a, NULL, &o, true);

	ASSERT_TRUE(json_valid(out), "json_valid");
	/* #3: arrived at 50 ms, handed to the engine at +20 us, taken up
	 * when it first ran, at +3.020 ms (3 ms runnable); its first token
	 * handed to the writer at +4.020 ms */
	ASSERT_TRUE(
		strstr(out,
		       "\"reader_tid\":101,\"t_enqueue_ns\":50020000,"
		       "\"t_dispatch_ns\":53020000,"
		       "\"t_token_ns\":54020000,\"gil_ns\":0,"
		       "\"steal_ns\":0,"
		       "\"storage_span_ns\":null,\"attributed\":true,"
		       "\"dispatch_rule\":\"pickup\",\"enqueue_rule\":\"pickup\","
		       "\"token_rule\":\"inferred\","
		       "\"dominant\":\"scheduler.runqueue\","
		       "\"stages\":{\"network.in\":10000,"
		       "\"network.out\":5000,\"scheduler.backlog\":0,"
		       "\"scheduler.queue\":0,"
		       "\"scheduler.runqueue\":3010000,\"storage.io\":0,"
		       "\"compute.gpu\":0,\"compute.cpu\":1020000,"
		       "\"other\":0},\"other_detail\":{\"sleep\":0,"
		       "\"lock\":0,\"unknown\":0}"),
		"strstr");
	ASSERT_TRUE(strstr(out, "\"dominant\":\"compute.cpu\",\"stages\":{"
				"\"network.in\":10000,\"network.out\":5000,"
				"\"scheduler.backlog\":0,\"scheduler.queue\":0,"
				"\"scheduler.runqueue\":1010000,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"stages_n\":3,\"stages\":{\"network.in\":"
				"{\"mean\":10000,\"p50\":10000,\"p90\":10000,"
				"\"p99\":10000,\"share\":0.002670},"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"scheduler.runqueue\":{\"mean\":1376666,"
				"\"p50\":1010000,\"p90\":3010000,"
				"\"p99\":3010000,\"share\":0.367601}"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"other\":{\"mean\":0,\"p50\":0,\"p90\":0,"
				"\"p99\":0,\"share\":0.000000}},"
				"\"other_detail\":{\"sleep\":{\"mean\":0,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"percentile_requests\":{\"p50\":3,"
				"\"p90\":2,\"p99\":2}"),
		    "strstr");
	free(out);
	tt_analyzer_free(a);

	/* unknown stages are null: a request never answered */
	a = tt_analyzer_new();
	open_conn(a, 0x40, "10.0.0.4", 4000);
	sock_ev(a, TT_EV_RECV, 1 * MS, 0x40, 10);
	tt_analyzer_finish(a);
	out = render(a, NULL, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(strstr(out, "\"t_enqueue_ns\":null,\"t_dispatch_ns\":null,"
				"\"t_token_ns\":null,\"gil_ns\":null,"
				"\"steal_ns\":null,"
			   "\"storage_span_ns\":null,"
				"\"attributed\":false,\"dispatch_rule\":null,"
				"\"enqueue_rule\":null,\"token_rule\":null,"
				"\"dominant\":null,\"stages\":null,"
				"\"other_detail\":null"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"stages_n\":0,\"stages\":{\"network.in\":"
				"{\"mean\":null,\"p50\":null,\"p90\":null,"
				"\"p99\":null,\"share\":null},"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"percentile_requests\":{\"p50\":null,"),
		    "strstr");
	free(out);
	tt_analyzer_free(a);
}

/* Renders request id's drill-down into a string (free it). */
static char *render_request(const struct tt_analyzer *a, __u64 id, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	*err = tt_report_request(f, a, id);
	fclose(f);
	return buf;
}

/* The segment line whose start and duration are these: its thread, state,
 * reason (one word here) and stage. */
static bool seg_line(const char *text, const char *start, const char *dur,
		     const char *thread, const char *state, const char *reason,
		     const char *stage)
{
	char f[6][64];
	const char *p = strstr(text, "critical path:");

	for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (sscanf(p, "%63s %63s %63s %63s %63s %63s", f[0], f[1], f[2],
			   f[3], f[4], f[5]) != 6 ||
		    strcmp(f[0], start) || strcmp(f[1], dur))
			continue;
		return !strcmp(f[2], thread) && !strcmp(f[3], state) &&
		       !strcmp(f[4], reason) && !strcmp(f[5], stage);
	}
	fprintf(stderr, "  no segment line %s %s\n", start, dur);
	return false;
}

/* s is on the line p starts (p may be NULL). */
static bool in_line(const char *p, const char *s)
{
	const char *hit = p ? strstr(p, s) : NULL;

	return hit && (!strchr(p, '\n') || hit < strchr(p, '\n'));
}

/* Markers override the pick-up of request 3 (docs/design.md §4.9): the
 * drill-down and the JSON say so, the summary counts the unbound one. */
static void test_marker_rules(void)
{
	struct tt_analyzer *a = staged_sample_marked(true);
	struct tt_report_opts o = { .json = true };
	const char *p;
	char *out;
	int err;

	out = render_request(a, 3, &err);
	ASSERT_EQ(err, 0, "err");
	p = line_of(out, "t_enqueue");
	ASSERT_TRUE(in_line(p, "0.015 ") && in_line(p, "(rule marker)"),
		    "t_enqueue from the marker");
	p = line_of(out, "t_dispatch");
	ASSERT_TRUE(in_line(p, "3.520 ") &&
			    in_line(p, "rule marker: an application marker"),
		    "t_dispatch from the marker");
	ASSERT_GE(row(out, "scheduler.queue", (double[4]){ 0 }), 1, "row");
	free(out);
	out = render(a, NULL, &o, true);
	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(strstr(out, "\"t_enqueue_ns\":50015000,"
				"\"t_dispatch_ns\":53520000,"),
		    "marker times in JSON");
	ASSERT_TRUE(strstr(out, "\"dispatch_rule\":\"marker\","
				"\"enqueue_rule\":\"marker\","
				"\"token_rule\":\"inferred\""),
		    "marker rules in JSON");
	ASSERT_TRUE(strstr(out, "\"markers\":{\"hit\":3,\"unbound\":1,"
				"\"outside\":0}"),
		    "marker counts in JSON");
	free(out);
	out = render(a, NULL, &(struct tt_report_opts){ 0 }, false);
	ASSERT_TRUE(strstr(out, "markers: 3 hit, 1 named no request, 0 outside"),
		    "marker counts in text");
	free(out);
	tt_analyzer_free(a);
}

static void test_request_drilldown(void)
{
	/* START, DUR, THREAD, STATE, REASON, STAGE of each segment line */
	static const char *const segs[][6] = {
		{ "0.000", "0.010", "reader/101", "phase", "request", "in" },
		{ "0.010", "0.010", "reader/101", "running", "on-cpu",
		  "compute.cpu" },
		{ "0.020", "3.000", "engine/102", "runnable", "runqueue",
		  "scheduler.runqueue" },
		{ "3.020", "1.000", "engine/102", "running", "on-cpu",
		  "compute.cpu" },
		{ "4.020", "0.010", "writer/103", "runnable", "runqueue",
		  "scheduler.runqueue" },
		{ "4.030", "0.010", "writer/103", "running", "on-cpu",
		  "compute.cpu" },
		{ "4.040", "0.005", "writer/103", "phase", "response", "out" },
	};
	struct tt_analyzer *a = staged_sample();
	const char *p;
	size_t i;
	char *out;
	int err;

	out = render_request(a, 3, &err);
	ASSERT_EQ(err, 0, "err");
	ASSERT_TRUE(strstr(out, "request 3  peer 10.9.9.9:1003  complete\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "TTFT 4.045 ms"), "strstr");
	ASSERT_TRUE(strstr(out, "read by reader/101, first token written by "
				"writer/103\n"),
		    "strstr");
	ASSERT_GE(row(out, "t_arrive", (double[4]){ 0 }), 1, "row");
	p = line_of(out, "t_read");
	ASSERT_TRUE(p && strstr(p, "0.010 ") < strchr(p, '\n'),
		    "p && strstr(p, \"0.010 \") < strchr(p, ...");
	/* a pick-up: no queue, the request is taken up as it is handed on */
	p = line_of(out, "t_enqueue");
	ASSERT_TRUE(p && strstr(p, "0.020 ") < strchr(p, '\n'),
		    "p && strstr(p, \"0.020 \") < strchr(p, ...");
	p = line_of(out, "t_dispatch");
	ASSERT_TRUE(p && strstr(p, "0.020 ") &&
			    strstr(p, "rule pickup") < strchr(p, '\n'),
		    "p && strstr(p, \"0.020 \") && strstr(p,...");
	p = line_of(out, "t_token");
	ASSERT_TRUE(p && strstr(p, "4.020 ") < strchr(p, '\n'),
		    "p && strstr(p, \"4.020 \") < strchr(p, ...");
	p = line_of(out, "t_first_write");
	ASSERT_TRUE(p && strstr(p, "4.040 ") < strchr(p, '\n'),
		    "p && strstr(p, \"4.040 \") < strchr(p, ...");
	p = line_of(out, "t_wire");
	ASSERT_TRUE(p && strstr(p, "4.045 ") < strchr(p, '\n'),
		    "p && strstr(p, \"4.045 \") < strchr(p, ...");
	/* one token: E2E ends with the first */
	p = line_of(out, "E2E");
	ASSERT_TRUE(p && strstr(p, "4.045  E2E: its last token on the device\n"),
		    "E2E line");
	p = line_of(out, "scheduler.runqueue");
	ASSERT_TRUE(p && strstr(p, "3.010") && strstr(p, "74.4%") &&
			    strstr(p, "74.4%") < strchr(p, '\n'),
		    "p && strstr(p, \"3.010\") && strstr(p, ...");
	ASSERT_TRUE(strstr(out, "times (ms from t_arrive):\n"), "strstr");
	ASSERT_TRUE(strstr(out,
			   "critical path: 7 segments, ms from t_arrive\n"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "START") && strstr(out, "DUR") &&
			    strstr(out, "THREAD") && strstr(out, "STATE") &&
			    strstr(out, "REASON") && strstr(out, "STAGE"),
		    "strstr");
	/* every segment, in time order; the reader's work up to the
	 * hand-off is not a queue */
	for (i = 0; i < sizeof(segs) / sizeof(segs[0]); i++)
		ASSERT_TRUE(seg_line(out, segs[i][0], segs[i][1], segs[i][2],
				     segs[i][3], segs[i][4], segs[i][5]),
			    segs[i][0]);
	/* columns line up: every segment's STAGE starts where the header's
	 * does */
	p = strstr(out, "START");
	if (p) {
		const char *hdr = p, *stage = strstr(p, "STAGE");
		size_t col = stage - hdr, lines = 0;

		for (p = strchr(hdr, '\n') + 1; *p && *p != '(';
		     p = strchr(p, '\n') + 1) {
			ASSERT_TRUE(p[col - 1] == ' ' && p[col] != ' ',
				    "p[col - 1] == ' ' && p[col] != ' '");
			lines++;
		}
		ASSERT_EQ(lines, 7, "lines");
	}
	free(out);

	/* no such request: nothing printed */
	out = render_request(a, 4, &err);
	ASSERT_EQ(err, -ENOENT, "err");
	ASSERT_EQ(out[0], '\0', "out[0]");
	free(out);
	out = render_request(a, 0, &err);
	ASSERT_EQ(err, -ENOENT, "err");
	free(out);
	tt_analyzer_free(a);

	/* a request with no path to walk */
	a = tt_analyzer_new();
	open_conn(a, 0x40, "10.0.0.4", 4000);
	sock_ev(a, TT_EV_RECV, 1 * MS, 0x40, 10);
	tt_analyzer_finish(a);
	out = render_request(a, 1, &err);
	ASSERT_EQ(err, 0, "err");
	ASSERT_TRUE(strstr(out, "request 1  peer 10.0.0.4:4000  no-arrive,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "critical path: not walked"), "strstr");
	p = line_of(out, "t_read");
	ASSERT_TRUE(
		p && strstr(p, "0.000 "),
		"p && strstr(p, \"0.000 \")"); /* from t_read: no t_arrive */
	ASSERT_TRUE(strstr(out, "ms from t_read"), "strstr");
	free(out);
	tt_analyzer_free(a);
}

static void test_write_error(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = {};
	FILE *ro = fopen("/dev/null", "r");

	ASSERT_OK_PTR(ro, "ro");
	if (ro) {
		ASSERT_EQ(tt_report_text(ro, a, NULL, &o), -EIO,
			  "tt_report_text");
		clearerr(ro);
		ASSERT_EQ(tt_report_json(ro, a, NULL, &o), -EIO,
			  "tt_report_json");
		clearerr(ro);
		ASSERT_EQ(tt_report_request(ro, a, 1), -EIO,
			  "tt_report_request");
		fclose(ro);
	}
	tt_analyzer_free(a);
}

/* ---- OTLP spans (render/otlp.c, docs/design.md §11.3), read back by a
 * minimal protobuf walker: tools/otlp-receiver checks them with
 * OpenTelemetry's own decoder in tests/test_bpf_otlp.sh ---- */

struct pbf {
	unsigned int field, wt;
	__u64 v; /* a varint's or fixed64's value */
	const unsigned char *sub; /* a LEN field's bytes */
	size_t len;
};

static bool pb_varint(const unsigned char **p, const unsigned char *end,
		      __u64 *v)
{
	*v = 0;
	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char c = *(*p)++;

		*v |= (__u64)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The next field of [*p, end): false at the end or on a malformed one
 * (*bad set). */
static bool pb_next(const unsigned char **p, const unsigned char *end,
		    struct pbf *f, bool *bad)
{
	__u64 key;

	if (*p == end)
		return false;
	if (!pb_varint(p, end, &key))
		goto cleanup;
	f->field = key >> 3;
	f->wt = key & 7;
	if (f->wt == 0)
		return pb_varint(p, end, &f->v) || (*bad = true, false);
	if (f->wt == 1 && end - *p >= 8) {
		memcpy(&f->v, *p, 8);
		*p += 8;
		return true;
	}
	if (f->wt == 2 && pb_varint(p, end, &f->v) &&
	    f->v <= (__u64)(end - *p)) {
		f->sub = *p;
		f->len = f->v;
		*p += f->len;
		return true;
	}
cleanup:
	*bad = true;
	return false;
}

/* The first field number n of a message, or false. */
static bool pb_find(const unsigned char *p, size_t len, unsigned int n,
		    struct pbf *out)
{
	const unsigned char *end = p + len;
	bool bad = false;

	while (pb_next(&p, end, out, &bad))
		if (out->field == n)
			return true;
	return false;
}

/* An attribute (KeyValue, field 9 of a span) with an int or string value */
static bool span_attr(const struct pbf *span, const char *key, struct pbf *val)
{
	const unsigned char *p = span->sub, *end = span->sub + span->len;
	struct pbf f, k;
	bool bad = false;

	while (pb_next(&p, end, &f, &bad)) {
		if (f.field != 9 || !pb_find(f.sub, f.len, 1, &k) ||
		    k.len != strlen(key) || memcmp(k.sub, key, k.len))
			continue;
		return pb_find(f.sub, f.len, 2, &k) &&
		       pb_next(&(const unsigned char *){ k.sub }, k.sub + k.len,
			       val, &bad);
	}
	return false;
}

static bool span_named(const struct pbf *span, const char *name)
{
	struct pbf n;

	return pb_find(span->sub, span->len, 5, &n) && n.len == strlen(name) &&
	       !memcmp(n.sub, name, n.len);
}

static void test_otlp_spans(void)
{
	struct tt_analyzer *a = sample();
	struct tt_otlp_src src = { "host", 0, 1000 * 1000000000ULL };
	unsigned char t1[16], s1[8], t2[16], s2[8];
	const unsigned char *p, *end;
	struct tt_pbuf b = {};
	size_t nrs = 0, spans = 0, want = 0;
	bool bad = false;
	struct pbf rs, f;
	int n;

	for (size_t i = 0; i < tt_analyzer_nrequests(a); i++) {
		n = tt_otlp_add_request(&b, &src, a, i);
		ASSERT_GT(n, 1, "a request span and its children");
		want += n;
	}
	ASSERT_OK(b.err, "encoded");
	p = b.p;
	end = b.p + b.len;
	while (pb_next(&p, end, &rs, &bad)) {
		struct pbf ss, sp, v;
		const unsigned char *q;
		const struct tt_request *r = tt_analyzer_request(a, nrs);
		char peer[64];

		ASSERT_EQ(rs.field, 1, "resource_spans");
		ASSERT_TRUE(pb_find(rs.sub, rs.len, 2, &ss), "scope_spans");
		q = ss.sub;
		while (pb_next(&q, ss.sub + ss.len, &sp, &bad)) {
			if (sp.field != 2)
				continue;
			spans++;
			if (!span_named(&sp, "ttftrace.request"))
				continue;
			ASSERT_TRUE(span_attr(&sp, "ttftrace.ttft_ns", &v),
				    "ttft");
			ASSERT_EQ(v.v, r->ttft, "its TTFT");
			ASSERT_TRUE(span_attr(&sp, "client.port", &v), "port");
			ASSERT_EQ(v.v, r->rport, "its client port");
			ASSERT_TRUE(span_attr(&sp, "client.address", &v),
				    "addr");
			/* [::1]:5555 is "::1", 10.0.0.1:1000 "10.0.0.1" */
			tt_request_peer(r, peer, sizeof(peer));
			*strrchr(peer, ':') = '\0';
			if (peer[0] == '[')
				peer[strlen(peer) - 1] = '\0';
			ASSERT_EQ(v.len, strlen(peer + (peer[0] == '[')),
				  "address length");
			ASSERT_TRUE(!memcmp(v.sub, peer + (peer[0] == '['),
					    v.len),
				    "its address, no brackets");
			ASSERT_TRUE(pb_find(sp.sub, sp.len, 7, &v), "start");
			ASSERT_EQ(v.v, r->t_arrive + src.real_ns, "Unix ns");
		}
		nrs++;
	}
	ASSERT_FALSE(bad, "well formed throughout");
	ASSERT_EQ(nrs, tt_analyzer_nrequests(a), "a ResourceSpans a request");
	ASSERT_EQ(spans, want, "every span counted");
	/* ids: the same request the same ids, another request others */
	tt_otlp_ids(&src, tt_analyzer_request(a, 0), t1, s1);
	tt_otlp_ids(&src, tt_analyzer_request(a, 0), t2, s2);
	ASSERT_TRUE(!memcmp(t1, t2, 16) && !memcmp(s1, s2, 8), "deterministic");
	tt_otlp_ids(&src, tt_analyzer_request(a, 1), t2, s2);
	ASSERT_TRUE(memcmp(t1, t2, 16) && memcmp(s1, s2, 8), "per request");
	/* the resource names the host */
	ASSERT_TRUE(pb_find(b.p, b.len, 1, &rs) &&
			    pb_find(rs.sub, rs.len, 1, &f),
		    "a resource");
	ASSERT_TRUE(memmem(f.sub, f.len, "host.name", 9) != NULL, "host.name");
	tt_pbuf_free(&b);
	tt_analyzer_free(a);
}

/* A path that lost time to the hypervisor: the request's steal_ns, the
 * drill-down's line, the summary's; the stages as without it. */
static void test_steal(void)
{
	struct tt_analyzer *a = staged_sample_with(false, true);
	struct tt_report_opts o = { .json = true };
	char *out = render(a, NULL, &o, true);
	const char *p;
	int err;

	ASSERT_TRUE(json_valid(out), "json_valid");
	ASSERT_TRUE(strstr(out, "\"t_token_ns\":54020000,\"gil_ns\":0,"
				"\"steal_ns\":499500,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"scheduler.runqueue\":3010000,"
				"\"storage.io\":0,\"compute.gpu\":0,"
				"\"compute.cpu\":1020000,"),
		    "strstr");
	ASSERT_TRUE(strstr(out, "\"steal_requests\":1,\"steal_ns\":499500,"
				"\"steal_max_ns\":499500,"),
		    "strstr");
	free(out);
	o.json = false;
	out = render(a, NULL, &o, false);
	ASSERT_TRUE(strstr(out,
			   "steal: 1 request(s) lost 0.500 ms on their paths"),
		    "strstr");
	free(out);
	out = render_request(a, 3, &err);
	ASSERT_EQ(err, 0, "err");
	p = line_of(out, "steal");
	ASSERT_TRUE(p && strstr(p, "0.500 ") < strchr(p, '\n'),
		    "p && strstr(p, \"0.500 \") < strchr(p, ...");
	free(out);
	/* none lost: no line */
	out = render_request(a, 2, &err);
	ASSERT_TRUE(!err && !line_of(out, "steal"), "!line_of(out, \"steal\")");
	free(out);
	tt_analyzer_free(a);
}

int main(void)
{
	TT_RUN(test_percentiles);
	TT_RUN(test_sort_large);
	TT_RUN(test_errors_apart);
	TT_RUN(test_fmt_and_vec);
	TT_RUN(test_peer);
	TT_RUN(test_text_summary);
	TT_RUN(test_text_requests_table);
	TT_RUN(test_json);
	TT_RUN(test_itl_bunched);
	TT_RUN(test_empty);
	TT_RUN(test_unknown_values_are_null);
	TT_RUN(test_stage_breakdown);
	TT_RUN(test_stage_json);
	TT_RUN(test_steal);
	TT_RUN(test_request_drilldown);
	TT_RUN(test_marker_rules);
	TT_RUN(test_write_error);
	TT_RUN(test_otlp_spans);
	TT_EXIT();
}
