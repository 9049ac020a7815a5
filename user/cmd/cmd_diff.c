// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* ttftrace diff A.ttft B.ttft: what changed between two recordings. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cmds.h"
#include "diff.h"
#include "diffout.h"
#include "html.h"
#include "load.h"
#include "output.h"
#include "util.h"

struct diff_args {
	const char *path[2];
	int npaths;
	bool json, include_incomplete;
	const char *html;
	struct tt_diff_opts o;
};

static const char diff_doc[] =
	"Compare two recordings (a good run A, a bad run B): TTFT, TPOT, ITL, E2E "
	"and each stage at p50/p90/p99, mean and share, with B - A and its "
	"bootstrap 95% confidence interval; the first line is the verdict. "
	"Requests are matched by nothing: the runs may come from other machines "
	"or restarts.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace diff good.ttft bad.ttft\n"
	"  ttftrace diff --json good.ttft bad.ttft > d.json\n"
	"  ttftrace diff --html diff.html good.ttft bad.ttft";

enum { OPT_MIN_MS = 0x100, OPT_MIN_REL, OPT_RESAMPLES };

static const struct argp_option diff_options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object", 0 },
	{ "html", 'H', "OUT.html", 0, "Also write one self-contained HTML page",
	  0 },
	{ "all", 'a', NULL, 0, "Count incomplete requests too", 0 },
	{ "min-delta", OPT_MIN_MS, "DURATION", 0,
	  "Smallest change flagged (default 1ms)", 0 },
	{ "min-rel", OPT_MIN_REL, "PERCENT", 0,
	  "Smallest change flagged, in percent of A (default 5)", 0 },
	{ "resamples", OPT_RESAMPLES, "N", 0,
	  "Bootstrap resamples (default 1000)", 0 },
	{},
};

static error_t diff_parse(int key, char *arg, struct argp_state *state)
{
	struct diff_args *a = state->input;
	long v;

	switch (key) {
	case 'j':
		a->json = true;
		break;
	case 'H':
		a->html = arg;
		break;
	case 'a':
		a->include_incomplete = true;
		break;
	case OPT_MIN_MS:
		if (tt_parse_duration(arg, &a->o.min_ns))
			argp_error(state, "invalid --min-delta '%s'", arg);
		break;
	case OPT_MIN_REL:
		if (tt_parse_long(arg, 1, 1000, &v))
			argp_error(state, "invalid --min-rel '%s' (1 to 1000)",
				   arg);
		a->o.rel = v / 100.0;
		break;
	case OPT_RESAMPLES:
		if (tt_parse_long(arg, 100, 100000, &v))
			argp_error(state,
				   "invalid --resamples '%s' (100 to 100000)",
				   arg);
		a->o.resamples = v;
		break;
	case ARGP_KEY_ARG:
		if (a->npaths == 2)
			argp_error(state, "two recordings: A and B");
		a->path[a->npaths++] = arg;
		break;
	case ARGP_KEY_END:
		if (a->npaths != 2)
			argp_error(
				state,
				"which recordings? (ttftrace diff A.ttft B.ttft)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool has_ttft(const struct tt_run_sample *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->r[i].has_ttft)
			return true;
	return false;
}

/* The page of the comparison, into a->html. 0 or 1 (said why). */
static int write_html(const struct diff_args *a, const struct tt_loaded *l,
		      const struct tt_run_sample *s, const struct tt_diff *d)
{
	static const char *const labels[2] = { "A", "B" };
	struct tt_html_run run[2];
	struct stat st;
	FILE *f;
	int i;

	for (i = 0; i < 2; i++)
		run[i] = (struct tt_html_run){
			.label = labels[i],
			.path = a->path[i],
			.a = l[i].an,
			.meta = l[i].meta,
			.s = &s[i],
			.gpu_text = tt_load_gpu_text,
			.gpu_ctx = l[i].gpu,
		};
	f = tt_output_fopen(a->html, "--html", &st);
	if (!f)
		return 1;
	return tt_output_close(f, a->html, &st,
			       tt_html_diff(f, &run[0], &run[1], d, NULL));
}

int tt_cmd_diff(int argc, char **argv)
{
	struct argp argp = { diff_options, diff_parse, "A.ttft B.ttft",
			     diff_doc };
	struct tt_loaded l[2] = {};
	struct tt_run_sample s[2] = {};
	struct diff_args a = {};
	struct tt_diff_names names;
	struct tt_diff *d = NULL;
	int i, ret = 1, err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	for (i = 0; i < 2; i++) {
		/* the HTML page draws the p99 requests' paths */
		if (tt_load(a.path[i], a.html ? TT_LOAD_PATHS : 0, NULL, NULL,
			    NULL, &l[i]))
			goto cleanup;
		tt_load_warnings(a.path[i], &l[i]);
		if (tt_run_sample_build(&s[i], l[i].an, a.include_incomplete)) {
			fprintf(stderr,
				"ttftrace: out of memory analysing %s\n",
				a.path[i]);
			goto cleanup;
		}
	}
	d = malloc(sizeof(*d));
	if (!d) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	err = tt_diff_compute(&s[0], &s[1], &a.o, d);
	if (err == -ENODATA) {
		fprintf(stderr,
			"ttftrace: %s has no %srequest with a TTFT to compare\n",
			a.path[has_ttft(&s[0]) ? 1 : 0],
			a.include_incomplete ? "" : "complete ");
		goto cleanup;
	} else if (err) {
		fprintf(stderr, "ttftrace: out of memory comparing\n");
		goto cleanup;
	}
	names.a = a.path[0];
	names.b = a.path[1];
	err = a.json ? tt_diff_json(stdout, d, &names) :
		       tt_diff_text(stdout, d, &names);
	ret = err ? 1 : 0;
	if (a.html && write_html(&a, l, s, d))
		ret = 1;
cleanup:
	free(d);
	for (i = 0; i < 2; i++) {
		tt_run_sample_free(&s[i]);
		tt_load_free(&l[i]);
	}
	return ret;
}
