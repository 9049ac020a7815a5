// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A thread's CUDA driver calls (docs/design.md §4.5): nested ones cut
 * into pieces, entry-only launches ended at its next call, ioctl or file
 * read.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "gpu.h"

/*
 * Appends call c of th, which ended last. The calls that ended inside it
 * are nested in it: it is stored as the pieces around them. One that
 * began before the previous call ended (a clock slip) starts at that end.
 */
static int call_push(struct tt_critpath *cp, struct cp_thread *th,
		     struct cp_call c)
{
	struct cp_call *nested = NULL, piece;
	size_t j = th->ncalls, m, i;
	__u64 cur;

	while (j > 0 && th->calls[j - 1].start >= c.start)
		j--;
	cur = j ? th->calls[j - 1].end : 0;
	if (c.start < cur)
		c.start = cur;
	if (c.start >= c.end)
		return 0;
	m = th->ncalls - j;
	if (tt_grow((void **)&th->calls, &th->capcalls, th->ncalls + m + 1,
		    sizeof(*th->calls)))
		return -ENOMEM;
	if (m) {
		nested = malloc(m * sizeof(*nested));
		if (!nested)
			return -ENOMEM;
		memcpy(nested, &th->calls[j], m * sizeof(*nested));
	}
	th->ncalls = j;
	cur = c.start;
	for (i = 0; i <= m; i++) {
		piece = c;
		piece.start = cur;
		piece.end = i < m && nested[i].start < c.end ? nested[i].start :
							       c.end;
		if (piece.end > piece.start) {
			th->calls[th->ncalls++] = piece;
			cur = piece.end;
		}
		if (i < m && nested[i].end > cur && nested[i].start >= cur) {
			th->calls[th->ncalls++] = nested[i];
			cur = nested[i].end;
		}
	}
	free(nested);
	return 0;
}

/*
 * th's last call, when it is an entry-only launch, ended no later than t,
 * the start of a call, ioctl or file read of th after it: its end is the
 * earliest such start less than LAUNCH_GAP_NS after its entry (back-to-
 * back launches, docs/design.md §4.5); none: an instant. The earliest,
 * because an interval comes at its end: an ioctl inside the sync after
 * the launch comes before that sync does.
 */
void cp_call_close(struct cp_thread *th, __u64 t)
{
	struct cp_call *c = th->ncalls ? &th->calls[th->ncalls - 1] : NULL;

	if (!c || !(c->flags & CP_CALL_ENTRY) || t <= c->start ||
	    t - c->start >= LAUNCH_GAP_NS)
		return;
	if (c->end == c->start || t < c->end)
		c->end = t;
}

/* Appends th's entry-only call c, at its entry: an instant until
 * cp_call_close ends it. */
static int call_open(struct cp_thread *th, struct cp_call c)
{
	__u64 last = th->ncalls ? th->calls[th->ncalls - 1].end : 0;

	if (tt_grow((void **)&th->calls, &th->capcalls, th->ncalls + 1,
		    sizeof(*th->calls)))
		return -ENOMEM;
	/* a clock slip: calls stay sorted */
	if (c.start < last)
		c.start = last;
	c.end = c.start;
	c.flags = CP_CALL_ENTRY;
	th->calls[th->ncalls++] = c;
	return 0;
}

int cp_on_gpu_call(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_gpu_call *gc = &ev->call;
	bool entry = gc->flags & TT_CALL_ENTRY;
	const struct tt_cuda_fn *fns;
	struct cp_thread *th;
	struct cp_call c;
	size_t nfns;

	/* no entry time (the probe came mid-call): no interval */
	if (!ev->h.tid ||
	    (!entry && (!gc->ts_enter || gc->ts_enter >= ev->h.ts)))
		return 0;
	th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th)
		return -ENOMEM;
	fns = tt_cuda_fns(&nfns);
	c = (struct cp_call){
		.start = entry ? ev->h.ts : gc->ts_enter,
		.end = ev->h.ts,
		.ret = gc->ret,
		.fn = gc->fn,
		.cls = gc->fn < nfns ? fns[gc->fn].cls : 0,
	};
	cp_call_close(th, c.start);
	cp->gpu_calls++;
	if (c.cls == TT_CUDA_SYNC)
		th->nsync++;
	return entry ? call_open(th, c) : call_push(cp, th, c);
}
