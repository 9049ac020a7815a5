/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Small helpers shared by the demo server and the load generator: clock,
 * option parsing with one-line errors, full writes, address resolution.
 */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC is the clock bpf_ktime_get_ns() reads */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline void sleep_until_ns(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = deadline / NSEC_PER_SEC,
		.tv_nsec = deadline % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* stays on CPU until the deadline: what a busy kernel or a spin-wait does */
static inline void spin_until_ns(uint64_t deadline)
{
	while (mono_ns() < deadline)
		;
}

/* decimal unsigned integer in [min, max]; false on anything else */
static inline bool parse_u64_range(const char *s, uint64_t min, uint64_t max,
				   uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* non-negative decimal number such as "2" or "0.5" */
static inline bool parse_double_nonneg(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0) || v > 1e12)
		return false;
	*out = v;
	return true;
}

/* writes all of buf with write(2), looping on short writes; 0 or -errno */
static inline int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* "::1" and "[::1]" both name an IPv6 address; strips the brackets */
static inline const char *host_unbracket(const char *host, char *buf,
					 size_t size)
{
	size_t len = strlen(host);

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']' &&
	    len - 2 < size) {
		memcpy(buf, host + 1, len - 2);
		buf[len - 2] = '\0';
		return buf;
	}
	return host;
}

/* port of a bound or connected socket, 0 when unknown */
static inline int socket_port(int fd, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int rc;

	rc = peer ? getpeername(fd, (struct sockaddr *)&ss, &len) :
		    getsockname(fd, (struct sockaddr *)&ss, &len);
	if (rc)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of a sorted array; 0 when empty */
static inline uint64_t percentile_u64(const uint64_t *sorted, size_t n,
				      double pct)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)(pct / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/* "PROG: message (see --help)" on stderr, then exit status 2: how every
 * tool here answers a bad option value */
static inline void __attribute__((noreturn, format(printf, 2, 3)))
demo_usage_exit(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
	exit(2);
}

/* The value of option opt as a number in [min, max], or PROG's usage error
 * naming the range. */
static inline uint64_t demo_parse_num(const char *prog, const char *opt,
				      const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (!parse_u64_range(s, min, max, &v))
		demo_usage_exit(prog, "invalid %s '%s' (want %llu..%llu)", opt,
				s, (unsigned long long)min,
				(unsigned long long)max);
	return v;
}

/* What every tool here does with getopt's other answers: -h prints the
 * usage and exits 0; a missing value or an unknown option is an error. */
static inline void __attribute__((noreturn))
demo_getopt_other(int c, const char *prog, char **argv, void (*usage)(FILE *))
{
	if (c == 'h') {
		usage(stdout);
		exit(0);
	}
	if (c == ':')
		demo_usage_exit(prog, "option '%s' needs a value",
				argv[optind - 1]);
	demo_usage_exit(prog, "unknown option '%s'", argv[optind - 1]);
}

#endif /* DEMO_COMMON_H */
