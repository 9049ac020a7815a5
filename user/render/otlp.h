/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Requests as OpenTelemetry spans (docs/design.md §11.3): an OTLP
 * ExportTraceServiceRequest in the protobuf encoding, one span per request
 * with a child span per stretch of its critical path in one stage, and
 * attributes after OpenTelemetry's GenAI semantic conventions.
 */
#ifndef TT_OTLP_H
#define TT_OTLP_H

#include <stddef.h>
#include "analyzer.h"

/* A growing byte buffer, the encoded message. */
struct tt_pbuf {
	unsigned char *p;
	size_t len, cap;
	int err; /* -ENOMEM once an append failed: the message is void */
};

/* Where the spans come from: the host, and how trace time (CLOCK_MONOTONIC)
 * maps to Unix time. */
struct tt_otlp_src {
	const char *hostname;
	__u64 mono_ns, real_ns; /* one instant on both clocks */
};

/* At most this many child spans a request; a longer path is cut (the
 * request span says how many were left out). */
#define TT_OTLP_MAX_CHILDREN 128

/*
 * Appends request i of a (after tt_analyzer_finish) to the request being
 * built in b, as a ResourceSpans of its own (service.name the server
 * process's name). Returns the spans added, or -ENOMEM.
 */
int tt_otlp_add_request(struct tt_pbuf *b, const struct tt_otlp_src *src,
			const struct tt_analyzer *a, size_t i);
/* The trace id (16 bytes) and the request span's id (8 bytes) of r: a hash
 * of the host, the server process, its socket and arrival, so that the
 * same request exported twice (live, then from its recording) has the
 * same ids. */
void tt_otlp_ids(const struct tt_otlp_src *src, const struct tt_request *r,
		 unsigned char trace_id[16], unsigned char span_id[8]);
void tt_pbuf_free(struct tt_pbuf *b);

#endif /* TT_OTLP_H */
