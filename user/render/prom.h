/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The live totals in Prometheus' text exposition format, version 0.0.4
 * (docs/design.md §10.3). */
#ifndef TT_PROM_H
#define TT_PROM_H

#include <stdio.h>
#include "window.h"

/* 0, or -EIO when out failed. */
int tt_prom_text(FILE *out, const struct tt_live_totals *t);

#endif /* TT_PROM_H */
