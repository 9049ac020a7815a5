// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The flight recorder's ring of recent events (see ring.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "containers.h"
#include "ring.h"

/* big enough that the per-chunk overhead is nil, small enough that the
 * window held is never much more than asked */
#define CHUNK_BYTES (256u << 10)

struct chunk {
	struct chunk *next;
	size_t used;
	__u64 events;
	__u64 last_ts;
	unsigned char data[];
};

/* What kind of state a kept event stands for: the hmap's k2. */
enum { KEEP_CONN = 1, KEEP_FORK, KEEP_COMM, KEEP_RTLOCK };

struct tt_ring {
	__u64 window_ns, max_bytes;
	struct chunk *head, *tail; /* oldest, newest */
	__u64 nchunks, events, newest_ts;
	struct tt_hmap keep; /* (id, KEEP_*) -> malloc'd struct tt_event */
	__u64 cut_chunks;
};

struct tt_ring *tt_ring_new(__u64 window_ns, __u64 max_bytes)
{
	struct tt_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->window_ns = window_ns;
	r->max_bytes = max_bytes < 2 * CHUNK_BYTES ? 2 * CHUNK_BYTES :
						     max_bytes;
	return r;
}

static int keep_put(struct tt_ring *r, __u64 id, __u32 kind,
		    const struct tt_event *ev)
{
	struct tt_hmap_ent *e = tt_hmap_find(&r->keep, id, kind);
	struct tt_event *copy;

	if (e) {
		*(struct tt_event *)(uintptr_t)e->val = *ev;
		return 0;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *ev;
	if (tt_hmap_put(&r->keep, id, kind, (uintptr_t)copy)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static void keep_del(struct tt_ring *r, __u64 id, __u32 kind)
{
	struct tt_hmap_ent *e = tt_hmap_find(&r->keep, id, kind);

	if (!e)
		return;
	free((void *)(uintptr_t)e->val);
	tt_hmap_del(&r->keep, id, kind);
}

/* An event leaving the window: what it set up that outlives it. */
static int keep_state(struct tt_ring *r, const struct tt_event *ev)
{
	switch (ev->h.type) {
	case TT_EV_CONN_OPEN:
		return keep_put(r, ev->conn.sk, KEEP_CONN, ev);
	case TT_EV_CONN_CLOSE:
		/* a peer's FIN leaves the connection open (ttftrace.h) */
		if (ev->sock.len != TT_TCP_CLOSE_WAIT)
			keep_del(r, ev->sock.sk, KEEP_CONN);
		return 0;
	case TT_EV_FORK:
		return keep_put(r, ev->fork.child_tid, KEEP_FORK, ev);
	case TT_EV_COMM:
		return keep_put(r, ev->h.tid, KEEP_COMM, ev);
	case TT_EV_EXIT:
		keep_del(r, ev->h.tid, KEEP_FORK);
		keep_del(r, ev->h.tid, KEEP_COMM);
		return 0;
	case TT_EV_RTLOCK:
		return keep_put(r, (__u64)ev->h.tgid << 8 | ev->rtlock.kind,
				KEEP_RTLOCK, ev);
	default:
		return 0;
	}
}

/* The next packed event of c at *off into ev; false at its end. */
static bool chunk_next(const struct chunk *c, size_t *off, struct tt_event *ev)
{
	int psz;

	if (*off >= c->used)
		return false;
	memcpy(&ev->h, c->data + *off, sizeof(ev->h));
	psz = tt_event_payload_size(ev->h.type);
	memcpy((char *)ev + sizeof(ev->h), c->data + *off + sizeof(ev->h), psz);
	*off += sizeof(ev->h) + psz;
	return true;
}

static int drop_head(struct tt_ring *r)
{
	struct chunk *c = r->head;
	struct tt_event ev;
	size_t off = 0;
	int err = 0;

	while (!err && chunk_next(c, &off, &ev))
		err = keep_state(r, &ev);
	r->head = c->next;
	if (!r->head)
		r->tail = NULL;
	r->nchunks--;
	r->events -= c->events;
	free(c);
	return err;
}

int tt_ring_add(struct tt_ring *r, const struct tt_event *ev)
{
	int psz = tt_event_payload_size(ev->h.type);
	size_t need = sizeof(ev->h) + (psz > 0 ? psz : 0);
	struct chunk *c = r->tail;
	int err;

	if (psz < 0)
		return 0;
	if (!c || c->used + need > CHUNK_BYTES) {
		c = malloc(sizeof(*c) + CHUNK_BYTES);
		if (!c)
			return -ENOMEM;
		memset(c, 0, sizeof(*c));
		if (r->tail)
			r->tail->next = c;
		else
			r->head = c;
		r->tail = c;
		r->nchunks++;
	}
	memcpy(c->data + c->used, &ev->h, sizeof(ev->h));
	memcpy(c->data + c->used + sizeof(ev->h),
	       (const char *)ev + sizeof(ev->h), need - sizeof(ev->h));
	c->used += need;
	c->events++;
	r->events++;
	if (ev->h.ts > c->last_ts)
		c->last_ts = ev->h.ts;
	if (ev->h.ts > r->newest_ts)
		r->newest_ts = ev->h.ts;
	/* whole chunks go: the newest one never does */
	while (r->head != r->tail &&
	       r->head->last_ts + r->window_ns < r->newest_ts) {
		err = drop_head(r);
		if (err)
			return err;
	}
	while (r->head != r->tail &&
	       r->nchunks * (sizeof(*c) + CHUNK_BYTES) > r->max_bytes) {
		r->cut_chunks++;
		err = drop_head(r);
		if (err)
			return err;
	}
	return 0;
}

static int by_ts(const void *a, const void *b)
{
	const struct tt_event *x = *(const struct tt_event *const *)a;
	const struct tt_event *y = *(const struct tt_event *const *)b;

	return x->h.ts < y->h.ts ? -1 : x->h.ts > y->h.ts;
}

int tt_ring_each(const struct tt_ring *r,
		 int (*fn)(void *ctx, const struct tt_event *ev), void *ctx)
{
	const struct tt_event **kept = NULL;
	struct tt_event ev;
	size_t n = 0, off;
	int err = 0;

	if (r->keep.n) {
		kept = malloc(r->keep.n * sizeof(*kept));
		if (!kept)
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->keep.cap; i++)
		if (r->keep.e[i].used)
			kept[n++] = (const void *)(uintptr_t)r->keep.e[i].val;
	if (n)
		qsort(kept, n, sizeof(*kept), by_ts);
	for (size_t i = 0; i < n && !err; i++)
		err = fn(ctx, kept[i]);
	for (const struct chunk *c = r->head; c && !err; c = c->next) {
		off = 0;
		while (!err && chunk_next(c, &off, &ev))
			err = fn(ctx, &ev);
	}
	free(kept);
	return err;
}

void tt_ring_stats(const struct tt_ring *r, struct tt_ring_stats *st)
{
	struct tt_event ev;
	size_t off = 0;

	memset(st, 0, sizeof(*st));
	st->events = r->events;
	st->bytes = r->nchunks * (sizeof(struct chunk) + CHUNK_BYTES) +
		    r->keep.n * sizeof(struct tt_event) +
		    r->keep.cap * sizeof(struct tt_hmap_ent);
	st->sticky = r->keep.n;
	st->cut_chunks = r->cut_chunks;
	st->last_ts = r->newest_ts;
	if (r->head && chunk_next(r->head, &off, &ev))
		st->first_ts = ev.h.ts;
}

void tt_ring_free(struct tt_ring *r)
{
	struct chunk *c, *next;

	if (!r)
		return;
	for (c = r->head; c; c = next) {
		next = c->next;
		free(c);
	}
	for (size_t i = 0; i < r->keep.cap; i++)
		if (r->keep.e[i].used)
			free((void *)(uintptr_t)r->keep.e[i].val);
	tt_hmap_free(&r->keep);
	free(r);
}
