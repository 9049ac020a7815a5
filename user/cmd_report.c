// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* ttftrace report FILE: the reader feeds the analyzer, renderers print. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "analyzer.h"
#include "cmds.h"
#include "dump.h"
#include "report.h"
#include "ttfile.h"

struct report_args {
	const char *path;
	bool events;
	struct tt_report_opts opts;
};

static const char report_doc[] =
	"Analyse a recording: per-request TTFT, TPOT and inter-token latency.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace report ttftrace.ttft             # summary\n"
	"  ttftrace report --requests ttftrace.ttft  # one line per request\n"
	"  ttftrace report --json ttftrace.ttft > r.json";

static const struct argp_option report_options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{ "requests", 'r', NULL, 0, "Print a table of every request", 0 },
	{ "all", 'a', NULL, 0, "Count incomplete requests in percentiles too", 0 },
	{ "events", 'e', NULL, 0, "Print every recorded event, one per line (ms from the first)", 0 },
	{},
};

static error_t report_parse(int key, char *arg, struct argp_state *state)
{
	struct report_args *a = state->input;

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
	case ARGP_KEY_ARG:
		if (a->path)
			argp_error(state, "one recording at a time");
		a->path = arg;
		break;
	case ARGP_KEY_END:
		if (!a->path)
			argp_error(state, "which recording? (ttftrace report FILE)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int tt_cmd_report(int argc, char **argv)
{
	struct argp argp = { report_options, report_parse, "FILE", report_doc };
	struct report_args a = {};
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
	an = tt_analyzer_new();
	if (!an) {
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
		if (tt_analyzer_add(an, &ev)) {
			fprintf(stderr, "ttftrace: out of memory analysing %s\n",
				a.path);
			goto cleanup;
		}
	}
	tt_analyzer_finish(an);
	tt_reader_stats(r, &st);
	if (a.events) {
		ret = 0;
		goto warnings;
	}
	if (a.opts.json)
		ret = tt_report_json(stdout, an, tt_reader_meta(r), &a.opts);
	else
		ret = tt_report_text(stdout, an, tt_reader_meta(r), &a.opts);
	ret = ret ? 1 : 0;
warnings:
	if (st.blocks_bad)
		fprintf(stderr,
			"ttftrace: warning: %s: %llu corrupt block(s) skipped; requests they touched may be missing\n",
			a.path, (unsigned long long)st.blocks_bad);
	if (st.truncated)
		fprintf(stderr,
			"ttftrace: warning: %s is cut short; reporting its %llu whole block(s)\n",
			a.path, (unsigned long long)st.blocks_ok);
cleanup:
	tt_analyzer_free(an);
	tt_reader_close(r);
	return ret;
}
