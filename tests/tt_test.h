/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal unit-test harness. Each test binary prints one line per case,
 * "PASS: name", "FAIL: name: why" or "SKIP: name: why"; tests/run.sh counts them.
 */
#ifndef TT_TEST_H
#define TT_TEST_H

#include <stdio.h>
#include <string.h>

struct tt_test_state {
	int failed_checks;
	int passed, failed;
};

static struct tt_test_state tt_test;

#define TT_CHECK(cond)                                                        \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "  %s:%d: check failed: %s\n",       \
				__FILE__, __LINE__, #cond);                   \
			tt_test.failed_checks++;                              \
		}                                                             \
	} while (0)

#define TT_CHECK_EQ_U64(a, b)                                                 \
	do {                                                                  \
		unsigned long long _a = (a), _b = (b);                        \
		if (_a != _b) {                                               \
			fprintf(stderr, "  %s:%d: %s == %llu, want %s == %llu\n", \
				__FILE__, __LINE__, #a, _a, #b, _b);          \
			tt_test.failed_checks++;                              \
		}                                                             \
	} while (0)

#define TT_RUN(fn)                                                            \
	do {                                                                  \
		int _before = tt_test.failed_checks;                          \
		fn();                                                         \
		if (tt_test.failed_checks == _before) {                       \
			printf("PASS: %s\n", #fn);                            \
			tt_test.passed++;                                     \
		} else {                                                      \
			printf("FAIL: %s\n", #fn);                            \
			tt_test.failed++;                                     \
		}                                                             \
		fflush(stdout);                                               \
	} while (0)

#define TT_EXIT() return tt_test.failed ? 1 : 0

#endif /* TT_TEST_H */
