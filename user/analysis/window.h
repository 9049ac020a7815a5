/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The live analysis core (docs/design.md §10): the events of the last
 * seconds in bounded memory, re-analysed by the analyzer at every refresh.
 * Each request is counted once, when it has settled (ended, and past the
 * wait for its last bytes on the wire), identified by its connection and
 * its first timestamp (never by the analyzer's ids, which change from one
 * window to the next). From the counted requests: cumulative totals and
 * histograms (Prometheus) and rolling figures over the last span (top).
 * Plain C over events: no threads, no clock; the caller says what time it
 * is (the trace's CLOCK_MONOTONIC), so a replayed recording gives the same
 * frames every time.
 */
#ifndef TT_WINDOW_H
#define TT_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer.h"
#include "event.h"
#include "stats.h"

/* The rolling span and the longest request the live view can follow. */
#define TT_LIVE_SPAN_NS 30000000000ULL
/* Events kept before the first request of an analysis: the threads' state
 * when it arrived (who was blocked where), the hand-offs around it. */
#define TT_LIVE_GUARD_NS 1000000000ULL
/* A request is counted this long after its end: a tail waits up to
 * TT_WIRE_WAIT_NS for its XMIT, a loss is reported within 100 ms. */
#define TT_LIVE_SETTLE_NS (TT_WIRE_WAIT_NS + 200000000ULL)
/* At most this many events are kept (96 bytes each): past it the oldest
 * go, and requests older than what is left are counted incomplete. */
#define TT_LIVE_MAX_EVENTS (4u << 20)

/* The report's stage rows (critpath.h's TT_ST_ROWS): the stages before
 * other.*, and other (sleep, lock, unknown) whole. */
#define TT_LIVE_ROWS TT_ST_ROWS
#define TT_LIVE_OTHER TT_ST_MAIN

/* One counted request, as the live views keep it. */
struct tt_live_req {
	__u64 anchor; /* its first known time: t_arrive, else t_read, ... */
	__u64 counted; /* the refresh that counted it */
	__u64 ttft, tpot, e2e; /* 0 when unknown */
	__u64 row_ns[TT_LIVE_ROWS]; /* when attributed */
	__u32 tokens;
	__u32 incomplete; /* TT_INC_* */
	__u16 status;
	bool complete, attributed;
	char peer[48];
	size_t itl_off, itl_n; /* its gaps in the window's store */
};

/* Cumulative histograms (Prometheus): counts per bucket, not cumulated. */
#define TT_LIVE_MAX_BUCKETS 16
enum tt_live_hist_kind { TT_LIVE_H_TTFT, TT_LIVE_H_TPOT, TT_LIVE_H_ITL };
struct tt_live_hist {
	__u64 bucket[TT_LIVE_MAX_BUCKETS + 1]; /* the last one: +Inf */
	__u64 count;
	__u64 sum_ns;
};
/* The upper bounds (ns) of kind's buckets (stages take TTFT's). */
const __u64 *tt_live_buckets(enum tt_live_hist_kind kind, size_t *n);

/* Since the start: each counted request once. */
struct tt_live_totals {
	__u64 requests; /* complete + incomplete */
	__u64 complete;
	__u64 hops; /* a traced gateway's calls to a runner: apart, not requests */
	/* exchanges no probe read on a TLS connection (handshakes; requests
	 * whose plaintext no probe saw): apart, as the report's handshakes */
	__u64 tls;
	__u64 incomplete[TT_INC_NBITS]; /* per reason (a request may have several) */
	__u64 lost; /* records lost (TT_EV_LOST counts) */
	__u64 events;
	/* complete requests: TTFT; TPOT with 2 tokens or more; every ITL gap;
	 * each stage row of the attributed ones (zeros too: _count is the
	 * requests, _sum / _count the mean) */
	struct tt_live_hist ttft, tpot, itl, stage[TT_LIVE_ROWS];
};

enum tt_live_sort {
	TT_LIVE_BY_TTFT,
	TT_LIVE_BY_TPOT,
	TT_LIVE_BY_AGE,
	TT_LIVE_NSORT
};
const char *tt_live_sort_name(enum tt_live_sort s);

#define TT_LIVE_TOP 10

/* What a live view shows at one refresh. */
struct tt_live_frame {
	__u64 now; /* the refresh's time */
	__u64 first_ts; /* the first event's (0: none yet) */
	__u64 span_ns; /* rolling span */
	struct tt_live_totals totals;
	/* the requests counted within the span */
	size_t n, complete, fresh; /* fresh: counted at this refresh */
	size_t incomplete[TT_INC_NBITS];
	struct tt_summary ttft, tpot, itl;
	double share[TT_LIVE_ROWS]; /* of the attributed complete requests' TTFT */
	size_t attributed;
	__u64 lost; /* records lost within the span */
	double rate; /* requests counted per second over the span */
	/* the last analysis: its events and the trace time they covered */
	__u64 analysed_events, analysed_ns;
	size_t kept_events; /* events held in memory */
	enum tt_live_sort sort;
	size_t nslow;
	struct tt_live_req slow[TT_LIVE_TOP];
	const char *slow_dominant[TT_LIVE_TOP]; /* a row name, or NULL */
};

struct tt_window_opts {
	__u64 span_ns; /* 0: TT_LIVE_SPAN_NS */
	size_t max_events; /* 0: TT_LIVE_MAX_EVENTS */
	/* keep at least the events of the last keep_ns too (a flight
	 * recorder's ring; the analysis needs only its window) */
	__u64 keep_ns;
	const struct tt_proc_info *procs; /* copied */
	size_t nprocs;
	const struct tt_dev_info *devs; /* copied */
	size_t ndevs;
};

struct tt_window;

struct tt_window *tt_window_new(const struct tt_window_opts *o);
/* Keeps ev (arrival order, as the recorder or the reader hands them). 0 or
 * -ENOMEM. */
int tt_window_add(struct tt_window *w, const struct tt_event *ev);
/*
 * Analyses the events that can still matter at time now and counts the
 * requests that settled. last: the stream ended, count every request left
 * (open ones as open-at-end, as report does). 0 or -ENOMEM.
 */
int tt_window_refresh(struct tt_window *w, __u64 now, bool last);
/* Each event kept that an analysis from time from on needs: the state kept
 * from before it (connections open then, runtime lock ranges), in time
 * order, then the stored events from from on, in arrival order. 0, or what
 * fn returned (nonzero stops), or -ENOMEM. */
typedef int (*tt_window_fn)(void *ctx, const struct tt_event *ev);
int tt_window_each(const struct tt_window *w, __u64 from, tt_window_fn fn,
		   void *ctx);
void tt_window_totals(const struct tt_window *w, struct tt_live_totals *t);
/* The rolling figures of the last refresh, the slowest requests by sort.
 * 0 or -ENOMEM. */
int tt_window_frame(const struct tt_window *w, enum tt_live_sort sort,
		    struct tt_live_frame *f);
void tt_window_free(struct tt_window *w);

#endif /* TT_WINDOW_H */
