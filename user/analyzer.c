/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The analyzer: rebuilds the requests of the traced server's connections
 * from the event stream (DESIGN §3).
 *
 * Events pass through a reorder window (hdr.ts order, ties kept in arrival
 * order) and are then handled in timestamp order: events that arrive in
 * order queue in a FIFO at O(1), the few that arrive out of order go to a
 * min-heap, and the older head of the two is released. Each open
 * connection has a small state machine:
 *
 *   IDLE --DATA_READY--> ARRIVED --RECV--> RECEIVING --SEND--> RESPONDING
 *
 * ARRIVED is a request in waiting: it becomes one only once the server
 * reads or answers (a client's FIN also wakes sk_data_ready). A response
 * ends at a DONE send, at the next request's first bytes, at a second
 * status line with no read between (pipelining), or at close; if the XMIT
 * of its first body byte has not been seen by then it waits (the
 * connection's "tail") up to TT_WIRE_WAIT_NS for it. The peer's FIN is a
 * half-close: the server may still read what came before it and answer;
 * the connection ends at the server's own close or a reset.
 *
 * Every released event also goes, in the same timestamp order, to the
 * thread timelines of critpath.h; at the end the critical path of every
 * request is walked there in one pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer.h"
#include "util.h"
#include "classify.h"
#include "stats.h"

/* XMIT ranges kept per connection, to match a SEND that comes after them
 * (on loopback the skb reaches the device inside the send). */
#define XMIT_RING 64
/* How often (trace time) finished responses are checked for an XMIT that
 * never came. */
#define SWEEP_EVERY_NS 100000000ULL

/* ---- a map from __u64 keys to non-NULL pointers ---- */

/* Open addressing with linear probing and backward-shift deletion: no
 * tombstones, and one allocation per resize rather than per entry. */
struct ptr_map {
	__u64 *keys;
	void **vals; /* NULL: empty slot */
	size_t cap; /* a power of two, or 0 */
	size_t n;
	unsigned int bits;
};

static size_t map_home(const struct ptr_map *m, __u64 key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - m->bits));
}

static void *map_get(const struct ptr_map *m, __u64 key)
{
	size_t i;

	if (!m->n)
		return NULL;
	for (i = map_home(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

static int map_grow(struct ptr_map *m)
{
	struct ptr_map g = { .bits = m->bits ? m->bits + 1 : 6 };
	size_t i, j;

	g.cap = (size_t)1 << g.bits;
	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	if (!g.keys || !g.vals) {
		free(g.keys);
		free(g.vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		for (j = map_home(&g, m->keys[i]); g.vals[j];
		     j = (j + 1) & (g.cap - 1))
			;
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
	}
	g.n = m->n;
	free(m->keys);
	free(m->vals);
	*m = g;
	return 0;
}

/* Inserts or replaces; 0 or -ENOMEM. */
static int map_put(struct ptr_map *m, __u64 key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return -ENOMEM;
	for (i = map_home(m, key); m->vals[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

static void map_del(struct ptr_map *m, __u64 key)
{
	size_t mask = m->cap - 1, i, j, home;

	if (!m->n)
		return;
	for (i = map_home(m, key); m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			break;
	if (!m->vals[i])
		return;
	/* shift back the entries of the run that probed past slot i */
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		home = map_home(m, m->keys[j]);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->vals[i] = NULL;
	m->n--;
}

static void map_free(struct ptr_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- state ---- */

/* Waiting for the XMIT that carries the byte at seq. */
struct wire_wait {
	__u64 not_before; /* the send's syscall entry */
	__u64 t_wire; /* 0 until seen */
	__u32 seq;
	bool armed; /* a send is waiting */
	bool pending; /* armed and not yet seen */
};

/* A request being rebuilt. */
struct live_req {
	struct tt_request r;
	__u64 start; /* t_arrive, or its first event when unknown */
	/* its latest sk_data_ready, and that one as of its latest read */
	__u64 t_last_ready, t_last_arrive;
	__u64 seq; /* creation order: provisional id */
	struct wire_wait tok; /* the first token send */
	struct wire_wait other; /* the first untyped body send */
	__u64 other_ts_enter;
	__u32 other_tid, other_tgid;
	__u64 last_tok_enter;
	bool streaming; /* SSE or chunked framing seen */
	bool done; /* end-of-stream send seen */
	bool answered; /* a status line or body send seen */
	struct tt_u64vec gaps; /* inter-token gaps; buffer kept across resets */
};

enum conn_state {
	CONN_IDLE,
	CONN_ARRIVED, /* bytes queued, nothing read or sent yet */
	CONN_RECEIVING,
	CONN_RESPONDING,
};

struct xmit_rec {
	__u64 ts;
	__u32 seq, end_seq;
};

struct conn {
	__u64 sk;
	__u16 family, lport, rport;
	__u8 laddr[16], raddr[16];
	bool closed; /* kept only while its tail waits for an XMIT */
	bool peer_fin; /* the client half-closed: nothing new arrives */
	bool had_request; /* a request was taken up on it in this trace */
	__u64 unread; /* bytes queued at the latest DATA_READY, less reads */
	__u64 last_send_ts; /* hdr.ts of the latest send */
	bool have_tail;
	enum conn_state state;
	struct live_req cur;
	struct live_req tail; /* ended, waiting for its t_wire */
	unsigned int ring_next, ring_n;
	struct xmit_rec ring[XMIT_RING];
};

/* A finished request. */
struct req_rec {
	struct tt_request r;
	__u64 t_last_arrive; /* its last bytes in the kernel before t_read */
	__u64 start, end;
	__u64 end_max; /* max end of this and every earlier record */
	__u64 seq;
	size_t itl_off, itl_n; /* its gaps in tt_analyzer.gaps */
};

/* An event held in the reorder window. */
struct win_ent {
	struct tt_event ev;
	__u64 key; /* when it happened, for ordering (order_ts) */
	__u64 order; /* arrival order: ties keep it */
};

struct tt_analyzer {
	/* reorder window */
	struct win_ent *fifo; /* a ring of events that came in order */
	size_t fifo_head, fifo_n, fifo_cap;
	struct win_ent *heap; /* those that came out of order */
	size_t heap_n, heap_cap;
	__u64 order;
	__u64 newest_ts;
	__u64 released_ts;
	bool released_any;

	__u64 now; /* newest timestamp handled */
	__u64 next_sweep;
	size_t ntails;
	__u64 next_seq;

	struct ptr_map conns; /* sk -> struct conn */
	struct ptr_map comms; /* tid -> char[TT_COMM_LEN] */

	struct req_rec *reqs;
	size_t nreqs, capreqs;
	struct tt_u64vec gaps; /* every finished request's gaps */
	size_t itl_complete_n; /* after finish: complete ones come first */

	struct tt_analyzer_stats st;
	__u64 lost_cpu[TT_LOST_CPUS];
	bool finished;

	struct tt_critpath *cp;
	__u32 last_tgid; /* the latest tgid marked traced: most repeat it */
	/* after finish: the walk's input and output, one entry per request */
	struct tt_cp_request *cp_reqs;
	struct tt_cp_result *cp_res;
};

struct tt_analyzer *tt_analyzer_new(void)
{
	struct tt_analyzer *a = calloc(1, sizeof(struct tt_analyzer));

	if (!a)
		return NULL;
	a->cp = tt_critpath_new();
	if (!a->cp) {
		free(a);
		return NULL;
	}
	return a;
}

void tt_analyzer_keep_paths(struct tt_analyzer *a, bool keep)
{
	tt_critpath_set_drop_segments(a->cp, !keep);
}

/* ---- requests ---- */

static bool seq_in(__u32 seq, __u32 lo, __u32 hi)
{
	return (__s32)(seq - lo) >= 0 && (__s32)(hi - seq) > 0;
}

/*
 * Arms w for the byte at seq sent from ts_enter on; an XMIT that already
 * carried it (loopback) settles it at once. The ring is oldest first, so
 * a retransmit never wins over the first transmission. The bytes cannot
 * reach the device before the send began, nor before the previous send on
 * the connection ended (the bound that holds when ts_enter is unknown and
 * the BPF side put the send's end there).
 */
static void wire_arm(struct wire_wait *w, const struct conn *c, __u32 seq,
		     __u64 ts_enter)
{
	const struct xmit_rec *x;
	unsigned int i, k;

	if (c->last_send_ts < ts_enter)
		ts_enter = c->last_send_ts;
	w->seq = seq;
	w->not_before = ts_enter;
	w->armed = true;
	w->pending = true;
	w->t_wire = 0;
	for (i = 0; i < c->ring_n; i++) {
		k = (c->ring_next + XMIT_RING - c->ring_n + i) % XMIT_RING;
		x = &c->ring[k];
		if (x->ts >= ts_enter && seq_in(seq, x->seq, x->end_seq)) {
			w->pending = false;
			w->t_wire = x->ts;
			return;
		}
	}
}

static bool wire_check(struct wire_wait *w, const struct xmit_rec *x)
{
	if (!w->pending || x->ts < w->not_before ||
	    !seq_in(w->seq, x->seq, x->end_seq))
		return false;
	w->pending = false;
	w->t_wire = x->ts;
	return true;
}

/* Clears q for a new request, keeping its gap buffer. */
static void req_reset(struct live_req *q)
{
	struct tt_u64vec gaps = q->gaps;

	memset(q, 0, sizeof(*q));
	gaps.n = 0;
	q->gaps = gaps;
}

static void req_begin(struct conn *c, __u64 ts, __u64 t_arrive)
{
	struct live_req *q = &c->cur;

	req_reset(q);
	q->start = t_arrive ? t_arrive : ts;
	q->r.t_arrive = t_arrive;
	q->t_last_ready = t_arrive;
	q->r.sk = c->sk;
	q->r.family = c->family;
	q->r.rport = c->rport;
	q->r.lport = c->lport;
	memcpy(q->r.raddr, c->raddr, sizeof(q->r.raddr));
	c->state = CONN_ARRIVED;
}

/* The server took the request up: from here on it counts. */
static void req_materialize(struct tt_analyzer *a, struct conn *c)
{
	if (c->state != CONN_ARRIVED)
		return;
	c->cur.seq = ++a->next_seq;
	c->cur.r.id = c->cur.seq;
	c->state = CONN_RECEIVING;
	c->had_request = true;
}

static int rec_reserve(struct tt_analyzer *a)
{
	size_t cap = a->capreqs ? a->capreqs * 2 : 256;
	struct req_rec *v;

	if (a->nreqs < a->capreqs)
		return 0;
	v = realloc(a->reqs, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->reqs = v;
	a->capreqs = cap;
	return 0;
}

/* Decides what q's timestamps prove and files it as finished. */
static int req_finalize(struct tt_analyzer *a, struct live_req *q, __u64 end)
{
	struct tt_request *r = &q->r;
	struct req_rec *rec;
	__u32 why = r->incomplete;

	if (rec_reserve(a) || tt_u64vec_reserve(&a->gaps, q->gaps.n))
		return -ENOMEM;
	if (!r->t_wire && q->tok.armed && !q->tok.pending)
		r->t_wire = q->tok.t_wire;
	/* a pipelined request's arrival and read are unknown: that is why */
	if (!r->t_arrive && !(why & TT_INC_PIPELINED))
		why |= TT_INC_NO_ARRIVE;
	if (!r->t_read && !(why & TT_INC_PIPELINED))
		why |= TT_INC_NO_READ;
	if (!r->t_first_write)
		why |= TT_INC_NO_RESPONSE;
	else if (!r->t_wire)
		why |= TT_INC_NO_WIRE;
	if (r->closed_mid_stream)
		why |= TT_INC_CLOSED_MID_STREAM;
	if (r->lost)
		why |= TT_INC_LOST;
	/* answered without tokens: there is no first token to miss */
	if (r->status && (r->status < 200 || r->status >= 300))
		why |= TT_INC_ERROR;
	else if (!r->tokens && q->answered &&
		 !(why & (TT_INC_OPEN_AT_END | TT_INC_CLOSED_MID_STREAM)))
		why |= TT_INC_NO_TOKEN;
	if (why & TT_INC_NOT_TOKENS)
		why &= ~(TT_INC_NO_RESPONSE | TT_INC_NO_WIRE);
	r->ttft = 0;
	if (r->t_arrive && r->t_wire) {
		if (r->t_wire >= r->t_arrive)
			r->ttft = r->t_wire - r->t_arrive;
		else
			why |= TT_INC_NO_WIRE; /* not this request's bytes */
	}
	r->tpot = 0;
	if (r->tokens >= 2 && r->t_last_write > r->t_first_write)
		r->tpot =
			(r->t_last_write - r->t_first_write) / (r->tokens - 1);
	r->incomplete = why;
	r->complete = !why;

	rec = &a->reqs[a->nreqs];
	rec->r = *r;
	rec->t_last_arrive = q->t_last_arrive;
	rec->start = q->start;
	rec->end = end;
	rec->end_max = a->nreqs && a->reqs[a->nreqs - 1].end_max > end ?
			       a->reqs[a->nreqs - 1].end_max :
			       end;
	rec->seq = q->seq;
	rec->itl_off = a->gaps.n;
	rec->itl_n = q->gaps.n;
	if (q->gaps.n)
		memcpy(a->gaps.v + a->gaps.n, q->gaps.v,
		       q->gaps.n * sizeof(*q->gaps.v));
	a->gaps.n += q->gaps.n;
	a->nreqs++;
	return 0;
}

/* A tail lives until its XMIT, or until it is given up on (now): a loss
 * in that time may be what hid the XMIT. */
static int tail_finalize(struct tt_analyzer *a, struct conn *c)
{
	struct tt_request *r = &c->tail.r;
	int err;

	if (!c->have_tail)
		return 0;
	err = req_finalize(a, &c->tail,
			   r->t_wire > r->t_end ? r->t_wire : a->now);
	c->have_tail = false;
	a->ntails--;
	return err;
}

enum end_how {
	END_DONE, /* end-of-stream send */
	END_NEXT, /* the next request began */
	END_CLOSE, /* the connection closed */
	END_FINISH, /* the trace ended */
};

/* Ends the current request; it becomes the tail if its first body byte
 * has not reached the wire yet. */
static int req_end(struct tt_analyzer *a, struct conn *c, __u64 ts,
		   enum end_how how)
{
	struct live_req *q = &c->cur, swap;
	struct tt_request *r = &q->r;
	int err;

	if (c->state == CONN_IDLE)
		return 0;
	if (c->state == CONN_ARRIVED) {
		/* nothing read or sent: no request (a FIN, a probe) */
		c->state = CONN_IDLE;
		return 0;
	}
	c->state = CONN_IDLE;
	/* a stream without its end, or headers without a body */
	if (how == END_CLOSE && q->answered && !q->done &&
	    (q->streaming || !q->other.armed))
		r->closed_mid_stream = true;
	if (how == END_FINISH)
		r->incomplete |= TT_INC_OPEN_AT_END;
	else
		r->t_end = ts;
	/* no token at all: the first body send stands for it */
	if (!r->tokens && q->other.armed) {
		r->t_first_write = q->other_ts_enter;
		r->t_last_write = q->other_ts_enter;
		r->writer_tid = q->other_tid;
		r->tgid = q->other_tgid;
		q->tok = q->other;
		r->t_wire = q->tok.pending ? 0 : q->tok.t_wire;
	}
	if (how == END_FINISH || !q->tok.pending)
		return req_finalize(a, q, how == END_FINISH ? a->now : ts);
	err = tail_finalize(a, c);
	swap = c->tail;
	c->tail = c->cur;
	c->cur = swap;
	req_reset(&c->cur);
	c->have_tail = true;
	a->ntails++;
	return err;
}

/* ---- connections ---- */

static void conn_free(struct tt_analyzer *a, struct conn *c)
{
	map_del(&a->conns, c->sk);
	tt_u64vec_free(&c->cur.gaps);
	tt_u64vec_free(&c->tail.gaps);
	free(c);
}

static int conn_close(struct tt_analyzer *a, struct conn *c, __u64 ts)
{
	int err;

	if (c->closed)
		return 0;
	err = req_end(a, c, ts, END_CLOSE);
	c->closed = true;
	if (!c->have_tail)
		conn_free(a, c);
	return err;
}

static bool same_peer(const struct conn *c, const struct tt_conn *o)
{
	return c->family == o->family && c->lport == o->lport &&
	       c->rport == o->rport && !memcmp(c->raddr, o->raddr, 16) &&
	       !memcmp(c->laddr, o->laddr, 16);
}

static int on_conn_open(struct tt_analyzer *a, const struct tt_event *ev)
{
	const struct tt_conn *o = &ev->conn;
	struct conn *c = map_get(&a->conns, o->sk);
	int err = 0;

	if (c && !c->closed && same_peer(c, o))
		return 0; /* announced again (the BPF side's LRU forgot it) */
	if (c) {
		/* the socket was reused by a new connection */
		err = conn_close(a, c, ev->h.ts);
		c = map_get(&a->conns, o->sk);
		if (c) {
			err = err ? err : tail_finalize(a, c);
			conn_free(a, c);
		}
		if (err)
			return err;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sk = o->sk;
	c->family = o->family;
	c->lport = o->lport;
	c->rport = o->rport;
	memcpy(c->laddr, o->laddr, sizeof(c->laddr));
	memcpy(c->raddr, o->raddr, sizeof(c->raddr));
	if (map_put(&a->conns, c->sk, c)) {
		free(c);
		return -ENOMEM;
	}
	a->st.conns++;
	return 0;
}

static int on_data_ready(struct tt_analyzer *a, struct conn *c,
			 const struct tt_event *ev)
{
	__u64 queued = ev->sock.len > 0 ? ev->sock.len : 0, ts = ev->h.ts;
	bool news = !c->peer_fin || queued > c->unread + 1;
	int err;

	c->unread = queued;
	/* after the peer's FIN only its own segment can bring bytes; the FIN
	 * alone (one more in the queue) is no request's arrival */
	if (!news)
		return 0;
	switch (c->state) {
	case CONN_IDLE:
		req_begin(c, ts, ts);
		return 0;
	case CONN_ARRIVED:
	case CONN_RECEIVING:
		c->cur.t_last_ready = ts; /* more of the same request */
		return 0;
	case CONN_RESPONDING:
		err = req_end(a, c, ts, END_NEXT);
		req_begin(c, ts, ts);
		return err;
	}
	return 0;
}

static int on_recv(struct tt_analyzer *a, struct conn *c,
		   const struct tt_event *ev)
{
	int err = 0;

	if (ev->sock.len <= 0)
		return 0; /* EOF, EAGAIN, errors */
	c->unread = c->unread > (__u64)ev->sock.len ? c->unread - ev->sock.len :
						      0;
	if (c->state == CONN_RESPONDING) {
		/* no bytes arrived since the response began: these came with
		 * the request it answers (pipelined) */
		err = req_end(a, c, ev->h.ts, END_NEXT);
		req_begin(c, ev->h.ts, 0);
		c->cur.r.incomplete |= TT_INC_PIPELINED;
	}
	if (c->state == CONN_IDLE) {
		req_begin(c, ev->h.ts, 0); /* its arrival was not seen */
		/* nothing arrived since the last response ended */
		if (c->had_request)
			c->cur.r.incomplete |= TT_INC_PIPELINED;
	}
	req_materialize(a, c);
	c->cur.r.t_read = ev->h.ts;
	c->cur.t_last_arrive = c->cur.t_last_ready;
	c->cur.r.reader_tid = ev->h.tid;
	c->cur.r.bytes_in += ev->sock.len;
	if (!c->cur.r.tgid)
		c->cur.r.tgid = ev->h.tgid;
	return err;
}

static void first_token(struct conn *c, const struct tt_event *ev)
{
	struct tt_request *r = &c->cur.r;

	r->t_first_write = ev->send.ts_enter;
	r->writer_tid = ev->h.tid;
	r->tgid = ev->h.tgid;
	wire_arm(&c->cur.tok, c, ev->send.seq, ev->send.ts_enter);
	if (!c->cur.tok.pending)
		r->t_wire = c->cur.tok.t_wire;
}

static int send_body(struct tt_analyzer *a, struct conn *c,
		     const struct tt_event *ev)
{
	const struct tt_send *s = &ev->send;
	struct live_req *q = &c->cur;
	struct tt_request *r = &q->r;
	bool status_line;
	unsigned int n;
	int err;

	if (s->len <= 0)
		return 0;
	if (s->flags & TT_SEND_F_INTERIM) {
		/* "100 Continue" is no response */
		if (c->state != CONN_IDLE)
			r->bytes_out += s->len;
		return 0;
	}
	status_line = (s->flags & TT_SEND_F_HEADERS) ||
		      s->cls == TT_SEND_HEADERS;
	if (c->state == CONN_IDLE && !status_line) {
		/* e.g. uvicorn's "0\r\n\r\n" after "data: [DONE]" */
		a->st.stray_sends++;
		return 0;
	}
	if (status_line && (c->state == CONN_IDLE || q->answered)) {
		/* a response with no read or arrival of its own: its request
		 * came with an earlier one's bytes, or before the trace */
		err = req_end(a, c, ev->h.ts, END_NEXT);
		if (err)
			return err;
		req_begin(c, s->ts_enter, 0);
		if (c->had_request)
			r->incomplete |= TT_INC_PIPELINED;
	}
	req_materialize(a, c);
	c->state = CONN_RESPONDING;
	q->answered = true;
	r->bytes_out += s->len;
	if (!r->t_headers && status_line) {
		r->t_headers = s->ts_enter;
		r->status = s->status;
	}
	if (s->flags & (TT_SEND_F_SSE | TT_SEND_F_CHUNKED))
		q->streaming = true;
	switch (s->cls) {
	case TT_SEND_TOKEN:
	case TT_SEND_TOKEN_DONE:
		n = s->tokens ? s->tokens : 1;
		if (!r->t_first_write) {
			first_token(c, ev);
		} else {
			if (tt_u64vec_push(&q->gaps,
					   s->ts_enter > q->last_tok_enter ?
						   s->ts_enter -
							   q->last_tok_enter :
						   0))
				return -ENOMEM;
		}
		r->tokens += n;
		r->t_last_write = s->ts_enter;
		q->last_tok_enter = s->ts_enter;
		if (s->cls == TT_SEND_TOKEN)
			return 0;
		q->done = true;
		return req_end(a, c, ev->h.ts, END_DONE);
	case TT_SEND_DONE:
		q->done = true;
		return req_end(a, c, ev->h.ts, END_DONE);
	case TT_SEND_HEADERS:
		return 0;
	default:
		/* a body with no token framing: the non-streaming case */
		if (!q->other.armed) {
			wire_arm(&q->other, c, s->seq, s->ts_enter);
			q->other_ts_enter = s->ts_enter;
			q->other_tid = ev->h.tid;
			q->other_tgid = ev->h.tgid;
		}
		return 0;
	}
}

static int on_send(struct tt_analyzer *a, struct conn *c,
		   const struct tt_event *ev)
{
	int err = send_body(a, c, ev);

	if (ev->send.len > 0)
		c->last_send_ts = ev->h.ts;
	return err;
}

static int on_xmit(struct tt_analyzer *a, struct conn *c,
		   const struct tt_event *ev)
{
	struct xmit_rec *x = &c->ring[c->ring_next];
	int err;

	x->ts = ev->h.ts;
	x->seq = ev->xmit.seq;
	x->end_seq = ev->xmit.end_seq;
	c->ring_next = (c->ring_next + 1) % XMIT_RING;
	if (c->ring_n < XMIT_RING)
		c->ring_n++;
	if (c->state != CONN_IDLE) {
		if (wire_check(&c->cur.tok, x))
			c->cur.r.t_wire = x->ts;
		wire_check(&c->cur.other, x);
	}
	if (c->have_tail && wire_check(&c->tail.tok, x)) {
		c->tail.r.t_wire = x->ts;
		err = tail_finalize(a, c);
		if (c->closed)
			conn_free(a, c);
		return err;
	}
	return 0;
}

static void mark_lost(struct tt_request *r)
{
	r->lost = true;
	r->incomplete |= TT_INC_LOST;
	r->complete = false;
}

/* Every request whose lifetime overlaps (since, until] is marked lost. */
static void on_lost(struct tt_analyzer *a, const struct tt_event *ev)
{
	__u64 since = ev->lost.since_ts, until = ev->h.ts;
	struct req_rec *rec;
	struct conn *c;
	size_t i;

	a->st.lost += ev->lost.count;
	a->st.lost_windows++;
	if (ev->lost.lost_cpu < TT_LOST_CPUS)
		a->lost_cpu[ev->lost.lost_cpu] += ev->lost.count;
	for (i = 0; i < a->conns.cap; i++) {
		c = a->conns.vals[i];
		if (!c)
			continue;
		if (c->state != CONN_IDLE && c->cur.start <= until)
			c->cur.r.lost = true;
		if (c->have_tail && c->tail.start <= until)
			c->tail.r.lost = true; /* alive: it waits for XMIT */
	}
	/* end_max bounds the backward walk to the records that can overlap */
	for (i = a->nreqs; i-- > 0 && a->reqs[i].end_max > since;) {
		rec = &a->reqs[i];
		if (rec->start <= until && rec->end > since)
			mark_lost(&rec->r);
	}
}

/* Closes the tails whose XMIT is overdue. */
static int sweep_tails(struct tt_analyzer *a)
{
	struct tt_u64vec gone = {};
	struct conn *c;
	size_t i;
	int err = 0;

	for (i = 0; i < a->conns.cap && !err; i++) {
		c = a->conns.vals[i];
		if (!c || !c->have_tail ||
		    a->now - c->tail.r.t_end <= TT_WIRE_WAIT_NS)
			continue;
		err = tail_finalize(a, c);
		if (c->closed && !err)
			err = tt_u64vec_push(&gone, c->sk);
	}
	/* freed after the walk: deleting shifts the map's slots */
	for (i = 0; i < gone.n; i++) {
		c = map_get(&a->conns, gone.v[i]);
		if (c)
			conn_free(a, c);
	}
	tt_u64vec_free(&gone);
	return err;
}

static int set_comm(struct tt_analyzer *a, __u32 tid, const char *comm)
{
	char *name = map_get(&a->comms, tid);

	if (!name) {
		name = malloc(TT_COMM_LEN);
		if (!name)
			return -ENOMEM;
		if (map_put(&a->comms, tid, name)) {
			free(name);
			return -ENOMEM;
		}
	}
	memcpy(name, comm, TT_COMM_LEN);
	name[TT_COMM_LEN - 1] = '\0';
	return 0;
}

static int mark_traced(struct tt_analyzer *a, __u32 tgid)
{
	int err;

	if (!tgid || tgid == a->last_tgid)
		return 0;
	err = tt_critpath_add_tgid(a->cp, tgid);
	if (!err)
		a->last_tgid = tgid;
	return err;
}

/* Marks the processes whose threads the event shows at work: current in
 * process context for the events only traced threads emit, and the other
 * side of a switch or fork. */
static int mark_event_tgids(struct tt_analyzer *a, const struct tt_event *ev)
{
	bool process_ctx = !(ev->h.flags & (TT_F_HARDIRQ | TT_F_SOFTIRQ));
	int err = 0;

	switch (ev->h.type) {
	case TT_EV_RECV:
	case TT_EV_SEND:
	case TT_EV_COMM:
	case TT_EV_EXIT:
		if (process_ctx)
			err = mark_traced(a, ev->h.tgid);
		break;
	case TT_EV_FORK:
		if (process_ctx)
			err = mark_traced(a, ev->h.tgid);
		if (!err)
			err = mark_traced(a, ev->fork.child_tgid);
		break;
	case TT_EV_SWITCH:
		if (ev->sw.sw_flags & TT_SW_PREV_TRACED)
			err = mark_traced(a, ev->h.tgid);
		if (!err && (ev->sw.sw_flags & TT_SW_NEXT_TRACED))
			err = mark_traced(a, ev->sw.next_tgid);
		break;
	}
	return err;
}

static int handle(struct tt_analyzer *a, const struct tt_event *ev)
{
	struct conn *c;
	int err;

	if (ev->h.ts > a->now)
		a->now = ev->h.ts;
	err = mark_event_tgids(a, ev);
	if (!err)
		err = tt_critpath_add(a->cp, ev);
	if (err)
		return err;
	switch (ev->h.type) {
	case TT_EV_FORK:
		return set_comm(a, ev->fork.child_tid, ev->fork.comm);
	case TT_EV_COMM:
		return set_comm(a, ev->h.tid, ev->comm.comm);
	case TT_EV_CONN_OPEN:
		return on_conn_open(a, ev);
	case TT_EV_LOST:
		on_lost(a, ev);
		return 0;
	case TT_EV_CONN_CLOSE:
	case TT_EV_DATA_READY:
	case TT_EV_RECV:
	case TT_EV_SEND:
	case TT_EV_XMIT:
		break;
	default:
		return 0;
	}
	/* sk is the first field of every socket payload */
	c = map_get(&a->conns, ev->sock.sk);
	if (!c || (c->closed && ev->h.type != TT_EV_XMIT)) {
		a->st.orphans++;
		return 0;
	}
	switch (ev->h.type) {
	case TT_EV_CONN_CLOSE:
		/* the peer's FIN: what it sent before may still be answered */
		if (ev->sock.len == TT_TCP_CLOSE_WAIT)
			c->peer_fin = true;
		else
			err = conn_close(a, c, ev->h.ts);
		break;
	case TT_EV_DATA_READY:
		err = on_data_ready(a, c, ev);
		break;
	case TT_EV_RECV:
		err = on_recv(a, c, ev);
		break;
	case TT_EV_SEND:
		err = on_send(a, c, ev);
		break;
	default:
		err = on_xmit(a, c, ev);
		break;
	}
	if (!err && a->ntails && a->now >= a->next_sweep) {
		a->next_sweep = a->now + SWEEP_EVERY_NS;
		err = sweep_tails(a);
	}
	return err;
}

/* ---- the reorder window ---- */

/*
 * A send is ordered by its syscall entry, not by its record's time (the
 * end of the send): on loopback the client has the bytes, and may have
 * sent its next request, before the send returns; ordered by its end, the
 * [DONE] of one response would land after the next request's arrival.
 */
static __u64 order_ts(const struct tt_event *ev)
{
	if (ev->h.type == TT_EV_SEND && ev->send.ts_enter &&
	    ev->send.ts_enter <= ev->h.ts &&
	    ev->h.ts - ev->send.ts_enter < TT_REORDER_WINDOW_NS)
		return ev->send.ts_enter;
	return ev->h.ts;
}

static bool win_less(const struct win_ent *x, const struct win_ent *y)
{
	return x->key < y->key || (x->key == y->key && x->order < y->order);
}

static const struct win_ent *fifo_tail(const struct tt_analyzer *a)
{
	if (!a->fifo_n)
		return NULL;
	return &a->fifo[(a->fifo_head + a->fifo_n - 1) & (a->fifo_cap - 1)];
}

static int fifo_push(struct tt_analyzer *a, const struct win_ent *e)
{
	size_t cap = a->fifo_cap ? a->fifo_cap * 2 : 1024, i;
	struct win_ent *v;

	if (a->fifo_n == a->fifo_cap) {
		/* a new ring, unwrapped */
		v = malloc(cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < a->fifo_n; i++)
			v[i] = a->fifo[(a->fifo_head + i) & (a->fifo_cap - 1)];
		free(a->fifo);
		a->fifo = v;
		a->fifo_head = 0;
		a->fifo_cap = cap;
	}
	a->fifo[(a->fifo_head + a->fifo_n++) & (a->fifo_cap - 1)] = *e;
	return 0;
}

static int heap_push(struct tt_analyzer *a, const struct win_ent *e)
{
	size_t cap = a->heap_cap ? a->heap_cap * 2 : 64, i, parent;
	struct win_ent *h;

	if (a->heap_n == a->heap_cap) {
		h = realloc(a->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		a->heap = h;
		a->heap_cap = cap;
	}
	h = a->heap;
	for (i = a->heap_n++; i > 0; i = parent) {
		parent = (i - 1) / 2;
		if (!win_less(e, &h[parent]))
			break;
		h[i] = h[parent];
	}
	h[i] = *e;
	return 0;
}

static void heap_pop(struct tt_analyzer *a, struct win_ent *top)
{
	struct win_ent *h = a->heap;
	size_t i = 0, child, n;

	*top = h[0];
	n = --a->heap_n;
	while ((child = 2 * i + 1) < n) {
		if (child + 1 < n && win_less(&h[child + 1], &h[child]))
			child++;
		if (!win_less(&h[child], &h[n]))
			break;
		h[i] = h[child];
		i = child;
	}
	if (n)
		h[i] = h[n];
}

/* The oldest event in the window, or NULL when it is empty. */
static const struct win_ent *win_oldest(const struct tt_analyzer *a)
{
	const struct win_ent *f = a->fifo_n ? &a->fifo[a->fifo_head] : NULL;

	if (!a->heap_n)
		return f;
	return f && win_less(f, &a->heap[0]) ? f : &a->heap[0];
}

/* Takes the oldest event out of the window and handles it. */
static int win_release(struct tt_analyzer *a)
{
	struct win_ent e;

	if (a->heap_n &&
	    (!a->fifo_n || win_less(&a->heap[0], &a->fifo[a->fifo_head]))) {
		heap_pop(a, &e);
	} else {
		e = a->fifo[a->fifo_head];
		a->fifo_head = (a->fifo_head + 1) & (a->fifo_cap - 1);
		a->fifo_n--;
	}
	a->released_ts = e.key;
	a->released_any = true;
	return handle(a, &e.ev);
}

int tt_analyzer_add(struct tt_analyzer *a, const struct tt_event *ev)
{
	const struct win_ent *tail = fifo_tail(a), *old;
	struct win_ent e;
	int err;

	if (a->finished)
		return -EINVAL;
	a->st.events++;
	e.ev = *ev;
	e.key = order_ts(ev);
	e.order = a->order++;
	if (a->released_any && e.key < a->released_ts)
		a->st.late++; /* handled next, out of order */
	if (!tail || e.key >= tail->key)
		err = fifo_push(a, &e);
	else
		err = heap_push(a, &e);
	if (err)
		return err;
	if (e.key > a->newest_ts)
		a->newest_ts = e.key;
	while ((old = win_oldest(a)) &&
	       a->newest_ts - old->key > TT_REORDER_WINDOW_NS) {
		err = win_release(a);
		if (err)
			return err;
	}
	return 0;
}

/* ---- the end ---- */

static int cmp_rec(const void *x, const void *y)
{
	const struct req_rec *p = x, *q = y;

	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* Puts the gaps of complete requests first, in id order. */
static int regroup_gaps(struct tt_analyzer *a)
{
	struct tt_u64vec out = {};
	size_t i, off;
	int pass;

	if (tt_u64vec_reserve(&out, a->gaps.n))
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < a->nreqs; i++) {
			struct req_rec *rec = &a->reqs[i];

			if (rec->r.complete != !pass)
				continue;
			off = out.n;
			if (rec->itl_n)
				memcpy(out.v + off, a->gaps.v + rec->itl_off,
				       rec->itl_n * sizeof(*out.v));
			out.n += rec->itl_n;
			rec->itl_off = off;
		}
		if (!pass)
			a->itl_complete_n = out.n;
	}
	tt_u64vec_free(&a->gaps);
	a->gaps = out;
	return 0;
}

/* Takes the walk's verdict on r; the request stays complete only if the
 * walk completed too. */
static void attribute_one(struct tt_request *r, const struct tt_cp_result *res)
{
	const __u32 explained = TT_CP_INC_NOT_WALKED | TT_CP_INC_LOST |
				TT_CP_INC_NO_READ;

	if (!(res->incomplete & TT_CP_INC_NOT_WALKED)) {
		memcpy(r->stage_ns, res->stage_ns, sizeof(r->stage_ns));
		r->t_enqueue = res->t_enqueue;
		r->t_dispatch = res->t_dispatch;
		r->t_token = res->t_token;
		r->dispatch_rule = res->dispatch;
	}
	r->attributed = res->complete;
	if (!res->complete &&
	    (!r->incomplete || (res->incomplete & ~explained)))
		r->incomplete |= TT_INC_NO_PATH;
	r->complete = !r->incomplete;
}

/* Walks every request's critical path (after the sort: index = id - 1).
 * Without memory for it every request is left unattributed. */
static void attribute(struct tt_analyzer *a)
{
	static const struct tt_cp_result none = {
		.incomplete = TT_CP_INC_NOT_WALKED
	};
	struct tt_request *r;
	size_t i;

	if (!a->nreqs)
		return;
	a->cp_reqs = calloc(a->nreqs, sizeof(*a->cp_reqs));
	a->cp_res = calloc(a->nreqs, sizeof(*a->cp_res));
	if (!a->cp_reqs || !a->cp_res) {
		free(a->cp_res);
		a->cp_res = NULL;
	} else {
		for (i = 0; i < a->nreqs; i++) {
			r = &a->reqs[i].r;
			a->cp_reqs[i] = (struct tt_cp_request){
				.id = r->id,
				.t_arrive = r->t_arrive,
				.t_read = r->t_read,
				.t_first_write = r->t_first_write,
				.t_wire = r->t_wire,
				.t_end = r->t_end,
				.t_last_arrive = a->reqs[i].t_last_arrive,
				.reader_tid = r->reader_tid,
				.writer_tid = r->writer_tid,
			};
		}
		if (tt_critpath_walk_all(a->cp, a->cp_reqs, a->nreqs,
					 a->cp_res)) {
			free(a->cp_res);
			a->cp_res = NULL;
		}
	}
	for (i = 0; i < a->nreqs; i++)
		attribute_one(&a->reqs[i].r, a->cp_res ? &a->cp_res[i] : &none);
}

void tt_analyzer_finish(struct tt_analyzer *a)
{
	struct conn *c;
	size_t i;

	if (a->finished)
		return;
	/* errors below only lose requests: the report says what it has */
	while (a->fifo_n || a->heap_n)
		win_release(a);
	for (i = 0; i < a->conns.cap; i++) {
		c = a->conns.vals[i];
		if (!c)
			continue;
		req_end(a, c, a->now, END_FINISH);
		if (c->have_tail) {
			c->tail.r.incomplete |= TT_INC_NO_WIRE;
			tail_finalize(a, c);
		}
		tt_u64vec_free(&c->cur.gaps);
		tt_u64vec_free(&c->tail.gaps);
		free(c);
	}
	map_free(&a->conns);
	if (a->nreqs > 1)
		qsort(a->reqs, a->nreqs, sizeof(*a->reqs), cmp_rec);
	for (i = 0; i < a->nreqs; i++)
		a->reqs[i].r.id = i + 1;
	attribute(a);
	regroup_gaps(a);
	free(a->fifo);
	free(a->heap);
	a->fifo = NULL;
	a->heap = NULL;
	a->fifo_cap = a->heap_cap = 0;
	a->finished = true;
}

void tt_analyzer_free(struct tt_analyzer *a)
{
	struct conn *c;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->conns.cap; i++) {
		c = a->conns.vals[i];
		if (!c)
			continue;
		tt_u64vec_free(&c->cur.gaps);
		tt_u64vec_free(&c->tail.gaps);
		free(c);
	}
	map_free(&a->conns);
	for (i = 0; i < a->comms.cap; i++)
		free(a->comms.vals[i]);
	map_free(&a->comms);
	free(a->fifo);
	free(a->heap);
	free(a->reqs);
	tt_u64vec_free(&a->gaps);
	if (a->cp_res)
		for (i = 0; i < a->nreqs; i++)
			tt_cp_result_free(&a->cp_res[i]);
	free(a->cp_res);
	free(a->cp_reqs);
	tt_critpath_free(a->cp);
	free(a);
}

/* ---- accessors ---- */

size_t tt_analyzer_nrequests(const struct tt_analyzer *a)
{
	return a->nreqs;
}

const struct tt_request *tt_analyzer_request(const struct tt_analyzer *a,
					     size_t i)
{
	return i < a->nreqs ? &a->reqs[i].r : NULL;
}

const __u64 *tt_analyzer_itl(const struct tt_analyzer *a, size_t *n)
{
	*n = a->finished ? a->itl_complete_n : 0;
	return *n ? a->gaps.v : NULL;
}

const __u64 *tt_analyzer_request_itl(const struct tt_analyzer *a, size_t i,
				     size_t *n)
{
	*n = i < a->nreqs ? a->reqs[i].itl_n : 0;
	return *n ? a->gaps.v + a->reqs[i].itl_off : NULL;
}

__u64 tt_analyzer_events(const struct tt_analyzer *a)
{
	return a->st.events;
}

__u64 tt_analyzer_lost_cpu(const struct tt_analyzer *a, unsigned int cpu)
{
	return cpu < TT_LOST_CPUS ? a->lost_cpu[cpu] : 0;
}

__u64 tt_analyzer_lost(const struct tt_analyzer *a)
{
	return a->st.lost;
}

void tt_analyzer_stats(const struct tt_analyzer *a,
		       struct tt_analyzer_stats *st)
{
	*st = a->st;
}

const char *tt_analyzer_comm(const struct tt_analyzer *a, __u32 tid)
{
	return map_get(&a->comms, tid);
}

int tt_analyzer_add_procs(struct tt_analyzer *a,
			  const struct tt_proc_info *procs, size_t n)
{
	struct tt_event ev;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = mark_traced(a, procs[i].tgid);
		if (err)
			return err;
		if (!procs[i].tid || !procs[i].comm[0] ||
		    map_get(&a->comms, procs[i].tid))
			continue;
		err = set_comm(a, procs[i].tid, procs[i].comm);
		if (err)
			return err;
		/* the names the timelines know come from COMM records */
		memset(&ev, 0, sizeof(ev));
		ev.h.type = TT_EV_COMM;
		ev.h.tgid = procs[i].tgid;
		ev.h.tid = procs[i].tid;
		memcpy(ev.comm.comm, procs[i].comm, TT_COMM_LEN);
		err = tt_critpath_add(a->cp, &ev);
		if (err)
			return err;
	}
	return 0;
}

int tt_analyzer_add_devices(struct tt_analyzer *a,
			    const struct tt_dev_info *devs, size_t n)
{
	size_t i;
	int err;

	/* FIFOs standing in for a device have no rdev: known by inode */
	for (i = 0; i < n; i++) {
		err = tt_critpath_add_gpu_device(a->cp, &devs[i]);
		if (err)
			return err;
	}
	return 0;
}

const struct tt_cp_result *tt_analyzer_cp_result(const struct tt_analyzer *a,
						 size_t i)
{
	return a->cp_res && i < a->nreqs ? &a->cp_res[i] : NULL;
}

const struct tt_cp_request *tt_analyzer_cp_request(const struct tt_analyzer *a,
						   size_t i)
{
	return a->cp_reqs && i < a->nreqs ? &a->cp_reqs[i] : NULL;
}

const struct tt_critpath *tt_analyzer_critpath(const struct tt_analyzer *a)
{
	return a->cp;
}

const char *tt_incomplete_str(__u32 incomplete, char *buf, size_t len)
{
	static const char *const names[TT_INC_NBITS] = {
		"no-arrive", "no-read",		  "no-response",
		"no-wire",   "closed-mid-stream", "open-at-end",
		"lost",	     "no-path",		  "error",
		"no-token",  "pipelined",
	};

	if (len && !incomplete)
		snprintf(buf, len, "complete");
	else
		tt_bit_names(buf, len, incomplete, names, TT_INC_NBITS);
	return buf;
}
