/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Renderers of an analysis: a text summary (with an optional per-request
 * table), one request's critical path, and one JSON object. Percentiles
 * are nearest-rank (stats.h): each is one of the measured values.
 * Incomplete requests stay out of them unless include_incomplete (and then
 * only where the value is known; for stages, where the path was walked).
 *
 * Stages are those of critpath.h; "other" is the sum of other.sleep,
 * other.lock and other.unknown. A stage's share is its sum over the
 * requests divided by the sum of their TTFTs.
 */
#ifndef TT_REPORT_H
#define TT_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "analyzer.h"
#include "event.h"

/*
 * Another renderer's part of the report (the GPU tables), written through
 * callbacks so that no renderer includes another: text after the summary,
 * JSON as member "key" of the top-level object. text may write nothing.
 */
struct tt_report_part {
	const char *key;
	int (*text)(FILE *out, void *ctx);
	int (*json)(FILE *out, void *ctx);
	void *ctx;
};

/*
 * The frame's part (SLO, goodput, energy, cost: render/frame.c, wired by
 * the caller): text after the percentile rows, members written into the
 * JSON summary and into each request's object (each ,"name":value), and
 * the request table's SLO cell of request i.
 */
struct tt_report_extra {
	int (*text)(FILE *out, void *ctx);
	int (*json)(FILE *out, void *ctx);
	int (*request_json)(FILE *out, void *ctx, size_t i);
	const char *(*cell)(void *ctx, size_t i, char *buf, size_t len);
	void *ctx;
};

struct tt_report_opts {
	bool requests; /* text: a table of every request */
	bool json; /* for callers that pick the renderer from the options */
	bool include_incomplete; /* count incomplete requests in percentiles */
	const struct tt_report_part *gpu; /* GPU tables ("gpu"), or NULL */
	const struct tt_report_extra *extra; /* the frame, or NULL */
};

/* The summary: requests, drops, TTFT/TPOT/ITL percentiles, each stage's
 * mean, p50, p90, p99 and share, and the stages of the p50, p90 and p99
 * request; o->requests adds a table of every request with its DOMINANT
 * stage. meta may be NULL (live analysis). 0, or -EIO when out failed, or
 * -ENOMEM. */
int tt_report_text(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o);
/*
 * One JSON object on one line:
 * {"requests":[{"id":1,"peer":"ip:port","t_arrive_ns":..,"t_read_ns":..,
 *   "t_first_write_ns":..,"t_wire_ns":..,"ttft_ns":..,"tokens":..,
 *   "tpot_ns":..,"complete":true, ...,"reader_tid":..,"t_dispatch_ns":..,
 *   "t_token_ns":..,"attributed":true,"dispatch_rule":"pickup",
 *   "dominant":"compute.cpu","stages":{"network.in":ns,"network.out":ns,
 *   "scheduler.backlog":ns,"scheduler.queue":ns,"scheduler.runqueue":ns,
 *   "storage.io":ns,"compute.gpu":ns,"compute.cpu":ns,"other":ns},
 *   "other_detail":{"sleep":ns,"lock":ns,"unknown":ns}, ...more}],
 *  "summary":{"requests":..,"complete":..,"incomplete":..,
 *   "ttft_ns":{"p50":..,"p90":..,"p99":..,"max":..,"n":..},
 *   "tpot_ns":{...},"itl_ns":{...},"stages_n":..,
 *   "stages":{"network.in":{"mean":..,"p50":..,"p90":..,"p99":..,
 *   "share":0.25}, ...,"other":{...}},"other_detail":{"sleep":{...},...},
 *   "percentile_requests":{"p50":id,"p90":id,"p99":id},
 *   "drops":..,"events":..},
 *  "meta":{...}}
 * Unknown values are null (a timestamp never seen, a TPOT with < 2 tokens,
 * a percentile of no values, the stages of a request whose path was not
 * walked); IPv6 peers are "[addr]:port".
 */
int tt_report_json(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o);

/*
 * The drill-down of request id (text): its peer and status, its times from
 * t_arrive (t_read, t_dispatch and the rule that found it, t_token,
 * t_first_write, t_wire), its stages, and its critical path, one line per
 * segment: start (ms from t_arrive), duration (ms), thread (name/tid),
 * state, reason, stage. 0, -ENOENT when no request has that id (nothing
 * is printed), or -EIO when out failed.
 */
int tt_report_request(FILE *out, const struct tt_analyzer *a, __u64 id);

/* The request's peer as text: tt_request_peer() (analyzer.h), under the
 * name the renderers' callers know. */
static inline const char *tt_report_peer(const struct tt_request *r, char *buf,
					 size_t len)
{
	return tt_request_peer(r, buf, len);
}

#endif /* TT_REPORT_H */
