// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* OTLP/HTTP export: a minimal HTTP/1.1 POST client on a thread (see
 * otlp_send.h). Plain http:// only: no TLS in ttftrace. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "otlp_send.h"
#include "util.h"

#define QUEUE_MAX 64
#define QUEUE_BYTES (16u << 20)
#define IO_TIMEOUT_MS 2000
#define ATTEMPTS 3

struct item {
	struct item *next;
	struct tt_pbuf msg;
	size_t spans;
};

struct tt_otlp_sender {
	char host[256], port[8], path[512];
	struct sockaddr_storage addr;
	socklen_t addrlen;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* an item queued, room made, or stop */
	struct item *head, *tail;
	size_t nqueued, bytes;
	bool stop;
	__u64 deadline; /* CLOCK_MONOTONIC: no retry after it, once stopping */
	struct tt_otlp_send_stats st;
};

/* Splits URL into host, port and path; 0 or -1 with the reason in err. */
static int parse_url(struct tt_otlp_sender *s, const char *url, char *err,
		     size_t errlen)
{
	const char *p = url, *host_end, *path;
	size_t hlen;

	if (!strncasecmp(p, "https://", 8)) {
		snprintf(
			err, errlen,
			"%s: https:// is not supported (ttftrace speaks plain OTLP/HTTP): give an http:// URL, e.g. a collector on loopback",
			url);
		return -1;
	}
	if (strncasecmp(p, "http://", 7)) {
		snprintf(err, errlen, "%s: not an http:// URL", url);
		return -1;
	}
	p += 7;
	path = p + strcspn(p, "/?#");
	if (*p == '[') {
		host_end = memchr(p, ']', path - p);
		if (!host_end) {
			snprintf(err, errlen, "%s: unterminated [IPv6 address]",
				 url);
			return -1;
		}
		p++;
		hlen = host_end - p;
		host_end++;
	} else {
		host_end = memchr(p, ':', path - p);
		if (!host_end)
			host_end = path;
		hlen = host_end - p;
	}
	if (!hlen || hlen >= sizeof(s->host)) {
		snprintf(err, errlen, "%s: bad host", url);
		return -1;
	}
	memcpy(s->host, p, hlen);
	s->host[hlen] = '\0';
	strcpy(s->port, "4318");
	if (*host_end == ':') {
		long port;
		char num[8] = "";

		if (path - host_end - 1 < (long)sizeof(num))
			memcpy(num, host_end + 1, path - host_end - 1);
		if (tt_parse_long(num, 1, 65535, &port)) {
			snprintf(err, errlen, "%s: bad port", url);
			return -1;
		}
		snprintf(s->port, sizeof(s->port), "%ld", port);
	} else if (host_end != path) {
		snprintf(err, errlen, "%s: bad host", url);
		return -1;
	}
	if (*path && *path != '/') {
		snprintf(err, errlen, "%s: no query or fragment, please", url);
		return -1;
	}
	hlen = strlen(path);
	while (hlen && path[hlen - 1] == '/')
		hlen--;
	if (hlen >= 10 && !strncmp(path + hlen - 10, "/v1/traces", 10))
		snprintf(s->path, sizeof(s->path), "%.*s", (int)hlen, path);
	else if (snprintf(s->path, sizeof(s->path), "%.*s/v1/traces", (int)hlen,
			  path) >= (int)sizeof(s->path)) {
		snprintf(err, errlen, "%s: path too long", url);
		return -1;
	}
	return 0;
}

static int connect_timeout(const struct tt_otlp_sender *s, char *err,
			   size_t errlen)
{
	struct timeval tv = { IO_TIMEOUT_MS / 1000,
			      IO_TIMEOUT_MS % 1000 * 1000 };
	struct pollfd pfd;
	int fd, soerr = 0;
	socklen_t len = sizeof(soerr);

	fd = socket(s->addr.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto cleanup;
	if (connect(fd, (const struct sockaddr *)&s->addr, s->addrlen) &&
	    errno != EINPROGRESS)
		goto cleanup;
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, IO_TIMEOUT_MS) != 1) {
		errno = ETIMEDOUT;
		goto cleanup;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr) {
		errno = soerr ? soerr : errno;
		goto cleanup;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
cleanup:
	snprintf(err, errlen, "connect to %.64s:%s: %s", s->host, s->port,
		 strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= w;
	}
	return 0;
}

/* One POST: the HTTP status, or -1 (connection trouble, said in err). */
static int post(const struct tt_otlp_sender *s, const struct tt_pbuf *msg,
		char *err, size_t errlen)
{
	char head[1024], resp[512];
	size_t got = 0;
	int fd, n, status = -1;

	fd = connect_timeout(s, err, errlen);
	if (fd < 0)
		return -1;
	n = snprintf(head, sizeof(head),
		     "POST %s HTTP/1.1\r\nHost: %s:%s\r\n"
		     "User-Agent: ttftrace\r\n"
		     "Content-Type: application/x-protobuf\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		     s->path, s->host, s->port, msg->len);
	if (write_all(fd, head, n) || write_all(fd, msg->p, msg->len)) {
		snprintf(err, errlen, "sending to %.64s:%s: %s", s->host,
			 s->port, strerror(errno));
		goto cleanup;
	}
	/* the status line is all that matters: the body is not read */
	while (got < sizeof(resp) - 1 && !memchr(resp, '\n', got)) {
		ssize_t r = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);

		if (r <= 0)
			break;
		got += r;
	}
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1) {
		snprintf(err, errlen, "no HTTP answer from %.64s:%s%.40s",
			 s->host, s->port, s->path);
		status = -1;
	} else if (status / 100 != 2) {
		snprintf(err, errlen, "%.64s:%s%.40s answered %d", s->host,
			 s->port, s->path, status);
	}
cleanup:
	close(fd);
	return status;
}

/* OTLP/HTTP: these are worth another try, other answers are final */
static bool retryable(int status)
{
	return status < 0 || status == 429 || status == 502 || status == 503 ||
	       status == 504;
}

static void *sender_main(void *arg)
{
	struct tt_otlp_sender *s = arg;
	char err[sizeof(s->st.last_error)];

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct item *it;
		int status = -1;

		while (!s->head && !s->stop)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->head)
			break;
		it = s->head;
		pthread_mutex_unlock(&s->lock);
		for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
			if (attempt) {
				/* backoff: 200 ms, then 800 ms */
				usleep(200000u << (2 * (attempt - 1)));
				__atomic_add_fetch(&s->st.retries, 1,
						   __ATOMIC_RELAXED);
			}
			status = post(s, &it->msg, err, sizeof(err));
			if (!retryable(status))
				break;
			if (__atomic_load_n(&s->stop, __ATOMIC_RELAXED) &&
			    tt_clock_ns(CLOCK_MONOTONIC) > s->deadline)
				break;
		}
		pthread_mutex_lock(&s->lock);
		s->head = it->next;
		if (!s->head)
			s->tail = NULL;
		s->nqueued--;
		s->bytes -= it->msg.len;
		if (status / 100 == 2) {
			s->st.batches_sent++;
			s->st.spans_sent += it->spans;
		} else {
			s->st.batches_dropped++;
			s->st.spans_dropped += it->spans;
			memcpy(s->st.last_error, err, sizeof(err));
		}
		pthread_cond_broadcast(&s->cond);
		tt_pbuf_free(&it->msg);
		free(it);
		if (s->stop && tt_clock_ns(CLOCK_MONOTONIC) > s->deadline)
			break;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct tt_otlp_sender *tt_otlp_sender_open(const char *url, char *err,
					   size_t errlen)
{
	struct tt_otlp_sender *s = calloc(1, sizeof(*s));
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (parse_url(s, url, err, errlen))
		goto cleanup;
	rc = getaddrinfo(s->host, s->port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "%s: cannot resolve %s: %s", url, s->host,
			 gai_strerror(rc));
		goto cleanup;
	}
	memcpy(&s->addr, ai->ai_addr, ai->ai_addrlen);
	s->addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	rc = pthread_create(&s->thread, NULL, sender_main, s);
	if (rc) {
		snprintf(err, errlen, "cannot start the OTLP thread: %s",
			 strerror(rc));
		goto cleanup;
	}
	return s;
cleanup:
	free(s);
	return NULL;
}

int tt_otlp_sender_push(struct tt_otlp_sender *s, struct tt_pbuf *msg,
			size_t spans, bool block)
{
	struct item *it = calloc(1, sizeof(*it));
	int err = 0;

	pthread_mutex_lock(&s->lock);
	while (block && it &&
	       (s->nqueued >= QUEUE_MAX || s->bytes + msg->len > QUEUE_BYTES))
		pthread_cond_wait(&s->cond, &s->lock);
	if (!it || s->nqueued >= QUEUE_MAX ||
	    s->bytes + msg->len > QUEUE_BYTES) {
		s->st.batches_dropped++;
		s->st.spans_dropped += spans;
		tt_pbuf_free(msg);
		free(it);
		err = -ENOSPC;
		goto cleanup;
	}
	it->msg = *msg;
	it->spans = spans;
	memset(msg, 0, sizeof(*msg));
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	s->nqueued++;
	s->bytes += it->msg.len;
	pthread_cond_broadcast(&s->cond);
cleanup:
	pthread_mutex_unlock(&s->lock);
	return err;
}

void tt_otlp_sender_close(struct tt_otlp_sender *s, __u64 wait_ns,
			  struct tt_otlp_send_stats *st)
{
	struct item *it, *next;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->deadline = tt_clock_ns(CLOCK_MONOTONIC) + wait_ns;
	__atomic_store_n(&s->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	for (it = s->head; it; it = next) {
		next = it->next;
		s->st.batches_dropped++;
		s->st.spans_dropped += it->spans;
		tt_pbuf_free(&it->msg);
		free(it);
	}
	if (st)
		*st = s->st;
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}
