/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The C scenarios' clock: CLOCK_MONOTONIC ns (their truth's, as Python's
 * time.monotonic_ns()), and CPU spent spinning on it (a GPU's
 * synchronisation spins; a tokenizer's work is CPU). */
#ifndef SCENARIO_CLOCK_H
#define SCENARIO_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline void spin_ms(double ms)
{
	uint64_t end = now_ns() + (uint64_t)(ms * 1e6);

	while (now_ns() < end)
		;
}
#endif
