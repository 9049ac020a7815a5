/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The recorder, for the commands built on it (record itself, top): what
 * they add to its loop. */
#ifndef TT_RECORD_H
#define TT_RECORD_H

#include <stdbool.h>
#include <linux/types.h>

struct tt_live;

struct tt_record_hooks {
	bool no_file; /* trace without writing a recording (top) */
	bool want_live; /* run the live core (also with --metrics) */
	__u64 interval_ns; /* its refresh; 0: 1 s */
	__u64 span_ns; /* its rolling span; 0: TT_LIVE_SPAN_NS */
	/* set to the live core while it runs, NULL after */
	struct tt_live **live_out;
	/* every turn of the loop (100 ms at most): a reason to stop, or NULL */
	const char *(*tick)(void *ctx, __u64 now);
	/* the loop ended, why */
	void (*done)(void *ctx, const char *why);
	void *ctx;
};

/* ttftrace record with argc/argv as its options, and hooks. */
int tt_record_with(int argc, char **argv, const struct tt_record_hooks *hooks);

#endif /* TT_RECORD_H */
