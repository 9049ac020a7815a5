/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server --proxy: relays each request to another instance over TCP. */
#include "demo-server.h"

/* ------------------------------------------------------------- --proxy */

/* "HOST:PORT" or "[V6ADDR]:PORT" split in two; false when malformed */
bool proxy_split(const char *spec, char *host, size_t size, char *port,
		 size_t port_size)
{
	const char *colon = strrchr(spec, ':');
	uint64_t v;

	if (!colon || colon == spec || (size_t)(colon - spec) >= size ||
	    strlen(colon + 1) >= port_size ||
	    !parse_u64_range(colon + 1, 1, 65535, &v))
		return false;
	memcpy(host, spec, colon - spec);
	host[colon - spec] = '\0';
	strcpy(port, colon + 1);
	/* a bare IPv6 address has colons of its own: it needs brackets */
	return !strchr(host, ':') || host[0] == '[';
}

/* resolves --proxy once, at startup; 0 or -EINVAL (said why) */
int proxy_resolve(struct server *srv)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	}, *res = NULL;
	char host[256], port[16], hostbuf[256];
	int rc;

	proxy_split(srv->opts.proxy, host, sizeof(host), port, sizeof(port));
	rc = getaddrinfo(host_unbracket(host, hostbuf, sizeof(hostbuf)), port,
			 &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: cannot resolve --proxy %s: %s\n", prog,
			srv->opts.proxy, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(&srv->up_addr, res->ai_addr, res->ai_addrlen);
	srv->up_addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* a keep-alive link to the engine instance, this worker's own */
static int upstream_connect(struct worker *w)
{
	struct server *srv = w->srv;
	int fd, one = 1, err;
	bool stopping;

	fd = socket(srv->up_addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&srv->up_addr, srv->up_addrlen)) {
		err = -errno;
		close(fd);
		return err;
	}
	/* published so that a stop can shut it down under a blocked read */
	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	if (!stopping)
		w->up_fd = fd;
	pthread_mutex_unlock(&srv->conn_lock);
	if (stopping) {
		close(fd);
		return -ECANCELED;
	}
	w->up_port = socket_port(fd, false);
	w->up->fd = fd;
	w->up->len = 0;
	return 0;
}

static void upstream_close(struct worker *w)
{
	struct server *srv = w->srv;
	int fd;

	pthread_mutex_lock(&srv->conn_lock);
	fd = w->up_fd;
	w->up_fd = -1;
	pthread_mutex_unlock(&srv->conn_lock);
	if (fd >= 0)
		close(fd);
	w->up->fd = -1;
	w->up->len = 0;
}

/* forwards the client's body as a new request on the upstream link */
static int upstream_send(struct worker *w, const struct http_req *hr)
{
	size_t cap = hr->body_len + 256;
	char *buf = malloc(cap);
	int n, err;

	if (!buf)
		return -ENOMEM;
	n = snprintf(buf, cap,
		     "POST /v1/completions HTTP/1.1\r\n"
		     "Host: demo-engine\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n\r\n", hr->body_len);
	memcpy(buf + n, hr->body, hr->body_len);
	err = write_all(w->up_fd, buf, n + hr->body_len);
	free(buf);
	return err;
}

struct upstream_resp {
	int code;
	bool event_stream;
	bool close;
	uint64_t length;	/* Content-Length; event streams have none */
};

/* the upstream's status line and headers; 0 or -errno (-EPROTO: unusable) */
static int upstream_headers(struct worker *w, struct upstream_resp *r)
{
	struct conn *u = w->up;
	const char *hend, *eol;
	char value[64];
	ssize_t n;

	memset(r, 0, sizeof(*r));
	for (;;) {
		hend = u->len ? memmem(u->buf, u->len, "\r\n\r\n", 4) : NULL;
		if (hend)
			break;
		if (u->len >= MAX_HEADER_BYTES)
			return -EPROTO;
		n = conn_fill(u);
		if (n <= 0)
			return n ? (int)n : -ECONNRESET;
	}
	if (hend - u->buf < 12 || strncmp(u->buf, "HTTP/1.", 7))
		return -EPROTO;
	r->code = atoi(u->buf + 9);
	r->close = u->buf[7] == '0';
	eol = memmem(u->buf, hend + 2 - u->buf, "\r\n", 2);
	if (header_value(eol + 2, hend + 2, "Connection", value,
			 sizeof(value)))
		r->close = strcasestr(value, "close") != NULL;
	if (header_value(eol + 2, hend + 2, "Content-Type", value,
			 sizeof(value)))
		r->event_stream = !strncasecmp(value, "text/event-stream", 17);
	/* the engine instance must use plain SSE (--framing sse) */
	if (header_value(eol + 2, hend + 2, "Transfer-Encoding", value,
			 sizeof(value)))
		return -EPROTO;
	if (header_value(eol + 2, hend + 2, "Content-Length", value,
			 sizeof(value))) {
		if (!parse_u64_range(value, 0, DEFAULT_MAX_BODY, &r->length))
			return -EPROTO;
	} else if (!r->event_stream || r->code != 200) {
		return -EPROTO;
	}
	conn_consume(u, hend + 4 - u->buf);
	return 0;
}

/* the data of one SSE event (its "data:" line) into out; "" when none */
static int event_data(const char *ev, size_t len, char *out, size_t size)
{
	const char *line = ev, *end = ev + len, *eol;

	out[0] = '\0';
	for (; line < end; line = eol + 1) {
		size_t n;

		eol = memchr(line, '\n', end - line);
		if (!eol)
			eol = end;
		if (eol - line < 5 || memcmp(line, "data:", 5))
			continue;
		line += 5;
		if (line < eol && *line == ' ')
			line++;
		n = eol - line;
		if (n && line[n - 1] == '\r')
			n--;
		if (n >= size)
			return -1;
		memcpy(out, line, n);
		out[n] = '\0';
	}
	return 0;
}

/*
 * Relays the upstream's SSE events to the client as they come, each framed
 * as ours, up to its [DONE]. 0, or -errno; *up_failed: the upstream's fault.
 */
static int proxy_stream(struct worker *w, struct conn *c, struct request *req,
			bool keep_alive, bool *up_failed)
{
	const struct server_opts *o = &w->srv->opts;
	char buf[EVENT_BUF * 4 + 512], data[EVENT_BUF * 4];
	struct conn *u = w->up;
	const char *end;
	int hlen, n, err;
	ssize_t got;

	hlen = stream_start(o, c, buf, sizeof(buf), req->id, keep_alive);
	if (hlen < 0)
		return hlen;
	for (;;) {
		end = u->len ? memmem(u->buf, u->len, "\n\n", 2) : NULL;
		if (!end) {
			got = u->len > sizeof(data) ? -EPROTO : conn_fill(u);
			if (got <= 0) {
				*up_failed = true;
				return got ? (int)got : -ECONNRESET;
			}
			continue;
		}
		if (event_data(u->buf, end - u->buf, data, sizeof(data))) {
			*up_failed = true;
			return -EPROTO;
		}
		conn_consume(u, end + 2 - u->buf);
		if (!strcmp(data, "[DONE]"))
			return 0;
		if (!data[0])
			continue;	/* a comment, or a field not used */
		n = format_event(o, buf + hlen, sizeof(buf) - hlen, data);
		if (n < 0)
			return -EINVAL;
		err = write_token(w, c, req, buf, hlen, hlen + n);
		if (err)
			return err;
		hlen = 0;
	}
}

/* stream=false: the upstream's JSON body, relayed whole */
static int proxy_whole(struct worker *w, struct conn *c, struct request *req,
		       uint64_t length, bool keep_alive, bool *up_failed)
{
	struct conn *u = w->up;
	const char *p, *end;
	char head[256];
	ssize_t got;
	int n, err;

	if (conn_reserve(u, length + 1))
		return -ENOMEM;
	while (u->len < length) {
		got = conn_fill(u);
		if (got <= 0) {
			*up_failed = true;
			return got ? (int)got : -ECONNRESET;
		}
	}
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %llu\r\n"
		     "connection: %s\r\n\r\n",
		     (unsigned long long)length,
		     keep_alive ? "keep-alive" : "close");
	req->t_last_write = mono_ns();
	note_first_write(w, req);
	err = write_all(c->fd, head, n);
	if (!err)
		err = write_all(c->fd, u->buf, length);
	/* the engine's text is "tok0tok1...": one "tok" a token */
	for (p = u->buf, end = u->buf + length;
	     (p = memmem(p, end - p, "tok", 3)); p += 3)
		req->tokens_written++;
	conn_consume(u, length);
	return err;
}

/*
 * --proxy: forwards the request to the engine instance on this worker's
 * keep-alive link and relays its answer. Logs the row; false when the
 * client connection must close.
 */
bool proxy_completion(struct worker *w, struct conn *c, struct http_req *hr,
		      struct request *req)
{
	struct server *srv = w->srv;
	const char *status = "ok";
	struct upstream_resp r = { 0 };
	bool up_failed = false, keep = hr->keep_alive;
	char msg[96];
	int err = 0;

	if (w->up_fd < 0)
		err = upstream_connect(w);
	if (!err) {
		req->upstream_port = w->up_port;
		req->truth.t_enqueue = mono_ns();
		err = upstream_send(w, hr);
	}
	if (!err)
		err = upstream_headers(w, &r);
	if (!err && r.code != 200)
		err = -EPROTO;
	if (err) {
		/* nothing went to the client yet: it gets a 502 */
		upstream_close(w);
		status = server_stopping(srv) ? "aborted" : "upstream_error";
		if (r.code && r.code != 200)
			snprintf(msg, sizeof(msg), "engine answered %d",
				 r.code);
		else
			snprintf(msg, sizeof(msg), "engine unreachable: %s",
				 strerror(-err));
		if (send_error(srv, c, 502, keep, msg))
			keep = false;
		log_request(srv, req, status);
		atomic_fetch_add(&srv->n_failed, 1);
		return keep;
	}
	if (r.event_stream)
		err = proxy_stream(w, c, req, keep, &up_failed);
	else
		err = proxy_whole(w, c, req, r.length, keep, &up_failed);
	/* a link with an unread answer on it cannot carry the next one */
	if (err || r.close)
		upstream_close(w);
	if (err && server_stopping(srv))
		status = "aborted";
	else if (err)
		status = up_failed ? "upstream_error" : "client_gone";
	log_request(srv, req, status);
	if (!err && req->stream && r.event_stream)
		err = stream_finish(&srv->opts, c);
	atomic_fetch_add(err ? &srv->n_failed : &srv->n_ok, 1);
	return !err && keep;
}

/* POST /v1/completions; false when the connection must close */
