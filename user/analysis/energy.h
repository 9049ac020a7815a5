/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Energy and utilization over a recording (docs/design.md §9.2, §9.3):
 * the TT_EV_ENERGY readings the recorder took, turned into joules per
 * sensor; the on-CPU time of the traced threads from the SWITCH records;
 * and the apportioning of energy to requests. Plain C over events.
 */
#ifndef TT_ENERGY_H
#define TT_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer.h"
#include "event.h"
#include "stats.h"

/* One sensor: its readings as cumulative joules at their times. */
struct tt_energy_domain {
	char name[TT_ENERGY_NAME_LEN + 1];
	__u16 source; /* enum tt_energy_source */
	__u16 kind; /* what it read: TT_ENERGY_COUNTER or _POWER */
	struct tt_u64vec ts; /* reading times */
	struct tt_u64vec uj; /* cumulative energy at each, from 0 */
	__u64 last_value; /* the last raw reading (counter or power) */
	__u64 wraps; /* counter wrap-arounds seen */
	__u64 util_sum, util_n; /* GPU busy percentages read */
};

struct tt_energy_acc {
	struct tt_energy_domain *d;
	size_t nd, capd;
	/* on-CPU time of traced threads, in buckets of TT_BUSY_BUCKET_NS
	 * from busy_t0: a window's busy time is summed from them */
	struct tt_u64vec busy;
	__u64 busy_t0;
	__u64 *cpu_since; /* per CPU: a traced thread on it since, or 0 */
	size_t ncpus;
};

#define TT_BUSY_BUCKET_NS 10000000ULL

/* Takes TT_EV_ENERGY and TT_EV_SWITCH records (others are ignored), in
 * timestamp order per sensor and per CPU. 0 or -ENOMEM. */
int tt_energy_add(struct tt_energy_acc *e, const struct tt_event *ev);
void tt_energy_free(struct tt_energy_acc *e);

/* Joules a sensor measured between its first and last reading; its span
 * in *ns. 0 when it has fewer than two readings. */
double tt_energy_joules(const struct tt_energy_domain *d, __u64 *ns);
/* Its cumulative joules at t, linear between readings, clamped to its
 * first and last. */
double tt_energy_at(const struct tt_energy_domain *d, __u64 t);
/* Traced threads' on-CPU seconds within [t0, t1). */
double tt_energy_busy_s(const struct tt_energy_acc *e, __u64 t0, __u64 t1);

/* What the report shows. */
struct tt_energy_result {
	size_t ndomains; /* sensors with two readings or more */
	double joules; /* all of them, over the recording */
	__u64 span_ns; /* the longest sensor span */
	double mean_w; /* joules / span */
	__u64 tokens; /* every token the traced servers sent */
	double j_per_token, tokens_per_j; /* 0 when unknown */
	double idle_j; /* energy while no request was in flight */
	double *req_j; /* per request: its share (see tt_energy_compute) */
	size_t nreq;
	bool has_util; /* a GPU's utilization was read */
	double gpu_util; /* its mean over the GPUs' readings, percent */
	double cpu_cores; /* traced threads' busy cores over [t0, t1) */
};

/*
 * Totals over the recording, and each request's share: the energy of each
 * interval between two readings of a sensor is split among the requests
 * in flight (t_arrive to the end of their E2E, e2e[i] ns) in proportion to
 * their time in it; what no request was in flight for is idle_j.
 * cpu_cores is the traced threads' on-CPU time over [t0, t1) divided by
 * its length (0 when empty). 0 or -ENOMEM; tt_energy_result_free after.
 */
int tt_energy_compute(const struct tt_energy_acc *e,
		      const struct tt_request *reqs, const __u64 *e2e, size_t n,
		      __u64 t0, __u64 t1, struct tt_energy_result *out);
void tt_energy_result_free(struct tt_energy_result *r);

#endif /* TT_ENERGY_H */
