/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal unit-test harness. Each test binary prints one line per case,
 * "PASS: name", "FAIL: name: why" or "SKIP: name: why"; tests/run.sh counts them.
 *
 * The checks are selftests/bpf test_progs' ASSERT_* macros: each takes a
 * name, says on failure where, the name, the actual and the expected value,
 * lets the case go on (the case fails at its end) and returns whether it
 * held, so that a test can skip what depends on it:
 *
 *	if (ASSERT_EQ(r.nsegs, 4, "segments"))
 *		ASSERT_EQ(r.segs[0].stage, TT_ST_RUNQUEUE, "first stage");
 *
 * ASSERT_EQ and the other comparisons take integers or floating point (not
 * pointers: ASSERT_NULL, ASSERT_OK_PTR, ASSERT_PTR_EQ); mixed signedness is
 * compared as signed, as a reader would.
 */
#ifndef TT_TEST_H
#define TT_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct tt_test_state {
	int checks, failed_checks;
	int passed, failed;
};

static struct tt_test_state tt_test;

/* The value v as text, in the domain of its type. */
static inline const char *tt_fmt_s(char *buf, size_t size, long long v)
{
	snprintf(buf, size, "%lld", v);
	return buf;
}

static inline const char *tt_fmt_u(char *buf, size_t size, unsigned long long v)
{
	snprintf(buf, size, "%llu", v);
	return buf;
}

static inline const char *tt_fmt_d(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.17g", v);
	return buf;
}

/* clang-format off */
/* (v) + 0 promotes bool, char, short and enums to int: one list covers all */
#define tt_is_float(v)                                                        \
	_Generic((v) + 0, float: 1, double: 1, long double: 1, default: 0)
#define tt_is_signed(v)                                                       \
	_Generic((v) + 0, int: 1, long: 1, long long: 1, default: 0)
#define tt_fmt(buf, v)                                                        \
	_Generic((v) + 0,                                                     \
		float: tt_fmt_d,                                              \
		double: tt_fmt_d,                                             \
		long double: tt_fmt_d,                                        \
		int: tt_fmt_s,                                                \
		long: tt_fmt_s,                                               \
		long long: tt_fmt_s,                                          \
		default: tt_fmt_u)(buf, sizeof(buf), v)
/* a op b in the widest domain of the two: no sign-compare surprises */
#define tt_cmp(a, op, b)                                                      \
	(tt_is_float(a) || tt_is_float(b) ?                                   \
		 (double)(a) op (double)(b) :                                 \
	 tt_is_signed(a) || tt_is_signed(b) ?                                 \
		 (long long)(a) op (long long)(b) :                           \
		 (unsigned long long)(a) op (unsigned long long)(b))
/* clang-format on */

static inline bool tt_check_result(bool ok)
{
	tt_test.checks++;
	if (!ok)
		tt_test.failed_checks++;
	return ok;
}

static inline void tt_fail_cmp(const char *file, int line, const char *name,
			       const char *actual, const char *op,
			       const char *expected, const char *expr)
{
	fprintf(stderr, "  %s:%d: %s: actual %s, expected %s %s (%s)\n", file,
		line, name, actual, op, expected, expr);
}

/* clang-format off */
#define TT_ASSERT_CMP(a, op, b, name)                                         \
	({                                                                    \
		__auto_type ___a = (a);                                       \
		__auto_type ___b = (b);                                       \
		char ___as[32], ___bs[32];                                    \
		bool ___ok = tt_cmp(___a, op, ___b);                          \
		if (!___ok)                                                   \
			tt_fail_cmp(__FILE__, __LINE__, (name),               \
				    tt_fmt(___as, ___a), #op,                 \
				    tt_fmt(___bs, ___b), #a " " #op " " #b);  \
		tt_check_result(___ok);                                       \
	})

#define ASSERT_EQ(a, b, name) TT_ASSERT_CMP(a, ==, b, name)
#define ASSERT_NEQ(a, b, name) TT_ASSERT_CMP(a, !=, b, name)
#define ASSERT_LT(a, b, name) TT_ASSERT_CMP(a, <, b, name)
#define ASSERT_LE(a, b, name) TT_ASSERT_CMP(a, <=, b, name)
#define ASSERT_GT(a, b, name) TT_ASSERT_CMP(a, >, b, name)
#define ASSERT_GE(a, b, name) TT_ASSERT_CMP(a, >=, b, name)
/* an error code: 0 */
#define ASSERT_OK(res, name) TT_ASSERT_CMP(res, ==, 0, name)

#define ASSERT_TRUE(cond, name)                                               \
	({                                                                    \
		bool ___ok = (cond);                                          \
		if (!___ok)                                                   \
			fprintf(stderr,                                       \
				"  %s:%d: %s: false, expected true (%s)\n",   \
				__FILE__, __LINE__, (name), #cond);           \
		tt_check_result(___ok);                                       \
	})

#define ASSERT_FALSE(cond, name)                                              \
	({                                                                    \
		bool ___ok = !(cond);                                         \
		if (!___ok)                                                   \
			fprintf(stderr,                                       \
				"  %s:%d: %s: true, expected false (%s)\n",   \
				__FILE__, __LINE__, (name), #cond);           \
		tt_check_result(___ok);                                       \
	})

/* two strings, either may be NULL */
#define ASSERT_STREQ(actual, expected, name)                                  \
	({                                                                    \
		const char *___a = (actual), *___b = (expected);              \
		bool ___ok = ___a && ___b ? !strcmp(___a, ___b) : ___a == ___b; \
		if (!___ok)                                                   \
			fprintf(stderr,                                       \
				"  %s:%d: %s: actual \"%s\", expected \"%s\" (%s)\n", \
				__FILE__, __LINE__, (name),                   \
				___a ? ___a : "(null)",                       \
				___b ? ___b : "(null)", #actual);             \
		tt_check_result(___ok);                                       \
	})

#define TT_ASSERT_PTR(ptr, want_null, name)                                   \
	({                                                                    \
		const void *___p = (ptr);                                     \
		bool ___ok = (___p == NULL) == (want_null);                   \
		if (!___ok)                                                   \
			fprintf(stderr,                                       \
				"  %s:%d: %s: actual %p, expected %s (%s)\n", \
				__FILE__, __LINE__, (name), ___p,             \
				(want_null) ? "NULL" : "non-NULL", #ptr);     \
		tt_check_result(___ok);                                       \
	})

#define ASSERT_NULL(ptr, name) TT_ASSERT_PTR(ptr, true, name)
#define ASSERT_OK_PTR(ptr, name) TT_ASSERT_PTR(ptr, false, name)

#define ASSERT_PTR_EQ(actual, expected, name)                                 \
	({                                                                    \
		const void *___a = (actual), *___b = (expected);              \
		bool ___ok = ___a == ___b;                                    \
		if (!___ok)                                                   \
			fprintf(stderr,                                       \
				"  %s:%d: %s: actual %p, expected %p (%s)\n", \
				__FILE__, __LINE__, (name), ___a, ___b,       \
				#actual);                                     \
		tt_check_result(___ok);                                       \
	})
/* clang-format on */

/* Reports a case: PASS when none of its checks failed since before. */
static inline void tt_report(const char *name, int before)
{
#ifdef TT_COUNT_CHECKS
	/* -DTT_COUNT_CHECKS: checks per case, to compare two versions */
	static int last_checks;

	fprintf(stderr, "  %s: %d checks\n", name,
		tt_test.checks - last_checks);
	last_checks = tt_test.checks;
#endif
	if (tt_test.failed_checks == before) {
		printf("PASS: %s\n", name);
		tt_test.passed++;
	} else {
		printf("FAIL: %s\n", name);
		tt_test.failed++;
	}
	fflush(stdout);
}

#define TT_RUN(fn)                                   \
	do {                                         \
		int _before = tt_test.failed_checks; \
		fn();                                \
		tt_report(#fn, _before);             \
	} while (0)

/* the number of checks run says when a rewrite of a test lost some */
/* xorshift64: the same pseudo-random streams on every run */
static inline uint64_t tt_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* CLOCK_MONOTONIC in seconds, for the rates the throughput tests print */
static inline double tt_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define TT_EXIT()                                                           \
	do {                                                                \
		fprintf(stderr, "  %d checks, %d failed\n", tt_test.checks, \
			tt_test.failed_checks);                             \
		return tt_test.failed ? 1 : 0;                              \
	} while (0)

#endif /* TT_TEST_H */
