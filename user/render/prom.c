// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The live totals for Prometheus (see prom.h): base units (seconds),
 * counters ending in _total, one HELP and TYPE per family. */
#include <errno.h>
#include <string.h>
#include "analyzer.h"
#include "prom.h"

static void hist_lines(FILE *out, const char *name, const char *label,
		       const struct tt_live_hist *h,
		       enum tt_live_hist_kind kind)
{
	size_t n, i;
	const __u64 *b = tt_live_buckets(kind, &n);
	__u64 cum = 0;

	for (i = 0; i < n; i++) {
		cum += h->bucket[i];
		fprintf(out, "%s_bucket{%sle=\"%g\"} %llu\n", name, label,
			(double)b[i] / 1e9, (unsigned long long)cum);
	}
	fprintf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, label,
		(unsigned long long)h->count);
	/* a bare name when there is no label */
	if (*label)
		fprintf(out, "%s_sum{%.*s} %.9f\n%s_count{%.*s} %llu\n", name,
			(int)(strlen(label) - 1), label,
			(double)h->sum_ns / 1e9, name, (int)(strlen(label) - 1),
			label, (unsigned long long)h->count);
	else
		fprintf(out, "%s_sum %.9f\n%s_count %llu\n", name,
			(double)h->sum_ns / 1e9, name,
			(unsigned long long)h->count);
}

static void family(FILE *out, const char *name, const char *type,
		   const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A counter without labels: its family and its one sample. */
static void counter(FILE *out, const char *name, const char *help, __u64 v)
{
	family(out, name, "counter", help);
	fprintf(out, "%s %llu\n", name, (unsigned long long)v);
}

int tt_prom_text(FILE *out, const struct tt_live_totals *t)
{
	char label[64], reason[32];
	unsigned int k;

	family(out, "ttftrace_ttft_seconds", "histogram",
	       "Time to first token of complete requests: first request byte in the kernel to the first token's first byte on the device.");
	hist_lines(out, "ttftrace_ttft_seconds", "", &t->ttft, TT_LIVE_H_TTFT);
	family(out, "ttftrace_tpot_seconds", "histogram",
	       "Time per output token of complete requests with two tokens or more, at the wire.");
	hist_lines(out, "ttftrace_tpot_seconds", "", &t->tpot, TT_LIVE_H_TPOT);
	family(out, "ttftrace_itl_seconds", "histogram",
	       "Inter-token latency: each gap between two token sends of complete requests, at the wire.");
	hist_lines(out, "ttftrace_itl_seconds", "", &t->itl, TT_LIVE_H_ITL);
	family(out, "ttftrace_stage_seconds", "histogram",
	       "Time of each stage on the critical path of complete requests (one observation per request and stage, zeros included).");
	for (k = 0; k < TT_LIVE_ROWS; k++) {
		snprintf(label, sizeof(label), "stage=\"%s\",",
			 tt_stage_row_name(k));
		hist_lines(out, "ttftrace_stage_seconds", label, &t->stage[k],
			   TT_LIVE_H_TTFT);
	}
	counter(out, "ttftrace_requests_total",
		"Requests seen to their end, complete or not.", t->requests);
	counter(out, "ttftrace_hops_total",
		"A traced gateway's calls to a traced runner on this host, counted apart from the requests.",
		t->hops);
	counter(out, "ttftrace_tls_exchanges_total",
		"Exchanges on TLS connections that no probe read (handshakes, or requests whose plaintext the TLS probes did not see), counted apart from the requests.",
		t->tls);
	counter(out, "ttftrace_complete_requests_total",
		"Requests whose every timestamp is backed by events.",
		t->complete);
	family(out, "ttftrace_incomplete_requests_total", "counter",
	       "Incomplete requests by reason (a request may have several).");
	for (k = 0; k < TT_INC_NBITS; k++)
		fprintf(out,
			"ttftrace_incomplete_requests_total{reason=\"%s\"} %llu\n",
			tt_incomplete_str(1u << k, reason, sizeof(reason)),
			(unsigned long long)t->incomplete[k]);
	counter(out, "ttftrace_dropped_records_total",
		"Records the ring buffer could not take.", t->lost);
	counter(out, "ttftrace_events_total",
		"Events received from the kernel.", t->events);
	return ferror(out) ? -EIO : 0;
}
