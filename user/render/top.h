/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* ttftrace top's frame as text: at most 24 lines of at most 80 columns
 * (docs/design.md §10.2). */
#ifndef TT_TOP_H
#define TT_TOP_H

#include <stdio.h>
#include "window.h"

#define TT_TOP_LINES 24
#define TT_TOP_COLS 80

/* f as text; what is the traced target ("pid 1234", a file), escaped.
 * 0, or -EIO when out failed. */
int tt_top_text(FILE *out, const struct tt_live_frame *f, const char *what);

#endif /* TT_TOP_H */
