/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * OTLP/HTTP export (docs/design.md §11.3): encoded span batches POSTed to
 * URL/v1/traces by a thread of their own, from a bounded queue, so that a
 * slow or absent receiver never holds up recording: a batch that finds the
 * queue full is dropped and counted.
 */
#ifndef TT_OTLP_SEND_H
#define TT_OTLP_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include "otlp.h"

struct tt_otlp_sender;

struct tt_otlp_send_stats {
	__u64 batches_sent, spans_sent;
	__u64 batches_dropped, spans_dropped; /* queue full, or failed */
	__u64 retries;
	char last_error[160]; /* why the last failed attempt failed */
};

/* "http://HOST[:PORT][/PATH]" (PORT 4318 by default; /v1/traces is added
 * unless PATH ends with it). NULL with a one-line reason in err. */
struct tt_otlp_sender *tt_otlp_sender_open(const char *url, char *err,
					   size_t errlen);
/* Queues msg (taken over, left empty) holding spans spans. block: wait for
 * room (a recording exported after the fact); else drop it when the queue
 * is full. 0, or -ENOSPC when dropped. */
int tt_otlp_sender_push(struct tt_otlp_sender *s, struct tt_pbuf *msg,
			size_t spans, bool block);
/* Sends what is queued for at most wait_ns, then stops; what is left is
 * dropped and counted. st may be NULL. */
void tt_otlp_sender_close(struct tt_otlp_sender *s, __u64 wait_ns,
			  struct tt_otlp_send_stats *st);

#endif /* TT_OTLP_SEND_H */
