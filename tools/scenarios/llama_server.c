// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Scenario: a llama.cpp-server-shaped C server, written after the
 * attribution rules to judge them on a shape they were not written for.
 *
 * As llama.cpp's server (cpp-httplib, server_queue, server_response, ggml's
 * threadpool):
 * - a listener thread accepts and queues each connection for a pool of
 *   --http-threads HTTP threads (a mutex and a condition variable), each
 *   serving its connection's keep-alive requests;
 * - a handler reads the body, "tokenizes" (--tokenize-ms on CPU), posts a
 *   task to the task queue (mutex, condition variable, notify_one), sends
 *   the headers and waits for results on the one condition variable every
 *   handler shares (server_response: each result notifies all waiters, and
 *   each takes its own);
 * - one main loop takes waiting tasks into free slots (--slots) between
 *   batches, then runs one batch: the prompts of the newly admitted slots
 *   (--prefill-ms each) and one decode token of the others (--decode-ms),
 *   mixed as llama.cpp's update_slots does; the batch is computed by
 *   --compute-threads threads, the main loop being the first (ggml: the
 *   workers are kicked by a counter and a broadcast, poll a while, then
 *   sleep on a condition variable; the barrier at the end spins);
 * - each slot's token goes to the result queue; the handler writes it as
 *   an SSE event in an HTTP chunk, and ends with [DONE] and the chunked
 *   terminator;
 * - with --batch-delay-ms, a main loop with no slot busy that finds a task
 *   waits on the task queue for as many as it has slots, at most that long
 *   (a timed wait on its condition variable), before it admits them: a
 *   dynamic batcher, as Triton's max_queue_delay.
 *
 * Ground truth (--log; CLOCK_MONOTONIC ns), tools/scenarios/README.md's
 * columns: port, t_read (body read), t_enqueue (the post), t_admit (the
 * main loop put it in a slot), t_first_token_emit / t_last_token_emit
 * (before the handler's write of that token), tokens, io_ns (0), status.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define MAX_SLOTS 64
#define POLL_NS 50000ULL /* ggml's workers poll before they sleep */

static struct {
	int port, slots, http_threads, compute_threads, tokens;
	double prefill_ms, decode_ms, tokenize_ms, batch_delay_ms;
	bool nagle;
	FILE *log;
} opt = { 8000, 4, 6, 2, 8, 10, 2, 1, 0, false, NULL };

struct link {
	struct link *next;
};

struct task {
	struct link link; /* first: a task is its link */
	int port, want, produced, taken;
	bool prefilled;
	uint64_t t_read, t_enqueue, t_admit;
};

struct fifo { /* a mutex, a condition variable and a list */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct link *head, *tail;
};

static struct fifo conns = { .mu = PTHREAD_MUTEX_INITIALIZER,
			     .cv = PTHREAD_COND_INITIALIZER };
static struct fifo tasks = { .mu = PTHREAD_MUTEX_INITIALIZER,
			     .cv = PTHREAD_COND_INITIALIZER };
/* server_response: every handler waits on this one */
static pthread_mutex_t results_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t results_cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

/* the compute threadpool */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static atomic_int pool_gen, pool_done;
static double pool_ms;

struct conn_item {
	struct link link; /* first, as in a task */
	int fd;
};

static void fifo_push(struct fifo *f, struct link *item)
{
	item->next = NULL;
	if (f->tail)
		f->tail->next = item;
	else
		f->head = item;
	f->tail = item;
}

static struct link *fifo_pop(struct fifo *f)
{
	struct link *item = f->head;

	if (item) {
		f->head = item->next;
		if (!f->head)
			f->tail = NULL;
	}
	return item;
}

/* ---- the compute threadpool ---- */

static void *compute_worker(void *arg)
{
	int seen = 0;
	uint64_t until;

	(void)arg;
	for (;;) {
		until = now_ns() + POLL_NS;
		while (atomic_load(&pool_gen) == seen && now_ns() < until)
			;
		if (atomic_load(&pool_gen) == seen) {
			pthread_mutex_lock(&pool_mu);
			while (atomic_load(&pool_gen) == seen)
				pthread_cond_wait(&pool_cv, &pool_mu);
			pthread_mutex_unlock(&pool_mu);
		}
		seen = atomic_load(&pool_gen);
		spin_ms(pool_ms);
		atomic_fetch_add(&pool_done, 1);
	}
	return NULL;
}

/* one batch, split across the threads, the caller being the first */
static void compute(double ms)
{
	pool_ms = ms;
	atomic_store(&pool_done, 0);
	pthread_mutex_lock(&pool_mu);
	atomic_fetch_add(&pool_gen, 1);
	pthread_cond_broadcast(&pool_cv);
	pthread_mutex_unlock(&pool_mu);
	spin_ms(ms);
	atomic_fetch_add(&pool_done, 1);
	while (atomic_load(&pool_done) < opt.compute_threads)
		;
}

/* ---- the main loop ---- */

static int fifo_len(const struct fifo *f)
{
	const struct link *l;
	int n = 0;

	for (l = f->head; l; l = l->next)
		n++;
	return n;
}

/*
 * --batch-delay-ms: an idle main loop that found a task waits for a full
 * batch, at most the delay (Triton's dynamic batcher, max_queue_delay), on
 * the task queue's condition variable; tasks.mu held.
 */
static void wait_batch(void)
{
	struct timespec until;
	long ns;

	clock_gettime(CLOCK_REALTIME, &until);
	ns = until.tv_nsec + (long)(opt.batch_delay_ms * 1e6);
	until.tv_sec += ns / 1000000000L;
	until.tv_nsec = ns % 1000000000L;
	while (fifo_len(&tasks) < opt.slots)
		if (pthread_cond_timedwait(&tasks.cv, &tasks.mu, &until) ==
		    ETIMEDOUT)
			break;
}

static void *main_loop(void *arg)
{
	struct task *slot[MAX_SLOTS] = { 0 }, *t;
	int active = 0, i, fresh;
	double ms;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&tasks.mu);
		while (!tasks.head && !active)
			pthread_cond_wait(&tasks.cv, &tasks.mu);
		if (!active && opt.batch_delay_ms > 0)
			wait_batch();
		for (i = 0; i < opt.slots && tasks.head; i++) {
			if (slot[i])
				continue;
			slot[i] = (struct task *)fifo_pop(&tasks);
			slot[i]->t_admit = now_ns();
			active++;
		}
		pthread_mutex_unlock(&tasks.mu);
		ms = 0;
		fresh = 0;
		for (i = 0; i < opt.slots; i++) {
			if (slot[i] && !slot[i]->prefilled)
				fresh++;
			else if (slot[i])
				ms = opt.decode_ms;
		}
		compute(ms + fresh * opt.prefill_ms);
		pthread_mutex_lock(&results_mu);
		for (i = 0; i < opt.slots; i++) {
			t = slot[i];
			if (!t)
				continue;
			t->prefilled = true;
			t->produced++;
			if (t->produced >= t->want) {
				slot[i] = NULL;
				active--;
			}
		}
		pthread_cond_broadcast(&results_cv);
		pthread_mutex_unlock(&results_mu);
	}
	return NULL;
}

/* ---- HTTP ---- */

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* one SSE event as an HTTP chunk; with end, the chunked terminator too */
static int write_event(int fd, const char *event, bool end)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%zx\r\n%s\r\n%s", strlen(event),
			 event, end ? "0\r\n\r\n" : "");

	return write_all(fd, buf, (size_t)n);
}

/* a request's header and body into buf; its length, 0 at EOF, -1 bad */
static ssize_t read_request(int fd, char *buf, size_t cap, size_t *have,
			    char **body)
{
	char *eoh, *cl;
	size_t need;
	ssize_t r;

	for (;;) {
		buf[*have] = '\0';
		eoh = strstr(buf, "\r\n\r\n");
		if (eoh) {
			cl = strcasestr(buf, "content-length:");
			need = (size_t)(eoh + 4 - buf) +
			       (cl && cl < eoh ? strtoul(cl + 15, NULL, 10) :
						 0);
			if (need >= cap)
				return -1;
			if (*have >= need) {
				*body = eoh + 4;
				return (ssize_t)need;
			}
		}
		if (*have + 1 >= cap)
			return -1;
		r = read(fd, buf + *have, cap - 1 - *have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : 0;
		*have += (size_t)r;
	}
}

static void serve_request(int fd, int port, const char *body)
{
	static const char head[] = "HTTP/1.1 200 OK\r\n"
				   "Content-Type: text/event-stream\r\n"
				   "Transfer-Encoding: chunked\r\n"
				   "Connection: keep-alive\r\n\r\n";
	struct task t = { .port = port, .want = opt.tokens };
	uint64_t t_first = 0, t_last = 0;
	const char *mt = strstr(body, "\"max_tokens\"");
	char event[128];
	int n, ok = 0;

	t.t_read = now_ns();
	if (mt && (mt = strchr(mt, ':')) && atoi(mt + 1) > 0)
		t.want = atoi(mt + 1);
	spin_ms(opt.tokenize_ms);
	pthread_mutex_lock(&tasks.mu);
	t.t_enqueue = now_ns();
	fifo_push(&tasks, &t.link);
	pthread_cond_signal(&tasks.cv);
	pthread_mutex_unlock(&tasks.mu);
	if (write_all(fd, head, sizeof(head) - 1))
		goto wait_out;
	while (t.taken < t.want) {
		pthread_mutex_lock(&results_mu);
		while (t.produced == t.taken)
			pthread_cond_wait(&results_cv, &results_mu);
		n = t.produced;
		pthread_mutex_unlock(&results_mu);
		for (; t.taken < n; t.taken++) {
			t_last = now_ns();
			if (!t_first)
				t_first = t_last;
			snprintf(
				event, sizeof(event),
				"data: {\"content\":\"tok%d\",\"stop\":%s}\n\n",
				t.taken + 1,
				t.taken + 1 == t.want ? "true" : "false");
			if (write_event(fd, event, false))
				goto wait_out;
		}
	}
	ok = !write_event(fd, "data: [DONE]\n\n", true);
wait_out:
	/* the engine holds t until its last token: wait for it */
	pthread_mutex_lock(&results_mu);
	while (t.produced < t.want)
		pthread_cond_wait(&results_cv, &results_mu);
	pthread_mutex_unlock(&results_mu);
	if (!opt.log)
		return;
	pthread_mutex_lock(&log_mu);
	fprintf(opt.log, "%d,%llu,%llu,%llu,%llu,%llu,%d,0,%s\n", port,
		(unsigned long long)t.t_read, (unsigned long long)t.t_enqueue,
		(unsigned long long)t.t_admit, (unsigned long long)t_first,
		(unsigned long long)t_last, t.taken, ok ? "ok" : "error");
	fflush(opt.log);
	pthread_mutex_unlock(&log_mu);
}

static void serve_conn(int fd)
{
	static __thread char buf[65536];
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	size_t have = 0;
	ssize_t n;
	char *body;
	int one = 1;

	if (!opt.nagle)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	getpeername(fd, (struct sockaddr *)&peer, &len);
	while ((n = read_request(fd, buf, sizeof(buf), &have, &body)) > 0) {
		serve_request(fd, ntohs(peer.sin_port), body);
		memmove(buf, buf + n, have - (size_t)n);
		have -= (size_t)n;
	}
	close(fd);
}

static void *http_thread(void *arg)
{
	struct conn_item *c;
	int fd;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&conns.mu);
		while (!conns.head)
			pthread_cond_wait(&conns.cv, &conns.mu);
		c = (struct conn_item *)fifo_pop(&conns);
		pthread_mutex_unlock(&conns.mu);
		fd = c->fd;
		free(c);
		serve_conn(fd);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: llama_server [-p PORT] [--log FILE] [--slots N] [--http-threads N]\n"
		"       [--compute-threads N] [--prefill-ms MS] [--decode-ms MS]\n"
		"       [--tokenize-ms MS] [--tokens N] [--batch-delay-ms MS] [--nagle]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct conn_item *c;
	pthread_t th;
	int lfd, fd, i, one = 1;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--nagle")) {
			opt.nagle = true;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "-p"))
			opt.port = atoi(v);
		else if (!strcmp(a, "--log") && !(opt.log = fopen(v, "w")))
			return perror(v), 1;
		else if (!strcmp(a, "--slots"))
			opt.slots = atoi(v);
		else if (!strcmp(a, "--http-threads"))
			opt.http_threads = atoi(v);
		else if (!strcmp(a, "--compute-threads"))
			opt.compute_threads = atoi(v);
		else if (!strcmp(a, "--prefill-ms"))
			opt.prefill_ms = atof(v);
		else if (!strcmp(a, "--decode-ms"))
			opt.decode_ms = atof(v);
		else if (!strcmp(a, "--tokenize-ms"))
			opt.tokenize_ms = atof(v);
		else if (!strcmp(a, "--tokens"))
			opt.tokens = atoi(v);
		else if (!strcmp(a, "--batch-delay-ms"))
			opt.batch_delay_ms = atof(v);
		else if (strcmp(a, "--log"))
			usage();
	}
	if (opt.slots < 1 || opt.slots > MAX_SLOTS || opt.http_threads < 1 ||
	    opt.compute_threads < 1 || opt.tokens < 1)
		usage();
	if (opt.log)
		fprintf(opt.log,
			"port,t_read,t_enqueue,t_admit,t_first_token_emit,"
			"t_last_token_emit,tokens,io_ns,status\n");
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons((uint16_t)opt.port);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(lfd, 128))
		return perror("llama_server: listen"), 1;
	for (i = 1; i < opt.compute_threads; i++)
		pthread_create(&th, NULL, compute_worker, NULL);
	pthread_create(&th, NULL, main_loop, NULL);
	for (i = 0; i < opt.http_threads; i++)
		pthread_create(&th, NULL, http_thread, NULL);
	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		pthread_mutex_lock(&conns.mu);
		fifo_push(&conns, &c->link);
		pthread_cond_signal(&conns.cv);
		pthread_mutex_unlock(&conns.mu);
	}
}
