/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server front-end: one thread per connection reads, tokenizes, hands
 * the request to the engine and streams its tokens; one ground-truth row
 * each. */
#include "demo-server.h"

/* ------------------------------------------------------------ front-end */

/*
 * The prompt is "tokenized": CPU work proportional to its size, until a
 * wall-clock deadline. Returns the wall time; *cpu_ns the thread's CPU time
 * in it (the rest it spent runnable).
 */
static uint64_t tokenize(const char *prompt, size_t len, uint64_t burn_ns,
			 uint64_t *cpu_ns)
{
	uint64_t t0 = mono_ns(), deadline, hash = 1469598103934665603ULL;
	uint64_t cpu0 = thread_cpu_ns();
	size_t i;

	*cpu_ns = 0;
	if (!burn_ns || !len)
		return 0;
	deadline = t0 + burn_ns;
	do {
		for (i = 0; i < len; i++) {
			hash = (hash ^ (unsigned char)prompt[i]) *
			       1099511628211ULL;
			if ((i & 4095) == 4095 && mono_ns() >= deadline)
				break;
		}
	} while (mono_ns() < deadline);
	/* keeps the hashing from being optimised away */
	__asm__ volatile("" : : "r"(hash) : "memory");
	*cpu_ns = thread_cpu_ns() - cpu0;
	return mono_ns() - t0;
}

int format_event(const struct server_opts *o, char *buf, size_t size,
		 const char *data)
{
	int n;

	if (o->framing == FRAMING_CHUNKED) {
		size_t dlen = strlen(data) + 8;	/* "data: " + "\n\n" */

		n = snprintf(buf, size, "%zx\r\ndata: %s\n\n\r\n", dlen, data);
	} else {
		n = snprintf(buf, size, "data: %s\n\n", data);
	}
	return n < 0 || n >= (int)size ? -1 : n;
}

static int format_token_event(const struct server_opts *o, char *buf,
			      size_t size, uint64_t id, uint64_t k)
{
	char data[160];

	snprintf(data, sizeof(data),
		 "{\"id\":\"cmpl-%llu\",\"choices\":[{\"text\":\"tok%llu\","
		 "\"index\":0}]}",
		 (unsigned long long)id, (unsigned long long)k);
	return format_event(o, buf, size, data);
}

static int format_stream_headers(const struct server_opts *o, char *buf,
				 size_t size, uint64_t id, bool keep_alive)
{
	int n;

	n = snprintf(buf, size,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: text/event-stream\r\n"
		     "cache-control: no-cache\r\n"
		     "x-request-id: cmpl-%llu\r\n"
		     "connection: %s\r\n"
		     "%s\r\n",
		     (unsigned long long)id,
		     keep_alive ? "keep-alive" : "close",
		     o->framing == FRAMING_CHUNKED ?
		     "transfer-encoding: chunked\r\n" : "");
	return n < 0 || n >= (int)size ? -1 : n;
}

/*
 * Starts a stream on c: its status line and headers go into buf, in a
 * write of their own unless --headers-with-body keeps them for the first
 * event. Returns the length of what stays in buf (0 once written) or
 * -errno.
 */
int stream_start(const struct server_opts *o, struct conn *c, char *buf,
		 size_t size, uint64_t id, bool keep_alive)
{
	int hlen = format_stream_headers(o, buf, size, id, keep_alive);
	int err;

	if (hlen < 0)
		return -EINVAL;
	if (o->headers_with_body)
		return hlen;
	err = write_all(c->fd, buf, hlen);
	return err ? err : 0;
}

/* --split: queues the request in the engine process; false if it is gone */
static bool split_submit(struct worker *w, struct request *req)
{
	struct split_msg m = {
		.type = SPLIT_REQ,
		.id = req->id,
		.max_tokens = req->max_tokens,
		.prompt_bytes = req->prompt_bytes,
	};
	ssize_t n;

	if (w->engine_gone)
		return false;
	do
		n = send(w->engine_fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m))
		w->engine_gone = true;
	return !w->engine_gone;
}

/* --split: the engine process's next message about req */
static void split_wait(struct worker *w, struct request *req)
{
	struct split_msg m;
	ssize_t n;

	for (;;) {
		n = w->engine_gone ? 0 : recv(w->engine_fd, &m, sizeof(m), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m)) {
			/* the engine process stopped: as an in-process stop */
			w->engine_gone = true;
			req->done = req->aborted = true;
			return;
		}
		if (m.type != SPLIT_TOKEN || m.id != req->id)
			continue;	/* of a request given up before */
		req->produced = m.produced;
		req->truth = m.truth;
		req->done = m.flags & SPLIT_DONE;
		req->aborted = m.flags & SPLIT_ABORTED;
		return;
	}
}

/*
 * Waits for the engine to produce more tokens or release the request.
 * Returns the produced count; *done tells whether the engine released it.
 */
static uint64_t wait_tokens(struct worker *w, struct request *req,
			    uint64_t seen, bool *done)
{
	uint64_t produced;
	char drain[256];

	if (w->engine_fd >= 0) {
		/* --split: only this thread touches req on this side */
		while (!req->done && req->produced == seen)
			split_wait(w, req);
		*done = req->done;
		return req->produced;
	}
	pthread_mutex_lock(&req->lock);
	while (!req->done && req->produced == seen) {
		if (req->notify_fd < 0) {
			pthread_cond_wait(&req->cond, &req->lock);
			continue;
		}
		pthread_mutex_unlock(&req->lock);
		if (read(w->pipe_rd, drain, sizeof(drain)) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
			sleep_until_ns(mono_ns() + NSEC_PER_MSEC);
		}
		pthread_mutex_lock(&req->lock);
	}
	produced = req->produced;
	*done = req->done;
	pthread_mutex_unlock(&req->lock);
	return produced;
}

/* the client is gone: tell the engine, then wait until it lets go */
static void cancel_request(struct worker *w, struct request *req)
{
	bool done;
	uint64_t seen;

	pthread_mutex_lock(&req->lock);
	req->cancelled = true;
	seen = req->produced;
	pthread_mutex_unlock(&req->lock);
	if (w->engine_fd >= 0 && !w->engine_gone) {
		struct split_msg m = { .type = SPLIT_CANCEL, .id = req->id };

		if (send(w->engine_fd, &m, sizeof(m), MSG_NOSIGNAL) < 0)
			w->engine_gone = true;
	}
	do
		seen = wait_tokens(w, req, seen, &done);
	while (!done);
}

/* the first token write: its time, and the front-end's runqueue wait */
void note_first_write(struct worker *w, struct request *req)
{
	req->t_first_write = req->t_last_write;
	if (w->sched_fd >= 0)
		req->fe_run_delay = run_delay(w->sched_fd) - req->fe_rd_start;
}

/*
 * One token event as iovecs, the way servers with vectored I/O write it
 * (hyper does): the headers when they travel with it, the chunk-size line
 * or "data: ", the payload, and the framing's trailing CRLF or blank line.
 */
static int write_vectored(const struct server_opts *o, int fd,
			  const char *buf, size_t hlen, size_t len)
{
	struct iovec iov[4];
	struct msghdr msg = { .msg_iov = iov };
	const char *ev = buf + hlen, *cut;
	size_t evlen = len - hlen, head;
	ssize_t n;
	int cnt = 0;

	if (hlen)
		iov[cnt++] = (struct iovec){ (void *)buf, hlen };
	cut = o->framing == FRAMING_CHUNKED ? memmem(ev, evlen, "\r\n", 2) :
					      NULL;
	head = cut ? (size_t)(cut + 2 - ev) : 6;	/* "data: " */
	if (evlen < head + 2)
		return -EINVAL;
	iov[cnt++] = (struct iovec){ (void *)ev, head };
	iov[cnt++] = (struct iovec){ (void *)(ev + head), evlen - head - 2 };
	iov[cnt++] = (struct iovec){ (void *)(ev + evlen - 2), 2 };
	msg.msg_iovlen = cnt;
	while (msg.msg_iovlen) {
		n = o->send_call == SEND_SENDMSG ?
			    sendmsg(fd, &msg, MSG_NOSIGNAL) :
			    writev(fd, msg.msg_iov, msg.msg_iovlen);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* a short write: on from where it stopped */
		while (msg.msg_iovlen && (size_t)n >= msg.msg_iov->iov_len) {
			n -= msg.msg_iov->iov_len;
			msg.msg_iov++;
			msg.msg_iovlen--;
		}
		if (msg.msg_iovlen) {
			msg.msg_iov->iov_base = (char *)msg.msg_iov->iov_base + n;
			msg.msg_iov->iov_len -= n;
		}
	}
	return 0;
}

/* Writes one token-carrying event (with the headers, hlen bytes, when they
 * travel with the first token), stamping the write times before it. */
int write_token(struct worker *w, struct conn *c, struct request *req,
		const char *buf, size_t hlen, size_t len)
{
	const struct server_opts *o = &w->srv->opts;
	int err;

	req->t_last_write = mono_ns();
	if (!req->tokens_written)
		note_first_write(w, req);
	if (o->send_call == SEND_WRITE)
		err = write_all(c->fd, buf, len);
	else
		err = write_vectored(o, c->fd, buf, hlen, len);
	if (!err)
		req->tokens_written++;
	return err;
}

/*
 * Streams tokens as SSE events as the engine produces them, headers first;
 * 0 or -errno (-ECANCELED: the server stopped). The caller ends the stream.
 */
static int stream_tokens(struct worker *w, struct conn *c,
			   struct request *req, bool keep_alive)
{
	const struct server_opts *o = &w->srv->opts;
	char buf[EVENT_BUF * 2 + 512];
	uint64_t produced = 0;
	bool done = false;
	int hlen = 0, n, err;

	hlen = stream_start(o, c, buf, sizeof(buf), req->id, keep_alive);
	if (hlen < 0)
		return hlen;
	while (!done) {
		produced = wait_tokens(w, req, req->tokens_written, &done);
		while (req->tokens_written < produced) {
			n = format_token_event(o, buf + hlen,
					       sizeof(buf) - hlen, req->id,
					       req->tokens_written);
			if (n < 0)
				return -EINVAL;
			err = write_token(w, c, req, buf, hlen, hlen + n);
			if (err)
				return err;
			hlen = 0;
		}
	}
	return req->aborted ? -ECANCELED : 0;
}

/* the end of a stream: [DONE], and the chunked terminator */
int stream_finish(const struct server_opts *o, struct conn *c)
{
	char buf[64];
	int n;

	n = format_event(o, buf, sizeof(buf) - 5, "[DONE]");
	if (n < 0)
		return -EINVAL;
	if (o->framing == FRAMING_CHUNKED) {
		memcpy(buf + n, "0\r\n\r\n", 5);
		n += 5;
	}
	return write_all(c->fd, buf, n);
}

/* stream=false: one JSON body once every token is there */
static int whole_response(struct worker *w, struct conn *c,
			  struct request *req, bool keep_alive)
{
	uint64_t produced = 0, k;
	size_t cap, len = 0;
	bool done = false;
	char *body, *resp;
	int n, err = 0;

	while (!done)
		produced = wait_tokens(w, req, produced, &done);
	if (req->aborted)
		return -ECANCELED;
	cap = 256 + produced * 16;
	body = malloc(cap);
	resp = malloc(cap + 256);
	if (!body || !resp) {
		err = -ENOMEM;
		goto cleanup;
	}
	len = snprintf(body, cap,
		       "{\"id\":\"cmpl-%llu\",\"object\":\"text_completion\","
		       "\"choices\":[{\"text\":\"",
		       (unsigned long long)req->id);
	for (k = 0; k < produced; k++)
		len += snprintf(body + len, cap - len, "tok%llu",
				(unsigned long long)k);
	len += snprintf(body + len, cap - len,
			"\",\"index\":0,\"finish_reason\":\"length\"}]}\n");
	n = snprintf(resp, cap + 256,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     len, keep_alive ? "keep-alive" : "close", body);
	req->t_last_write = mono_ns();
	note_first_write(w, req);
	err = write_all(c->fd, resp, n);
	if (!err)
		req->tokens_written = produced;
cleanup:
	free(body);
	free(resp);
	return err;
}

void log_request(struct server *srv, const struct request *req,
		 const char *status)
{
	const struct engine_truth *t = &req->truth;
	char row[ROW_BUF];
	int n;

	if (srv->log_fd < 0)
		return;
	n = snprintf(row, sizeof(row),
		     "%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%zu,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%llu,%llu\n",
		     (unsigned long long)req->id, req->peer_port,
		     (unsigned long long)req->t_read_done,
		     (unsigned long long)t->t_enqueue,
		     (unsigned long long)t->t_dispatch,
		     (unsigned long long)t->t_prefill_start,
		     (unsigned long long)t->t_prefill_end,
		     (unsigned long long)req->t_first_write,
		     (unsigned long long)req->t_last_write,
		     (unsigned long long)req->tokens_written,
		     (unsigned long long)(t->t_prefill_end -
					  t->t_prefill_start),
		     (unsigned long long)(t->t_dispatch ?
					  t->t_dispatch - t->t_enqueue : 0),
		     (unsigned long long)req->tokenize_ns, req->prompt_bytes,
		     status,
		     (unsigned long long)t->io_ns,
		     (unsigned long long)t->io_wait_ns,
		     (unsigned long long)t->cpu_ns,
		     (unsigned long long)t->runnable_ns,
		     (unsigned long long)t->sleep_ns,
		     (unsigned long long)t->run_delay_ns,
		     (unsigned long long)t->wake_delay_ns,
		     (unsigned long long)req->t_first_byte_read,
		     (unsigned long long)t->t_token, req->upstream_port,
		     (unsigned long long)req->tokenize_cpu_ns,
		     (unsigned long long)req->fe_run_delay,
		     (unsigned long long)req->fe_read_wake,
		     (unsigned long long)t->gpu_ns,
		     (unsigned long long)t->kernel_ns,
		     (unsigned long long)t->launch_cpu_ns,
		     (unsigned long long)t->sync_wait_ns,
		     (unsigned long long)t->sync_cpu_ns,
		     (unsigned long long)t->t_boundary,
		     (unsigned long long)t->io_cpu_ns,
		     (unsigned long long)t->t_submit_call,
		     (unsigned long long)t->t_admitted_ret);
	if (n < 0 || n >= (int)sizeof(row))
		return;
	/* one O_APPEND write per row: rows stay whole, survive a kill */
	if (write_all(srv->log_fd, row, n))
		fprintf(stderr, "%s: log write: %s\n", prog, strerror(errno));
}

bool server_stopping(struct server *srv)
{
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	pthread_mutex_unlock(&srv->conn_lock);
	return stopping;
}

static bool handle_completion(struct worker *w, struct conn *c,
			      struct http_req *hr)
{
	struct server *srv = w->srv;
	struct completion_args args;
	struct request req;
	const char *why, *status = "ok";
	int err;

	if (parse_completion(hr->body, hr->body_len, &args, &why)) {
		send_error(srv, c, 400, hr->keep_alive, why);
		return hr->keep_alive;
	}
	request_init(&req, srv->opts.handoff == HANDOFF_PIPE ? w->pipe_wr : -1);
	req.id = atomic_fetch_add(&srv->next_id, 1);
	req.peer_port = c->peer_port;
	req.prompt_bytes = args.prompt_bytes;
	req.max_tokens = args.has_max_tokens ? args.max_tokens :
					       srv->opts.tokens;
	req.stream = args.stream;
	req.t_first_byte_read = hr->t_first_byte_read;
	req.fe_rd_start = c->rd_start;
	req.fe_read_wake = c->read_wake;
	req.t_read_done = hr->t_read_done;
	req.tokenize_ns = tokenize(hr->body, hr->body_len,
				   args.prompt_bytes *
				   srv->opts.tokenize_ns_per_byte,
				   &req.tokenize_cpu_ns);

	if (srv->opts.proxy) {
		bool keep = proxy_completion(w, c, hr, &req);

		request_destroy(&req);
		return keep;
	}
	req.truth.t_submit_call = mono_ns();
	if (!(w->engine_fd >= 0 ? split_submit(w, &req) :
				  engine_submit(&srv->engine, &req))) {
		send_error(srv, c, 503, false, "server is stopping");
		request_destroy(&req);
		return false;
	}
	if (req.stream)
		err = stream_tokens(w, c, &req, hr->keep_alive);
	else
		err = whole_response(w, c, &req, hr->keep_alive);
	if (err && err != -ECANCELED)
		cancel_request(w, &req);
	/* a stop shuts sockets down under streams: that is an abort too */
	if (err == -ECANCELED || (err && server_stopping(srv)))
		status = "aborted";
	else if (err)
		status = "client_gone";
	/* logged before [DONE]: a client that saw the end finds its row */
	log_request(srv, &req, status);
	if (!err && req.stream)
		err = stream_finish(&srv->opts, c);
	atomic_fetch_add(err ? &srv->n_failed : &srv->n_ok, 1);
	request_destroy(&req);
	return !err && hr->keep_alive;
}

/* one request: routes it; false when the connection must close */
static bool handle_request(struct worker *w, struct conn *c,
			   struct http_req *hr)
{
	struct server *srv = w->srv;

	if (!strcmp(hr->path, "/v1/completions")) {
		if (strcmp(hr->method, "POST")) {
			send_error(srv, c, 405, hr->keep_alive,
				   "use POST for /v1/completions");
			return hr->keep_alive;
		}
		return handle_completion(w, c, hr);
	}
	if (!strcmp(hr->path, "/health") && !strcmp(hr->method, "GET"))
		return !send_json(c, 200, hr->keep_alive,
				  "{\"status\":\"ok\"}\n") && hr->keep_alive;
	send_error(srv, c, 404, hr->keep_alive, "no such endpoint");
	return hr->keep_alive;
}

static void serve_connection(struct worker *w, int fd)
{
	struct conn c = { .fd = fd };
	struct http_req hr;
	int one = 1;

	/* token events are small writes; Nagle would hold them back */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.peer_port = socket_port(fd, true);
	c.sched_fd = w->sched_fd;
	while (read_request(w->srv, &c, &hr) > 0) {
		if (!handle_request(w, &c, &hr))
			break;
		conn_consume(&c, hr.total_len);
	}
	free(c.buf);
}

/* publishes the connection being served so a stop can shut it down */
static bool worker_set_conn(struct worker *w, int fd)
{
	struct server *srv = w->srv;
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	w->cur_fd = stopping ? -1 : fd;
	pthread_mutex_unlock(&srv->conn_lock);
	return !stopping;
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct server *srv = w->srv;
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "demo-fe-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	w->sched_fd = open_sched_stat();
	for (;;) {
		fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE) {
				if (errno == EMFILE || errno == ENFILE)
					sleep_until_ns(mono_ns() +
						       10 * NSEC_PER_MSEC);
				continue;
			}
			break;	/* the listening socket was shut down */
		}
		if (!worker_set_conn(w, fd)) {
			close(fd);
			break;
		}
		serve_connection(w, fd);
		worker_set_conn(w, -1);
		close(fd);
	}
	if (w->sched_fd >= 0)
		close(w->sched_fd);
	w->sched_fd = -1;
	return NULL;
}
