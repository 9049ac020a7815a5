/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The analyzer: rebuilds the requests of the traced server's connections
 * from the event stream (docs/design.md §3.1).
 *
 * Events pass through the reorder window (reorder.c) and are then handled
 * in timestamp order. Each open connection has a small state machine:
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
 * request is walked there in one pass, and results.c takes the verdicts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer.h"
#include "analyzer_int.h"
#include "containers.h"
#include "stats.h"
#include "util.h"

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

void tt_analyzer_stream(struct tt_analyzer *a, size_t every)
{
	a->stream_every = every;
	a->stream_next = a->handled + every;
}

/* ---- requests ---- */

/* q's first or last token send has not reached the wire yet. */
static bool wire_waits(const struct live_req *q)
{
	return q->tok.pending || q->last_tok.pending;
}

/* Clears q for a new request, keeping its buffers. */
static void req_reset(struct live_req *q)
{
	struct tt_u64vec gaps = q->gaps;
	struct wire_wait *tw = q->tw;
	size_t tw_cap = q->tw_cap;

	memset(q, 0, sizeof(*q));
	gaps.n = 0;
	q->gaps = gaps;
	q->tw = tw;
	q->tw_cap = tw_cap;
}

static void live_free(struct live_req *q)
{
	tt_u64vec_free(&q->gaps);
	free(q->tw);
	q->tw = NULL;
	q->tw_cap = q->tw_n = 0;
}

static void req_begin(struct conn *c, __u64 ts, __u64 t_arrive)
{
	struct live_req *q = &c->cur;

	req_reset(q);
	q->start = t_arrive ? t_arrive : ts;
	q->r.t_arrive = t_arrive;
	q->t_last_ready = t_arrive ? ts : 0;
	q->r.sk = c->sk;
	q->r.family = c->family;
	q->r.rport = c->rport;
	q->r.lport = c->lport;
	memcpy(q->r.raddr, c->raddr, sizeof(q->r.raddr));
	q->tls = c->tls;
	q->r.h2_mux = c->h2_mux;
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
	c->cur.r.conn_reused = c->had_request;
	if (!c->had_request)
		c->first_start = c->cur.start;
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

	if (rec_reserve(a) || tt_u64vec_reserve(&a->gaps, q->gaps.n) ||
	    tt_u64vec_reserve(&a->egaps, q->gaps.n))
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
	/* encrypted, and no plaintext of it: no token or end could be read,
	 * the why of the rest */
	if (q->tls && !r->tls)
		why = (why | TT_INC_TLS) & ~TT_INC_NO_TOKEN;
	if (why & TT_INC_NOT_TOKENS)
		why &= ~(TT_INC_NO_RESPONSE | TT_INC_NO_WIRE);
	r->ttft = 0;
	if (r->t_arrive && r->t_wire) {
		if (r->t_wire >= r->t_arrive)
			r->ttft = r->t_wire - r->t_arrive;
		else
			why |= TT_INC_NO_WIRE; /* not this request's bytes */
	}
	an_wire_tpot(r, q);
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
	rec->walked = false;
	memset(&rec->res, 0, sizeof(rec->res));
	rec->itl_off = a->gaps.n;
	rec->itl_n = q->gaps.n;
	if (q->gaps.n)
		memcpy(a->egaps.v + a->egaps.n, q->gaps.v,
		       q->gaps.n * sizeof(*q->gaps.v));
	an_wire_itl(&rec->r, q, a->gaps.v + a->gaps.n);
	a->gaps.n += q->gaps.n;
	a->egaps.n += q->gaps.n;
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
	if (c->hop)
		r->incomplete |= TT_INC_HOP;
	/* a stream without its end, or headers without a body; a body that
	 * runs to the close ends there */
	if (how == END_CLOSE && q->answered && !q->done && !q->close_delim &&
	    (q->streaming || !q->other.armed))
		r->closed_mid_stream = true;
	r->end = how == END_DONE  ? TT_END_DONE :
		 how == END_NEXT  ? TT_END_NEXT :
		 how == END_CLOSE ? TT_END_CLOSE :
				    TT_END_OPEN;
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
	if (how == END_FINISH || !wire_waits(q))
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
	tt_hmap_del(&a->conns, c->sk, 0);
	an_hop_conn_gone(a, c);
	live_free(&c->cur);
	live_free(&c->tail);
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
	struct conn *c = tt_hmap_ptr(&a->conns, o->sk);
	int err = 0;

	if (c && !c->closed && same_peer(c, o))
		return 0; /* announced again (the BPF side's LRU forgot it) */
	if (c) {
		/* the socket was reused by a new connection */
		err = conn_close(a, c, ev->h.ts);
		c = tt_hmap_ptr(&a->conns, o->sk);
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
	if (tt_hmap_put_ptr(&a->conns, c->sk, c)) {
		free(c);
		return -ENOMEM;
	}
	a->st.conns++;
	return 0;
}

/* TLS 1.3's client Finished (with its ChangeCipherSpec) is at most this
 * long; a request's first record is longer */
#define TLS_FINISHED_MAX 80

static int on_data_ready(struct tt_analyzer *a, struct conn *c,
			 const struct tt_event *ev)
{
	__u64 queued = ev->sock.len > 0 ? ev->sock.len : 0, ts = ev->h.ts;
	bool news = !c->peer_fin || queued > c->unread + 1;
	__u64 t_dev = ts;
	__u32 sender;
	bool fin;
	int err;

	/* the device had them first: a backlog's wait is the request's too,
	 * though never before the last answer on the connection went out */
	if (ev->h.type == TT_EV_DATA_READY_DEV && ev->sock_dev.ts_dev < ts &&
	    ts - ev->sock_dev.ts_dev <= TT_DEV_LEAD_MAX_NS)
		t_dev = ev->sock_dev.ts_dev > c->last_send_ts ?
				ev->sock_dev.ts_dev :
				(c->last_send_ts < ts ? c->last_send_ts : ts);

	c->unread = queued;
	/* after the peer's FIN only its own segment can bring bytes; the FIN
	 * alone (one more in the queue) is no request's arrival */
	if (!news)
		return 0;
	/* a traced gateway's call: the thread that sent it */
	sender = an_sent_by_server(a, c, ev) ? ev->h.tid : 0;
	if (sender && (err = an_hop_conn(a, c)))
		return err;
	switch (c->state) {
	case CONN_IDLE:
		req_begin(c, ts, t_dev);
		c->cur.r.hop_sender_tid = sender;
		c->cur.r.hop_sender_tgid = sender ? ev->h.tgid : 0;
		return 0;
	case CONN_ARRIVED:
	case CONN_RECEIVING:
		c->cur.t_last_ready = ts; /* more of the same request */
		if (c->cur.tls_fin && !c->cur.t_after_fin)
			c->cur.t_after_fin = t_dev;
		return 0;
	case CONN_RESPONDING:
		/* a WINDOW_UPDATE, a PING: not a request; but a handshake's
		 * answer (TLS 1.3's tickets) ended its exchange */
		if (c->h2 && !c->cur.tls_answered)
			return 0;
		fin = c->cur.tls_answered && queued <= TLS_FINISHED_MAX;
		err = req_end(a, c, ts, END_NEXT);
		req_begin(c, ts, t_dev);
		c->cur.tls_fin = fin;
		c->cur.r.hop_sender_tid = sender;
		c->cur.r.hop_sender_tgid = sender ? ev->h.tgid : 0;
		return err;
	}
	return 0;
}

/*
 * An exchange only a handshake's records answered (tls_answered), whose
 * latest bytes were the next request's: they came with or after the
 * client's last handshake message, before the server sent its tickets.
 * It ends; the request begins at their arrival, read by the exchange's
 * latest read when read (a memory BIO's loop reads all there is at once).
 */
static int tls_next(struct tt_analyzer *a, struct conn *c, __u64 ts, bool read)
{
	struct tt_request was = c->cur.r;
	__u64 ready = c->cur.t_last_ready;
	int err = req_end(a, c, ts, END_NEXT);

	req_begin(c, ready, ready);
	if (!read)
		return err;
	req_materialize(a, c);
	c->cur.r.t_read = c->cur.r.t_first_read = was.t_read;
	c->cur.t_last_arrive = ready;
	c->cur.r.reader_tid = was.reader_tid;
	c->cur.r.tgid = was.tgid;
	return err;
}

/* An HTTP/2 read this short after a longer one is the connection's frames
 * (a PING's ACK 17 bytes, a WINDOW_UPDATE 13, both 30, SETTINGS' ACK 9),
 * not the stream's request: HEADERS and a message run longer */
#define H2_CONTROL_READ 40

/* A read of the current request's bytes: the latest is its t_read */
static void req_read(struct conn *c, const struct tt_event *ev)
{
	/* the exchange's first bytes were the handshake's Finished alone:
	 * the request came in after them */
	if (c->cur.tls_fin && c->cur.t_after_fin) {
		c->cur.start = c->cur.r.t_arrive = c->cur.t_after_fin;
		c->cur.r.t_first_read = 0;
		c->cur.tls_fin = false;
	}
	if (c->h2 && c->cur.h2_read && ev->sock.len <= H2_CONTROL_READ) {
		c->cur.r.bytes_in += ev->sock.len;
		return;
	}
	if (c->h2 && ev->sock.len > H2_CONTROL_READ)
		c->cur.h2_read = true;
	c->cur.r.t_read = ev->h.ts;
	if (!c->cur.r.t_first_read)
		c->cur.r.t_first_read = ev->h.ts;
	c->cur.t_last_arrive = c->cur.t_last_ready;
	c->cur.r.reader_tid = ev->h.tid;
	c->cur.r.bytes_in += ev->sock.len;
	if (!c->cur.r.tgid)
		c->cur.r.tgid = ev->h.tgid;
}

static int on_recv(struct tt_analyzer *a, struct conn *c,
		   const struct tt_event *ev)
{
	int err = 0;

	if (ev->sock.len <= 0)
		return 0; /* EOF, EAGAIN, errors */
	if (an_server_read(a, ev->h.tgid))
		return -ENOMEM;
	c->unread = c->unread > (__u64)ev->sock.len ? c->unread - ev->sock.len :
						      0;
	if (c->h2 && c->state != CONN_RECEIVING) {
		/* HTTP/2 frames read mid-response belong to it; a stream is
		 * a request once it is answered (a GOAWAY read is none) */
		if (c->state == CONN_ARRIVED)
			req_read(c, ev);
		return 0;
	}
	if (c->state == CONN_RESPONDING && c->cur.tls_answered) {
		/* bytes that came before a handshake's last records (its
		 * tickets) were sent */
		err = tls_next(a, c, ev->h.ts, false);
	} else if (c->state == CONN_RESPONDING) {
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
	req_read(c, ev);
	return err;
}

static void first_token(struct conn *c, const struct tt_event *ev)
{
	struct tt_request *r = &c->cur.r;

	r->t_first_write = ev->send.ts_enter;
	r->writer_tid = ev->h.tid;
	r->tgid = ev->h.tgid;
	an_wire_arm(&c->cur.tok, c, ev->send.seq, ev->send.ts_enter);
	if (!c->cur.tok.pending)
		r->t_wire = c->cur.tok.t_wire;
	c->cur.last_tok = c->cur.tok;
}

/* A token-carrying send: the first one is the request's first token; each
 * one's first byte is waited for on the wire, for ITL there. */
static int token_send(struct conn *c, const struct tt_event *ev)
{
	const struct tt_send *s = &ev->send;
	struct live_req *q = &c->cur;
	struct tt_request *r = &q->r;
	struct wire_wait *w;

	if (tt_grow((void **)&q->tw, &q->tw_cap, q->tw_n + 1, sizeof(*q->tw)))
		return -ENOMEM;
	if (!r->t_first_write) {
		first_token(c, ev);
	} else {
		/* TPOT at the wire needs only the latest one's */
		an_wire_arm(&q->last_tok, c, s->seq, s->ts_enter);
		if (tt_u64vec_push(&q->gaps,
				   s->ts_enter > q->last_tok_enter ?
					   s->ts_enter - q->last_tok_enter :
					   0))
			return -ENOMEM;
	}
	w = &q->tw[q->tw_n++];
	*w = q->last_tok;
	r->tokens += s->tokens ? s->tokens : 1;
	r->t_last_write = s->ts_enter;
	q->last_tok_enter = s->ts_enter;
	return 0;
}

/* c's HTTP/2 streams interleave (TT_SEND_F_H2_MUX): its requests are
 * among them, the open one and every one after, and those another's
 * HEADERS ended (END_NEXT), waiting for their wire or filed since its
 * first began; one that its trailers ended went alone */
static void h2_mux_mark(struct tt_analyzer *a, struct conn *c)
{
	size_t i = a->nreqs;
	struct tt_request *r;

	c->h2_mux = true;
	if (c->state != CONN_IDLE)
		c->cur.r.h2_mux = true;
	if (c->have_tail && c->tail.r.end == TT_END_NEXT)
		c->tail.r.h2_mux = true;
	while (c->had_request && i-- > 0 &&
	       a->reqs[i].end_max >= c->first_start) {
		r = &a->reqs[i].r;
		if (r->sk == c->sk && a->reqs[i].start >= c->first_start &&
		    r->end == TT_END_NEXT)
			r->h2_mux = true;
	}
}

static int send_body(struct tt_analyzer *a, struct conn *c,
		     const struct tt_event *ev)
{
	const struct tt_send *s = &ev->send;
	struct live_req *q = &c->cur;
	struct tt_request *r = &q->r;
	/* HTTP/2's own frames (SETTINGS, a PING's ACK) answer no request */
	bool h2_own = (s->flags & TT_SEND_F_H2) && s->cls == TT_SEND_OTHER &&
		      !(s->flags & TT_SEND_F_HEADERS);
	bool status_line;
	int err;

	if (s->len <= 0)
		return 0;
	if (s->flags & (TT_SEND_F_TLS | TT_SEND_F_TLS_PLAIN)) {
		/* the handshake's first reply: every request since and from
		 * now on is encrypted */
		c->tls = true;
		q->tls = true;
	}
	if (s->flags & TT_SEND_F_TLS) {
		/* nor do records sent before the bytes that came since were
		 * read: the last handshake's (OpenSSL's second ticket, after
		 * the client's request arrived) */
		if (c->state == CONN_IDLE ||
		    (c->state == CONN_ARRIVED && c->had_request))
			return 0;
		r->bytes_out += s->len;
		if (q->answered)
			return 0;
		/* a handshake's records answer the bytes so far: no body */
		req_materialize(a, c);
		c->state = CONN_RESPONDING;
		q->answered = true;
		q->tls_answered = true;
		return 0;
	}
	if ((s->flags & TT_SEND_F_TLS_PLAIN) && q->tls_answered && !h2_own) {
		/* the request came with the handshake's end, read with it */
		err = tls_next(a, c, ev->h.ts, true);
		if (err)
			return err;
		q = &c->cur;
		r = &q->r;
	}
	if ((s->flags & TT_SEND_F_TLS_PLAIN) && c->state != CONN_IDLE &&
	    !h2_own)
		r->tls = true;
	if (s->flags & TT_SEND_F_INTERIM) {
		/* "100 Continue" is no response */
		if (c->state != CONN_IDLE)
			r->bytes_out += s->len;
		return 0;
	}
	if (s->flags & TT_SEND_F_H2)
		c->h2 = true;
	if ((s->flags & TT_SEND_F_H2_MUX) && !c->h2_mux)
		h2_mux_mark(a, c);
	/* the connection's own frames (SETTINGS, a PING's ACK, one sent as
	 * it closed and classified without its carry) answer nothing */
	if (c->h2 && s->cls == TT_SEND_OTHER &&
	    !(s->flags & TT_SEND_F_HEADERS)) {
		if (c->state != CONN_IDLE)
			r->bytes_out += s->len;
		return 0;
	}
	status_line = (s->flags & TT_SEND_F_HEADERS) ||
		      s->cls == TT_SEND_HEADERS;
	/* e.g. uvicorn's "0\r\n\r\n" after "data: [DONE]"; or the last
	 * send of the response before, begun before the next request's
	 * arrival that its own delivery prompted (the client read the end
	 * while the sender was still in the syscall) */
	if (!status_line &&
	    (c->state == CONN_IDLE ||
	     (c->state == CONN_ARRIVED && s->ts_enter < q->start))) {
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
	if (s->flags & (TT_SEND_F_SSE | TT_SEND_F_CHUNKED | TT_SEND_F_H2))
		q->streaming = true;
	if (s->flags & TT_SEND_F_CLOSE_DELIM)
		q->close_delim = true;
	switch (s->cls) {
	case TT_SEND_TOKEN:
	case TT_SEND_TOKEN_DONE:
		err = token_send(c, ev);
		if (err)
			return err;
		break;
	case TT_SEND_DONE:
	case TT_SEND_HEADERS:
		break;
	default:
		/* a body with no token framing: the non-streaming case */
		if (!q->other.armed) {
			an_wire_arm(&q->other, c, s->seq, s->ts_enter);
			q->other_ts_enter = s->ts_enter;
			q->other_tid = ev->h.tid;
			q->other_tgid = ev->h.tgid;
		}
		break;
	}
	/* [DONE], the last chunk, or the Content-Length reached */
	if (s->cls != TT_SEND_DONE && s->cls != TT_SEND_TOKEN_DONE &&
	    !(s->flags & TT_SEND_F_END))
		return 0;
	q->done = true;
	return req_end(a, c, ev->h.ts, END_DONE);
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
	const struct xmit_rec *newest =
		&c->ring[(c->ring_next + XMIT_RING - 1) % XMIT_RING];
	int err;

	if (c->ring_n && ev->h.ts < newest->ts)
		c->ring_disorder = XMIT_RING;
	else if (c->ring_disorder)
		c->ring_disorder--;
	x->ts = ev->h.ts;
	x->seq = ev->xmit.seq;
	x->end_seq = ev->xmit.end_seq;
	c->ring_next = (c->ring_next + 1) % XMIT_RING;
	if (c->ring_n < XMIT_RING)
		c->ring_n++;
	if (c->state != CONN_IDLE) {
		if (an_wire_check(&c->cur.tok, x))
			c->cur.r.t_wire = x->ts;
		an_wire_check(&c->cur.last_tok, x);
		an_wire_check(&c->cur.other, x);
		an_tw_check(&c->cur, x);
	}
	if (!c->have_tail)
		return 0;
	if (an_wire_check(&c->tail.tok, x))
		c->tail.r.t_wire = x->ts;
	an_wire_check(&c->tail.last_tok, x);
	an_tw_check(&c->tail, x);
	if (wire_waits(&c->tail))
		return 0;
	err = tail_finalize(a, c);
	if (c->closed)
		conn_free(a, c);
	return err;
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
		if (!a->conns.e[i].used)
			continue;
		c = (struct conn *)(uintptr_t)a->conns.e[i].val;
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
		if (!a->conns.e[i].used)
			continue;
		c = (struct conn *)(uintptr_t)a->conns.e[i].val;
		if (!c->have_tail ||
		    a->now - c->tail.r.t_end <= TT_WIRE_WAIT_NS)
			continue;
		err = tail_finalize(a, c);
		if (c->closed && !err)
			err = tt_u64vec_push(&gone, c->sk);
	}
	/* freed after the walk: deleting shifts the map's slots */
	for (i = 0; i < gone.n; i++) {
		c = tt_hmap_ptr(&a->conns, gone.v[i]);
		if (c)
			conn_free(a, c);
	}
	tt_u64vec_free(&gone);
	return err;
}

static int handle(struct tt_analyzer *a, const struct tt_event *ev)
{
	struct conn *c;
	int err;

	if (ev->h.ts > a->now)
		a->now = ev->h.ts;
	err = an_mark_event_tgids(a, ev);
	if (!err)
		err = tt_critpath_add(a->cp, ev);
	if (err)
		return err;
	/* a gateway reads its runner's answer on a client socket (§4.11) */
	if (ev->h.type == TT_EV_RECV && (ev->h.flags & TT_F_HOP_REPLY))
		return an_hop_reply(a, ev);
	switch (ev->h.type) {
	case TT_EV_CONN_OPEN:
		return on_conn_open(a, ev);
	case TT_EV_LOST:
		on_lost(a, ev);
		return 0;
	case TT_EV_CONN_CLOSE:
	case TT_EV_DATA_READY:
	case TT_EV_DATA_READY_DEV:
	case TT_EV_RECV:
	case TT_EV_SEND:
	case TT_EV_XMIT:
		break;
	default:
		return 0;
	}
	/* sk is the first field of every socket payload */
	c = tt_hmap_ptr(&a->conns, ev->sock.sk);
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
	case TT_EV_DATA_READY_DEV:
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

/* Every event released in order; now and then a streaming step. */
static int handle_stream(struct tt_analyzer *a, const struct tt_event *ev)
{
	int err = handle(a, ev);

	if (!err && a->stream_every && ++a->handled >= a->stream_next)
		err = an_stream_step(a);
	return err;
}

static int handle_lifted(void *ctx, const struct tt_event *ev)
{
	return handle_stream(ctx, ev);
}

static int handle_released(void *ctx, const struct tt_event *ev)
{
	struct tt_analyzer *a = ctx;

	return an_golift(&a->golift, ev, handle_lifted, a);
}

int tt_analyzer_add(struct tt_analyzer *a, const struct tt_event *ev)
{
	if (a->finished)
		return -EINVAL;
	a->st.events++;
	return tt_reorder_add(&a->win, ev, handle_released, a);
}

/* ---- the end ---- */

/* The first error of several steps that each go on after one. */
static void keep_err(int *err, int e)
{
	if (!*err)
		*err = e;
}

static int cmp_rec(const void *x, const void *y)
{
	const struct req_rec *p = x, *q = y;

	if (p->start != q->start)
		return p->start < q->start ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

int tt_analyzer_finish(struct tt_analyzer *a)
{
	struct conn *c;
	size_t i;
	int err;

	if (a->finished)
		return 0;
	/* errors below only lose requests: the report says what it has,
	 * and the caller learns that memory ran out */
	err = tt_reorder_drain(&a->win, handle_released, a);
	for (i = 0; i < a->conns.cap; i++) {
		if (!a->conns.e[i].used)
			continue;
		c = (struct conn *)(uintptr_t)a->conns.e[i].val;
		keep_err(&err, req_end(a, c, a->now, END_FINISH));
		if (c->have_tail) {
			c->tail.r.incomplete |= TT_INC_NO_WIRE;
			keep_err(&err, tail_finalize(a, c));
		}
		live_free(&c->cur);
		live_free(&c->tail);
		free(c);
	}
	tt_hmap_free(&a->conns);
	tt_hmap_free(&a->server_tgids);
	tt_hmap_free(&a->hop_ports);
	if (a->nreqs > 1)
		qsort(a->reqs, a->nreqs, sizeof(*a->reqs), cmp_rec);
	for (i = 0; i < a->nreqs; i++)
		a->reqs[i].r.id = i + 1;
	keep_err(&err, an_attribute(a));
	/* streaming: what is left of the timelines serves no walk now */
	if (a->stream_every)
		tt_critpath_trim(a->cp, UINT64_MAX);
	keep_err(&err, an_regroup_gaps(a));
	tt_reorder_free(&a->win);
	a->finished = true;
	return err;
}

void tt_analyzer_free(struct tt_analyzer *a)
{
	struct conn *c;
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->conns.cap; i++) {
		if (!a->conns.e[i].used)
			continue;
		c = (struct conn *)(uintptr_t)a->conns.e[i].val;
		live_free(&c->cur);
		live_free(&c->tail);
		free(c);
	}
	tt_hmap_free(&a->conns);
	tt_hmap_free(&a->server_tgids);
	tt_hmap_free(&a->hop_ports);
	tt_reorder_free(&a->win);
	an_golift_free(&a->golift);
	for (i = 0; i < a->nreqs; i++)
		tt_cp_result_free(&a->reqs[i].res);
	free(a->reqs);
	tt_u64vec_free(&a->gaps);
	tt_u64vec_free(&a->egaps);
	if (a->cp_res)
		for (i = 0; i < a->nreqs; i++)
			tt_cp_result_free(&a->cp_res[i]);
	free(a->cp_res);
	free(a->cp_reqs);
	tt_critpath_free(a->cp);
	free(a);
}
