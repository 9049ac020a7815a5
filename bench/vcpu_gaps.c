// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * How long the CPU under a thread stops: a SCHED_FIFO thread pinned to CPU
 * reads CLOCK_MONOTONIC in a loop and counts the gaps between two readings.
 * On an idle CPU nothing in the guest preempts it, so a gap of milliseconds
 * is the hypervisor running someone else (steal), which no guest clock
 * read on the far side of the gap can tell from work. tests/run.sh says
 * why its test scripts run twice after a failure.
 *   vcpu_gaps CPU [WINDOWS [MS]]: WINDOWS windows of MS ms (default 6 of
 *   800, under the kernel's 950 ms a second for real-time threads)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	int cpu = argc > 1 ? atoi(argv[1]) : -1;
	int windows = argc > 2 ? atoi(argv[2]) : 6;
	long ms = argc > 3 ? atol(argv[3]) : 800;
	cpu_set_t set;

	if (argc < 2 || cpu < 0 || windows <= 0 || ms <= 0 || ms > 900) {
		fprintf(stderr, "usage: vcpu_gaps CPU [WINDOWS [MS <= 900]]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "vcpu_gaps: CPU %d, SCHED_FIFO: %s\n", cpu,
			strerror(errno));
		return 1;
	}
	for (int w = 0; w < windows; w++) {
		long long gaps = 0, over_1ms = 0, over_5ms = 0, total = 0,
			  worst = 0;
		long long prev = now_ns(), end = prev + ms * 1000000ll;

		while (prev < end) {
			long long t = now_ns(), d = t - prev;

			if (d > 100000) {
				gaps++;
				total += d;
				over_1ms += d > 1000000;
				over_5ms += d > 5000000;
				worst = d > worst ? d : worst;
			}
			prev = t;
		}
		printf("cpu%d window %d: gaps > 100 us %lld, > 1 ms %lld, > 5 ms %lld, total %.1f ms of %ld, longest %.2f ms\n",
		       cpu, w, gaps, over_1ms, over_5ms, total / 1e6, ms,
		       worst / 1e6);
		fflush(stdout);
		/* the rest of the second is the other threads' */
		usleep(1000000 - ms * 1000 + 100000);
	}
	return 0;
}
