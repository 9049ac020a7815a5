/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server engine: delays, thread clocks, the engine thread with its
 * request queue and continuous batching, and the --split engine process. */
#include "demo-server.h"

/* ---------------------------------------------------------------- delays */

static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static double rng_unit(uint64_t *state)
{
	return ((double)(rng_next(state) >> 11) + 1.0) / 9007199254740992.0;
}

static uint64_t delay_sample(const struct delay_spec *d, uint64_t *rng)
{
	switch (d->kind) {
	case DELAY_UNIFORM:
		return d->a_ns + rng_next(rng) % (d->b_ns - d->a_ns + 1);
	case DELAY_EXP:
		return (uint64_t)(-(double)d->a_ns * log(rng_unit(rng)));
	case DELAY_FIXED:
	default:
		return d->a_ns;
	}
}

bool parse_us(const char *s, uint64_t *ns)
{
	uint64_t us;

	if (!parse_u64_range(s, 0, 3600ULL * 1000000, &us))
		return false;
	*ns = us * NSEC_PER_USEC;
	return true;
}

/* "N", "uniform:MIN:MAX" or "exp:MEAN", all in microseconds */
bool parse_delay_spec(const char *s, struct delay_spec *d)
{
	char buf[128], *colon;

	if (!strncmp(s, "uniform:", 8)) {
		if (strlen(s + 8) >= sizeof(buf))
			return false;
		strcpy(buf, s + 8);
		colon = strchr(buf, ':');
		if (!colon)
			return false;
		*colon = '\0';
		d->kind = DELAY_UNIFORM;
		return parse_us(buf, &d->a_ns) &&
		       parse_us(colon + 1, &d->b_ns) && d->a_ns <= d->b_ns;
	}
	if (!strncmp(s, "exp:", 4)) {
		d->kind = DELAY_EXP;
		return parse_us(s + 4, &d->a_ns);
	}
	d->kind = DELAY_FIXED;
	return parse_us(s, &d->a_ns);
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* a thread's runqueue wait so far, from its open schedstat; 0: unknown */
uint64_t run_delay(int sched_fd)
{
	unsigned long long on_cpu, delay;
	char buf[128];
	ssize_t n;

	if (sched_fd < 0)
		return 0;
	n = pread(sched_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
		return 0;
	return delay;
}

/* the calling thread's own schedstat, to read its runqueue wait from */
int open_sched_stat(void)
{
	return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
}

uint64_t engine_run_delay(const struct engine *e)
{
	return run_delay(e->sched_fd);
}

/*
 * One stretch of "device" work; the one place later compute backends hook.
 * Spin steps stay on CPU until a wall-clock deadline, so what the thread
 * did not run of them it spent runnable; sleep steps are blocked, but for
 * the CPU and the runqueue wait around the sleep.
 */
static void engine_compute(const struct engine *e, uint64_t ns,
			   enum wait_mode mode, struct step_cost *cost)
{
	uint64_t wall0, cpu0, rd0, wall, cpu, rd;

	if (!ns)
		return;
	rd0 = engine_run_delay(e);
	wall0 = mono_ns();
	cpu0 = thread_cpu_ns();
	if (mode == WAIT_SPIN)
		spin_until_ns(wall0 + ns);
	else
		sleep_until_ns(wall0 + ns);
	wall = mono_ns() - wall0;
	cpu = thread_cpu_ns() - cpu0;
	rd = engine_run_delay(e) - rd0;
	if (mode == WAIT_SPIN)
		cost->runnable_ns += wall > cpu ? wall - cpu : 0;
	else
		cost->sleep_ns += wall > cpu + rd ? wall - cpu - rd : 0;
}

/* ------------------------------------------------------- engine hand-off */

void request_init(struct request *req, int notify_fd)
{
	memset(req, 0, sizeof(*req));
	pthread_mutex_init(&req->lock, NULL);
	pthread_cond_init(&req->cond, NULL);
	req->notify_fd = notify_fd;
	req->token_fd = -1;
}

void request_destroy(struct request *req)
{
	pthread_cond_destroy(&req->cond);
	pthread_mutex_destroy(&req->lock);
}

/* engine process: the token count and ground truth go in one message */
static void split_send_token(struct request *req)
{
	struct split_msg m = {
		.type = SPLIT_TOKEN,
		.id = req->id,
		.produced = req->produced,
		.truth = req->truth,
	};

	if (req->done)
		m.flags |= SPLIT_DONE;
	if (req->aborted)
		m.flags |= SPLIT_ABORTED;
	/* a front-end that went away is for the receiver to notice */
	while (send(req->token_fd, &m, sizeof(m), MSG_NOSIGNAL) < 0 &&
	       errno == EINTR)
		;
}

/* caller holds req->lock; wakes the front-end after a state change */
static void request_notify_locked(struct request *req)
{
	char byte = 't';

	if (req->token_fd >= 0) {
		split_send_token(req);
	} else if (req->notify_fd >= 0) {
		/* a full pipe already holds a pending wakeup */
		if (write(req->notify_fd, &byte, 1) < 0 && errno != EAGAIN)
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
	} else {
		pthread_cond_signal(&req->cond);
	}
}

/* engine side: final touch of a request */
static void request_release(struct request *req, bool aborted)
{
	pthread_mutex_lock(&req->lock);
	req->done = true;
	req->aborted = aborted;
	request_notify_locked(req);
	pthread_mutex_unlock(&req->lock);
}

/* queues the request; false when the engine is stopping */
bool engine_submit(struct engine *e, struct request *req)
{
	bool accepted;

	/* on entry: a wait for the engine's lock is already queueing, and
	 * a marker on this function (ttftrace record --mark) fires here */
	req->truth.t_enqueue = mono_ns();
	pthread_mutex_lock(&e->lock);
	accepted = !e->stopping;
	if (accepted) {
		req->next = NULL;
		if (e->tail)
			e->tail->next = req;
		else
			e->head = req;
		e->tail = req;
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	return accepted;
}

/*
 * A request was admitted to the batch (its t_dispatch stamped just
 * before): a function of its own, never inlined, for `ttftrace record
 * --mark dispatch=demo-server:engine_admitted,key=arg1` to probe.
 */
__attribute__((noinline, used)) void engine_admitted(struct request *req)
{
	/* keeps the call: a function with no effect may be elided */
	__asm__ volatile("" : : "r"(req) : "memory");
}

/*
 * Iteration boundary: take waiting requests into the batch (blocking while
 * there is nothing to do: then *waited). Returns how many were admitted,
 * -1 on stop.
 */
static int engine_admit(struct engine *e, struct request **admitted,
			bool *waited)
{
	int max = e->srv->opts.batch;
	int n = 0;

	*waited = false;
	pthread_mutex_lock(&e->lock);
	while (!e->stopping && !e->nbatch && !e->head) {
		*waited = true;
		pthread_cond_wait(&e->cond, &e->lock);
	}
	if (e->stopping) {
		pthread_mutex_unlock(&e->lock);
		return -1;
	}
	while (e->head && e->nbatch < max) {
		struct request *req = e->head;

		e->head = req->next;
		if (!e->head)
			e->tail = NULL;
		req->next = NULL;
		req->truth.t_dispatch = mono_ns();
		engine_admitted(req);
		DEMO_USDT1(demo, admitted, req);
		req->truth.t_admitted_ret = mono_ns();
		e->batch[e->nbatch++] = req;
		admitted[n++] = req;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* one request's KV blocks: --kv-read-bytes from a random aligned offset */
static void engine_kv_read_one(struct engine *e)
{
	uint64_t left = e->srv->opts.kv_read_bytes;
	uint64_t off = rng_next(&e->kv_rng) % e->kv_blocks * KV_ALIGN;
	size_t len;
	ssize_t n;

	while (left) {
		len = left < KV_CHUNK ? left : KV_CHUNK;
		n = e->kv_ring.fd >= 0 ?
			    kv_ring_pread(&e->kv_ring, e->kv_fd, e->kv_buf, len,
					  off) :
			    pread(e->kv_fd, e->kv_buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!e->kv_error_told)
				fprintf(stderr, "%s: kv read: %s\n", prog,
					n ? strerror(errno) : "end of file");
			e->kv_error_told = true;
			return;
		}
		left -= (uint64_t)n;
		off += (uint64_t)n;
	}
}

/* the KV blocks of n requests; the time blocked is wall less CPU, runqueue */
static void engine_kv_read(struct engine *e, int n, struct step_cost *cost)
{
	uint64_t wall0 = mono_ns(), cpu0 = thread_cpu_ns();
	uint64_t rd0 = engine_run_delay(e), wall, cpu, rd;
	int i;

	for (i = 0; i < n; i++)
		engine_kv_read_one(e);
	/* the wall clock read last as it was first: its span holds the CPU
	 * clock's, so the CPU time is never more than the wall time */
	cpu = thread_cpu_ns() - cpu0;
	rd = engine_run_delay(e) - rd0;
	wall = mono_ns() - wall0;
	cost->io_ns += wall;
	cost->io_wait_ns += wall > cpu + rd ? wall - cpu - rd : 0;
	cost->io_cpu_ns += cpu;
}

/*
 * One iteration's work: the prefill of the newly admitted requests (their
 * KV blocks loaded, then compute for the sum of their prefill times), then
 * a decode step for the whole batch. On the CPU these are two steps; with
 * --gpu, both are the kernels of one launch burst and one sync.
 */
static void engine_step(struct engine *e, struct request **admitted, int n,
			struct step_cost *cost)
{
	const struct server_opts *o = &e->srv->opts;
	uint64_t total = 0, start, end;
	int i;

	for (i = 0; i < n; i++)
		total += delay_sample(&o->prefill, &e->rng);
	start = mono_ns();
	if (n && e->kv_fd >= 0)
		engine_kv_read(e, n, cost);
	if (o->gpu) {
		end = engine_gpu_step(e, total, o->token_interval_ns, cost);
	} else {
		engine_compute(e, total, o->prefill_mode, cost);
		end = mono_ns();
		engine_compute(e, o->token_interval_ns, o->decode_mode, cost);
	}
	for (i = 0; i < n; i++) {
		admitted[i]->truth.t_prefill_start = start;
		admitted[i]->truth.t_prefill_end = end;
	}
}

/*
 * What the iteration that admitted them cost, up to their first token,
 * from its start (the last hand-off before, or the wait for work).
 */
static void engine_account(struct engine *e, struct request **admitted, int n,
			   const struct step_cost *cost,
			   const struct engine_mark *start, uint64_t rd_admit)
{
	uint64_t rd_end = engine_run_delay(e);
	uint64_t cpu = thread_cpu_ns() - start->cpu;
	int i;

	for (i = 0; i < n; i++) {
		struct engine_truth *t = &admitted[i]->truth;

		t->io_ns = cost->io_ns;
		t->io_wait_ns = cost->io_wait_ns;
		t->io_cpu_ns = cost->io_cpu_ns;
		t->cpu_ns = cpu;
		t->runnable_ns = cost->runnable_ns;
		t->sleep_ns = cost->sleep_ns;
		t->run_delay_ns = rd_end - start->rd;
		t->wake_delay_ns = rd_admit - start->rd;
		t->t_boundary = start->t;
		t->gpu_ns = cost->gpu_ns;
		t->kernel_ns = cost->kernel_ns;
		t->launch_cpu_ns = cost->launch_cpu_ns;
		t->sync_wait_ns = cost->sync_wait_ns;
		t->sync_cpu_ns = cost->sync_cpu_ns;
	}
}

/* hands one token to every request in the batch; drops finished ones */
static void engine_emit_tokens(struct engine *e)
{
	int i, kept = 0;

	for (i = 0; i < e->nbatch; i++) {
		struct request *req = e->batch[i];
		bool finished;

		/*
		 * The last hand-off ends the iteration: the woken front-end
		 * may preempt the engine before it unlocks, and that wait is
		 * the next iteration's runqueue time, not queueing.
		 */
		if (i == e->nbatch - 1) {
			e->handoff.rd = engine_run_delay(e);
			e->handoff.cpu = thread_cpu_ns();
			e->handoff.t = mono_ns();
			e->handed_off = true;
		}
		pthread_mutex_lock(&req->lock);
		if (!req->cancelled && !req->produced++)
			req->truth.t_token = mono_ns();
		finished = req->cancelled || req->produced >= req->max_tokens;
		if (finished)
			req->done = true;
		request_notify_locked(req);
		pthread_mutex_unlock(&req->lock);
		if (!finished)
			e->batch[kept++] = req;
	}
	e->nbatch = kept;
}

/* on stop: release everything running or waiting, as aborted */
static void engine_abort_all(struct engine *e)
{
	struct request *req, *next;
	int i;

	for (i = 0; i < e->nbatch; i++)
		request_release(e->batch[i], true);
	e->nbatch = 0;
	pthread_mutex_lock(&e->lock);
	req = e->head;
	e->head = e->tail = NULL;
	pthread_mutex_unlock(&e->lock);
	for (; req; req = next) {
		next = req->next;
		request_release(req, true);
	}
}

/* --gpu: sets up the GPU, then tells engine_start() how that went */
static bool engine_gpu_start(struct engine *e)
{
	int status = engine_gpu_open(&e->gpu, &e->srv->opts) ? -1 : 1;

	if (status < 0)
		engine_gpu_close(&e->gpu);
	pthread_mutex_lock(&e->lock);
	e->gpu.status = status;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return status > 0;
}

static void *engine_main(void *arg)
{
	struct engine *e = arg;
	struct engine_mark start;
	struct step_cost cost;
	uint64_t rd_admit;
	bool waited;
	int n;

	pthread_setname_np(pthread_self(), "demo-engine");
	/* thread-self: this thread's own runqueue wait, for the ground truth */
	e->sched_fd = open_sched_stat();
	if (e->srv->opts.gpu && !engine_gpu_start(e))
		goto cleanup;
	for (;;) {
		start.rd = engine_run_delay(e);
		n = engine_admit(e, e->admitted, &waited);
		if (n < 0)
			break;
		rd_admit = engine_run_delay(e);
		if (waited || !e->handed_off) {
			/* idle: the request's arrival woke it, no boundary */
			e->handed_off = false;
			start.t = 0;
			start.cpu = thread_cpu_ns();
		} else {
			start = e->handoff;
		}
		memset(&cost, 0, sizeof(cost));
		engine_step(e, e->admitted, n, &cost);
		if (n)
			engine_account(e, e->admitted, n, &cost, &start,
				       rd_admit);
		engine_emit_tokens(e);
		e->iterations++;
	}
	engine_abort_all(e);
	engine_gpu_close(&e->gpu);
cleanup:
	if (e->sched_fd >= 0)
		close(e->sched_fd);
	e->sched_fd = -1;
	return NULL;
}

/* the KV file, already checked by kv_check(): 0 or -errno */
static int engine_kv_open(struct engine *e, const struct server_opts *o)
{
	size_t buf_len = o->kv_read_bytes < KV_CHUNK ? o->kv_read_bytes :
						       KV_CHUNK;
	struct stat st;
	int err;

	e->kv_fd = open(o->kv_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (e->kv_fd < 0)
		return -errno;
	if (fstat(e->kv_fd, &st))
		return -errno;
	if ((uint64_t)st.st_size < o->kv_read_bytes)
		return -ENOSPC;
	e->kv_blocks = ((uint64_t)st.st_size - o->kv_read_bytes) / KV_ALIGN + 1;
	e->kv_rng = o->seed ^ 0x6b762d7265616473ULL;
	err = posix_memalign(&e->kv_buf, KV_ALIGN, buf_len);
	if (err) {
		e->kv_buf = NULL;
		return -err;
	}
	return o->kv_uring ? kv_ring_open(&e->kv_ring) : 0;
}

static void engine_kv_close(struct engine *e)
{
	if (e->kv_fd >= 0)
		close(e->kv_fd);
	e->kv_fd = -1;
	free(e->kv_buf);
	e->kv_buf = NULL;
	if (e->kv_ring.fd >= 0)
		kv_ring_close(&e->kv_ring);
}

int engine_start(struct engine *e, struct server *srv)
{
	pthread_attr_t attr;
	cpu_set_t cpus;
	int err;

	e->srv = srv;
	e->rng = srv->opts.seed;
	e->kv_fd = -1;
	e->kv_ring.fd = -1;
	e->sched_fd = -1;
	e->batch = calloc(srv->opts.batch, sizeof(*e->batch));
	e->admitted = calloc(srv->opts.batch, sizeof(*e->admitted));
	if (!e->batch || !e->admitted) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (srv->opts.kv_path) {
		err = engine_kv_open(e, &srv->opts);
		if (err)
			goto cleanup;
	}
	err = -pthread_attr_init(&attr);
	if (err)
		goto cleanup;
	if (srv->opts.engine_cpu >= 0) {
		CPU_ZERO(&cpus);
		CPU_SET(srv->opts.engine_cpu, &cpus);
		err = -pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	if (!err)
		err = -pthread_create(&e->thread, &attr, engine_main, e);
	pthread_attr_destroy(&attr);
	if (!err && srv->opts.gpu) {
		/* the engine thread sets up the GPU: its errors are startup's */
		pthread_mutex_lock(&e->lock);
		while (!e->gpu.status)
			pthread_cond_wait(&e->cond, &e->lock);
		pthread_mutex_unlock(&e->lock);
		if (e->gpu.status < 0) {
			pthread_join(e->thread, NULL);
			err = -ENODEV;
		}
	}
	if (!err)
		return 0;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
cleanup:
	engine_kv_close(e);
	free(e->batch);
	free(e->admitted);
	e->batch = e->admitted = NULL;
	return err;
}

void engine_stop(struct engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

void engine_join(struct engine *e)
{
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	engine_kv_close(e);
	free(e->batch);
	free(e->admitted);
}

/* ------------------------------------------------ --split: engine side */

/* a front-end thread's slot, reused once the engine released it */
static void request_reuse_locked(struct request *req, const struct split_msg *m)
{
	memset(&req->truth, 0, sizeof(req->truth));
	req->id = m->id;
	req->max_tokens = m->max_tokens ? m->max_tokens : 1;
	req->prompt_bytes = m->prompt_bytes;
	req->produced = 0;
	req->done = req->aborted = req->cancelled = false;
	req->next = NULL;
}

/* one message from a front-end thread, for its slot */
static void split_receive(struct engine *e, struct request *slot,
			  const struct split_msg *m)
{
	bool busy = false;

	pthread_mutex_lock(&slot->lock);
	if (m->type == SPLIT_REQ) {
		busy = !slot->done;
		if (!busy)
			request_reuse_locked(slot, m);
	} else if (m->type == SPLIT_CANCEL && m->id == slot->id) {
		slot->cancelled = true;
	}
	pthread_mutex_unlock(&slot->lock);
	if (m->type != SPLIT_REQ)
		return;
	if (busy) {
		fprintf(stderr, "%s: engine: request %llu before %llu ended\n",
			prog, (unsigned long long)m->id,
			(unsigned long long)slot->id);
		return;
	}
	slot->truth.t_submit_call = mono_ns();
	if (!engine_submit(e, slot))
		request_release(slot, true);
}

/*
 * The engine process: its main thread receives the requests of every
 * front-end thread (poll over their unix sockets) and queues them to its
 * engine thread, which sends each token back over the same socket. Exits
 * once every front-end end is closed. Returns the exit status.
 */
static int split_engine_main(struct server *srv, int *fds)
{
	int n = srv->opts.workers, alive = n, i, err, ret = 1;
	struct request *slots = NULL;
	struct pollfd *pfds = NULL;
	struct split_msg m;
	ssize_t len;

	prctl(PR_SET_NAME, "demo-recv");
	pfds = calloc(n, sizeof(*pfds));
	slots = calloc(n, sizeof(*slots));
	if (!pfds || !slots) {
		fprintf(stderr, "%s: engine process: out of memory\n", prog);
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		request_init(&slots[i], -1);
		slots[i].token_fd = fds[i];
		slots[i].done = true;
		pfds[i].fd = fds[i];
		pfds[i].events = POLLIN;
	}
	err = engine_start(&srv->engine, srv);
	if (err) {
		fprintf(stderr, "%s: cannot start engine: %s\n", prog,
			srv->engine.gpu.err[0] ? srv->engine.gpu.err :
						 strerror(-err));
		goto cleanup;
	}
	while (alive) {
		if (poll(pfds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: engine poll: %s\n", prog,
				strerror(errno));
			break;
		}
		for (i = 0; i < n; i++) {
			if (pfds[i].fd < 0 || !pfds[i].revents)
				continue;
			len = recv(pfds[i].fd, &m, sizeof(m), MSG_DONTWAIT);
			if (len < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (len == (ssize_t)sizeof(m)) {
				split_receive(&srv->engine, &slots[i], &m);
				continue;
			}
			/* the front-end thread is gone: so is its request */
			pthread_mutex_lock(&slots[i].lock);
			slots[i].cancelled = true;
			pthread_mutex_unlock(&slots[i].lock);
			pfds[i].fd = -1;
			alive--;
		}
	}
	engine_stop(&srv->engine);
	engine_join(&srv->engine);
	ret = 0;
cleanup:
	for (i = 0; i < n; i++) {
		close(fds[i]);
		if (slots)
			request_destroy(&slots[i]);
	}
	free(slots);
	free(pfds);
	return ret;
}

/* forks the engine process, one unix socket per front-end thread */
int split_start(struct server *srv)
{
	int n = srv->opts.workers, i, pair[2], err = 0;
	pid_t parent = getpid(), pid;
	int *engine_ends;

	srv->engine_fds = malloc(n * sizeof(*srv->engine_fds));
	engine_ends = malloc(n * sizeof(*engine_ends));
	if (!srv->engine_fds || !engine_ends) {
		free(engine_ends);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		srv->engine_fds[i] = engine_ends[i] = -1;
	for (i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
			       pair)) {
			err = -errno;
			goto cleanup;
		}
		srv->engine_fds[i] = pair[0];
		engine_ends[i] = pair[1];
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!pid) {
		/* the engine dies with the front-end, however that ends */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		for (i = 0; i < n; i++)
			close(srv->engine_fds[i]);
		i = split_engine_main(srv, engine_ends);
		fflush(stderr);
		_exit(i);
	}
	srv->engine_pid = pid;
cleanup:
	for (i = 0; i < n; i++)
		if (engine_ends[i] >= 0)
			close(engine_ends[i]);
	free(engine_ends);
	return err;
}

/* closes the front-end ends, then reaps the engine process (5 s at most) */
void split_stop(struct server *srv)
{
	int i, status;

	if (!srv->engine_fds)
		return;
	for (i = 0; i < srv->opts.workers; i++)
		if (srv->engine_fds[i] >= 0)
			close(srv->engine_fds[i]);
	free(srv->engine_fds);
	srv->engine_fds = NULL;
	if (srv->engine_pid <= 0)
		return;
	for (i = 0; i < 500; i++) {
		if (waitpid(srv->engine_pid, &status, WNOHANG) ==
		    srv->engine_pid)
			return;
		sleep_until_ns(mono_ns() + 10 * NSEC_PER_MSEC);
	}
	fprintf(stderr, "%s: engine process did not stop: killed\n", prog);
	kill(srv->engine_pid, SIGKILL);
	waitpid(srv->engine_pid, &status, 0);
}
