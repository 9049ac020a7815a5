/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A recording read into the analyzer and the GPU tables, for the commands
 * that analyse one (report) or two (diff). */
#ifndef TT_LOAD_H
#define TT_LOAD_H

#include <stdbool.h>
#include "analyzer.h"
#include "energy.h"
#include "gpustats.h"
#include "ttfile.h"

struct tt_loaded {
	struct tt_reader *r;
	const struct tt_file_meta *meta;
	struct tt_analyzer *an;
	struct tt_gpustats *gpu;
	struct tt_read_stats st;
};

/* tt_load()'s flags */
#define TT_LOAD_PATHS (1u << 0) /* keep the critical paths' segments */
/* keep the thread timelines whole (Perfetto draws them): the analyzer does
 * not stream (docs/design.md §3.5) */
#define TT_LOAD_TIMELINES (1u << 1)

/*
 * Reads path whole: each event to each(ev, ctx) when given (the analyzer
 * then sees none), else to the analyzer (TT_LOAD_* flags), the GPU tables
 * and the energy readings (into
 * energy, when not NULL), finished. A recording of
 * another architecture is refused unless each is given (its events are
 * still shown, with a warning). 0, or 1 with the reason on stderr, in one
 * line; l is to be freed either way.
 */
int tt_load(const char *path, unsigned int flags,
	    int (*each)(const struct tt_event *ev, void *ctx), void *ctx,
	    struct tt_energy_acc *energy, struct tt_loaded *l);
/* Warnings on stderr about what the reader met (corrupt blocks, a file
 * cut short or never closed). */
void tt_load_warnings(const char *path, const struct tt_loaded *l);
/* The GPU tables as text, nothing when no GPU activity was recorded
 * (ctx: the tt_gpustats); 0 or -EIO. */
int tt_load_gpu_text(FILE *out, void *ctx);
void tt_load_free(struct tt_loaded *l);

#endif /* TT_LOAD_H */
