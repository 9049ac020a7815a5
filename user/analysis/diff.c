// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Samples of requests and their bootstrap comparison (see diff.h). A
 * resample is drawn as a count per request (how many times it was drawn);
 * each metric's values are sorted once with the request they belong to,
 * so a resample's percentiles are one weighted walk, no sort.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "diff.h"

const char *tt_diff_stage_name(int k)
{
	return tt_stage_row_name(k);
}

const char *tt_metric_name(int m)
{
	static const char *const names[] = { "TTFT", "TPOT", "ITL", "E2E" };

	if (m < TT_M_STAGE0)
		return names[m];
	return tt_diff_stage_name(m - TT_M_STAGE0);
}

const char *tt_stat_name(int k)
{
	static const char *const names[TT_S_MAX] = { "p50", "p90", "p99",
						     "mean", "share" };

	return names[k];
}

static const double stat_pct[3] = { 50, 90, 99 };

/* ---- samples ---- */

int tt_run_sample_add(struct tt_run_sample *s, const struct tt_run_req *r,
		      const __u64 *gaps, size_t ngaps)
{
	struct tt_run_req *n;

	if (tt_grow((void **)&s->r, &s->cap, s->n + 1, sizeof(*s->r)) ||
	    (ngaps && tt_u64vec_reserve(&s->itl, ngaps)))
		return -ENOMEM;
	n = &s->r[s->n++];
	*n = *r;
	n->itl_off = s->itl.n;
	n->itl_n = ngaps;
	if (ngaps)
		memcpy(s->itl.v + s->itl.n, gaps, ngaps * sizeof(*gaps));
	s->itl.n += ngaps;
	return 0;
}

/* The request's E2E: to its last token's first byte on the wire. */
static bool request_e2e(const struct tt_request *r, __u64 *e2e)
{
	if (!r->t_arrive)
		return false;
	if (r->t_last_wire && r->t_last_wire >= r->t_arrive)
		*e2e = r->t_last_wire - r->t_arrive;
	else if (r->tokens == 1 && r->ttft)
		*e2e = r->ttft; /* its only token is its first */
	else
		return false;
	return true;
}

int tt_run_sample_build(struct tt_run_sample *s, const struct tt_analyzer *a,
			bool include_incomplete)
{
	const struct tt_cp_result *res;
	const struct tt_request *r;
	struct tt_run_req q;
	const __u64 *gaps;
	size_t i, ngaps;
	int k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		if ((!r->complete && !include_incomplete) ||
		    (r->incomplete & TT_INC_NOT_TOKENS))
			continue;
		memset(&q, 0, sizeof(q));
		q.idx = i;
		q.id = r->id;
		q.has_ttft = r->complete || r->ttft;
		q.ttft = r->ttft;
		q.has_tpot = r->tokens >= 2 && r->t_first_write &&
			     r->t_last_write >= r->t_first_write;
		q.tpot = r->tpot;
		q.has_e2e = request_e2e(r, &q.e2e);
		res = tt_analyzer_cp_result(a, i);
		q.has_stages = q.has_ttft && res &&
			       !(res->incomplete & TT_CP_INC_NOT_WALKED);
		for (k = 0; q.has_stages && k < TT_DIFF_NSTAGES; k++)
			q.stage[k] = tt_stage_row_ns(r->stage_ns, k);
		gaps = tt_analyzer_request_itl(a, i, &ngaps);
		if (tt_run_sample_add(s, &q, gaps, ngaps))
			return -ENOMEM;
	}
	return 0;
}

void tt_run_sample_free(struct tt_run_sample *s)
{
	free(s->r);
	tt_u64vec_free(&s->itl);
	memset(s, 0, sizeof(*s));
}

/* Metric m of request i: whether known, and its values (1, or its gaps). */
static size_t req_values(const struct tt_run_sample *s, size_t i, int m,
			 const __u64 **v)
{
	const struct tt_run_req *r = &s->r[i];

	switch (m) {
	case TT_M_TTFT:
		*v = &r->ttft;
		return r->has_ttft;
	case TT_M_TPOT:
		*v = &r->tpot;
		return r->has_tpot;
	case TT_M_ITL:
		*v = s->itl.v + r->itl_off;
		return r->itl_n;
	case TT_M_E2E:
		*v = &r->e2e;
		return r->has_e2e;
	default:
		*v = &r->stage[m - TT_M_STAGE0];
		return r->has_stages;
	}
}

/* A metric's values sorted, each with the request it belongs to. */
struct mvals {
	__u64 *v;
	__u32 *owner;
	size_t n;
};

struct vo {
	__u64 v;
	__u32 owner;
};

static int cmp_vo(const void *x, const void *y)
{
	const struct vo *a = x, *b = y;

	if (a->v != b->v)
		return a->v < b->v ? -1 : 1;
	return a->owner < b->owner ? -1 : a->owner > b->owner;
}

static int mvals_build(const struct tt_run_sample *s, int m, struct mvals *mv)
{
	struct vo *t = NULL;
	size_t i, j, n = 0, cap = 0, k;
	const __u64 *v;
	int err = -ENOMEM;

	memset(mv, 0, sizeof(*mv));
	for (i = 0; i < s->n; i++) {
		k = req_values(s, i, m, &v);
		if (tt_grow((void **)&t, &cap, n + k, sizeof(*t)))
			goto cleanup;
		for (j = 0; j < k; j++)
			t[n++] = (struct vo){ v[j], (__u32)i };
	}
	if (n)
		qsort(t, n, sizeof(*t), cmp_vo);
	mv->v = malloc((n ? n : 1) * sizeof(*mv->v));
	mv->owner = malloc((n ? n : 1) * sizeof(*mv->owner));
	if (!mv->v || !mv->owner)
		goto cleanup;
	for (i = 0; i < n; i++) {
		mv->v[i] = t[i].v;
		mv->owner[i] = t[i].owner;
	}
	mv->n = n;
	err = 0;
cleanup:
	free(t);
	return err;
}

static void mvals_free(struct mvals *mv)
{
	free(mv->v);
	free(mv->owner);
}

long tt_run_values(const struct tt_run_sample *s, int m, __u64 **out)
{
	struct mvals mv;

	*out = NULL;
	if (mvals_build(s, m, &mv))
		return -ENOMEM;
	free(mv.owner);
	*out = mv.v;
	return (long)mv.n;
}

size_t tt_run_pick(const struct tt_run_sample *s, double p)
{
	struct mvals mv;
	size_t i, best = SIZE_MAX;
	__u64 want;

	if (mvals_build(s, TT_M_TTFT, &mv) || !mv.n)
		goto cleanup;
	want = tt_percentile_sorted(mv.v, mv.n, p);
	for (i = 0; i < s->n; i++) {
		if (s->r[i].has_ttft && s->r[i].ttft == want) {
			best = i;
			break;
		}
	}
cleanup:
	mvals_free(&mv);
	return best;
}

/* ---- statistics of a weighted sample ---- */

/*
 * p50, p90, p99 (nearest rank, each value counted c[owner] times) and the
 * mean of mv into st; false when no value has weight.
 */
static bool weighted_stats(const struct mvals *mv, const __u32 *c,
			   double st[TT_S_MAX])
{
	unsigned __int128 sum = 0;
	__u64 w = 0, cum = 0, rank[3];
	size_t i;
	int k = 0;
	double r;

	for (i = 0; i < mv->n; i++) {
		w += c[mv->owner[i]];
		sum += (unsigned __int128)mv->v[i] * c[mv->owner[i]];
	}
	if (!w)
		return false;
	for (k = 0; k < 3; k++) {
		r = ceil(stat_pct[k] / 100.0 * (double)w - 1e-9);
		rank[k] = r < 1 ? 1 : r > (double)w ? w : (__u64)r;
	}
	for (i = 0, k = 0; i < mv->n && k < 3; i++) {
		cum += c[mv->owner[i]];
		while (k < 3 && cum >= rank[k])
			st[k++] = (double)mv->v[i];
	}
	st[TT_S_MEAN] = (double)sum / (double)w;
	return true;
}

/* Stage k's share of the summed TTFT of the requests with stages. */
static bool weighted_share(const struct tt_run_sample *s, const __u32 *c, int k,
			   double *share)
{
	double num = 0, den = 0;
	size_t i;

	for (i = 0; i < s->n; i++) {
		if (!s->r[i].has_stages || !c[i])
			continue;
		num += (double)s->r[i].stage[k] * c[i];
		den += (double)s->r[i].ttft * c[i];
	}
	if (den <= 0)
		return false;
	*share = num / den;
	return true;
}

/* Every statistic of every metric; valid[m][k] whether it has a value. */
static void all_stats(const struct tt_run_sample *s, const struct mvals *mv,
		      const __u32 *c, double st[TT_M_MAX][TT_S_MAX],
		      bool valid[TT_M_MAX][TT_S_MAX])
{
	int m, k;

	for (m = 0; m < TT_M_MAX; m++) {
		bool ok = weighted_stats(&mv[m], c, st[m]);

		for (k = 0; k < TT_S_SHARE; k++)
			valid[m][k] = ok;
		valid[m][TT_S_SHARE] = m >= TT_M_STAGE0 &&
				       weighted_share(s, c, m - TT_M_STAGE0,
						      &st[m][TT_S_SHARE]);
	}
}

/* ---- the bootstrap ---- */

/* splitmix64: a fixed seed, the same stream on every machine */
static __u64 rng_next(__u64 *x)
{
	__u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* n draws with replacement from n requests, as counts */
static void resample(__u32 *c, size_t n, __u64 *rng)
{
	size_t i;

	memset(c, 0, n * sizeof(*c));
	for (i = 0; i < n; i++)
		c[(size_t)(((unsigned __int128)rng_next(rng) * n) >> 64)]++;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* The nearest-rank percentile p of sorted v[0..n). */
static double pct_double(const double *v, size_t n, double p)
{
	double r = ceil(p / 100.0 * (double)n - 1e-9);
	size_t i = r < 1 ? 1 : r > (double)n ? n : (size_t)r;

	return v[i - 1];
}

/* The bootstrap deltas of every cell, resamples of them. */
struct boot {
	double *delta; /* [TT_M_MAX * TT_S_MAX][resamples] */
	size_t *n; /* [TT_M_MAX * TT_S_MAX] */
};

static int bootstrap(const struct tt_run_sample *a,
		     const struct tt_run_sample *b, const struct mvals *ma,
		     const struct mvals *mb, struct tt_diff *d, struct boot *bt)
{
	double sa[TT_M_MAX][TT_S_MAX], sb[TT_M_MAX][TT_S_MAX];
	bool va[TT_M_MAX][TT_S_MAX], vb[TT_M_MAX][TT_S_MAX];
	__u32 *ca = NULL, *cb = NULL;
	unsigned int it, R = d->o.resamples;
	__u64 rng = d->o.seed;
	int m, k, err = -ENOMEM;
	size_t cell;

	ca = calloc(a->n ? a->n : 1, sizeof(*ca));
	cb = calloc(b->n ? b->n : 1, sizeof(*cb));
	bt->delta = calloc((size_t)TT_M_MAX * TT_S_MAX * R, sizeof(double));
	bt->n = calloc((size_t)TT_M_MAX * TT_S_MAX, sizeof(size_t));
	if (!ca || !cb || !bt->delta || !bt->n)
		goto cleanup;
	for (it = 0; it < R; it++) {
		resample(ca, a->n, &rng);
		resample(cb, b->n, &rng);
		all_stats(a, ma, ca, sa, va);
		all_stats(b, mb, cb, sb, vb);
		for (m = 0; m < TT_M_MAX; m++) {
			for (k = 0; k < TT_S_MAX; k++) {
				if (!va[m][k] || !vb[m][k])
					continue;
				cell = (size_t)m * TT_S_MAX + k;
				bt->delta[cell * R + bt->n[cell]++] =
					sb[m][k] - sa[m][k];
			}
		}
	}
	err = 0;
cleanup:
	free(ca);
	free(cb);
	return err;
}

/*
 * A delta worth flagging beside its interval (diff.h); a percentile only
 * with TT_DIFF_TAIL values beyond it in each run: the bootstrap of an
 * extreme order statistic (p99 of 40 values is their maximum) is not to
 * be trusted.
 */
static bool material(const struct tt_diff *d, const struct tt_diff_cell *c,
		     int stat, size_t na, size_t nb)
{
	size_t n = na < nb ? na : nb;

	if (stat < 3 &&
	    (double)n * (1 - stat_pct[stat] / 100) < TT_DIFF_TAIL - 1e-9)
		return false;
	return fabs(c->delta) >= (double)d->o.min_ns &&
	       fabs(c->delta) >= d->o.rel * fabs(c->a);
}

/* Fills each cell from the whole samples and the bootstrap; 0 or -ENOMEM. */
static int fill_cells(struct tt_diff *d, const struct tt_run_sample *a,
		      const struct tt_run_sample *b, const struct mvals *ma,
		      const struct mvals *mb, struct boot *bt)
{
	double sa[TT_M_MAX][TT_S_MAX], sb[TT_M_MAX][TT_S_MAX];
	bool va[TT_M_MAX][TT_S_MAX], vb[TT_M_MAX][TT_S_MAX];
	__u32 *ones_a, *ones_b;
	struct tt_diff_cell *c;
	size_t i, cell, n;
	int m, k, err = -ENOMEM;
	double *v;

	/* the whole samples: every request drawn once */
	ones_a = malloc((a->n ? a->n : 1) * sizeof(*ones_a));
	ones_b = malloc((b->n ? b->n : 1) * sizeof(*ones_b));
	if (!ones_a || !ones_b)
		goto cleanup;
	for (i = 0; i < a->n; i++)
		ones_a[i] = 1;
	for (i = 0; i < b->n; i++)
		ones_b[i] = 1;
	all_stats(a, ma, ones_a, sa, va);
	all_stats(b, mb, ones_b, sb, vb);
	for (m = 0; m < TT_M_MAX; m++) {
		for (k = 0; k < TT_S_MAX; k++) {
			c = &d->cell[m][k];
			cell = (size_t)m * TT_S_MAX + k;
			n = bt->n[cell];
			c->valid = va[m][k] && vb[m][k] && n;
			if (!c->valid)
				continue;
			c->a = sa[m][k];
			c->b = sb[m][k];
			c->delta = c->b - c->a;
			v = bt->delta + cell * d->o.resamples;
			qsort(v, n, sizeof(*v), cmp_double);
			c->lo = pct_double(v, n, 2.5);
			c->hi = pct_double(v, n, 97.5);
			c->significant = k != TT_S_SHARE &&
					 (c->lo > 0 || c->hi < 0) &&
					 material(d, c, k, ma[m].n, mb[m].n);
			/* a stage that moved less than a tenth of what TTFT
			 * moved at that statistic explains none of it: a side
			 * effect (more I/O, a little more runqueue) */
			if (c->significant && m >= TT_M_STAGE0 &&
			    d->cell[TT_M_TTFT][k].valid &&
			    fabs(c->delta) < TT_DIFF_SIDE_SHARE *
						  fabs(d->cell[TT_M_TTFT][k].delta))
				c->significant = false;
			if (c->significant && m >= TT_M_STAGE0)
				d->stage_changed[m - TT_M_STAGE0] = true;
		}
	}
	err = 0;
cleanup:
	free(ones_a);
	free(ones_b);
	return err;
}

/* ---- the verdict ---- */

/* Requests with stages, by TTFT (then id): the window's candidates. */
static int cmp_req_ttft(const void *x, const void *y)
{
	const struct tt_run_req *a = *(const struct tt_run_req *const *)x;
	const struct tt_run_req *b = *(const struct tt_run_req *const *)y;

	if (a->ttft != b->ttft)
		return a->ttft < b->ttft ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Mean TTFT and stages of the requests (with stages) whose TTFT rank lies
 * within TT_DIFF_WINDOW percentage points of percentile p; 0 or -ENOMEM.
 */
#define TT_DIFF_WINDOW 2.0
static int window_means(const struct tt_run_sample *s, double p,
			double means[1 + TT_DIFF_NSTAGES], size_t *nwin)
{
	const struct tt_run_req **v;
	size_t i, n = 0, lo, hi;
	double r;
	int k;

	memset(means, 0, (1 + TT_DIFF_NSTAGES) * sizeof(*means));
	*nwin = 0;
	v = malloc((s->n ? s->n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < s->n; i++)
		if (s->r[i].has_stages)
			v[n++] = &s->r[i];
	if (!n)
		goto cleanup;
	qsort(v, n, sizeof(*v), cmp_req_ttft);
	r = ceil((p - TT_DIFF_WINDOW) / 100.0 * (double)n - 1e-9);
	lo = r < 1 ? 1 : (size_t)r;
	r = ceil((p + TT_DIFF_WINDOW) / 100.0 * (double)n - 1e-9);
	hi = r > (double)n ? n : r < 1 ? 1 : (size_t)r;
	for (i = lo - 1; i < hi; i++) {
		means[0] += (double)v[i]->ttft;
		for (k = 0; k < TT_DIFF_NSTAGES; k++)
			means[1 + k] += (double)v[i]->stage[k];
	}
	*nwin = hi - lo + 1;
	for (k = 0; k < 1 + TT_DIFF_NSTAGES; k++)
		means[k] /= (double)*nwin;
cleanup:
	free(v);
	return 0;
}

/*
 * The headline: the first TTFT percentile of p99, p90, p50 whose change is
 * significant (else p99), and the stage whose mean, over the requests
 * around that percentile, moved most in the direction TTFT did. The
 * stages tile each TTFT, so their deltas of means add up to TTFT's.
 */
static int explain(struct tt_diff *d, const struct tt_run_sample *a,
		   const struct tt_run_sample *b)
{
	static const int order[3] = { TT_S_P99, TT_S_P90, TT_S_P50 };
	double wa[1 + TT_DIFF_NSTAGES], wb[1 + TT_DIFF_NSTAGES], x, best = 0;
	struct tt_diff_why *w = &d->why;
	int i, k;

	w->stat = TT_S_P99;
	w->stage = -1;
	for (i = 0; i < 3; i++) {
		if (d->cell[TT_M_TTFT][order[i]].significant) {
			w->stat = order[i];
			break;
		}
	}
	if (window_means(a, stat_pct[w->stat], wa, &w->na) ||
	    window_means(b, stat_pct[w->stat], wb, &w->nb))
		return -ENOMEM;
	if (!w->na || !w->nb)
		return 0;
	w->window_delta = wb[0] - wa[0];
	for (k = 0; k < TT_DIFF_NSTAGES; k++) {
		x = wb[1 + k] - wa[1 + k];
		if (w->window_delta < 0)
			x = -x;
		if (x > best) {
			best = x;
			w->stage = k;
			w->stage_delta = wb[1 + k] - wa[1 + k];
		}
	}
	return 0;
}

int tt_diff_compute(const struct tt_run_sample *a,
		    const struct tt_run_sample *b, const struct tt_diff_opts *o,
		    struct tt_diff *d)
{
	struct mvals ma[TT_M_MAX] = {}, mb[TT_M_MAX] = {};
	struct boot bt = {};
	int m, err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	if (o)
		d->o = *o;
	if (!d->o.resamples)
		d->o.resamples = TT_DIFF_RESAMPLES;
	if (!d->o.seed)
		d->o.seed = TT_DIFF_SEED;
	if (!d->o.min_ns)
		d->o.min_ns = TT_DIFF_MIN_NS;
	if (d->o.rel <= 0)
		d->o.rel = TT_DIFF_REL;
	d->na = a->n;
	d->nb = b->n;
	d->why.stat = d->why.stage = -1;
	for (m = 0; m < TT_M_MAX; m++)
		if (mvals_build(a, m, &ma[m]) || mvals_build(b, m, &mb[m]))
			goto cleanup;
	err = -ENODATA;
	if (!ma[TT_M_TTFT].n || !mb[TT_M_TTFT].n)
		goto cleanup;
	err = bootstrap(a, b, ma, mb, d, &bt);
	if (err)
		goto cleanup;
	err = fill_cells(d, a, b, ma, mb, &bt);
	if (!err)
		err = explain(d, a, b);
cleanup:
	for (m = 0; m < TT_M_MAX; m++) {
		mvals_free(&ma[m]);
		mvals_free(&mb[m]);
	}
	free(bt.delta);
	free(bt.n);
	return err;
}

/* x scaled by f, 0 when it would print as -0 with prec decimals */
static double shown(double x, double f, int prec)
{
	x *= f;
	return fabs(x) < 0.5 * pow(10, -prec) ? 0 : x;
}

const char *tt_diff_verdict(const struct tt_diff *d, char *buf, size_t len)
{
	const struct tt_diff_cell *c;
	int off;

	if (d->why.stat < 0) {
		snprintf(buf, len, "no TTFT to compare");
		return buf;
	}
	c = &d->cell[TT_M_TTFT][d->why.stat];
	off = snprintf(buf, len, "%s%s TTFT %+.1f ms [%.1f, %.1f]",
		       c->significant ? "" : "no significant change: ",
		       tt_stat_name(d->why.stat), shown(c->delta, 1e-6, 1),
		       shown(c->lo, 1e-6, 1), shown(c->hi, 1e-6, 1));
	if (off < 0 || (size_t)off >= len || !c->significant)
		return buf;
	if (d->why.stage >= 0)
		snprintf(buf + off, len - off, ", from %s %+.1f ms",
			 tt_diff_stage_name(d->why.stage),
			 shown(d->why.stage_delta, 1e-6, 1));
	else
		snprintf(buf + off, len - off, ", no stage explains it");
	return buf;
}

void tt_diff_cell_fmt(const struct tt_diff_cell *c, int stat, char *a, char *b,
		      char *delta, char *ci)
{
	double f = stat == TT_S_SHARE ? 100.0 : 1e-6;
	int prec = stat == TT_S_SHARE ? 1 : 3;

	if (!c->valid) {
		strcpy(a, "-");
		strcpy(b, "-");
		strcpy(delta, "-");
		strcpy(ci, "-");
		return;
	}
	snprintf(a, 32, "%.*f%s", prec, shown(c->a, f, prec),
		 stat == TT_S_SHARE ? "%" : "");
	snprintf(b, 32, "%.*f%s", prec, shown(c->b, f, prec),
		 stat == TT_S_SHARE ? "%" : "");
	snprintf(delta, 32, "%+.*f%s", prec, shown(c->delta, f, prec),
		 stat == TT_S_SHARE ? "%" : "");
	snprintf(ci, 64, "[%+.*f, %+.*f]", prec, shown(c->lo, f, prec), prec,
		 shown(c->hi, f, prec));
}
