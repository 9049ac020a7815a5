/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Percentiles and small numeric helpers (see stats.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

int tt_u64vec_reserve(struct tt_u64vec *vec, size_t n)
{
	size_t cap = vec->cap ? vec->cap : 16;
	__u64 *v;

	if (vec->n + n <= vec->cap)
		return 0;
	while (cap < vec->n + n) {
		if (cap > ((size_t)-1) / 2 / sizeof(*v))
			return -ENOMEM;
		cap *= 2;
	}
	v = realloc(vec->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	vec->v = v;
	vec->cap = cap;
	return 0;
}

int tt_u64vec_push(struct tt_u64vec *vec, __u64 x)
{
	if (vec->n == vec->cap && tt_u64vec_reserve(vec, 1))
		return -ENOMEM;
	vec->v[vec->n++] = x;
	return 0;
}

void tt_u64vec_free(struct tt_u64vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* LSD radix sort by 16-bit digits, skipping the digits every value shares
 * (latencies in ns use three of the four): report sorts millions of ITL
 * samples, where qsort's comparator calls were a tenth of its time. */
static int radix_sort_u64(__u64 *v, size_t n)
{
	__u64 *tmp = malloc(n * sizeof(*v)), *src = v, *dst = tmp, *t,
	      all_or = 0, all_and = ~0ull;
	size_t *count = calloc(1 << 16, sizeof(*count)), i, sum;
	int err = -ENOMEM;

	if (!tmp || !count)
		goto cleanup;
	for (i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	for (int shift = 0; shift < 64; shift += 16) {
		if (!(((all_or ^ all_and) >> shift) & 0xffff))
			continue; /* every value has this digit */
		memset(count, 0, (1 << 16) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		sum = 0;
		for (i = 0; i < 1 << 16; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	err = 0;
cleanup:
	free(tmp);
	free(count);
	return err;
}

void tt_sort_u64(__u64 *v, size_t n)
{
	if (n > 1024 && !radix_sort_u64(v, n))
		return;
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_u64);
}

__u64 tt_percentile_sorted(const __u64 *sorted, size_t n, double p)
{
	double rank;
	size_t r;

	if (!n)
		return 0;
	/* the epsilon keeps 90% of 10 at rank 9 despite binary fractions */
	rank = ceil(p / 100.0 * (double)n - 1e-9);
	if (rank < 1)
		r = 1;
	else if (rank > (double)n)
		r = n;
	else
		r = (size_t)rank;
	return sorted[r - 1];
}

void tt_summarize(__u64 *v, size_t n, struct tt_summary *s)
{
	unsigned __int128 sum = 0;
	size_t i;

	s->n = n;
	s->min = s->p50 = s->p90 = s->p99 = s->max = s->mean = 0;
	if (!n)
		return;
	tt_sort_u64(v, n);
	for (i = 0; i < n; i++)
		sum += v[i];
	s->min = v[0];
	s->max = v[n - 1];
	s->p50 = tt_percentile_sorted(v, n, 50);
	s->p90 = tt_percentile_sorted(v, n, 90);
	s->p99 = tt_percentile_sorted(v, n, 99);
	s->mean = (__u64)(sum / n);
}

char *tt_fmt_ms(char *buf, size_t len, __u64 ns)
{
	__u64 us = ns / 1000 + (ns % 1000 >= 500);

	snprintf(buf, len, "%llu.%03llu", (unsigned long long)(us / 1000),
		 (unsigned long long)(us % 1000));
	return buf;
}
