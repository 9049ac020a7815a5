/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The HTML report of a recording and of a comparison of two: one
 * self-contained page, its CSS and charts inline (SVG), no script and
 * nothing fetched from anywhere (docs/design.md §6.5). Every string of a
 * recording on it goes through tt_html_str (text.h).
 */
#ifndef TT_HTML_H
#define TT_HTML_H

#include <stdio.h>
#include "analyzer.h"
#include "diff.h"
#include "event.h"

/* One recording's analysis, as the page shows it. */
struct tt_html_run {
	const char *label; /* "A" or "B" in a comparison, NULL in a report */
	const char *path; /* as the user named it */
	const struct tt_analyzer *a; /* with its critical paths' segments */
	const struct tt_file_meta *meta; /* or NULL */
	const struct tt_run_sample *s;
	/* the GPU tables as text (shown as such), or NULL */
	int (*gpu_text)(FILE *out, void *ctx);
	void *gpu_ctx;
};

/*
 * More lines for the page's summary figures (SLO attainment, energy,
 * cost...): fn(out, ctx) is called inside the figures table and writes
 * each line with tt_html_figure. 0 or an error, passed on.
 */
struct tt_html_figures {
	int (*fn)(FILE *out, void *ctx);
	void *ctx;
};

/* One line of the summary figures: key and value, escaped here. */
void tt_html_figure(FILE *out, const char *key, const char *value);

/* The page of one recording: summary figures, the stage table, TTFT and
 * TPOT CDFs, the stages of the p50/p90/p99 requests as stacked bars, the
 * p99 request's critical path as a waterfall over its threads, the GPU
 * tables. more may be NULL. 0, -ENOMEM or -EIO. */
int tt_html_report(FILE *out, const struct tt_html_run *run,
		   const struct tt_html_figures *more);
/* The page of a comparison: the verdict, the table of tt_diff_text with
 * significant rows marked, the CDFs of A and B overlaid, their stage
 * bars side by side, both p99 waterfalls, both GPU tables. */
int tt_html_diff(FILE *out, const struct tt_html_run *a,
		 const struct tt_html_run *b, const struct tt_diff *d,
		 const struct tt_html_figures *more);

#endif /* TT_HTML_H */
