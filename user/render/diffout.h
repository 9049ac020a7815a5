/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Text and JSON of a run-to-run comparison (analysis/diff.h): the verdict
 * first, then every metric and stage, A against B, with the delta, its
 * bootstrap 95% interval and a mark where it is significant.
 */
#ifndef TT_DIFFOUT_H
#define TT_DIFFOUT_H

#include <stdio.h>
#include "diff.h"

/* The two recordings, as the user named them (escaped on output). */
struct tt_diff_names {
	const char *a, *b;
};

/* 0, or -EIO when out failed. */
int tt_diff_text(FILE *out, const struct tt_diff *d,
		 const struct tt_diff_names *names);
/*
 * One JSON object on one line:
 * {"verdict":"p99 TTFT ...","a":{"path":..,"requests":n},"b":{...},
 *  "bootstrap":{"resamples":1000,"seed":..,"ci":0.95,"min_delta_ns":..,
 *   "min_delta_rel":0.05},
 *  "metrics":{"ttft_ns":{"p50":{"a":..,"b":..,"delta":..,"ci":[lo,hi],
 *   "significant":false},"p90":..,"p99":..,"mean":..},"tpot_ns":..,
 *   "itl_ns":..,"e2e_ns":..},
 *  "stages":{"network.in":{"mean":..,"p50":..,"p90":..,"p99":..,
 *   "share":{"a":0.1,..}},...},
 *  "changed_stages":["storage.io"],
 *  "explained":{"percentile":"p99","stage":"storage.io","stage_delta_ns":..,
 *   "ttft_delta_ns":..,"requests_a":..,"requests_b":..}}
 * A cell without values in both runs is null; times in ns (fractional:
 * means and deltas of means are not whole).
 */
int tt_diff_json(FILE *out, const struct tt_diff *d,
		 const struct tt_diff_names *names);

#endif /* TT_DIFFOUT_H */
