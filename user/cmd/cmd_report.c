/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ttftrace report FILE: the reader feeds the analyzer, renderers print. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "analyzer.h"
#include "cmds.h"
#include "diff.h"
#include "flight.h"
#include "dump.h"
#include "energy.h"
#include "frame.h"
#include "gpustats.h"
#include "html.h"
#include "load.h"
#include "output.h"
#include "perfetto.h"
#include "report.h"
#include "slo.h"
#include "ttfile.h"

struct report_args {
	const char *path;
	bool events;
	__u64 request; /* --request ID, 0 when not asked */
	const char *perfetto; /* --perfetto OUT.json */
	const char *html; /* --html OUT.html */
	struct tt_report_opts opts;
	struct tt_slo slo; /* --slo */
	bool has_slo;
	double price_per_hour; /* --price-per-hour, 0 when not given */
	const char *otlp; /* --otlp URL */
};

/* The frame of the analysis (docs/design.md §9) and what it came from. */
struct frame_ctx {
	struct tt_energy_acc acc;
	struct tt_frame f;
	struct tt_energy_result en;
	struct tt_frame_view v;
};

enum { OPT_SLO = 256, OPT_PRICE, OPT_OTLP };

static const char report_doc[] =
	"Analyse a recording: per-request TTFT, TPOT and inter-token latency.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace report ttftrace.ttft             # summary\n"
	"  ttftrace report --requests ttftrace.ttft  # one line per request\n"
	"  ttftrace report -R 42 ttftrace.ttft       # request 42's critical path\n"
	"  ttftrace report -P trace.json ttftrace.ttft  # for ui.perfetto.dev\n"
	"  ttftrace report --html report.html ttftrace.ttft  # a page to look at\n"
	"  ttftrace report --json ttftrace.ttft > r.json\n"
	"  ttftrace report --slo mlperf:llama2-70b-interactive ttftrace.ttft\n"
	"  ttftrace report --slo ttft=450ms,tpot=40ms --price-per-hour 2.5 ttftrace.ttft";

static const struct argp_option report_options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{ "otlp", OPT_OTLP, "URL", 0, "Also send every request as OpenTelemetry spans, OTLP/HTTP protobuf, to URL/v1/traces (http:// only)", 0 },
	{ "requests", 'r', NULL, 0, "Print a table of every request", 0 },
	{ "all", 'a', NULL, 0, "Count incomplete requests in percentiles too", 0 },
	{ "events", 'e', NULL, 0, "Print every recorded event, one per line (ms from the first)", 0 },
	{ "request", 'R', "ID", 0, "Print request ID's times, stages and critical path instead of the summary", 0 },
	{ "perfetto", 'P', "OUT.json", 0, "Also write a Perfetto / chrome://tracing trace: thread tracks, request spans, critical-path arrows", 0 },
	{ "html", 'H', "OUT.html", 0, "Also write one self-contained HTML page: figures, CDFs, stage bars, the p99 request's critical path", 0 },
	{ "slo", OPT_SLO, "SPEC", 0, "Judge requests against limits: ttft=450ms,tpot=40ms[,e2e=2s] or mlperf:NAME (llama2-70b[-interactive], llama3_1-405b[-interactive], llama3_1-8b[-interactive], deepseek-r1): attainment, goodput, the stage of each miss", 0 },
	{ "price-per-hour", OPT_PRICE, "USD", 0, "What the machine costs an hour: $ per 1M output tokens and per request at the measured throughput", 0 },
	{},
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;
	char *end, msg[256];

	switch (key) {
	case OPT_OTLP:
		a->otlp = arg;
		break;
	case 'j':
		a->opts.json = true;
		break;
	case 'r':
		a->opts.requests = true;
		break;
	case 'a':
		a->opts.include_incomplete = true;
		break;
	case 'e':
		a->events = true;
		break;
	case 'R':
		errno = 0;
		a->request = strtoull(arg, &end, 10);
		if (!a->request || *end || arg[0] == '-' || errno == ERANGE)
			argp_error(state, "invalid request id '%s'", arg);
		break;
	case 'P':
		a->perfetto = arg;
		break;
	case 'H':
		a->html = arg;
		break;
	case OPT_SLO:
		if (tt_slo_parse(arg, &a->slo, msg, sizeof(msg)))
			argp_error(state, "%s", msg);
		a->has_slo = true;
		break;
	case OPT_PRICE:
		errno = 0;
		a->price_per_hour = strtod(arg, &end);
		if (errno || end == arg || *end || !(a->price_per_hour > 0) ||
		    a->price_per_hour > 1e9)
			argp_error(state, "invalid --price-per-hour '%s' (want a positive number of dollars)", arg);
		break;
	case ARGP_KEY_ARG:
		if (a->path)
			argp_error(state, "one recording at a time");
		a->path = arg;
		break;
	case ARGP_KEY_END:
		if (!a->path)
			argp_error(state, "which recording? (ttftrace report FILE)");
		if (a->request && a->opts.json)
			argp_error(state, "--request prints text: leave out --json");
		if (a->events && (a->request || a->perfetto || a->html))
			argp_error(state, "--events prints events only: leave out --request, --perfetto and --html");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The analyzer keeps its requests apart: perfetto and the frame want one
 * array (NULL when out of memory). */
static struct tt_request *requests_array(const struct tt_analyzer *an)
{
	size_t n = tt_analyzer_nrequests(an), i;
	struct tt_request *reqs = malloc((n ? n : 1) * sizeof(*reqs));

	for (i = 0; reqs && i < n; i++)
		reqs[i] = *tt_analyzer_request(an, i);
	return reqs;
}

/* The Perfetto trace of the analysis, into path. 0 or 1 (said why). */
static int write_perfetto(const struct tt_analyzer *an, const char *path)
{
	size_t n = tt_analyzer_nrequests(an);
	struct tt_request *reqs = NULL;
	FILE *f = NULL;
	int ret = 1, err;

	reqs = requests_array(an);
	if (!reqs) {
		fprintf(stderr, "ttftrace: out of memory writing %s\n", path);
		goto cleanup;
	}
	if (tt_file_is_recording(path)) {
		fprintf(stderr,
			"ttftrace: %s is a ttftrace recording; the Perfetto trace does not overwrite it: give another -P path\n",
			path);
		goto cleanup;
	}
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "ttftrace: cannot create %s: %s\n", path,
			strerror(errno));
		goto cleanup;
	}
	err = tt_perfetto_write(f, tt_analyzer_critpath(an), reqs,
				tt_analyzer_cp_result(an, 0), n);
	if (fclose(f) && !err)
		err = -EIO;
	f = NULL;
	if (err) {
		fprintf(stderr, "ttftrace: cannot write %s: %s\n", path,
			strerror(-err));
		goto cleanup;
	}
	ret = 0;
cleanup:
	if (f)
		fclose(f);
	free(reqs);
	return ret;
}

/* The GPU tables as JSON, a part of the report (render/gpustats.c) */
static int gpu_json(FILE *out, void *ctx)
{
	return tt_gpustats_json(out, ctx);
}

/* The frame's hooks into the report (render/frame.c) */
static int frame_text(FILE *out, void *ctx)
{
	return tt_frame_text(out, &((struct frame_ctx *)ctx)->v);
}

static int frame_json(FILE *out, void *ctx)
{
	return tt_frame_json(out, &((struct frame_ctx *)ctx)->v);
}

static int frame_request_json(FILE *out, void *ctx, size_t i)
{
	return tt_frame_request_json(out, &((struct frame_ctx *)ctx)->v, i);
}

static const char *frame_cell(void *ctx, size_t i, char *buf, size_t len)
{
	return tt_frame_cell(&((struct frame_ctx *)ctx)->v, i, buf, len);
}

/* SLO, E2E, throughput, energy and cost of the finished analysis. */
static int frame_compute(struct frame_ctx *fc, const struct tt_analyzer *an,
			 const struct report_args *a)
{
	size_t n = tt_analyzer_nrequests(an), i;
	struct tt_request *reqs = requests_array(an);
	__u64 *e2e = calloc(n ? n : 1, sizeof(*e2e));
	bool *apart = NULL;
	int err = -ENOMEM;

	if (!reqs || !e2e || tt_analyzer_tls_apart(an, &apart))
		goto cleanup;
	err = tt_frame_compute(&fc->f, reqs, n, apart,
			       a->has_slo ? &a->slo : NULL, a->price_per_hour);
	if (err)
		goto cleanup;
	for (i = 0; i < n; i++)
		e2e[i] = fc->f.req[i].e2e_ns;
	err = tt_energy_compute(&fc->acc, reqs, e2e, n, fc->f.t_start,
				fc->f.t_end, &fc->en);
	fc->v = (struct tt_frame_view){ &fc->f, &fc->acc, &fc->en };
cleanup:
	free(reqs);
	free(e2e);
	free(apart);
	return err;
}

/* Each event printed, one line (--events). */
static int dump_one(const struct tt_event *ev, void *ctx)
{
	__u64 *t0 = ctx;

	if (!*t0)
		*t0 = ev->h.ts;
	return tt_dump_event(stdout, ev, *t0);
}

/* The frame's text lines ("key: value") as the page's summary figures:
 * one renderer of the figures, two outputs. */
static int frame_figures(FILE *out, void *ctx)
{
	char *buf = NULL, *line, *save = NULL, *colon;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return -ENOMEM;
	err = tt_frame_text(m, &((struct frame_ctx *)ctx)->v);
	if (fclose(m) && !err)
		err = -EIO;
	for (line = buf ? strtok_r(buf, "\n", &save) : NULL; !err && line;
	     line = strtok_r(NULL, "\n", &save)) {
		colon = strstr(line, ": ");
		if (colon)
			*colon = '\0';
		tt_html_figure(out, line, colon ? colon + 2 : "");
	}
	free(buf);
	return err;
}

/* The HTML page of the analysis, into path. 0 or 1 (said why). */
static int write_html(const struct tt_loaded *l, const struct report_args *a,
		      struct frame_ctx *fc)
{
	struct tt_html_figures more = { frame_figures, fc };
	struct tt_html_run run = {
		.path = a->path,
		.a = l->an,
		.meta = l->meta,
		.gpu_text = tt_load_gpu_text,
		.gpu_ctx = l->gpu,
	};
	struct tt_run_sample s;
	struct stat st;
	FILE *f;
	int ret = 1, err;

	err = tt_run_sample_build(&s, l->an, a->opts.include_incomplete);
	run.s = &s;
	if (err) {
		fprintf(stderr, "ttftrace: out of memory writing %s\n", a->html);
		goto cleanup;
	}
	f = tt_output_fopen(a->html, "--html", &st);
	if (!f)
		goto cleanup;
	ret = tt_output_close(f, a->html, &st, tt_html_report(f, &run, &more));
cleanup:
	tt_run_sample_free(&s);
	return ret;
}

int tt_cmd_report(int argc, char **argv)
{
	struct tt_report_part gpu_part = { "gpu", tt_load_gpu_text, gpu_json, NULL };
	struct frame_ctx fc = {};
	struct tt_report_extra extra = { frame_text, frame_json,
					 frame_request_json, frame_cell, &fc };
	struct argp argp = { report_options, report_parse, "FILE", report_doc };
	struct report_args a = {};
	struct tt_loaded l;
	int ret = 1;
	__u64 t0 = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	/* paths are printed for -R and drawn for -P and --html; -P draws
	 * the timelines too */
	if (tt_load(a.path,
		    (a.request || a.perfetto || a.html || a.otlp ?
			     TT_LOAD_PATHS :
			     0) |
			    (a.perfetto ? TT_LOAD_TIMELINES : 0),
		    a.events ? dump_one : NULL, &t0, &fc.acc, &l))
		goto cleanup;
	gpu_part.ctx = l.gpu;
	a.opts.gpu = &gpu_part;
	a.opts.extra = &extra;
	if (a.events) {
		ret = 0;
		goto warnings;
	}
	if (frame_compute(&fc, l.an, &a)) {
		fprintf(stderr, "ttftrace: out of memory analysing %s\n",
			a.path);
		goto cleanup;
	}
	if (a.request) {
		ret = tt_report_request(stdout, l.an, a.request);
		if (ret == -ENOENT && !tt_analyzer_nrequests(l.an))
			fprintf(stderr,
				"ttftrace: %s has no request %llu (it has no requests)\n",
				a.path, (unsigned long long)a.request);
		else if (ret == -ENOENT)
			fprintf(stderr,
				"ttftrace: %s has no request %llu (its ids are 1 to %zu)\n",
				a.path, (unsigned long long)a.request,
				tt_analyzer_nrequests(l.an));
	} else if (a.opts.json) {
		ret = tt_report_json(stdout, l.an, l.meta, &a.opts);
	} else {
		ret = tt_report_text(stdout, l.an, l.meta, &a.opts);
	}
	ret = ret ? 1 : 0;
	if (a.perfetto && write_perfetto(l.an, a.perfetto))
		ret = 1;
	if (a.html && write_html(&l, &a, &fc))
		ret = 1;
	if (a.otlp && tt_otlp_export_all(a.otlp, l.an, l.meta))
		ret = 1;
warnings:
	tt_load_warnings(a.path, &l);
cleanup:
	tt_frame_free(&fc.f);
	tt_energy_result_free(&fc.en);
	tt_energy_free(&fc.acc);
	tt_load_free(&l);
	return ret;
}
