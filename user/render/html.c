// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The HTML report and comparison pages (see html.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "html.h"
#include "stats.h"
#include "text.h"

#define PATH_MAX_BYTES 4096

/* Colours of enum tt_stage; "other" whole (the bars) takes other.sleep's. */
static const char *const stage_color[TT_ST_MAX] = {
	"#4e79a7", "#a0cbe8", "#76b7b2", "#f28e2b", "#e15759", "#9c755f",
	"#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#bab0ac",
};
static const char *const run_color[2] = { "#4e79a7", "#e15759" };
static const double pick_pct[3] = { 50, 90, 99 };

static const char css[] =
	"body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd}.sub{color:#555;margin:0}"
	".verdict{font-size:18px;font-weight:bold;padding:8px 12px;"
	"background:#fff4e0;border-left:4px solid #f28e2b}"
	"table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}"
	"th{background:#f3f3f3}td.k,th.k{text-align:left}"
	"tr.sig td{background:#ffe3e3;font-weight:bold}"
	"pre{background:#f7f7f7;padding:8px;overflow:auto}"
	".charts{display:flex;flex-wrap:wrap;gap:16px}"
	"svg text{font:12px sans-serif;fill:#222}"
	".key span{display:inline-block;margin-right:14px}"
	".key i{display:inline-block;width:12px;height:12px;margin-right:4px;"
	"vertical-align:-1px}";

static void put_esc(FILE *out, const char *s)
{
	tt_html_str(out, s, PATH_MAX_BYTES);
}

void tt_html_figure(FILE *out, const char *key, const char *value)
{
	fputs("<tr><td class=k>", out);
	put_esc(out, key);
	fputs("</td><td class=k>", out);
	put_esc(out, value);
	fputs("</td></tr>\n", out);
}

static void page_open(FILE *out, const char *title)
{
	fprintf(out,
		"<!DOCTYPE html>\n<html lang=en><head><meta charset=\"utf-8\">"
		"<title>%s</title><style>%s</style></head><body>\n<h1>%s</h1>\n",
		title, css, title);
}

static void meta_line(FILE *out, const struct tt_html_run *run)
{
	fputs("<p class=sub>", out);
	if (run->label)
		fprintf(out, "<b style=\"color:%s\">%s</b> ",
			run_color[run->label[0] == 'B'], run->label);
	put_esc(out, run->path);
	if (run->meta) {
		fputs(" &middot; host ", out);
		tt_html_str(out, run->meta->hostname,
			    sizeof(run->meta->hostname));
		fputs(" &middot; kernel ", out);
		tt_html_str(out, run->meta->kernel, sizeof(run->meta->kernel));
	}
	fputs("</p>\n", out);
}

/* ---- summary figures ---- */

/* "p50 1.234  p90 ...  p99 ... ms (n values)" of metric m, or "-" */
static int summary_value(const struct tt_run_sample *s, int m, char *buf,
			 size_t len)
{
	char b50[32], b90[32], b99[32];
	struct tt_summary sum;
	__u64 *v;
	long n = tt_run_values(s, m, &v);

	if (n < 0)
		return -ENOMEM;
	tt_summarize(v, n, &sum);
	free(v);
	if (!n)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "p50 %s, p90 %s, p99 %s ms (%ld)",
			 tt_fmt_ms(b50, sizeof(b50), sum.p50),
			 tt_fmt_ms(b90, sizeof(b90), sum.p90),
			 tt_fmt_ms(b99, sizeof(b99), sum.p99), n);
	return 0;
}

static int run_figures(FILE *out, const struct tt_html_run *run)
{
	const char *const keys[TT_M_STAGE0] = {
		"TTFT", "TPOT", "ITL", "E2E (last token on the wire)"
	};
	size_t i, n = tt_analyzer_nrequests(run->a), complete = 0, hops = 0;
	const struct tt_request *r;
	char key[64], v[200], hopped[96] = "";
	size_t tls = 0, k = 0;
	bool *apart = NULL;
	int m;

	/* a TLS handshake's exchanges too (docs/design.md §3.1) */
	if (tt_analyzer_tls_apart(run->a, &apart))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		r = tt_analyzer_request(run->a, i);
		/* counted apart, as the report does (docs/design.md §4.11) */
		hops += !!(r->incomplete & TT_INC_HOP);
		tls += apart && apart[i];
		complete += r->complete;
	}
	free(apart);
	if (hops)
		k = snprintf(hopped, sizeof(hopped), ", %zu hops apart", hops);
	if (tls)
		snprintf(hopped + k, sizeof(hopped) - k,
			 ", %zu TLS handshake exchanges apart", tls);
	for (m = 0; m < TT_M_STAGE0; m++) {
		if (summary_value(run->s, m, v, sizeof(v)))
			return -ENOMEM;
		snprintf(key, sizeof(key), "%s%s%s",
			 run->label ? run->label : "", run->label ? " " : "",
			 keys[m]);
		tt_html_figure(out, key, v);
	}
	snprintf(key, sizeof(key), "%s%srequests", run->label ? run->label : "",
		 run->label ? " " : "");
	snprintf(
		v, sizeof(v),
		"%zu (complete %zu, incomplete %zu)%s, %llu events, %llu lost records",
		n - hops - tls, complete, n - hops - tls - complete, hopped,
		(unsigned long long)tt_analyzer_events(run->a),
		(unsigned long long)tt_analyzer_lost(run->a));
	tt_html_figure(out, key, v);
	return 0;
}

static int figures(FILE *out, const struct tt_html_run *const *runs, int nruns,
		   const struct tt_html_figures *more)
{
	int i, err = 0;

	fputs("<h2>Summary</h2>\n<table>\n", out);
	for (i = 0; i < nruns && !err; i++)
		err = run_figures(out, runs[i]);
	if (!err && more && more->fn)
		err = more->fn(out, more->ctx);
	fputs("</table>\n", out);
	return err;
}

/* ---- charts ---- */

/* A round step of about span / 5: 1, 2 or 5 times a power of ten. */
static double tick_step(double span)
{
	double raw = span / 5, p = pow(10, floor(log10(raw))), f = raw / p;

	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

/* An x axis in ms over [0, max_ms] at [x0, x0 + w], baseline y */
static void x_axis(FILE *out, double max_ms, int x0, int w, int y, int top)
{
	double step = tick_step(max_ms), t;
	double x;

	for (t = 0; t <= max_ms * 1.0001; t += step) {
		x = x0 + t / max_ms * w;
		fprintf(out,
			"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e5e5e5\"/>"
			"<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			x, top, x, y, x, y + 14, t);
	}
	fprintf(out,
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#888\"/>\n",
		x0, y, x0 + w, y);
}

struct series {
	const char *label;
	const char *color;
	__u64 *v; /* sorted */
	long n;
};

#define CDF_W 460
#define CDF_H 260
#define CDF_POINTS 400

/* The empirical CDF of each series, in ms, one step line each. */
static void svg_cdf(FILE *out, const char *title, const struct series *s,
		    int ns)
{
	const int x0 = 48, y0 = 24, w = CDF_W - x0 - 16, h = CDF_H - y0 - 40;
	double max_ms = 0, x, y, prev;
	long i, k, K;
	int j;

	for (j = 0; j < ns; j++)
		if (s[j].n && s[j].v[s[j].n - 1] / 1e6 > max_ms)
			max_ms = s[j].v[s[j].n - 1] / 1e6;
	if (max_ms <= 0)
		max_ms = 1;
	fprintf(out,
		"<svg width=\"%d\" height=\"%d\" role=\"img\">"
		"<text x=\"%d\" y=\"14\" font-weight=\"bold\">%s</text>\n",
		CDF_W, CDF_H, x0, title);
	for (k = 0; k <= 4; k++) {
		y = y0 + h - k / 4.0 * h;
		fprintf(out,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2g</text>\n",
			x0, y, x0 + w, y, x0 - 4, y + 4, k / 4.0);
	}
	x_axis(out, max_ms, x0, w, y0 + h, y0);
	fprintf(out,
		"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ms</text>\n",
		x0 + w / 2, CDF_H - 4);
	for (j = 0; j < ns; j++) {
		if (!s[j].n)
			continue;
		fprintf(out,
			"<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
			s[j].color);
		/* at most CDF_POINTS steps: the values at as many quantiles */
		K = s[j].n < CDF_POINTS ? s[j].n : CDF_POINTS;
		prev = y0 + h;
		for (i = 1; i <= K; i++) {
			x = x0 + tt_percentile_sorted(s[j].v, s[j].n,
						      100.0 * i / K) /
					 1e6 / max_ms * w;
			y = y0 + h - (double)i / K * h;
			fprintf(out, "%.1f,%.1f %.1f,%.1f ", x, prev, x, y);
			prev = y;
		}
		fputs("\"/>\n", out);
		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\">",
			x0 + 8, y0 + 4 + 16 * j, s[j].color, x0 + 24,
			y0 + 14 + 16 * j);
		put_esc(out, s[j].label);
		fprintf(out, " (%ld)</text>\n", s[j].n);
	}
	fputs("</svg>\n", out);
}

/* TTFT and TPOT of the runs, overlaid. */
static int cdfs(FILE *out, const struct tt_html_run *const *runs, int nruns)
{
	static const int metrics[2] = { TT_M_TTFT, TT_M_TPOT };
	static const char *const titles[2] = {
		"TTFT: share of requests at or under",
		"TPOT: share of requests at or under"
	};
	struct series s[2] = {};
	int i, j, err = 0;

	fputs("<h2>TTFT and TPOT</h2>\n<div class=charts>\n", out);
	for (j = 0; j < 2 && !err; j++) {
		for (i = 0; i < nruns; i++) {
			s[i].label = runs[i]->label ?
					     runs[i]->label :
					     tt_metric_name(metrics[j]);
			s[i].color = run_color[i];
			s[i].n = tt_run_values(runs[i]->s, metrics[j], &s[i].v);
			if (s[i].n < 0)
				err = -ENOMEM;
		}
		if (!err)
			svg_cdf(out, titles[j], s, nruns);
		for (i = 0; i < nruns; i++) {
			free(s[i].v);
			s[i].v = NULL;
		}
	}
	fputs("</div>\n", out);
	return err;
}

static void stage_key(FILE *out, int n)
{
	int k;

	fputs("<p class=key>", out);
	for (k = 0; k < n; k++)
		fprintf(out, "<span><i style=\"background:%s\"></i>%s</span>",
			stage_color[k],
			n == TT_DIFF_NSTAGES ? tt_diff_stage_name(k) :
					       tt_stage_name(k));
	fputs("</p>\n", out);
}

#define BAR_W 900
#define BAR_LABEL 190
#define BAR_H 22

/* One stacked bar per percentile request of each run, on one scale. */
static void svg_bars(FILE *out, const struct tt_html_run *const *runs,
		     int nruns)
{
	const int w = BAR_W - BAR_LABEL - 20;
	const struct tt_run_req *r[6];
	double max_ms = 0, x, dx;
	int i, j, k, n = 0, y;
	size_t idx;

	for (j = 0; j < 3; j++) {
		for (i = 0; i < nruns; i++) {
			idx = tt_run_pick(runs[i]->s, pick_pct[j]);
			r[n] = idx == SIZE_MAX ? NULL : &runs[i]->s->r[idx];
			if (r[n] && r[n]->ttft / 1e6 > max_ms)
				max_ms = r[n]->ttft / 1e6;
			n++;
		}
	}
	if (max_ms <= 0)
		max_ms = 1;
	fprintf(out, "<svg width=\"%d\" height=\"%d\" role=\"img\">\n", BAR_W,
		40 + n * (BAR_H + 8));
	x_axis(out, max_ms, BAR_LABEL, w, 12 + n * (BAR_H + 8), 4);
	for (k = 0; k < n; k++) {
		i = k % nruns;
		y = 8 + k * (BAR_H + 8);
		fprintf(out,
			"<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s%sp%.0f",
			BAR_LABEL - 8, y + 15,
			runs[i]->label ? runs[i]->label : "",
			runs[i]->label ? " " : "", pick_pct[k / nruns]);
		if (!r[k]) {
			fputs(": none</text>\n", out);
			continue;
		}
		fprintf(out, " #%llu %.1f ms</text>\n",
			(unsigned long long)r[k]->id, r[k]->ttft / 1e6);
		if (!r[k]->has_stages) {
			fprintf(out,
				"<text x=\"%d\" y=\"%d\">no critical path</text>\n",
				BAR_LABEL + 4, y + 15);
			continue;
		}
		for (x = BAR_LABEL, j = 0; j < TT_DIFF_NSTAGES; j++) {
			dx = r[k]->stage[j] / 1e6 / max_ms * w;
			if (dx <= 0)
				continue;
			fprintf(out,
				"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
				"<title>%s %.3f ms</title></rect>\n",
				x, y, dx, BAR_H, stage_color[j],
				tt_diff_stage_name(j), r[k]->stage[j] / 1e6);
			x += dx;
		}
	}
	fputs("</svg>\n", out);
}

/* ---- the waterfall of a request's critical path ---- */

#define WF_LABEL 210
#define WF_LANE 22

/* The lanes of a path: its threads in order of first appearance. */
static size_t wf_lanes(const struct tt_cp_result *res, __u32 *tids)
{
	size_t i, j, n = 0;

	for (i = 0; i < res->nsegs; i++) {
		for (j = 0; j < n && tids[j] != res->segs[i].tid; j++)
			;
		if (j == n)
			tids[n++] = res->segs[i].tid;
	}
	return n;
}

static size_t wf_lane_of(const __u32 *tids, size_t n, __u32 tid)
{
	size_t j;

	for (j = 0; j < n && tids[j] != tid; j++)
		;
	return j;
}

static void wf_lane_label(FILE *out, const struct tt_analyzer *a, __u32 tid,
			  int y)
{
	const char *comm = tid ? tt_analyzer_comm(a, tid) : NULL;

	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
		WF_LABEL - 8, y + 15);
	if (!tid)
		fputs("(no thread: a phase)", out);
	else if (comm)
		tt_html_str(out, comm, TT_COMM_LEN);
	if (tid)
		fprintf(out, "%s%u", comm ? "/" : "", tid);
	fputs("</text>\n", out);
}

static int svg_waterfall(FILE *out, const struct tt_html_run *run)
{
	const int w = BAR_W - WF_LABEL - 20;
	const struct tt_cp_segment *sg;
	const struct tt_cp_result *res;
	const struct tt_run_req *r;
	size_t idx, nl, i, lane, prev = SIZE_MAX;
	double max_ms, x, dx;
	__u32 *tids;
	int y;

	idx = tt_run_pick(run->s, 99);
	r = idx == SIZE_MAX ? NULL : &run->s->r[idx];
	res = r ? tt_analyzer_cp_result(run->a, r->idx) : NULL;
	fprintf(out, "<p>%s%srequest ", run->label ? run->label : "",
		run->label ? ": " : "");
	if (!r || !res || !res->nsegs) {
		fprintf(out, "at p99 TTFT: no critical path to draw</p>\n");
		return 0;
	}
	fprintf(out,
		"#%llu, TTFT %.3f ms, %zu segments (ms from its arrival; where the thread changes, the path followed the wakeup)</p>\n",
		(unsigned long long)r->id, r->ttft / 1e6, res->nsegs);
	tids = malloc(res->nsegs * sizeof(*tids));
	if (!tids)
		return -ENOMEM;
	nl = wf_lanes(res, tids);
	max_ms = (res->segs[res->nsegs - 1].start +
		  res->segs[res->nsegs - 1].dur - res->segs[0].start) /
		 1e6;
	if (max_ms <= 0)
		max_ms = 1;
	fprintf(out, "<svg width=\"%d\" height=\"%zu\" role=\"img\">\n", BAR_W,
		40 + nl * WF_LANE);
	x_axis(out, max_ms, WF_LABEL, w, 8 + (int)nl * WF_LANE, 4);
	for (i = 0; i < nl; i++)
		wf_lane_label(out, run->a, tids[i], 8 + (int)i * WF_LANE);
	for (i = 0; i < res->nsegs; i++) {
		sg = &res->segs[i];
		lane = wf_lane_of(tids, nl, sg->tid);
		x = WF_LABEL +
		    (sg->start - res->segs[0].start) / 1e6 / max_ms * w;
		dx = sg->dur / 1e6 / max_ms * w;
		y = 8 + (int)lane * WF_LANE;
		/* the jump to the waker: a line from the lane it left */
		if (prev != SIZE_MAX && prev != lane)
			fprintf(out,
				"<line x1=\"%.2f\" y1=\"%zu\" x2=\"%.2f\" y2=\"%zu\" stroke=\"#555\" stroke-dasharray=\"2,2\"/>\n",
				x, 8 + prev * WF_LANE + WF_LANE / 2, x,
				8 + lane * WF_LANE + WF_LANE / 2);
		prev = lane;
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\">"
			"<title>%s, %s ",
			x, y + 2, dx < 0.5 ? 0.5 : dx, WF_LANE - 4,
			stage_color[sg->stage % TT_ST_MAX],
			tt_stage_name(sg->stage), tt_cp_state_name(sg->state));
		tt_html_str(out, sg->reason, sizeof(sg->reason));
		fprintf(out, ": %.3f ms at +%.3f ms</title></rect>\n",
			sg->dur / 1e6, (sg->start - res->segs[0].start) / 1e6);
	}
	fputs("</svg>\n", out);
	free(tids);
	return 0;
}

/* ---- tables ---- */

/* The stage table of one run: mean, p50, p90, p99 and share. */
static int stage_table(FILE *out, const struct tt_run_sample *s)
{
	char b[4][32];
	struct tt_summary sum;
	double tot = 0, st;
	size_t i;
	__u64 *v;
	long n;
	int k;

	for (i = 0; i < s->n; i++)
		if (s->r[i].has_stages)
			tot += s->r[i].ttft;
	fputs("<table><tr><th class=k>stage (ms)</th><th>mean</th><th>p50</th>"
	      "<th>p90</th><th>p99</th><th>share</th></tr>\n",
	      out);
	for (k = 0; k < TT_DIFF_NSTAGES; k++) {
		n = tt_run_values(s, TT_M_STAGE0 + k, &v);
		if (n < 0)
			return -ENOMEM;
		tt_summarize(v, n, &sum);
		for (st = 0, i = 0; i < (size_t)n; i++)
			st += v[i];
		free(v);
		fprintf(out,
			"<tr><td class=k><i style=\"display:inline-block;width:10px;height:10px;background:%s\"></i> %s</td>"
			"<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f%%</td></tr>\n",
			stage_color[k], tt_diff_stage_name(k),
			tt_fmt_ms(b[0], 32, sum.mean),
			tt_fmt_ms(b[1], 32, sum.p50),
			tt_fmt_ms(b[2], 32, sum.p90),
			tt_fmt_ms(b[3], 32, sum.p99),
			tot > 0 ? 100 * st / tot : 0.0);
	}
	fputs("</table>\n<p class=sub>share: of the summed TTFT of the requests with a critical path. Each stage's percentiles are its own, across requests.</p>\n",
	      out);
	return 0;
}

static void diff_row(FILE *out, const char *metric, int stat,
		     const struct tt_diff_cell *c)
{
	char a[32], b[32], delta[32], ci[64];

	tt_diff_cell_fmt(c, stat, a, b, delta, ci);
	fprintf(out,
		"<tr%s><td class=k>%s %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
		c->significant ? " class=sig" : "", metric, tt_stat_name(stat),
		a, b, delta, ci, c->significant ? "*" : "");
}

static void diff_table(FILE *out, const struct tt_diff *d)
{
	int m, k;

	fprintf(out,
		"<h2>A against B</h2>\n<p class=sub>95%% intervals of B &minus; A from %u bootstrap resamples of the requests (fixed seed). "
		"Marked: the interval excludes 0 and |delta| &ge; %.3f ms and &ge; %.0f%% of A. Shares are shown, never marked.</p>\n"
		"<table><tr><th class=k>(ms)</th><th>A</th><th>B</th><th>delta</th><th>95%% CI</th><th></th></tr>\n",
		d->o.resamples, d->o.min_ns / 1e6, d->o.rel * 100);
	for (m = 0; m < TT_M_MAX; m++)
		for (k = 0; k < TT_S_MAX; k++)
			if (k != TT_S_SHARE || m >= TT_M_STAGE0)
				diff_row(out, tt_metric_name(m), k,
					 &d->cell[m][k]);
	fputs("</table>\n", out);
}

/* The GPU tables as the text report has them. */
static int gpu_tables(FILE *out, const struct tt_html_run *run)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int err;

	if (!run->gpu_text)
		return 0;
	m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	err = run->gpu_text(m, run->gpu_ctx);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (!err && len) {
		fprintf(out, "<h2>GPU%s%s</h2>\n<pre>",
			run->label ? " of " : "", run->label ? run->label : "");
		tt_html_str(out, buf, len);
		fputs("</pre>\n", out);
	}
	free(buf);
	return err;
}

/* ---- pages ---- */

static int page_body(FILE *out, const struct tt_html_run *const *runs,
		     int nruns, const struct tt_html_figures *more)
{
	int i, err;

	err = figures(out, runs, nruns, more);
	if (!err)
		err = cdfs(out, runs, nruns);
	if (err)
		return err;
	fputs("<h2>Stages of the p50, p90 and p99 requests</h2>\n", out);
	stage_key(out, TT_DIFF_NSTAGES);
	svg_bars(out, runs, nruns);
	fputs("<h2>Critical path of the p99 request</h2>\n", out);
	stage_key(out, TT_ST_MAX);
	for (i = 0; i < nruns && !err; i++)
		err = svg_waterfall(out, runs[i]);
	return err;
}

static int page_gpu(FILE *out, const struct tt_html_run *const *runs, int nruns,
		    int err)
{
	int i;

	for (i = 0; i < nruns && !err; i++)
		err = gpu_tables(out, runs[i]);
	return err;
}

static int page_close(FILE *out, int err)
{
	fputs("<p class=sub>ttftrace: TTFT at the wire, first request byte in the kernel to first token byte on the device.</p>\n</body></html>\n",
	      out);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}

int tt_html_report(FILE *out, const struct tt_html_run *run,
		   const struct tt_html_figures *more)
{
	const struct tt_html_run *runs[1] = { run };
	int err;

	page_open(out, "ttftrace report");
	meta_line(out, run);
	err = page_body(out, runs, 1, more);
	if (!err) {
		fputs("<h2>Stages</h2>\n", out);
		err = stage_table(out, run->s);
	}
	return page_close(out, page_gpu(out, runs, 1, err));
}

int tt_html_diff(FILE *out, const struct tt_html_run *a,
		 const struct tt_html_run *b, const struct tt_diff *d,
		 const struct tt_html_figures *more)
{
	const struct tt_html_run *runs[2] = { a, b };
	char verdict[256];
	int err;

	page_open(out, "ttftrace diff");
	fputs("<p class=verdict>", out);
	put_esc(out, tt_diff_verdict(d, verdict, sizeof(verdict)));
	fputs("</p>\n", out);
	meta_line(out, a);
	meta_line(out, b);
	err = page_body(out, runs, 2, more);
	if (!err)
		diff_table(out, d);
	return page_close(out, page_gpu(out, runs, 2, err));
}
