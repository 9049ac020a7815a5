/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Private to the analyzer (analyzer.c: requests and connections; results.c:
 * attribution and the read API): its state. */
#ifndef TT_ANALYZER_INT_H
#define TT_ANALYZER_INT_H

#include "analyzer.h"
#include "containers.h"
#include "golift.h"
#include "reorder.h"
#include "stats.h"

/* XMIT ranges kept per connection, to match a SEND that comes after them
 * (on loopback the skb reaches the device inside the send). */
#define XMIT_RING 64
/* How often (trace time) finished responses are checked for an XMIT that
 * never came. */
#define SWEEP_EVERY_NS 100000000ULL

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
	struct wire_wait last_tok; /* the latest token send */
	struct wire_wait other; /* the first untyped body send */
	__u64 other_ts_enter;
	__u32 other_tid, other_tgid;
	__u64 last_tok_enter;
	bool streaming; /* SSE or chunked framing seen */
	bool close_delim; /* its body ends at the connection's close */
	bool done; /* end-of-stream send seen */
	bool answered; /* a status line or body send seen */
	bool h2_read; /* HTTP/2: a read longer than the connection's frames */
	bool tls; /* on an encrypted connection */
	/* answered so far only by encrypted records sent outside SSL_write:
	 * a handshake's, a ticket's, an alert's */
	bool tls_answered;
	/* began with a handshake's last message alone (TLS 1.3's Finished,
	 * when the server sent no tickets after it: Go); the next arrival,
	 * the request's, when one came */
	bool tls_fin;
	__u64 t_after_fin;
	/* buffers kept across resets: */
	struct tt_u64vec gaps; /* inter-token gaps between the sends' entries */
	/* every token send's first byte on the wire, for ITL there; the ones
	 * before tw_next are settled */
	struct wire_wait *tw;
	size_t tw_n, tw_cap, tw_next;
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
	/* a traced process on this host sent on it: its requests are hops */
	bool hop;
	bool tls; /* the server sent a TLS record on it: encrypted */
	/* HTTP/2 (its server's sends are frames): bytes that arrive while a
	 * response goes out are its stream's or the connection's frames */
	bool h2;
	/* its streams were seen interleaved (TT_SEND_F_H2_MUX): from then
	 * on its requests are told apart by no frame of theirs */
	bool h2_mux;
	__u64 first_start; /* its first request's start (had_request) */
	__u64 unread; /* bytes queued at the latest DATA_READY, less reads */
	__u64 last_send_ts; /* hdr.ts of the latest send */
	bool have_tail;
	enum conn_state state;
	struct live_req cur;
	struct live_req tail; /* ended, waiting for its t_wire */
	unsigned int ring_next, ring_n;
	/* pushes left before the ring is in time order again (an XMIT
	 * came out of order); 0: it is, and a search can stop early */
	unsigned int ring_disorder;
	struct xmit_rec ring[XMIT_RING];
};

/* A finished request. */
struct req_rec {
	struct tt_request r;
	__u64 t_last_arrive; /* its last bytes in the kernel before t_read */
	__u64 start, end;
	__u64 end_max; /* max end of this and every earlier record */
	__u64 seq;
	size_t itl_off, itl_n; /* its gaps in tt_analyzer.gaps and .egaps */
	bool walked; /* res holds its walk (streaming: docs/design.md §3.5) */
	struct tt_cp_result res;
};

struct tt_analyzer {
	struct tt_reorder win; /* events on their way to handle() */
	struct an_golift golift; /* then Go programs' into goroutines' */

	__u64 now; /* newest timestamp handled */
	__u64 next_sweep;
	size_t ntails;
	__u64 next_seq;

	struct tt_hmap conns; /* sk -> struct conn */
	/* processes that read a request: only their sends make hops (a load
	 * generator traced beside its server makes none) */
	struct tt_hmap server_tgids;
	/* the hop connections by their peer's (the gateway's) port -> sk */
	struct tt_hmap hop_ports;

	struct req_rec *reqs;
	size_t nreqs, capreqs;
	/* every finished request's gaps: at the wire when its every token
	 * send's XMIT was seen (else as emitted), and as emitted */
	struct tt_u64vec gaps, egaps;
	size_t itl_complete_n; /* after finish: complete ones come first */

	struct tt_analyzer_stats st;
	__u64 lost_cpu[TT_LOST_CPUS];
	bool finished;

	/* streaming (tt_analyzer_stream): walk the ready requests and trim
	 * the timelines after every this many events or more (0: never),
	 * next after handled reaches stream_next */
	size_t stream_every;
	__u64 handled, stream_next;

	struct tt_critpath *cp;
	__u32 last_tgid; /* the latest tgid marked traced: most repeat it */
	/* after finish: the walk's input and output, one entry per request */
	struct tt_cp_request *cp_reqs;
	struct tt_cp_result *cp_res;
};

/* tgids.c: tgid's threads have timelines (-ENOMEM, else 0); so have
 * those ev shows at work */
int an_mark_traced(struct tt_analyzer *a, __u32 tgid);
int an_mark_event_tgids(struct tt_analyzer *a, const struct tt_event *ev);
/* results.c: each request's walk taken into it; gaps grouped */
int an_attribute(struct tt_analyzer *a);
int an_regroup_gaps(struct tt_analyzer *a);
/* results.c: the ready requests walked, what they alone reached dropped */
int an_stream_step(struct tt_analyzer *a);

/* tgids.c: process tgid read a request (-ENOMEM, else 0) */
int an_server_read(struct tt_analyzer *a, __u32 tgid);
/* hopconn.c: bytes of ev on c a traced server process on this host sent */
bool an_sent_by_server(const struct tt_analyzer *a, const struct conn *c,
		       const struct tt_event *ev);
/* hopconn.c: c carries hops (its peer port known: -ENOMEM, else 0); c goes;
 * a gateway's read of its runner's answer (a TT_F_HOP_REPLY RECV: 0) */
int an_hop_conn(struct tt_analyzer *a, struct conn *c);
void an_hop_conn_gone(struct tt_analyzer *a, const struct conn *c);
int an_hop_reply(struct tt_analyzer *a, const struct tt_event *ev);

/* wire.c: w armed for the byte at seq of c sent from ts_enter on (settled
 * at once by an XMIT already seen); an XMIT settles w (true) or the token
 * sends of q it carries; ITL (into out, q's gaps long) and TPOT at the
 * wire, the emit figures where the wire's are not known */
void an_wire_arm(struct wire_wait *w, const struct conn *c, __u32 seq,
		 __u64 ts_enter);
bool an_wire_check(struct wire_wait *w, const struct xmit_rec *x);
void an_tw_check(struct live_req *q, const struct xmit_rec *x);
void an_wire_itl(struct tt_request *r, struct live_req *q, __u64 *out);
void an_wire_tpot(struct tt_request *r, const struct live_req *q);

#endif /* TT_ANALYZER_INT_H */
