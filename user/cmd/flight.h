/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * record's live side (docs/design.md §11): the events of the last
 * window kept in a ring (user/record/ring.h) and analysed again every
 * half second, for the flight recorder (--ring, --trigger, --slo, SIGUSR1:
 * the ring written out as a .ttft when a trigger fires) and for OTLP
 * export (--otlp: each finished request as a span).
 */
#ifndef TT_FLIGHT_H
#define TT_FLIGHT_H

#include <argp.h>
#include <stdbool.h>
#include "event.h"
#include "slo.h"

#define TT_FLIGHT_MAX_TRIGGERS 8

struct tt_flight_trigger {
	int kind; /* enum in flight.c: ttft, tpot, e2e, slo */
	__u64 limit_ns;
};

/* record's options for both (the argp child tt_flight_argp fills it). */
struct tt_flight_opts {
	__u64 ring_ns; /* --ring: 0 when not a flight recorder */
	__u64 ring_bytes; /* --ring-size */
	__u64 dump_gap_ns; /* --dump-interval */
	struct tt_flight_trigger triggers[TT_FLIGHT_MAX_TRIGGERS];
	int ntriggers;
	bool has_slo;
	struct tt_slo slo;
	const char *otlp; /* --otlp URL */
};

extern const struct argp tt_flight_argp;

struct tt_flight;

/*
 * NULL with no error when neither --ring nor --otlp was given (*err 0);
 * else the live side, or NULL with *err -1 (said why on stderr). output:
 * record's -o, which names the dumps; meta: the recording's header, for
 * the analysis and the dumps. Installs record's SIGUSR1 handler.
 */
struct tt_flight *tt_flight_open(const struct tt_flight_opts *o,
				 const char *output,
				 const struct tt_file_meta *meta, bool quiet,
				 int *err);
/* Whether record writes no file of its own (--ring). */
bool tt_flight_ring_only(const struct tt_flight *f);
/* An event for the ring. 0 or -ENOMEM. */
int tt_flight_add(struct tt_flight *f, const struct tt_event *ev);
/* The periodic part, called from record's loop: analysis, triggers,
 * dumps, export. 0, or -errno on a failure that ends the recording. */
int tt_flight_tick(struct tt_flight *f, __u64 now);
/* The last analysis (requests still unsent go out, a pending dump is
 * written), the summary line, and the end. NULL is fine. */
void tt_flight_close(struct tt_flight *f);

/* report --otlp: every request of an analysed recording as spans to url.
 * 0, or 1 (said why). */
struct tt_analyzer;
int tt_otlp_export_all(const char *url, const struct tt_analyzer *a,
		       const struct tt_file_meta *meta);

#endif /* TT_FLIGHT_H */
