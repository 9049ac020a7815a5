/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The HTML pages (render/html.h) without a recording: an analysis of no
 * events still gives a whole page, with nothing fetched from anywhere; the
 * figures hook adds its lines, escaped; a comparison page leads with its
 * verdict and marks significant rows.
 */
#include <stdlib.h>
#include "html.h"
#include "tt_test.h"

static int more_figures(FILE *out, void *ctx)
{
	tt_html_figure(out, "energy", ctx);
	return 0;
}

/* The page of run (and of b when given), in a string to free. */
static char *page(const struct tt_html_run *a, const struct tt_html_run *b,
		  const struct tt_diff *d)
{
	struct tt_html_figures more = { more_figures, "<1 J> & \"more\"" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = b ? tt_html_diff(f, a, b, d, &more) : tt_html_report(f, a, &more);
	fclose(f);
	ASSERT_OK(err, "rendered");
	return buf;
}

static bool self_contained(const char *p)
{
	return !strstr(p, "http:") && !strstr(p, "https:") &&
	       !strstr(p, "<script") && !strstr(p, "<link") &&
	       !strstr(p, "<img") && !strstr(p, "url(");
}

static void test_empty_report(void)
{
	struct tt_analyzer *an = tt_analyzer_new();
	struct tt_run_sample s = {};
	struct tt_html_run run = { .path = "<x>.ttft", .s = &s };
	char *p;

	if (!ASSERT_OK_PTR(an, "analyzer"))
		return;
	ASSERT_OK(tt_analyzer_finish(an), "finish");
	run.a = an;
	p = page(&run, NULL, NULL);
	if (ASSERT_OK_PTR(p, "page")) {
		ASSERT_TRUE(!strncmp(p, "<!DOCTYPE html>", 15), "doctype");
		ASSERT_TRUE(strstr(p, "</html>\n") != NULL, "whole page");
		ASSERT_TRUE(self_contained(p), "self-contained");
		ASSERT_TRUE(strstr(p, "&lt;x&gt;.ttft") && !strstr(p, "<x>"),
			    "path escaped");
		ASSERT_TRUE(
			strstr(p,
			       "<tr><td class=k>energy</td><td class=k>"
			       "&lt;1 J&gt; &amp; &quot;more&quot;</td></tr>"),
			"the figures hook's line, escaped");
		ASSERT_TRUE(strstr(p, "no critical path to draw") != NULL,
			    "no waterfall without requests");
	}
	free(p);
	tt_analyzer_free(an);
}

/* Two samples without an analysis of their own: the diff page. */
static void test_diff_page(void)
{
	struct tt_analyzer *an = tt_analyzer_new();
	struct tt_run_sample s[2] = {};
	struct tt_html_run run[2] = {
		{ .label = "A", .path = "a.ttft", .s = &s[0] },
		{ .label = "B", .path = "b.ttft", .s = &s[1] },
	};
	struct tt_run_req r;
	char *p = NULL, v[256];
	struct tt_diff d;
	size_t i;
	int k;

	if (!ASSERT_OK_PTR(an, "analyzer"))
		return;
	ASSERT_OK(tt_analyzer_finish(an), "finish");
	run[0].a = run[1].a = an;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < 60; i++) {
			memset(&r, 0, sizeof(r));
			r.id = i + 1;
			r.idx = SIZE_MAX; /* no critical path of the analyzer */
			r.has_ttft = r.has_stages = true;
			r.stage[TT_ST_CPU] = 3000000 + i * 1000;
			r.stage[TT_ST_STORAGE] = k * 20000000ULL;
			r.ttft = r.stage[TT_ST_CPU] + r.stage[TT_ST_STORAGE];
			ASSERT_OK(tt_run_sample_add(&s[k], &r, NULL, 0), "add");
		}
	}
	if (!ASSERT_OK(tt_diff_compute(&s[0], &s[1], NULL, &d), "compute"))
		goto cleanup;
	p = page(&run[0], &run[1], &d);
	if (ASSERT_OK_PTR(p, "page")) {
		tt_diff_verdict(&d, v, sizeof(v));
		ASSERT_TRUE(strstr(p, v) != NULL, "the verdict");
		ASSERT_TRUE(
			strstr(p,
			       "<tr class=sig><td class=k>storage.io mean") !=
				NULL,
			"storage.io marked");
		ASSERT_TRUE(!strstr(p, "<tr class=sig><td class=k>compute.cpu"),
			    "compute.cpu not");
		ASSERT_TRUE(self_contained(p), "self-contained");
		ASSERT_TRUE(strstr(p, "<polyline") != NULL, "CDFs drawn");
	}
cleanup:
	free(p);
	tt_run_sample_free(&s[0]);
	tt_run_sample_free(&s[1]);
	tt_analyzer_free(an);
}

int main(void)
{
	TT_RUN(test_empty_report);
	TT_RUN(test_diff_page);
	TT_EXIT();
}
