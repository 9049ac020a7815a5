// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Scenario (xxv): MLC LLM's threaded engine, the native half of
 * mlc_server.py (a shared library the server loads with ctypes).
 *
 * As MLC LLM's ThreadedEngine (cpp/serve/threaded_engine.cc) and its
 * engine's actions:
 * - mlc_add_request() appends an instruction under the background loop's
 *   mutex and notifies its condition variable only when the loop said it
 *   was waiting (engine_waiting_): a put to a busy engine wakes nobody;
 * - mlc_run_background_loop() (a Python thread's ctypes call: the GIL is
 *   released for as long as it runs) waits while the engine is empty and no
 *   instruction is pending, takes every pending instruction, then runs one
 *   step: a prefill of the waiting requests that fit the batch (--batch;
 *   --prefill-ms each) when some wait, else one decode of every running
 *   request (--decode-ms); the step's outputs go to the stream-back loop
 *   (a mutex, a condition variable notified only when it waits);
 * - mlc_run_stream_back_loop() (another Python thread's ctypes call) waits
 *   for outputs, takes them all and calls the Python callback with them:
 *   ctypes takes the GIL for it, as TVM's PackedFunc callback does.
 * A step's compute is a spin on the clock, as a GPU's synchronisation spins.
 * With mark set, mlc_mark_admit(id) is called as a request is admitted: a
 * uprobe's target (`ttftrace record --mark dispatch=...`, run.sh's
 * mlc-mark).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

/* one token of one request, as the Python callback receives it */
struct mlc_output {
	int64_t id;
	int32_t index; /* 1 for the first token */
	int32_t last;
	uint64_t t_admit; /* the start of the step that prefilled it */
	uint64_t t_emit; /* the step that made the token ended */
};

typedef void (*mlc_stream_callback)(const struct mlc_output *outputs,
				    int32_t count);

struct request {
	int64_t id;
	int32_t wanted, made;
	uint64_t t_admit;
};

/* a growable array of requests (instructions, waiting, running) */
struct requests {
	struct request *items;
	int count, cap;
};

static struct {
	int batch, mark;
	double prefill_ms, decode_ms;
	mlc_stream_callback callback;

	pthread_mutex_t loop_mu;
	pthread_cond_t loop_cv;
	struct requests instructions;
	int engine_waiting;

	pthread_mutex_t stream_mu;
	pthread_cond_t stream_cv;
	struct mlc_output *pending;
	int pending_count, pending_cap;
	int stream_waiting;
} engine = {
	.loop_mu = PTHREAD_MUTEX_INITIALIZER,
	.loop_cv = PTHREAD_COND_INITIALIZER,
	.stream_mu = PTHREAD_MUTEX_INITIALIZER,
	.stream_cv = PTHREAD_COND_INITIALIZER,
};

/* Array p of *cap items of size bytes, grown to hold need (abort if not). */
static void *grow(void *p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? 2 * *cap : 16;
	p = realloc(p, *cap * size);
	if (!p)
		abort();
	return p;
}

static void push(struct requests *list, const struct request *req)
{
	list->items = grow(list->items, &list->cap, list->count + 1,
			   sizeof(*list->items));
	list->items[list->count++] = *req;
}

/* the first n of list taken off, the rest moved up */
static void drop_first(struct requests *list, int n)
{
	memmove(list->items, list->items + n,
		(list->count - n) * sizeof(*list->items));
	list->count -= n;
}

__attribute__((noinline)) void mlc_mark_admit(int64_t id)
{
	/* kept, and kept a call: the uprobe's target */
	__asm__ volatile("" : : "r"(id) : "memory");
}

int mlc_engine_init(int32_t batch, double prefill_ms, double decode_ms,
		    int32_t mark, mlc_stream_callback callback)
{
	if (batch < 1 || prefill_ms < 0 || decode_ms < 0 || !callback)
		return -1;
	engine.batch = batch;
	engine.prefill_ms = prefill_ms;
	engine.decode_ms = decode_ms;
	engine.mark = mark;
	engine.callback = callback;
	return 0;
}

/* the tokenizer's native encode: CPU, the GIL released by ctypes */
void mlc_tokenize(double ms)
{
	spin_ms(ms);
}

void mlc_add_request(int64_t id, int32_t wanted)
{
	struct request req = { .id = id, .wanted = wanted };
	int notify;

	pthread_mutex_lock(&engine.loop_mu);
	push(&engine.instructions, &req);
	notify = engine.engine_waiting;
	pthread_mutex_unlock(&engine.loop_mu);
	if (notify)
		pthread_cond_signal(&engine.loop_cv);
}

/* the engine's request stream callback: a step's outputs to stream back */
static void stream_back(const struct requests *stepped, int from,
			uint64_t t_emit)
{
	int i, notify;

	pthread_mutex_lock(&engine.stream_mu);
	for (i = from; i < stepped->count; i++) {
		const struct request *r = &stepped->items[i];

		engine.pending = grow(engine.pending, &engine.pending_cap,
				      engine.pending_count + 1,
				      sizeof(*engine.pending));
		engine.pending[engine.pending_count++] = (struct mlc_output){
			.id = r->id,
			.index = r->made,
			.last = r->made >= r->wanted,
			.t_admit = r->t_admit,
			.t_emit = t_emit,
		};
	}
	notify = engine.stream_waiting;
	pthread_mutex_unlock(&engine.stream_mu);
	if (notify)
		pthread_cond_signal(&engine.stream_cv);
}

/* finished requests off the running list */
static void retire(struct requests *running)
{
	int i, kept = 0;

	for (i = 0; i < running->count; i++)
		if (running->items[i].made < running->items[i].wanted)
			running->items[kept++] = running->items[i];
	running->count = kept;
}

/* one step: a prefill of the waiting requests that fit, else a decode */
static void step(struct requests *waiting, struct requests *running)
{
	uint64_t t_step = now_ns();
	int i, n = engine.batch - running->count, from = running->count;

	if (n > waiting->count)
		n = waiting->count;
	if (n > 0) {
		for (i = 0; i < n; i++) {
			waiting->items[i].t_admit = t_step;
			if (engine.mark)
				mlc_mark_admit(waiting->items[i].id);
			push(running, &waiting->items[i]);
		}
		drop_first(waiting, n);
		spin_ms(engine.prefill_ms * n);
	} else {
		from = 0;
		spin_ms(engine.decode_ms);
	}
	for (i = from; i < running->count; i++)
		running->items[i].made++;
	stream_back(running, from, now_ns());
	retire(running);
}

void mlc_run_background_loop(void)
{
	struct requests waiting = { 0 }, running = { 0 };
	int i;

	for (;;) {
		pthread_mutex_lock(&engine.loop_mu);
		engine.engine_waiting = 1;
		while (!waiting.count && !running.count &&
		       !engine.instructions.count)
			pthread_cond_wait(&engine.loop_cv, &engine.loop_mu);
		engine.engine_waiting = 0;
		for (i = 0; i < engine.instructions.count; i++)
			push(&waiting, &engine.instructions.items[i]);
		engine.instructions.count = 0;
		pthread_mutex_unlock(&engine.loop_mu);
		step(&waiting, &running);
	}
}

void mlc_run_stream_back_loop(void)
{
	struct mlc_output *taken = NULL;
	int count, cap = 0;

	for (;;) {
		pthread_mutex_lock(&engine.stream_mu);
		engine.stream_waiting = 1;
		while (!engine.pending_count)
			pthread_cond_wait(&engine.stream_cv, &engine.stream_mu);
		engine.stream_waiting = 0;
		count = engine.pending_count;
		taken = grow(taken, &cap, count, sizeof(*taken));
		memcpy(taken, engine.pending, count * sizeof(*taken));
		engine.pending_count = 0;
		pthread_mutex_unlock(&engine.stream_mu);
		engine.callback(taken, count);
	}
}
