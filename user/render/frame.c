// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Text and JSON of the frame: SLO, goodput, energy, cost (see frame.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "frame.h"
#include "json.h"
#include "text.h"

static const char *source_name(unsigned int s)
{
	switch (s) {
	case TT_ESRC_POWERCAP:
		return "powercap";
	case TT_ESRC_HWMON:
		return "hwmon";
	case TT_ESRC_NVML:
		return "nvml";
	default:
		return "sensor";
	}
}

static bool has_energy(const struct tt_frame_view *v)
{
	return v->en && v->en->ndomains;
}

/* ---- text ---- */

static void text_e2e(FILE *out, const struct tt_frame *f)
{
	char p50[32], p90[32], p99[32], max[32];
	const struct tt_summary *s = &f->e2e;

	if (!s->n) {
		fprintf(out, "%-10s %10s %10s %10s %10s  (no requests)\n",
			"E2E", "-", "-", "-", "-");
		return;
	}
	fprintf(out, "%-10s %10s %10s %10s %10s  (%zu requests)\n", "E2E",
		tt_fmt_ms(p50, sizeof(p50), s->p50),
		tt_fmt_ms(p90, sizeof(p90), s->p90),
		tt_fmt_ms(p99, sizeof(p99), s->p99),
		tt_fmt_ms(max, sizeof(max), s->max), s->n);
	fprintf(out,
		"E2E (wire): first request byte in the kernel to the last token's first byte on the device%s.\n",
		f->e2e_not_at_wire ?
			"; for requests whose last token was not seen there, to its send" :
			"");
}

static void text_slo(FILE *out, const struct tt_frame *f)
{
	const struct tt_slo *s = &f->slo;
	char b[32];
	bool first = true;
	int c;

	fprintf(out, "\nSLO %s%s(", s->name, s->name[0] ? " " : "");
	if (s->ttft_ns)
		fprintf(out, "TTFT <= %s ms",
			tt_fmt_ms(b, sizeof(b), s->ttft_ns));
	if (s->tpot_ns)
		fprintf(out, "%sTPOT <= %s ms", s->ttft_ns ? ", " : "",
			tt_fmt_ms(b, sizeof(b), s->tpot_ns));
	if (s->e2e_ns)
		fprintf(out, "%sE2E <= %s ms",
			s->ttft_ns || s->tpot_ns ? ", " : "",
			tt_fmt_ms(b, sizeof(b), s->e2e_ns));
	fprintf(out, "): %zu of %zu complete requests met it (%.1f%%)\n",
		f->met, f->served, 100.0 * f->attainment);
	fprintf(out,
		"goodput: %.2f requests/s, %.1f output tokens/s within the SLO over %.3f s active\n",
		f->goodput_rps, f->goodput_tps, f->active_ns / 1e9);
	fprintf(out, "p99 against the limits:");
	if (s->ttft_ns)
		fprintf(out, " TTFT %s ms (%zu over)",
			tt_fmt_ms(b, sizeof(b), f->p99_ttft), f->over_ttft);
	if (s->tpot_ns)
		fprintf(out, " TPOT %s ms (%zu over)",
			tt_fmt_ms(b, sizeof(b), f->p99_tpot), f->over_tpot);
	if (s->e2e_ns)
		fprintf(out, " E2E %s ms (%zu over)",
			tt_fmt_ms(b, sizeof(b), f->p99_e2e), f->over_e2e);
	fprintf(out, "\nmissed by stage:");
	for (c = 0; c < TT_SLO_NCAUSES; c++) {
		if (!f->by_cause[c])
			continue;
		fprintf(out, "%s %s %zu", first ? "" : ",",
			tt_slo_cause_name(c), f->by_cause[c]);
		first = false;
	}
	fprintf(out, "%s\n", first ? " none" : "");
	fprintf(out,
		"(a TTFT miss goes to the stage furthest above its median among the requests that met; decode: TTFT met, TPOT or E2E not; %zu incomplete request(s) not judged",
		f->excluded);
	if (f->hops)
		fprintf(out, "; %zu hops counted apart", f->hops);
	if (f->tls)
		fprintf(out, "; %zu TLS handshake exchanges counted apart",
			f->tls);
	fprintf(out, ")\n");
}

static void text_energy(FILE *out, const struct tt_frame_view *v)
{
	char name[TT_TEXT_ROOM(TT_ENERGY_NAME_LEN + 1)];
	const struct tt_energy_result *en = v->en;
	const struct tt_energy_domain *d;
	__u64 ns;
	double j;
	size_t i;

	if (!has_energy(v)) {
		fprintf(out, "\nenergy: no energy sensor in this recording\n");
		return;
	}
	fprintf(out,
		"\nenergy: %.3f J over %.3f s (%.2f W mean) from %zu sensor(s)",
		en->joules, en->span_ns / 1e9, en->mean_w, en->ndomains);
	if (en->tokens && en->joules > 0)
		fprintf(out,
			"; %.4f J per output token, %.2f tokens/J (%llu tokens)\n",
			en->j_per_token, en->tokens_per_j,
			(unsigned long long)en->tokens);
	else
		fprintf(out, "; no output token to divide them by\n");
	for (i = 0; i < v->acc->nd; i++) {
		d = &v->acc->d[i];
		j = tt_energy_joules(d, &ns);
		if (d->ts.n < 2)
			continue;
		fprintf(out, "  %-28s %-8s %12.3f J %10.2f W%s\n",
			tt_text_escape(name, sizeof(name), d->name,
				       sizeof(d->name)),
			source_name(d->source), j, ns ? j / (ns / 1e9) : 0,
			d->kind == TT_ENERGY_POWER ? "  (from power readings)" :
						     "");
	}
	fprintf(out,
		"per request: each interval's energy split among the requests in flight by their time in it; %.3f J with none in flight\n",
		en->idle_j);
}

static void text_cost(FILE *out, const struct tt_frame *f)
{
	fprintf(out,
		"\ncost at $%.2f/h: $%.4f per 1M output tokens, $%.6f per request (measured throughput)",
		f->price_per_hour, f->usd_per_mtok, f->usd_per_request);
	if (f->has_slo && f->goodput_tps > 0)
		fprintf(out, "; $%.4f per 1M tokens within the SLO",
			f->usd_per_good_mtok);
	else if (f->has_slo)
		fprintf(out, "; no token within the SLO");
	fputc('\n', out);
}

int tt_frame_text(FILE *out, const struct tt_frame_view *v)
{
	const struct tt_frame *f = v->f;

	text_e2e(out, f);
	fprintf(out,
		"throughput: %zu complete requests, %llu output tokens over %.3f s active: %.2f requests/s, %.1f output tokens/s\n",
		f->served, (unsigned long long)f->output_tokens,
		f->active_ns / 1e9, f->rps, f->output_tps);
	if (f->has_slo)
		text_slo(out, f);
	if (v->acc)
		text_energy(out, v);
	if (v->en) {
		fprintf(out,
			"utilization: traced threads %.2f cores busy over the active time",
			v->en->cpu_cores);
		if (v->en->has_util)
			fprintf(out, "; GPU %.1f%% (NVML)", v->en->gpu_util);
		fputc('\n', out);
	}
	if (f->price_per_hour > 0)
		text_cost(out, f);
	return ferror(out) ? -EIO : 0;
}

const char *tt_frame_cell(const struct tt_frame_view *v, size_t i, char *buf,
			  size_t len)
{
	const struct tt_frame_req *q = i < v->f->nreq ? &v->f->req[i] : NULL;

	if (!q || q->verdict == TT_SLO_NOT_JUDGED)
		snprintf(buf, len, "-");
	else if (q->verdict == TT_SLO_MET)
		snprintf(buf, len, "met");
	else
		snprintf(buf, len, "miss:%s", tt_slo_cause_name(q->cause));
	return buf;
}

/* ---- JSON ---- */

/* "name":value with 9 significant digits, or null when !known */
static void json_num(FILE *out, const char *name, double x, bool known,
		     bool first)
{
	fprintf(out, "%s\"%s\":", first ? "" : ",", name);
	if (known)
		fprintf(out, "%.9g", x);
	else
		fprintf(out, "null");
}

static void json_slo(FILE *out, const struct tt_frame *f)
{
	const struct tt_slo *s = &f->slo;
	bool first = true;
	int c;

	if (!f->has_slo) {
		fprintf(out, ",\"slo\":null");
		return;
	}
	fprintf(out, ",\"slo\":{\"name\":");
	if (s->name[0])
		tt_json_str(out, s->name, sizeof(s->name));
	else
		fprintf(out, "null");
	tt_json_kv_opt(out, "ttft_ns", s->ttft_ns);
	tt_json_kv_opt(out, "tpot_ns", s->tpot_ns);
	tt_json_kv_opt(out, "e2e_ns", s->e2e_ns);
	fprintf(out,
		",\"requests\":%zu,\"met\":%zu,\"not_judged\":%zu,"
		"\"hops\":%zu,\"tls_exchanges_apart\":%zu",
		f->served, f->met, f->excluded, f->hops, f->tls);
	json_num(out, "attainment", f->attainment, f->served, false);
	json_num(out, "goodput_rps", f->goodput_rps, f->active_ns, false);
	json_num(out, "goodput_tps", f->goodput_tps, f->active_ns, false);
	fprintf(out, ",\"active_ns\":%llu", (unsigned long long)f->active_ns);
	tt_json_kv_opt(out, "p99_ttft_ns", f->p99_ttft);
	tt_json_kv_opt(out, "p99_tpot_ns", f->p99_tpot);
	tt_json_kv_opt(out, "p99_e2e_ns", f->p99_e2e);
	fprintf(out, ",\"over\":{\"ttft\":%zu,\"tpot\":%zu,\"e2e\":%zu}",
		f->over_ttft, f->over_tpot, f->over_e2e);
	fprintf(out, ",\"violations_by_stage\":{");
	for (c = 0; c < TT_SLO_NCAUSES; c++) {
		if (!f->by_cause[c])
			continue;
		fprintf(out, "%s\"%s\":%zu", first ? "" : ",",
			tt_slo_cause_name(c), f->by_cause[c]);
		first = false;
	}
	fprintf(out, "}}");
}

/* {"name":..,"source":..,"joules":..} of one sensor */
static void json_sensor(FILE *out, const struct tt_energy_domain *d)
{
	__u64 ns;
	double j = tt_energy_joules(d, &ns);

	fprintf(out, "{\"name\":");
	tt_json_str(out, d->name, sizeof(d->name));
	fprintf(out, ",\"source\":\"%s\",\"from\":\"%s\"",
		source_name(d->source),
		d->kind == TT_ENERGY_POWER ? "power" : "energy");
	json_num(out, "joules", j, d->ts.n >= 2, false);
	json_num(out, "mean_w", ns ? j / (ns / 1e9) : 0, ns, false);
	fprintf(out, ",\"span_ns\":%llu,\"wraps\":%llu", (unsigned long long)ns,
		(unsigned long long)d->wraps);
	json_num(out, "util_percent",
		 d->util_n ? (double)d->util_sum / d->util_n : 0, d->util_n,
		 false);
	fputc('}', out);
}

static void json_energy(FILE *out, const struct tt_frame_view *v)
{
	const struct tt_energy_result *en = v->en;
	bool first = true;
	size_t i;

	if (!has_energy(v)) {
		fprintf(out, ",\"energy\":null");
		return;
	}
	fprintf(out, ",\"energy\":{\"sensors\":[");
	for (i = 0; i < v->acc->nd; i++) {
		if (v->acc->d[i].ts.n < 2 && !v->acc->d[i].util_n)
			continue;
		if (!first)
			fputc(',', out);
		json_sensor(out, &v->acc->d[i]);
		first = false;
	}
	fputc(']', out);
	json_num(out, "joules", en->joules, true, false);
	fprintf(out, ",\"span_ns\":%llu,\"tokens\":%llu",
		(unsigned long long)en->span_ns,
		(unsigned long long)en->tokens);
	json_num(out, "mean_w", en->mean_w, en->span_ns, false);
	json_num(out, "j_per_token", en->j_per_token, en->tokens, false);
	json_num(out, "tokens_per_j", en->tokens_per_j, en->tokens, false);
	json_num(out, "idle_j", en->idle_j, true, false);
	fputc('}', out);
}

int tt_frame_json(FILE *out, const struct tt_frame_view *v)
{
	const struct tt_frame *f = v->f;
	const struct tt_summary *s = &f->e2e;

	if (s->n)
		fprintf(out,
			",\"e2e_ns\":{\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"max\":%llu,\"n\":%zu}",
			(unsigned long long)s->p50, (unsigned long long)s->p90,
			(unsigned long long)s->p99, (unsigned long long)s->max,
			s->n);
	else
		fprintf(out,
			",\"e2e_ns\":{\"p50\":null,\"p90\":null,\"p99\":null,\"max\":null,\"n\":0}");
	fprintf(out,
		",\"throughput\":{\"requests\":%zu,\"output_tokens\":%llu,\"active_ns\":%llu",
		f->served, (unsigned long long)f->output_tokens,
		(unsigned long long)f->active_ns);
	json_num(out, "rps", f->rps, f->active_ns, false);
	json_num(out, "output_tps", f->output_tps, f->active_ns, false);
	fputc('}', out);
	json_slo(out, f);
	if (v->acc)
		json_energy(out, v);
	if (v->en) {
		fprintf(out, ",\"utilization\":{");
		json_num(out, "cpu_cores", v->en->cpu_cores, f->active_ns,
			 true);
		json_num(out, "gpu_percent", v->en->gpu_util, v->en->has_util,
			 false);
		fputc('}', out);
	}
	if (f->price_per_hour > 0) {
		fprintf(out, ",\"cost\":{");
		json_num(out, "usd_per_hour", f->price_per_hour, true, true);
		json_num(out, "usd_per_1m_output_tokens", f->usd_per_mtok,
			 f->output_tps > 0, false);
		json_num(out, "usd_per_request", f->usd_per_request, f->rps > 0,
			 false);
		json_num(out, "usd_per_1m_good_tokens", f->usd_per_good_mtok,
			 f->has_slo && f->goodput_tps > 0, false);
		fputc('}', out);
	} else {
		fprintf(out, ",\"cost\":null");
	}
	return ferror(out) ? -EIO : 0;
}

int tt_frame_request_json(FILE *out, const struct tt_frame_view *v, size_t i)
{
	const struct tt_frame_req *q = &v->f->req[i];

	if (i >= v->f->nreq)
		return 0;
	tt_json_kv_opt(out, "e2e_ns", q->e2e_ns);
	fprintf(out, ",\"e2e_at_wire\":%s",
		q->e2e_ns && q->e2e_at_wire ? "true" : "false");
	json_num(out, "output_tps", q->output_tps, q->e2e_ns, false);
	if (q->verdict == TT_SLO_NOT_JUDGED)
		fprintf(out, ",\"slo_met\":null,\"slo_miss_stage\":null");
	else if (q->verdict == TT_SLO_MET)
		fprintf(out, ",\"slo_met\":true,\"slo_miss_stage\":null");
	else
		fprintf(out, ",\"slo_met\":false,\"slo_miss_stage\":\"%s\"",
			tt_slo_cause_name(q->cause));
	json_num(out, "energy_j", has_energy(v) ? v->en->req_j[i] : 0,
		 has_energy(v) && q->e2e_ns, false);
	return ferror(out) ? -EIO : 0;
}
