// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Text and JSON of a run-to-run comparison (see diffout.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "diffout.h"
#include "json.h"
#include "text.h"

#define NAME_MAX_BYTES 4096

static void text_cell(FILE *out, const char *metric, int stat,
		      const struct tt_diff_cell *c)
{
	char a[32], b[32], delta[32], ci[64], name[48];

	tt_diff_cell_fmt(c, stat, a, b, delta, ci);
	snprintf(name, sizeof(name), "%s %s", metric, tt_stat_name(stat));
	fprintf(out, "%-24s %10s %10s %10s  %-22s%s\n", name, a, b, delta, ci,
		c->significant ? " *" : "");
}

int tt_diff_text(FILE *out, const struct tt_diff *d,
		 const struct tt_diff_names *names)
{
	char verdict[256], esc[TT_TEXT_ROOM(256)], ms[32];
	const struct tt_diff_why *w = &d->why;
	bool any = false;
	int m, k;

	fprintf(out, "%s\n", tt_diff_verdict(d, verdict, sizeof(verdict)));
	fprintf(out, "A: %s  (%zu requests)\n",
		tt_text_escape(esc, sizeof(esc), names->a, 256), d->na);
	fprintf(out, "B: %s  (%zu requests)\n",
		tt_text_escape(esc, sizeof(esc), names->b, 256), d->nb);
	fprintf(out,
		"95%% intervals of B - A from %u bootstrap resamples of the requests (fixed seed);\n"
		"* significant: the interval excludes 0 and |delta| >= %s ms and >= %.0f%% of A\n",
		d->o.resamples, tt_fmt_ms(ms, sizeof(ms), d->o.min_ns),
		d->o.rel * 100);
	fprintf(out, "\n%-24s %10s %10s %10s  %s\n", "(ms)", "A", "B", "delta",
		"95% CI");
	for (m = 0; m < TT_M_STAGE0; m++)
		for (k = 0; k < TT_S_SHARE; k++)
			text_cell(out, tt_metric_name(m), k, &d->cell[m][k]);
	fprintf(out, "\n%-24s %10s %10s %10s  %s\n", "stage (ms)", "A", "B",
		"delta", "95% CI");
	for (m = TT_M_STAGE0; m < TT_M_MAX; m++) {
		text_cell(out, tt_metric_name(m), TT_S_MEAN,
			  &d->cell[m][TT_S_MEAN]);
		for (k = 0; k < TT_S_MEAN; k++)
			text_cell(out, tt_metric_name(m), k, &d->cell[m][k]);
		text_cell(out, tt_metric_name(m), TT_S_SHARE,
			  &d->cell[m][TT_S_SHARE]);
	}
	fprintf(out,
		"share: of the summed TTFT; shown, never flagged (it moves when any stage does)\n");
	fprintf(out, "\nchanged stages:");
	for (k = 0; k < TT_DIFF_NSTAGES; k++) {
		if (!d->stage_changed[k])
			continue;
		fprintf(out, " %s", tt_diff_stage_name(k));
		any = true;
	}
	fprintf(out, "%s\n", any ? "" : " none");
	if (w->stat >= 0 && w->na && w->nb)
		fprintf(out,
			"explained at %s: the %zu (A) and %zu (B) requests around it, TTFT mean %+.3f ms, %s mean %+.3f ms\n",
			tt_stat_name(w->stat), w->na, w->nb,
			w->window_delta / 1e6,
			w->stage >= 0 ? tt_diff_stage_name(w->stage) :
					"no stage",
			w->stage_delta / 1e6);
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

static void json_num(FILE *out, double v)
{
	/* ns are whole below 2^53; shares and means keep their fraction */
	if (v == (double)(long long)v)
		fprintf(out, "%lld", (long long)v);
	else
		fprintf(out, "%.6g", v);
}

static void json_cell(FILE *out, int stat, const struct tt_diff_cell *c,
		      bool first)
{
	fprintf(out, "%s\"%s\":", first ? "" : ",", tt_stat_name(stat));
	if (!c->valid) {
		fprintf(out, "null");
		return;
	}
	fprintf(out, "{\"a\":");
	json_num(out, c->a);
	fprintf(out, ",\"b\":");
	json_num(out, c->b);
	fprintf(out, ",\"delta\":");
	json_num(out, c->delta);
	fprintf(out, ",\"ci\":[");
	json_num(out, c->lo);
	fputc(',', out);
	json_num(out, c->hi);
	fprintf(out, "],\"significant\":%s}",
		c->significant ? "true" : "false");
}

static void json_run(FILE *out, const char *key, const char *path, size_t n)
{
	fprintf(out, ",\"%s\":{\"path\":", key);
	tt_json_str(out, path, NAME_MAX_BYTES);
	fprintf(out, ",\"requests\":%zu}", n);
}

int tt_diff_json(FILE *out, const struct tt_diff *d,
		 const struct tt_diff_names *names)
{
	static const char *const keys[TT_M_STAGE0] = { "ttft_ns", "tpot_ns",
						       "itl_ns", "e2e_ns" };
	const struct tt_diff_why *w = &d->why;
	char verdict[256];
	bool first = true;
	int m, k;

	fprintf(out, "{\"verdict\":");
	tt_json_str(out, tt_diff_verdict(d, verdict, sizeof(verdict)),
		    sizeof(verdict));
	json_run(out, "a", names->a, d->na);
	json_run(out, "b", names->b, d->nb);
	fprintf(out,
		",\"bootstrap\":{\"resamples\":%u,\"seed\":%llu,\"ci\":0.95,"
		"\"min_delta_ns\":%llu,\"min_delta_rel\":%g}",
		d->o.resamples, (unsigned long long)d->o.seed,
		(unsigned long long)d->o.min_ns, d->o.rel);
	fprintf(out, ",\"metrics\":{");
	for (m = 0; m < TT_M_STAGE0; m++) {
		fprintf(out, "%s\"%s\":{", m ? "," : "", keys[m]);
		for (k = 0; k < TT_S_SHARE; k++)
			json_cell(out, k, &d->cell[m][k], !k);
		fputc('}', out);
	}
	fprintf(out, "},\"stages\":{");
	for (m = TT_M_STAGE0; m < TT_M_MAX; m++) {
		fprintf(out, "%s\"%s\":{", m > TT_M_STAGE0 ? "," : "",
			tt_metric_name(m));
		for (k = 0; k < TT_S_MAX; k++)
			json_cell(out, k, &d->cell[m][k], !k);
		fputc('}', out);
	}
	fprintf(out, "},\"changed_stages\":[");
	for (k = 0; k < TT_DIFF_NSTAGES; k++) {
		if (!d->stage_changed[k])
			continue;
		fprintf(out, "%s\"%s\"", first ? "" : ",",
			tt_diff_stage_name(k));
		first = false;
	}
	fprintf(out, "],\"explained\":");
	if (w->stat < 0 || !w->na || !w->nb) {
		fprintf(out, "null}\n");
		return ferror(out) ? -EIO : 0;
	}
	fprintf(out,
		"{\"percentile\":\"%s\",\"stage\":", tt_stat_name(w->stat));
	if (w->stage >= 0)
		fprintf(out, "\"%s\"", tt_diff_stage_name(w->stage));
	else
		fprintf(out, "null");
	fprintf(out, ",\"stage_delta_ns\":");
	json_num(out, w->stage_delta);
	fprintf(out, ",\"ttft_delta_ns\":");
	json_num(out, w->window_delta);
	fprintf(out, ",\"requests_a\":%zu,\"requests_b\":%zu}}\n", w->na,
		w->nb);
	return ferror(out) ? -EIO : 0;
}
