/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The analyzer: plain C over the event stream (no BPF, no globals). It
 * rebuilds each request of the traced server's connections
 * (docs/design.md §3) and attributes its TTFT to stages along the critical
 * path (docs/design.md §4.2, done by critpath.h at tt_analyzer_finish).
 * Events may arrive slightly out of timestamp order (the ring buffer is
 * shared by all CPUs); the analyzer reorders them within a window
 * (reorder.h) and hands them on in timestamp order.
 */
#ifndef TT_ANALYZER_H
#define TT_ANALYZER_H

#include <stdbool.h>
#include <stddef.h>
#include "critpath.h"
#include "event.h"
#include "reorder.h"

struct tt_request {
	__u64 id; /* 1, 2, ... in order of t_arrive */
	__u64 sk;
	__u16 family;
	__u16 rport; /* the peer (client) */
	__u16 lport;
	__u8 raddr[16];
	__u32 tgid; /* server process and thread that first wrote the body */
	__u32 writer_tid;
	__u32 reader_tid; /* thread of the last read before the response */
	__u64 t_arrive; /* 0 when unknown */
	__u64 t_read; /* last read before the response began */
	__u64 t_first_read; /* its first read: a long upload's reads span */
	__u64 t_headers; /* first send of the status line, 0 if none */
	__u64 t_first_write; /* first token-carrying send (syscall entry) */
	__u64 t_wire; /* that send's first byte reached the device */
	__u64 t_last_write; /* last token-carrying send */
	__u64 t_end; /* end of response (DONE, close, next request), 0 if none */
	__u64 ttft; /* t_wire - t_arrive, 0 unless both known */
	__u32 tokens; /* token-carrying events */
	/*
	 * At the wire, as TTFT: (t_last_wire - t_wire) / (tokens - 1), when
	 * the last token send's first byte was seen on the device
	 * (tpot_at_wire); else the send-side figure, tpot_emit.
	 */
	__u64 tpot;
	__u64 tpot_emit; /* (t_last_write - t_first_write) / (tokens - 1) */
	__u64 t_last_wire; /* the last token send's first byte, 0 if unseen */
	bool tpot_at_wire;
	/* emitted apart, left together: the wire span is under half the
	 * emit span, by more than TT_BUNCH_NS (Nagle, a delayed ACK) */
	bool bunched;
	/* ITL (tt_analyzer_request_itl) at the wire: every token send's
	 * first byte was seen there; else the gaps are the emit ones */
	bool itl_at_wire;
	__u32 itl_bunched; /* gaps emitted apart that left together */
	__u8 end; /* enum tt_end: how the response ended */
	__u64 bytes_in, bytes_out;
	__u16 status; /* HTTP status of its response, 0 when none was seen */
	bool complete; /* every timestamp above backed by events, no loss */
	bool closed_mid_stream;
	/* its response read as the plaintext its TLS library was given
	 * (TT_SEND_F_TLS_PLAIN): the connection is encrypted */
	bool tls;
	bool lost; /* overlaps a window of lost records */
	bool conn_reused; /* an earlier request on its connection was seen */
	__u32 incomplete; /* TT_INC_* bits saying why; 0 when complete */
	/*
	 * The critical path (after tt_analyzer_finish): t_read <= t_enqueue
	 * <= t_dispatch <= t_token <= t_first_write (scheduler.queue lies in
	 * [t_enqueue, t_dispatch)) and stage_ns summing exactly to ttft
	 * whenever the path was walked (TT_CP_INC_NOT_WALKED clear in its
	 * tt_analyzer_cp_result), 0 otherwise.
	 * attributed: the walk completed, every nanosecond backed by events;
	 * a complete request is always attributed.
	 */
	__u64 t_enqueue, t_dispatch, t_token;
	__u64 gil_ns; /* of it, waits on CPython's GIL (inside the stages) */
	__u64 steal_ns; /* of it, the hypervisor's (inside the stages) */
	/* the read loop of the path's first storage wait to its last one's
	 * end, CPU and GIL waits in between included (tt_cp_result); 0, 0
	 * when none */
	__u64 t_storage_start, t_storage_end;
	__u64 stage_ns[TT_ST_MAX]; /* enum tt_stage */
	__u8 dispatch_rule; /* enum tt_cp_dispatch */
	__u8 enqueue_rule; /* enum tt_cp_enqueue */
	bool token_marker; /* t_token is a token marker's */
	bool attributed;
	/* a hop (TT_INC_HOP): the traced thread whose send brought its bytes
	 * (0: unknown); of a request whose path went through a hop: its id */
	__u32 hop_sender_tid, hop_sender_tgid;
	__u64 hop_id;
	/* a hop: the gateway's first read of its answer at or after its first
	 * token, and the thread (0, 0: not seen) */
	__u64 hop_read_t;
	__u32 hop_read_tid;
	/* on an HTTP/2 connection whose streams were multiplexed (a hop
	 * whose frames may be another stream's); of a request whose path
	 * went through such a hop: that hop may be another call's
	 * (docs/design.md §3.1, "HTTP/2") */
	bool h2_mux;
};

/* tt_request.end */
enum tt_end {
	TT_END_OPEN = 0, /* still going when the trace ended */
	TT_END_DONE, /* as its bytes say: [DONE], the last chunk, the
		      * Content-Length reached */
	TT_END_NEXT, /* the next request on the connection began */
	TT_END_CLOSE, /* the connection closed */
};
const char *tt_end_name(unsigned int end);

/* tt_request.incomplete */
#define TT_INC_NO_ARRIVE (1u << 0) /* first bytes not seen arriving */
#define TT_INC_NO_READ (1u << 1) /* no read of the request seen */
#define TT_INC_NO_RESPONSE (1u << 2) /* no body send */
#define TT_INC_NO_WIRE (1u << 3) /* first body bytes never seen on the wire */
#define TT_INC_CLOSED_MID_STREAM (1u << 4) /* stream closed before its end */
#define TT_INC_OPEN_AT_END (1u << 5) /* still going when the trace ended */
#define TT_INC_LOST (1u << 6) /* overlaps a window of lost records */
/* The critical-path walk did not complete for a reason of its own (it met
 * a thread with no scheduler events, or none were recorded); set only when
 * the bits above do not already explain it (TT_CP_INC_NOT_WALKED, _LOST,
 * _NO_READ follow from them). */
#define TT_INC_NO_PATH (1u << 7)
/* Answered, but not with tokens: counted apart, never in the TTFT/TPOT
 * percentiles (not even with --all). ERROR: a status other than 2xx;
 * NO_TOKEN: a response that ended with no token recognized. */
#define TT_INC_ERROR (1u << 8)
#define TT_INC_NO_TOKEN (1u << 9)
/* A response with no read of its own before it: its request came in the
 * bytes of an earlier one (HTTP pipelining), so its arrival is unknown. */
#define TT_INC_PIPELINED (1u << 10)
/* A hop: a request another traced process sent on loopback (a gateway's
 * call to its runner). Its time is inside the request that made it, whose
 * path goes through it (docs/design.md §4.11); it is no client's. */
#define TT_INC_HOP (1u << 11)
/* On a connection the server encrypts (a TLS record sent on it): its
 * response's framing and tokens cannot be read (docs/design.md §3.1). */
#define TT_INC_TLS (1u << 12)
#define TT_INC_NBITS 13
/* The bits that keep a request out of the percentiles even with --all. */
#define TT_INC_NOT_TOKENS \
	(TT_INC_ERROR | TT_INC_NO_TOKEN | TT_INC_HOP | TT_INC_TLS)

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

#define TT_LOST_CPUS 64 /* per-CPU drop counts kept for CPUs below this */

/* Tokens bunched at the wire differ from their emission by more than this. */
#define TT_BUNCH_NS 1000000ULL

struct tt_analyzer;

/* Records lost on cpu (TT_EV_LOST counts), for cpu < TT_LOST_CPUS; the
 * total stays exact for any CPU through tt_analyzer_lost(). */
__u64 tt_analyzer_lost_cpu(const struct tt_analyzer *a, unsigned int cpu);

struct tt_analyzer *tt_analyzer_new(void);
/* false: critical paths are walked for their stages, their segments are
 * not kept (tt_analyzer_cp_result's segs NULL). Default true. */
void tt_analyzer_keep_paths(struct tt_analyzer *a, bool keep);
/*
 * Streaming (docs/design.md §3.5): every `every` events or more (more as
 * the timelines left grow), walk each finished request that is ready
 * (tt_critpath_ready: its end 10 s behind the newest event) and drop the
 * timelines' records no request left to walk can reach. Results are the
 * whole-recording walk's; memory is bounded by the open requests, the
 * lookahead and `every`. The timelines left at the end are not whole:
 * leave it off (0, the default) for renderers that draw them (Perfetto).
 */
#define TT_STREAM_EVERY (1u << 18)
void tt_analyzer_stream(struct tt_analyzer *a, size_t every);
/*
 * The recording's process table (one entry per thread): marks the
 * processes traced for the critical path and names their threads. Call
 * before the first tt_analyzer_add. 0 or -ENOMEM.
 */
int tt_analyzer_add_procs(struct tt_analyzer *a,
			  const struct tt_proc_info *procs, size_t n);
/* The recording's GPU device table: blocking waits on these device nodes
 * are compute.gpu. Entries with rdev 0 are skipped. 0 or -ENOMEM. */
int tt_analyzer_add_devices(struct tt_analyzer *a,
			    const struct tt_dev_info *devs, size_t n);
/* Feeds one event; returns 0 or -ENOMEM (-EINVAL after finish). */
int tt_analyzer_add(struct tt_analyzer *a, const struct tt_event *ev);
/* Drains the reorder window and closes requests still open at the end.
 * Then numbers the requests 1, 2, ... in order of t_arrive (or of their
 * first event when t_arrive is unknown), sorts them by id, and walks the
 * critical path of every one of them (all together: each request's
 * hand-offs bound the others' queueing). 0, or -ENOMEM when memory ran
 * out on the way: the requests then lack what could not be kept. */
int tt_analyzer_finish(struct tt_analyzer *a);
void tt_analyzer_free(struct tt_analyzer *a);

/* Finished requests: in id order after finish; before it, in the order
 * they ended, with provisional ids (order of their first read or send).
 * A returned pointer stays valid until the next add or finish. */
size_t tt_analyzer_nrequests(const struct tt_analyzer *a);
/* TLS (docs/design.md §3.1): *apart (malloc'ed, one per request; NULL
 * when no request is TLS) says which are exchanges with no HTTP in them
 * (a handshake, a ticket, an alert: TT_INC_TLS) on a connection some of
 * whose requests were read as plaintext. 0 or -ENOMEM. */
int tt_analyzer_tls_apart(const struct tt_analyzer *a, bool **apart);
/* The summary of the inter-token gaps (emit: the server's emit gaps) of
 * the requests with tokens, complete ones only unless incomplete; 0 or
 * -ENOMEM. */
struct tt_summary;
int tt_analyzer_itl_summary(const struct tt_analyzer *a, bool incomplete,
			    bool emit, struct tt_summary *s);
const struct tt_request *tt_analyzer_request(const struct tt_analyzer *a,
					     size_t i);
/* Every inter-token gap of complete requests, for ITL percentiles, in
 * request id order. Valid after tt_analyzer_finish (before: n = 0). A gap
 * is between two token sends' first bytes on the wire (the request's
 * itl_at_wire), else between their syscall entries. */
const __u64 *tt_analyzer_itl(const struct tt_analyzer *a, size_t *n);
/* The same gaps as the server emitted them (between the sends' entries). */
const __u64 *tt_analyzer_itl_emit(const struct tt_analyzer *a, size_t *n);
/* The inter-token gaps of request i (complete or not), in send order; at
 * the wire when its itl_at_wire. */
const __u64 *tt_analyzer_request_itl(const struct tt_analyzer *a, size_t i,
				     size_t *n);
const __u64 *tt_analyzer_request_itl_emit(const struct tt_analyzer *a, size_t i,
					  size_t *n);
__u64 tt_analyzer_events(const struct tt_analyzer *a);
__u64 tt_analyzer_lost(const struct tt_analyzer *a); /* records lost */
void tt_analyzer_stats(const struct tt_analyzer *a,
		       struct tt_analyzer_stats *st);
/* Latest name of thread tid (FORK, COMM records, the process table), or
 * NULL if unknown. */
const char *tt_analyzer_comm(const struct tt_analyzer *a, __u32 tid);

/*
 * The critical path of request i (after finish; NULL before, when i is out
 * of range, or when there was no memory for the walk): its segments tile
 * [t_arrive, t_wire) in time order; there are none when the path was not
 * walked (TT_CP_INC_NOT_WALKED) or TTFT is 0. The results of all requests
 * are one array, as are the requests given to the walk
 * (tt_analyzer_cp_request), so tt_analyzer_cp_result(a, 0) can be passed
 * on whole, e.g. to tt_perfetto_write().
 */
const struct tt_cp_result *tt_analyzer_cp_result(const struct tt_analyzer *a,
						 size_t i);
const struct tt_cp_request *tt_analyzer_cp_request(const struct tt_analyzer *a,
						   size_t i);
/* The thread timelines behind the walks (names, stats), for renderers. */
const struct tt_critpath *tt_analyzer_critpath(const struct tt_analyzer *a);

/* The request's peer as "ip:port" ("[addr]:port" for IPv6, the IPv4
 * address of a v4-mapped one), "unknown" otherwise; returns buf. */
const char *tt_request_peer(const struct tt_request *r, char *buf, size_t len);

/* The TT_INC_* bits as "no-wire,lost" (or "complete" for 0) in buf;
 * returns buf. TT_INC_NO_PATH is "no-path". */
const char *tt_incomplete_str(__u32 incomplete, char *buf, size_t len);

#endif /* TT_ANALYZER_H */
