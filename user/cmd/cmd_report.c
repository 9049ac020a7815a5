/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ttftrace report FILE: the reader feeds the analyzer, renderers print. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer.h"
#include "cmds.h"
#include "dump.h"
#include "gpustats.h"
#include "perfetto.h"
#include "report.h"
#include "tt_arch.h"
#include "ttfile.h"

struct report_args {
	const char *path;
	bool events;
	__u64 request; /* --request ID, 0 when not asked */
	const char *perfetto; /* --perfetto OUT.json */
	struct tt_report_opts opts;
};

static const char report_doc[] =
	"Analyse a recording: per-request TTFT, TPOT and inter-token latency.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace report ttftrace.ttft             # summary\n"
	"  ttftrace report --requests ttftrace.ttft  # one line per request\n"
	"  ttftrace report -R 42 ttftrace.ttft       # request 42's critical path\n"
	"  ttftrace report -P trace.json ttftrace.ttft  # for ui.perfetto.dev\n"
	"  ttftrace report --json ttftrace.ttft > r.json";

static const struct argp_option report_options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{ "requests", 'r', NULL, 0, "Print a table of every request", 0 },
	{ "all", 'a', NULL, 0, "Count incomplete requests in percentiles too", 0 },
	{ "events", 'e', NULL, 0, "Print every recorded event, one per line (ms from the first)", 0 },
	{ "request", 'R', "ID", 0, "Print request ID's times, stages and critical path instead of the summary", 0 },
	{ "perfetto", 'P', "OUT.json", 0, "Also write a Perfetto / chrome://tracing trace: thread tracks, request spans, critical-path arrows", 0 },
	{},
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;
	char *end;

	switch (key) {
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
		if (a->events && (a->request || a->perfetto))
			argp_error(state, "--events prints events only: leave out --request and --perfetto");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The Perfetto trace of the analysis, into path. 0 or 1 (said why). */
static int write_perfetto(const struct tt_analyzer *an, const char *path)
{
	size_t n = tt_analyzer_nrequests(an), i;
	struct tt_request *reqs = NULL;
	FILE *f = NULL;
	int ret = 1, err;

	/* the analyzer keeps its requests apart: perfetto wants one array */
	reqs = malloc((n ? n : 1) * sizeof(*reqs));
	if (!reqs) {
		fprintf(stderr, "ttftrace: out of memory writing %s\n", path);
		goto cleanup;
	}
	for (i = 0; i < n; i++)
		reqs[i] = *tt_analyzer_request(an, i);
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

/*
 * A recording holds its machine's raw syscall numbers: analysing one from
 * another architecture would classify waits by the wrong numbers, so only
 * its events are shown. Files from before the field are x86-64's.
 */
static bool arch_readable(const char *path, __u32 arch, bool events_only)
{
	static const char *const names[] = TT_ARCH_NAMES;
	const char *name = arch < sizeof(names) / sizeof(names[0]) ?
				   names[arch] :
				   "an unknown architecture";

	if (!arch || arch == TT_ARCH)
		return true;
	fprintf(stderr, "ttftrace: %s%s was recorded on %s, this ttftrace analyses %s recordings only (syscall numbers differ)%s\n",
		events_only ? "warning: " : "", path, name, names[TT_ARCH],
		events_only ? "; its events follow, with that architecture's syscall numbers" : "");
	return events_only;
}

/* The GPU tables, a part of the report (render/gpustats.c) */
static int gpu_text(FILE *out, void *ctx)
{
	return tt_gpustats_any(ctx) ? tt_gpustats_text(out, ctx) : 0;
}

static int gpu_json(FILE *out, void *ctx)
{
	return tt_gpustats_json(out, ctx);
}

int tt_cmd_report(int argc, char **argv)
{
	struct tt_report_part gpu_part = { "gpu", gpu_text, gpu_json, NULL };
	struct tt_gpustats *gpu = NULL;
	struct argp argp = { report_options, report_parse, "FILE", report_doc };
	struct report_args a = {};
	const struct tt_file_meta *meta;
	struct tt_analyzer *an = NULL;
	struct tt_reader *r = NULL;
	struct tt_read_stats st;
	struct tt_event ev;
	char err[512];
	int ret = 1, n;
	__u64 t0 = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	r = tt_reader_open(a.path, err, sizeof(err));
	if (!r) {
		fprintf(stderr, "ttftrace: %s\n", err);
		return 1;
	}
	meta = tt_reader_meta(r);
	if (!arch_readable(a.path, meta->arch, a.events))
		goto cleanup;
	an = tt_analyzer_new();
	/* paths are printed for -R and drawn for -P; else their stages do */
	if (an)
		tt_analyzer_keep_paths(an, a.request || a.perfetto);
	gpu = tt_gpustats_new(meta->devs, meta->ndevs);
	gpu_part.ctx = gpu;
	a.opts.gpu = &gpu_part;
	if (!an || !gpu || tt_analyzer_add_procs(an, meta->procs, meta->nprocs) ||
	    tt_analyzer_add_devices(an, meta->devs, meta->ndevs)) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	while ((n = tt_reader_next(r, &ev)) == 1) {
		if (a.events) {
			if (!t0)
				t0 = ev.h.ts;
			if (tt_dump_event(stdout, &ev, t0))
				goto cleanup;
			continue;
		}
		if (tt_analyzer_add(an, &ev) || tt_gpustats_add(gpu, &ev)) {
			fprintf(stderr, "ttftrace: out of memory analysing %s\n",
				a.path);
			goto cleanup;
		}
	}
	if (tt_analyzer_finish(an)) {
		fprintf(stderr, "ttftrace: out of memory analysing %s\n",
			a.path);
		goto cleanup;
	}
	tt_reader_stats(r, &st);
	if (a.events) {
		ret = 0;
		goto warnings;
	}
	if (a.request) {
		ret = tt_report_request(stdout, an, a.request);
		if (ret == -ENOENT && !tt_analyzer_nrequests(an))
			fprintf(stderr,
				"ttftrace: %s has no request %llu (it has no requests)\n",
				a.path, (unsigned long long)a.request);
		else if (ret == -ENOENT)
			fprintf(stderr,
				"ttftrace: %s has no request %llu (its ids are 1 to %zu)\n",
				a.path, (unsigned long long)a.request,
				tt_analyzer_nrequests(an));
	} else if (a.opts.json) {
		ret = tt_report_json(stdout, an, meta, &a.opts);
	} else {
		ret = tt_report_text(stdout, an, meta, &a.opts);
	}
	ret = ret ? 1 : 0;
	if (a.perfetto && write_perfetto(an, a.perfetto))
		ret = 1;
warnings:
	if (st.blocks_bad)
		fprintf(stderr,
			"ttftrace: warning: %s: %llu corrupt block(s) skipped; requests they touched may be missing\n",
			a.path, (unsigned long long)st.blocks_bad);
	if (st.truncated)
		fprintf(stderr,
			"ttftrace: warning: %s is cut short; reporting its %llu whole block(s)\n",
			a.path, (unsigned long long)st.blocks_ok);
	else if (st.trailer_expected && !st.closed)
		fprintf(stderr,
			"ttftrace: warning: %s was not closed by its recorder (killed, crashed or out of disk); reporting its %llu whole block(s), what came after the last is lost\n",
			a.path, (unsigned long long)st.blocks_ok);
cleanup:
	tt_gpustats_free(gpu);
	tt_analyzer_free(an);
	tt_reader_close(r);
	return ret;
}
