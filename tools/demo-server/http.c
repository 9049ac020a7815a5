/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server HTTP/1.1: connection buffers, request parsing, replies. */
#include "demo-server.h"

/* ------------------------------------------------------------------ HTTP */

int conn_reserve(struct conn *c, size_t need)
{
	char *nb;
	size_t cap = c->cap ? c->cap : 16384;

	if (need <= c->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	nb = realloc(c->buf, cap);
	if (!nb)
		return -ENOMEM;
	c->buf = nb;
	c->cap = cap;
	return 0;
}

/* one read(2) into the buffer: >0 bytes, 0 on EOF, -errno on error */
ssize_t conn_fill(struct conn *c)
{
	ssize_t n;

	if (c->len == c->cap && conn_reserve(c, c->cap + 1))
		return -ENOMEM;
	do {
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	c->len += (size_t)n;
	return n;
}

/*
 * conn_fill() of a request read, noting the front-end's runqueue wait: only
 * the wakeup after the last bytes delays the request; earlier reads of a
 * slow upload wait for the network anyway.
 */
static ssize_t conn_fill_timed(struct conn *c)
{
	uint64_t rd0 = run_delay(c->sched_fd);
	ssize_t n = conn_fill(c);

	if (n > 0) {
		c->rd_start = rd0;
		c->read_wake = run_delay(c->sched_fd) - rd0;
	}
	return n;
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

int send_json(struct conn *c, int code, bool keep_alive, const char *body)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     code, status_text(code), strlen(body),
		     keep_alive ? "keep-alive" : "close", body);
	if (n < 0 || n >= (int)sizeof(buf))
		return -EINVAL;
	return write_all(c->fd, buf, n);
}

int send_error(struct server *srv, struct conn *c, int code, bool keep_alive,
	       const char *msg)
{
	char body[512], esc[256];
	size_t i, n = 0;

	/* messages are ours, ASCII; only quotes need escaping */
	for (i = 0; msg[i] && n + 2 < sizeof(esc); i++) {
		if (msg[i] == '"' || msg[i] == '\\')
			esc[n++] = '\\';
		esc[n++] = msg[i];
	}
	esc[n] = '\0';
	atomic_fetch_add(&srv->n_http_errors, 1);
	snprintf(body, sizeof(body),
		 "{\"error\":{\"message\":\"%s\",\"code\":%d}}\n", esc, code);
	return send_json(c, code, keep_alive, body);
}

/* value of header `name` in the header block, copied; false when absent */
bool header_value(const char *hdrs, const char *end, const char *name,
		  char *out, size_t size)
{
	size_t nlen = strlen(name);
	const char *line = hdrs;

	while (line < end) {
		const char *eol = memmem(line, end - line, "\r\n", 2);
		const char *v;
		size_t vlen;

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > nlen && line[nlen] == ':' &&
		    !strncasecmp(line, name, nlen)) {
			v = line + nlen + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			vlen = eol - v;
			while (vlen && (v[vlen - 1] == ' ' ||
					v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= size)
				vlen = size - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return true;
		}
		line = eol + 2;
	}
	return false;
}

/*
 * Reads one request (headers, then Content-Length body bytes) from the
 * connection. Returns 1 with hr filled, 0 on a clean EOF between requests,
 * -1 when the connection must close (an error answer was sent if possible).
 */
int read_request(struct server *srv, struct conn *c, struct http_req *hr)
{
	const char *hend, *eol, *sp1, *sp2;
	char value[64], version[16];
	uint64_t content_length = 0;
	size_t hdr_len;
	ssize_t n;

	memset(hr, 0, sizeof(*hr));
	hr->t_read_done = mono_ns();
	c->rd_start = run_delay(c->sched_fd);
	c->read_wake = 0;
	/* pipelined bytes of this request were read with the previous one */
	if (c->len)
		hr->t_first_byte_read = hr->t_read_done;
	for (;;) {
		hend = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
		if (hend)
			break;
		if (c->len >= MAX_HEADER_BYTES) {
			send_error(srv, c, 431, false, "header too large");
			return -1;
		}
		n = conn_fill_timed(c);
		if (n <= 0)
			return n == 0 && c->len == 0 ? 0 : -1;
		hr->t_read_done = mono_ns();
		if (!hr->t_first_byte_read)
			hr->t_first_byte_read = hr->t_read_done;
	}
	hdr_len = hend - c->buf + 4;

	/* request line: METHOD SP TARGET SP HTTP/1.x */
	eol = memmem(c->buf, hdr_len, "\r\n", 2);
	sp1 = memchr(c->buf, ' ', eol - c->buf);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
	if (!sp1 || !sp2 || sp1 - c->buf >= (ptrdiff_t)sizeof(hr->method) ||
	    sp2 - sp1 - 1 >= (ptrdiff_t)sizeof(hr->path) ||
	    eol - sp2 - 1 >= (ptrdiff_t)sizeof(version) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7)) {
		send_error(srv, c, 400, false, "malformed request line");
		return -1;
	}
	memcpy(hr->method, c->buf, sp1 - c->buf);
	memcpy(hr->path, sp1 + 1, sp2 - sp1 - 1);
	memcpy(version, sp2 + 1, eol - sp2 - 1);
	version[eol - sp2 - 1] = '\0';
	hr->path[strcspn(hr->path, "?")] = '\0';

	hr->keep_alive = !strcmp(version, "HTTP/1.1");
	if (header_value(eol + 2, hend + 2, "Connection", value,
			 sizeof(value))) {
		if (strcasestr(value, "close"))
			hr->keep_alive = false;
		else if (strcasestr(value, "keep-alive"))
			hr->keep_alive = true;
	}
	if (header_value(eol + 2, hend + 2, "Transfer-Encoding", value,
			 sizeof(value))) {
		send_error(srv, c, 411, false,
			   "request bodies need Content-Length");
		return -1;
	}
	if (header_value(eol + 2, hend + 2, "Content-Length", value,
			 sizeof(value)) &&
	    !parse_u64_range(value, 0, UINT64_MAX, &content_length)) {
		send_error(srv, c, 400, false, "bad Content-Length");
		return -1;
	}
	if (content_length > srv->opts.max_body) {
		send_error(srv, c, 413, false, "body too large");
		return -1;
	}
	if (c->len < hdr_len + content_length &&
	    header_value(eol + 2, hend + 2, "Expect", value, sizeof(value)) &&
	    !strcasecmp(value, "100-continue")) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		if (write_all(c->fd, cont, sizeof(cont) - 1))
			return -1;
	}

	/* the body, read in a loop: large prompts span many reads */
	if (conn_reserve(c, hdr_len + content_length + 1)) {
		send_error(srv, c, 413, false, "out of memory for body");
		return -1;
	}
	while (c->len < hdr_len + content_length) {
		n = conn_fill_timed(c);
		if (n <= 0)
			return -1;
		hr->t_read_done = mono_ns();
	}
	hr->body = c->buf + hdr_len;
	hr->body_len = content_length;
	hr->total_len = hdr_len + content_length;
	return 1;
}

/* drops the request just handled, keeping pipelined bytes after it */
void conn_consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}
