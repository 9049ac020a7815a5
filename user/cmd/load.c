// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A recording read into the analyzer and the GPU tables (see load.h). */
#include <stdio.h>
#include <string.h>
#include "load.h"
#include "tt_arch.h"

/*
 * A recording holds its machine's raw syscall numbers: analysing one from
 * another architecture would classify waits by the wrong numbers, so only
 * its events are shown. Files from before the field are x86-64's.
 */
static bool arch_readable(const char *path, __u32 arch, bool events_only)
{
	static const char *const names[] = TT_ARCH_NAMES;
	const char *name = arch < sizeof(names) / sizeof(names[0]) ?
				   names[arch] :
				   "an unknown architecture";

	if (!arch || arch == TT_ARCH)
		return true;
	fprintf(stderr,
		"ttftrace: %s%s was recorded on %s, this ttftrace analyses %s recordings only (syscall numbers differ)%s\n",
		events_only ? "warning: " : "", path, name, names[TT_ARCH],
		events_only ?
			"; its events follow, with that architecture's syscall numbers" :
			"");
	return events_only;
}

int tt_load(const char *path, unsigned int flags,
	    int (*each)(const struct tt_event *ev, void *ctx), void *ctx,
	    struct tt_energy_acc *energy, struct tt_loaded *l)
{
	const struct tt_file_meta *meta;
	struct tt_event ev;
	char err[512];
	int n;

	memset(l, 0, sizeof(*l));
	l->r = tt_reader_open(path, err, sizeof(err));
	if (!l->r) {
		fprintf(stderr, "ttftrace: %s\n", err);
		return 1;
	}
	meta = l->meta = tt_reader_meta(l->r);
	if (!arch_readable(path, meta->arch, each))
		return 1;
	l->an = tt_analyzer_new();
	/* without paths a walk's stages stay, its segments do not */
	if (l->an) {
		tt_analyzer_keep_paths(l->an, flags & TT_LOAD_PATHS);
		if (!(flags & TT_LOAD_TIMELINES))
			tt_analyzer_stream(l->an, TT_STREAM_EVERY);
	}
	l->gpu = tt_gpustats_new(meta->devs, meta->ndevs);
	if (!l->an || !l->gpu ||
	    tt_analyzer_add_procs(l->an, meta->procs, meta->nprocs) ||
	    tt_analyzer_add_devices(l->an, meta->devs, meta->ndevs)) {
		fprintf(stderr, "ttftrace: out of memory\n");
		return 1;
	}
	while ((n = tt_reader_next(l->r, &ev)) == 1) {
		if (each) {
			if (each(&ev, ctx))
				return 1;
			continue;
		}
		if (tt_analyzer_add(l->an, &ev) ||
		    tt_gpustats_add(l->gpu, &ev) ||
		    (energy && tt_energy_add(energy, &ev))) {
			fprintf(stderr,
				"ttftrace: out of memory analysing %s\n", path);
			return 1;
		}
	}
	if (tt_analyzer_finish(l->an)) {
		fprintf(stderr, "ttftrace: out of memory analysing %s\n", path);
		return 1;
	}
	tt_reader_stats(l->r, &l->st);
	return 0;
}

void tt_load_warnings(const char *path, const struct tt_loaded *l)
{
	const struct tt_read_stats *st = &l->st;

	if (st->blocks_bad)
		fprintf(stderr,
			"ttftrace: warning: %s: %llu corrupt block(s) skipped; requests they touched may be missing\n",
			path, (unsigned long long)st->blocks_bad);
	if (st->truncated)
		fprintf(stderr,
			"ttftrace: warning: %s is cut short; reporting its %llu whole block(s)\n",
			path, (unsigned long long)st->blocks_ok);
	else if (st->trailer_expected && !st->closed)
		fprintf(stderr,
			"ttftrace: warning: %s was not closed by its recorder (killed, crashed or out of disk); reporting its %llu whole block(s), what came after the last is lost\n",
			path, (unsigned long long)st->blocks_ok);
}

int tt_load_gpu_text(FILE *out, void *ctx)
{
	return tt_gpustats_any(ctx) ? tt_gpustats_text(out, ctx) : 0;
}

void tt_load_free(struct tt_loaded *l)
{
	tt_gpustats_free(l->gpu);
	tt_analyzer_free(l->an);
	tt_reader_close(l->r);
	memset(l, 0, sizeof(*l));
}
