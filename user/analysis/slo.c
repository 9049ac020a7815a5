// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * End-to-end latency, throughput, SLO attainment, goodput and cost over
 * the analyzer's requests (docs/design.md §9.1, §9.3).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "slo.h"
#include "util.h"

/* MLCommons' mlperf.conf server limits: TTFT and TPOT, in ms. */
static const struct {
	const char *name;
	unsigned int ttft_ms, tpot_ms;
} mlperf[] = {
	{ "llama2-70b", 2000, 200 },
	{ "llama2-70b-interactive", 450, 40 },
	{ "llama3_1-405b", 6000, 175 },
	{ "llama3_1-405b-interactive", 4500, 80 },
	{ "llama3_1-8b", 2000, 100 },
	{ "llama3_1-8b-interactive", 500, 30 },
	{ "deepseek-r1", 2000, 80 },
};

#define NPRESETS (sizeof(mlperf) / sizeof(mlperf[0]))

static int preset(const char *name, struct tt_slo *slo, char *err,
		  size_t errlen)
{
	size_t i, off = 0;

	for (i = 0; i < NPRESETS; i++) {
		if (strcmp(name, mlperf[i].name))
			continue;
		slo->ttft_ns = mlperf[i].ttft_ms * 1000000ULL;
		slo->tpot_ns = mlperf[i].tpot_ms * 1000000ULL;
		snprintf(slo->name, sizeof(slo->name), "mlperf:%s", name);
		return 0;
	}
	off = snprintf(err, errlen,
		       "unknown --slo preset 'mlperf:%.40s' (known:", name);
	for (i = 0; i < NPRESETS && off < errlen; i++)
		off += snprintf(err + off, errlen - off, " %s", mlperf[i].name);
	if (off < errlen)
		snprintf(err + off, errlen - off, ")");
	return -EINVAL;
}

/* One "key=DURATION" of a spec into its limit. */
static int limit(const char *item, struct tt_slo *slo, char *err, size_t errlen)
{
	static const char *const keys[] = { "ttft", "tpot", "e2e" };
	__u64 *dst[] = { &slo->ttft_ns, &slo->tpot_ns, &slo->e2e_ns };
	const char *eq = strchr(item, '=');
	size_t k, klen = eq ? (size_t)(eq - item) : 0;

	for (k = 0; eq && k < 3; k++) {
		if (klen != strlen(keys[k]) || strncmp(item, keys[k], klen))
			continue;
		if (*dst[k]) {
			snprintf(err, errlen, "--slo gives %s twice", keys[k]);
			return -EINVAL;
		}
		/* a bare number would be seconds to tt_parse_duration: ask */
		if (tt_parse_duration(eq + 1, dst[k]) ||
		    !strpbrk(eq + 1, "nums")) {
			snprintf(
				err, errlen,
				"invalid --slo limit '%.60s' (want a positive duration with its unit: ns, us, ms or s)",
				item);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(
		err, errlen,
		"invalid --slo item '%.60s' (want ttft=, tpot= or e2e= with a duration, or mlperf:NAME)",
		item);
	return -EINVAL;
}

int tt_slo_parse(const char *spec, struct tt_slo *slo, char *err, size_t errlen)
{
	char buf[256], *item, *save = NULL;
	int ret;

	memset(slo, 0, sizeof(*slo));
	if (!strncmp(spec, "mlperf:", 7))
		return preset(spec + 7, slo, err, errlen);
	if (strlen(spec) >= sizeof(buf) || !*spec) {
		snprintf(err, errlen, "invalid --slo '%.60s'", spec);
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		ret = limit(item, slo, err, errlen);
		if (ret)
			return ret;
	}
	if (!slo->ttft_ns && !slo->tpot_ns && !slo->e2e_ns) {
		snprintf(err, errlen, "invalid --slo '%.60s': no limit", spec);
		return -EINVAL;
	}
	return 0;
}

__u64 tt_request_e2e(const struct tt_request *r, bool *at_wire)
{
	__u64 end = 0;
	bool wire = true;

	if (r->tokens >= 2 && r->tpot_at_wire) {
		end = r->t_last_wire;
	} else if (r->tokens == 1) {
		end = r->t_wire;
	} else if (r->tokens >= 2) {
		end = r->t_last_write;
		wire = false;
	}
	if (at_wire)
		*at_wire = wire;
	if (!r->t_arrive || !end || end < r->t_arrive)
		return 0;
	return end - r->t_arrive;
}

const char *tt_slo_cause_name(int cause)
{
	if (cause >= 0 && cause < TT_SLO_NSTAGES)
		return tt_stage_row_name(cause);
	if (cause == TT_SLO_DECODE)
		return "decode";
	return cause == TT_SLO_UNATTRIBUTED ? "unattributed" : "unknown";
}

static bool judged(const struct tt_request *r)
{
	return r->complete && !(r->incomplete & TT_INC_NOT_TOKENS);
}

/* Each limit of the SLO the request meets; a TPOT limit does not apply to
 * a one-token response (it has no TPOT). */
static void judge(struct tt_frame *f, const struct tt_request *r,
		  struct tt_frame_req *q)
{
	const struct tt_slo *s = &f->slo;
	bool ttft_ok = !s->ttft_ns || r->ttft <= s->ttft_ns;
	bool tpot_ok = !s->tpot_ns || r->tokens < 2 || r->tpot <= s->tpot_ns;
	bool e2e_ok = !s->e2e_ns || (q->e2e_ns && q->e2e_ns <= s->e2e_ns);

	f->over_ttft += !ttft_ok;
	f->over_tpot += !tpot_ok;
	f->over_e2e += !e2e_ok;
	q->verdict = ttft_ok && tpot_ok && e2e_ok ? TT_SLO_MET : TT_SLO_MISSED;
	if (q->verdict == TT_SLO_MET) {
		f->met++;
		f->goodput_tps += r->tokens; /* divided by the time below */
		return;
	}
	if (ttft_ok)
		q->cause = TT_SLO_DECODE;
	else if (!r->attributed)
		q->cause = TT_SLO_UNATTRIBUTED;
}

/* The stage of r furthest above its median; with none above, its largest
 * (no stage stands out: the one the time went to). */
static int furthest_stage(const struct tt_request *r, const __u64 *median)
{
	__u64 ns, excess, best = 0, most = 0;
	int row, cause = -1, largest = 0;

	for (row = 0; row < TT_SLO_NSTAGES; row++) {
		ns = tt_stage_row_ns(r->stage_ns, row);
		excess = ns > median[row] ? ns - median[row] : 0;
		if (excess > best) {
			best = excess;
			cause = row;
		}
		if (ns > most) {
			most = ns;
			largest = row;
		}
	}
	return cause >= 0 ? cause : largest;
}

/*
 * The stage that made a TTFT miss: the one whose time exceeds most its
 * median among the requests that met the SLO (among all the served ones
 * when none met): where this request lost time that a good one did not.
 */
static int miss_causes(struct tt_frame *f, const struct tt_request *reqs)
{
	__u64 median[TT_SLO_NSTAGES] = {};
	struct tt_u64vec v = {};
	bool any_met = f->met > 0;
	size_t i;
	int row;

	for (row = 0; row < TT_SLO_NSTAGES; row++) {
		v.n = 0;
		for (i = 0; i < f->nreq; i++) {
			if (f->req[i].verdict == TT_SLO_NOT_JUDGED ||
			    (any_met && f->req[i].verdict != TT_SLO_MET) ||
			    !reqs[i].attributed)
				continue;
			if (tt_u64vec_push(&v, tt_stage_row_ns(reqs[i].stage_ns,
							       row))) {
				tt_u64vec_free(&v);
				return -ENOMEM;
			}
		}
		tt_sort_u64(v.v, v.n);
		median[row] = tt_percentile_sorted(v.v, v.n, 50);
	}
	tt_u64vec_free(&v);
	for (i = 0; i < f->nreq; i++) {
		if (f->req[i].verdict != TT_SLO_MISSED)
			continue;
		if (f->req[i].cause < 0)
			f->req[i].cause = furthest_stage(&reqs[i], median);
		f->by_cause[f->req[i].cause]++;
	}
	return 0;
}

/* p99 of one measure over the served requests (TPOT: those with two
 * tokens or more). */
static int p99_of(struct tt_frame *f, const struct tt_request *reqs, int which,
		  __u64 *out)
{
	struct tt_u64vec v = {};
	__u64 x;
	size_t i;

	for (i = 0; i < f->nreq; i++) {
		if (f->req[i].verdict == TT_SLO_NOT_JUDGED ||
		    (which == 1 && reqs[i].tokens < 2))
			continue;
		x = which == 0 ? reqs[i].ttft :
		    which == 1 ? reqs[i].tpot :
				 f->req[i].e2e_ns;
		if (tt_u64vec_push(&v, x)) {
			tt_u64vec_free(&v);
			return -ENOMEM;
		}
	}
	tt_sort_u64(v.v, v.n);
	*out = tt_percentile_sorted(v.v, v.n, 99);
	tt_u64vec_free(&v);
	return 0;
}

static int slo_compute(struct tt_frame *f, const struct tt_request *reqs)
{
	double secs = f->active_ns / 1e9;
	size_t i;
	int err;

	for (i = 0; i < f->nreq; i++)
		if (f->req[i].verdict != TT_SLO_NOT_JUDGED)
			judge(f, &reqs[i], &f->req[i]);
	f->attainment = f->served ? (double)f->met / (double)f->served : 0;
	f->goodput_rps = secs > 0 ? f->met / secs : 0;
	f->goodput_tps = secs > 0 ? f->goodput_tps / secs : 0;
	err = p99_of(f, reqs, 0, &f->p99_ttft);
	if (!err)
		err = p99_of(f, reqs, 1, &f->p99_tpot);
	if (!err)
		err = p99_of(f, reqs, 2, &f->p99_e2e);
	return err ? err : miss_causes(f, reqs);
}

/* Dollars per hour into dollars per million tokens and per request. */
static void cost(struct tt_frame *f)
{
	double per_s = f->price_per_hour / 3600.0;

	if (f->output_tps > 0)
		f->usd_per_mtok = per_s / f->output_tps * 1e6;
	if (f->rps > 0)
		f->usd_per_request = per_s / f->rps;
	if (f->has_slo && f->goodput_tps > 0)
		f->usd_per_good_mtok = per_s / f->goodput_tps * 1e6;
}

int tt_frame_compute(struct tt_frame *f, const struct tt_request *reqs,
		     size_t n, const bool *apart, const struct tt_slo *slo,
		     double price_per_hour)
{
	struct tt_u64vec e2e = {};
	const struct tt_request *r;
	struct tt_frame_req *q;
	double secs;
	size_t i;
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->req = calloc(n ? n : 1, sizeof(*f->req));
	if (!f->req)
		return -ENOMEM;
	f->nreq = n;
	f->has_slo = slo != NULL;
	if (slo)
		f->slo = *slo;
	f->price_per_hour = price_per_hour;
	for (i = 0; i < n; i++) {
		r = &reqs[i];
		q = &f->req[i];
		q->cause = -1;
		q->e2e_ns = tt_request_e2e(r, &q->e2e_at_wire);
		if (q->e2e_ns)
			q->output_tps = r->tokens * 1e9 / q->e2e_ns;
		/* inside the gateway's request that made it, as in the report */
		if (r->incomplete & TT_INC_HOP) {
			f->hops++;
			continue;
		}
		/* a handshake is no request (docs/design.md §3.1) */
		if (apart && apart[i]) {
			f->tls++;
			continue;
		}
		if (!judged(r) || !q->e2e_ns) {
			f->excluded++;
			continue;
		}
		/* judged without an SLO too: the served set of throughput */
		q->verdict = TT_SLO_MET;
		f->served++;
		f->output_tokens += r->tokens;
		f->e2e_not_at_wire += !q->e2e_at_wire;
		if (!f->t_start || r->t_arrive < f->t_start)
			f->t_start = r->t_arrive;
		if (r->t_arrive + q->e2e_ns > f->t_end)
			f->t_end = r->t_arrive + q->e2e_ns;
		if (tt_u64vec_push(&e2e, q->e2e_ns)) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	tt_summarize(e2e.v, e2e.n, &f->e2e);
	f->active_ns = f->t_end - f->t_start;
	secs = f->active_ns / 1e9;
	if (secs > 0) {
		f->rps = f->served / secs;
		f->output_tps = f->output_tokens / secs;
	}
	if (slo)
		err = slo_compute(f, reqs);
	else
		for (i = 0; i < n; i++)
			f->req[i].verdict = TT_SLO_NOT_JUDGED;
	if (price_per_hour > 0)
		cost(f);
cleanup:
	tt_u64vec_free(&e2e);
	return err;
}

void tt_frame_free(struct tt_frame *f)
{
	free(f->req);
	f->req = NULL;
	f->nreq = 0;
}
