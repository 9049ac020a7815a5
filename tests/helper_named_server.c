// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Test helper: a one-thread streaming server whose thread names itself
 * with bytes a terminal or a JSON reader would choke on (issue 13, items
 * 9 and 10). It takes the name given in hex at start, and the second one
 * when its first request arrives (so that both the recording's process
 * table and a rename record carry hostile bytes). Each request (headers
 * and a Content-Length body) is answered with an SSE stream of --tokens
 * events and [DONE] on the kept-alive connection.
 *
 *   helper_named_server --port-file F --name HEX --rename HEX [--tokens N]
 *
 * SIGTERM or SIGINT stops it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQ_BUF 4096
#define NAME_LEN 16 /* TASK_COMM_LEN */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* "1b5b324a" -> bytes, at most NAME_LEN - 1 */
static void unhex(const char *hex, char *out)
{
	size_t n = 0;
	unsigned int b;

	while (n < NAME_LEN - 1 && sscanf(hex + 2 * n, "%2x", &b) == 1)
		out[n++] = (char)b;
	out[n] = '\0';
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads one request (headers, then Content-Length bytes); 0 at EOF. */
static int read_request(int fd, char *buf, size_t *have)
{
	const char *end, *cl;
	size_t need;
	ssize_t r;

	for (;;) {
		buf[*have] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end) {
			cl = strcasestr(buf, "content-length:");
			need = (size_t)(end + 4 - buf) +
			       (cl && cl < end ? strtoul(cl + 15, NULL, 10) :
						 0);
			if (*have >= need) {
				memmove(buf, buf + need, *have - need);
				*have -= need;
				return 1;
			}
		}
		if (*have >= REQ_BUF - 1)
			return -1;
		r = read(fd, buf + *have, REQ_BUF - 1 - *have);
		if (r <= 0)
			return 0;
		*have += (size_t)r;
	}
}

static void serve(int fd, int tokens, const char *rename, int *renamed)
{
	static const char headers[] =
		"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
		"transfer-encoding: identity\r\nconnection: keep-alive\r\n\r\n";
	char buf[REQ_BUF], ev[64];
	size_t have = 0;
	int i, n;

	while (!stop && read_request(fd, buf, &have) == 1) {
		if (!*renamed) {
			prctl(PR_SET_NAME, rename);
			*renamed = 1;
		}
		if (write_all(fd, headers, sizeof(headers) - 1))
			return;
		for (i = 0; i < tokens; i++) {
			usleep(2000);
			n = snprintf(ev, sizeof(ev), "data: {\"token\":%d}\n\n",
				     i);
			if (write_all(fd, ev, (size_t)n))
				return;
		}
		if (write_all(fd, "data: [DONE]\n\n", 14))
			return;
	}
}

int main(int argc, char **argv)
{
	const char *port_file = NULL, *name_hex = "", *rename_hex = "";
	char name[NAME_LEN], rename[NAME_LEN];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int tokens = 4, renamed = 0, ls, fd, one = 1;
	struct sigaction act = { .sa_handler = on_signal };
	FILE *f;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--port-file"))
			port_file = argv[i + 1];
		else if (!strcmp(argv[i], "--name"))
			name_hex = argv[i + 1];
		else if (!strcmp(argv[i], "--rename"))
			rename_hex = argv[i + 1];
		else if (!strcmp(argv[i], "--tokens"))
			tokens = atoi(argv[i + 1]);
	}
	if (!port_file) {
		fprintf(stderr,
			"usage: %s --port-file F --name HEX --rename HEX [--tokens N]\n",
			argv[0]);
		return 2;
	}
	unhex(name_hex, name);
	unhex(rename_hex, rename);
	prctl(PR_SET_NAME, name);
	sigaction(SIGTERM, &act, NULL);
	sigaction(SIGINT, &act, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ls, 16) || getsockname(ls, (struct sockaddr *)&sa, &len)) {
		perror("listen");
		return 1;
	}
	f = fopen(port_file, "w");
	if (!f)
		return 1;
	fprintf(f, "%u\n", ntohs(sa.sin_port));
	fclose(f);
	while (!stop) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		serve(fd, tokens, rename, &renamed);
		close(fd);
	}
	close(ls);
	return 0;
}
