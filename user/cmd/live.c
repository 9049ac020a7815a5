// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The record side of the live core (see live.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "containers.h"
#include "live.h"
#include "util.h"

struct batch {
	struct tt_event *ev;
	size_t n, cap;
};

struct tt_live {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tt_window *w; /* the thread's only */
	__u64 interval;
	struct batch mine; /* the recorder's, no lock */
	/* under lock: */
	struct batch handed;
	bool stop, kick;
	enum tt_live_sort sort;
	struct tt_live_frame frame;
	__u64 nframes;
	struct tt_live_totals totals;
	__u64 cpu_ns, max_ns, err;
};

static int batch_push(struct batch *b, const struct tt_event *ev)
{
	if (tt_grow((void **)&b->ev, &b->cap, b->n + 1, sizeof(*b->ev)))
		return -ENOMEM;
	b->ev[b->n++] = *ev;
	return 0;
}

int tt_live_add(struct tt_live *l, const struct tt_event *ev)
{
	return batch_push(&l->mine, ev);
}

void tt_live_publish(struct tt_live *l)
{
	struct batch tmp;

	if (!l->mine.n)
		return;
	pthread_mutex_lock(&l->lock);
	if (!l->handed.n) {
		/* the common case: swap the buffers, copy nothing */
		tmp = l->handed;
		l->handed = l->mine;
		l->mine = tmp;
	} else if (!tt_grow((void **)&l->handed.ev, &l->handed.cap,
			    l->handed.n + l->mine.n, sizeof(*l->mine.ev))) {
		memcpy(l->handed.ev + l->handed.n, l->mine.ev,
		       l->mine.n * sizeof(*l->mine.ev));
		l->handed.n += l->mine.n;
	}
	pthread_mutex_unlock(&l->lock);
	l->mine.n = 0;
}

/* One refresh on the thread: the batch into the window, the analysis, the
 * frame for the views. */
static void refresh(struct tt_live *l, struct batch *b, bool last)
{
	__u64 t0 = tt_clock_ns(CLOCK_THREAD_CPUTIME_ID), dt;
	struct tt_live_frame *f = malloc(sizeof(*f));
	struct tt_live_totals t;
	enum tt_live_sort sort;
	int err = f ? 0 : -ENOMEM;
	size_t i;

	for (i = 0; i < b->n && !err; i++)
		err = tt_window_add(l->w, &b->ev[i]);
	b->n = 0;
	if (!err)
		err = tt_window_refresh(l->w, tt_clock_ns(CLOCK_MONOTONIC),
					last);
	pthread_mutex_lock(&l->lock);
	sort = l->sort;
	pthread_mutex_unlock(&l->lock);
	if (!err)
		err = tt_window_frame(l->w, sort, f);
	tt_window_totals(l->w, &t);
	dt = tt_clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	pthread_mutex_lock(&l->lock);
	if (!err) {
		l->frame = *f;
		l->nframes++;
	}
	l->totals = t;
	l->err += !!err;
	l->cpu_ns += dt;
	if (dt > l->max_ns)
		l->max_ns = dt;
	pthread_mutex_unlock(&l->lock);
	free(f);
}

static void *live_thread(void *arg)
{
	struct tt_live *l = arg;
	struct batch b = {}, tmp;
	struct timespec ts;
	__u64 next = tt_clock_ns(CLOCK_MONOTONIC) + l->interval;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&l->lock);
		ts.tv_sec = next / 1000000000ULL;
		ts.tv_nsec = next % 1000000000ULL;
		while (!l->stop && !l->kick &&
		       pthread_cond_timedwait(&l->cond, &l->lock, &ts) !=
			       ETIMEDOUT)
			;
		stop = l->stop;
		l->kick = false;
		tmp = l->handed;
		l->handed = b;
		b = tmp;
		pthread_mutex_unlock(&l->lock);
		refresh(l, &b, stop);
		if (stop)
			break;
		next = tt_clock_ns(CLOCK_MONOTONIC) + l->interval;
	}
	free(b.ev);
	return NULL;
}

struct tt_live *tt_live_start(const struct tt_window_opts *o, __u64 interval_ns)
{
	struct tt_live *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int err;

	if (!l)
		return NULL;
	l->interval = interval_ns;
	l->w = tt_window_new(o);
	if (!l->w) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&l->lock, NULL);
	/* timed waits on the clock the events carry */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&l->thread, NULL, live_thread, l);
	if (err) {
		tt_window_free(l->w);
		free(l);
		errno = err;
		return NULL;
	}
	return l;
}

void tt_live_sort(struct tt_live *l, enum tt_live_sort sort)
{
	pthread_mutex_lock(&l->lock);
	l->sort = sort;
	pthread_mutex_unlock(&l->lock);
}

void tt_live_kick(struct tt_live *l)
{
	pthread_mutex_lock(&l->lock);
	l->kick = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

__u64 tt_live_frame(struct tt_live *l, struct tt_live_frame *f)
{
	__u64 n;

	pthread_mutex_lock(&l->lock);
	*f = l->frame;
	n = l->nframes;
	pthread_mutex_unlock(&l->lock);
	return n;
}

void tt_live_totals(struct tt_live *l, struct tt_live_totals *t)
{
	pthread_mutex_lock(&l->lock);
	*t = l->totals;
	pthread_mutex_unlock(&l->lock);
}

void tt_live_cost(struct tt_live *l, __u64 *cpu_ns, __u64 *refreshes,
		  __u64 *max_ns)
{
	pthread_mutex_lock(&l->lock);
	*cpu_ns = l->cpu_ns;
	*refreshes = l->nframes;
	*max_ns = l->max_ns;
	pthread_mutex_unlock(&l->lock);
}

void tt_live_stop(struct tt_live *l)
{
	if (!l)
		return;
	tt_live_publish(l);
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	tt_window_free(l->w);
	pthread_cond_destroy(&l->cond);
	pthread_mutex_destroy(&l->lock);
	free(l->mine.ev);
	free(l->handed.ev);
	free(l);
}
