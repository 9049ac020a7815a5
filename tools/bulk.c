/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * bulk: a bulk sender and its sink, to fill a shaped link's queue while
 * ttftrace measures what that costs a response sharing it. UDP keeps the
 * queue as full as the socket's send buffer allows (TCP small queues keep a
 * lone TCP flow from filling it). Both ends stop by themselves.
 */
#include <getopt.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/time.h>

#include "demo_common.h"

#define MAX_LEN 65000
#define MAX_CONNS 16

struct bulk_opts {
	bool sink;
	bool udp;
	bool quiet;
	const char *host;	/* send: where to; sink: listen address */
	int port;
	uint64_t duration_ns;
	size_t len;		/* bytes per send */
};

static const char *prog = "bulk";

/* one line on stderr and exit status 2 */
#define usage_error(...) demo_usage_exit(prog, __VA_ARGS__)

static void usage(FILE *f)
{
	fprintf(f,
"Usage: bulk send -H HOST -p PORT [-u] [-t SECONDS] [-l BYTES]\n"
"       bulk sink -p PORT [-a ADDR] [-u] [-t SECONDS]\n"
"Sends as fast as the socket lets it to HOST:PORT (TCP, or UDP datagrams\n"
"with -u), or receives and discards on PORT, for SECONDS (default 30).\n"
"\n"
"Options:\n"
"  -H, --host HOST         send: the sink's address\n"
"  -a, --addr ADDR         sink: listen address (default 0.0.0.0)\n"
"  -p, --port PORT         port\n"
"  -u, --udp               UDP instead of TCP\n"
"  -t, --time SECONDS      stop after SECONDS (default 30)\n"
"  -l, --length BYTES      bytes per send (default 1400)\n"
"  -q, --quiet             no summary line\n"
"  -h, --help              this help\n"
"\n"
"Examples:\n"
"  ip netns exec cli bulk sink -u -p 9000 -t 20 &\n"
"  ip netns exec srv bulk send -u -H 10.200.0.2 -p 9000 -t 20\n");
}

static int open_socket(const struct bulk_opts *o, bool bind_it)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = o->udp ? SOCK_DGRAM : SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | (bind_it ? AI_PASSIVE : 0),
	}, *res = NULL;
	struct timeval tv = { .tv_usec = 100000 };
	char port[16], hostbuf[128];
	int fd, one = 1, rc;

	snprintf(port, sizeof(port), "%d", o->port);
	rc = getaddrinfo(host_unbracket(o->host, hostbuf, sizeof(hostbuf)),
			 port, &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: bad address '%s': %s\n", prog, o->host,
			gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* blocked calls come back often enough to see the deadline */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (bind_it) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) ||
		    (!o->udp && listen(fd, MAX_CONNS)))
			goto fail;
	} else {
		for (int i = 0; connect(fd, res->ai_addr, res->ai_addrlen);
		     i++) {
			/* the sink may still be starting: 2 s of retries */
			if (errno != ECONNREFUSED || i >= 40)
				goto fail;
			close(fd);
			sleep_until_ns(mono_ns() + 50 * NSEC_PER_MSEC);
			fd = socket(res->ai_family,
				    res->ai_socktype | SOCK_CLOEXEC, 0);
			if (fd < 0)
				goto fail;
			setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				   sizeof(tv));
		}
	}
	freeaddrinfo(res);
	return fd;
fail:
	fprintf(stderr, "%s: %s %s port %d: %s\n", prog,
		bind_it ? "cannot listen on" : "cannot reach", o->host, o->port,
		strerror(errno));
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	return -1;
}

static int run_send(const struct bulk_opts *o, uint64_t deadline,
		    uint64_t *bytes)
{
	char *buf = calloc(1, o->len);
	ssize_t n;
	int fd;

	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	fd = open_socket(o, false);
	if (fd < 0) {
		free(buf);
		return 1;
	}
	while (mono_ns() < deadline) {
		n = send(fd, buf, o->len, MSG_NOSIGNAL);
		if (n > 0) {
			*bytes += (uint64_t)n;
			continue;
		}
		/* a full queue, a timeout, a sink not there yet: go on */
		if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS ||
		    (o->udp && errno == ECONNREFUSED))
			continue;
		fprintf(stderr, "%s: send: %s\n", prog, strerror(errno));
		break;
	}
	close(fd);
	free(buf);
	return 0;
}

static int run_sink(const struct bulk_opts *o, uint64_t deadline,
		    uint64_t *bytes)
{
	struct pollfd pfds[MAX_CONNS + 1];
	static char buf[MAX_LEN];
	int n = 1, i, fd;
	ssize_t got;

	fd = open_socket(o, true);
	if (fd < 0)
		return 1;
	pfds[0] = (struct pollfd) { .fd = fd, .events = POLLIN };
	while (mono_ns() < deadline) {
		if (poll(pfds, n, 100) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (!pfds[i].revents)
				continue;
			if (i == 0 && !o->udp) {
				fd = accept4(pfds[0].fd, NULL, NULL,
					     SOCK_CLOEXEC);
				if (fd >= 0 && n <= MAX_CONNS)
					pfds[n++] = (struct pollfd) {
						.fd = fd, .events = POLLIN };
				else if (fd >= 0)
					close(fd);
				continue;
			}
			got = recv(pfds[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (got > 0) {
				*bytes += (uint64_t)got;
			} else if (i && (!got || (errno != EAGAIN &&
						 errno != EINTR))) {
				close(pfds[i].fd);
				pfds[i--] = pfds[--n];
			}
		}
	}
	for (i = 0; i < n; i++)
		close(pfds[i].fd);
	return 0;
}

static void parse_args(int argc, char **argv, struct bulk_opts *o)
{
	static const struct option longopts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "udp", no_argument, NULL, 'u' },
		{ "time", required_argument, NULL, 't' },
		{ "length", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *addr = NULL;
	double secs;
	uint64_t v;
	int c;

	*o = (struct bulk_opts) { .duration_ns = 30 * NSEC_PER_SEC,
				  .len = 1400 };
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		exit(0);
	}
	if (argc < 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "sink")))
		usage_error("want 'send' or 'sink' first");
	o->sink = !strcmp(argv[1], "sink");
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":H:a:p:ut:l:qh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'H':
		case 'a':
			addr = optarg;
			break;
		case 'p':
			if (!parse_u64_range(optarg, 1, 65535, &v))
				usage_error("invalid --port '%s'", optarg);
			o->port = (int)v;
			break;
		case 'u':
			o->udp = true;
			break;
		case 't':
			if (!parse_double_nonneg(optarg, &secs) || secs <= 0 ||
			    secs > 86400)
				usage_error("invalid --time '%s' (want seconds "
					    "> 0)", optarg);
			o->duration_ns = (uint64_t)(secs * 1e9);
			break;
		case 'l':
			if (!parse_u64_range(optarg, 1, MAX_LEN, &v))
				usage_error("invalid --length '%s' (want "
					    "1..%d)", optarg, MAX_LEN);
			o->len = (size_t)v;
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
	if (!o->port)
		usage_error("-p PORT is required");
	if (!o->sink && !addr)
		usage_error("send needs -H HOST");
	o->host = addr ? addr : "0.0.0.0";
}

int main(int argc, char **argv)
{
	struct bulk_opts o;
	uint64_t start, bytes = 0;
	double secs;
	int ret;

	parse_args(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	start = mono_ns();
	ret = o.sink ? run_sink(&o, start + o.duration_ns, &bytes) :
		       run_send(&o, start + o.duration_ns, &bytes);
	secs = (double)(mono_ns() - start) / 1e9;
	if (!ret && !o.quiet)
		printf("%s: %s %llu bytes in %.1f s (%.2f Mbit/s)\n", prog,
		       o.sink ? "received" : "sent", (unsigned long long)bytes,
		       secs, (double)bytes * 8 / 1e6 / (secs > 0 ? secs : 1));
	return ret;
}
