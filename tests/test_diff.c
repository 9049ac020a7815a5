/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The run-to-run comparison (analysis/diff.h) on synthetic samples: a
 * stage shifted in B is flagged and names the verdict, an unchanged one is
 * not; small or tail-only changes are not flagged; the output is the same
 * from run to run; the JSON and text renderers and the HTML page carry it.
 */
#include <errno.h>
#include <stdlib.h>
#include "diff.h"
#include "diffout.h"
#include "json_check.h"
#include "tt_test.h"

#define MS 1000000ULL

/*
 * n requests: network.in 0.1 ms, compute.cpu 5 ms +- 1, other 2 ms +- 0.5,
 * scheduler.queue 1..3 ms, plus shift[k] on stage k; TTFT their sum; 4
 * tokens 1 ms apart (TPOT 1 ms, 3 gaps); E2E TTFT + 3 ms.
 */
static void make_sample(struct tt_run_sample *s, size_t n, uint64_t seed0,
			const __u64 shift[TT_DIFF_NSTAGES])
{
	__u64 gaps[3] = { MS, MS, MS };
	uint64_t seed = seed0;
	struct tt_run_req r;
	size_t i;
	int k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.id = i + 1;
		r.idx = i;
		r.stage[TT_ST_NET_IN] = MS / 10;
		r.stage[TT_ST_CPU] = 4 * MS + tt_rnd(&seed) % (2 * MS);
		r.stage[TT_DIFF_OTHER] = 3 * MS / 2 + tt_rnd(&seed) % MS;
		r.stage[TT_ST_QUEUE] = MS + tt_rnd(&seed) % (2 * MS);
		for (k = 0; k < TT_DIFF_NSTAGES; k++) {
			r.stage[k] += shift ? shift[k] : 0;
			r.ttft += r.stage[k];
		}
		r.has_ttft = r.has_stages = r.has_tpot = r.has_e2e = true;
		r.tpot = MS;
		r.e2e = r.ttft + 3 * MS;
		ASSERT_OK(tt_run_sample_add(s, &r, gaps, 3), "add");
	}
}

static void test_shifted_stage(void)
{
	__u64 shift[TT_DIFF_NSTAGES] = { [TT_ST_STORAGE] = 20 * MS };
	struct tt_run_sample a, b;
	struct tt_diff d;
	const struct tt_diff_cell *c;
	char v[256];
	int k;

	make_sample(&a, 200, 1, NULL);
	make_sample(&b, 200, 2, shift);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	for (k = 0; k < TT_DIFF_NSTAGES; k++)
		ASSERT_EQ(d.stage_changed[k], k == TT_ST_STORAGE,
			  tt_diff_stage_name(k));
	c = &d.cell[TT_M_STAGE0 + TT_ST_STORAGE][TT_S_MEAN];
	ASSERT_TRUE(c->significant, "storage mean significant");
	ASSERT_EQ(c->delta, 20.0 * MS, "storage mean delta");
	c = &d.cell[TT_M_TTFT][TT_S_P50];
	ASSERT_TRUE(c->significant, "TTFT p50 significant");
	ASSERT_TRUE(c->lo > 15.0 * MS && c->lo <= c->delta &&
			    c->delta <= c->hi && c->hi < 25.0 * MS,
		    "TTFT p50 interval around +20 ms");
	ASSERT_FALSE(d.cell[TT_M_TPOT][TT_S_P50].significant, "TPOT unchanged");
	ASSERT_FALSE(d.cell[TT_M_ITL][TT_S_MEAN].significant, "ITL unchanged");
	ASSERT_TRUE(d.cell[TT_M_E2E][TT_S_P50].significant, "E2E p50");
	/* 200 requests: p90 has 20 beyond it, p99 2: only p90 may lead */
	ASSERT_FALSE(d.cell[TT_M_TTFT][TT_S_P99].significant, "p99 of 200");
	ASSERT_EQ(d.why.stat, TT_S_P90, "verdict at p90");
	ASSERT_EQ(d.why.stage, TT_ST_STORAGE, "explained by storage");
	tt_diff_verdict(&d, v, sizeof(v));
	ASSERT_TRUE(!strncmp(v, "p90 TTFT +", 10) &&
			    strstr(v, ", from storage.io +20.0 ms"),
		    v);
	/* the stages' deltas of window means add up to TTFT's */
	ASSERT_TRUE(d.why.window_delta > 15.0 * MS, "window delta");
cleanup:
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

static void test_unchanged(void)
{
	struct tt_run_sample a, b;
	struct tt_diff d;
	char v[256];
	int k, m, s;

	make_sample(&a, 300, 3, NULL);
	make_sample(&b, 300, 4, NULL);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	for (k = 0; k < TT_DIFF_NSTAGES; k++)
		ASSERT_FALSE(d.stage_changed[k], tt_diff_stage_name(k));
	for (m = 0; m < TT_M_MAX; m++)
		for (s = 0; s < TT_S_MAX; s++)
			ASSERT_FALSE(d.cell[m][s].significant,
				     tt_metric_name(m));
	tt_diff_verdict(&d, v, sizeof(v));
	ASSERT_TRUE(!strncmp(v, "no significant change: p99 TTFT", 31), v);
cleanup:
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

/* A real but small shift: its interval excludes 0, it is not material. */
static void test_small_shift(void)
{
	__u64 shift[TT_DIFF_NSTAGES] = { [TT_ST_NET_IN] = MS / 2 };
	struct tt_diff_opts o = {};
	struct tt_run_sample a, b;
	struct tt_diff d;
	const struct tt_diff_cell *c;

	make_sample(&a, 200, 5, NULL);
	make_sample(&b, 200, 5, shift);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	c = &d.cell[TT_M_STAGE0 + TT_ST_NET_IN][TT_S_MEAN];
	ASSERT_TRUE(c->lo > 0, "interval excludes 0");
	ASSERT_FALSE(c->significant, "0.5 ms is under --min-delta");
	ASSERT_FALSE(d.stage_changed[TT_ST_NET_IN], "network.in not changed");
	/* with a smaller floor it is */
	o.min_ns = MS / 10;
	ASSERT_OK(tt_diff_compute(&a, &b, &o, &d), "compute, 0.1 ms floor");
	ASSERT_TRUE(d.stage_changed[TT_ST_NET_IN], "network.in changed");
cleanup:
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

/* +20 ms of storage and +1.5 ms of runqueue with it: the side effect,
 * material on its own, is under a tenth of TTFT's change: not flagged. */
static void test_side_effect(void)
{
	__u64 shift[TT_DIFF_NSTAGES] = { [TT_ST_STORAGE] = 20 * MS,
					 [TT_ST_RUNQUEUE] = 3 * MS / 2 };
	struct tt_run_sample a, b;
	struct tt_diff d;

	make_sample(&a, 200, 13, NULL);
	make_sample(&b, 200, 13, shift);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	ASSERT_TRUE(d.stage_changed[TT_ST_STORAGE], "storage.io changed");
	ASSERT_FALSE(d.stage_changed[TT_ST_RUNQUEUE],
		     "runqueue: a side effect, not flagged");
	/* alone, the same shift is flagged */
	shift[TT_ST_STORAGE] = 0;
	tt_run_sample_free(&b);
	make_sample(&b, 200, 13, shift);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute alone"))
		goto cleanup;
	ASSERT_TRUE(d.stage_changed[TT_ST_RUNQUEUE], "runqueue alone: flagged");
cleanup:
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

/* B faster: a negative verdict names the stage that fell. */
static void test_faster(void)
{
	__u64 shift[TT_DIFF_NSTAGES] = { [TT_ST_QUEUE] = 10 * MS };
	struct tt_run_sample a, b;
	struct tt_diff d;
	char v[256];

	make_sample(&a, 100, 6, shift);
	make_sample(&b, 100, 7, NULL);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	tt_diff_verdict(&d, v, sizeof(v));
	ASSERT_TRUE(!strncmp(v, "p90 TTFT -", 10) &&
			    strstr(v, "from scheduler.queue -"),
		    v);
	ASSERT_TRUE(d.why.stage_delta < -8.0 * MS &&
			    d.why.stage_delta > -12.0 * MS,
		    "queue's delta in the window");
	ASSERT_TRUE(d.stage_changed[TT_ST_QUEUE], "queue changed");
	ASSERT_FALSE(d.stage_changed[TT_ST_CPU], "cpu not");
cleanup:
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

/* The same inputs, the same output; the whole-sample percentiles are the
 * report's nearest-rank ones. */
static void test_deterministic(void)
{
	struct tt_diff *d1 = malloc(sizeof(*d1)), *d2 = malloc(sizeof(*d2));
	struct tt_run_sample a, b;
	__u64 *v = NULL;
	long n;

	make_sample(&a, 57, 8, NULL);
	make_sample(&b, 61, 9, NULL);
	if (!ASSERT_OK_PTR(d1, "d1") || !ASSERT_OK_PTR(d2, "d2"))
		goto cleanup;
	memset(d1, 0, sizeof(*d1));
	memset(d2, 0, sizeof(*d2));
	ASSERT_OK(tt_diff_compute(&a, &b, NULL, d1), "first");
	ASSERT_OK(tt_diff_compute(&a, &b, NULL, d2), "second");
	ASSERT_TRUE(!memcmp(d1->cell, d2->cell, sizeof(d1->cell)),
		    "same cells");
	n = tt_run_values(&a, TT_M_TTFT, &v);
	if (ASSERT_EQ(n, 57, "values"))
		ASSERT_EQ(d1->cell[TT_M_TTFT][TT_S_P90].a,
			  (double)tt_percentile_sorted(v, n, 90), "p90 of A");
	ASSERT_EQ(d1->cell[TT_M_ITL][TT_S_P50].a, (double)MS, "ITL p50");
cleanup:
	free(v);
	free(d1);
	free(d2);
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

static void test_no_ttft(void)
{
	struct tt_run_sample a, b = {};
	struct tt_diff d;

	make_sample(&a, 10, 10, NULL);
	ASSERT_EQ(tt_diff_compute(&a, &b, NULL, &d), -ENODATA, "empty B");
	ASSERT_EQ(tt_diff_compute(&b, &a, NULL, &d), -ENODATA, "empty A");
	tt_run_sample_free(&a);
}

/* The renderers: strict JSON with the verdict; text's first line is it. */
static void test_render(void)
{
	__u64 shift[TT_DIFF_NSTAGES] = { [TT_ST_STORAGE] = 20 * MS };
	struct tt_diff_names names = { "a<\"\x1b.ttft", "b.ttft" };
	struct tt_run_sample a, b;
	struct tt_diff d;
	char *buf = NULL, v[256], scratch[256];
	struct jc_val val;
	size_t len = 0;
	FILE *f;

	make_sample(&a, 100, 11, NULL);
	make_sample(&b, 100, 12, shift);
	if (!ASSERT_OK(tt_diff_compute(&a, &b, NULL, &d), "compute"))
		goto cleanup;
	tt_diff_verdict(&d, v, sizeof(v));
	f = open_memstream(&buf, &len);
	ASSERT_OK(tt_diff_json(f, &d, &names), "json");
	fclose(f);
	ASSERT_OK(jc_parse(buf, len, &val, scratch, sizeof(scratch)), "parses");
	jc_free(&val);
	ASSERT_TRUE(strstr(buf, "\"changed_stages\":[\"storage.io\"]") != NULL,
		    "changed_stages");
	ASSERT_TRUE(strstr(buf, v) != NULL, "verdict in JSON");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	ASSERT_OK(tt_diff_text(f, &d, &names), "text");
	fclose(f);
	ASSERT_TRUE(!strncmp(buf, v, strlen(v)) && buf[strlen(v)] == '\n',
		    "verdict first");
	ASSERT_TRUE(strstr(buf, "A: a<\"\\x1b.ttft") != NULL, "name escaped");
	ASSERT_TRUE(strstr(buf, "changed stages: storage.io\n") != NULL,
		    "changed stages");
cleanup:
	free(buf);
	tt_run_sample_free(&a);
	tt_run_sample_free(&b);
}

int main(void)
{
	TT_RUN(test_shifted_stage);
	TT_RUN(test_unchanged);
	TT_RUN(test_small_shift);
	TT_RUN(test_side_effect);
	TT_RUN(test_faster);
	TT_RUN(test_deterministic);
	TT_RUN(test_no_ttft);
	TT_RUN(test_render);
	TT_EXIT();
}
