// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The reorder window (reorder.h): a FIFO for events in order, a min-heap
 * for the others. */
#include <errno.h>
#include <stdlib.h>
#include "reorder.h"

/* An event held in the window. */
struct tt_reorder_ent {
	struct tt_event ev;
	__u64 key; /* when it happened, for ordering (order_ts) */
	__u64 order; /* arrival order: ties keep it */
};

/*
 * A send is ordered by its syscall entry, not by its record's time (the
 * end of the send): on loopback the client has the bytes, and may have
 * sent its next request, before the send returns; ordered by its end, the
 * [DONE] of one response would land after the next request's arrival.
 */
static __u64 order_ts(const struct tt_event *ev)
{
	if (ev->h.type == TT_EV_SEND && ev->send.ts_enter &&
	    ev->send.ts_enter <= ev->h.ts &&
	    ev->h.ts - ev->send.ts_enter < TT_REORDER_WINDOW_NS)
		return ev->send.ts_enter;
	return ev->h.ts;
}

static bool win_less(const struct tt_reorder_ent *x,
		     const struct tt_reorder_ent *y)
{
	return x->key < y->key || (x->key == y->key && x->order < y->order);
}

static const struct tt_reorder_ent *fifo_tail(const struct tt_reorder *w)
{
	if (!w->fifo_n)
		return NULL;
	return &w->fifo[(w->fifo_head + w->fifo_n - 1) & (w->fifo_cap - 1)];
}

static int fifo_push(struct tt_reorder *w, const struct tt_reorder_ent *e)
{
	size_t cap = w->fifo_cap ? w->fifo_cap * 2 : 1024, i;
	struct tt_reorder_ent *v;

	if (w->fifo_n == w->fifo_cap) {
		/* a new ring, unwrapped */
		v = malloc(cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < w->fifo_n; i++)
			v[i] = w->fifo[(w->fifo_head + i) & (w->fifo_cap - 1)];
		free(w->fifo);
		w->fifo = v;
		w->fifo_head = 0;
		w->fifo_cap = cap;
	}
	w->fifo[(w->fifo_head + w->fifo_n++) & (w->fifo_cap - 1)] = *e;
	return 0;
}

static int heap_push(struct tt_reorder *w, const struct tt_reorder_ent *e)
{
	size_t cap = w->heap_cap ? w->heap_cap * 2 : 64, i, parent;
	struct tt_reorder_ent *h;

	if (w->heap_n == w->heap_cap) {
		h = realloc(w->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		w->heap = h;
		w->heap_cap = cap;
	}
	h = w->heap;
	for (i = w->heap_n++; i > 0; i = parent) {
		parent = (i - 1) / 2;
		if (!win_less(e, &h[parent]))
			break;
		h[i] = h[parent];
	}
	h[i] = *e;
	return 0;
}

static void heap_pop(struct tt_reorder *w, struct tt_reorder_ent *top)
{
	struct tt_reorder_ent *h = w->heap;
	size_t i = 0, child, n;

	*top = h[0];
	n = --w->heap_n;
	while ((child = 2 * i + 1) < n) {
		if (child + 1 < n && win_less(&h[child + 1], &h[child]))
			child++;
		if (!win_less(&h[child], &h[n]))
			break;
		h[i] = h[child];
		i = child;
	}
	if (n)
		h[i] = h[n];
}

/* The oldest event in the window, or NULL when it is empty. */
static const struct tt_reorder_ent *win_oldest(const struct tt_reorder *w)
{
	const struct tt_reorder_ent *f = w->fifo_n ? &w->fifo[w->fifo_head] :
						     NULL;

	if (!w->heap_n)
		return f;
	return f && win_less(f, &w->heap[0]) ? f : &w->heap[0];
}

/* Takes the oldest event out of the window and hands it to fn. */
static int win_release(struct tt_reorder *w, tt_reorder_fn fn, void *ctx)
{
	struct tt_reorder_ent e;

	if (w->heap_n &&
	    (!w->fifo_n || win_less(&w->heap[0], &w->fifo[w->fifo_head]))) {
		heap_pop(w, &e);
	} else {
		e = w->fifo[w->fifo_head];
		w->fifo_head = (w->fifo_head + 1) & (w->fifo_cap - 1);
		w->fifo_n--;
	}
	w->released_ts = e.key;
	w->released_any = true;
	return fn(ctx, &e.ev);
}

int tt_reorder_add(struct tt_reorder *w, const struct tt_event *ev,
		   tt_reorder_fn fn, void *ctx)
{
	const struct tt_reorder_ent *tail = fifo_tail(w), *old;
	struct tt_reorder_ent e;
	int err;

	e.ev = *ev;
	e.key = order_ts(ev);
	e.order = w->order++;
	if (w->released_any && e.key < w->released_ts)
		w->late++; /* handled next, out of order */
	if (!tail || e.key >= tail->key)
		err = fifo_push(w, &e);
	else
		err = heap_push(w, &e);
	if (err)
		return err;
	if (e.key > w->newest_ts)
		w->newest_ts = e.key;
	while ((old = win_oldest(w)) &&
	       w->newest_ts - old->key > TT_REORDER_WINDOW_NS) {
		err = win_release(w, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

int tt_reorder_drain(struct tt_reorder *w, tt_reorder_fn fn, void *ctx)
{
	int err = 0, e;

	while (w->fifo_n || w->heap_n) {
		e = win_release(w, fn, ctx);
		if (!err)
			err = e;
	}
	return err;
}

void tt_reorder_free(struct tt_reorder *w)
{
	free(w->fifo);
	free(w->heap);
	w->fifo = w->heap = NULL;
	w->fifo_head = w->fifo_n = w->fifo_cap = 0;
	w->heap_n = w->heap_cap = 0;
}
