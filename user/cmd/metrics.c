// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* record --metrics (see metrics.h): libmicrohttpd's own thread answers
 * each scrape from a copy of the live totals. */
#include <arpa/inet.h>
#include <errno.h>
#ifndef TT_NO_MHD
#include <microhttpd.h>
#endif
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live.h"
#include "metrics.h"
#include "prom.h"
#include "util.h"

struct tt_metrics {
	struct MHD_Daemon *d;
	struct tt_live *live;
};

int tt_metrics_parse(const char *spec, struct sockaddr_storage *ss, char *err,
		     size_t errlen)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(spec, ':'), *port_s = spec;
	char host[64];
	size_t hlen = 0;
	long port;

	memset(ss, 0, sizeof(*ss));
	if (colon) {
		hlen = colon - spec;
		port_s = colon + 1;
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, spec, hlen);
		host[hlen] = 0;
	}
	if (tt_parse_long(port_s, 0, 65535, &port) && strcmp(port_s, "0"))
		goto bad;
	if (!colon || !strcmp(host, "localhost")) {
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		in->sin_port = htons(port);
		return 0;
	}
	if (hlen > 2 && host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = 0;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1)
			return 0;
		goto bad;
	}
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1)
		return 0;
bad:
	snprintf(
		err, errlen,
		"not an address: give PORT, ADDR:PORT or [ADDR6]:PORT (a numeric address, a port from 0 to 65535)");
	return -EINVAL;
}

#ifdef TT_NO_MHD
/* the static build (make static): no libmicrohttpd to link */
struct tt_metrics *tt_metrics_start(const char *spec, struct tt_live *live,
				    char *msg, size_t len)
{
	snprintf(msg, len,
		 "this ttftrace was built without libmicrohttpd (a static build): no metrics");
	return NULL;
}

void tt_metrics_stop(struct tt_metrics *m)
{
}
#else
static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct tt_metrics *m = cls;
	struct tt_live_totals *t = malloc(sizeof(*t));
	struct MHD_Response *resp;
	char *page = NULL;
	size_t len = 0;
	FILE *out = NULL;
	unsigned int status = MHD_HTTP_OK;
	enum MHD_Result ret = MHD_NO;

	if (!t)
		return MHD_NO;
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		status = MHD_HTTP_METHOD_NOT_ALLOWED;
		page = strdup("only GET\n");
	} else if (strcmp(url, "/metrics")) {
		status = MHD_HTTP_NOT_FOUND;
		page = strdup("ttftrace serves /metrics\n");
	} else {
		tt_live_totals(m->live, t);
		out = open_memstream(&page, &len);
		if (!out || tt_prom_text(out, t) || fclose(out)) {
			free(page);
			page = NULL;
		}
	}
	if (!page)
		goto cleanup;
	resp = MHD_create_response_from_buffer(strlen(page), page,
					       MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(page);
		goto cleanup;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
cleanup:
	free(t);
	return ret;
}

struct tt_metrics *tt_metrics_start(const char *spec, struct tt_live *live,
				    char *msg, size_t len)
{
	struct sockaddr_storage ss;
	struct tt_metrics *m;
	const union MHD_DaemonInfo *info;
	char host[INET6_ADDRSTRLEN];
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
	int port;

	if (tt_metrics_parse(spec, &ss, msg, len))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	m->live = live;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	port = ntohs(ss.ss_family == AF_INET6 ?
			     ((struct sockaddr_in6 *)&ss)->sin6_port :
			     ((struct sockaddr_in *)&ss)->sin_port);
	/* bound to the given address only, never to every interface */
	m->d = MHD_start_daemon(flags, port, NULL, NULL, answer, m,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				MHD_OPTION_END);
	if (!m->d) {
		snprintf(
			msg, len,
			"cannot listen there (in use, or not an address of this host)");
		free(m);
		return NULL;
	}
	info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info && info->port)
		port = info->port;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
			  host, sizeof(host));
		snprintf(msg, len, "http://[%s]:%d/metrics", host, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
			  sizeof(host));
		snprintf(msg, len, "http://%s:%d/metrics", host, port);
	}
	return m;
}

void tt_metrics_stop(struct tt_metrics *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	free(m);
}
#endif /* TT_NO_MHD */
