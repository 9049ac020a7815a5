/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Run-to-run comparison (docs/design.md §6.4): a recording's requests as a
 * sample (TTFT, TPOT, ITL, E2E and the stages of each request, nothing
 * that names a process, thread or port), and the comparison of two
 * samples: each statistic of A and B, the delta B - A and a bootstrap 95%
 * confidence interval of it, resampling requests with a fixed-seed PRNG so
 * that the same two recordings always give the same output. Plain C, no
 * globals.
 */
#ifndef TT_DIFF_H
#define TT_DIFF_H

/* A stage's change under this share of TTFT's at the same statistic is
 * not flagged (docs/design.md §6.4). */
#define TT_DIFF_SIDE_SHARE 0.1

#include <stdbool.h>
#include <stddef.h>
#include "analyzer.h"
#include "stats.h"

/* Stages compared: those of enum tt_stage up to compute.cpu, then "other"
 * (other.sleep + other.lock + other.unknown), as the report's JSON. */
#define TT_DIFF_NSTAGES TT_ST_ROWS
#define TT_DIFF_OTHER TT_ST_MAIN
const char *tt_diff_stage_name(int k);

/* A request of a sample; a value is known when its has_ flag is set. */
struct tt_run_req {
	size_t idx; /* the analyzer's index (id - 1 after finish) */
	__u64 id;
	__u64 ttft, tpot, e2e;
	bool has_ttft, has_tpot, has_e2e, has_stages;
	__u64 stage[TT_DIFF_NSTAGES];
	size_t itl_off, itl_n; /* its inter-token gaps in tt_run_sample.itl */
};

/* The requests a report's percentiles are taken over (report.h's rules:
 * complete ones unless include_incomplete, never those without tokens). */
struct tt_run_sample {
	struct tt_run_req *r;
	size_t n, cap;
	struct tt_u64vec itl;
};

/* The metrics of a sample. */
enum tt_metric {
	TT_M_TTFT,
	TT_M_TPOT,
	TT_M_ITL, /* one value per gap, resampled with its request */
	TT_M_E2E, /* first request byte in to the last token's on the wire */
	TT_M_STAGE0, /* TT_M_STAGE0 + k: stage k of TT_DIFF_NSTAGES */
	TT_M_MAX = TT_M_STAGE0 + TT_DIFF_NSTAGES
};
/* "TTFT", "TPOT", "ITL", "E2E" or the stage's name. */
const char *tt_metric_name(int m);

int tt_run_sample_add(struct tt_run_sample *s, const struct tt_run_req *r,
		      const __u64 *gaps, size_t ngaps);
/* The sample of an analysis (after tt_analyzer_finish); 0 or -ENOMEM. */
int tt_run_sample_build(struct tt_run_sample *s, const struct tt_analyzer *a,
			bool include_incomplete);
void tt_run_sample_free(struct tt_run_sample *s);
/* The values of metric m, sorted, in *v (to free); their count or -ENOMEM. */
long tt_run_values(const struct tt_run_sample *s, int m, __u64 **v);
/* The request (sample index) whose TTFT is percentile p of the sample's,
 * the first in id order; SIZE_MAX when there is none. */
size_t tt_run_pick(const struct tt_run_sample *s, double p);

/* The statistics compared for each metric; share only for stages. */
enum tt_stat { TT_S_P50, TT_S_P90, TT_S_P99, TT_S_MEAN, TT_S_SHARE, TT_S_MAX };
const char *tt_stat_name(int k); /* "p50", ..., "mean", "share" */

/* A statistic of A and B (ns, or a fraction for share). */
struct tt_diff_cell {
	bool valid; /* both samples have values */
	double a, b, delta; /* delta = b - a */
	double lo, hi; /* the 95% interval of the delta */
	bool significant; /* lo..hi excludes 0 and |delta| is material */
};

/*
 * Material: |delta| >= min_ns and |delta| >= rel * |a|, and for a
 * percentile p, at least TT_DIFF_TAIL values beyond it in each run
 * (n * (1 - p) >= 5: p99 needs 500 values, p90 50). Shares are shown with
 * their interval but never flagged: every share moves when one stage
 * does.
 */
#define TT_DIFF_TAIL 5
struct tt_diff_opts {
	unsigned int resamples; /* 0: TT_DIFF_RESAMPLES */
	__u64 seed; /* 0: TT_DIFF_SEED */
	__u64 min_ns; /* 0: TT_DIFF_MIN_NS */
	double rel; /* 0: TT_DIFF_REL */
};
#define TT_DIFF_RESAMPLES 1000
#define TT_DIFF_SEED 0x7474667464696666ULL /* "ttftdiff" */
#define TT_DIFF_MIN_NS 1000000ULL
#define TT_DIFF_REL 0.05

/* The verdict's explanation at one TTFT percentile. */
struct tt_diff_why {
	int stat; /* TT_S_P50/P90/P99 of the verdict, -1: none */
	int stage; /* stage index, -1: none */
	double stage_delta; /* its delta of means in the window, ns */
	double window_delta; /* TTFT's delta of means in the window, ns */
	size_t na, nb; /* requests in the window of A and of B */
};

struct tt_diff {
	struct tt_diff_opts o;
	size_t na, nb; /* requests of each sample */
	struct tt_diff_cell cell[TT_M_MAX][TT_S_MAX];
	bool stage_changed[TT_DIFF_NSTAGES]; /* any of its times flagged */
	struct tt_diff_why why;
};

/*
 * Compares b with a: every cell, the stages that changed and the verdict.
 * o may be NULL (the defaults). 0, -ENOMEM, or -ENODATA when either sample
 * has no TTFT.
 */
int tt_diff_compute(const struct tt_run_sample *a,
		    const struct tt_run_sample *b, const struct tt_diff_opts *o,
		    struct tt_diff *d);
/* The one-line verdict ("p99 TTFT +38.2 ms [31.0, 45.1], from
 * scheduler.queue +35.0 ms") into buf; returns buf. */
const char *tt_diff_verdict(const struct tt_diff *d, char *buf, size_t len);

/* A cell as text, for the renderers: a, b, delta and "[lo, hi]" in ms
 * (3 decimals, deltas signed), or in percent for a share; "-" when the
 * cell has no value. Each buffer of at least 32 bytes, ci of 64. */
void tt_diff_cell_fmt(const struct tt_diff_cell *c, int stat, char *a, char *b,
		      char *delta, char *ci);

#endif /* TT_DIFF_H */
