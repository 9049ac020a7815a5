// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The timeline searches of the critical-path walk (user/analysis/threads.c):
 * cp_rec_before_from(), which steps back from a hint before it searches,
 * must give cp_rec_before()'s answer for every time and every valid hint,
 * whether the answer is a step away or far (the search) or none.
 */
#include <limits.h>
#include <stdlib.h>
#include "tt_test.h"
#include "cp_internal.h"

/* A thread of n records, record i at base + i * step, with ties every
 * third record (a switch-out and a wake at the same nanosecond). */
static void timeline(struct cp_thread *th, struct cp_rec *recs, size_t n,
		     __u64 base, __u64 step)
{
	memset(th, 0, sizeof(*th));
	for (size_t i = 0; i < n; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		recs[i].ts = base + (i - i / 3) * step;
	}
	th->recs = recs;
	th->nrecs = n;
}

/* Every time from before the first record to after the last, with the
 * hint the answer for every later time, and none (LONG_MAX). */
static void test_from_every_hint(void)
{
	struct cp_rec recs[40];
	struct cp_thread th;
	int bad = 0, checked = 0;

	for (size_t n = 0; n <= 40; n += 5) {
		timeline(&th, recs, n, 1000, 10);
		for (__u64 t = 990; t <= 1000 + 10 * n + 10; t++) {
			long want = cp_rec_before(&th, t);

			for (__u64 later = t; later <= t + 300; later += 7) {
				long hint = cp_rec_before(&th, later);

				bad += cp_rec_before_from(&th, t, hint) != want;
				checked++;
			}
			bad += cp_rec_before_from(&th, t, LONG_MAX) != want;
			checked++;
		}
	}
	ASSERT_GT(checked, 10000, "cases checked");
	ASSERT_EQ(bad, 0, "answers unlike cp_rec_before()'s");
}

/* A hint for an earlier time than asked is not trusted: searched. */
static void test_from_stale_hint(void)
{
	struct cp_rec recs[30];
	struct cp_thread th;

	timeline(&th, recs, 30, 0, 100);
	ASSERT_EQ(cp_rec_before_from(&th, 1500, 2), cp_rec_before(&th, 1500),
		  "hint of an earlier time");
	ASSERT_EQ(cp_rec_before_from(&th, 1500, -1), cp_rec_before(&th, 1500),
		  "hint of none, for a time after records");
	ASSERT_EQ(cp_rec_before_from(&th, 0, 29), -1, "nothing before");
}

int main(void)
{
	TT_RUN(test_from_every_hint);
	TT_RUN(test_from_stale_hint);
	TT_EXIT();
}
