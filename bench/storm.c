/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * storm: a paced source of traced kernel events for bench/ceiling.sh.
 * PAIRS pairs of threads ping-pong one small message each way, RATE round
 * trips per second in all, paced in 1 ms slots:
 *   pipe: over two pipes: wakeups and context switches only;
 *   tcp:  over a loopback TCP connection accepted on a listening port of
 *         this process: each round trip is a request (data_ready, recv) and
 *         a response (send with its first bytes, xmit), plus the switches.
 * It sets everything up, prints "storm: ready PID", waits for SIGUSR1 (the
 * tracer is attached), runs DURATION seconds, prints what it achieved and
 * waits for a second SIGUSR1 to exit (the tracer's CPU is read meanwhile).
 *
 *   storm [-m pipe|tcp] [-r RATE] [-p PAIRS] [-d SECONDS]   (RATE 0: flat out)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 64
#define SLOT_NS 1000000ULL
#define RESPONSE_BYTES 64

struct storm_opts {
	bool tcp;
	double rate;
	int pairs;
	double seconds;
};

struct pair {
	const struct storm_opts *o;
	int fd_a; /* the pacing side writes requests here, reads replies */
	int fd_a_rd;
	int fd_b; /* the echo side reads requests here, writes replies */
	int fd_b_wr;
	uint64_t deadline;
	uint64_t trips;
	pthread_t pacer, echo;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { t / 1000000000ULL, t % 1000000000ULL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* One round trip: a one-byte request, then the whole reply. */
static int xfer(const struct pair *p, char *buf)
{
	size_t want = p->o->tcp ? RESPONSE_BYTES : 1, got = 0;
	ssize_t n;

	if (write(p->fd_a, "r", 1) != 1)
		return -1;
	while (got < want) {
		n = read(p->fd_a_rd, buf + got, want - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static void *pacer_main(void *arg)
{
	struct pair *p = arg;
	double per_slot = p->o->rate / p->o->pairs * SLOT_NS / 1e9;
	double owed = 0;
	uint64_t slot = now_ns();
	char buf[RESPONSE_BYTES];

	while (now_ns() < p->deadline) {
		if (p->o->rate > 0) {
			owed += per_slot;
			while (owed >= 1) {
				if (xfer(p, buf))
					return NULL;
				p->trips++;
				owed -= 1;
			}
			slot += SLOT_NS;
			/* behind by more than a slot: the rate is not met */
			if (slot > now_ns())
				sleep_until(slot);
			else
				owed = 0, slot = now_ns();
		} else {
			if (xfer(p, buf))
				return NULL;
			p->trips++;
		}
	}
	shutdown(p->fd_a, SHUT_WR);
	close(p->fd_a);
	return NULL;
}

/* The echo side answers an SSE-looking event over TCP, so that the tracer
 * classifies the sends it copies as it would a server's. */
static void *echo_main(void *arg)
{
	struct pair *p = arg;
	char reply[RESPONSE_BYTES], c;

	memset(reply, 'x', sizeof(reply));
	memcpy(reply, "data: {\"t\":\"tok\"}", 18);
	reply[RESPONSE_BYTES - 2] = reply[RESPONSE_BYTES - 1] = '\n';
	while (read(p->fd_b, &c, 1) == 1)
		if (write(p->fd_b_wr, reply, p->o->tcp ? RESPONSE_BYTES : 1) <= 0)
			break;
	return NULL;
}

static int setup_pipes(struct pair *p)
{
	int req[2], rep[2];

	if (pipe(req) || pipe(rep))
		return -1;
	p->fd_a = req[1];
	p->fd_b = req[0];
	p->fd_b_wr = rep[1];
	p->fd_a_rd = rep[0];
	return 0;
}

/* The echo side is the accepted (server-side) socket of our listener. */
static int setup_tcp(struct pair *p, int lfd, const struct sockaddr_in *addr)
{
	int one = 1, cfd, sfd;

	cfd = socket(AF_INET, SOCK_STREAM, 0);
	if (cfd < 0 || connect(cfd, (const struct sockaddr *)addr,
			       sizeof(*addr)))
		return -1;
	sfd = accept(lfd, NULL, NULL);
	if (sfd < 0)
		return -1;
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	p->fd_a = p->fd_a_rd = cfd;
	p->fd_b = p->fd_b_wr = sfd;
	return 0;
}

static int parse_args(int argc, char **argv, struct storm_opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "m:r:p:d:h")) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "pipe") && strcmp(optarg, "tcp"))
				goto bad;
			o->tcp = !strcmp(optarg, "tcp");
			break;
		case 'r':
			o->rate = atof(optarg);
			if (o->rate < 0)
				goto bad;
			break;
		case 'p':
			o->pairs = atoi(optarg);
			if (o->pairs < 1 || o->pairs > MAX_PAIRS)
				goto bad;
			break;
		case 'd':
			o->seconds = atof(optarg);
			if (o->seconds <= 0)
				goto bad;
			break;
		default:
			fprintf(stderr,
				"Usage: storm [-m pipe|tcp] [-r RATE] [-p PAIRS] [-d SECONDS]\n");
			return -1;
		}
	}
	return 0;
bad:
	fprintf(stderr, "storm: invalid -%c '%s'\n", c, optarg);
	return -1;
}

int main(int argc, char **argv)
{
	struct storm_opts o = { .rate = 10000, .pairs = 2, .seconds = 3 };
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	struct pair *pairs = NULL;
	uint64_t start, end, trips = 0;
	int lfd = -1, ret = 1, sig, i;
	sigset_t set;

	if (parse_args(argc, argv, &o))
		return 2;
	pairs = calloc(o.pairs, sizeof(*pairs));
	if (!pairs)
		goto cleanup;
	if (o.tcp) {
		addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, alen) ||
		    listen(lfd, MAX_PAIRS) ||
		    getsockname(lfd, (struct sockaddr *)&addr, &alen)) {
			perror("storm: listen");
			goto cleanup;
		}
	}
	for (i = 0; i < o.pairs; i++) {
		pairs[i].o = &o;
		if (o.tcp ? setup_tcp(&pairs[i], lfd, &addr) :
			    setup_pipes(&pairs[i])) {
			perror("storm: setup");
			goto cleanup;
		}
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	printf("storm: ready %d\n", (int)getpid());
	fflush(stdout);
	sigwait(&set, &sig);
	start = now_ns();
	for (i = 0; i < o.pairs; i++) {
		pairs[i].deadline = start + (uint64_t)(o.seconds * 1e9);
		if (pthread_create(&pairs[i].echo, NULL, echo_main, &pairs[i]) ||
		    pthread_create(&pairs[i].pacer, NULL, pacer_main,
				   &pairs[i])) {
			perror("storm: threads");
			exit(1);
		}
	}
	for (i = 0; i < o.pairs; i++) {
		pthread_join(pairs[i].pacer, NULL);
		pthread_join(pairs[i].echo, NULL);
		trips += pairs[i].trips;
	}
	end = now_ns();
	printf("storm: %llu round trips in %.3f s (%.0f/s, asked %.0f/s)\n",
	       (unsigned long long)trips, (end - start) / 1e9,
	       trips / ((end - start) / 1e9), o.rate);
	fflush(stdout);
	sigwait(&set, &sig);
	ret = 0;
cleanup:
	free(pairs);
	if (lfd >= 0)
		close(lfd);
	return ret;
}
