/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The analyzer: plain C over the event stream (no BPF, no globals). It
 * rebuilds each request of the traced server's connections (DESIGN §3).
 * Events may arrive slightly out of timestamp order (the ring buffer is
 * shared by all CPUs); the analyzer reorders them within a window.
 */
#ifndef TT_ANALYZER_H
#define TT_ANALYZER_H

#include <stdbool.h>
#include <stddef.h>
#include "event.h"

struct tt_request {
	__u64 id; /* 1, 2, ... in order of t_arrive */
	__u64 sk;
	__u16 family;
	__u16 rport; /* the peer (client) */
	__u16 lport;
	__u8 raddr[16];
	__u32 tgid; /* server process and thread that first wrote the body */
	__u32 writer_tid;
	__u64 t_arrive; /* 0 when unknown */
	__u64 t_read; /* last read before the response began */
	__u64 t_headers; /* first send of the status line, 0 if none */
	__u64 t_first_write; /* first token-carrying send (syscall entry) */
	__u64 t_wire; /* that send's first byte reached the device */
	__u64 t_last_write; /* last token-carrying send */
	__u64 t_end; /* end of response (DONE, close, next request), 0 if none */
	__u64 ttft; /* t_wire - t_arrive, 0 unless both known */
	__u32 tokens; /* token-carrying events */
	__u64 tpot; /* (t_last_write - t_first_write) / (tokens - 1) */
	__u64 bytes_in, bytes_out;
	bool complete; /* every timestamp above backed by events, no loss */
	bool closed_mid_stream;
	bool lost; /* overlaps a window of lost records */
	__u32 incomplete; /* TT_INC_* bits saying why; 0 when complete */
};

/* tt_request.incomplete */
#define TT_INC_NO_ARRIVE (1u << 0) /* first bytes not seen arriving */
#define TT_INC_NO_READ (1u << 1) /* no read of the request seen */
#define TT_INC_NO_RESPONSE (1u << 2) /* no body send */
#define TT_INC_NO_WIRE (1u << 3) /* first body bytes never seen on the wire */
#define TT_INC_CLOSED_MID_STREAM (1u << 4) /* stream closed before its end */
#define TT_INC_OPEN_AT_END (1u << 5) /* still going when the trace ended */
#define TT_INC_LOST (1u << 6) /* overlaps a window of lost records */

/* Reorder window: events are released in timestamp order once they are
 * this much older than the newest event seen. */
#define TT_REORDER_WINDOW_NS 10000000ULL
/* A finished response waits this long (trace time) for the XMIT of its
 * first body byte before it is closed without t_wire. */
#define TT_WIRE_WAIT_NS 1000000000ULL

struct tt_analyzer_stats {
	__u64 events; /* events fed */
	__u64 late; /* arrived older than the reorder window allowed */
	__u64 orphans; /* socket events of no known connection (ignored) */
	__u64 stray_sends; /* sends with no request in progress (ignored) */
	__u64 conns; /* connections seen */
	__u64 lost; /* records lost (sum of TT_EV_LOST counts) */
	__u64 lost_windows; /* TT_EV_LOST records */
};

struct tt_analyzer;

struct tt_analyzer *tt_analyzer_new(void);
/* Feeds one event; returns 0 or -ENOMEM (-EINVAL after finish). */
int tt_analyzer_add(struct tt_analyzer *a, const struct tt_event *ev);
/* Drains the reorder window and closes requests still open at the end.
 * Then numbers the requests 1, 2, ... in order of t_arrive (or of their
 * first event when t_arrive is unknown) and sorts them by id. */
void tt_analyzer_finish(struct tt_analyzer *a);
void tt_analyzer_free(struct tt_analyzer *a);

/* Finished requests: in id order after finish; before it, in the order
 * they ended, with provisional ids (order of their first read or send).
 * A returned pointer stays valid until the next add or finish. */
size_t tt_analyzer_nrequests(const struct tt_analyzer *a);
const struct tt_request *tt_analyzer_request(const struct tt_analyzer *a,
					     size_t i);
/* Every inter-token gap of complete requests, for ITL percentiles, in
 * request id order. Valid after tt_analyzer_finish (before: n = 0). */
const __u64 *tt_analyzer_itl(const struct tt_analyzer *a, size_t *n);
/* The inter-token gaps of request i (complete or not), in send order. */
const __u64 *tt_analyzer_request_itl(const struct tt_analyzer *a, size_t i,
				     size_t *n);
__u64 tt_analyzer_events(const struct tt_analyzer *a);
__u64 tt_analyzer_lost(const struct tt_analyzer *a); /* records lost */
void tt_analyzer_stats(const struct tt_analyzer *a,
		       struct tt_analyzer_stats *st);
/* Latest name of thread tid (FORK, COMM records), or NULL if unknown. */
const char *tt_analyzer_comm(const struct tt_analyzer *a, __u32 tid);

/* The TT_INC_* bits as "no-wire,lost" (or "complete" for 0) in buf;
 * returns buf. */
const char *tt_incomplete_str(__u32 incomplete, char *buf, size_t len);

#endif /* TT_ANALYZER_H */
