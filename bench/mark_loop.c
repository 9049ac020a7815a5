// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A loop calling one function for bench/mark_cost.sh: the cost of an
 * application marker (record --mark) per hit is the time per call with the
 * function marked, less the time without.
 *   mark_loop CALLS ROUNDS: prints each round's ns per call, one a line
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* the marked function: not inlined, its argument the marker's key */
__attribute__((noinline, used)) void marked_point(void *key)
{
	__asm__ volatile("" : : "r"(key) : "memory");
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000000;
	long rounds = argc > 2 ? atol(argv[2]) : 5;
	unsigned long long t0;

	if (calls <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: mark_loop CALLS ROUNDS\n");
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (long i = 0; i < calls; i++)
			marked_point((void *)i);
		printf("%.1f\n", (double)(now_ns() - t0) / calls);
		fflush(stdout);
	}
	return 0;
}
