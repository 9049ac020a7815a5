/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * TTFT in its frame (docs/design.md §9): end-to-end latency and output
 * throughput, attainment and goodput under SLO limits, which stage made a
 * request miss, and cost at a price per hour. Plain C over the analyzer's
 * requests; renderers (render/frame.c) print what it computes.
 */
#ifndef TT_SLO_H
#define TT_SLO_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer.h"
#include "stats.h"

/* Limits a request must meet, each 0 when not set. */
struct tt_slo {
	__u64 ttft_ns, tpot_ns, e2e_ns;
	char name[40]; /* the preset's name ("mlperf:llama2-70b"), or "" */
};

/*
 * Parses "ttft=450ms,tpot=40ms[,e2e=2s]" (units ns, us, ms, s; each key
 * at most once, at least one) or "mlperf:NAME" (MLCommons' mlperf.conf
 * TTFT/TPOT limits). 0, or -EINVAL with the reason in err.
 */
int tt_slo_parse(const char *spec, struct tt_slo *slo, char *err,
		 size_t errlen);

/* End-to-end latency: t_arrive to the last token's first byte on the
 * device (the first token's when there is one); when that XMIT was not
 * seen, to the last token send's syscall entry (*at_wire false, as TPOT
 * falls back to its emit rate). 0 when t_arrive or the response is
 * unknown. at_wire may be NULL. */
__u64 tt_request_e2e(const struct tt_request *r, bool *at_wire);

/* Why a request missed: a stage row of its TTFT, or after it. */
enum tt_slo_cause {
	/* 0 .. TT_SLO_NSTAGES - 1: the report's main stage rows, in order
	 * (network.in ... compute.cpu, other) */
	TT_SLO_NSTAGES = TT_ST_ROWS,
	TT_SLO_DECODE = TT_SLO_NSTAGES, /* TTFT met, TPOT or E2E missed */
	TT_SLO_UNATTRIBUTED, /* TTFT missed, its path not walked */
	TT_SLO_NCAUSES
};

const char *tt_slo_cause_name(int cause);

/* Per request, after tt_frame_compute. */
enum tt_slo_verdict {
	TT_SLO_NOT_JUDGED = 0, /* incomplete: out of the denominators */
	TT_SLO_MET = 1,
	TT_SLO_MISSED = 2,
};

struct tt_frame_req {
	__u64 e2e_ns; /* tt_request_e2e, 0 when unknown */
	bool e2e_at_wire;
	double output_tps; /* tokens / E2E, 0 when unknown */
	__u8 verdict; /* enum tt_slo_verdict; NOT_JUDGED without an SLO */
	__s8 cause; /* enum tt_slo_cause of a miss, -1 otherwise */
};

struct tt_frame {
	/* every complete request: their E2E, tokens, active window */
	size_t served; /* complete requests (the ones judged) */
	size_t excluded; /* incomplete or tokenless: not judged */
	size_t hops; /* a gateway's calls to its runner: apart, not judged */
	size_t tls; /* TLS exchanges with no HTTP (handshakes): apart */
	__u64 output_tokens; /* tokens of the served requests */
	__u64 t_start, t_end; /* first arrival, last E2E end among them */
	__u64 active_ns; /* t_end - t_start */
	double rps, output_tps; /* served requests, tokens per active second */
	struct tt_summary e2e; /* E2E of the served requests */
	size_t e2e_not_at_wire; /* of them, E2E taken at the last send */

	/* with an SLO (has_slo) */
	bool has_slo;
	struct tt_slo slo;
	size_t met;
	double attainment; /* met / served, 0 when none served */
	double goodput_rps, goodput_tps; /* met requests, their tokens, per
					  * active second */
	__u64 p99_ttft, p99_tpot, p99_e2e; /* over the served requests */
	size_t over_ttft, over_tpot, over_e2e; /* requests above each limit */
	size_t by_cause[TT_SLO_NCAUSES]; /* missed requests by their cause */

	/* with a price (price_per_hour > 0) */
	double price_per_hour;
	double usd_per_mtok, usd_per_request; /* at output_tps and rps */
	double usd_per_good_mtok; /* at goodput_tps (with an SLO) */

	struct tt_frame_req *req; /* per request, in the analyzer's order */
	size_t nreq;
};

/*
 * Computes the frame of reqs[0..n) (the analyzer's requests, in id order),
 * judged against slo when it is not NULL; price_per_hour 0 for none.
 * apart (NULL for none) marks the TLS exchanges tt_analyzer_tls_apart
 * counts apart. 0 or -ENOMEM. tt_frame_free releases it (also on failure).
 */
int tt_frame_compute(struct tt_frame *f, const struct tt_request *reqs,
		     size_t n, const bool *apart, const struct tt_slo *slo,
		     double price_per_hour);
void tt_frame_free(struct tt_frame *f);

#endif /* TT_SLO_H */
