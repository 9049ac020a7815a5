/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cpuhog: busy threads pinned to one CPU for a while, so that whatever else
 * is pinned there waits runnable behind them (a runqueue scenario for
 * ttftrace). Stops by itself after -t seconds; no root needed. With
 * --stall, bursts at SCHED_FIFO with sleeps between: every thread on that
 * CPU stalls for each burst, as a VM's vCPU does when its host takes it
 * (steal, seen from inside); that needs root.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>

#include "demo_common.h"

#define MAX_THREADS 256

struct hog_opts {
	int cpu;
	int threads;
	uint64_t duration_ns;
	/* --stall: bursts of 0.2-1 burst_ns, sleeps of 0.5-1.5 gap_ns */
	uint64_t burst_ns, gap_ns;
};

struct hog {
	pthread_t thread;
	uint64_t deadline;
	uint64_t loops;
	uint64_t burst_ns, gap_ns;
	unsigned int seed;
};

static const char *prog = "cpuhog";

/* one line on stderr and exit status 2 */
#define usage_error(...) demo_usage_exit(prog, __VA_ARGS__)

static void usage(FILE *f)
{
	/* clang-format off */
	fprintf(f,
"Usage: cpuhog -c CPU -t SECONDS [-n THREADS] [-s BURST:GAP]\n"
"Runs THREADS busy loops (default 1) pinned to CPU for SECONDS, then exits:\n"
"a thread pinned to the same CPU waits runnable behind them.\n"
"\n"
"Options:\n"
"  -c, --cpu CPU           the CPU to occupy\n"
"  -t, --time SECONDS      how long (e.g. 10 or 0.5)\n"
"  -n, --threads N         busy threads (default 1)\n"
"  -s, --stall BURST:GAP   busy bursts of up to BURST ms (0.2-1 of it) at\n"
"                          SCHED_FIFO, sleeps of about GAP ms (0.5-1.5 of it)\n"
"                          between: everything on CPU stalls in each burst,\n"
"                          as a VM's vCPU its host takes (root)\n"
"  -h, --help              this help\n"
"\n"
"Examples:\n"
"  cpuhog -c 1 -t 30 -n 2 &\n"
"  demo-server --engine-cpu 1 --prefill-mode spin --decode-mode spin\n"
"  cpuhog -c 0 -t 60 -s 8:30 & cpuhog -c 1 -t 60 -s 8:30 &\n");
	/* clang-format on */
}

/* x times a factor drawn from [lo, hi] */
static uint64_t scaled(struct hog *h, uint64_t x, double lo, double hi)
{
	return (uint64_t)(x * (lo + (hi - lo) * rand_r(&h->seed) / RAND_MAX));
}

static void *hog_main(void *arg)
{
	struct hog *h = arg;
	volatile uint64_t sink = 0;
	uint64_t until = 0, now, ns;
	struct timespec gap;

	pthread_setname_np(pthread_self(), "cpuhog");
	while ((now = mono_ns()) < h->deadline) {
		if (h->burst_ns && now >= until) {
			/* the burst is over: sleep, then the next one */
			ns = scaled(h, h->gap_ns, 0.5, 1.5);
			if (ns > h->deadline - now) /* not past -t */
				ns = h->deadline - now;
			gap.tv_sec = (time_t)(ns / 1000000000u);
			gap.tv_nsec = (long)(ns % 1000000000u);
			while (nanosleep(&gap, &gap) && errno == EINTR)
				;
			until = mono_ns() + scaled(h, h->burst_ns, 0.2, 1.0);
		}
		/* a little work between clock reads */
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i * 2654435761u;
		h->loops++;
	}
	(void)sink;
	return NULL;
}

/* "BURST:GAP" in ms, each in (0, 1000) */
static bool parse_stall(const char *arg, struct hog_opts *o)
{
	char burst[32], *colon;
	double b, g;

	if (strlen(arg) >= sizeof(burst))
		return false;
	strcpy(burst, arg);
	colon = strchr(burst, ':');
	if (!colon)
		return false;
	*colon = '\0';
	if (!parse_double_nonneg(burst, &b) ||
	    !parse_double_nonneg(colon + 1, &g) || b <= 0 || g <= 0 ||
	    b >= 1000 || g >= 1000)
		return false;
	o->burst_ns = (uint64_t)(b * 1e6);
	o->gap_ns = (uint64_t)(g * 1e6);
	return true;
}

static void parse_args(int argc, char **argv, struct hog_opts *o)
{
	static const struct option longopts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, 't' },
		{ "threads", required_argument, NULL, 'n' },
		{ "stall", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	double secs;
	int c;

	*o = (struct hog_opts) { .cpu = -1, .threads = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:t:n:s:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'c':
			if (!parse_u64_range(optarg, 0, CPU_SETSIZE - 1, &v))
				usage_error("invalid --cpu '%s'", optarg);
			o->cpu = (int)v;
			break;
		case 't':
			if (!parse_double_nonneg(optarg, &secs) || secs <= 0 ||
			    secs > 86400)
				usage_error("invalid --time '%s' (want seconds "
					    "> 0)", optarg);
			o->duration_ns = (uint64_t)(secs * 1e9);
			break;
		case 'n':
			if (!parse_u64_range(optarg, 1, MAX_THREADS, &v))
				usage_error("invalid --threads '%s' (want "
					    "1..%d)", optarg, MAX_THREADS);
			o->threads = (int)v;
			break;
		case 's':
			if (!parse_stall(optarg, o))
				usage_error("invalid --stall '%s' (want "
					    "BURST_MS:GAP_MS, each under 1000)",
					    optarg);
			break;
		default: /* -h, a missing value, an unknown option */
			demo_getopt_other(c, prog, argv, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->cpu < 0 || !o->duration_ns)
		usage_error("-c CPU and -t SECONDS are required");
}

int main(int argc, char **argv)
{
	struct hog_opts o;
	struct hog *hogs = NULL;
	pthread_attr_t attr;
	cpu_set_t cpus;
	uint64_t deadline;
	int i, err, started = 0, ret;

	parse_args(argc, argv, &o);
	if (sched_getaffinity(0, sizeof(cpus), &cpus) ||
	    !CPU_ISSET(o.cpu, &cpus)) {
		fprintf(stderr, "%s: CPU %d: not a CPU this process may run "
			"on\n", prog, o.cpu);
		return 2;
	}
	hogs = calloc(o.threads, sizeof(*hogs));
	if (!hogs) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	CPU_ZERO(&cpus);
	CPU_SET(o.cpu, &cpus);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	if (o.burst_ns) {
		/* above every normal thread: the CPU is the burst's */
		struct sched_param sp = { .sched_priority = 50 };

		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	deadline = mono_ns() + o.duration_ns;
	for (i = 0; i < o.threads; i++) {
		hogs[i].deadline = deadline;
		hogs[i].burst_ns = o.burst_ns;
		hogs[i].gap_ns = o.gap_ns;
		hogs[i].seed = (unsigned int)(mono_ns() ^ (uint64_t)i << 16);
		err = pthread_create(&hogs[i].thread, &attr, hog_main,
				     &hogs[i]);
		if (err) {
			fprintf(stderr, "%s: cannot start thread %d: %s%s\n",
				prog, i, strerror(err),
				err == EPERM && o.burst_ns ?
					" (--stall runs at SCHED_FIFO: root)" :
					"");
			break;
		}
		started++;
	}
	pthread_attr_destroy(&attr);
	for (i = 0; i < started; i++)
		pthread_join(hogs[i].thread, NULL);
	ret = started == o.threads ? 0 : 1;
	free(hogs);
	return ret;
}
