/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Renderers of an analysis: a text summary (with an optional per-request
 * table) and one JSON object. Percentiles are nearest-rank (stats.h): each
 * is one of the measured values. Incomplete requests stay out of them
 * unless include_incomplete (and then only where the value is known).
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer.h"
#include "ttfile.h"

struct tt_report_opts {
	bool requests; /* text: a table of every request */
	bool json; /* for callers that pick the renderer from the options */
	bool include_incomplete; /* count incomplete requests in percentiles */
};

/* meta may be NULL (live analysis). 0, or -EIO when out failed, or
 * -ENOMEM. */
int tt_report_text(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o);
/*
 * One JSON object on one line:
 * {"requests":[{"id":1,"peer":"ip:port","t_arrive_ns":..,"t_read_ns":..,
 *   "t_first_write_ns":..,"t_wire_ns":..,"ttft_ns":..,"tokens":..,
 *   "tpot_ns":..,"complete":true, ...more}],
 *  "summary":{"requests":..,"complete":..,"incomplete":..,
 *   "ttft_ns":{"p50":..,"p90":..,"p99":..,"max":..,"n":..},
 *   "tpot_ns":{...},"itl_ns":{...},"drops":..,"events":..},
 *  "meta":{...}}
 * Unknown values are null (a timestamp never seen, a TPOT with < 2 tokens,
 * a percentile of no values); IPv6 peers are "[addr]:port".
 */
int tt_report_json(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o);

/* The peer of r as "1.2.3.4:80", "[::1]:80" or "unknown"; returns buf. */
const char *tt_report_peer(const struct tt_request *r, char *buf, size_t len);

#endif /* TT_REPORT_H */
