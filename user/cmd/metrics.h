/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* record --metrics: /metrics over HTTP through libmicrohttpd
 * (docs/design.md §10.3). */
#ifndef TT_METRICS_H
#define TT_METRICS_H

#include <stddef.h>
#include <sys/socket.h>

struct tt_live;
struct tt_metrics;

/* "PORT" (127.0.0.1), "ADDR:PORT", "[ADDR6]:PORT" into ss: 0, or -EINVAL
 * with a one-line reason in err. */
int tt_metrics_parse(const char *spec, struct sockaddr_storage *ss, char *err,
		     size_t errlen);
/* Serves the live totals at spec; NULL with the reason in msg, else msg
 * holds the URL (the bound port when spec gave 0). */
struct tt_metrics *tt_metrics_start(const char *spec, struct tt_live *live,
				    char *msg, size_t len);
void tt_metrics_stop(struct tt_metrics *m);

#endif /* TT_METRICS_H */
