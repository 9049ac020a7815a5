/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The analyzer on synthetic event streams: request reconstruction, TTFT,
 * TPOT and inter-token gaps, the reorder window, XMIT matching, losses,
 * and the critical path's stages carried into each request. Every analysis
 * of every test is checked for the closure invariant: a complete request
 * is attributed and its stages sum exactly to its TTFT.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include "analyzer.h"
#include "classify.h"
#include "tt_arch.h"
#include "tt_test.h"
#include "window.h"
#include "server_bytes.h"

#define US 1000ULL
#define MS 1000000ULL
#define SERVER_TGID 4242
#define READER_TID 4243
#define ENGINE_TID 4245
#define WRITER_TID 4250
#define CLIENT_TID 9001 /* the untraced load generator, current in softirq */

#define NR_IOCTL 16
#define NR_FUTEX TT_NR_futex
#define NR_EPOLL_WAIT 232
#define GPU_RDEV ((195u << 20) | 0) /* /dev/nvidia0 as i_rdev holds it */

#define TOKEN_CHUNK "1c\r\ndata: {\"content\":\"Hello\"}\n\n\r\n"
#define DONE_CHUNK "e\r\ndata: [DONE]\n\n\r\n"
#define LAST_CHUNK "0\r\n\r\n"

/* ---- building event streams ---- */

struct evlist {
	struct tt_event *v;
	size_t n, cap;
};

static struct evlist L;

static void push(const struct tt_event *ev)
{
	if (L.n == L.cap) {
		L.cap = L.cap ? L.cap * 2 : 256;
		L.v = realloc(L.v, L.cap * sizeof(*L.v));
		if (!L.v)
			abort();
	}
	L.v[L.n++] = *ev;
}

/* the process mk() stamps events with: SERVER_TGID but where a test says */
static __u32 mk_tgid = SERVER_TGID;

static struct tt_event mk(unsigned int type, __u64 ts, __u32 tid)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = mk_tgid;
	ev.h.tid = tid;
	return ev;
}

/* ---- scheduler events ---- */

/* What a thread blocks in at its switch-out. */
struct blk {
	int sys;
	__u64 arg0;
	__u32 mode; /* S_IF* of the fd in arg0, 0 for none */
	__u32 rdev;
};

/* The idle task hands the CPU to the server's thread tid. */
static void sw_in(__u64 ts, __u32 tid)
{
	struct tt_event ev = mk(TT_EV_SWITCH, ts, 0);

	ev.h.tgid = 0;
	ev.sw.next_tid = tid;
	ev.sw.next_tgid = SERVER_TGID;
	ev.sw.sw_flags = TT_SW_NEXT_TRACED;
	ev.sw.syscall_nr = -1;
	push(&ev);
}

/* tid blocks in b; the idle task runs. */
static void sw_out(__u64 ts, __u32 tid, struct blk b)
{
	struct tt_event ev = mk(TT_EV_SWITCH, ts, tid);

	ev.sw.prev_state = 1; /* TASK_INTERRUPTIBLE */
	ev.sw.syscall_nr = b.sys;
	ev.sw.arg0 = b.arg0;
	ev.sw.sw_flags = TT_SW_PREV_TRACED;
	if (b.mode) {
		ev.sw.sw_flags |= TT_SW_FD;
		ev.sw.fd_mode = b.mode | 0600;
		ev.sw.fd_rdev = b.rdev;
	}
	push(&ev);
}

/* current wakes the server's thread target: in process context with its
 * syscall and first argument, or from irq context (flags). */
static void wake(__u64 ts, __u32 current, __u32 target, __u32 flags, int sys,
		 __u64 arg0)
{
	struct tt_event ev = mk(TT_EV_WAKING, ts, current);

	if (current == CLIENT_TID)
		ev.h.tgid = CLIENT_TID;
	ev.h.flags = flags;
	ev.wake.target_tid = target;
	ev.wake.target_tgid = SERVER_TGID;
	ev.wake.waker_syscall = flags ? -1 : sys;
	ev.wake.waker_arg0 = flags ? 0 : arg0;
	push(&ev);
}

/* Starts a stream in which the reader and the writer run from time 0 on:
 * every request whose socket events are whole then has a critical path
 * (all compute.cpu on the writer between t_read and t_first_write). */
static void reset(void)
{
	L.n = 0;
	sw_in(0, READER_TID);
	sw_in(0, WRITER_TID);
}

/* A stream with no scheduler events at all. */
static void reset_bare(void)
{
	L.n = 0;
}

static void conn_open(__u64 ts, __u64 sk, const char *ip, __u16 rport)
{
	struct tt_event ev = mk(TT_EV_CONN_OPEN, ts, 0);

	ev.conn.sk = sk;
	ev.conn.lport = 8000;
	ev.conn.rport = rport;
	if (strchr(ip, ':')) {
		ev.conn.family = AF_INET6;
		inet_pton(AF_INET6, ip, ev.conn.raddr);
		inet_pton(AF_INET6, "::1", ev.conn.laddr);
	} else {
		ev.conn.family = AF_INET;
		inet_pton(AF_INET, ip, ev.conn.raddr);
		inet_pton(AF_INET, "127.0.0.1", ev.conn.laddr);
	}
	push(&ev);
}

static void sock_ev(unsigned int type, __u64 ts, __u64 sk, __u32 tid, __s64 len)
{
	struct tt_event ev = mk(type, ts, tid);

	ev.sock.sk = sk;
	ev.sock.len = len;
	push(&ev);
}

/* The connection ends: the server's close, or a reset. */
static void conn_close(__u64 ts, __u64 sk)
{
	sock_ev(TT_EV_CONN_CLOSE, ts, sk, 0, 7 /* TCP_CLOSE */);
}

/* The client's FIN: the state change, then its segment wakes the socket
 * with one more in the queue than the unread bytes. */
static void peer_fin(__u64 ts, __u64 sk, __s64 unread)
{
	sock_ev(TT_EV_CONN_CLOSE, ts, sk, 0, TT_TCP_CLOSE_WAIT);
	sock_ev(TT_EV_DATA_READY, ts + 1 * US, sk, 0, unread + 1);
}

static void data_ready(__u64 ts, __u64 sk)
{
	sock_ev(TT_EV_DATA_READY, ts, sk, 0, 300);
}

static void recv_(__u64 ts, __u64 sk, __s64 len)
{
	sock_ev(TT_EV_RECV, ts, sk, READER_TID, len);
}

/* A request of len bytes on sk: its first bytes come at t, the server
 * reads it at t_read. */
static void request_in(__u64 t, __u64 t_read, __u64 sk, __s64 len)
{
	data_ready(t, sk);
	recv_(t_read, sk, len);
}

static void xmit(__u64 ts, __u64 sk, __u32 seq, __u32 end_seq)
{
	struct tt_event ev = mk(TT_EV_XMIT, ts, 0);

	ev.xmit.sk = sk;
	ev.xmit.seq = seq;
	ev.xmit.end_seq = end_seq;
	ev.xmit.len = end_seq - seq + 66;
	push(&ev);
}

static void send_cls(__u64 ts_enter, __u64 ts, __u64 sk, __u32 seq, __s64 len,
		     unsigned int cls, unsigned int tokens, unsigned int flags)
{
	struct tt_event ev = mk(TT_EV_SEND, ts, WRITER_TID);

	ev.send.sk = sk;
	ev.send.len = len;
	ev.send.ts_enter = ts_enter;
	ev.send.seq = seq;
	ev.send.cls = cls;
	ev.send.tokens = tokens;
	ev.send.flags = flags;
	push(&ev);
}

/*
 * A send of these bytes, classified as the collector does, taking 20 us;
 * its skb reaches the device at xmit_at (0: never). Returns the next seq.
 */
static __u32 send_raw(__u64 ts_enter, __u64 sk, __u32 seq, const char *b,
		      size_t len, __u64 xmit_at, struct tt_sse_carry *carry)
{
	struct tt_event ev = mk(TT_EV_SEND, ts_enter + 20 * US, WRITER_TID);

	ev.send.sk = sk;
	ev.send.len = len;
	ev.send.ts_enter = ts_enter;
	ev.send.seq = seq;
	tt_classify_send_carry(b, len < TT_SEND_CAPTURE ? len : TT_SEND_CAPTURE,
			       len, &ev.send, carry);
	push(&ev);
	if (xmit_at)
		xmit(xmit_at, sk, seq, seq + len);
	return seq + len;
}

static __u32 send_bytes_carry(__u64 ts_enter, __u64 sk, __u32 seq,
			      const char *b, __u64 xmit_at,
			      struct tt_sse_carry *carry)
{
	return send_raw(ts_enter, sk, seq, b, strlen(b), xmit_at, carry);
}

static __u32 send_bytes(__u64 ts_enter, __u64 sk, __u32 seq, const char *b,
			__u64 xmit_at)
{
	return send_bytes_carry(ts_enter, sk, seq, b, xmit_at, NULL);
}

static void lost(__u64 ts, __u64 since, __u64 count, __u32 cpu)
{
	struct tt_event ev = mk(TT_EV_LOST, ts, 0);

	ev.lost.count = count;
	ev.lost.since_ts = since;
	ev.lost.lost_cpu = cpu;
	push(&ev);
}

/*
 * One SSE request in uvicorn's shape on connection sk: arrives at t0, read
 * 100 us later, headers at t0 + 1 ms, ntok token chunks every gap from
 * t0 + first, each on the wire 5 us after its syscall entry (loopback:
 * inside the send), then [DONE] and the last chunk. Returns the end time.
 */
static __u64 sse_request(__u64 sk, __u64 t0, __u32 *seq, __u64 first,
			 unsigned int ntok, __u64 gap)
{
	__u64 t = t0 + first;
	unsigned int k;

	request_in(t0, t0 + 100 * US, sk, 300);
	*seq = send_bytes(t0 + 1 * MS, sk, *seq, UVICORN_SSE_HEADERS,
			  t0 + 1 * MS + 5 * US);
	for (k = 0; k < ntok; k++, t += gap)
		*seq = send_bytes(t, sk, *seq, TOKEN_CHUNK, t + 5 * US);
	t = t - gap + 1 * MS;
	*seq = send_bytes(t, sk, *seq, DONE_CHUNK, t + 5 * US);
	*seq = send_bytes(t + 100 * US, sk, *seq, LAST_CHUNK, t + 105 * US);
	return t + 20 * US; /* the DONE send's completion */
}

/* ---- the invariants of every analysis ---- */

static __u64 stage_sum(const struct tt_request *r)
{
	__u64 sum = 0;
	int st;

	for (st = 0; st < TT_ST_MAX; st++)
		sum += r->stage_ns[st];
	return sum;
}

static size_t paths_checked, complete_checked;

/*
 * A complete request is attributed, and its stages sum exactly to its
 * TTFT; a walked one's segments tile [t_arrive, t_wire) and its phase
 * boundaries are in order; the request carries its walk's numbers.
 */
static void check_paths(const struct tt_analyzer *a)
{
	const struct tt_cp_result *res;
	const struct tt_request *r;
	__u64 t, by_stage[TT_ST_MAX];
	size_t i, k;

	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		res = tt_analyzer_cp_result(a, i);
		ASSERT_OK_PTR(res, "res");
		if (!res)
			continue;
		ASSERT_PTR_EQ(tt_analyzer_cp_request(a, i),
			      tt_analyzer_cp_request(a, 0) + i,
			      "tt_analyzer_cp_request");
		ASSERT_PTR_EQ(res, tt_analyzer_cp_result(a, 0) + i, "res");
		ASSERT_EQ(tt_analyzer_cp_request(a, i)->id, r->id,
			  "tt_analyzer_cp_request.id");
		ASSERT_EQ(r->attributed, res->complete, "r.attributed");
		if (r->complete) {
			complete_checked++;
			ASSERT_TRUE(r->attributed, "r.attributed");
			ASSERT_EQ(stage_sum(r), r->ttft, "stage_sum");
		}
		if (res->incomplete & TT_CP_INC_NOT_WALKED) {
			ASSERT_TRUE(!r->attributed && !res->segs,
				    "!r->attributed && !res->segs");
			ASSERT_EQ(stage_sum(r), 0, "stage_sum");
			continue;
		}
		paths_checked++;
		ASSERT_EQ(stage_sum(r), r->ttft, "stage_sum");
		ASSERT_FALSE(memcmp(r->stage_ns, res->stage_ns,
				    sizeof(r->stage_ns)),
			     "memcmp");
		memset(by_stage, 0, sizeof(by_stage));
		for (k = 0, t = r->t_arrive; k < res->nsegs; k++) {
			ASSERT_EQ(res->segs[k].start, t, "segs[k].start");
			ASSERT_GT(res->segs[k].dur, 0, "segs[k].dur");
			ASSERT_LT(res->segs[k].stage, TT_ST_MAX,
				  "segs[k].stage");
			if (res->segs[k].stage < TT_ST_MAX)
				by_stage[res->segs[k].stage] +=
					res->segs[k].dur;
			t += res->segs[k].dur;
		}
		ASSERT_EQ(t, r->t_wire, "t");
		ASSERT_FALSE(memcmp(by_stage, r->stage_ns, sizeof(by_stage)),
			     "memcmp");
		if (r->t_read) {
			ASSERT_LE(r->t_read, r->t_dispatch, "r.t_read");
			ASSERT_LE(r->t_dispatch, r->t_token, "r.t_dispatch");
			/* the walk takes t_first_write no earlier than t_read */
			ASSERT_TRUE(r->t_token <= r->t_first_write ||
					    r->t_token == r->t_read,
				    "r->t_token <= r->t_first_write || r->...");
		}
	}
}

/* ---- feeding ---- */

static int cmp_key(const void *x, const void *y)
{
	const __u64 *p = x, *q = y;

	if (p[0] != q[0])
		return p[0] < q[0] ? -1 : 1;
	return p[1] < q[1] ? -1 : p[1] > q[1];
}

/* Feeds L ordered by key = ts + jitter (stable), as a shared ring buffer
 * would deliver it, and finishes. jitter 0: timestamp order. */
static struct tt_analyzer *run_jittered(__u64 max_jitter, unsigned int seed)
{
	struct tt_analyzer *a = tt_analyzer_new();
	__u64 *keys = malloc(L.n * 2 * sizeof(*keys));
	__u64 rnd = seed * 2654435761ULL + 1;
	size_t i;
	int bad = 0;

	for (i = 0; i < L.n; i++) {
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		keys[2 * i] = L.v[i].h.ts +
			      (max_jitter ? (rnd >> 33) % max_jitter : 0);
		keys[2 * i + 1] = i;
	}
	qsort(keys, L.n, 2 * sizeof(*keys), cmp_key);
	for (i = 0; i < L.n; i++)
		bad |= tt_analyzer_add(a, &L.v[keys[2 * i + 1]]);
	ASSERT_FALSE(bad, "bad");
	tt_analyzer_finish(a);
	check_paths(a);
	free(keys);
	return a;
}

static struct tt_analyzer *run(void)
{
	return run_jittered(0, 0);
}

/* Feeds L in list order, reordering left to the analyzer; streaming (a
 * step every `every` events or more) unless every is 0. */
static struct tt_analyzer *run_listed(size_t every)
{
	struct tt_analyzer *a = tt_analyzer_new();
	size_t i;
	int bad = 0;

	if (every)
		tt_analyzer_stream(a, every);
	for (i = 0; i < L.n; i++)
		bad |= tt_analyzer_add(a, &L.v[i]);
	ASSERT_FALSE(bad, "bad");
	tt_analyzer_finish(a);
	check_paths(a);
	return a;
}

/* Feeds L in timestamp order to an analyzer given the recording's tables
 * first, as ttftrace report does. */
static struct tt_analyzer *run_tables(const struct tt_proc_info *procs,
				      size_t nprocs,
				      const struct tt_dev_info *devs,
				      size_t ndevs)
{
	struct tt_analyzer *a = tt_analyzer_new();
	size_t i;
	int bad = 0;

	ASSERT_OK(tt_analyzer_add_procs(a, procs, nprocs),
		  "tt_analyzer_add_procs");
	ASSERT_OK(tt_analyzer_add_devices(a, devs, ndevs),
		  "tt_analyzer_add_devices");
	for (i = 0; i < L.n; i++)
		bad |= tt_analyzer_add(a, &L.v[i]);
	ASSERT_FALSE(bad, "bad");
	tt_analyzer_finish(a);
	check_paths(a);
	return a;
}

static const struct tt_request *req(const struct tt_analyzer *a, size_t i)
{
	static const struct tt_request none;
	const struct tt_request *r = tt_analyzer_request(a, i);

	ASSERT_OK_PTR(r, "r");
	return r ? r : &none;
}

static bool req_equal(const struct tt_request *x, const struct tt_request *y)
{
	return x->id == y->id && x->sk == y->sk && x->rport == y->rport &&
	       x->t_arrive == y->t_arrive && x->t_read == y->t_read &&
	       x->t_headers == y->t_headers &&
	       x->t_first_write == y->t_first_write && x->t_wire == y->t_wire &&
	       x->t_last_write == y->t_last_write && x->t_end == y->t_end &&
	       x->ttft == y->ttft && x->tokens == y->tokens &&
	       x->tpot == y->tpot && x->bytes_in == y->bytes_in &&
	       x->bytes_out == y->bytes_out && x->complete == y->complete &&
	       x->incomplete == y->incomplete;
}

/* ---- tests ---- */

static void test_single_sse_headers_separate(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	const __u64 *itl;
	__u32 seq = 1000, seq_tok;
	size_t n;

	reset();
	conn_open(1 * MS, 0x1000, "10.1.2.3", 51000);
	request_in(10 * MS, 10 * MS + 100 * US, 0x1000, 300);
	recv_(10 * MS + 150 * US, 0x1000, -11); /* EAGAIN */
	seq = send_bytes(20 * MS, 0x1000, seq, UVICORN_SSE_HEADERS,
			 20 * MS + 10 * US);
	seq_tok = seq;
	seq = send_bytes(30 * MS, 0x1000, seq, TOKEN_CHUNK, 30 * MS + 5 * US);
	seq = send_bytes(40 * MS, 0x1000, seq, TOKEN_CHUNK, 40 * MS + 5 * US);
	seq = send_bytes(50 * MS, 0x1000, seq, TOKEN_CHUNK, 50 * MS + 5 * US);
	seq = send_bytes(55 * MS, 0x1000, seq, DONE_CHUNK, 55 * MS + 5 * US);
	seq = send_bytes(56 * MS, 0x1000, seq, LAST_CHUNK, 56 * MS + 5 * US);
	conn_close(100 * MS, 0x1000);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->id, 1, "r.id");
	ASSERT_EQ(r->sk, 0x1000, "r.sk");
	ASSERT_EQ(r->family, AF_INET, "r.family");
	ASSERT_EQ(r->rport, 51000, "r.rport");
	ASSERT_EQ(r->lport, 8000, "r.lport");
	ASSERT_FALSE(memcmp(r->raddr, "\x0a\x01\x02\x03", 4), "memcmp");
	ASSERT_EQ(r->t_arrive, 10 * MS, "r.t_arrive");
	ASSERT_EQ(r->t_read, 10 * MS + 100 * US, "r.t_read");
	ASSERT_EQ(r->t_headers, 20 * MS, "r.t_headers");
	ASSERT_EQ(r->t_first_write, 30 * MS, "r.t_first_write");
	ASSERT_EQ(r->t_wire, 30 * MS + 5 * US, "r.t_wire");
	ASSERT_EQ(r->ttft, 20 * MS + 5 * US, "r.ttft");
	ASSERT_EQ(r->t_last_write, 50 * MS, "r.t_last_write");
	ASSERT_EQ(r->t_end, 55 * MS + 20 * US, "r.t_end");
	ASSERT_EQ(r->tokens, 3, "r.tokens");
	ASSERT_EQ(r->tpot, 10 * MS, "r.tpot");
	ASSERT_EQ(r->bytes_in, 300, "r.bytes_in");
	ASSERT_EQ(r->bytes_out,
		  strlen(UVICORN_SSE_HEADERS) + 3 * strlen(TOKEN_CHUNK) +
			  strlen(DONE_CHUNK),
		  "r.bytes_out");
	ASSERT_EQ(r->tgid, SERVER_TGID, "r.tgid");
	ASSERT_EQ(r->writer_tid, WRITER_TID, "r.writer_tid");
	ASSERT_TRUE(r->complete, "r.complete");
	ASSERT_EQ(r->incomplete, 0, "r.incomplete");
	ASSERT_TRUE(!r->closed_mid_stream && !r->lost,
		    "!r->closed_mid_stream && !r->lost");
	itl = tt_analyzer_itl(a, &n);
	ASSERT_EQ(n, 2, "n");
	if (n == 2) {
		ASSERT_EQ(itl[0], 10 * MS, "itl[0]");
		ASSERT_EQ(itl[1], 10 * MS, "itl[1]");
	}
	itl = tt_analyzer_request_itl(a, 0, &n);
	ASSERT_EQ(n, 2, "n");
	ASSERT_EQ(tt_analyzer_events(a), L.n, "tt_analyzer_events");
	ASSERT_EQ(tt_analyzer_lost(a), 0, "tt_analyzer_lost");
	(void)seq_tok;
	tt_analyzer_free(a);
}

static void test_headers_and_body_in_one_send(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 7;

	reset();
	conn_open(0, 0x2000, "192.168.0.9", 40000);
	request_in(1 * MS, 1 * MS + 30 * US, 0x2000, 512);
	seq = send_bytes(5 * MS, 0x2000, seq,
			 "HTTP/1.1 200 OK\r\n"
			 "Content-Type: text/event-stream\r\n\r\n"
			 "data: {\"choices\":[{\"text\":\"Hi\"}]}\n\n",
			 5 * MS + 8 * US);
	seq = send_bytes(7 * MS, 0x2000, seq,
			 "data: {\"choices\":[{\"text\":\" there\"}]}\n\n",
			 7 * MS + 8 * US);
	/* three tokens in one send: three tokens, one gap */
	seq = send_bytes(9 * MS, 0x2000, seq,
			 "data: {\"t\":\"a\"}\n\ndata: {\"t\":\"b\"}\n\n"
			 "data: {\"t\":\"c\"}\n\n",
			 9 * MS + 8 * US);
	seq = send_bytes(10 * MS, 0x2000, seq, "data: [DONE]\n\n",
			 10 * MS + 8 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->t_headers, 5 * MS, "r.t_headers");
	ASSERT_EQ(r->t_first_write, 5 * MS, "r.t_first_write");
	ASSERT_EQ(r->t_wire, 5 * MS + 8 * US, "r.t_wire");
	ASSERT_EQ(r->ttft, 4 * MS + 8 * US, "r.ttft");
	ASSERT_EQ(r->tokens, 5, "r.tokens");
	ASSERT_EQ(r->tpot, (9 * MS - 5 * MS) / 4, "r.tpot");
	ASSERT_EQ(r->t_end, 10 * MS + 20 * US, "r.t_end");
	ASSERT_TRUE(r->complete, "r.complete");
	{
		size_t n;
		const __u64 *itl = tt_analyzer_itl(a, &n);

		ASSERT_EQ(n, 2, "n");
		if (n == 2) {
			ASSERT_EQ(itl[0], 2 * MS, "itl[0]");
			ASSERT_EQ(itl[1], 2 * MS, "itl[1]");
		}
	}
	tt_analyzer_free(a);
}

static void test_chunked_token_done(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1;

	reset();
	conn_open(0, 0x3000, "127.0.0.1", 33333);
	request_in(2 * MS, 2 * MS + 50 * US, 0x3000, 200);
	seq = send_bytes(3 * MS, 0x3000, seq, UVICORN_SSE_HEADERS,
			 3 * MS + 2 * US);
	seq = send_bytes(4 * MS, 0x3000, seq, TOKEN_CHUNK, 4 * MS + 2 * US);
	/* the last token, [DONE] and the last chunk in one send */
	seq = send_bytes(6 * MS, 0x3000, seq, TOKEN_CHUNK DONE_CHUNK LAST_CHUNK,
			 6 * MS + 2 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->tokens, 2, "r.tokens");
	ASSERT_EQ(r->ttft, 2 * MS + 2 * US, "r.ttft");
	ASSERT_EQ(r->tpot, 2 * MS, "r.tpot");
	ASSERT_EQ(r->t_end, 6 * MS + 20 * US, "r.t_end");
	ASSERT_TRUE(r->complete, "r.complete");
	tt_analyzer_free(a);
}

static void test_keepalive(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 500;
	__u64 t = 10 * MS;
	unsigned int i;

	reset();
	conn_open(1 * MS, 0x4000, "10.0.0.1", 40001);
	/* three requests ended by [DONE], one after another */
	for (i = 0; i < 3; i++)
		t = sse_request(0x4000, t, &seq, (2 + i) * MS, 2 + i, 1 * MS) +
		    5 * MS;
	/* a fourth ended by the fifth's arrival, no [DONE] */
	request_in(t, t + 100 * US, 0x4000, 100);
	seq = send_bytes(t + 1 * MS, 0x4000, seq, UVICORN_SSE_HEADERS,
			 t + 1 * MS + 3 * US);
	seq = send_bytes(t + 2 * MS, 0x4000, seq, TOKEN_CHUNK,
			 t + 2 * MS + 3 * US);
	request_in(t + 10 * MS, t + 10 * MS + 100 * US, 0x4000, 100);
	seq = send_bytes(t + 12 * MS, 0x4000, seq, TOKEN_CHUNK,
			 t + 12 * MS + 3 * US);
	conn_close(t + 20 * MS, 0x4000);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 5, "tt_analyzer_nrequests");
	for (i = 0; i < 3; i++) {
		r = req(a, i);
		ASSERT_EQ(r->id, i + 1, "r.id");
		ASSERT_EQ(r->tokens, 2 + i, "r.tokens");
		ASSERT_EQ(r->ttft, (2 + i) * MS + 5 * US, "r.ttft");
		ASSERT_EQ(r->tpot, 1 * MS, "r.tpot");
		ASSERT_TRUE(r->complete, "r.complete");
		/* the first on its connection, the others after one; as the
		 * walk is given it */
		ASSERT_EQ(r->conn_reused, i > 0, "r.conn_reused");
		ASSERT_EQ(tt_analyzer_cp_request(a, i)->conn_reused, i > 0,
			  "cp_request.conn_reused");
		ASSERT_TRUE(r->bytes_in, "r.bytes_in");
		ASSERT_EQ(tt_analyzer_cp_request(a, i)->bytes_in, r->bytes_in,
			  "cp_request.bytes_in");
	}
	r = req(a, 3);
	ASSERT_EQ(r->t_arrive, t, "r.t_arrive");
	ASSERT_EQ(r->ttft, 2 * MS + 3 * US, "r.ttft");
	ASSERT_EQ(r->tokens, 1, "r.tokens");
	ASSERT_EQ(r->tpot, 0, "r.tpot");
	ASSERT_EQ(r->t_end, t + 10 * MS, "r.t_end");
	ASSERT_TRUE(r->complete, "r.complete"); /* the next request began */
	r = req(a, 4);
	ASSERT_EQ(r->t_arrive, t + 10 * MS, "r.t_arrive");
	ASSERT_EQ(r->t_read, t + 10 * MS + 100 * US, "r.t_read");
	ASSERT_EQ(r->t_first_write, t + 12 * MS, "r.t_first_write");
	ASSERT_FALSE(r->complete, "r.complete"); /* closed before its end */
	ASSERT_TRUE(r->closed_mid_stream, "r.closed_mid_stream");
	ASSERT_EQ(r->incomplete, TT_INC_CLOSED_MID_STREAM, "r.incomplete");
	tt_analyzer_free(a);
}

/* HTTP/2 frames into b: a SETTINGS preface, response HEADERS with a
 * message, a message, the trailers, a PING's ACK (the frame types only:
 * their payloads are no matter here); a stream's on stream sid (below
 * 256). Their length. */
static size_t h2_bytes(unsigned int which, __u8 sid, char *b)
{
	static const char frames[][24] = {
		{ 0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 100 },
		{ 0, 0, 1, 1, 4, 0, 0, 0, 1, (char)0x88, 0, 0, 5, 0, 0, 0, 0,
		  0, 1, 0, 0, 0, 0, 1 },
		{ 0, 0, 5, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 },
		{ 0, 0, 1, 1, 5, 0, 0, 0, 1, (char)0xc0 },
		{ 0, 0, 0, 6, 1, 0, 0, 0, 0 },
	};
	static const size_t len[] = { 15, 24, 14, 10, 9 };

	memcpy(b, frames[which], len[which]);
	if (which >= 1 && which <= 3)
		b[8] = (char)sid;
	if (which == 1)
		b[18] = (char)sid;
	return len[which];
}

/* Those frames sent on sk at t, on the device 5 us later */
static __u32 h2_send_on(__u64 t, __u64 sk, __u32 seq, unsigned int which,
			__u8 sid, struct tt_sse_carry *carry)
{
	char b[24];

	return send_raw(t, sk, seq, b, h2_bytes(which, sid, b), t + 5 * US,
			carry);
}

static __u32 h2_send(__u64 t, __u64 sk, __u32 seq, unsigned int which,
		     struct tt_sse_carry *carry)
{
	return h2_send_on(t, sk, seq, which, 1, carry);
}

/* A gRPC call on a connection of its own (LocalAI's backend): a PING's
 * ACK read before the response is not the request's read; the client's
 * frames mid-response (a PING, a WINDOW_UPDATE) and read are no new
 * request, the trailers end it; a GOAWAY read after it and the PING's ACK
 * sent as it closes make none either. */
static void test_grpc_call(void)
{
	struct tt_sse_carry carry = { 0 };
	const struct tt_request *r;
	struct tt_analyzer *a;
	__u32 seq = 100;

	reset();
	conn_open(1 * MS, 0x4100, "127.0.0.1", 40100);
	data_ready(2 * MS, 0x4100); /* the client's preface */
	seq = h2_send(2 * MS + 50 * US, 0x4100, seq, 0, &carry);
	recv_(2 * MS + 100 * US, 0x4100, 24);
	request_in(3 * MS, 3 * MS + 100 * US, 0x4100, 120);
	/* the server's PING (BDP probe) and the client's ACK, read before
	 * the response: the request was read at 3.1 ms */
	seq = h2_send(4 * MS, 0x4100, seq, 4, &carry);
	request_in(5 * MS, 5 * MS + 100 * US, 0x4100, 17);
	seq = h2_send(10 * MS, 0x4100, seq, 1, &carry);
	request_in(11 * MS, 11 * MS + 100 * US, 0x4100, 17);
	seq = h2_send(11 * MS + 200 * US, 0x4100, seq, 4, &carry);
	seq = h2_send(12 * MS, 0x4100, seq, 2, &carry);
	seq = h2_send(14 * MS, 0x4100, seq, 2, &carry);
	seq = h2_send(14 * MS + 100 * US, 0x4100, seq, 3, &carry);
	request_in(20 * MS, 20 * MS + 100 * US, 0x4100, 17);
	send_raw(20 * MS + 200 * US, 0x4100, seq, "\0\0\0\6\1\0\0\0\0", 9,
		 0, NULL);
	conn_close(21 * MS, 0x4100);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->t_arrive, 2 * MS, "r.t_arrive");
	ASSERT_EQ(r->t_read, 3 * MS + 100 * US, "r.t_read");
	ASSERT_EQ(r->status, 200, "r.status");
	ASSERT_EQ(r->t_first_write, 10 * MS, "r.t_first_write");
	ASSERT_EQ(r->tokens, 3, "r.tokens");
	ASSERT_EQ(r->end, TT_END_DONE, "r.end");
	ASSERT_TRUE(r->complete, "r.complete");
	ASSERT_FALSE(r->h2_mux, "r.h2_mux");
	tt_analyzer_free(a);
}

/* Two calls on one connection at once (a kept grpc.ClientConn): stream 1
 * answered, stream 3 answered before 1 ends, 1 again. Which frames are
 * whose is not followed: each request of the connection says so, the one
 * ended before the interleaving showed too (its first token still on its
 * way to the device; on a second connection, on the device and filed,
 * after a call alone there, unmarked), and a call after; another
 * connection's, with a call at a time, does not, nor an earlier one's on
 * the same socket (HTTP/1.1, its first request ended by the next). */
static void test_grpc_multiplexed(void)
{
	struct tt_sse_carry carry = { 0 }, other = { 0 }, filed = { 0 };
	struct tt_analyzer *a;
	__u32 seq = 100, oseq = 900, fseq = 5000, pseq = 7000, first;
	size_t i, n;
	char b[24];

	reset();
	conn_open(100 * US, 0x4300, "127.0.0.1", 40301);
	request_in(200 * US, 250 * US, 0x4300, 100);
	pseq = send_bytes(300 * US, 0x4300, pseq,
			  UVICORN_SSE_HEADERS TOKEN_CHUNK, 305 * US);
	request_in(400 * US, 450 * US, 0x4300, 100);
	send_bytes(500 * US, 0x4300, pseq,
		   UVICORN_SSE_HEADERS TOKEN_CHUNK DONE_CHUNK LAST_CHUNK,
		   505 * US);
	conn_close(900 * US, 0x4300);
	conn_open(1 * MS, 0x4300, "127.0.0.1", 40300);
	conn_open(1 * MS, 0x4400, "127.0.0.1", 40400);
	conn_open(1 * MS, 0x4500, "127.0.0.1", 40500);
	data_ready(2 * MS, 0x4500);
	fseq = h2_send(2 * MS + 70 * US, 0x4500, fseq, 0, &filed);
	request_in(2 * MS + 200 * US, 2 * MS + 300 * US, 0x4500, 120);
	fseq = h2_send_on(2 * MS + 500 * US, 0x4500, fseq, 1, 1, &filed);
	fseq = h2_send_on(2 * MS + 700 * US, 0x4500, fseq, 3, 1, &filed);
	request_in(3 * MS, 3 * MS + 100 * US, 0x4500, 120);
	fseq = h2_send_on(10 * MS + 20 * US, 0x4500, fseq, 1, 3, &filed);
	request_in(11 * MS, 11 * MS + 100 * US, 0x4500, 120);
	fseq = h2_send_on(12 * MS + 20 * US, 0x4500, fseq, 1, 5, &filed);
	fseq = h2_send_on(14 * MS + 20 * US, 0x4500, fseq, 3, 3, &filed);
	h2_send_on(16 * MS + 20 * US, 0x4500, fseq, 3, 5, &filed);
	data_ready(2 * MS, 0x4300);
	seq = h2_send(2 * MS + 50 * US, 0x4300, seq, 0, &carry);
	request_in(3 * MS, 3 * MS + 100 * US, 0x4300, 120);
	first = seq;
	n = h2_bytes(1, 1, b);
	seq = send_raw(10 * MS, 0x4300, seq, b, n, 0, &carry);
	request_in(11 * MS, 11 * MS + 100 * US, 0x4300, 120);
	seq = h2_send_on(12 * MS, 0x4300, seq, 1, 3, &carry);
	seq = h2_send_on(14 * MS, 0x4300, seq, 2, 1, &carry);
	xmit(14 * MS + 50 * US, 0x4300, first, first + n);
	seq = h2_send_on(16 * MS, 0x4300, seq, 2, 3, &carry);
	seq = h2_send_on(18 * MS, 0x4300, seq, 3, 1, &carry);
	seq = h2_send_on(20 * MS, 0x4300, seq, 3, 3, &carry);
	request_in(22 * MS, 22 * MS + 100 * US, 0x4300, 120);
	seq = h2_send_on(24 * MS, 0x4300, seq, 1, 5, &carry);
	seq = h2_send_on(26 * MS, 0x4300, seq, 3, 5, &carry);
	/* the other connection: its calls one after another, the first's
	 * trailers unseen (the next one's HEADERS end it, filed before the
	 * interleaving above shows) */
	data_ready(2 * MS, 0x4400);
	oseq = h2_send(2 * MS + 60 * US, 0x4400, oseq, 0, &other);
	request_in(4 * MS, 4 * MS + 100 * US, 0x4400, 120);
	oseq = h2_send_on(10 * MS + 10 * US, 0x4400, oseq, 1, 1, &other);
	request_in(11 * MS + 500 * US, 11 * MS + 600 * US, 0x4400, 120);
	oseq = h2_send_on(12 * MS + 500 * US, 0x4400, oseq, 1, 3, &other);
	h2_send_on(19 * MS, 0x4400, oseq, 3, 3, &other);
	conn_close(30 * MS, 0x4300);
	conn_close(30 * MS, 0x4400);
	conn_close(30 * MS, 0x4500);
	a = run();

	ASSERT_GE(tt_analyzer_nrequests(a), 10, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->end, TT_END_NEXT, "the earlier first's end");
	for (i = 0; i < tt_analyzer_nrequests(a); i++)
		ASSERT_EQ(req(a, i)->h2_mux,
			  req(a, i)->sk != 0x4400 &&
				  req(a, i)->t_read != 2 * MS + 300 * US &&
				  req(a, i)->rport != 40301,
			  "r.h2_mux: its connection's, not the call alone");
	tt_analyzer_free(a);
}

/* The last send of a response (Go's buffered [DONE] and the chunked
 * terminator in one write) returns after the client, which read it,
 * sent its next request, and its record comes after the window had let
 * that arrival go (a CI run of tools/scenarios' localai beside a
 * compile): the send entered before that arrival is the previous
 * response's, and the next request is one of its own. */
static void test_end_send_after_next_arrival(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 700;
	__u64 t = 10 * MS;

	reset();
	conn_open(1 * MS, 0x4200, "10.0.0.1", 40200);
	request_in(t, t + 100 * US, 0x4200, 100);
	seq = send_bytes(t + 1 * MS, 0x4200, seq, UVICORN_SSE_HEADERS,
			 t + 1 * MS + 5 * US);
	seq = send_bytes(t + 2 * MS, 0x4200, seq, TOKEN_CHUNK,
			 t + 2 * MS + 5 * US);
	/* the end's send: entered at 3 ms, returned at 3.02 ms, its record
	 * after one 15 ms later; the next request came at 3.01 ms */
	data_ready(t + 3 * MS + 10 * US, 0x4200);
	sw_in(t + 18 * MS, WRITER_TID);
	seq = send_bytes(t + 3 * MS, 0x4200, seq, DONE_CHUNK LAST_CHUNK,
			 t + 3 * MS + 5 * US);
	recv_(t + 3 * MS + 200 * US, 0x4200, 100);
	seq = send_bytes(t + 5 * MS, 0x4200, seq, UVICORN_SSE_HEADERS,
			 t + 5 * MS + 5 * US);
	seq = send_bytes(t + 6 * MS, 0x4200, seq, TOKEN_CHUNK,
			 t + 6 * MS + 5 * US);
	send_bytes(t + 7 * MS, 0x4200, seq, DONE_CHUNK, t + 7 * MS + 5 * US);
	conn_close(t + 20 * MS, 0x4200);
	a = run_listed(0);

	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	r = req(a, 1);
	ASSERT_EQ(r->t_arrive, t + 3 * MS + 10 * US, "r.t_arrive");
	ASSERT_EQ(r->t_read, t + 3 * MS + 200 * US, "r.t_read");
	ASSERT_EQ(r->t_first_write, t + 6 * MS, "r.t_first_write");
	ASSERT_EQ(r->incomplete, 0, "r.incomplete");
	ASSERT_TRUE(r->complete, "r.complete");
	tt_analyzer_free(a);
}

static void test_close_mid_stream(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1;
	size_t n;

	reset();
	conn_open(0, 0x5000, "10.0.0.2", 40002);
	request_in(1 * MS, 1 * MS + 10 * US, 0x5000, 100);
	seq = send_bytes(2 * MS, 0x5000, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 1 * US);
	seq = send_bytes(3 * MS, 0x5000, seq, TOKEN_CHUNK, 3 * MS + 1 * US);
	seq = send_bytes(4 * MS, 0x5000, seq, TOKEN_CHUNK, 4 * MS + 1 * US);
	conn_close(5 * MS, 0x5000); /* the client went away */
	/* the server notices late: its writes find no connection */
	seq = send_bytes(6 * MS, 0x5000, seq, TOKEN_CHUNK, 0);
	recv_(6 * MS + 1 * US, 0x5000, 0);
	/* and the client's FIN wakes sk_data_ready after the close */
	data_ready(5 * MS + 1 * US, 0x5000);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_FALSE(r->complete, "r.complete");
	ASSERT_TRUE(r->closed_mid_stream, "r.closed_mid_stream");
	ASSERT_EQ(r->incomplete, TT_INC_CLOSED_MID_STREAM, "r.incomplete");
	ASSERT_EQ(r->ttft, 2 * MS + 1 * US, "r.ttft"); /* known, not counted */
	ASSERT_EQ(r->t_end, 5 * MS, "r.t_end");
	tt_analyzer_itl(a, &n);
	ASSERT_EQ(n, 0, "n"); /* gaps of incomplete requests stay out */
	tt_analyzer_request_itl(a, 0, &n);
	ASSERT_EQ(n, 1, "n");
	{
		struct tt_analyzer_stats st;

		tt_analyzer_stats(a, &st);
		ASSERT_EQ(st.orphans, 3, "st.orphans");
	}
	tt_analyzer_free(a);
}

#define NCONN 50

static void build_interleaved(void)
{
	__u32 seq[NCONN];
	unsigned int i, k;
	__u64 t0, sk;
	char ip[32];

	reset();
	for (i = 0; i < NCONN; i++) {
		snprintf(ip, sizeof(ip), "10.9.%u.%u", i / 200, i % 200 + 1);
		conn_open(i * US, 0x10000 + i * 0x800, ip, 20000 + i);
		seq[i] = 0xffff0000u + i * 977;
	}
	/* every connection streams at the same time, with its own pace */
	for (i = 0; i < NCONN; i++) {
		sk = 0x10000 + i * 0x800;
		t0 = 1 * MS + i * 7 * US;
		request_in(t0, t0 + 50 * US, sk, 100 + i);
		seq[i] = send_bytes(t0 + 1 * MS, sk, seq[i],
				    UVICORN_SSE_HEADERS, t0 + 1 * MS + 3 * US);
		for (k = 0; k < 10; k++) {
			__u64 t = t0 + 2 * MS + i * 11 * US +
				  k * (1 * MS + i * 10 * US);

			seq[i] = send_bytes(t, sk, seq[i], TOKEN_CHUNK,
					    t + 4 * US);
		}
		t0 += 2 * MS + i * 11 * US + 9 * (1 * MS + i * 10 * US);
		seq[i] = send_bytes(t0 + 300 * US, sk, seq[i], DONE_CHUNK,
				    t0 + 304 * US);
		conn_close(t0 + 400 * US, sk);
	}
}

static void check_interleaved(struct tt_analyzer *a)
{
	const struct tt_request *r;
	unsigned int i;

	ASSERT_EQ(tt_analyzer_nrequests(a), NCONN, "tt_analyzer_nrequests");
	for (i = 0; i < NCONN && i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		/* ids follow t_arrive: connection i arrives i-th */
		ASSERT_EQ(r->id, i + 1, "r.id");
		ASSERT_EQ(r->rport, 20000 + i, "r.rport");
		ASSERT_EQ(r->sk, 0x10000 + i * 0x800, "r.sk");
		ASSERT_EQ(r->t_arrive, 1 * MS + i * 7 * US, "r.t_arrive");
		ASSERT_EQ(r->bytes_in, 100 + i, "r.bytes_in");
		ASSERT_EQ(r->ttft, 2 * MS + i * 11 * US + 4 * US, "r.ttft");
		ASSERT_EQ(r->tokens, 10, "r.tokens");
		ASSERT_EQ(r->tpot, 1 * MS + i * 10 * US, "r.tpot");
		ASSERT_TRUE(r->complete, "r.complete");
	}
}

static void test_interleaved_connections(void)
{
	struct tt_analyzer *a;
	size_t n;

	build_interleaved();
	a = run();
	check_interleaved(a);
	tt_analyzer_itl(a, &n);
	ASSERT_EQ(n, NCONN * 9, "n");
	tt_analyzer_free(a);
}

static void test_out_of_order_within_window(void)
{
	struct tt_analyzer *sorted, *shuffled;
	struct tt_analyzer_stats st;
	unsigned int seed;
	size_t i;

	build_interleaved();
	sorted = run();
	for (seed = 1; seed <= 3; seed++) {
		/* each event up to 4 ms late: the 10 ms window absorbs it */
		shuffled = run_jittered(4 * MS, seed);
		check_interleaved(shuffled);
		ASSERT_EQ(tt_analyzer_nrequests(shuffled),
			  tt_analyzer_nrequests(sorted),
			  "tt_analyzer_nrequests");
		for (i = 0; i < tt_analyzer_nrequests(sorted) &&
			    i < tt_analyzer_nrequests(shuffled);
		     i++)
			ASSERT_TRUE(req_equal(req(sorted, i), req(shuffled, i)),
				    "req_equal");
		tt_analyzer_stats(shuffled, &st);
		ASSERT_EQ(st.late, 0, "st.late");
		tt_analyzer_free(shuffled);
	}
	/* in list order (connection by connection, far out of order) the
	 * window cannot help: late events are counted */
	shuffled = run_listed(0);
	tt_analyzer_stats(shuffled, &st);
	ASSERT_GT(st.late, 0, "st.late");
	tt_analyzer_free(shuffled);
	tt_analyzer_free(sorted);
}

/* Events with equal timestamps keep their arrival order, whether they
 * arrive in order (FIFO) or behind a newer one (heap). Sends are ordered
 * by their syscall entry: every send here ends at the same time. */
static void test_equal_timestamps_keep_arrival_order(void)
{
	struct tt_analyzer *a;
	unsigned int late, k;
	__u64 t = 1 * MS, end = t + 1000;

	for (late = 0; late < 2; late++) {
		reset();
		conn_open(0, 0x9900, "10.0.0.99", 9999);
		if (late) /* a newer event first: the rest go to the heap */
			xmit(5 * MS, 0x9999, 0, 1);
		request_in(t, t, 0x9900, 10);
		send_cls(t + 100, end, 0x9900, 100, 50, TT_SEND_HEADERS, 0,
			 TT_SEND_F_HEADERS);
		for (k = 0; k < 6; k++) {
			xmit(end, 0x9900, 150 + k * 10, 160 + k * 10);
			send_cls(t + 200 + k * 100, end, 0x9900, 150 + k * 10,
				 10, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
		}
		send_cls(t + 800, end, 0x9900, 210, 10, TT_SEND_DONE, 0,
			 TT_SEND_F_SSE);
		a = run_listed(0);
		ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
		ASSERT_TRUE(req(a, 0)->complete, "req.complete");
		ASSERT_EQ(req(a, 0)->tokens, 6, "req.tokens");
		ASSERT_EQ(req(a, 0)->t_first_write, t + 200,
			  "req.t_first_write");
		/* every token reached the device at end: 0 at the wire */
		ASSERT_EQ(req(a, 0)->tpot_emit, 100, "req.tpot_emit");
		ASSERT_EQ(req(a, 0)->tpot, 0, "req.tpot");
		ASSERT_TRUE(req(a, 0)->tpot_at_wire, "req.tpot_at_wire");
		ASSERT_EQ(req(a, 0)->t_wire, end, "req.t_wire");
		tt_analyzer_free(a);
	}
}

/*
 * Nagle and a delayed ACK: the server emits three tokens 2 ms apart, and
 * all three leave in one segment 36 ms after the last (issue 8). TPOT is
 * taken at the wire, as TTFT is: 0, the tokens bunched; the emit rate is
 * kept apart. The request waits for its last token's XMIT, not only its
 * first one's.
 */
static void test_tpot_at_the_wire_bunched(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;

	reset();
	conn_open(0, 0x9a00, "10.0.0.98", 9998);
	request_in(1 * MS, 1 * MS, 0x9a00, 10);
	send_cls(2 * MS, 2 * MS + 5, 0x9a00, 100, 50, TT_SEND_HEADERS, 0,
		 TT_SEND_F_HEADERS);
	xmit(2 * MS + 4, 0x9a00, 100, 150);
	send_cls(10 * MS, 10 * MS + 5, 0x9a00, 150, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	send_cls(12 * MS, 12 * MS + 5, 0x9a00, 160, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	send_cls(14 * MS, 14 * MS + 5, 0x9a00, 170, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	send_cls(15 * MS, 15 * MS + 5, 0x9a00, 180, 10, TT_SEND_DONE, 0,
		 TT_SEND_F_SSE);
	xmit(50 * MS, 0x9a00, 150, 190);
	a = run();
	if (!ASSERT_EQ(tt_analyzer_nrequests(a), 1, "requests"))
		goto cleanup;
	r = req(a, 0);
	ASSERT_TRUE(r->complete, "complete");
	ASSERT_EQ(r->t_wire, 50 * MS, "t_wire");
	ASSERT_EQ(r->ttft, 49 * MS, "ttft");
	ASSERT_EQ(r->t_last_wire, 50 * MS, "t_last_wire");
	ASSERT_EQ(r->tpot, 0, "tpot at the wire");
	ASSERT_EQ(r->tpot_emit, 2 * MS, "tpot_emit");
	ASSERT_TRUE(r->tpot_at_wire, "tpot_at_wire");
	ASSERT_TRUE(r->bunched, "bunched");
cleanup:
	tt_analyzer_free(a);
}

/*
 * ITL at the wire (issue 8 item 5): tokens emitted 2 ms apart. Bunched in
 * one segment, every gap is 0 at the wire and 2 ms as emitted, and both
 * gaps are counted as bunched; each on the wire 3 us after its send, the
 * wire gaps are the emit ones.
 */
static void test_itl_at_the_wire(void)
{
	const __u64 *g, *e;
	struct tt_analyzer *a;
	const struct tt_request *r;
	size_t n, ne, i;
	int bunched;

	for (bunched = 1; bunched >= 0; bunched--) {
		reset();
		conn_open(0, 0x9b00, "10.0.0.99", 9999);
		request_in(1 * MS, 1 * MS, 0x9b00, 10);
		send_cls(2 * MS, 2 * MS + 5, 0x9b00, 100, 50, TT_SEND_HEADERS,
			 0, TT_SEND_F_HEADERS);
		xmit(2 * MS + 4, 0x9b00, 100, 150);
		for (i = 0; i < 3; i++) {
			send_cls((10 + 2 * i) * MS, (10 + 2 * i) * MS + 5,
				 0x9b00, 150 + 10 * i, 10, TT_SEND_TOKEN, 1,
				 TT_SEND_F_SSE);
			if (!bunched)
				xmit((10 + 2 * i) * MS + 3 * US, 0x9b00,
				     150 + 10 * i, 160 + 10 * i);
		}
		send_cls(15 * MS, 15 * MS + 5, 0x9b00, 180, 10, TT_SEND_DONE, 0,
			 TT_SEND_F_SSE);
		xmit(50 * MS, 0x9b00, bunched ? 150 : 180, 190);
		a = run();
		if (!ASSERT_EQ(tt_analyzer_nrequests(a), 1, "requests"))
			goto next;
		r = req(a, 0);
		ASSERT_TRUE(r->complete, "complete");
		ASSERT_TRUE(r->itl_at_wire, "itl_at_wire");
		ASSERT_EQ(r->itl_bunched, bunched ? 2 : 0, "itl_bunched");
		g = tt_analyzer_request_itl(a, 0, &n);
		e = tt_analyzer_request_itl_emit(a, 0, &ne);
		if (!ASSERT_EQ(n, 2, "gaps") || !ASSERT_EQ(ne, 2, "emit gaps"))
			goto next;
		for (i = 0; i < n; i++) {
			ASSERT_EQ(g[i], bunched ? 0 : 2 * MS,
				  "ITL at the wire");
			ASSERT_EQ(e[i], 2 * MS, "ITL as emitted");
		}
		/* the percentiles' gaps are the wire's too */
		g = tt_analyzer_itl(a, &n);
		e = tt_analyzer_itl_emit(a, &ne);
		ASSERT_TRUE(n == 2 && ne == 2 &&
				    g[1] == (bunched ? 0 : 2 * MS) &&
				    e[1] == 2 * MS,
			    "tt_analyzer_itl, tt_analyzer_itl_emit");
next:
		tt_analyzer_free(a);
	}
}

/* A token send whose XMIT was never seen: the request's gaps stay the
 * emit ones, and it says so. */
static void test_itl_emit_when_wire_unseen(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	const __u64 *g;
	size_t n;

	reset();
	conn_open(0, 0x9c00, "10.0.0.97", 9997);
	request_in(1 * MS, 1 * MS, 0x9c00, 10);
	send_cls(2 * MS, 2 * MS + 5, 0x9c00, 100, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE | TT_SEND_F_HEADERS);
	xmit(2 * MS + 4, 0x9c00, 100, 110);
	send_cls(4 * MS, 4 * MS + 5, 0x9c00, 110, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	send_cls(6 * MS, 6 * MS + 5, 0x9c00, 120, 10, TT_SEND_TOKEN_DONE, 1,
		 TT_SEND_F_SSE);
	xmit(6 * MS + 4, 0x9c00, 120, 130);
	a = run();
	if (!ASSERT_EQ(tt_analyzer_nrequests(a), 1, "requests"))
		goto cleanup;
	r = req(a, 0);
	ASSERT_TRUE(!r->itl_at_wire, "!itl_at_wire");
	ASSERT_EQ(r->itl_bunched, 0, "itl_bunched");
	g = tt_analyzer_request_itl(a, 0, &n);
	ASSERT_TRUE(n == 2 && g[0] == 2 * MS && g[1] == 2 * MS, "emit gaps");
cleanup:
	tt_analyzer_free(a);
}

/*
 * On loopback the client has the last bytes of a response, and sends its
 * next request, before the server's send returns: the next request's
 * DATA_READY carries an earlier time than the [DONE] send's record. Sends
 * are ordered by their entry, so the [DONE] still ends its own response.
 */
static void test_next_request_before_done_returns(void)
{
	struct tt_analyzer *a;

	reset();
	conn_open(0, 0x7700, "10.0.0.77", 7777);
	request_in(1 * MS, 1 * MS + 10, 0x7700, 10);
	send_cls(2 * MS, 2 * MS + 50, 0x7700, 100, 50, TT_SEND_HEADERS, 0,
		 TT_SEND_F_HEADERS);
	xmit(3 * MS + 20, 0x7700, 150, 160);
	send_cls(3 * MS, 3 * MS + 50, 0x7700, 150, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	xmit(4 * MS + 20, 0x7700, 160, 170);
	/* the client reads [DONE] and sends again within the send */
	data_ready(4 * MS + 40, 0x7700);
	send_cls(4 * MS, 4 * MS + 60, 0x7700, 160, 10, TT_SEND_DONE, 0,
		 TT_SEND_F_SSE);
	recv_(4 * MS + 100, 0x7700, 10);
	send_cls(5 * MS, 5 * MS + 50, 0x7700, 170, 50, TT_SEND_HEADERS, 0,
		 TT_SEND_F_HEADERS);
	xmit(6 * MS + 20, 0x7700, 220, 230);
	send_cls(6 * MS, 6 * MS + 50, 0x7700, 220, 10, TT_SEND_TOKEN, 1,
		 TT_SEND_F_SSE);
	xmit(7 * MS + 20, 0x7700, 230, 240);
	send_cls(7 * MS, 7 * MS + 50, 0x7700, 230, 10, TT_SEND_DONE, 0,
		 TT_SEND_F_SSE);
	a = run_listed(0);
	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_TRUE(req(a, 0)->complete && req(a, 1)->complete,
		    "req(a, 0)->complete && req(a, 1)->com...");
	ASSERT_EQ(req(a, 0)->t_first_write, 3 * MS, "req.t_first_write");
	ASSERT_EQ(req(a, 1)->t_arrive, 4 * MS + 40, "req.t_arrive");
	ASSERT_EQ(req(a, 1)->t_first_write, 6 * MS, "req.t_first_write");
	ASSERT_EQ(req(a, 1)->t_wire, 6 * MS + 20, "req.t_wire");
	tt_analyzer_free(a);
}

static void test_deterministic(void)
{
	struct tt_analyzer *x, *y;
	size_t i;

	build_interleaved();
	x = run_jittered(2 * MS, 9);
	y = run_jittered(2 * MS, 9);
	ASSERT_EQ(tt_analyzer_nrequests(x), tt_analyzer_nrequests(y),
		  "tt_analyzer_nrequests");
	for (i = 0; i < tt_analyzer_nrequests(x); i++)
		ASSERT_TRUE(req_equal(req(x, i), req(y, i)), "req_equal");
	tt_analyzer_free(x);
	tt_analyzer_free(y);
}

static void test_preexisting_connection(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1;

	reset();
	/* announced at its first event: tracing began mid-response, and a
	 * send while no request is open is ignored */
	conn_open(1 * MS, 0x6000, "10.0.0.6", 40006);
	send_bytes(2 * MS, 0x6000, 0, TOKEN_CHUNK, 0);
	/* then a request whose DATA_READY was not seen */
	recv_(5 * MS, 0x6000, 250);
	seq = send_bytes(6 * MS, 0x6000, seq, UVICORN_SSE_HEADERS,
			 6 * MS + 1 * US);
	seq = send_bytes(7 * MS, 0x6000, seq, TOKEN_CHUNK, 7 * MS + 1 * US);
	seq = send_bytes(8 * MS, 0x6000, seq, DONE_CHUNK, 8 * MS + 1 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->t_arrive, 0, "r.t_arrive");
	ASSERT_EQ(r->t_read, 5 * MS, "r.t_read");
	ASSERT_EQ(r->t_wire, 7 * MS + 1 * US, "r.t_wire");
	ASSERT_EQ(r->ttft, 0, "r.ttft");
	ASSERT_FALSE(r->complete, "r.complete");
	ASSERT_EQ(r->incomplete, TT_INC_NO_ARRIVE, "r.incomplete");
	tt_analyzer_free(a);
}

static void test_xmit_before_and_after_send(void)
{
	struct tt_analyzer *a;
	__u32 seq = 100, s;

	reset();
	conn_open(0, 0x7000, "10.0.0.7", 40007);
	/* loopback: the skb reaches the device inside the send syscall,
	 * so XMIT comes before the SEND record */
	request_in(1 * MS, 1 * MS + 10 * US, 0x7000, 10);
	seq = send_bytes(2 * MS, 0x7000, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 5 * US);
	s = seq;
	seq = send_bytes(3 * MS, 0x7000, seq, TOKEN_CHUNK, 3 * MS + 9 * US);
	seq = send_bytes(4 * MS, 0x7000, seq, DONE_CHUNK, 4 * MS + 9 * US);
	/* a real NIC: the XMIT comes 300 us after the send returned */
	request_in(10 * MS, 10 * MS + 10 * US, 0x7000, 10);
	seq = send_bytes(11 * MS, 0x7000, seq, UVICORN_SSE_HEADERS,
			 11 * MS + 300 * US);
	seq = send_bytes(12 * MS, 0x7000, seq, TOKEN_CHUNK, 12 * MS + 320 * US);
	seq = send_bytes(13 * MS, 0x7000, seq, TOKEN_CHUNK, 13 * MS + 320 * US);
	seq = send_bytes(14 * MS, 0x7000, seq, DONE_CHUNK, 14 * MS + 320 * US);
	/* TSO: one skb carries the first token inside a larger range */
	request_in(20 * MS, 20 * MS + 10 * US, 0x7000, 10);
	s = send_bytes(21 * MS, 0x7000, seq, UVICORN_SSE_HEADERS, 0);
	s = send_bytes(21 * MS + 500 * US, 0x7000, s, TOKEN_CHUNK, 0);
	xmit(21 * MS + 600 * US, 0x7000, seq, s);
	seq = send_bytes(22 * MS, 0x7000, s, DONE_CHUNK, 22 * MS + 20 * US);
	/* syscall entry unknown (the BPF side then puts the send's end in
	 * ts_enter): the loopback XMIT still matches, being after the
	 * previous send on the connection */
	request_in(30 * MS, 30 * MS + 10 * US, 0x7000, 10);
	seq = send_bytes(31 * MS, 0x7000, seq, UVICORN_SSE_HEADERS,
			 31 * MS + 5 * US);
	xmit(32 * MS + 5 * US, 0x7000, seq, seq + 10);
	send_cls(32 * MS + 20 * US, 32 * MS + 20 * US, 0x7000, seq, 10,
		 TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	seq = send_bytes(33 * MS, 0x7000, seq + 10, "data: [DONE]\n\n",
			 33 * MS + 5 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 4, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 3)->t_wire, 32 * MS + 5 * US, "req.t_wire");
	ASSERT_EQ(req(a, 3)->ttft, 2 * MS + 5 * US, "req.ttft");
	ASSERT_TRUE(req(a, 3)->complete, "req.complete");
	ASSERT_EQ(req(a, 0)->t_wire, 3 * MS + 9 * US, "req.t_wire");
	ASSERT_EQ(req(a, 0)->ttft, 2 * MS + 9 * US, "req.ttft");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	ASSERT_EQ(req(a, 1)->t_wire, 12 * MS + 320 * US, "req.t_wire");
	ASSERT_EQ(req(a, 1)->ttft, 2 * MS + 320 * US, "req.ttft");
	ASSERT_TRUE(req(a, 1)->complete, "req.complete");
	ASSERT_EQ(req(a, 2)->t_wire, 21 * MS + 600 * US, "req.t_wire");
	ASSERT_TRUE(req(a, 2)->complete, "req.complete");
	tt_analyzer_free(a);
}

static void test_done_before_xmit(void)
{
	struct tt_analyzer *a;
	__u32 seq = 1, s;

	reset();
	conn_open(0, 0x7100, "10.0.0.71", 40071);
	/* one send carries the whole answer; its XMIT comes after it */
	request_in(1 * MS, 1 * MS + 10 * US, 0x7100, 10);
	s = send_bytes(
		2 * MS, 0x7100, seq,
		"HTTP/1.1 200 OK\r\n\r\ndata: {\"t\":1}\n\ndata: [DONE]\n\n",
		3 * MS);
	conn_close(2 * MS + 500 * US, 0x7100); /* even after the close */
	/* the next one never reaches the wire (XMIT missed) */
	conn_open(10 * MS, 0x7200, "10.0.0.72", 40072);
	request_in(11 * MS, 11 * MS + 10 * US, 0x7200, 10);
	send_bytes(12 * MS, 0x7200, 1,
		   "HTTP/1.1 200 OK\r\n\r\ndata: {\"t\":1}\n\ndata: [DONE]\n\n",
		   0);
	/* later traffic elsewhere: the wait for its XMIT times out */
	conn_open(2000 * MS, 0x7300, "10.0.0.73", 40073);
	xmit(2000 * MS, 0x7300, 5, 6);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->t_wire, 3 * MS, "req.t_wire");
	ASSERT_EQ(req(a, 0)->ttft, 2 * MS, "req.ttft");
	ASSERT_EQ(req(a, 0)->tokens, 1, "req.tokens");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	ASSERT_EQ(req(a, 1)->t_wire, 0, "req.t_wire");
	ASSERT_FALSE(req(a, 1)->complete, "req.complete");
	ASSERT_EQ(req(a, 1)->incomplete, TT_INC_NO_WIRE, "req.incomplete");
	(void)s;
	tt_analyzer_free(a);
}

static void test_retransmit_first_counts(void)
{
	struct tt_analyzer *a;
	__u32 seq = 9000, s;

	reset();
	conn_open(0, 0x8000, "10.0.0.8", 40008);
	request_in(1 * MS, 1 * MS + 10 * US, 0x8000, 10);
	seq = send_bytes(2 * MS, 0x8000, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 1 * US);
	s = seq;
	seq = send_bytes(3 * MS, 0x8000, seq, TOKEN_CHUNK, 3 * MS + 400 * US);
	xmit(3 * MS + 800 * US, 0x8000, s, seq); /* fast retransmit */
	xmit(3 * MS + 200 * MS, 0x8000, s, seq); /* RTO retransmit */
	seq = send_bytes(4 * MS, 0x8000, seq, DONE_CHUNK, 4 * MS + 1 * US);
	/* second request: the retransmit of its first token is seen in the
	 * ring already, after the original */
	request_in(300 * MS, 300 * MS + 10 * US, 0x8000, 10);
	seq = send_bytes(301 * MS, 0x8000, seq, UVICORN_SSE_HEADERS,
			 301 * MS + 1 * US);
	s = seq;
	xmit(302 * MS + 2 * US, 0x8000, s, s + strlen(TOKEN_CHUNK));
	xmit(302 * MS + 9 * US, 0x8000, s, s + strlen(TOKEN_CHUNK));
	seq = send_bytes(302 * MS, 0x8000, seq, TOKEN_CHUNK, 0);
	seq = send_bytes(303 * MS, 0x8000, seq, DONE_CHUNK, 303 * MS + 1 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->t_wire, 3 * MS + 400 * US, "req.t_wire");
	ASSERT_EQ(req(a, 1)->t_wire, 302 * MS + 2 * US, "req.t_wire");
	ASSERT_TRUE(req(a, 0)->complete && req(a, 1)->complete,
		    "req(a, 0)->complete && req(a, 1)->com...");
	tt_analyzer_free(a);
}

/* An XMIT that comes late (beyond the reorder window) is handled out of
 * order: the connection's ring is then not in time order, and the search
 * for a token's transmit must not stop at it. */
static void test_late_xmit_in_ring(void)
{
	struct tt_analyzer *a;
	__u32 seq = 500, s;

	reset();
	conn_open(0, 0x8100, "10.0.0.81", 40081);
	request_in(1 * MS, 1 * MS + 10 * US, 0x8100, 10);
	seq = send_bytes(2 * MS, 0x8100, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 5 * US);
	s = seq;
	/* the token's skb reaches the device before its send's record */
	xmit(30 * MS, 0x8100, s, s + strlen(TOKEN_CHUNK));
	/* traffic elsewhere moves the window past it */
	conn_open(44 * MS, 0x8200, "10.0.0.82", 40082);
	data_ready(45 * MS, 0x8200);
	/* a transmit of 1 ms comes only now: handled out of order, it is the
	 * ring's newest and older than the header send's end */
	xmit(1 * MS, 0x8100, s + 1000, s + 1010);
	/* the token's send, entered long before its record */
	send_cls(29 * MS, 50 * MS, 0x8100, s, strlen(TOKEN_CHUNK),
		 TT_SEND_TOKEN, 1, TT_SEND_F_SSE | TT_SEND_F_CHUNKED);
	seq = send_bytes(51 * MS, 0x8100, s + strlen(TOKEN_CHUNK), DONE_CHUNK,
			 51 * MS + 5 * US);
	a = run_listed(0); /* in list order: the late one stays late */

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->t_wire, 30 * MS, "req.t_wire");
	ASSERT_EQ(req(a, 0)->ttft, 29 * MS, "req.ttft");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	tt_analyzer_free(a);
}

static void test_seq_wraparound(void)
{
	struct tt_analyzer *a;
	__u32 seq = 0xfffffe00u, s;

	reset();
	conn_open(0, 0x9000, "10.0.0.9", 40009);
	request_in(1 * MS, 1 * MS + 10 * US, 0x9000, 10);
	seq = send_bytes(2 * MS, 0x9000, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 1 * US);
	/* the first token's bytes straddle 2^32 */
	s = 0xfffffff0u;
	seq = s + strlen(TOKEN_CHUNK);
	ASSERT_LT(seq, 0x100, "seq");
	/* a range after it and one before it do not match */
	xmit(3 * MS + 1 * US, 0x9000, 0x40, 0x80);
	xmit(3 * MS + 2 * US, 0x9000, 0xffffff00u, 0xfffffff0u);
	send_cls(3 * MS, 3 * MS + 20 * US, 0x9000, s, strlen(TOKEN_CHUNK),
		 TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	xmit(3 * MS + 30 * US, 0x9000, 0xffffffe0u, 0x40);
	seq = send_bytes(4 * MS, 0x9000, seq, DONE_CHUNK, 4 * MS + 1 * US);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->t_wire, 3 * MS + 30 * US, "req.t_wire");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	tt_analyzer_free(a);
}

static void test_lost_window(void)
{
	struct tt_analyzer *a;
	__u32 seq[5] = { 1, 1, 1, 1, 1 };
	__u64 sk[5] = { 0xa000, 0xa100, 0xa200, 0xa300, 0xa400 };
	const __u64 *itl;
	unsigned int i;
	size_t n;

	reset();
	for (i = 0; i < 5; i++)
		conn_open(i * US, sk[i], "10.0.0.10", 41000 + i);
	/* A: [10, ~24] ms, ends before the window */
	sse_request(sk[0], 10 * MS, &seq[0], 2 * MS, 3, 1 * MS);
	/* B: [40, ~55] ms, inside the window (50, 90] */
	sse_request(sk[1], 40 * MS, &seq[1], 2 * MS, 3, 5 * MS);
	/* C: [100, ...] ms, after it */
	sse_request(sk[2], 100 * MS, &seq[2], 2 * MS, 3, 1 * MS);
	/* D: begins at 85 ms and is still going at 90 ms */
	sse_request(sk[3], 85 * MS, &seq[3], 2 * MS, 4, 10 * MS);
	/* E: [30, 34.02] ms */
	sse_request(sk[4], 30 * MS, &seq[4], 2 * MS, 2, 1 * MS);
	lost(90 * MS, 50 * MS, 7, 1);
	a = run();

	ASSERT_EQ(tt_analyzer_lost(a), 7, "tt_analyzer_lost");
	ASSERT_EQ(tt_analyzer_nrequests(a), 5, "tt_analyzer_nrequests");
	/* ids by arrival: A 10, E 30, B 40, D 85, C 100 */
	ASSERT_EQ(req(a, 0)->sk, sk[0], "req.sk");
	ASSERT_EQ(req(a, 1)->sk, sk[4], "req.sk");
	ASSERT_EQ(req(a, 2)->sk, sk[1], "req.sk");
	ASSERT_EQ(req(a, 3)->sk, sk[3], "req.sk");
	ASSERT_EQ(req(a, 4)->sk, sk[2], "req.sk");
	ASSERT_EQ(req(a, 1)->t_end, 34 * MS + 20 * US, "req.t_end");
	ASSERT_TRUE(req(a, 0)->complete && !req(a, 0)->lost,
		    "req(a, 0)->complete && !req(a, 0)->lost");
	ASSERT_TRUE(!req(a, 2)->complete && req(a, 2)->lost,
		    "!req(a, 2)->complete && req(a, 2)->lost");
	ASSERT_EQ(req(a, 2)->incomplete, TT_INC_LOST, "req.incomplete");
	ASSERT_TRUE(!req(a, 3)->complete && req(a, 3)->lost,
		    "!req(a, 3)->complete && req(a, 3)->lost");
	ASSERT_TRUE(req(a, 4)->complete && !req(a, 4)->lost,
		    "req(a, 4)->complete && !req(a, 4)->lost");
	ASSERT_EQ(req(a, 2)->ttft, 2 * MS + 5 * US, "req.ttft");
	/* only complete requests' gaps: A 2, E 1, C 2 */
	itl = tt_analyzer_itl(a, &n);
	ASSERT_EQ(n, 5, "n");
	for (i = 0; i < n && itl; i++)
		ASSERT_EQ(itl[i], 1 * MS, "itl[i]");
	tt_analyzer_free(a);

	/* a window whose since is exactly E's end leaves E complete */
	reset();
	conn_open(0, sk[4], "10.0.0.10", 41004);
	sse_request(sk[4], 30 * MS, &seq[4], 2 * MS, 2, 1 * MS);
	lost(90 * MS, 34 * MS + 20 * US, 1, 0);
	conn_open(0, sk[0], "10.0.0.10", 41000);
	sse_request(sk[0], 31 * MS, &seq[0], 2 * MS, 3, 1 * MS);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	ASSERT_TRUE(!req(a, 1)->complete && req(a, 1)->lost,
		    "!req(a, 1)->complete && req(a, 1)->lost");
	tt_analyzer_free(a);
}

static void test_lost_while_waiting_for_wire(void)
{
	struct tt_analyzer *a;
	const char *answer =
		"HTTP/1.1 200 OK\r\n\r\ndata: {\"t\":1}\n\ndata: [DONE]\n\n";

	reset();
	/* F: answered in one send at 40 ms, on the wire only at 70 ms */
	conn_open(0, 0xa500, "10.0.0.20", 42000);
	request_in(30 * MS, 30 * MS + 10 * US, 0xa500, 10);
	send_bytes(40 * MS, 0xa500, 1, answer, 70 * MS);
	/* G: the same, on the wire at once */
	conn_open(0, 0xa600, "10.0.0.21", 42001);
	request_in(31 * MS, 31 * MS + 10 * US, 0xa600, 10);
	send_bytes(41 * MS, 0xa600, 1, answer, 41 * MS + 5 * US);
	/* H: never on the wire; given up on at 2.1 s */
	conn_open(0, 0xa700, "10.0.0.22", 42002);
	request_in(32 * MS, 32 * MS + 10 * US, 0xa700, 10);
	send_bytes(42 * MS, 0xa700, 1, answer, 0);
	/* records lost in (50, 90] ms: F was still waiting, G was done */
	lost(90 * MS, 50 * MS, 1, 3);
	conn_open(2100 * MS, 0xa800, "10.0.0.23", 42003);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 3, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->t_wire, 70 * MS, "req.t_wire");
	ASSERT_TRUE(req(a, 0)->lost && !req(a, 0)->complete,
		    "req(a, 0)->lost && !req(a, 0)->complete");
	ASSERT_EQ(req(a, 0)->incomplete, TT_INC_LOST, "req.incomplete");
	ASSERT_TRUE(!req(a, 1)->lost && req(a, 1)->complete,
		    "!req(a, 1)->lost && req(a, 1)->complete");
	ASSERT_TRUE(req(a, 2)->lost, "req.lost");
	ASSERT_EQ(req(a, 2)->incomplete, TT_INC_LOST | TT_INC_NO_WIRE,
		  "req.incomplete");
	tt_analyzer_free(a);
}

static void test_ids_follow_arrival(void)
{
	struct tt_analyzer *a;
	__u32 seq = 1;

	reset();
	conn_open(0, 0xb000, "10.0.0.11", 1111);
	conn_open(0, 0xb100, "10.0.0.12", 2222);
	/* X arrives first but is read last */
	data_ready(10 * MS, 0xb000);
	request_in(12 * MS, 13 * MS, 0xb100, 10);
	recv_(20 * MS, 0xb000, 10);
	send_bytes(21 * MS, 0xb100, seq, "data: x\n\ndata: [DONE]\n\n",
		   21 * MS + 1 * US);
	send_bytes(22 * MS, 0xb000, seq, "data: x\n\ndata: [DONE]\n\n",
		   22 * MS + 1 * US);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->id, 1, "req.id");
	ASSERT_EQ(req(a, 0)->rport, 1111, "req.rport");
	ASSERT_EQ(req(a, 1)->id, 2, "req.id");
	ASSERT_EQ(req(a, 1)->rport, 2222, "req.rport");
	tt_analyzer_free(a);
}

/* A sized answer, its body in two sends after the headers (uvicorn): it
 * ends at its last byte by the Content-Length (issue 8 item 3), before
 * the close. An HTTP/1.0 stream with no length ends at the close:
 * complete, not closed mid-stream. */
/* The device handed the socket's bytes on at ts_dev, the socket had them
 * at ts (a DATA_READY_DEV). */
static void data_ready_dev(__u64 ts, __u64 sk, __u64 ts_dev)
{
	struct tt_event ev = mk(TT_EV_DATA_READY_DEV, ts, 0);

	ev.sock_dev.sk = sk;
	ev.sock_dev.len = 300;
	ev.sock_dev.ts_dev = ts_dev;
	push(&ev);
}

/* A one-token SSE answer to a request read at t_read, its token sent at
 * t_tok; returns the sequence after it. */
static __u32 one_token_answer(__u64 sk, __u64 t_read, __u64 t_tok, __u32 seq)
{
	recv_(t_read, sk, 300);
	seq = send_bytes(t_read + 100 * US, sk, seq, UVICORN_SSE_HEADERS,
			 t_read + 105 * US);
	seq = send_bytes(t_tok, sk, seq, TOKEN_CHUNK, t_tok + 5 * US);
	return send_bytes(t_tok + 100 * US, sk, seq, DONE_CHUNK,
			  t_tok + 105 * US);
}

/*
 * A request arrives where the device had its bytes: a backlog's wait before
 * the socket took them is in its TTFT, as network.in. Never before the
 * connection's last answer went out, and a stamp further back than
 * TT_DEV_LEAD_MAX_NS is no arrival; streamed walks agree.
 */
static void test_device_arrival(void)
{
	const __u64 sk = 0x4100, t1 = 10 * MS, t2 = 20 * MS, t3 = 40 * MS;
	const struct tt_request *r, *q;
	struct tt_analyzer *a, *streamed;
	__u32 seq = 900;

	reset();
	conn_open(1 * MS, sk, "10.0.0.1", 40002);
	data_ready_dev(t1, sk, t1 - 300 * US);
	seq = one_token_answer(sk, t1 + 50 * US, t1 + 2 * MS, seq);
	/* stamped before the last send of the answer before it */
	data_ready_dev(t2, sk, t1 + 2 * MS);
	seq = one_token_answer(sk, t2 + 50 * US, t2 + 2 * MS, seq);
	data_ready_dev(t3, sk, t3 - TT_DEV_LEAD_MAX_NS - 1);
	one_token_answer(sk, t3 + 50 * US, t3 + 2 * MS, seq);
	conn_close(t3 + 5 * MS, sk);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 3, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->t_arrive, t1 - 300 * US, "r.t_arrive");
	ASSERT_EQ(r->ttft, 2 * MS + 5 * US + 300 * US, "r.ttft");
	/* the reader ran throughout: arrival to read is all network.in */
	ASSERT_EQ(r->stage_ns[TT_ST_NET_IN], 350 * US,
		  "r.stage_ns[TT_ST_NET_IN]");
	ASSERT_TRUE(r->complete && r->attributed,
		    "r->complete && r->attributed");
	r = req(a, 1);
	/* the DONE send of the first answer: hdr.ts 20 us past its entry */
	ASSERT_EQ(r->t_arrive, t1 + 2 * MS + 120 * US, "r.t_arrive");
	r = req(a, 2);
	ASSERT_EQ(r->t_arrive, t3, "r.t_arrive");
	streamed = run_listed(1);
	for (size_t i = 0; i < 3; i++) {
		r = req(a, i);
		q = req(streamed, i);
		ASSERT_EQ(q->t_arrive, r->t_arrive, "q.t_arrive");
		ASSERT_FALSE(memcmp(q->stage_ns, r->stage_ns,
				    sizeof(r->stage_ns)),
			     "streamed stages");
	}
	tt_analyzer_free(streamed);
	tt_analyzer_free(a);
}

static void test_non_streaming_response(void)
{
	struct tt_sse_carry carry = { 0 }, c10 = { 0 };
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1, s10 = 1;
	__u64 t;

	reset();
	conn_open(0, 0xc000, "::1", 5555);
	request_in(1 * MS, 1 * MS + 20 * US, 0xc000, 400);
	seq = send_bytes_carry(50 * MS, 0xc000, seq,
			       "HTTP/1.1 200 OK\r\ncontent-type: "
			       "application/json\r\ncontent-length: 36\r\n\r\n",
			       50 * MS + 2 * US, &carry);
	seq = send_bytes_carry(50 * MS + 40 * US, 0xc000, seq,
			       "{\"choices\":[{\"text\":", 50 * MS + 44 * US,
			       &carry);
	seq = send_bytes_carry(50 * MS + 60 * US, 0xc000, seq,
			       "\"Hello world\"}]}", 50 * MS + 64 * US, &carry);
	conn_close(60 * MS, 0xc000); /* Connection: close */
	conn_open(0, 0xc100, "10.0.0.96", 5556);
	request_in(70 * MS, 70 * MS + 20 * US, 0xc100, 400);
	s10 = send_bytes_carry(75 * MS, 0xc100, s10,
			       "HTTP/1.0 200 OK\r\ncontent-type: "
			       "text/event-stream\r\n\r\n",
			       75 * MS + 2 * US, &c10);
	for (t = 76 * MS; t <= 77 * MS; t += MS)
		s10 = send_bytes_carry(t, 0xc100, s10, "data: {}\n\n",
				       t + 2 * US, &c10);
	conn_close(80 * MS, 0xc100);
	a = run();
	if (!ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests"))
		goto cleanup;
	r = req(a, 0);
	ASSERT_EQ(r->family, AF_INET6, "r.family");
	ASSERT_EQ(r->t_headers, 50 * MS, "r.t_headers");
	ASSERT_EQ(r->t_first_write, 50 * MS + 40 * US, "r.t_first_write");
	ASSERT_EQ(r->t_wire, 50 * MS + 44 * US, "r.t_wire");
	ASSERT_EQ(r->ttft, 49 * MS + 44 * US, "r.ttft");
	ASSERT_EQ(r->tokens, 0, "r.tokens");
	ASSERT_EQ(r->status, 200, "r.status");
	ASSERT_TRUE(!r->closed_mid_stream, "!r.closed_mid_stream");
	/* answered without a token: counted apart, not a TTFT */
	ASSERT_TRUE(!r->complete, "!r.complete");
	ASSERT_EQ(r->incomplete, TT_INC_NO_TOKEN, "r.incomplete");
	ASSERT_EQ(r->end, TT_END_DONE, "r.end");
	ASSERT_EQ(r->t_end, 50 * MS + 80 * US, "r.t_end: its last byte's send");
	r = req(a, 1);
	ASSERT_EQ(r->end, TT_END_CLOSE, "HTTP/1.0: end");
	ASSERT_STREQ(tt_end_name(r->end), "close", "tt_end_name");
	ASSERT_TRUE(!r->closed_mid_stream, "HTTP/1.0: !closed_mid_stream");
	ASSERT_TRUE(r->complete, "HTTP/1.0: complete");
	ASSERT_EQ(r->tokens, 2, "HTTP/1.0: tokens");
cleanup:
	tt_analyzer_free(a);
}

/* An SSE answer on sk from t: headers, two tokens, then the close. */
static void sse_answer(__u64 t, __u64 sk)
{
	struct tt_sse_carry carry = { 0 };
	__u32 seq = 1;

	seq = send_bytes_carry(t, sk, seq,
			       "HTTP/1.0 200 OK\r\ncontent-type: "
			       "text/event-stream\r\n\r\n",
			       t + 2 * US, &carry);
	seq = send_bytes_carry(t + MS, sk, seq, "data: {}\n\n", t + MS + 2 * US,
			       &carry);
	send_bytes_carry(t + 2 * MS, sk, seq, "data: {}\n\n",
			 t + 2 * MS + 2 * US, &carry);
	conn_close(t + 3 * MS, sk);
}

/* Bytes a traced server process sent on loopback from a client socket make
 * a hop (docs/design.md §4.11), apart from the clients' requests. Not a
 * hop: a remote peer, a client's segment a server thread's softirq took in
 * (its port is no traced client's), a hop's bytes delivered by another
 * thread (ksoftirqd: whose they are is unknown), a traced process that
 * serves nothing (a load generator recorded with its server). */
static void hop_reply(__u64 ts, __u16 port)
{
	struct tt_event ev = mk(TT_EV_RECV, ts, 55);

	ev.h.flags = TT_F_HOP_REPLY | (__u32)port << TT_F_PORT_SHIFT;
	ev.sock.sk = 0xe000 + port;
	ev.sock.len = 45;
	push(&ev);
}

static void test_hop_requests(void)
{
	const __u32 hop = TT_F_SOFTIRQ | TT_F_HOP | TT_F_HOP_SENDER;
	const struct {
		__u64 sk;
		const char *ip;
		__u32 flags, tgid;
		__u32 want_inc, want_sender;
	} c[] = {
		{ 0xd100, "10.0.0.96", hop, SERVER_TGID, 0, 0 },
		{ 0xd000, "127.0.0.1", hop, SERVER_TGID, TT_INC_HOP, 77 },
		{ 0xd200, "127.0.0.1", TT_F_SOFTIRQ, SERVER_TGID, 0, 0 },
		{ 0xd300, "::ffff:127.0.0.2", TT_F_HOP | TT_F_HOP_SENDER,
		  SERVER_TGID, TT_INC_HOP, 77 },
		{ 0xd400, "127.0.0.1", hop, SERVER_TGID + 1, 0, 0 },
		{ 0xd500, "127.0.0.1", TT_F_SOFTIRQ | TT_F_HOP, SERVER_TGID, 0,
		  0 },
	};
	struct tt_analyzer *a;
	const struct tt_request *r;
	struct tt_event ev;
	size_t i;

	reset();
	for (i = 0; i < (sizeof(c) / sizeof(c[0])); i++) {
		conn_open(0, c[i].sk, c[i].ip, 6000 + i);
		ev = mk(TT_EV_DATA_READY, (1 + 10 * i) * MS, 77);
		ev.h.tgid = c[i].tgid;
		ev.h.flags = c[i].flags;
		ev.sock.sk = c[i].sk;
		ev.sock.len = 300;
		push(&ev);
		recv_((1 + 10 * i) * MS + 20 * US, c[i].sk, 300);
		sse_answer((2 + 10 * i) * MS, c[i].sk);
		/* the gateway reads the answer on its client socket: the
		 * headers, the first token (the hop's read; of the second hop
		 * after the runner closed), the second */
		hop_reply((2 + 10 * i) * MS + 500 * US, 6000 + i);
		hop_reply((i == 3 ? 5 : 3) * MS + 10 * i * MS + 50 * US,
			  6000 + i);
		hop_reply((i == 3 ? 6 : 4) * MS + 10 * i * MS + 80 * US,
			  6000 + i);
	}
	a = run();
	if (!ASSERT_EQ(tt_analyzer_nrequests(a), (sizeof(c) / sizeof(c[0])),
		       "tt_analyzer_nrequests"))
		goto cleanup;
	for (i = 0; i < (sizeof(c) / sizeof(c[0])); i++) {
		r = req(a, i);
		ASSERT_EQ(r->incomplete, c[i].want_inc, "r.incomplete");
		ASSERT_EQ(r->hop_sender_tid, c[i].want_sender,
			  "r.hop_sender_tid");
		ASSERT_EQ(r->hop_read_t,
			  c[i].want_inc ? (i == 3 ? 5 : 3) * MS + 10 * i * MS +
						  50 * US :
					  0,
			  "r.hop_read_t: the first token's read");
		ASSERT_EQ(r->hop_read_tid, c[i].want_inc ? 55 : 0,
			  "r.hop_read_tid");
		ASSERT_EQ(r->complete, !c[i].want_inc, "r.complete");
	}
cleanup:
	tt_analyzer_free(a);
}

/* A hop's bytes on sk at t, sent by a thread of tgid (its DATA_READY) */
static void hop_in(__u64 t, __u64 sk, __u32 tgid)
{
	struct tt_event ev = mk(TT_EV_DATA_READY, t, 77);

	ev.h.tgid = tgid;
	ev.h.flags = TT_F_SOFTIRQ | TT_F_HOP | TT_F_HOP_SENDER;
	ev.sock.sk = sk;
	ev.sock.len = 120;
	push(&ev);
}

/* A gateway's calls to its runner multiplexed on one HTTP/2 connection
 * (a kept grpc.ClientConn): the clients' requests it served while they
 * were in flight say their path may be another call's; one before, one
 * after, or one another process served, does not. */
static void test_h2_mux_spread(void)
{
	struct tt_sse_carry carry = { 0 };
	const struct tt_request *r;
	struct tt_analyzer *a;
	__u32 seq = 100;
	size_t i;

	reset();
	conn_open(0, 0xd600, "127.0.0.1", 6600);
	conn_open(0, 0xd700, "10.0.0.5", 6700);
	conn_open(0, 0xd800, "10.0.0.6", 6800);
	conn_open(0, 0xd900, "10.0.0.7", 6900);
	conn_open(0, 0xda00, "10.0.0.8", 7000);
	request_in(1 * MS, 1 * MS + 20 * US, 0xda00, 300);
	sse_answer(2 * MS, 0xda00);
	request_in(9 * MS, 9 * MS + 20 * US, 0xd700, 300);
	sse_answer(12 * MS, 0xd700);
	/* read and answered by another process */
	mk_tgid = SERVER_TGID + 1;
	request_in(9 * MS, 9 * MS + 30 * US, 0xd900, 300);
	sse_answer(12 * MS + 100 * US, 0xd900);
	mk_tgid = SERVER_TGID;
	request_in(20 * MS, 20 * MS + 20 * US, 0xd800, 300);
	sse_answer(21 * MS, 0xd800);
	hop_in(10 * MS + 200 * US, 0xd600, SERVER_TGID);
	seq = h2_send(10 * MS + 250 * US, 0xd600, seq, 0, &carry);
	recv_(10 * MS + 300 * US, 0xd600, 120);
	seq = h2_send_on(10 * MS + 500 * US, 0xd600, seq, 1, 1, &carry);
	hop_in(10 * MS + 600 * US, 0xd600, SERVER_TGID);
	seq = h2_send_on(10 * MS + 700 * US, 0xd600, seq, 1, 3, &carry);
	seq = h2_send_on(10 * MS + 900 * US, 0xd600, seq, 2, 1, &carry);
	seq = h2_send_on(11 * MS + 100 * US, 0xd600, seq, 3, 1, &carry);
	h2_send_on(11 * MS + 300 * US, 0xd600, seq, 3, 3, &carry);
	conn_close(30 * MS, 0xd600);
	a = run();

	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		if (r->sk == 0xd600)
			ASSERT_TRUE(r->h2_mux && (r->incomplete & TT_INC_HOP),
				    "a hop, multiplexed");
		else
			ASSERT_EQ(r->h2_mux, r->sk == 0xd700,
				  "r.h2_mux: served while they were");
	}
	ASSERT_GE(tt_analyzer_nrequests(a), 5, "tt_analyzer_nrequests");
	tt_analyzer_free(a);
}

#define ERROR_429                                                  \
	"HTTP/1.1 429 Too Many Requests\r\n"                       \
	"content-type: application/json\r\ncontent-length: 36\r\n" \
	"\r\n"                                                     \
	"{\"error\":\"rate limited, retry soon\"}"

/* Issue 13 item 3: every second request is answered by a quick 429 with
 * no token; those are errors, apart from the streams' TTFT. */
static void test_error_responses(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u64 t = 10 * MS;
	__u32 seq = 1;
	unsigned int i;

	reset();
	conn_open(1 * MS, 0xa100, "10.0.0.31", 31000);
	for (i = 0; i < 3; i++) {
		t = sse_request(0xa100, t, &seq, 20 * MS, 3, 1 * MS) + 1 * MS;
		data_ready(t, 0xa100);
		recv_(t + 20 * US, 0xa100, 300);
		seq = send_bytes(t + 50 * US, 0xa100, seq, ERROR_429,
				 t + 55 * US);
		t += 1 * MS;
	}
	conn_close(t, 0xa100);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 6, "tt_analyzer_nrequests(a)");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		if (i % 2 == 0) {
			ASSERT_EQ(r->status, 200, "r.status");
			ASSERT_EQ(r->tokens, 3, "r.tokens");
			ASSERT_EQ(r->ttft, 20 * MS + 5 * US, "r.ttft");
			ASSERT_TRUE(r->complete, "r.complete");
		} else {
			ASSERT_EQ(r->status, 429, "r.status");
			ASSERT_EQ(r->tokens, 0, "r.tokens");
			ASSERT_TRUE(!r->complete, "!r.complete");
			ASSERT_EQ(r->incomplete, TT_INC_ERROR, "r.incomplete");
		}
	}
	tt_analyzer_free(a);
}

/* A send of a server that encrypts: a handshake's records (flags
 * TT_SEND_F_TLS), or plaintext the recorder read (TT_SEND_F_TLS_PLAIN
 * and what the plaintext showed); on the wire 5 us after its entry.
 * Returns the next seq. */
static __u32 tls_send(__u64 t, __u64 sk, __u32 seq, unsigned int cls,
		      unsigned int tokens, unsigned int flags)
{
	send_cls(t, t + 20 * US, sk, seq, 200, cls, tokens, flags);
	xmit(t + 5 * US, sk, seq, seq + 200);
	return seq + 200;
}

/* A TLS record's header, as the collector captures a server's send */
static const char tls_record[] = { 0x17, 0x03, 0x03, 0x00, 0x40, 0x00 };

/* An exchange on sk: 80 bytes in, read 20 us later, and (reply) a TLS
 * record of 300 bytes back; returns the next seq. */
static __u32 tls_exchange(__u64 t, __u64 sk, __u32 seq, bool reply)
{
	struct tt_event ev = mk(TT_EV_SEND, t + 70 * US, WRITER_TID);

	request_in(t, t + 20 * US, sk, 80);
	if (!reply)
		return seq;
	ev.send.sk = sk;
	ev.send.len = 300;
	ev.send.ts_enter = t + 50 * US;
	ev.send.seq = seq;
	tt_classify_send(tls_record, sizeof(tls_record), 300, &ev.send);
	push(&ev);
	xmit(t + 60 * US, sk, seq, seq + 300);
	return seq + 300;
}

/* A server that encrypts (TLS): its handshake, its encrypted answers and
 * the client's closing alert are requests whose framing and tokens cannot
 * be read, "tls", never no-token or no-response; the first came before
 * the first record was sent. A plain connection beside it is whole. */
static void test_tls_connection(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1, tseq = 1;
	size_t i, tls = 0;

	reset();
	conn_open(1 * MS, 0xa200, "10.0.0.32", 32000);
	conn_open(1 * MS, 0xa201, "10.0.0.33", 33000);
	/* a record before any byte came (an alert): no exchange */
	tseq = tls_send(1500 * US, 0xa201, tseq, TT_SEND_OTHER, 0,
			TT_SEND_F_TLS);
	tseq = tls_exchange(2 * MS, 0xa201, tseq, true); /* ClientHello */
	tseq = tls_exchange(3 * MS, 0xa201, tseq, true); /* Finished */
	sse_request(0xa200, 4 * MS, &seq, 10 * MS, 3, 1 * MS);
	tseq = tls_exchange(5 * MS, 0xa201, tseq, true); /* a request */
	tls_exchange(30 * MS, 0xa201, tseq, false); /* close_notify */
	conn_close(31 * MS, 0xa201);
	conn_close(32 * MS, 0xa200);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 5, "tt_analyzer_nrequests(a)");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		if (r->sk == 0xa200) {
			ASSERT_TRUE(r->complete, "the plain one complete");
			continue;
		}
		tls++;
		ASSERT_EQ(r->incomplete, TT_INC_TLS, "r.incomplete");
	}
	ASSERT_EQ(tls, 4, "encrypted exchanges");
	tt_analyzer_free(a);
}

#define PLAIN_SSE (TT_SEND_F_TLS_PLAIN | TT_SEND_F_CHUNKED | TT_SEND_F_SSE)

/* One handshake (ClientHello at t, read 20 us later, the server's
 * records at t + 50 us) and the client's Finished at t + 1 ms; then the
 * request at t + 1.1 ms, read (read_first) before the server's tickets at
 * t + 1.3 ms as a memory BIO's loop reads, or after them (t + 1.4 ms) as
 * OpenSSL on the socket reads record by record; its answer in plaintext:
 * headers at t + 3 ms, a token at t + 4 ms, a record of the server's own
 * (a ticket, a key update) at t + 4.5 ms, the end at t + 5 ms; and an
 * alert at t + 6 ms, the request over. */
static __u32 tls_conn(__u64 t, __u64 sk, __u32 seq, bool read_first)
{
	request_in(t, t + 20 * US, sk, 517);
	seq = tls_send(t + 50 * US, sk, seq, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	request_in(t + 1 * MS, t + 1 * MS + 20 * US, sk, 80);
	data_ready(t + 1100 * US, sk);
	if (read_first)
		recv_(t + 1200 * US, sk, 149);
	seq = tls_send(t + 1300 * US, sk, seq, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	if (!read_first)
		recv_(t + 1400 * US, sk, 149);
	seq = tls_send(t + 3 * MS, sk, seq, TT_SEND_HEADERS, 0,
		       TT_SEND_F_TLS_PLAIN | TT_SEND_F_HEADERS |
			       TT_SEND_F_CHUNKED);
	seq = tls_send(t + 4 * MS, sk, seq, TT_SEND_TOKEN, 1, PLAIN_SSE);
	seq = tls_send(t + 4500 * US, sk, seq, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	seq = tls_send(t + 5 * MS, sk, seq, TT_SEND_DONE, 0,
		       PLAIN_SSE | TT_SEND_F_END);
	return tls_send(t + 6 * MS, sk, seq, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
}

/* Requests on TLS connections the recorder read as plaintext: each is
 * whole from its own bytes' arrival (never the handshake's), however its
 * loop read it, whatever records the server sent on its own; the
 * handshake's exchanges are counted apart, but for those of a connection
 * none of whose requests were read (a TLS library not probed). */
static void test_tls_plaintext_requests(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	bool *apart = NULL;
	size_t i, n = 0, handshakes = 0;

	reset();
	conn_open(1 * MS, 0xa300, "10.0.0.34", 34000);
	conn_open(1 * MS, 0xa301, "10.0.0.35", 35000);
	conn_open(1 * MS, 0xa302, "10.0.0.36", 36000);
	tls_conn(2 * MS, 0xa300, 1, true);
	tls_conn(10 * MS, 0xa301, 1, false);
	tls_exchange(12 * MS, 0xa302, 1, true);
	conn_close(20 * MS, 0xa300);
	conn_close(20 * MS, 0xa301);
	conn_close(20 * MS, 0xa302);
	a = run();
	ASSERT_EQ(tt_analyzer_tls_apart(a, &apart), 0, "tls_apart");
	ASSERT_TRUE(apart, "some apart");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		if (r->sk == 0xa302) {
			ASSERT_TRUE(!apart[i], "unread, not apart");
			continue;
		}
		if (apart[i]) {
			handshakes++;
			ASSERT_EQ(r->incomplete, TT_INC_TLS, "a handshake's");
			continue;
		}
		n++;
		ASSERT_TRUE(r->complete && r->tls, "read, complete");
		ASSERT_EQ(r->t_arrive,
			  (r->sk == 0xa300 ? 2 : 10) * MS + 1100 * US,
			  "its own bytes' arrival");
		ASSERT_EQ(r->t_read, (r->sk == 0xa300 ? 3200 : 11400) * US,
			  "r.t_read");
		ASSERT_EQ(r->ttft, 2905 * US, "r.ttft");
	}
	ASSERT_EQ(n, 2, "the two requests");
	ASSERT_EQ(handshakes, 4, "two exchanges a handshake");
	free(apart);
	tt_analyzer_free(a);
}

/* A connection sk from ip:rport opened at 1 ms, its ClientHello at t, read
 * 20 us later, the server's records 50 us after it; the next seq */
static __u32 tls_hello(__u64 t, __u64 sk, const char *ip, __u16 rport)
{
	conn_open(1 * MS, sk, ip, rport);
	request_in(t, t + 20 * US, sk, 517);
	return tls_send(t + 50 * US, sk, 1, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
}

/* The plaintext answer on sk: headers at t (flags and F_HEADERS), a token
 * 1 ms later (token_flags), the end 1 ms after, the close 1 ms after it */
static void tls_answer(__u64 t, __u64 sk, __u32 seq, __u32 flags,
		       __u32 token_flags)
{
	seq = tls_send(t, sk, seq, TT_SEND_HEADERS, 0,
		       flags | TT_SEND_F_HEADERS);
	seq = tls_send(t + 1 * MS, sk, seq, TT_SEND_TOKEN, 1, token_flags);
	tls_send(t + 2 * MS, sk, seq, TT_SEND_DONE, 0,
		 token_flags | TT_SEND_F_END);
	conn_close(t + 3 * MS, sk);
}

/* A Go server (crypto/tls, TLS 1.3) sends its tickets in its first
 * flight: nothing answers the client's Finished. When it came alone (64
 * bytes queued), it is no part of the request, which begins at the next
 * arrival, its own, whether the server read the Finished first or both
 * at once; when it came with the request, or the first bytes were longer
 * than a Finished (a request's headers, its body after), the exchange
 * keeps its first arrival. */
static void test_tls13_finished_alone(void)
{
	static const struct {
		__u64 sk;
		__s64 first; /* bytes queued at the first arrival */
		bool read_first; /* read at once, before more came */
		bool more; /* more bytes came 1 ms after */
		__u64 want_us; /* the request's arrival, after the hello */
	} c[] = {
		{ 0xa310, 64, true, true, 2000 },
		{ 0xa311, 64, false, true, 2000 },
		{ 0xa312, 364, true, false, 1000 },
		{ 0xa313, 200, true, true, 1000 },
	};
	const size_t ncases = sizeof(c) / sizeof(c[0]);
	struct tt_analyzer *a;
	const struct tt_request *r;
	bool *apart = NULL;
	size_t i, k, n = 0;
	__u64 t, t_read;
	__u32 seq;

	reset();
	for (k = 0; k < ncases; k++) {
		t = (2 + 10 * k) * MS;
		seq = tls_hello(t, c[k].sk, "10.0.0.37", 37000 + k);
		sock_ev(TT_EV_DATA_READY, t + 1 * MS, c[k].sk, 0, c[k].first);
		if (c[k].read_first)
			recv_(t + 1020 * US, c[k].sk, c[k].first);
		if (c[k].more)
			sock_ev(TT_EV_DATA_READY, t + 2 * MS, c[k].sk, 0,
				c[k].read_first ? 300 : c[k].first + 300);
		if (c[k].more)
			recv_(t + 2020 * US, c[k].sk,
			      c[k].read_first ? 300 : c[k].first + 300);
		tls_answer(t + 3 * MS, c[k].sk, seq,
			   TT_SEND_F_TLS_PLAIN | TT_SEND_F_CHUNKED, PLAIN_SSE);
	}
	a = run();
	ASSERT_EQ(tt_analyzer_tls_apart(a, &apart), 0, "tls_apart");
	ASSERT_TRUE(apart, "the hellos apart");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		k = r->sk - 0xa310;
		t = (2 + 10 * k) * MS;
		if (apart[i]) {
			ASSERT_EQ(r->t_arrive, t, "the hello's exchange");
			continue;
		}
		n++;
		t_read = t + (c[k].more ? 2020 : 1020) * US;
		ASSERT_TRUE(r->complete && r->tls, "read, complete");
		ASSERT_EQ(r->t_arrive, t + c[k].want_us * US, "r.t_arrive");
		ASSERT_EQ(r->t_read, t_read, "r.t_read");
		/* its own first read: not the Finished's alone */
		ASSERT_EQ(r->t_first_read,
			  c[k].want_us == 2000 ? t_read : t + 1020 * US,
			  "r.t_first_read");
	}
	ASSERT_EQ(n, ncases, "a request a connection");
	ASSERT_EQ(tt_analyzer_nrequests(a), 2 * ncases, "and a hello");
	free(apart);
	tt_analyzer_free(a);
}

/* HTTP/2 over TLS 1.3 (nginx's "listen ... ssl http2", Caddy): the server
 * sends its SETTINGS as soon as the handshake is done, with or without
 * tickets for the client's Finished, and the client's request comes when
 * it does (5 ms later here, a client that stalled), or with the Finished.
 * The SETTINGS answer no request: the request begins at its own arrival,
 * and the handshake's exchanges are counted apart. */
static void test_h2_tls_settings(void)
{
	static const struct {
		__u64 sk;
		bool tickets; /* OpenSSL's for the Finished (Go sends none) */
		bool together; /* the request came with the Finished */
	} c[] = {
		{ 0xa320, true, false },
		{ 0xa321, false, false },
		{ 0xa322, true, true },
	};
	const __u32 h2_plain = TT_SEND_F_TLS_PLAIN | TT_SEND_F_H2;
	const size_t ncases = sizeof(c) / sizeof(c[0]);
	size_t i, k, n = 0;
	__u64 t, t_req;
	__u32 seq;
	struct tt_analyzer *a;
	const struct tt_request *r;
	bool *apart = NULL;

	reset();
	for (k = 0; k < ncases; k++) {
		t = (2 + 20 * k) * MS;
		t_req = t + (c[k].together ? 1 : 5) * MS;
		seq = tls_hello(t, c[k].sk, "10.0.0.38", 38000 + k);
		sock_ev(TT_EV_DATA_READY, t + 1 * MS, c[k].sk, 0,
			c[k].together ? 364 : 64);
		recv_(t + 1020 * US, c[k].sk, c[k].together ? 364 : 64);
		if (c[k].tickets)
			seq = tls_send(t + 1100 * US, c[k].sk, seq,
				       TT_SEND_OTHER, 0, TT_SEND_F_TLS);
		seq = tls_send(t + 1150 * US, c[k].sk, seq, TT_SEND_OTHER, 0,
			       h2_plain);
		if (!c[k].together)
			request_in(t_req, t_req + 20 * US, c[k].sk, 300);
		/* its SETTINGS' ACK, then the response */
		seq = tls_send(t + 5050 * US, c[k].sk, seq, TT_SEND_OTHER, 0,
			       h2_plain);
		tls_answer(t + 6 * MS, c[k].sk, seq, h2_plain,
			   h2_plain | TT_SEND_F_SSE);
	}
	a = run();
	ASSERT_EQ(tt_analyzer_tls_apart(a, &apart), 0, "tls_apart");
	/* the handshakes apart, one request a connection (n below) */
	for (i = 0; apart && i < tt_analyzer_nrequests(a); i++) {
		if (apart[i])
			continue;
		r = req(a, i);
		k = r->sk - 0xa320;
		n++;
		t = (2 + 20 * k) * MS;
		t_req = t + (c[k].together ? 1 : 5) * MS;
		ASSERT_TRUE(r->complete && r->tls, "read, complete");
		ASSERT_EQ(r->t_arrive, t_req, "its own arrival");
		ASSERT_EQ(r->t_read, t_req + 20 * US, "r.t_read");
		ASSERT_EQ(r->tokens, 1, "r.tokens");
	}
	ASSERT_EQ(n, ncases, "a request a connection");
	free(apart);
	tt_analyzer_free(a);
}

/* Tickets the server sends as the request's bytes come (OpenSSL sends
 * two, the second after they came, before it read them) are the
 * handshake's: the second answers no bytes, and makes no exchange of the
 * request's arrival (before, a "no-read" twin apart sharing the request's
 * first time and connection: tests/test_bpf_tls.sh's threaded server, 1
 * run in 4 to 8). The live view counts the request once, as report does
 * (it names requests by their first time and connection: it saw 7 of 8
 * while the twin was made). */
static void test_tls_twins_live(void)
{
	struct tt_window_opts o = {};
	struct tt_live_totals t;
	struct tt_window *w;
	struct tt_analyzer *a;
	const struct tt_request *r;
	size_t i, twins = 0, apart = 0, read = 0;
	__u64 next = 0;
	__u32 seq = 1;

	reset();
	conn_open(1 * MS, 0xa310, "10.0.0.37", 37000);
	request_in(2 * MS, 2 * MS + 20 * US, 0xa310, 517);
	seq = tls_send(2 * MS + 50 * US, 0xa310, seq, TT_SEND_OTHER, 0,
		       TT_SEND_F_TLS);
	request_in(3 * MS, 3 * MS + 20 * US, 0xa310, 80);
	seq = tls_send(3090 * US, 0xa310, seq, TT_SEND_OTHER, 0,
		       TT_SEND_F_TLS);
	data_ready(3100 * US, 0xa310);
	seq = tls_send(3120 * US, 0xa310, seq, TT_SEND_OTHER, 0,
		       TT_SEND_F_TLS);
	recv_(3400 * US, 0xa310, 149);
	seq = tls_send(5 * MS, 0xa310, seq, TT_SEND_HEADERS, 0,
		       TT_SEND_F_TLS_PLAIN | TT_SEND_F_HEADERS |
			       TT_SEND_F_CHUNKED);
	seq = tls_send(6 * MS, 0xa310, seq, TT_SEND_TOKEN, 1, PLAIN_SSE);
	tls_send(7 * MS, 0xa310, seq, TT_SEND_DONE, 0,
		 PLAIN_SSE | TT_SEND_F_END);
	conn_close(9 * MS, 0xa310);
	a = run();
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		twins += r->t_arrive == 3100 * US;
		apart += !!(r->incomplete & TT_INC_TLS);
		read += r->complete && r->tls;
	}
	ASSERT_EQ(twins, 1, "the request alone at its arrival");
	ASSERT_EQ(apart, 2, "the hello's and the Finished's exchanges apart");
	ASSERT_EQ(read, 1, "the request read");
	tt_analyzer_free(a);
	w = tt_window_new(&o);
	ASSERT_OK_PTR(w, "w");
	if (!w)
		return;
	/* fed as recorded, refreshed a millisecond apart as top does */
	for (i = 0; i < L.n; i++) {
		ASSERT_EQ(tt_window_add(w, &L.v[i]), 0, "tt_window_add");
		if (L.v[i].h.ts < next)
			continue;
		next = L.v[i].h.ts + 1 * MS;
		ASSERT_EQ(tt_window_refresh(w, L.v[i].h.ts, false), 0,
			  "refresh");
	}
	ASSERT_EQ(tt_window_refresh(w, 10 * MS, true), 0, "refresh");
	tt_window_totals(w, &t);
	ASSERT_EQ(t.requests, read, "live requests");
	ASSERT_EQ(t.complete, read, "live complete");
	ASSERT_EQ(t.tls, apart, "live apart");
	tt_window_free(w);
}

/* Issue 13 item 4: the client's FIN is a half-close. */
static void test_half_close(void)
{
	struct tt_analyzer *a;
	struct tt_analyzer_stats st;
	const struct tt_request *r;
	__u32 seq = 1;

	reset();
	/* 0xa200: shutdown(SHUT_WR) right after the request, before the
	 * read; three tokens, then the server closes */
	conn_open(0, 0xa200, "10.0.0.32", 32000);
	data_ready(1 * MS, 0xa200);
	peer_fin(1 * MS + 50 * US, 0xa200, 300);
	recv_(2 * MS, 0xa200, 300);
	recv_(2 * MS + 10 * US, 0xa200, 0); /* EOF */
	seq = send_bytes(3 * MS, 0xa200, seq, UVICORN_SSE_HEADERS,
			 3 * MS + 5 * US);
	seq = send_bytes(4 * MS, 0xa200, seq, TOKEN_CHUNK, 4 * MS + 5 * US);
	seq = send_bytes(5 * MS, 0xa200, seq, TOKEN_CHUNK, 5 * MS + 5 * US);
	/* 0xa300: the FIN comes while the stream is going */
	conn_open(0, 0xa300, "10.0.0.33", 33000);
	data_ready(1 * MS, 0xa300);
	recv_(1 * MS + 30 * US, 0xa300, 300);
	seq = send_bytes(2 * MS, 0xa300, 1, UVICORN_SSE_HEADERS,
			 2 * MS + 5 * US);
	seq = send_bytes(3 * MS + 500 * US, 0xa300, seq, TOKEN_CHUNK,
			 3 * MS + 505 * US);
	peer_fin(5 * MS + 500 * US, 0xa300, 0);
	seq = send_bytes(6 * MS, 0xa300, seq, TOKEN_CHUNK, 6 * MS + 5 * US);
	seq = send_bytes(7 * MS, 0xa300, seq, DONE_CHUNK, 7 * MS + 5 * US);
	conn_close(8 * MS, 0xa300);
	/* 0xa200's last token and its end, then the server's close */
	seq = send_bytes(6 * MS + 200 * US, 0xa200, 1000, TOKEN_CHUNK,
			 6 * MS + 205 * US);
	send_bytes(7 * MS + 200 * US, 0xa200, seq, DONE_CHUNK,
		   7 * MS + 205 * US);
	conn_close(9 * MS, 0xa200);
	/* 0xa400: the client sent and closed before the server read; the
	 * server reads it, its headers go, the client's reset ends it */
	conn_open(0, 0xa400, "10.0.0.34", 34000);
	data_ready(1 * MS, 0xa400);
	peer_fin(1 * MS + 20 * US, 0xa400, 300);
	recv_(10 * MS, 0xa400, 300);
	seq = send_bytes(11 * MS, 0xa400, 1, UVICORN_SSE_HEADERS,
			 11 * MS + 5 * US);
	conn_close(11 * MS + 50 * US, 0xa400); /* the reset */
	send_cls(12 * MS, 12 * MS + 5 * US, 0xa400, seq, -32 /* EPIPE */,
		 TT_SEND_OTHER, 0, 0);
	/* 0xa500: the same, reset before the server could send anything */
	conn_open(0, 0xa500, "10.0.0.35", 35000);
	data_ready(1 * MS, 0xa500);
	peer_fin(1 * MS + 20 * US, 0xa500, 300);
	recv_(10 * MS, 0xa500, 300);
	conn_close(10 * MS + 50 * US, 0xa500);
	send_cls(11 * MS, 11 * MS + 5 * US, 0xa500, 1, -104 /* ECONNRESET */,
		 TT_SEND_OTHER, 0, 0);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 4, "tt_analyzer_nrequests(a)");
	r = req(a, 0); /* ids follow arrival; sk tells them apart */
	for (size_t i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = req(a, i);
		switch (r->sk) {
		case 0xa200:
			ASSERT_EQ(r->t_arrive, 1 * MS, "r.t_arrive");
			ASSERT_EQ(r->t_read, 2 * MS, "r.t_read");
			ASSERT_EQ(r->tokens, 3, "r.tokens");
			ASSERT_EQ(r->ttft, 3 * MS + 5 * US, "r.ttft");
			ASSERT_TRUE(r->complete, "r.complete");
			break;
		case 0xa300:
			ASSERT_EQ(r->tokens, 2, "r.tokens");
			ASSERT_EQ(r->t_end, 7 * MS + 20 * US, "r.t_end");
			ASSERT_TRUE(r->complete, "r.complete");
			break;
		case 0xa400:
			ASSERT_EQ(r->t_read, 10 * MS, "r.t_read");
			ASSERT_EQ(r->status, 200, "r.status");
			ASSERT_TRUE(!r->complete, "!r.complete");
			/* headers went, no token: cut by the reset */
			ASSERT_EQ(r->incomplete, TT_INC_CLOSED_MID_STREAM |
						TT_INC_NO_RESPONSE, "r.incomplete");
			break;
		case 0xa500:
			ASSERT_TRUE(!r->complete, "!r.complete");
			ASSERT_EQ(r->incomplete, TT_INC_NO_RESPONSE, "r.incomplete");
			break;
		default:
			ASSERT_TRUE(!"a request of no known connection", "!'a request of no known connection'");
		}
	}
	tt_analyzer_stats(a, &st);
	ASSERT_EQ(st.orphans, 2, "st.orphans"); /* the failed sends after resets */
	tt_analyzer_free(a);
}

/* Issue 13 item 5: two requests in one segment, three times. No request
 * bytes are captured, so the second status line (or a read with no
 * arrival since the last response) is the evidence of the second one. */
static void test_pipelined(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u64 t = 10 * MS;
	__u32 seq = 1;
	unsigned int i, k;

	reset();
	/* 0xa600: one read of both; two streams, one after the other */
	conn_open(0, 0xa600, "10.0.0.36", 36000);
	for (i = 0; i < 3; i++, t += 20 * MS) {
		data_ready(t, 0xa600);
		recv_(t + 50 * US, 0xa600, 600);
		for (k = 0; k < 2; k++) {
			__u64 u = t + 1 * MS + k * 5 * MS;

			seq = send_bytes(u, 0xa600, seq, UVICORN_SSE_HEADERS,
					 u + 5 * US);
			seq = send_bytes(u + 1 * MS, 0xa600, seq, TOKEN_CHUNK,
					 u + 1 * MS + 5 * US);
			seq = send_bytes(u + 2 * MS, 0xa600, seq, DONE_CHUNK,
					 u + 2 * MS + 5 * US);
			seq = send_bytes(u + 2 * MS + 100 * US, 0xa600, seq,
					 LAST_CHUNK, u + 2 * MS + 105 * US);
		}
	}
	/* 0xa700: non-streaming answers, one per read of its own */
	conn_open(0, 0xa700, "10.0.0.37", 37000);
	data_ready(100 * MS, 0xa700);
	recv_(100 * MS + 50 * US, 0xa700, 300);
	seq = send_bytes(101 * MS, 0xa700, 1, ERROR_429, 101 * MS + 5 * US);
	recv_(102 * MS, 0xa700, 300);
	send_bytes(103 * MS, 0xa700, seq, ERROR_429, 103 * MS + 5 * US);
	conn_close(110 * MS, 0xa700);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 8, "tt_analyzer_nrequests(a)");
	for (i = 0; i < 6; i++) {
		r = req(a, i);
		ASSERT_EQ(r->sk, 0xa600, "r.sk");
		ASSERT_EQ(r->tokens, 1, "r.tokens");
		ASSERT_EQ(r->status, 200, "r.status");
		if (i % 2 == 0) {
			ASSERT_TRUE(r->complete, "r.complete");
			ASSERT_EQ(r->ttft, 2 * MS + 5 * US, "r.ttft");
		} else {
			ASSERT_TRUE(!r->complete, "!r.complete");
			ASSERT_EQ(r->incomplete, TT_INC_PIPELINED, "r.incomplete");
			ASSERT_EQ(r->t_arrive, 0, "r.t_arrive");
			ASSERT_EQ(r->ttft, 0, "r.ttft");
		}
	}
	r = req(a, 6);
	ASSERT_EQ(r->sk, 0xa700, "r.sk");
	ASSERT_EQ(r->incomplete, TT_INC_ERROR, "r.incomplete");
	r = req(a, 7);
	ASSERT_EQ(r->t_read, 102 * MS, "r.t_read");
	ASSERT_EQ(r->incomplete, TT_INC_ERROR | TT_INC_PIPELINED, "r.incomplete");
	tt_analyzer_free(a);
}

/* A send classified with the connection's carry, on the wire in 5 us. */
static __u32 send_carried(__u64 ts_enter, __u64 sk, __u32 seq, const char *b,
			  struct tt_sse_carry *carry)
{
	return send_bytes_carry(ts_enter, sk, seq, b, ts_enter + 5 * US, carry);
}

/* Issue 13 item 11: a "data:" keyword cut by the end of a send. */
static void test_split_data_keyword(void)
{
	struct tt_sse_carry carry = { 0 }, none = { 0 };
	struct tt_analyzer *a;
	__u32 seq = 1;

	reset();
	conn_open(0, 0xa800, "10.0.0.38", 38000);
	data_ready(1 * MS, 0xa800);
	recv_(1 * MS + 50 * US, 0xa800, 300);
	seq = send_carried(2 * MS, 0xa800, seq,
			   "HTTP/1.1 200 OK\r\n"
			   "content-type: text/event-stream\r\n\r\n",
			   &carry);
	seq = send_carried(3 * MS, 0xa800, seq, "da", &carry);
	seq = send_carried(3 * MS + 10 * US, 0xa800, seq,
			   "ta: {\"t\":\"a\"}\n\nd", &carry);
	seq = send_carried(4 * MS, 0xa800, seq, "ata: {\"t\":\"b\"}\n\ndata",
			   &carry);
	seq = send_carried(5 * MS, 0xa800, seq, ": [DONE]\n\n", &carry);
	/* the same bytes judged send by send, with no carry: no token is
	 * recognized, and the request must not pass as complete */
	conn_open(0, 0xa900, "10.0.0.39", 39000);
	data_ready(1 * MS, 0xa900);
	recv_(1 * MS + 50 * US, 0xa900, 300);
	seq = send_carried(2 * MS, 0xa900, 1,
			   "HTTP/1.1 200 OK\r\n"
			   "content-type: text/event-stream\r\n\r\n",
			   &none);
	seq = send_carried(3 * MS, 0xa900, seq, "da", &none);
	none.n = 0;
	seq = send_carried(3 * MS + 10 * US, 0xa900, seq,
			   "ta: {\"t\":\"a\"}\n\n", &none);
	conn_close(6 * MS, 0xa900);
	a = run();

	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests(a)");
	for (size_t i = 0; i < tt_analyzer_nrequests(a); i++) {
		const struct tt_request *r = req(a, i);

		if (r->sk == 0xa800) {
			ASSERT_EQ(r->tokens, 2, "r.tokens");
			ASSERT_EQ(r->t_first_write, 3 * MS + 10 * US, "r.t_first_write");
			ASSERT_EQ(r->t_end, 5 * MS + 20 * US, "r.t_end");
			ASSERT_TRUE(r->complete, "r.complete");
		} else {
			ASSERT_EQ(r->tokens, 0, "r.tokens");
			ASSERT_TRUE(!r->complete, "!r.complete");
			ASSERT_TRUE(r->incomplete & TT_INC_NO_TOKEN, "r.incomplete & TT_INC_NO_TOKEN");
		}
	}
	tt_analyzer_free(a);
}

static void test_interim_continue(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u32 seq = 1;

	reset();
	conn_open(0, 0xd000, "10.0.0.13", 6666);
	/* headers, Expect: 100 */
	request_in(1 * MS, 1 * MS + 10 * US, 0xd000, 180);
	seq = send_bytes(2 * MS, 0xd000, seq, "HTTP/1.1 100 Continue\r\n\r\n",
			 2 * MS + 1 * US);
	data_ready(3 * MS, 0xd000); /* the body */
	recv_(3 * MS + 10 * US, 0xd000, 2000);
	seq = send_bytes(4 * MS, 0xd000, seq, UVICORN_SSE_HEADERS,
			 4 * MS + 1 * US);
	seq = send_bytes(5 * MS, 0xd000, seq, TOKEN_CHUNK, 5 * MS + 1 * US);
	seq = send_bytes(6 * MS, 0xd000, seq, DONE_CHUNK, 6 * MS + 1 * US);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_EQ(r->t_arrive, 1 * MS, "r.t_arrive");
	ASSERT_EQ(r->t_read, 3 * MS + 10 * US, "r.t_read");
	ASSERT_EQ(r->bytes_in, 2180, "r.bytes_in");
	ASSERT_EQ(r->t_headers, 4 * MS, "r.t_headers");
	ASSERT_EQ(r->ttft, 4 * MS + 1 * US, "r.ttft");
	ASSERT_TRUE(r->complete, "r.complete");
	tt_analyzer_free(a);
}

static void test_socket_reuse_and_orphans(void)
{
	struct tt_analyzer *a;
	struct tt_analyzer_stats st;
	__u32 seq = 1;

	reset();
	conn_open(0, 0xe000, "10.0.0.14", 7001);
	sse_request(0xe000, 1 * MS, &seq, 2 * MS, 2, 1 * MS);
	/* re-announced (the BPF side's LRU forgot it): nothing changes */
	conn_open(4 * MS + 500 * US, 0xe000, "10.0.0.14", 7001);
	conn_close(10 * MS, 0xe000);
	data_ready(10 * MS + 1 * US, 0xe000); /* FIN after the close */
	/* the same socket address, a new connection */
	conn_open(20 * MS, 0xe000, "10.0.0.15", 7002);
	sse_request(0xe000, 21 * MS, &seq, 2 * MS, 3, 1 * MS);
	/* an unknown socket */
	data_ready(30 * MS, 0xf000);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->rport, 7001, "req.rport");
	ASSERT_EQ(req(a, 0)->tokens, 2, "req.tokens");
	ASSERT_TRUE(req(a, 0)->complete, "req.complete");
	ASSERT_EQ(req(a, 1)->rport, 7002, "req.rport");
	ASSERT_EQ(req(a, 1)->tokens, 3, "req.tokens");
	ASSERT_TRUE(req(a, 1)->complete, "req.complete");
	tt_analyzer_stats(a, &st);
	ASSERT_EQ(st.conns, 2, "st.conns");
	ASSERT_EQ(st.orphans, 2, "st.orphans");
	ASSERT_EQ(st.stray_sends, 2,
		  "st.stray_sends"); /* the last chunks after [DONE] */
	tt_analyzer_free(a);
}

static void test_open_at_end_and_comm(void)
{
	struct tt_analyzer *a;
	struct tt_event ev;
	__u32 seq = 1;

	reset();
	ev = mk(TT_EV_FORK, 0, 1);
	ev.fork.child_tgid = SERVER_TGID;
	ev.fork.child_tid = WRITER_TID;
	strcpy(ev.fork.comm, "python3");
	push(&ev);
	ev = mk(TT_EV_COMM, 1, WRITER_TID);
	strcpy(ev.comm.comm, "uvicorn-writer");
	push(&ev);
	conn_open(0, 0xe100, "10.0.0.16", 7003);
	request_in(1 * MS, 1 * MS + 10 * US, 0xe100, 10);
	seq = send_bytes(2 * MS, 0xe100, seq, UVICORN_SSE_HEADERS,
			 2 * MS + 1 * US);
	seq = send_bytes(3 * MS, 0xe100, seq, TOKEN_CHUNK, 3 * MS + 1 * US);
	/* another connection only got its request: no response yet */
	conn_open(0, 0xe200, "10.0.0.17", 7004);
	request_in(4 * MS, 4 * MS + 10 * US, 0xe200, 10);
	/* and a third only woke up (no read): no request at all */
	conn_open(0, 0xe300, "10.0.0.18", 7005);
	data_ready(4 * MS, 0xe300);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 2, "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->incomplete, TT_INC_OPEN_AT_END, "req.incomplete");
	ASSERT_EQ(req(a, 0)->ttft, 2 * MS + 1 * US, "req.ttft");
	ASSERT_EQ(req(a, 1)->incomplete,
		  TT_INC_OPEN_AT_END | TT_INC_NO_RESPONSE, "req.incomplete");
	ASSERT_TRUE(tt_analyzer_comm(a, WRITER_TID) &&
			    !strcmp(tt_analyzer_comm(a, WRITER_TID),
				    "uvicorn-writer"),
		    "tt_analyzer_comm");
	ASSERT_NULL(tt_analyzer_comm(a, 999), "tt_analyzer_comm");
	ASSERT_NEQ(tt_analyzer_add(a, &ev), 0,
		   "tt_analyzer_add"); /* finished */
	tt_analyzer_free(a);
}

/* ---- the critical path ---- */

#define HANDOFF_WORD 0x7f00001000ULL /* reader -> engine */
#define TOKEN_WORD 0x7f00002000ULL /* engine -> writer */
#define ONE_SEND_ANSWER \
	"HTTP/1.1 200 OK\r\n\r\ndata: {\"t\":1}\n\ndata: [DONE]\n\n"

static struct blk futex_on(__u64 word)
{
	return (struct blk){ .sys = NR_FUTEX, .arg0 = word };
}

/*
 * Three threads of one server: the reader sleeps in epoll until the
 * request's bytes wake it (softirq, 20 us after they arrive), waits 30 us
 * for a CPU, reads at +100 us and hands the request to the engine with a
 * futex wake at +120 us. The engine gets a CPU at +150 us and works until
 * +5150 us (gpu_at: from +1150 us to gpu_at it waits in an ioctl on the
 * GPU, woken by the interrupt, back on a CPU 20 us later), then wakes the
 * writer, which runs at +5180 us and sends the first token at +5200 us,
 * on the wire at +5205 us. Returns t0.
 */
static __u64 handoff_stream(__u64 gpu_at)
{
	const __u64 t0 = 10 * MS;
	const __u64 sk = 0xc100;

	reset_bare();
	sw_in(0, READER_TID);
	sw_in(0, ENGINE_TID);
	sw_in(0, WRITER_TID);
	sw_out(1 * MS, ENGINE_TID, futex_on(HANDOFF_WORD));
	sw_out(1 * MS, WRITER_TID, futex_on(TOKEN_WORD));
	sw_out(2 * MS, READER_TID, (struct blk){ .sys = NR_EPOLL_WAIT });
	conn_open(0, sk, "10.0.0.50", 50000);
	data_ready(t0, sk);
	wake(t0 + 20 * US, CLIENT_TID, READER_TID, TT_F_SOFTIRQ, -1, 0);
	sw_in(t0 + 50 * US, READER_TID);
	recv_(t0 + 100 * US, sk, 300);
	wake(t0 + 120 * US, READER_TID, ENGINE_TID, 0, NR_FUTEX, HANDOFF_WORD);
	sw_in(t0 + 150 * US, ENGINE_TID);
	sw_out(t0 + 200 * US, READER_TID, (struct blk){ .sys = NR_EPOLL_WAIT });
	if (gpu_at) {
		sw_out(t0 + 1150 * US, ENGINE_TID,
		       (struct blk){ .sys = NR_IOCTL,
				     .arg0 = 7,
				     .mode = S_IFCHR,
				     .rdev = GPU_RDEV });
		wake(t0 + gpu_at, CLIENT_TID, ENGINE_TID, TT_F_HARDIRQ, -1, 0);
		sw_in(t0 + gpu_at + 20 * US, ENGINE_TID);
	}
	wake(t0 + 5150 * US, ENGINE_TID, WRITER_TID, 0, NR_FUTEX, TOKEN_WORD);
	sw_out(t0 + 5200 * US, ENGINE_TID, futex_on(HANDOFF_WORD));
	sw_in(t0 + 5180 * US, WRITER_TID);
	send_bytes(t0 + 5200 * US, sk, 1, ONE_SEND_ANSWER, t0 + 5205 * US);
	sw_out(t0 + 5300 * US, WRITER_TID, futex_on(TOKEN_WORD));
	conn_close(t0 + 6 * MS, sk);
	return t0;
}

static void check_seg(const struct tt_cp_result *res, size_t k, __u64 start,
		      __u64 end, __u32 tid, unsigned int state,
		      unsigned int stage)
{
	ASSERT_LT(k, res->nsegs, "k");
	if (k >= res->nsegs)
		return;
	ASSERT_EQ(res->segs[k].start, start, "segs[k].start");
	ASSERT_EQ(res->segs[k].start + res->segs[k].dur, end, "segs[k].dur");
	ASSERT_EQ(res->segs[k].tid, tid, "segs[k].tid");
	ASSERT_EQ(res->segs[k].state, state, "segs[k].state");
	ASSERT_EQ(res->segs[k].stage, stage, "segs[k].stage");
}

static void test_critical_path_handoff(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	const struct tt_cp_result *res;
	__u64 t0 = handoff_stream(0), want[TT_ST_MAX] = { 0 };
	unsigned int seed;

	want[TT_ST_NET_IN] = 70 * US;
	want[TT_ST_RUNQUEUE] = 90 * US; /* reader, engine, writer: 30 each */
	/* the reader's 20 us from its read to the hand-off are its own
	 * work: the idle engine picks the request up at once, no queue */
	want[TT_ST_CPU] = 5040 * US; /* reader 20 us, engine 5 ms, writer */
	want[TT_ST_NET_OUT] = 5 * US;
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	ASSERT_TRUE(r->complete && r->attributed,
		    "r->complete && r->attributed");
	ASSERT_EQ(r->incomplete, 0, "r.incomplete");
	ASSERT_EQ(r->ttft, 5205 * US, "r.ttft");
	ASSERT_EQ(r->reader_tid, READER_TID, "r.reader_tid");
	ASSERT_EQ(r->writer_tid, WRITER_TID, "r.writer_tid");
	ASSERT_FALSE(memcmp(r->stage_ns, want, sizeof(want)), "memcmp");
	/* taken up when the engine first ran after the wake */
	ASSERT_EQ(r->t_dispatch, t0 + 150 * US, "r.t_dispatch");
	ASSERT_EQ(r->dispatch_rule, TT_CP_DISP_PICKUP, "r.dispatch_rule");
	ASSERT_EQ(r->t_token, t0 + 5150 * US, "r.t_token");
	res = tt_analyzer_cp_result(a, 0);
	ASSERT_TRUE(res && res->nsegs == 9, "res && res->nsegs == 9");
	if (res && res->nsegs == 9) {
		check_seg(res, 0, t0, t0 + 20 * US, READER_TID, TT_CP_PHASE,
			  TT_ST_NET_IN);
		check_seg(res, 1, t0 + 20 * US, t0 + 50 * US, READER_TID,
			  TT_CP_RUNNABLE, TT_ST_RUNQUEUE);
		check_seg(res, 2, t0 + 50 * US, t0 + 100 * US, READER_TID,
			  TT_CP_PHASE, TT_ST_NET_IN);
		check_seg(res, 3, t0 + 100 * US, t0 + 120 * US, READER_TID,
			  TT_CP_RUNNING, TT_ST_CPU);
		check_seg(res, 4, t0 + 120 * US, t0 + 150 * US, ENGINE_TID,
			  TT_CP_RUNNABLE, TT_ST_RUNQUEUE);
		check_seg(res, 5, t0 + 150 * US, t0 + 5150 * US, ENGINE_TID,
			  TT_CP_RUNNING, TT_ST_CPU);
		check_seg(res, 6, t0 + 5150 * US, t0 + 5180 * US, WRITER_TID,
			  TT_CP_RUNNABLE, TT_ST_RUNQUEUE);
		check_seg(res, 7, t0 + 5180 * US, t0 + 5200 * US, WRITER_TID,
			  TT_CP_RUNNING, TT_ST_CPU);
		check_seg(res, 8, t0 + 5200 * US, t0 + 5205 * US, WRITER_TID,
			  TT_CP_PHASE, TT_ST_NET_OUT);
		ASSERT_STREQ(res->segs[5].reason, "on-cpu", "segs[5].reason");
	}
	tt_analyzer_free(a);

	/* the ring buffer's reordering changes nothing */
	for (seed = 1; seed <= 3; seed++) {
		handoff_stream(0);
		a = run_jittered(2 * MS, seed);
		ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
		ASSERT_TRUE(req(a, 0)->complete, "req.complete");
		ASSERT_FALSE(memcmp(req(a, 0)->stage_ns, want, sizeof(want)),
			     "memcmp");
		ASSERT_EQ(req(a, 0)->t_dispatch, t0 + 150 * US,
			  "req.t_dispatch");
		tt_analyzer_free(a);
	}
}

/* A mutex the engine both waits on and wakes: a lock (§4.3's shared rule) */
#define MUTEX_WORD 0x7f00003000ULL

/*
 * n requests in handoff_stream()'s shape, one after the other on one
 * keep-alive connection, gap apart, a pause of 11 s after every 37th (past
 * the streaming walk's wait); on its way the engine waits on a pipe the
 * reader writes to, then on a mutex the reader's write (not a futex call)
 * releases: that wake is a lock's by the engine's block alone. The
 * connection closes at the end.
 */
static void handoff_requests(size_t n, __u64 gap)
{
	const __u64 sk = 0xc200;
	__u64 t0 = 10 * MS;
	__u32 seq = 1;
	size_t i;

	reset_bare();
	sw_in(0, READER_TID);
	sw_in(0, ENGINE_TID);
	sw_in(0, WRITER_TID);
	wake(500 * US, ENGINE_TID, WRITER_TID, 0, NR_FUTEX, MUTEX_WORD);
	sw_out(1 * MS, ENGINE_TID, futex_on(HANDOFF_WORD));
	sw_out(1 * MS, WRITER_TID, futex_on(TOKEN_WORD));
	sw_out(2 * MS, READER_TID, (struct blk){ .sys = NR_EPOLL_WAIT });
	conn_open(0, sk, "10.0.0.51", 50001);
	for (i = 0; i < n; i++, t0 += gap + (i % 37 ? 0 : 11000 * MS)) {
		data_ready(t0, sk);
		wake(t0 + 20 * US, CLIENT_TID, READER_TID, TT_F_SOFTIRQ, -1, 0);
		sw_in(t0 + 50 * US, READER_TID);
		recv_(t0 + 100 * US, sk, 300);
		wake(t0 + 120 * US, READER_TID, ENGINE_TID, 0, NR_FUTEX,
		     HANDOFF_WORD);
		sw_in(t0 + 150 * US, ENGINE_TID);
		sw_out(t0 + 200 * US, READER_TID,
		       (struct blk){ .sys = NR_EPOLL_WAIT });
		/* waits on a pipe the reader wakes, then preempted */
		sw_out(t0 + (1000 + i % 7 * 100) * US, ENGINE_TID,
		       (struct blk){ .sys = 0, .arg0 = 5, .mode = S_IFIFO });
		wake(t0 + 1900 * US, READER_TID, ENGINE_TID, 0, 1, 5);
		sw_in(t0 + 1950 * US, ENGINE_TID);
		sw_out(t0 + 2000 * US, ENGINE_TID, futex_on(MUTEX_WORD));
		wake(t0 + 2100 * US, READER_TID, ENGINE_TID, 0, 1, 6);
		sw_in(t0 + 2150 * US, ENGINE_TID);
		wake(t0 + 5150 * US, ENGINE_TID, WRITER_TID, 0, NR_FUTEX,
		     TOKEN_WORD);
		sw_out(t0 + 5200 * US, ENGINE_TID, futex_on(HANDOFF_WORD));
		sw_in(t0 + 5180 * US, WRITER_TID);
		seq = send_bytes(t0 + 5200 * US, sk, seq, ONE_SEND_ANSWER,
				 t0 + 5205 * US);
		sw_out(t0 + 5300 * US, WRITER_TID, futex_on(TOKEN_WORD));
	}
	conn_close(t0 + 6 * MS, sk);
}


static __u64 held_max(const struct tt_analyzer *a)
{
	struct tt_critpath_stats st;

	tt_critpath_stats(tt_analyzer_critpath(a), &st);
	return st.held_max;
}

/* Streaming walks each request 10 s after its end and keeps of the
 * timelines only what the requests left can reach: as many requests again
 * hold no more records, far fewer than the whole recording's. */
static void test_stream_memory_bounded(void)
{
	struct tt_analyzer *a;
	struct tt_critpath_stats st;
	__u64 held[2];
	size_t k;

	for (k = 0; k < 2; k++) {
		handoff_requests(300 << k, 300 * MS);
		a = run_listed(64);
		ASSERT_EQ(tt_analyzer_nrequests(a), 300u << k,
			  "tt_analyzer_nrequests");
		ASSERT_TRUE(req(a, 0)->complete &&
				    req(a, (300 << k) - 1)->complete,
			    "first and last complete");
		held[k] = held_max(a);
		tt_critpath_stats(tt_analyzer_critpath(a), &st);
		/* the requests of 10 s (33) and a step's growth, up to as
		 * many again: never all of them */
		ASSERT_LT(held[k], st.intervals / (300 << k) * 80, "held_max");
		ASSERT_LT(held[k] * 5, st.intervals, "held_max * 5");
		tt_analyzer_free(a);
	}
	ASSERT_LE(held[1], held[0] + 30, "held_max(600) <= held_max(300)");
	/* without streaming every record stays to the end */
	a = run();
	tt_critpath_stats(tt_analyzer_critpath(a), &st);
	ASSERT_EQ(st.held, st.intervals, "st.held");
	ASSERT_EQ(st.held_max, st.intervals, "st.held_max");
	tt_analyzer_free(a);
}

/* Every request's walk, streamed, is the whole recording's: stages,
 * segments, dispatch and enqueue, whatever the step's size. */
static void test_stream_same_results(void)
{
	static const size_t every[] = { 1, 64, 5000 };
	const struct tt_cp_result *x, *y;
	const struct tt_request *p, *q;
	struct tt_analyzer *whole, *a;
	size_t i, k, same;

	handoff_requests(120, 150 * MS);
	whole = run();
	for (k = 0; k < sizeof(every) / sizeof(every[0]); k++) {
		a = run_listed(every[k]);
		ASSERT_EQ(tt_analyzer_nrequests(a),
			  tt_analyzer_nrequests(whole),
			  "tt_analyzer_nrequests");
		same = 0;
		for (i = 0; i < tt_analyzer_nrequests(a) &&
			    i < tt_analyzer_nrequests(whole);
		     i++) {
			p = req(a, i);
			q = req(whole, i);
			x = tt_analyzer_cp_result(a, i);
			y = tt_analyzer_cp_result(whole, i);
			same += req_equal(p, q) && p->attributed &&
				q->attributed &&
				!memcmp(p->stage_ns, q->stage_ns,
					sizeof(p->stage_ns)) &&
				p->t_dispatch == q->t_dispatch &&
				p->t_enqueue == q->t_enqueue &&
				p->t_token == q->t_token &&
				p->dispatch_rule == q->dispatch_rule &&
				p->enqueue_rule == q->enqueue_rule &&
				x->nsegs == y->nsegs && x->nsegs &&
				!memcmp(x->segs, y->segs,
					x->nsegs * sizeof(*x->segs));
		}
		ASSERT_EQ(same, 120, "requests the same streamed");
		tt_analyzer_free(a);
	}
	tt_analyzer_free(whole);
}

static void test_gpu_device_table(void)
{
	const struct tt_dev_info gpu = { .path = "/dev/nvidia0",
					 .rdev = GPU_RDEV };
	const struct tt_dev_info none = { .path = "/dev/null0" };
	struct tt_analyzer *a;
	const struct tt_request *r;
	__u64 want[TT_ST_MAX] = { 0 };

	/* 3 ms waiting on the GPU between 1 ms and ~1 ms of engine CPU */
	want[TT_ST_NET_IN] = 70 * US;
	want[TT_ST_RUNQUEUE] = 110 * US;
	want[TT_ST_GPU] = 3000 * US;
	want[TT_ST_CPU] = (20 + 1000 + 980 + 20) * US;
	want[TT_ST_NET_OUT] = 5 * US;
	handoff_stream(4150 * US);
	a = run_tables(NULL, 0, &gpu, 1);
	r = req(a, 0);
	ASSERT_TRUE(r->complete && r->attributed,
		    "r->complete && r->attributed");
	ASSERT_FALSE(memcmp(r->stage_ns, want, sizeof(want)), "memcmp");
	tt_analyzer_free(a);

	/* a device nobody said is a GPU: the same wait is unexplained */
	want[TT_ST_UNKNOWN] = want[TT_ST_GPU];
	want[TT_ST_GPU] = 0;
	handoff_stream(4150 * US);
	a = run_tables(NULL, 0, &none, 1);
	r = req(a, 0);
	ASSERT_TRUE(r->complete && r->attributed,
		    "r->complete && r->attributed");
	ASSERT_FALSE(memcmp(r->stage_ns, want, sizeof(want)), "memcmp");
	tt_analyzer_free(a);
}

static void test_no_scheduler_events(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	char buf[64];
	__u32 seq = 1;
	size_t n;

	reset_bare();
	conn_open(0, 0xc200, "10.0.0.51", 50001);
	sse_request(0xc200, 10 * MS, &seq, 3 * MS, 3, 1 * MS);
	a = run();
	ASSERT_EQ(tt_analyzer_nrequests(a), 1, "tt_analyzer_nrequests");
	r = req(a, 0);
	/* the socket side is whole, the path is not: kept out */
	ASSERT_TRUE(!r->complete && !r->attributed,
		    "!r->complete && !r->attributed");
	ASSERT_EQ(r->incomplete, TT_INC_NO_PATH, "r.incomplete");
	ASSERT_STREQ(tt_incomplete_str(r->incomplete, buf, sizeof(buf)),
		     "no-path", "tt_incomplete_str");
	ASSERT_EQ(r->ttft, 3 * MS + 5 * US, "r.ttft");
	ASSERT_EQ(r->stage_ns[TT_ST_NET_IN], 100 * US,
		  "r.stage_ns[TT_ST_NET_IN]");
	ASSERT_EQ(r->stage_ns[TT_ST_UNKNOWN], 2900 * US,
		  "r.stage_ns[TT_ST_UNKNOWN]");
	ASSERT_EQ(r->stage_ns[TT_ST_NET_OUT], 5 * US,
		  "r.stage_ns[TT_ST_NET_OUT]");
	ASSERT_EQ(r->t_dispatch, r->t_read, "r.t_dispatch");
	ASSERT_EQ(r->dispatch_rule, TT_CP_DISP_READ, "r.dispatch_rule");
	tt_analyzer_itl(a, &n);
	ASSERT_EQ(n, 0, "n"); /* an incomplete request's gaps stay out */
	tt_analyzer_free(a);
}

static void test_path_meets_unknown_thread(void)
{
	struct tt_analyzer *a;
	const struct tt_request *r;
	const struct tt_cp_result *res;
	const __u64 t0 = 10 * MS;
	size_t k;
	bool seen = false;

	/* the writer is woken by an engine thread never seen switching */
	reset();
	sw_out(1 * MS, WRITER_TID, futex_on(TOKEN_WORD));
	conn_open(0, 0xc300, "10.0.0.52", 50002);
	request_in(t0, t0 + 100 * US, 0xc300, 300);
	wake(t0 + 3 * MS, ENGINE_TID, WRITER_TID, 0, NR_FUTEX, TOKEN_WORD);
	sw_in(t0 + 3 * MS + 10 * US, WRITER_TID);
	send_bytes(t0 + 3 * MS + 20 * US, 0xc300, 1, ONE_SEND_ANSWER,
		   t0 + 3 * MS + 25 * US);
	a = run();
	r = req(a, 0);
	ASSERT_TRUE(!r->complete && !r->attributed,
		    "!r->complete && !r->attributed");
	ASSERT_EQ(r->incomplete, TT_INC_NO_PATH, "r.incomplete");
	ASSERT_EQ(r->stage_ns[TT_ST_UNKNOWN], 2900 * US,
		  "r.stage_ns[TT_ST_UNKNOWN]");
	res = tt_analyzer_cp_result(a, 0);
	for (k = 0; res && k < res->nsegs; k++)
		if (res->segs[k].tid == ENGINE_TID &&
		    res->segs[k].state == TT_CP_NODATA)
			seen = true;
	ASSERT_TRUE(seen, "seen");
	ASSERT_TRUE(res && (res->incomplete & TT_CP_INC_NO_DATA),
		    "res && (res->incomplete & TT_CP_INC_N...");
	tt_analyzer_free(a);
}

static void test_process_table(void)
{
	const struct tt_proc_info procs[] = {
		{ .tgid = SERVER_TGID, .tid = ENGINE_TID, .comm = "engine" },
		{ .tgid = 5000, .tid = 5001, .comm = "tokenizer" },
	};
	const struct tt_critpath *cp;
	struct tt_analyzer *a;
	struct tt_event ev;
	const __u64 t0 = 10 * MS;
	int with;

	/* thread 5002 of process 5000 wakes the writer: traced only
	 * through the process table, and then the path goes there */
	for (with = 0; with < 2; with++) {
		reset();
		sw_out(1 * MS, WRITER_TID, futex_on(TOKEN_WORD));
		ev = mk(TT_EV_COMM, 2 * MS, WRITER_TID);
		strcpy(ev.comm.comm, "writer");
		push(&ev);
		conn_open(0, 0xc400, "10.0.0.53", 50003);
		request_in(t0, t0 + 100 * US, 0xc400, 300);
		ev = mk(TT_EV_WAKING, t0 + 3 * MS, 5002);
		ev.h.tgid = 5000;
		ev.wake.target_tid = WRITER_TID;
		ev.wake.target_tgid = SERVER_TGID;
		ev.wake.waker_syscall = NR_FUTEX;
		ev.wake.waker_arg0 = TOKEN_WORD;
		push(&ev);
		sw_in(t0 + 3 * MS + 10 * US, WRITER_TID);
		send_bytes(t0 + 3 * MS + 20 * US, 0xc400, 1, ONE_SEND_ANSWER,
			   t0 + 3 * MS + 25 * US);
		a = run_tables(procs, with ? 2 : 0, NULL, 0);
		cp = tt_analyzer_critpath(a);
		ASSERT_OK_PTR(cp, "cp");
		if (with) {
			ASSERT_TRUE(
				tt_analyzer_comm(a, ENGINE_TID) &&
					!strcmp(tt_analyzer_comm(a, ENGINE_TID),
						"engine"),
				"tt_analyzer_comm");
			ASSERT_TRUE(tt_critpath_comm(cp, 5001) &&
					    !strcmp(tt_critpath_comm(cp, 5001),
						    "tokenizer"),
				    "tt_critpath_comm");
			/* followed to 5002, of which nothing is known */
			ASSERT_EQ(req(a, 0)->incomplete, TT_INC_NO_PATH,
				  "req.incomplete");
		} else {
			ASSERT_NULL(tt_analyzer_comm(a, ENGINE_TID),
				    "tt_analyzer_comm");
			ASSERT_NULL(tt_critpath_comm(cp, 5001),
				    "tt_critpath_comm");
			/* an untraced waker: the wait is the writer's own */
			ASSERT_TRUE(req(a, 0)->complete, "req.complete");
			ASSERT_EQ(req(a, 0)->stage_ns[TT_ST_LOCK], 2900 * US,
				  "req.stage_ns[TT_ST_LOCK]");
		}
		ASSERT_TRUE(tt_critpath_comm(cp, WRITER_TID) &&
				    !strcmp(tt_critpath_comm(cp, WRITER_TID),
					    "writer"),
			    "tt_critpath_comm");
		tt_analyzer_free(a);
	}
}

/* check_paths() ran on the analyses above, on walked and complete ones */
static void test_invariants_were_checked(void)
{
	printf("INFO: closure checked on %zu walked requests, %zu complete\n",
	       paths_checked, complete_checked);
	ASSERT_TRUE(paths_checked > 1000 && complete_checked > 1000,
		    "paths_checked > 1000 && complete_chec...");
}

static void test_incomplete_str(void)
{
	char buf[128];

	ASSERT_STREQ(tt_incomplete_str(0, buf, sizeof(buf)), "complete",
		     "tt_incomplete_str");
	ASSERT_STREQ(tt_incomplete_str(TT_INC_NO_WIRE | TT_INC_LOST, buf,
				       sizeof(buf)),
		     "no-wire,lost", "tt_incomplete_str");
	ASSERT_STREQ(tt_incomplete_str(TT_INC_LOST | TT_INC_NO_PATH, buf,
				       sizeof(buf)),
		     "lost,no-path", "tt_incomplete_str");
	tt_incomplete_str(0xff, buf, 12); /* cut short, still a string */
	ASSERT_LT(strlen(buf), 12, "strlen");
}

/* ~2M events: 200 keep-alive connections streaming 32 tokens each. */
static void test_throughput(void)
{
	enum { NC = 200, NTOK = 32, STEPS = 4 + 2 * NTOK + 2 };
	struct tt_analyzer *a = tt_analyzer_new();
	__u64 e, total = 2000000, ts, t0, t1;
	__u32 seq[NC], step[NC];
	struct timespec s0, s1;
	size_t i, complete = 0;
	struct tt_event ev;
	unsigned int c, k;
	int bad = 0;

	memset(step, 0, sizeof(step));
	clock_gettime(CLOCK_MONOTONIC, &s0);
	ev = mk(TT_EV_SWITCH, 0, 0); /* the writer runs from the start */
	ev.h.tgid = 0;
	ev.sw.next_tid = WRITER_TID;
	ev.sw.next_tgid = SERVER_TGID;
	ev.sw.sw_flags = TT_SW_NEXT_TRACED;
	bad |= tt_analyzer_add(a, &ev);
	for (c = 0; c < NC; c++) {
		seq[c] = c * 1000003u;
		ev = mk(TT_EV_CONN_OPEN, c, 0);
		ev.conn.sk = 0x100000 + c * 64;
		ev.conn.family = AF_INET;
		ev.conn.rport = c;
		bad |= tt_analyzer_add(a, &ev);
	}
	/* per request: DATA_READY, RECV, then (SEND, XMIT) for the headers,
	 * each token and [DONE]; connections take turns, 100 ns apart */
	for (e = 0; e < total; e++) {
		c = e % NC;
		ts = 1 * MS + e * 100;
		k = step[c]++ % STEPS;
		ev = mk(TT_EV_NONE, ts, WRITER_TID);
		ev.sock.sk = 0x100000 + c * 64;
		if (k == 0) {
			ev.h.type = TT_EV_DATA_READY;
		} else if (k == 1) {
			ev.h.type = TT_EV_RECV;
			ev.sock.len = 100;
		} else if (k % 2 == 0) {
			ev.h.type = TT_EV_SEND;
			ev.send.len = 40;
			ev.send.ts_enter = ts - 50;
			ev.send.seq = seq[c];
			ev.send.cls = k == 2	     ? TT_SEND_HEADERS :
				      k == STEPS - 2 ? TT_SEND_DONE :
						       TT_SEND_TOKEN;
			ev.send.tokens = ev.send.cls == TT_SEND_TOKEN;
		} else {
			ev.h.type = TT_EV_XMIT;
			ev.xmit.seq = seq[c];
			ev.xmit.end_seq = seq[c] + 40;
			seq[c] += 40;
		}
		bad |= tt_analyzer_add(a, &ev);
	}
	tt_analyzer_finish(a);
	clock_gettime(CLOCK_MONOTONIC, &s1);
	ASSERT_FALSE(bad, "bad");
	check_paths(a);
	/* every whole request on every connection is complete */
	for (i = 0; i < tt_analyzer_nrequests(a); i++)
		complete += req(a, i)->complete;
	ASSERT_EQ(complete, NC * (total / NC / STEPS), "complete");
	ASSERT_EQ(tt_analyzer_nrequests(a),
		  NC * ((total / NC + STEPS - 1) / STEPS),
		  "tt_analyzer_nrequests");
	ASSERT_EQ(req(a, 0)->tokens, NTOK, "req.tokens");
	ASSERT_EQ(req(a, 0)->tpot, 2 * NC * 100, "req.tpot");
	t0 = s0.tv_sec * 1000000000ULL + s0.tv_nsec;
	t1 = s1.tv_sec * 1000000000ULL + s1.tv_nsec;
	printf("INFO: analyzer: %.2f M events/s (%llu events in %.3f s)\n",
	       (double)(total + NC + 1) / ((double)(t1 - t0) / 1e9) / 1e6,
	       (unsigned long long)(total + NC + 1), (double)(t1 - t0) / 1e9);
	tt_analyzer_free(a);
}

int main(void)
{
	TT_RUN(test_single_sse_headers_separate);
	TT_RUN(test_device_arrival);
	TT_RUN(test_headers_and_body_in_one_send);
	TT_RUN(test_chunked_token_done);
	TT_RUN(test_keepalive);
	TT_RUN(test_grpc_call);
	TT_RUN(test_grpc_multiplexed);
	TT_RUN(test_end_send_after_next_arrival);
	TT_RUN(test_close_mid_stream);
	TT_RUN(test_interleaved_connections);
	TT_RUN(test_out_of_order_within_window);
	TT_RUN(test_equal_timestamps_keep_arrival_order);
	TT_RUN(test_tpot_at_the_wire_bunched);
	TT_RUN(test_itl_at_the_wire);
	TT_RUN(test_itl_emit_when_wire_unseen);
	TT_RUN(test_next_request_before_done_returns);
	TT_RUN(test_deterministic);
	TT_RUN(test_preexisting_connection);
	TT_RUN(test_xmit_before_and_after_send);
	TT_RUN(test_done_before_xmit);
	TT_RUN(test_retransmit_first_counts);
	TT_RUN(test_late_xmit_in_ring);
	TT_RUN(test_seq_wraparound);
	TT_RUN(test_lost_window);
	TT_RUN(test_lost_while_waiting_for_wire);
	TT_RUN(test_ids_follow_arrival);
	TT_RUN(test_non_streaming_response);
	TT_RUN(test_hop_requests);
	TT_RUN(test_h2_mux_spread);
	TT_RUN(test_error_responses);
	TT_RUN(test_tls_connection);
	TT_RUN(test_tls_plaintext_requests);
	TT_RUN(test_tls13_finished_alone);
	TT_RUN(test_h2_tls_settings);
	TT_RUN(test_tls_twins_live);
	TT_RUN(test_half_close);
	TT_RUN(test_pipelined);
	TT_RUN(test_split_data_keyword);
	TT_RUN(test_interim_continue);
	TT_RUN(test_socket_reuse_and_orphans);
	TT_RUN(test_open_at_end_and_comm);
	TT_RUN(test_critical_path_handoff);
	TT_RUN(test_stream_memory_bounded);
	TT_RUN(test_stream_same_results);
	TT_RUN(test_gpu_device_table);
	TT_RUN(test_no_scheduler_events);
	TT_RUN(test_path_meets_unknown_thread);
	TT_RUN(test_process_table);
	TT_RUN(test_incomplete_str);
	TT_RUN(test_throughput);
	TT_RUN(test_invariants_were_checked);
	free(L.v);
	TT_EXIT();
}
