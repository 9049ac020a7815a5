// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test helper: a streaming server that holds many connections at once (the
 * demo server serves one connection per worker). One epoll thread accepts
 * every connection, answers each request (headers ending in an empty line)
 * with an SSE stream of --tokens events and [DONE], one write each, and
 * keeps the connection open. Another thread churns threads: it starts and
 * joins short-lived, renamed threads until the server is stopped.
 *
 *   helper_manyconn_server --port-file F [--tokens N] [--churn N]
 *
 * --churn N: threads started per millisecond batch (0: no churn; default 4).
 * SIGTERM or SIGINT stops it; it prints "requests=N threads=N" and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_BUF 512
#define MAX_EVENTS 256

struct conn_state {
	unsigned int len; /* bytes of the current request so far */
	char buf[REQ_BUF];
};

struct server {
	int listen_fd;
	int epoll_fd;
	int tokens;
	int churn;
	struct conn_state **conns; /* by fd */
	size_t nconns;
	unsigned long long requests;
	atomic_ullong threads;
	atomic_int stop;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/* One request: headers, then each token in a write of its own. */
static int respond(struct server *s, int fd)
{
	static const char hdr[] =
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
		"Cache-Control: no-cache\r\n\r\n";
	static const char done[] = "data: [DONE]\n\n";
	char tok[96];
	int n;

	if (write_all(fd, hdr, sizeof(hdr) - 1))
		return -1;
	for (int i = 0; i < s->tokens; i++) {
		n = snprintf(tok, sizeof(tok),
			     "data: {\"choices\":[{\"text\":\"tok%d\"}]}\n\n",
			     i);
		if (write_all(fd, tok, n))
			return -1;
	}
	if (write_all(fd, done, sizeof(done) - 1))
		return -1;
	s->requests++;
	return 0;
}

static void drop_conn(struct server *s, int fd)
{
	epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
	free(s->conns[fd]);
	s->conns[fd] = NULL;
}

/* Reads what is there; answers each request whose headers are complete
 * (the helper client sends no body). */
static void on_readable(struct server *s, int fd)
{
	struct conn_state *c = s->conns[fd];
	ssize_t n;
	char *end;

	for (;;) {
		n = read(fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			drop_conn(s, fd);
			return;
		}
		c->len += n;
		c->buf[c->len] = '\0';
		while ((end = strstr(c->buf, "\r\n\r\n"))) {
			unsigned int used = end + 4 - c->buf;

			if (respond(s, fd)) {
				drop_conn(s, fd);
				return;
			}
			memmove(c->buf, c->buf + used, c->len - used + 1);
			c->len -= used;
		}
		if (c->len == sizeof(c->buf) - 1) {
			drop_conn(s, fd); /* not a request we understand */
			return;
		}
	}
}

static int on_accept(struct server *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd;

	for (;;) {
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK);
		if (fd < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if ((size_t)fd >= s->nconns) {
			close(fd);
			continue;
		}
		s->conns[fd] = calloc(1, sizeof(struct conn_state));
		ev.data.fd = fd;
		if (!s->conns[fd] ||
		    epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
			free(s->conns[fd]);
			s->conns[fd] = NULL;
			close(fd);
		}
	}
}

static void *short_lived(void *arg)
{
	struct timespec ts = { 0, 50000 };

	/* task_rename events too */
	prctl(PR_SET_NAME, "churn-worker");
	nanosleep(&ts, NULL);
	return NULL;
}

static void *churn_main(void *arg)
{
	struct server *s = arg;
	struct timespec ts = { 0, 1000000 };
	pthread_t t[64];
	int n;

	while (!atomic_load(&s->stop)) {
		n = 0;
		for (int i = 0; i < s->churn && i < 64; i++)
			if (!pthread_create(&t[n], NULL, short_lived, NULL))
				n++;
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		atomic_fetch_add(&s->threads, n);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int parse_args(int argc, char **argv, struct server *s,
		      const char **port_file)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port-file") && i + 1 < argc)
			*port_file = argv[++i];
		else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
			s->tokens = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--churn") && i + 1 < argc)
			s->churn = atoi(argv[++i]);
		else
			return -1;
	}
	return *port_file && s->tokens >= 0 && s->churn >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct server s = { .listen_fd = -1, .epoll_fd = -1, .tokens = 4,
			    .churn = 4 };
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN }, evs[MAX_EVENTS];
	struct sigaction sa = { .sa_handler = on_signal };
	socklen_t alen = sizeof(addr);
	const char *port_file = NULL;
	struct rlimit rl;
	pthread_t churn;
	bool churning = false;
	int one = 1, ret = 1, n;
	FILE *f;

	if (parse_args(argc, argv, &s, &port_file)) {
		fprintf(stderr, "usage: helper_manyconn_server --port-file F [--tokens N] [--churn N]\n");
		return 2;
	}
	/* as many connections as the hard limit allows */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	s.nconns = getrlimit(RLIMIT_NOFILE, &rl) ? 1024 : rl.rlim_cur;
	s.conns = calloc(s.nconns, sizeof(*s.conns));
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	s.epoll_fd = epoll_create1(0);
	if (!s.conns || s.listen_fd < 0 || s.epoll_fd < 0) {
		perror("helper_manyconn_server: setup");
		goto cleanup;
	}
	setsockopt(s.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s.listen_fd, (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(s.listen_fd, 65535) ||
	    getsockname(s.listen_fd, (struct sockaddr *)&addr, &alen)) {
		perror("helper_manyconn_server: listen");
		goto cleanup;
	}
	ev.data.fd = s.listen_fd;
	if (epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, s.listen_fd, &ev)) {
		perror("helper_manyconn_server: epoll");
		goto cleanup;
	}
	if (s.churn) {
		if (pthread_create(&churn, NULL, churn_main, &s)) {
			fprintf(stderr, "helper_manyconn_server: cannot start the churn thread\n");
			goto cleanup;
		}
		churning = true;
	}
	f = fopen(port_file, "w");
	if (!f || fprintf(f, "%d\n", ntohs(addr.sin_port)) < 0 || fclose(f)) {
		perror("helper_manyconn_server: port file");
		goto cleanup;
	}
	while (!stop_signal) {
		n = epoll_wait(s.epoll_fd, evs, MAX_EVENTS, 200);
		if (n < 0 && errno != EINTR) {
			perror("helper_manyconn_server: epoll_wait");
			goto cleanup;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == s.listen_fd) {
				if (on_accept(&s)) {
					perror("helper_manyconn_server: accept");
					goto cleanup;
				}
			} else if (s.conns[evs[i].data.fd]) {
				on_readable(&s, evs[i].data.fd);
			}
		}
	}
	ret = 0;
cleanup:
	if (churning) {
		atomic_store(&s.stop, 1);
		pthread_join(churn, NULL);
	}
	printf("requests=%llu threads=%llu\n", s.requests,
	       (unsigned long long)atomic_load(&s.threads));
	for (size_t fd = 0; s.conns && fd < s.nconns; fd++)
		if (s.conns[fd])
			drop_conn(&s, fd);
	free(s.conns);
	if (s.listen_fd >= 0)
		close(s.listen_fd);
	if (s.epoll_fd >= 0)
		close(s.epoll_fd);
	return ret;
}
