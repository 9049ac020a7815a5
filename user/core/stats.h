/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Percentiles and small numeric helpers for the analyzer and renderers. */
#ifndef TT_STATS_H
#define TT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A growable array of __u64 (amortised growth: no allocation per value). */
struct tt_u64vec {
	__u64 *v;
	size_t n, cap;
};

/* Appends x; 0 or -ENOMEM (the vector is unchanged on failure). */
int tt_u64vec_push(struct tt_u64vec *vec, __u64 x);
/* Makes room for at least n more values; 0 or -ENOMEM. */
int tt_u64vec_reserve(struct tt_u64vec *vec, size_t n);
void tt_u64vec_free(struct tt_u64vec *vec);

void tt_sort_u64(__u64 *v, size_t n);

/*
 * Nearest-rank percentile of sorted[0..n): the smallest value such that at
 * least p percent of the values are less than or equal to it, that is
 * sorted[ceil(p / 100 * n) - 1], the rank clamped to [1, n]. Always one of
 * the values, never an interpolation. 0 when n is 0. p in [0, 100].
 */
__u64 tt_percentile_sorted(const __u64 *sorted, size_t n, double p);

struct tt_summary {
	size_t n; /* values summarised; the rest is 0 when n is 0 */
	__u64 min, p50, p90, p99, max;
	__u64 mean; /* rounded down */
};

/* Sorts v in place and summarises it. */
void tt_summarize(__u64 *v, size_t n, struct tt_summary *s);

/* ns as milliseconds with 3 decimals, rounded to the nearest microsecond:
 * 1234567 -> "1.235". Returns buf. */
char *tt_fmt_ms(char *buf, size_t len, __u64 ns);

#endif /* TT_STATS_H */
