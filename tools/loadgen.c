/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * loadgen: closed-loop (or paced) load generator for OpenAI-style streaming
 * completion servers. Each connection is a thread with its own keep-alive
 * connection; every request's client-side TTFT and TPOT are measured on
 * CLOCK_MONOTONIC, the clock ttftrace and demo-server use, so rows can be
 * matched with theirs by the client's local port.
 */
#include <getopt.h>
#include <time.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <strings.h>
#include <sys/time.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <nghttp2/nghttp2.h>

#include "demo_common.h"

#ifndef SOF_TIMESTAMPING_OPT_RX_FILTER
#define SOF_TIMESTAMPING_OPT_RX_FILTER (1 << 17) /* Linux 6.9's value */
#endif

#define MAX_CONNECTIONS 4096
#define MAX_PROMPT_BYTES (64ULL * 1024 * 1024)
#define STATUS_LEN 24

struct lg_opts {
	const char *host;
	const char *csv_path;
	int port;
	int connections;
	uint64_t requests;	/* 0: bounded by duration only */
	uint64_t duration_ns;	/* 0: bounded by requests only */
	double rate;		/* requests/s overall; 0 = closed loop */
	uint64_t prompt_bytes;
	uint64_t tokens;	/* max_tokens sent; 0 = server default */
	uint64_t timeout_ns;
	bool new_conn;
	bool no_stream; /* "stream": false: one sized JSON answer */
	bool tls; /* HTTPS: TLS through memory BIOs, stamps kept */
	bool h2; /* HTTP/2: ALPN h2 with --tls, prior knowledge without */
	int streams; /* --h2: streams in flight on each connection */
	bool quiet;
};

struct result {
	uint64_t id;
	int conn;
	int local_port;
	uint64_t t_send, t_first, t_last;
	/* the kernel's transmit stamp of the request (its device handed it
	 * on), 0 when none came: a stall of this client between its clock
	 * and the send is then not in the stamped figures */
	uint64_t t_send_tx;
	/* the kernel's receive time of the data that completed those tokens */
	uint64_t t_first_rx, t_last_rx;
	bool first_rx_exact;	/* that read held no later token, no [DONE] */
	bool last_rx_exact;	/* that read held no [DONE] */
	uint64_t tokens;
	char status[STATUS_LEN];
};

/*
 * When a read returned: in user space, and the kernel's receive timestamp
 * of the newest data it returned (SO_TIMESTAMPNS), both CLOCK_MONOTONIC;
 * the second is not late by this client's own wakeup; 0 when absent.
 */
struct read_time {
	uint64_t user, kernel;
};

/* incremental HTTP response parser: plain SSE, chunked SSE, sized bodies */
enum resp_state {
	RS_HEADERS,
	RS_SSE,			/* un-framed body, ends at [DONE] */
	RS_CHUNK_SIZE,
	RS_CHUNK_DATA,
	RS_CHUNK_CRLF,
	RS_TRAILER,
	RS_SIZED,		/* Content-Length body, not streamed */
	RS_COMPLETE,
};

struct resp_parser {
	enum resp_state state;
	int code;
	bool close;		/* server will close after this response */
	bool event_stream;
	uint64_t remaining;	/* chunk or sized-body bytes left */
	char line[64];		/* start of the current SSE line */
	size_t line_len;
	bool event_has_data;
	bool event_is_done;
	bool saw_done;
	uint64_t tokens;
	uint64_t t_first, t_last;
	uint64_t t_first_rx, t_last_rx;
	const char *error;
};

struct loadgen;

/* --h2: a stream in flight (id 0: the slot is free), the parser of its
 * response, how much of its body went out, its row in client.results */
struct h2_slot {
	int32_t id;
	struct resp_parser *p;
	struct resp_parser own; /* p with --streams: the slot's own */
	size_t body_sent;
	size_t result;
	uint64_t seen; /* its tokens before the read being fed */
};

struct client {
	struct loadgen *lg;
	pthread_t thread;
	int index;
	int fd;
	int local_port;
	uint64_t quota;
	char *rbuf;
	size_t rlen, rcap;
	/* --tls: the session, its two memory BIOs, and the stamps of the
	 * raw read whose plaintext OpenSSL still holds */
	SSL *ssl;
	BIO *rbio, *wbio;
	struct read_time tls_time;
	/* --h2: the session, its streams in flight, the stamps of the read
	 * being fed, the frames to send, the session's own error */
	nghttp2_session *h2;
	struct h2_slot *slots;
	int nslots;
	struct read_time h2_time;
	const char *h2_error;
	bool h2_goaway;
	bool h2_heard; /* the server has sent something on the session */
	char *wbuf;
	size_t wlen, wcap;
	struct result *results;
	size_t nresults, cap;
	char conn_error[160];
};

struct loadgen {
	struct lg_opts opts;
	char *request;		/* identical bytes for every request */
	size_t request_len;
	size_t body_off;	/* where its body begins (--h2 sends only that) */
	uint64_t t_start, t_end_limit;
	atomic_uint_fast64_t next_id;
	struct client *clients;
	SSL_CTX *tls_ctx; /* --tls: one for every connection */
};

static const char *prog = "loadgen";

/* one line on stderr and exit status 2 */
#define usage_error(...) demo_usage_exit(prog, __VA_ARGS__)

/* ---------------------------------------------------------- the parser */

static void parser_reset(struct resp_parser *p)
{
	memset(p, 0, sizeof(*p));
	p->state = RS_HEADERS;
}

/* one line of SSE body; an empty line ends the event */
static void sse_line(struct resp_parser *p, const struct read_time *t)
{
	size_t len = p->line_len;

	if (len && p->line[len - 1] == '\r')
		len--;
	if (!len) {
		if (p->event_has_data && p->event_is_done) {
			p->saw_done = true;
		} else if (p->event_has_data) {
			if (!p->tokens) {
				p->t_first = t->user;
				p->t_first_rx = t->kernel;
			}
			p->t_last = t->user;
			p->t_last_rx = t->kernel;
			p->tokens++;
		}
		p->event_has_data = p->event_is_done = false;
		return;
	}
	if (len >= 5 && !memcmp(p->line, "data:", 5)) {
		const char *v = p->line + 5;
		size_t vlen = len - 5;

		if (vlen && *v == ' ')
			v++, vlen--;
		p->event_has_data = true;
		p->event_is_done = vlen == 6 && !memcmp(v, "[DONE]", 6);
	}
}

/*
 * SSE body bytes; only the first bytes of each line are kept. Returns how
 * many were used: un-framed SSE ends with the [DONE] event.
 */
static size_t sse_bytes(struct resp_parser *p, const char *s, size_t n,
			const struct read_time *t)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\n') {
			sse_line(p, t);
			p->line_len = 0;
			if (p->saw_done && p->state == RS_SSE) {
				p->state = RS_COMPLETE;
				return i + 1;
			}
			continue;
		}
		if (p->line_len < sizeof(p->line))
			p->line[p->line_len] = s[i];
		p->line_len++;
		if (p->line_len > sizeof(p->line))
			p->line_len = sizeof(p->line);
	}
	return n;
}

static bool header_is(const char *line, size_t len, const char *name,
		      const char **value)
{
	size_t nlen = strlen(name);

	if (len <= nlen || line[nlen] != ':' || strncasecmp(line, name, nlen))
		return false;
	*value = line + nlen + 1;
	while (**value == ' ' || **value == '\t')
		(*value)++;
	return true;
}

/* parses the status line and headers in buf[0..hlen) */
static int parse_headers(struct resp_parser *p, const char *buf, size_t hlen)
{
	const char *line = buf, *end = buf + hlen, *v;
	bool chunked = false, has_length = false;
	uint64_t length = 0;
	char num[24];

	if (hlen < 12 || strncmp(buf, "HTTP/1.", 7) || buf[8] != ' ') {
		p->error = "bad_response";
		return -1;
	}
	p->code = atoi(buf + 9);
	p->close = buf[7] == '0';
	for (;;) {
		const char *eol = memmem(line, end - line, "\r\n", 2);
		size_t len;

		if (!eol || eol == line)
			break;
		len = eol - line;
		if (header_is(line, len, "Transfer-Encoding", &v)) {
			chunked = !strncasecmp(v, "chunked", 7);
		} else if (header_is(line, len, "Content-Length", &v)) {
			size_t vlen = eol - v;

			if (vlen >= sizeof(num))
				vlen = sizeof(num) - 1;
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			if (!parse_u64_range(num, 0, UINT64_MAX, &length)) {
				p->error = "bad_response";
				return -1;
			}
			has_length = true;
		} else if (header_is(line, len, "Connection", &v)) {
			if (!strncasecmp(v, "close", 5))
				p->close = true;
			else if (!strncasecmp(v, "keep-alive", 10))
				p->close = false;
		} else if (header_is(line, len, "Content-Type", &v)) {
			p->event_stream =
				!strncasecmp(v, "text/event-stream", 17);
		}
		line = eol + 2;
	}
	if (p->code >= 100 && p->code < 200) {
		p->state = RS_HEADERS;	/* interim: the real headers follow */
		return 0;
	}
	if (chunked) {
		p->state = RS_CHUNK_SIZE;
	} else if (has_length) {
		p->remaining = length;
		p->state = length ? RS_SIZED : RS_COMPLETE;
	} else if (p->code == 200 && p->event_stream) {
		p->state = RS_SSE;
	} else {
		/* no framing: the body runs to the close; not waited for */
		p->close = true;
		p->state = RS_COMPLETE;
	}
	return 0;
}

/*
 * Feeds received bytes to the parser; returns how many it consumed (bytes
 * after the end of the response stay for the next one), -1 on bad input.
 */
static ssize_t parser_feed(struct resp_parser *p, const char *buf, size_t n,
			   const struct read_time *t)
{
	size_t used = 0, take;
	const char *eol;
	char hex[20];
	char *end;

	while (used < n && p->state != RS_COMPLETE) {
		const char *s = buf + used;
		size_t avail = n - used;

		switch (p->state) {
		case RS_HEADERS:
			eol = memmem(s, avail, "\r\n\r\n", 4);
			if (!eol)
				return used;
			if (parse_headers(p, s, eol - s + 4))
				return -1;
			used += eol - s + 4;
			break;
		case RS_SSE:
			used += sse_bytes(p, s, avail, t);
			break;
		case RS_CHUNK_SIZE:
			eol = memmem(s, avail, "\r\n", 2);
			if (!eol)
				return avail > 64 ? -1 : (ssize_t)used;
			if (eol - s >= (ptrdiff_t)sizeof(hex) || eol == s) {
				p->error = "bad_chunk";
				return -1;
			}
			memcpy(hex, s, eol - s);
			hex[eol - s] = '\0';
			p->remaining = strtoull(hex, &end, 16);
			if (end == hex || (*end && *end != ';')) {
				p->error = "bad_chunk";
				return -1;
			}
			used += eol - s + 2;
			p->state = p->remaining ? RS_CHUNK_DATA : RS_TRAILER;
			break;
		case RS_CHUNK_DATA:
			take = avail < p->remaining ? avail : p->remaining;
			if (p->code == 200 && p->event_stream)
				sse_bytes(p, s, take, t);
			p->remaining -= take;
			used += take;
			if (!p->remaining)
				p->state = RS_CHUNK_CRLF;
			break;
		case RS_CHUNK_CRLF:
			if (avail < 2)
				return used;
			if (s[0] != '\r' || s[1] != '\n') {
				p->error = "bad_chunk";
				return -1;
			}
			used += 2;
			p->state = RS_CHUNK_SIZE;
			break;
		case RS_TRAILER:
			/* trailer lines until an empty one */
			eol = memmem(s, avail, "\r\n", 2);
			if (!eol)
				return used;
			used += eol - s + 2;
			if (eol == s)
				p->state = RS_COMPLETE;
			break;
		case RS_SIZED:
			take = avail < p->remaining ? avail : p->remaining;
			p->remaining -= take;
			used += take;
			if (!p->remaining)
				p->state = RS_COMPLETE;
			break;
		case RS_COMPLETE:
			break;
		}
	}
	return used;
}

/* ------------------------------------------------------------ requests */

static int build_request(struct loadgen *lg)
{
	static const char words[] = "lorem ipsum dolor sit amet consectetur ";
	const struct lg_opts *o = &lg->opts;
	size_t body_len, cap, i, n;
	char tokens[48] = "";
	char *req;

	if (o->tokens)
		snprintf(tokens, sizeof(tokens), ", \"max_tokens\": %llu",
			 (unsigned long long)o->tokens);
	body_len = strlen("{\"prompt\": \"") + o->prompt_bytes +
		   strlen("\"") + strlen(tokens) +
		   strlen(o->no_stream ? ", \"stream\": false}" :
					 ", \"stream\": true}");
	cap = body_len + 512;
	req = malloc(cap);
	if (!req)
		return -ENOMEM;
	n = snprintf(req, cap,
		     "POST /v1/completions HTTP/1.1\r\n"
		     "Host: %s:%d\r\n"
		     "User-Agent: ttftrace-loadgen\r\n"
		     "Accept: text/event-stream\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n"
		     "%s\r\n"
		     "{\"prompt\": \"",
		     o->host, o->port, body_len,
		     o->new_conn ? "Connection: close\r\n" : "");
	lg->body_off = n - strlen("{\"prompt\": \"");
	for (i = 0; i < o->prompt_bytes; i++)
		req[n++] = words[i % (sizeof(words) - 1)];
	n += snprintf(req + n, cap - n, "\"%s, \"stream\": %s}", tokens,
		      o->no_stream ? "false" : "true");
	lg->request = req;
	lg->request_len = n;
	return 0;
}

static int client_connect(struct client *c)
{
	const struct lg_opts *o = &c->lg->opts;
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	}, *res = NULL, *ai;
	struct timeval tv = {
		.tv_sec = o->timeout_ns / NSEC_PER_SEC,
		.tv_usec = o->timeout_ns % NSEC_PER_SEC / 1000,
	};
	char portstr[16], hostbuf[128];
	const char *host;
	/* the kernel's software stamp of each send, to the error queue,
	 * without the data; receive stamps stay SO_TIMESTAMPNS's */
	int tx_stamps = SOF_TIMESTAMPING_TX_SOFTWARE |
			SOF_TIMESTAMPING_SOFTWARE |
			SOF_TIMESTAMPING_OPT_TSONLY |
			SOF_TIMESTAMPING_OPT_RX_FILTER;
	int fd = -1, one = 1, rc, err = 0;

	snprintf(portstr, sizeof(portstr), "%d", o->port);
	host = host_unbracket(o->host, hostbuf, sizeof(hostbuf));
	rc = getaddrinfo(host, portstr, &hints, &res);
	if (rc) {
		snprintf(c->conn_error, sizeof(c->conn_error),
			 "cannot resolve %s: %s", o->host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		/* SO_SNDTIMEO bounds connect() too */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* kernel receive stamps: a late wakeup here is not the server's */
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
		/* before 6.9 without the filter: read_stamped skips the
		 * receive stamps it then adds */
		if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &tx_stamps,
			       sizeof(tx_stamps))) {
			int older = tx_stamps & ~SOF_TIMESTAMPING_OPT_RX_FILTER;

			setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &older,
				   sizeof(older));
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(c->conn_error, sizeof(c->conn_error),
			 "cannot connect to %s port %d: %s", o->host, o->port,
			 strerror(err));
		return -1;
	}
	c->fd = fd;
	c->local_port = socket_port(fd, false);
	c->rlen = 0;
	return 0;
}

static void client_disconnect(struct client *c)
{
	nghttp2_session_del(c->h2);
	c->h2 = NULL;
	c->h2_goaway = c->h2_heard = false;
	c->h2_error = NULL;
	for (int i = 0; i < c->nslots; i++)
		c->slots[i].id = 0;
	SSL_free(c->ssl); /* and its BIOs */
	c->ssl = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->rlen = 0;
}

static struct result *client_new_result(struct client *c)
{
	struct result *r;

	if (c->nresults == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct result *nr = realloc(c->results, cap * sizeof(*nr));

		if (!nr)
			return NULL;
		c->results = nr;
		c->cap = cap;
	}
	r = &c->results[c->nresults++];
	memset(r, 0, sizeof(*r));
	r->conn = c->index;
	return r;
}

static const char *recv_error_word(ssize_t n, int err)
{
	if (!n)
		return "eof";
	if (err == EAGAIN || err == EWOULDBLOCK)
		return "timeout";
	if (err == ECONNRESET)
		return "reset";
	return "recv";
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC at this thread's last conversion of a
 * stamp, and when: a step of the first since then is seen by its change */
static __thread int64_t conv_off;
static __thread uint64_t conv_mono;

/* More than this, plus NTP's largest slew (500 ppm) over the time between,
 * is a step of CLOCK_REALTIME: a VM's time sync, settimeofday. */
#define STEP_NS 50000

/* t when it lies in [lo, hi], else 0 */
static uint64_t in_window(uint64_t t, uint64_t lo, uint64_t hi)
{
	return t >= lo && t <= hi ? t : 0;
}

/*
 * A kernel stamp (CLOCK_REALTIME) on CLOCK_MONOTONIC; 0 for none. The two
 * clocks are read back to back: a preemption between them would move the
 * stamp by its length, so they are read again (the midpoint). After a step
 * of CLOCK_REALTIME since this thread's last conversion the stamp may be
 * from before the step or after it: it is the one of the two readings that
 * lies at or after lo (a time it cannot precede, 0 for this thread's last
 * conversion), and left out when both or neither do.
 */
static uint64_t stamp_to_mono(const struct timespec *stamp, uint64_t lo)
{
	uint64_t st_ns, real_ns, mono = 0, after = 0, since, m_new, m_old;
	int64_t off, prev_off = conv_off;
	struct timespec real;

	st_ns = (uint64_t)stamp->tv_sec * NSEC_PER_SEC + stamp->tv_nsec;
	if (!st_ns)
		return 0;
	for (int i = 0; i < 4; i++) {
		mono = mono_ns();
		clock_gettime(CLOCK_REALTIME, &real);
		after = mono_ns();
		if (after - mono < 5000)
			break;
	}
	mono += (after - mono) / 2;
	real_ns = (uint64_t)real.tv_sec * NSEC_PER_SEC + real.tv_nsec;
	off = (int64_t)(real_ns - mono);
	since = mono - conv_mono;
	if (!lo)
		lo = conv_mono;
	conv_off = off;
	conv_mono = mono;
	/* a stamp from the future would be a clock step: leave it out */
	m_new = st_ns <= real_ns && real_ns - st_ns < mono ?
			mono - (real_ns - st_ns) :
			0;
	if (!prev_off ||
	    llabs(off - prev_off) <= STEP_NS + (int64_t)(since / 2000))
		return m_new;
	m_old = (int64_t)st_ns > prev_off ? st_ns - prev_off : 0;
	m_new = in_window(m_new, lo, mono);
	m_old = in_window(m_old, lo, mono);
	return m_new && m_old ? 0 : m_new | m_old;
}

/*
 * read() that also returns the kernel's receive timestamp of the newest
 * data read, moved from CLOCK_REALTIME to CLOCK_MONOTONIC.
 */
static ssize_t read_stamped(int fd, char *buf, size_t len, struct read_time *t)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec)) +
			 CMSG_SPACE(sizeof(struct scm_timestamping))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = control.buf,
		.msg_controllen = sizeof(control.buf),
	};
	struct timespec rx = { 0 };
	struct cmsghdr *cm;
	ssize_t n;

	do {
		n = recvmsg(fd, &msg, 0);
	} while (n < 0 && errno == EINTR);
	t->user = mono_ns();
	for (cm = CMSG_FIRSTHDR(&msg); n > 0 && cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_TIMESTAMPNS)
			memcpy(&rx, CMSG_DATA(cm), sizeof(rx));
	t->kernel = stamp_to_mono(&rx, 0);
	return n;
}

/*
 * The kernel's transmit stamp of what was just written (on loopback where
 * the device handed it to the server's side), CLOCK_MONOTONIC: the
 * earliest one queued, 0 when none came; none is before lo. Drains the
 * error queue.
 */
static uint64_t take_tx_stamp(int fd, uint64_t lo)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct scm_timestamping)) +
			 CMSG_SPACE(sizeof(struct sock_extended_err) +
				    sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} control;
	struct msghdr msg;
	struct cmsghdr *cm;
	uint64_t best = 0, t;

	for (int i = 0; i < 16; i++) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = control.buf;
		msg.msg_controllen = sizeof(control.buf);
		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
			struct scm_timestamping ts;

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_TIMESTAMPING)
				continue;
			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			t = stamp_to_mono(&ts.ts[0], lo);
			if (t && (!best || t < best))
				best = t;
		}
	}
	return best;
}

/* ----------------------------------------------------------------- TLS */

/*
 * --tls runs OpenSSL on two memory BIOs, never on the socket: each raw
 * read is still read_stamped()'s recvmsg with its kernel receive stamp,
 * each send this thread's write() with its transmit stamp.
 */

/* sends what OpenSSL wrote to its memory BIO; 0 or -errno */
static int tls_flush(struct client *c)
{
	char buf[16384];
	int n, err;

	while ((n = BIO_read(c->wbio, buf, sizeof(buf))) > 0) {
		err = write_all(c->fd, buf, n);
		if (err)
			return err;
	}
	return 0;
}

/* one raw read into OpenSSL's input; its stamps kept; <= 0 as recvmsg */
static ssize_t tls_read_raw(struct client *c)
{
	char buf[16384];
	ssize_t n;

	n = read_stamped(c->fd, buf, sizeof(buf), &c->tls_time);
	if (n > 0 && BIO_write(c->rbio, buf, n) != n) {
		errno = ENOMEM;
		return -1;
	}
	return n;
}

/* the last OpenSSL error as a word, for a connection's error line */
static const char *tls_error_text(void)
{
	unsigned long e = ERR_get_error();

	return e ? ERR_reason_error_string(e) ?: "unknown" : "unexpected EOF";
}

/* a TLS session on the connected c->fd; 0, or -1 with c->conn_error */
static int tls_start(struct client *c)
{
	char hostbuf[128];
	int rc, err = 0;

	c->ssl = SSL_new(c->lg->tls_ctx);
	c->rbio = BIO_new(BIO_s_mem());
	c->wbio = BIO_new(BIO_s_mem());
	if (!c->ssl || !c->rbio || !c->wbio) {
		BIO_free(c->rbio);
		BIO_free(c->wbio);
		snprintf(c->conn_error, sizeof(c->conn_error),
			 "out of memory for TLS");
		goto cleanup;
	}
	SSL_set_bio(c->ssl, c->rbio, c->wbio);
	SSL_set_connect_state(c->ssl);
	SSL_set_tlsext_host_name(c->ssl,
				 host_unbracket(c->lg->opts.host, hostbuf,
						sizeof(hostbuf)));
	for (;;) {
		rc = SSL_do_handshake(c->ssl);
		err = tls_flush(c);
		if (rc == 1 || err)
			break;
		if (SSL_get_error(c->ssl, rc) != SSL_ERROR_WANT_READ ||
		    tls_read_raw(c) <= 0) {
			err = -EPROTO;
			break;
		}
	}
	if (!err)
		return 0;
	snprintf(c->conn_error, sizeof(c->conn_error),
		 "TLS handshake with %s port %d failed: %s", c->lg->opts.host,
		 c->lg->opts.port,
		 err == -EPROTO ? tls_error_text() : strerror(-err));
cleanup:
	SSL_free(c->ssl);
	c->ssl = NULL;
	return -1;
}

/*
 * read_stamped() through TLS: the plaintext of the records the next raw
 * reads completed, with that read's stamps. When a read also brought part
 * of a later record, its kernel stamp may be that part's, so it is left
 * out, as it is for a plaintext read that brought a later token.
 */
static ssize_t tls_read(struct client *c, char *buf, size_t len,
			struct read_time *t)
{
	size_t got = 0;
	ssize_t raw;
	int n = 0;

	for (;;) {
		while (got < len &&
		       (n = SSL_read(c->ssl, buf + got, len - got)) > 0)
			got += n;
		if (got) {
			*t = c->tls_time;
			if (BIO_ctrl_pending(c->rbio) || SSL_pending(c->ssl))
				t->kernel = 0;
			return got;
		}
		switch (SSL_get_error(c->ssl, n)) {
		case SSL_ERROR_WANT_READ:
			break;
		case SSL_ERROR_ZERO_RETURN: /* the server's close_notify */
			return 0;
		default:
			errno = EPROTO;
			return -1;
		}
		raw = tls_read_raw(c);
		if (raw <= 0)
			return raw;
	}
}

static ssize_t conn_read(struct client *c, char *buf, size_t len,
			 struct read_time *t)
{
	return c->ssl ? tls_read(c, buf, len, t) :
			read_stamped(c->fd, buf, len, t);
}

static int conn_write(struct client *c, const char *buf, size_t len)
{
	if (!c->ssl)
		return write_all(c->fd, buf, len);
	/* a memory BIO takes it all: one call, then the records go out */
	if (SSL_write(c->ssl, buf, len) != (int)len)
		return -EPROTO;
	return tls_flush(c);
}

/* A request whose body fills more than a few segments goes out as clients
 * send long uploads (curl, Python's http.client): its headers in a write
 * of their own, then its body. The transmit stamp, taken at each write's
 * last byte, is then its first bytes', where a server's time begins. */
#define LONG_BODY 16384

static int request_write(struct client *c)
{
	const struct loadgen *lg = c->lg;
	size_t head = lg->body_off;
	int err;

	if (lg->request_len - head <= LONG_BODY)
		return conn_write(c, lg->request, lg->request_len);
	err = conn_write(c, lg->request, head);
	if (err)
		return err;
	return conn_write(c, lg->request + head, lg->request_len - head);
}

/* -------------------------------------------------------------- HTTP/2 */

/*
 * --h2 runs nghttp2 on memory as well: each turn's frames go out in one
 * conn_write(), and each read's bytes are fed to it with that read's
 * stamps, so a token's stamps are those of the read that brought its DATA
 * frame, as over HTTP/1.1. One stream at a time per connection, as the
 * HTTP/1.1 client has one request in flight on each.
 */

/* sends every frame nghttp2 has ready in one write; 0 or -errno */
static int h2_send(struct client *c)
{
	const uint8_t *data;
	ssize_t n;

	c->wlen = 0;
	while ((n = nghttp2_session_mem_send(c->h2, &data)) > 0) {
		if (c->wlen + n > c->wcap) {
			size_t cap = (c->wlen + n) * 2;
			char *nb = realloc(c->wbuf, cap);

			if (!nb)
				return -ENOMEM;
			c->wbuf = nb;
			c->wcap = cap;
		}
		memcpy(c->wbuf + c->wlen, data, n);
		c->wlen += n;
	}
	if (n < 0)
		return -EPROTO;
	return c->wlen ? conn_write(c, c->wbuf, c->wlen) : 0;
}

/* the request's body, from the bytes built for HTTP/1.1 */
static ssize_t h2_body(nghttp2_session *s, int32_t stream, uint8_t *buf,
		       size_t len, uint32_t *flags, nghttp2_data_source *src,
		       void *user)
{
	struct client *c = user;
	struct h2_slot *slot = src->ptr;
	const struct loadgen *lg = c->lg;
	size_t left = lg->request_len - lg->body_off - slot->body_sent;

	if (len > left)
		len = left;
	memcpy(buf, lg->request + lg->body_off + slot->body_sent, len);
	slot->body_sent += len;
	if (len == left)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return len;
}

/* The parser of stream id's response; NULL for none of ours */
static struct resp_parser *h2_parser(const struct client *c, int32_t id)
{
	int i;

	for (i = 0; id && i < c->nslots; i++)
		if (c->slots[i].id == id)
			return c->slots[i].p;
	return NULL;
}

static bool h2_name_is(const uint8_t *name, size_t len, const char *want)
{
	return len == strlen(want) &&
	       !strncasecmp((const char *)name, want, len);
}

static int h2_on_header(nghttp2_session *s, const nghttp2_frame *f,
			const uint8_t *name, size_t namelen,
			const uint8_t *value, size_t valuelen, uint8_t flags,
			void *user)
{
	struct resp_parser *p = h2_parser(user, f->hd.stream_id);
	char num[8];

	if (!p)
		return 0;
	if (h2_name_is(name, namelen, ":status") && valuelen < sizeof(num)) {
		memcpy(num, value, valuelen);
		num[valuelen] = '\0';
		p->code = atoi(num); /* a 1xx's is replaced by the answer's */
	} else if (h2_name_is(name, namelen, "content-type")) {
		p->event_stream = valuelen >= 17 &&
				  !strncasecmp((const char *)value,
					       "text/event-stream", 17);
	}
	return 0;
}

static int h2_on_data(nghttp2_session *s, uint8_t flags, int32_t stream,
		      const uint8_t *data, size_t len, void *user)
{
	struct client *c = user;
	struct resp_parser *p = h2_parser(c, stream);

	if (p && p->code == 200 && p->event_stream)
		sse_bytes(p, (const char *)data, len, &c->h2_time);
	return 0;
}

static int h2_on_frame(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct client *c = user;
	struct resp_parser *p = h2_parser(c, f->hd.stream_id);
	int i;

	if (f->hd.type == NGHTTP2_GOAWAY) {
		c->h2_goaway = true;
		/* the streams after the last it will answer */
		for (i = 0; i < c->nslots; i++)
			if (c->slots[i].id > f->goaway.last_stream_id)
				c->slots[i].p->error = "goaway";
	}
	if (p &&
	    (f->hd.type == NGHTTP2_DATA || f->hd.type == NGHTTP2_HEADERS) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM) && p->code >= 200)
		p->state = RS_COMPLETE;
	return 0;
}

static int h2_on_close(nghttp2_session *s, int32_t stream, uint32_t error,
		       void *user)
{
	struct resp_parser *p = h2_parser(user, stream);

	if (p && p->state != RS_COMPLETE)
		p->error = error ? "h2_reset" : "h2_closed";
	return 0;
}

/* an HTTP/2 session on the connection; 0, or -1 with c->conn_error */
static int h2_start(struct client *c)
{
	const struct lg_opts *o = &c->lg->opts;
	nghttp2_session_callbacks *cb;
	const unsigned char *alpn = NULL;
	unsigned int alpn_len = 0;
	int rc;

	if (c->ssl) {
		SSL_get0_alpn_selected(c->ssl, &alpn, &alpn_len);
		if (alpn_len != 2 || memcmp(alpn, "h2", 2)) {
			snprintf(c->conn_error, sizeof(c->conn_error),
				 "%s port %d did not choose HTTP/2 (ALPN h2)",
				 o->host, o->port);
			return -1;
		}
	}
	rc = nghttp2_session_callbacks_new(&cb);
	if (!rc) {
		nghttp2_session_callbacks_set_on_header_callback(cb,
								 h2_on_header);
		nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
			cb, h2_on_data);
		nghttp2_session_callbacks_set_on_frame_recv_callback(
			cb, h2_on_frame);
		nghttp2_session_callbacks_set_on_stream_close_callback(
			cb, h2_on_close);
		rc = nghttp2_session_client_new(&c->h2, cb, c);
		nghttp2_session_callbacks_del(cb);
	}
	/* the preface and SETTINGS go out with the first request */
	if (!rc)
		rc = nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, NULL, 0);
	if (!rc)
		return 0;
	snprintf(c->conn_error, sizeof(c->conn_error),
		 "HTTP/2 session with %s port %d failed: %s", o->host, o->port,
		 nghttp2_strerror(rc));
	return -1;
}

/* the request on a new stream of slot, sent; 0 or -errno */
static int h2_request(struct client *c, struct h2_slot *slot)
{
	const struct loadgen *lg = c->lg;
	char authority[160], length[24];
	nghttp2_data_provider body = { .source.ptr = slot,
				       .read_callback = h2_body };
	nghttp2_nv nv[] = {
#define NV(n, v)                                                \
	{ (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), \
	  NGHTTP2_NV_FLAG_NONE }
		NV(":method", "POST"),
		NV(":scheme", c->ssl ? "https" : "http"),
		NV(":authority", ""), /* [2], [7]: filled in below */
		NV(":path", "/v1/completions"),
		NV("user-agent", "ttftrace-loadgen"),
		NV("accept", "text/event-stream"),
		NV("content-type", "application/json"),
		NV("content-length", ""),
#undef NV
	};

	snprintf(authority, sizeof(authority), "%s:%d", lg->opts.host,
		 lg->opts.port);
	snprintf(length, sizeof(length), "%zu", lg->request_len - lg->body_off);
	nv[2].value = (uint8_t *)authority;
	nv[2].valuelen = strlen(authority);
	nv[7].value = (uint8_t *)length;
	nv[7].valuelen = strlen(length);
	slot->body_sent = 0;
	slot->id = nghttp2_submit_request(
		c->h2, NULL, nv, sizeof(nv) / sizeof(nv[0]), &body, NULL);
	if (slot->id < 0) {
		slot->id = 0;
		return -EPROTO;
	}
	return h2_send(c);
}

/* a read's bytes to nghttp2, with its stamps, then what it answers; 0, or
 * -1 with c->h2_error (the session's end: every stream's) */
static int h2_feed(struct client *c, const char *buf, size_t n,
		   const struct read_time *t)
{
	/* an HTTP/1 server's answer to the preface: say so, not "eof" */
	if (!c->h2_heard && n >= 5 && !memcmp(buf, "HTTP/", 5)) {
		c->h2_error = "not_h2";
		return -1;
	}
	c->h2_heard = true;
	c->h2_time = *t;
	if (nghttp2_session_mem_recv(c->h2, (const uint8_t *)buf, n) < 0)
		c->h2_error = "h2_protocol";
	else if (h2_send(c))
		c->h2_error = "send";
	return c->h2_error ? -1 : 0;
}

/* the response's bytes to its parser: HTTP/1.1's, or the session's */
static ssize_t resp_feed(struct client *c, struct resp_parser *p,
			 const char *buf, size_t n, const struct read_time *t)
{
	if (!c->h2)
		return parser_feed(p, buf, n, t);
	if (h2_feed(c, buf, n, t) && !p->error)
		p->error = c->h2_error;
	return p->error ? -1 : (ssize_t)n;
}

static void result_take_times(struct result *r, const struct resp_parser *p)
{
	r->tokens = p->tokens;
	r->t_first = p->t_first;
	r->t_last = p->t_last;
	r->t_first_rx = p->t_first_rx;
	r->t_last_rx = p->t_last_rx;
}

static bool client_should_stop(struct client *c, uint64_t sent)
{
	const struct lg_opts *o = &c->lg->opts;

	if (o->requests && sent >= c->quota)
		return true;
	return o->duration_ns && mono_ns() >= c->lg->t_end_limit;
}

/* r's request is about to go out on c */
static void result_begin(struct client *c, struct result *r)
{
	r->local_port = c->local_port;
	r->id = atomic_fetch_add(&c->lg->next_id, 1);
	take_tx_stamp(c->fd, 0); /* none of an earlier request's */
	r->t_send = mono_ns();
}

/* r's request went out: the kernel's transmit stamp of it */
static void result_sent(struct client *c, struct result *r)
{
	r->t_send_tx = take_tx_stamp(c->fd, r->t_send);
	/* a stamp is never before the clock read ahead of the send */
	if (r->t_send_tx < r->t_send)
		r->t_send_tx = 0;
}

/*
 * A read with stamp t brought r's tokens from before to p->tokens. The
 * stamp is that of the newest data read: it is the first token's only
 * when no later token nor the end of the stream came in the same read
 * (nor, alone false, another stream's token), the last token's only when
 * the end of the stream did not.
 */
static void result_rx(struct result *r, const struct resp_parser *p,
		      uint64_t before, const struct read_time *t, bool alone)
{
	if (!before && p->tokens)
		r->first_rx_exact = p->tokens == 1 && !p->saw_done &&
				    t->kernel && alone;
	if (p->tokens > before)
		r->last_rx_exact = !p->saw_done && t->kernel && alone;
}

/* r's response ended as p says: its times and its status word */
static void result_end(struct client *c, struct result *r,
		       const struct resp_parser *p)
{
	result_take_times(r, p);
	if (p->error)
		snprintf(r->status, sizeof(r->status), "%s", p->error);
	else if (p->code != 200)
		snprintf(r->status, sizeof(r->status), "http_%d", p->code);
	else if (c->lg->opts.no_stream)
		/* the whole answer came: that is all a sized one has */
		snprintf(r->status, sizeof(r->status), "%s",
			 p->event_stream ? "not_sized" : "ok");
	else if (!p->event_stream)
		snprintf(r->status, sizeof(r->status), "not_sse");
	else if (!p->tokens)
		snprintf(r->status, sizeof(r->status), "no_tokens");
	else if (!p->saw_done)
		snprintf(r->status, sizeof(r->status), "no_done");
	else
		snprintf(r->status, sizeof(r->status), "ok");
}

/* room in c->rbuf for a read; NULL, or the status word why not */
static const char *rbuf_room(struct client *c)
{
	size_t cap = c->rcap ? c->rcap * 2 : 65536;
	char *nb;

	if (c->rlen < c->rcap)
		return NULL;
	if (cap > (1 << 24))
		return "bad_response";
	nb = realloc(c->rbuf, cap);
	if (!nb)
		return "nomem";
	c->rbuf = nb;
	c->rcap = cap;
	return NULL;
}

/* sends one request and reads its response; false: drop the connection */
static bool client_request(struct client *c, struct result *r)
{
	struct resp_parser p;
	struct read_time t;
	const char *why;
	ssize_t n, used;
	uint64_t tokens_before;
	int err;

	parser_reset(&p);
	result_begin(c, r);
	if (c->h2)
		c->slots[0].p = &p;
	err = c->h2 ? h2_request(c, &c->slots[0]) : request_write(c);
	if (err) {
		snprintf(r->status, sizeof(r->status), "send");
		return false;
	}
	result_sent(c, r);
	for (;;) {
		if (c->rlen) {
			/* bytes read before the request was sent: no stamp */
			t.user = mono_ns();
			t.kernel = 0;
			used = resp_feed(c, &p, c->rbuf, c->rlen, &t);
			if (used < 0)
				break;
			memmove(c->rbuf, c->rbuf + used, c->rlen - used);
			c->rlen -= used;
			if (p.state == RS_COMPLETE)
				break;
		}
		why = rbuf_room(c);
		if (why) {
			snprintf(r->status, sizeof(r->status), "%s", why);
			return false;
		}
		n = conn_read(c, c->rbuf + c->rlen, c->rcap - c->rlen, &t);
		if (n <= 0) {
			snprintf(r->status, sizeof(r->status), "%s",
				 recv_error_word(n, errno));
			result_take_times(r, &p);
			return false;
		}
		c->rlen += n;
		tokens_before = p.tokens;
		/* timestamps are those of the read that completed an event */
		used = resp_feed(c, &p, c->rbuf, c->rlen, &t);
		if (used < 0)
			break;
		result_rx(r, &p, tokens_before, &t, true);
		memmove(c->rbuf, c->rbuf + used, c->rlen - used);
		c->rlen -= used;
		if (p.state == RS_COMPLETE)
			break;
	}
	if (c->h2)
		c->slots[0].id = 0;
	if (p.state != RS_COMPLETE && !p.error)
		p.error = "bad_response";
	result_end(c, r, &p);
	if (p.state != RS_COMPLETE)
		return false;
	return c->h2 ? !c->h2_goaway : !p.close;
}

/* A stream's next request on slot s, sent; false: none (its row says why
 * when it failed, conn_error when no row could be had) */
static bool h2_stream_begin(struct client *c, struct h2_slot *s)
{
	struct result *r = client_new_result(c);

	if (!r) {
		snprintf(c->conn_error, sizeof(c->conn_error),
			 "out of memory for results");
		return false;
	}
	parser_reset(&s->own);
	s->p = &s->own;
	s->seen = 0;
	s->result = r - c->results;
	result_begin(c, r);
	if (h2_request(c, s)) {
		snprintf(r->status, sizeof(r->status), "send");
		return false;
	}
	result_sent(c, r);
	return true;
}

/*
 * --streams N: N streams in flight on the connection, as a browser's
 * requests share one, each begun when one ends (closed loop); every read
 * is fed with its stamps, exact for a token only when the read brought no
 * other stream's. sent counts the requests begun. false: drop the
 * connection (the streams in flight end with its error).
 */
static bool h2_streams(struct client *c, uint64_t *sent)
{
	struct read_time t;
	struct h2_slot *s;
	const char *why;
	uint64_t fresh;
	ssize_t n;
	int i, active;

	for (;;) {
		for (i = active = 0; i < c->nslots; i++) {
			s = &c->slots[i];
			if (!s->id && !c->h2_goaway &&
			    !client_should_stop(c, *sent)) {
				(*sent)++;
				why = "send";
				if (!h2_stream_begin(c, s))
					goto fail;
			}
			active += s->id != 0;
		}
		if (!active)
			return !c->h2_goaway;
		why = rbuf_room(c);
		if (why)
			goto fail;
		n = conn_read(c, c->rbuf, c->rcap, &t);
		why = n <= 0			 ? recv_error_word(n, errno) :
		      h2_feed(c, c->rbuf, n, &t) ? c->h2_error :
						   NULL;
		if (why)
			goto fail;
		for (i = 0, fresh = 0; i < c->nslots; i++)
			if (c->slots[i].id)
				fresh += c->slots[i].p->tokens -
					 c->slots[i].seen;
		for (i = 0; i < c->nslots; i++) {
			s = &c->slots[i];
			if (!s->id)
				continue;
			result_rx(&c->results[s->result], s->p, s->seen, &t,
				  s->p->tokens - s->seen == fresh);
			s->seen = s->p->tokens;
			if (s->p->state == RS_COMPLETE || s->p->error) {
				result_end(c, &c->results[s->result], s->p);
				s->id = 0;
			}
		}
	}
fail:
	for (i = 0; i < c->nslots; i++) {
		s = &c->slots[i];
		if (!s->id)
			continue;
		if (!s->p->error)
			s->p->error = why;
		result_end(c, &c->results[s->result], s->p);
		s->id = 0;
	}
	return false;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct loadgen *lg = c->lg;
	const struct lg_opts *o = &lg->opts;
	uint64_t sent = 0, next_send = 0, gap = 0;

	if (o->rate > 0) {
		/* each connection gets its share of the rate, staggered */
		gap = (uint64_t)((double)o->connections * 1e9 / o->rate);
		next_send = lg->t_start +
			    (uint64_t)((double)c->index * 1e9 / o->rate);
	}
	while (!client_should_stop(c, sent)) {
		struct result *r;

		if (gap) {
			if (next_send > mono_ns())
				sleep_until_ns(next_send);
			next_send += gap;
			if (o->duration_ns && mono_ns() >= lg->t_end_limit)
				break;
		}
		if (c->fd < 0 &&
		    (client_connect(c) || (lg->tls_ctx && tls_start(c)) ||
		     (o->h2 && h2_start(c)))) {
			/* the server is unreachable: no point in going on */
			r = client_new_result(c);
			if (r) {
				r->id = atomic_fetch_add(&lg->next_id, 1);
				r->t_send = mono_ns();
				snprintf(r->status, sizeof(r->status), "%s",
					 c->fd < 0	   ? "connect" :
					 o->tls && !c->ssl ? "tls" :
							     "h2");
			}
			client_disconnect(c);
			break;
		}
		if (o->streams > 1) {
			if (!h2_streams(c, &sent))
				client_disconnect(c);
			if (c->conn_error[0])
				break;
			continue;
		}
		r = client_new_result(c);
		if (!r) {
			snprintf(c->conn_error, sizeof(c->conn_error),
				 "out of memory for results");
			break;
		}
		sent++;
		if (!client_request(c, r) || o->new_conn)
			client_disconnect(c);
	}
	client_disconnect(c);
	return NULL;
}

/* ------------------------------------------------------------- reports */

static int cmp_result_id(const void *a, const void *b)
{
	const struct result *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static uint64_t result_ttft(const struct result *r)
{
	return r->tokens ? r->t_first - r->t_send : 0;
}

static uint64_t result_tpot(const struct result *r)
{
	return r->tokens > 1 ? (r->t_last - r->t_first) / (r->tokens - 1) : 0;
}

/*
 * The same from the kernel's receive stamps; 0 without an exact first
 * stamp. The last token's stamp may be the [DONE]'s that came with it.
 */
static uint64_t result_ttft_rx(const struct result *r)
{
	uint64_t sent = r->t_send_tx ? r->t_send_tx : r->t_send;

	return r->first_rx_exact && r->t_first_rx > sent ?
		       r->t_first_rx - sent : 0;
}

static uint64_t result_tpot_rx(const struct result *r)
{
	return r->first_rx_exact && r->tokens > 1 &&
			       r->t_last_rx > r->t_first_rx ?
		       (r->t_last_rx - r->t_first_rx) / (r->tokens - 1) : 0;
}

static int write_csv(const char *path, const struct result *res, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t i;
	int err = 0;

	if (!f)
		return -errno;
	fprintf(f, "id,conn,local_port,t_send_ns,t_first_token_ns,"
		"t_last_token_ns,tokens,ttft_ns,tpot_ns,status,"
		"t_first_token_rx_ns,t_last_token_rx_ns,ttft_rx_ns,tpot_rx_ns,"
		"last_rx_exact,t_send_tx_ns\n");
	for (i = 0; i < n; i++) {
		const struct result *r = &res[i];

		fprintf(f,
			"%llu,%d,%d,%llu,%llu,%llu,%llu,%llu,%llu,%s,"
			"%llu,%llu,%llu,%llu,%d,%llu\n",
			(unsigned long long)r->id, r->conn, r->local_port,
			(unsigned long long)r->t_send,
			(unsigned long long)r->t_first,
			(unsigned long long)r->t_last,
			(unsigned long long)r->tokens,
			(unsigned long long)result_ttft(r),
			(unsigned long long)result_tpot(r), r->status,
			(unsigned long long)r->t_first_rx,
			(unsigned long long)r->t_last_rx,
			(unsigned long long)result_ttft_rx(r),
			(unsigned long long)result_tpot_rx(r),
			r->last_rx_exact, (unsigned long long)r->t_send_tx);
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* summary of all results; returns how many succeeded */
static size_t print_summary(const struct result *res, size_t n,
			    uint64_t elapsed_ns, bool quiet)
{
	uint64_t *ttft = NULL, *tpot = NULL, tokens = 0;
	size_t ok = 0, ntpot = 0, i, j;
	double secs = (double)elapsed_ns / 1e9;

	ttft = calloc(n + 1, sizeof(*ttft));
	tpot = calloc(n + 1, sizeof(*tpot));
	if (!ttft || !tpot) {
		fprintf(stderr, "%s: out of memory for the summary\n", prog);
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		if (strcmp(res[i].status, "ok"))
			continue;
		ttft[ok++] = result_ttft(&res[i]);
		tokens += res[i].tokens;
		if (res[i].tokens > 1)
			tpot[ntpot++] = result_tpot(&res[i]);
	}
	if (quiet)
		goto cleanup;
	qsort(ttft, ok, sizeof(*ttft), cmp_u64);
	qsort(tpot, ntpot, sizeof(*tpot), cmp_u64);
	if (secs <= 0)
		secs = 1e-9;
	printf("requests: %zu ok, %zu failed in %.3f s (%.1f req/s, "
	       "%.1f tok/s)\n", ok, n - ok, secs, (double)ok / secs,
	       (double)tokens / secs);
	printf("TTFT ms: p50 %.3f p90 %.3f p99 %.3f max %.3f\n",
	       ms(percentile_u64(ttft, ok, 50)),
	       ms(percentile_u64(ttft, ok, 90)),
	       ms(percentile_u64(ttft, ok, 99)),
	       ms(ok ? ttft[ok - 1] : 0));
	printf("TPOT ms: p50 %.3f p90 %.3f p99 %.3f\n",
	       ms(percentile_u64(tpot, ntpot, 50)),
	       ms(percentile_u64(tpot, ntpot, 90)),
	       ms(percentile_u64(tpot, ntpot, 99)));
	/* failures by kind, in order of first appearance */
	for (i = 0; i < n; i++) {
		size_t count = 0;
		bool seen = false;

		if (!strcmp(res[i].status, "ok"))
			continue;
		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(res[j].status, res[i].status);
		if (seen)
			continue;
		for (j = i; j < n; j++)
			count += !strcmp(res[j].status, res[i].status);
		printf("failed: %zu %s\n", count, res[i].status);
	}
cleanup:
	free(ttft);
	free(tpot);
	return ok;
}

/* --------------------------------------------------------------- main */

/* one line per distinct connection error, not one per connection */
static void report_conn_errors(const struct client *clients, int n)
{
	int i, j, count;
	bool seen;

	for (i = 0; i < n; i++) {
		if (!clients[i].conn_error[0])
			continue;
		seen = false;
		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(clients[j].conn_error,
				       clients[i].conn_error);
		if (seen)
			continue;
		for (count = 0, j = i; j < n; j++)
			count += !strcmp(clients[j].conn_error,
					 clients[i].conn_error);
		fprintf(stderr, "%s: %d connection%s: %s\n", prog, count,
			count > 1 ? "s" : "", clients[i].conn_error);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: loadgen [OPTIONS]\n"
"Load generator for OpenAI-style streaming completion servers. Each\n"
"connection is a thread with its own keep-alive connection, sending\n"
"POST /v1/completions with stream=true and timing every token on\n"
"CLOCK_MONOTONIC. Stops after -n requests or -d seconds, whichever first\n"
"(default -n 100).\n"
"\n"
"Options:\n"
"  -H, --host HOST         server address, IPv4 or IPv6 (default 127.0.0.1)\n"
"  -p, --port PORT         server port (default 8000)\n"
"  -c, --connections N     concurrent connections, one thread each (default 4)\n"
"  -n, --requests N        total requests, split across connections\n"
"  -d, --duration SEC      stop starting requests after SEC seconds\n"
"      --rate R            requests/s overall, paced per connection\n"
"                          (default: closed loop, next request at once)\n"
"      --prompt-bytes N    prompt size in bytes (default 64); a body over\n"
"                          16 KB goes out after its headers' own write\n"
"      --tokens N          max_tokens to ask for (default: the server's)\n"
"      --new-conn          a new connection per request (Connection: close)\n"
"      --no-stream         ask for stream=false: one JSON answer, no tokens\n"
"      --timeout SEC       give up on a silent server after SEC (default 30)\n"
"      --h2                HTTP/2 (nghttp2 on memory, so the stamps are the\n"
"                          socket's): with --tls asked for by ALPN (h2),\n"
"                          without it spoken at once (h2c prior knowledge);\n"
"                          one stream at a time on each connection\n"
"      --streams N         with --h2: N streams in flight on each connection\n"
"                          (multiplexed, as a browser's requests), each begun\n"
"                          when one ends (default 1)\n"
"      --tls               HTTPS (OpenSSL on memory BIOs, so the kernel's\n"
"                          stamps are still those of the socket's reads and\n"
"                          sends); the server's certificate is not checked:\n"
"                          this is a load generator for test servers\n"
"  -o, --csv FILE          one row per request: id,conn,local_port,t_send_ns,\n"
"                          t_first_token_ns,t_last_token_ns,tokens,ttft_ns,\n"
"                          tpot_ns,status, then the same times from the\n"
"                          kernel's receive stamps: t_first_token_rx_ns,\n"
"                          t_last_token_rx_ns,ttft_rx_ns,tpot_rx_ns (0 when\n"
"                          the first token's read also held later data),\n"
"                          last_rx_exact (0: the last token's read also\n"
"                          held [DONE], whose stamp it has), and the\n"
"                          kernel's transmit stamp of the request,\n"
"                          t_send_tx_ns (0: none; ttft_rx_ns is from it\n"
"                          when there is one, else from t_send_ns)\n"
"  -q, --quiet             no summary\n"
"  -h, --help              this help\n"
"\n"
"TTFT = first token event read - request send; TPOT = (last - first) /\n"
"(tokens - 1). Exit status is 1 if any request failed or none completed.\n"
"\n"
"Examples:\n"
"  loadgen -p 8000 -c 8 -n 200 --tokens 32\n"
"  loadgen -H ::1 -p 8000 -c 2 -d 10 --rate 50 -o /tmp/client.csv\n"
"  loadgen -p 8000 --prompt-bytes 1048576 -n 4 --new-conn\n"
"  loadgen -p 8443 --tls -c 4 -n 100\n"
"  loadgen -p 8443 --tls --h2 -c 4 -n 100\n"
"  loadgen -p 8443 --tls --h2 -c 1 --streams 8 -n 100\n");
}

enum {
	OPT_RATE = 256,
	OPT_PROMPT_BYTES,
	OPT_TOKENS,
	OPT_NEW_CONN,
	OPT_NO_STREAM,
	OPT_TIMEOUT,
	OPT_TLS,
	OPT_H2,
	OPT_STREAMS,
};

static uint64_t parse_num_opt(const char *opt, const char *s, uint64_t min,
			      uint64_t max)
{
	return demo_parse_num(prog, opt, s, min, max);
}

static uint64_t parse_seconds_opt(const char *opt, const char *s)
{
	double v;

	if (!parse_double_nonneg(s, &v) || v <= 0 || v > 1e6)
		usage_error("invalid %s '%s' (want seconds > 0)", opt, s);
	return (uint64_t)(v * 1e9);
}

static void parse_args(int argc, char **argv, struct lg_opts *o)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "connections", required_argument, NULL, 'c' },
		{ "requests", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "prompt-bytes", required_argument, NULL, OPT_PROMPT_BYTES },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "new-conn", no_argument, NULL, OPT_NEW_CONN },
		{ "no-stream", no_argument, NULL, OPT_NO_STREAM },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "tls", no_argument, NULL, OPT_TLS },
		{ "h2", no_argument, NULL, OPT_H2 },
		{ "streams", required_argument, NULL, OPT_STREAMS },
		{ "csv", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*o = (struct lg_opts) {
		.host = "127.0.0.1",
		.port = 8000,
		.connections = 4,
		.prompt_bytes = 64,
		.timeout_ns = 30 * NSEC_PER_SEC,
		.streams = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":H:p:c:n:d:o:qh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'H':
			o->host = optarg;
			break;
		case 'p':
			o->port = parse_num_opt("--port", optarg, 1, 65535);
			break;
		case 'c':
			o->connections = parse_num_opt("--connections", optarg,
						       1, MAX_CONNECTIONS);
			break;
		case 'n':
			o->requests = parse_num_opt("--requests", optarg, 1,
						    1000000000);
			break;
		case 'd':
			o->duration_ns = parse_seconds_opt("--duration",
							   optarg);
			break;
		case OPT_RATE:
			if (!parse_double_nonneg(optarg, &o->rate) ||
			    o->rate <= 0 || o->rate > 1e7)
				usage_error("invalid --rate '%s' (want "
					    "requests/s > 0)", optarg);
			break;
		case OPT_PROMPT_BYTES:
			o->prompt_bytes = parse_num_opt("--prompt-bytes",
							optarg, 0,
							MAX_PROMPT_BYTES);
			break;
		case OPT_TOKENS:
			o->tokens = parse_num_opt("--tokens", optarg, 1,
						  1000000);
			break;
		case OPT_NO_STREAM:
			o->no_stream = true;
			break;
		case OPT_NEW_CONN:
			o->new_conn = true;
			break;
		case OPT_TIMEOUT:
			o->timeout_ns = parse_seconds_opt("--timeout", optarg);
			break;
		case OPT_TLS:
			o->tls = true;
			break;
		case OPT_H2:
			o->h2 = true;
			break;
		case OPT_STREAMS:
			o->streams = parse_num_opt("--streams", optarg, 1, 256);
			break;
		case 'o':
			o->csv_path = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		default: /* -h, a missing value, an unknown option */
			demo_getopt_other(c, prog, argv, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->streams > 1 && !o->h2)
		usage_error("--streams %d wants --h2 (HTTP/1.1 has one request "
			    "in flight on a connection)",
			    o->streams);
	if (o->streams > 1 && (o->rate > 0 || o->new_conn))
		usage_error("--streams %d keeps its streams busy: not with "
			    "--rate or --new-conn",
			    o->streams);
	if (!o->requests && !o->duration_ns)
		o->requests = 100;
	if (o->requests && o->requests < (uint64_t)o->connections)
		o->connections = o->requests;
}

int main(int argc, char **argv)
{
	struct loadgen lg = {};
	struct result *all = NULL;
	size_t total = 0, ok = 0, k;
	uint64_t elapsed;
	int i, err = 0, started = 0, ret = 1;

	parse_args(argc, argv, &lg.opts);
	signal(SIGPIPE, SIG_IGN);
	atomic_init(&lg.next_id, 1);
	if (build_request(&lg)) {
		fprintf(stderr, "%s: out of memory for the request\n", prog);
		goto cleanup;
	}
	lg.clients = calloc(lg.opts.connections, sizeof(*lg.clients));
	if (!lg.clients) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto cleanup;
	}
	if (lg.opts.tls) {
		lg.tls_ctx = SSL_CTX_new(TLS_client_method());
		if (!lg.tls_ctx) {
			fprintf(stderr, "%s: cannot set up TLS: %s\n", prog,
				tls_error_text());
			goto cleanup;
		}
		/* test servers' certificates are their own */
		SSL_CTX_set_verify(lg.tls_ctx, SSL_VERIFY_NONE, NULL);
		/* --h2 asks for HTTP/2 only: a server that won't is an error */
		if (lg.opts.h2 &&
		    SSL_CTX_set_alpn_protos(
			    lg.tls_ctx, (const unsigned char *)"\x02h2", 3)) {
			fprintf(stderr, "%s: cannot set up TLS: %s\n", prog,
				tls_error_text());
			goto cleanup;
		}
	}
	lg.t_start = mono_ns();
	lg.t_end_limit = lg.t_start + lg.opts.duration_ns;
	for (i = 0; i < lg.opts.connections; i++) {
		struct client *c = &lg.clients[i];

		c->lg = &lg;
		c->index = i;
		c->fd = -1;
		c->nslots = lg.opts.h2 ? lg.opts.streams : 0;
		c->slots = c->nslots ? calloc(c->nslots, sizeof(*c->slots)) :
				       NULL;
		if (c->nslots && !c->slots) {
			fprintf(stderr, "%s: out of memory\n", prog);
			break;
		}
		c->quota = lg.opts.requests / lg.opts.connections +
			   ((uint64_t)i < lg.opts.requests %
					  lg.opts.connections);
		err = pthread_create(&c->thread, NULL, client_main, c);
		if (err) {
			fprintf(stderr, "%s: cannot start connection %d: %s\n",
				prog, i, strerror(err));
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(lg.clients[i].thread, NULL);
		total += lg.clients[i].nresults;
	}
	elapsed = mono_ns() - lg.t_start;
	report_conn_errors(lg.clients, started);

	all = calloc(total + 1, sizeof(*all));
	if (!all) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto cleanup;
	}
	for (i = 0, k = 0; i < started; i++) {
		memcpy(all + k, lg.clients[i].results,
		       lg.clients[i].nresults * sizeof(*all));
		k += lg.clients[i].nresults;
	}
	qsort(all, total, sizeof(*all), cmp_result_id);
	if (lg.opts.csv_path) {
		err = write_csv(lg.opts.csv_path, all, total);
		if (err)
			fprintf(stderr, "%s: cannot write %s: %s\n", prog,
				lg.opts.csv_path, strerror(-err));
	}
	ok = print_summary(all, total, elapsed, lg.opts.quiet);
	ret = ok && ok == total && started == lg.opts.connections && !err ?
	      0 : 1;
cleanup:
	if (lg.clients)
		for (i = 0; i < lg.opts.connections; i++) {
			free(lg.clients[i].results);
			free(lg.clients[i].rbuf);
			free(lg.clients[i].wbuf);
			free(lg.clients[i].slots);
		}
	free(lg.clients);
	free(all);
	free(lg.request);
	SSL_CTX_free(lg.tls_ctx);
	return ret;
}
