// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench/ipc_cost.sh's load: two threads pass a token back and forth
 * ROUNDTRIPS times per round, ROUNDS rounds, over an eventfd pair (MODE
 * eventfd: an 8-byte write, a read, each way) or a unix socket pair (MODE
 * unix: a 1-byte send and recv each way), and print each round's ns per
 * round trip; or a pipe pair (MODE pipe: a 1-byte write and read each
 * way). Every hop is a data hand-off ttftrace records (docs/design.md
 * §4.4).
 *
 *   ipc_loop eventfd|unix|pipe ROUNDTRIPS ROUNDS
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum hop_kind { HOP_EVENTFD, HOP_UNIX, HOP_PIPE };

struct link {
	int ping[2], pong[2]; /* [0] read end, [1] write end */
	long n;
	enum hop_kind kind;
};

static int hop_send(int fd, enum hop_kind kind)
{
	uint64_t one = 1;
	char c = 'x';

	if (kind == HOP_UNIX)
		return send(fd, &c, 1, 0) == 1 ? 0 : -errno;
	if (kind == HOP_PIPE)
		return write(fd, &c, 1) == 1 ? 0 : -errno;
	return write(fd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}

static int hop_recv(int fd, enum hop_kind kind)
{
	uint64_t v;
	char c;

	if (kind == HOP_UNIX)
		return recv(fd, &c, 1, 0) == 1 ? 0 : -errno;
	if (kind == HOP_PIPE)
		return read(fd, &c, 1) == 1 ? 0 : -errno;
	return read(fd, &v, sizeof(v)) == sizeof(v) ? 0 : -errno;
}

static void *echo(void *arg)
{
	struct link *l = arg;
	long i;

	for (i = 0; i < l->n; i++)
		if (hop_recv(l->ping[0], l->kind) ||
		    hop_send(l->pong[1], l->kind))
			break;
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A pair of ends for one direction: an eventfd is both. */
static int make_pair(int fds[2], enum hop_kind kind)
{
	int sv[2];

	if (kind == HOP_PIPE)
		return pipe(fds) ? -errno : 0;
	if (kind == HOP_UNIX) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
			return -errno;
		fds[0] = sv[0];
		fds[1] = sv[1];
		return 0;
	}
	fds[0] = fds[1] = eventfd(0, 0);
	return fds[0] < 0 ? -errno : 0;
}

int main(int argc, char **argv)
{
	struct link l = { 0 };
	long rounds, r, i;
	pthread_t t;
	uint64_t t0;
	int err = 1;

	if (argc == 4 && !strcmp(argv[1], "eventfd")) {
		l.kind = HOP_EVENTFD;
	} else if (argc == 4 && !strcmp(argv[1], "unix")) {
		l.kind = HOP_UNIX;
	} else if (argc == 4 && !strcmp(argv[1], "pipe")) {
		l.kind = HOP_PIPE;
	} else {
		fprintf(stderr,
			"usage: ipc_loop eventfd|unix|pipe ROUNDTRIPS ROUNDS\n");
		return 2;
	}
	l.n = atol(argv[2]);
	rounds = atol(argv[3]);
	if (l.n <= 0 || rounds <= 0) {
		fprintf(stderr, "ipc_loop: ROUNDTRIPS and ROUNDS must be > 0\n");
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		if (make_pair(l.ping, l.kind) ||
		    make_pair(l.pong, l.kind)) {
			perror("ipc_loop");
			goto cleanup;
		}
		if (pthread_create(&t, NULL, echo, &l)) {
			fprintf(stderr, "ipc_loop: cannot start a thread\n");
			goto cleanup;
		}
		t0 = now_ns();
		for (i = 0; i < l.n; i++)
			if (hop_send(l.ping[1], l.kind) ||
			    hop_recv(l.pong[0], l.kind))
				break;
		printf("%.1f\n", (double)(now_ns() - t0) / l.n);
		pthread_join(t, NULL);
		close(l.ping[0]);
		close(l.pong[0]);
		if (l.kind != HOP_EVENTFD) {
			close(l.ping[1]);
			close(l.pong[1]);
		}
		if (i < l.n) {
			perror("ipc_loop: a hop failed");
			goto cleanup;
		}
	}
	err = 0;
cleanup:
	return err;
}
