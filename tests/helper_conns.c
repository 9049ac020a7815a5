// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test helper: opens N TCP connections to 127.0.0.1:PORT and keeps them all
 * open; then, --rounds times, sends one streaming request on every one of
 * them at once and reads every response to its [DONE]; then holds the
 * connections --hold-ms and closes them.
 *
 *   helper_conns -p PORT -n N [--rounds R] [--hold-ms MS]
 *
 * Prints "conns=N requests=M" and exits 0 when every request was answered.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ROUND_TIMEOUT_MS 60000
#define MAX_EVENTS 512

static const char request[] =
	"POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	"Content-Type: application/json\r\nContent-Length: 0\r\n\r\n";
static const char done_marker[] = "[DONE]";

struct client_conn {
	int fd;
	int done; /* [DONE] seen in this round */
	char tail[8]; /* last bytes read: a marker may span two reads */
	int tail_len;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Blocking connect, retried while the accept queue is full. */
static int open_conn(const struct sockaddr_in *addr)
{
	for (int attempt = 0; attempt < 50; attempt++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return -1;
		if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr))) {
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
			return fd;
		}
		close(fd);
		if (errno != ECONNREFUSED && errno != EAGAIN &&
		    errno != ETIMEDOUT)
			return -1;
		usleep(20000);
	}
	return -1;
}

/* Counts [DONE] in what arrived, across read boundaries. */
static void scan(struct client_conn *c, const char *data, size_t n)
{
	char buf[4096 + sizeof(c->tail)];
	size_t len;

	memcpy(buf, c->tail, c->tail_len);
	memcpy(buf + c->tail_len, data, n);
	len = c->tail_len + n;
	for (size_t i = 0; i + sizeof(done_marker) - 1 <= len; i++)
		if (!memcmp(buf + i, done_marker, sizeof(done_marker) - 1))
			c->done = 1;
	c->tail_len = len < sizeof(done_marker) - 1 ? len :
						     sizeof(done_marker) - 1;
	memcpy(c->tail, buf + len - c->tail_len, c->tail_len);
}

static int run_round(int epfd, struct client_conn *conns, int n)
{
	struct epoll_event evs[MAX_EVENTS];
	long long deadline = now_ms() + ROUND_TIMEOUT_MS;
	int answered = 0;
	char data[4096];

	for (int i = 0; i < n; i++) {
		conns[i].done = 0;
		conns[i].tail_len = 0;
		if (conns[i].fd >= 0 &&
		    write(conns[i].fd, request, sizeof(request) - 1) !=
			    (ssize_t)sizeof(request) - 1) {
			close(conns[i].fd);
			conns[i].fd = -1;
		}
	}
	while (answered < n && now_ms() < deadline) {
		int k = epoll_wait(epfd, evs, MAX_EVENTS, 1000);

		for (int e = 0; e < k; e++) {
			struct client_conn *c = &conns[evs[e].data.u32];
			ssize_t r;

			while (c->fd >= 0 && !c->done) {
				r = read(c->fd, data, sizeof(data));
				if (r < 0 && errno == EAGAIN)
					break;
				if (r <= 0) {
					close(c->fd);
					c->fd = -1;
					break;
				}
				scan(c, data, r);
				answered += c->done;
			}
		}
		if (k < 0 && errno != EINTR)
			break;
	}
	return answered;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct client_conn *conns = NULL;
	int port = 0, n = 0, rounds = 1, hold_ms = 0, epfd = -1, opened = 0;
	long long answered = 0;
	struct rlimit rl;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc)
			hold_ms = atoi(argv[++i]);
		else
			port = -1;
	}
	if (port <= 0 || n <= 0 || rounds < 0 || hold_ms < 0) {
		fprintf(stderr, "usage: helper_conns -p PORT -n N [--rounds R] [--hold-ms MS]\n");
		return 2;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	addr.sin_port = htons(port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	conns = calloc(n, sizeof(*conns));
	epfd = epoll_create1(0);
	if (!conns || epfd < 0) {
		perror("helper_conns: setup");
		goto cleanup;
	}
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		conns[i].fd = open_conn(&addr);
		if (conns[i].fd < 0) {
			fprintf(stderr, "helper_conns: connection %d: %s\n", i,
				strerror(errno));
			for (int j = i; j < n; j++)
				conns[j].fd = -1;
			goto cleanup;
		}
		opened++;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, conns[i].fd, &ev)) {
			perror("helper_conns: epoll_ctl");
			goto cleanup;
		}
	}
	for (int r = 0; r < rounds; r++)
		answered += run_round(epfd, conns, n);
	if (hold_ms)
		usleep(hold_ms * 1000LL);
	ret = answered == (long long)n * rounds ? 0 : 1;
cleanup:
	printf("conns=%d requests=%lld\n", opened, answered);
	for (int i = 0; conns && i < opened; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	free(conns);
	if (epfd >= 0)
		close(epfd);
	return ret;
}
