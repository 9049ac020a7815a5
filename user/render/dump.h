/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One line of text per event: the raw evidence behind a report. */
#ifndef TT_DUMP_H
#define TT_DUMP_H

#include <stdio.h>
#include "event.h"

/* Prints ev with its time relative to t0 (ns); -EIO when out failed. */
int tt_dump_event(FILE *out, const struct tt_event *ev, __u64 t0);

#endif /* TT_DUMP_H */
