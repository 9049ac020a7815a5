/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Renders the frame of an analysis (analysis/slo.h, analysis/energy.h):
 * E2E and throughput, SLO attainment and goodput, energy, utilization and
 * cost, as text lines and as JSON members (docs/design.md §9). The report
 * (report.c) calls these through its tt_report_extra hooks.
 */
#ifndef TT_FRAME_H
#define TT_FRAME_H

#include <stdio.h>
#include "energy.h"
#include "slo.h"

struct tt_frame_view {
	const struct tt_frame *f;
	/* the sensors read (NULL: none looked at) and their totals */
	const struct tt_energy_acc *acc;
	const struct tt_energy_result *en;
};

/* Text: an E2E percentile row, then throughput, SLO, energy,
 * utilization and cost lines. 0 or -EIO. */
int tt_frame_text(FILE *out, const struct tt_frame_view *v);
/* The request table's SLO cell of request i ("met", "miss:STAGE", "-"). */
const char *tt_frame_cell(const struct tt_frame_view *v, size_t i, char *buf,
			  size_t len);
/* JSON members of the summary, each ,"name":value: e2e_ns, throughput,
 * slo, energy, utilization, cost. 0 or -EIO. */
int tt_frame_json(FILE *out, const struct tt_frame_view *v);
/* JSON members of request i: e2e_ns, e2e_at_wire, output_tps, slo_met,
 * slo_miss_stage, energy_j. 0 or -EIO. */
int tt_frame_request_json(FILE *out, const struct tt_frame_view *v, size_t i);

#endif /* TT_FRAME_H */
