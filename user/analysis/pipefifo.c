// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A pipe's bytes in order (docs/design.md §4.4, "A pipe's bytes"). The
 * recorder counts each traced write's and read's bytes of a pipe a traced
 * thread reads (TT_EV_PIPE_IO): a read took the bytes of the writes its
 * range covers, first the oldest. Its reader keeps (read, write, writer)
 * as a named read: Python's multiprocessing reader takes a message a
 * read of its length and one of its bytes, several messages waiting in
 * the pipe, and neither read is the data wake that announced the first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"

/* writes a pipe keeps (twice as many before the oldest half goes): a read
 * names one of the latest, the others were read long ago */
#define PIPE_WRITES_KEPT 1024

static struct cp_pipe *pipe_of(struct tt_critpath *cp, __u64 id)
{
	return cp_keyed_get(&cp->pipe_ix, id, 0, (void **)&cp->pipes,
			    &cp->npipes, &cp->cappipes, sizeof(*cp->pipes));
}

static int pipe_write(struct cp_pipe *p, const struct tt_event *ev)
{
	struct cp_pwrite *w;
	size_t i;

	if (p->n == 2 * PIPE_WRITES_KEPT)
		cp_drop_front((void **)&p->w, &p->n, &p->cap, PIPE_WRITES_KEPT,
			      sizeof(*p->w));
	if (tt_grow((void **)&p->w, &p->cap, p->n + 1, sizeof(*p->w)))
		return -ENOMEM;
	/* in byte order: writers racing on two CPUs may come out of it */
	for (i = p->n; i && p->w[i - 1].pos > ev->pipe.pos; i--)
		;
	w = &p->w[i];
	memmove(w + 1, w, (p->n - i) * sizeof(*w));
	*w = (struct cp_pwrite){ .pos = ev->pipe.pos,
				 .ts = ev->h.ts,
				 .len = ev->pipe.len,
				 .tid = ev->h.tid };
	p->n++;
	return 0;
}

/* The write of p whose bytes hold byte pos, or NULL. */
static const struct cp_pwrite *write_at(const struct cp_pipe *p, __u64 pos)
{
	size_t i = cp_starts_before(p->w, p->n, sizeof(*p->w), pos + 1);

	return i && pos - p->w[i - 1].pos < p->w[i - 1].len ? &p->w[i - 1] :
							      NULL;
}

int cp_pipe_add(struct tt_critpath *cp, const struct tt_event *ev)
{
	struct cp_pipe *p = pipe_of(cp, ev->pipe.pipe);
	const struct cp_pwrite *w;
	struct cp_thread *th;

	if (!p)
		return -ENOMEM;
	if (ev->pipe.op == TT_PIPE_WRITE)
		return pipe_write(p, ev);
	if (ev->pipe.op != TT_PIPE_READ)
		return 0;
	w = write_at(p, ev->pipe.pos);
	/* a thread's own bytes, or ones written before they were counted */
	if (!w || w->tid == ev->h.tid || w->ts > ev->h.ts)
		return 0;
	th = cp_thread_ensure(cp, ev->h.tid, ev->h.tgid);
	if (!th || tt_grow((void **)&th->freads, &th->capfreads,
			   th->nfreads + 1, sizeof(*th->freads)))
		return -ENOMEM;
	th->freads[th->nfreads++] = (struct cp_fread){
		.ts = ev->h.ts,
		.w = { .ts = w->ts, .writer = w->tid },
	};
	return 0;
}

void cp_pipes_trim(struct tt_critpath *cp, __u64 t)
{
	for (size_t i = 0; i < cp->npipes; i++) {
		struct cp_pipe *p = &cp->pipes[i];
		size_t k = 0;

		/* nearly in time order (byte order): the first ones on */
		while (k < p->n && p->w[k].ts < t)
			k++;
		cp_drop_front_release((void **)&p->w, &p->n, &p->cap, k,
				      sizeof(*p->w));
	}
}

void cp_pipes_free(struct tt_critpath *cp)
{
	for (size_t i = 0; i < cp->npipes; i++)
		free(cp->pipes[i].w);
	free(cp->pipes);
	tt_hmap_free(&cp->pipe_ix);
}
