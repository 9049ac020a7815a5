// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Joules from the recorder's sensor readings, the traced threads' on-CPU
 * time, and each request's share of the energy (docs/design.md §9.2).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "energy.h"

/* the reorder slack of switch records before the first one seen */
#define BUSY_SLACK_NS (10 * TT_BUSY_BUCKET_NS)

static struct tt_energy_domain *domain(struct tt_energy_acc *e,
				       const struct tt_energy *x)
{
	struct tt_energy_domain *d;

	if (x->domain < e->nd)
		return &e->d[x->domain];
	if (tt_grow((void **)&e->d, &e->capd, x->domain + 1, sizeof(*e->d)))
		return NULL;
	memset(e->d + e->nd, 0, (x->domain + 1 - e->nd) * sizeof(*e->d));
	e->nd = x->domain + 1;
	d = &e->d[x->domain];
	return d;
}

/* A counter reading: the energy since the last one, across a wrap (RAPL
 * counts up to max, then from 0); a counter that went back without a
 * known range was reset: nothing is known of that interval. */
static __u64 counter_delta(struct tt_energy_domain *d,
			   const struct tt_energy *x)
{
	if (x->value >= d->last_value)
		return x->value - d->last_value;
	if (x->max && d->last_value <= x->max) {
		d->wraps++;
		return x->max - d->last_value + x->value;
	}
	return 0;
}

static int add_reading(struct tt_energy_acc *e, const struct tt_event *ev)
{
	const struct tt_energy *x = &ev->energy;
	struct tt_energy_domain *d = domain(e, x);
	__u64 cum = 0, prev_ts;

	if (!d)
		return -ENOMEM;
	if (x->kind == TT_ENERGY_UTIL) {
		d->util_sum += x->value;
		d->util_n++;
		return 0;
	}
	if (!d->name[0]) {
		memcpy(d->name, x->name, sizeof(x->name));
		d->source = x->source;
		d->kind = x->kind;
	}
	/* a domain is one kind: a reading of another is not mixed in */
	if (x->kind != d->kind)
		return 0;
	if (d->ts.n) {
		prev_ts = d->ts.v[d->ts.n - 1];
		if (ev->h.ts < prev_ts)
			return 0;
		cum = d->uj.v[d->uj.n - 1];
		if (x->kind == TT_ENERGY_COUNTER)
			cum += counter_delta(d, x);
		else /* uW x ns: the trapezoid between two power readings */
			cum += (__u64)(((double)d->last_value + x->value) / 2 *
				       (ev->h.ts - prev_ts) / 1e9);
	}
	if (tt_u64vec_push(&d->ts, ev->h.ts) || tt_u64vec_push(&d->uj, cum))
		return -ENOMEM;
	d->last_value = x->value;
	return 0;
}

/* [s, e) of on-CPU time into the buckets it spans. */
static int add_busy(struct tt_energy_acc *e, __u64 s, __u64 end)
{
	__u64 b, bend;
	size_t need;

	if (s < e->busy_t0)
		s = e->busy_t0;
	while (s < end) {
		b = (s - e->busy_t0) / TT_BUSY_BUCKET_NS;
		bend = e->busy_t0 + (b + 1) * TT_BUSY_BUCKET_NS;
		need = b + 1;
		if (need > e->busy.n) {
			if (tt_u64vec_reserve(&e->busy, need - e->busy.n))
				return -ENOMEM;
			memset(e->busy.v + e->busy.n, 0,
			       (need - e->busy.n) * sizeof(__u64));
			e->busy.n = need;
		}
		e->busy.v[b] += (end < bend ? end : bend) - s;
		s = bend;
	}
	return 0;
}

static int add_switch(struct tt_energy_acc *e, const struct tt_event *ev)
{
	size_t cpu = ev->h.cpu;
	int err = 0;

	if (cpu >= e->ncpus && tt_grow((void **)&e->cpu_since, &e->ncpus,
				       cpu + 1, sizeof(*e->cpu_since)))
		return -ENOMEM;
	if (!e->busy_t0)
		e->busy_t0 =
			ev->h.ts > BUSY_SLACK_NS ? ev->h.ts - BUSY_SLACK_NS : 1;
	/* prev ran since the last switch on this CPU, if we saw it start */
	if (e->cpu_since[cpu] && (ev->sw.sw_flags & TT_SW_PREV_TRACED) &&
	    ev->h.ts > e->cpu_since[cpu])
		err = add_busy(e, e->cpu_since[cpu], ev->h.ts);
	e->cpu_since[cpu] = ev->sw.sw_flags & TT_SW_NEXT_TRACED ? ev->h.ts : 0;
	return err;
}

int tt_energy_add(struct tt_energy_acc *e, const struct tt_event *ev)
{
	if (ev->h.type == TT_EV_ENERGY)
		return add_reading(e, ev);
	if (ev->h.type == TT_EV_SWITCH)
		return add_switch(e, ev);
	return 0;
}

void tt_energy_free(struct tt_energy_acc *e)
{
	size_t i;

	for (i = 0; i < e->nd; i++) {
		tt_u64vec_free(&e->d[i].ts);
		tt_u64vec_free(&e->d[i].uj);
	}
	free(e->d);
	free(e->cpu_since);
	tt_u64vec_free(&e->busy);
	memset(e, 0, sizeof(*e));
}

double tt_energy_joules(const struct tt_energy_domain *d, __u64 *ns)
{
	size_t n = d->ts.n;

	if (ns)
		*ns = n >= 2 ? d->ts.v[n - 1] - d->ts.v[0] : 0;
	return n >= 2 ? d->uj.v[n - 1] / 1e6 : 0;
}

/* The first reading at or after t (n when none). */
static size_t reading_after(const struct tt_energy_domain *d, __u64 t)
{
	size_t lo = 0, hi = d->ts.n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (d->ts.v[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double tt_energy_at(const struct tt_energy_domain *d, __u64 t)
{
	size_t k = reading_after(d, t), n = d->ts.n;
	double f;

	if (!n)
		return 0;
	if (k == 0)
		return d->uj.v[0] / 1e6;
	if (k == n)
		return d->uj.v[n - 1] / 1e6;
	f = (double)(t - d->ts.v[k - 1]) / (d->ts.v[k] - d->ts.v[k - 1]);
	return (d->uj.v[k - 1] + f * (d->uj.v[k] - d->uj.v[k - 1])) / 1e6;
}

double tt_energy_busy_s(const struct tt_energy_acc *e, __u64 t0, __u64 t1)
{
	double sum = 0, bs, be, lo, hi;
	size_t b;

	for (b = 0; b < e->busy.n; b++) {
		bs = e->busy_t0 + (double)b * TT_BUSY_BUCKET_NS;
		be = bs + TT_BUSY_BUCKET_NS;
		lo = bs > t0 ? bs : t0;
		hi = be < t1 ? be : t1;
		/* a bucket cut by the window counts its share of it */
		if (hi > lo)
			sum += e->busy.v[b] * (hi - lo) / TT_BUSY_BUCKET_NS;
	}
	return sum / 1e9;
}

static __u64 overlap(__u64 a0, __u64 a1, __u64 b0, __u64 b1)
{
	__u64 lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* A gateway's call to its runner: inside the request that made it. */
static bool hop(const struct tt_request *r)
{
	return r->incomplete & TT_INC_HOP;
}

/* Splits one sensor's intervals among the requests in flight. */
static int apportion(const struct tt_energy_domain *d,
		     const struct tt_request *reqs, const __u64 *e2e, size_t n,
		     struct tt_energy_result *out)
{
	size_t i, k, nint = d->ts.n - 1;
	double *denom = calloc(nint, sizeof(*denom)), ej;
	__u64 a, b;
	int pass;

	if (!denom)
		return -ENOMEM;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if (!e2e[i] || !reqs[i].t_arrive || hop(&reqs[i]))
				continue;
			a = reqs[i].t_arrive;
			b = a + e2e[i];
			k = reading_after(d, a);
			for (k = k ? k - 1 : 0; k < nint && d->ts.v[k] < b;
			     k++) {
				if (!pass) {
					denom[k] += overlap(a, b, d->ts.v[k],
							    d->ts.v[k + 1]);
					continue;
				}
				if (denom[k] <= 0)
					continue;
				ej = (d->uj.v[k + 1] - d->uj.v[k]) / 1e6;
				out->req_j[i] += ej *
						 overlap(a, b, d->ts.v[k],
							 d->ts.v[k + 1]) /
						 denom[k];
			}
		}
	}
	for (k = 0; k < nint; k++)
		if (denom[k] <= 0)
			out->idle_j += (d->uj.v[k + 1] - d->uj.v[k]) / 1e6;
	free(denom);
	return 0;
}

int tt_energy_compute(const struct tt_energy_acc *e,
		      const struct tt_request *reqs, const __u64 *e2e, size_t n,
		      __u64 t0, __u64 t1, struct tt_energy_result *out)
{
	const struct tt_energy_domain *d;
	__u64 util_sum = 0, util_n = 0, ns;
	double j;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	out->req_j = calloc(n ? n : 1, sizeof(*out->req_j));
	if (!out->req_j)
		return -ENOMEM;
	out->nreq = n;
	/* a hop's tokens are the ones its gateway sends on: counted there */
	for (i = 0; i < n; i++)
		out->tokens += hop(&reqs[i]) ? 0 : reqs[i].tokens;
	for (i = 0; i < e->nd; i++) {
		d = &e->d[i];
		util_sum += d->util_sum;
		util_n += d->util_n;
		if (d->ts.n < 2)
			continue;
		out->ndomains++;
		j = tt_energy_joules(d, &ns);
		out->joules += j;
		/* each sensor's own span: sampled one after the other, their
		 * spans differ by microseconds */
		if (ns)
			out->mean_w += j / (ns / 1e9);
		if (ns > out->span_ns)
			out->span_ns = ns;
		err = apportion(d, reqs, e2e, n, out);
		if (err)
			return err;
	}
	if (out->joules > 0 && out->tokens) {
		out->j_per_token = out->joules / out->tokens;
		out->tokens_per_j = out->tokens / out->joules;
	}
	out->has_util = util_n > 0;
	out->gpu_util = util_n ? (double)util_sum / util_n : 0;
	if (t1 > t0)
		out->cpu_cores =
			tt_energy_busy_s(e, t0, t1) / ((t1 - t0) / 1e9);
	return 0;
}

void tt_energy_result_free(struct tt_energy_result *r)
{
	free(r->req_j);
	r->req_j = NULL;
}
