// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * entry_only IN OUT: writes recording IN to OUT with every kernel launch's
 * GPU_CALL made what --gpu-probes=all records since launches are probed at
 * their entry only (docs/design.md §4.5): the header's time its entry, its
 * CUresult 0, TT_CALL_ENTRY; the events sorted by time again. IN recorded
 * by a build that still probed a launch's return, the two show what that
 * return gave the analysis on the same run (bench/gpu_entry.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu.h"
#include "ttfile.h"

struct item {
	struct tt_event ev;
	size_t i; /* the order read: ties keep it */
};

static int cmp_items(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->ev.h.ts != y->ev.h.ts)
		return x->ev.h.ts < y->ev.h.ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* ev as an entry-only launch, when it is a launch with its return: true */
static bool to_entry(struct tt_event *ev)
{
	const struct tt_cuda_fn *fns;
	size_t n;

	fns = tt_cuda_fns(&n);
	if (ev->h.type != TT_EV_GPU_CALL || ev->call.fn >= n ||
	    !tt_cuda_fn_entry_only(&fns[ev->call.fn]) ||
	    (ev->call.flags & TT_CALL_ENTRY) || !ev->call.ts_enter)
		return false;
	ev->h.ts = ev->call.ts_enter;
	ev->call.ret = 0;
	ev->call.flags = TT_CALL_ENTRY;
	return true;
}

int main(int argc, char **argv)
{
	struct item *v = NULL, *grown;
	size_t n = 0, cap = 0, changed = 0;
	struct tt_reader *r = NULL;
	struct tt_writer *w = NULL;
	char err[256];
	int ret = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: entry_only IN.ttft OUT.ttft\n");
		return 2;
	}
	r = tt_reader_open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "entry_only: %s\n", err);
		goto cleanup;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			grown = realloc(v, cap * sizeof(*v));
			if (!grown)
				goto cleanup;
			v = grown;
		}
		if (tt_reader_next(r, &v[n].ev) != 1)
			break;
		changed += to_entry(&v[n].ev);
		v[n].i = n;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_items);
	w = tt_writer_open(argv[2], tt_reader_meta(r));
	if (!w) {
		fprintf(stderr, "entry_only: %s: %s\n", argv[2],
			strerror(errno));
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		if (tt_writer_add(w, &v[i].ev))
			goto cleanup;
	ret = tt_writer_close(w, NULL) ? 1 : 0;
	w = NULL;
	fprintf(stderr,
		"entry_only: %zu events, %zu launches made entry-only\n", n,
		changed);
cleanup:
	if (w)
		tt_writer_close(w, NULL);
	if (r)
		tt_reader_close(r);
	free(v);
	return ret;
}
