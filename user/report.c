/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Text and JSON renderers of an analysis (see report.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "report.h"
#include "stats.h"

#define NREASONS 7 /* TT_INC_* bits */

/* What the percentiles are taken over. */
struct report_data {
	struct tt_u64vec ttft, tpot, itl;
	struct tt_summary s_ttft, s_tpot, s_itl;
	size_t complete, incomplete;
	size_t reasons[NREASONS]; /* incomplete requests per TT_INC_* bit */
};

static void data_free(struct report_data *d)
{
	tt_u64vec_free(&d->ttft);
	tt_u64vec_free(&d->tpot);
	tt_u64vec_free(&d->itl);
}

static int collect(const struct tt_analyzer *a, const struct tt_report_opts *o,
		   struct report_data *d)
{
	const struct tt_request *r;
	const __u64 *gaps;
	size_t i, k, n;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		if (r->complete) {
			d->complete++;
		} else {
			d->incomplete++;
			for (k = 0; k < NREASONS; k++)
				if (r->incomplete & (1u << k))
					d->reasons[k]++;
		}
		if (!r->complete && !o->include_incomplete)
			continue;
		if ((r->complete || r->ttft) &&
		    tt_u64vec_push(&d->ttft, r->ttft))
			return -ENOMEM;
		if (r->tokens >= 2 && r->t_last_write >= r->t_first_write &&
		    r->t_first_write && tt_u64vec_push(&d->tpot, r->tpot))
			return -ENOMEM;
		gaps = tt_analyzer_request_itl(a, i, &n);
		if (n && tt_u64vec_reserve(&d->itl, n))
			return -ENOMEM;
		for (k = 0; k < n; k++)
			d->itl.v[d->itl.n++] = gaps[k];
	}
	tt_summarize(d->ttft.v, d->ttft.n, &d->s_ttft);
	tt_summarize(d->tpot.v, d->tpot.n, &d->s_tpot);
	tt_summarize(d->itl.v, d->itl.n, &d->s_itl);
	return 0;
}

const char *tt_report_peer(const struct tt_request *r, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	memcpy(&a6, r->raddr, sizeof(a6)); /* raddr is not 4-byte aligned */
	if (r->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&a6)) {
		/* a dual-stack listener: the client is an IPv4 one */
		inet_ntop(AF_INET, r->raddr + 12, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else if (r->family == AF_INET6) {
		inet_ntop(AF_INET6, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, r->rport);
	} else if (r->family == AF_INET) {
		inet_ntop(AF_INET, r->raddr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, r->rport);
	} else {
		snprintf(buf, len, "unknown");
	}
	return buf;
}

/* ---- text ---- */

/* b - a in ms, or "-" when either end is unknown or they are reversed. */
static const char *span_ms(char *buf, size_t len, __u64 a, __u64 b)
{
	if (!a || !b || b < a)
		return "-";
	return tt_fmt_ms(buf, len, b - a);
}

static void text_row(FILE *out, const char *name, const struct tt_summary *s,
		     const char *unit_of_n)
{
	char p50[32], p90[32], p99[32], max[32];

	if (!s->n) {
		fprintf(out, "%-10s %10s %10s %10s %10s  (no %s)\n", name, "-",
			"-", "-", "-", unit_of_n);
		return;
	}
	fprintf(out, "%-10s %10s %10s %10s %10s  (%zu %s)\n", name,
		tt_fmt_ms(p50, sizeof(p50), s->p50),
		tt_fmt_ms(p90, sizeof(p90), s->p90),
		tt_fmt_ms(p99, sizeof(p99), s->p99),
		tt_fmt_ms(max, sizeof(max), s->max), s->n, unit_of_n);
}

static void text_table(FILE *out, const struct tt_analyzer *a)
{
	char peer[64], why[128], b1[32], b2[32], b3[32], b4[32], b5[32];
	const struct tt_request *r;
	size_t i;

	fprintf(out, "\n%6s %-22s %10s %11s %10s %10s %6s %9s %s\n", "ID",
		"PEER", "TTFT_MS", "ARRIVE>READ", "READ>WRITE", "WRITE>WIRE",
		"TOKENS", "TPOT_MS", "STATUS");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		fprintf(out, "%6llu %-22s %10s %11s %10s %10s %6u %9s %s\n",
			(unsigned long long)r->id,
			tt_report_peer(r, peer, sizeof(peer)),
			r->ttft ? tt_fmt_ms(b1, sizeof(b1), r->ttft) : "-",
			span_ms(b2, sizeof(b2), r->t_arrive, r->t_read),
			span_ms(b3, sizeof(b3), r->t_read, r->t_first_write),
			span_ms(b4, sizeof(b4), r->t_first_write, r->t_wire),
			r->tokens,
			r->tokens >= 2 ? tt_fmt_ms(b5, sizeof(b5), r->tpot) :
					 "-",
			r->complete ? "complete" :
				      tt_incomplete_str(r->incomplete, why,
							sizeof(why)));
	}
}

int tt_report_text(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o)
{
	struct report_data d;
	char why[64];
	size_t k;
	bool first = true;
	int err;

	err = collect(a, o, &d);
	if (err)
		goto cleanup;
	if (meta) {
		fprintf(out, "host: %.*s  kernel: %.*s\n",
			(int)sizeof(meta->hostname), meta->hostname,
			(int)sizeof(meta->kernel), meta->kernel);
		if (meta->options[0])
			fprintf(out, "recorded with: %.*s\n",
				(int)sizeof(meta->options), meta->options);
	}
	fprintf(out, "requests: %zu (complete %zu, incomplete %zu)\n",
		d.complete + d.incomplete, d.complete, d.incomplete);
	if (d.incomplete) {
		fprintf(out, "incomplete:");
		for (k = 0; k < NREASONS; k++) {
			if (!d.reasons[k])
				continue;
			fprintf(out, "%s %s %zu", first ? "" : ",",
				tt_incomplete_str(1u << k, why, sizeof(why)),
				d.reasons[k]);
			first = false;
		}
		fprintf(out, "\n");
	}
	fprintf(out, "drops: %llu lost records%s\n",
		(unsigned long long)tt_analyzer_lost(a),
		tt_analyzer_lost(a) ?
			" (requests overlapping them are incomplete)" :
			"");
	fprintf(out, "events: %llu\n",
		(unsigned long long)tt_analyzer_events(a));
	fprintf(out, "\n%-10s %10s %10s %10s %10s  %s\n", "(ms)", "p50", "p90",
		"p99", "max",
		o->include_incomplete ? "(incomplete requests included)" :
					"(complete requests)");
	text_row(out, "TTFT", &d.s_ttft, "requests");
	text_row(out, "TPOT", &d.s_tpot, "requests");
	text_row(out, "ITL", &d.s_itl, "gaps");
	fprintf(out,
		"TTFT (wire): first request byte in the kernel to first token byte on the device.\n");
	if (o->requests)
		text_table(out, a);
	err = ferror(out) ? -EIO : 0;
cleanup:
	data_free(&d);
	return err;
}

/* ---- JSON ---- */

/* s as a JSON string, at most max bytes (fixed-size fields may fill up) */
static void json_str(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	const unsigned char *end = p + max;

	fputc('"', out);
	for (; p < end && *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

/* "name":value, or "name":null when value is 0 (unknown) */
static void json_opt(FILE *out, const char *name, __u64 v)
{
	if (v)
		fprintf(out, ",\"%s\":%llu", name, (unsigned long long)v);
	else
		fprintf(out, ",\"%s\":null", name);
}

static void json_summary(FILE *out, const char *name,
			 const struct tt_summary *s)
{
	if (!s->n) {
		fprintf(out,
			",\"%s\":{\"p50\":null,\"p90\":null,\"p99\":null,\"max\":null,\"n\":0}",
			name);
		return;
	}
	fprintf(out,
		",\"%s\":{\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"max\":%llu,\"n\":%zu}",
		name, (unsigned long long)s->p50, (unsigned long long)s->p90,
		(unsigned long long)s->p99, (unsigned long long)s->max, s->n);
}

static void json_request(FILE *out, const struct tt_analyzer *a,
			 const struct tt_request *r)
{
	char peer[64], why[128];
	const char *comm;

	fprintf(out, "{\"id\":%llu,\"peer\":", (unsigned long long)r->id);
	json_str(out, tt_report_peer(r, peer, sizeof(peer)), sizeof(peer));
	json_opt(out, "t_arrive_ns", r->t_arrive);
	json_opt(out, "t_read_ns", r->t_read);
	json_opt(out, "t_first_write_ns", r->t_first_write);
	json_opt(out, "t_wire_ns", r->t_wire);
	json_opt(out, "ttft_ns", r->ttft);
	fprintf(out, ",\"tokens\":%u", r->tokens);
	if (r->tokens >= 2)
		fprintf(out, ",\"tpot_ns\":%llu", (unsigned long long)r->tpot);
	else
		fprintf(out, ",\"tpot_ns\":null");
	fprintf(out, ",\"complete\":%s", r->complete ? "true" : "false");
	json_opt(out, "t_headers_ns", r->t_headers);
	json_opt(out, "t_last_write_ns", r->t_last_write);
	json_opt(out, "t_end_ns", r->t_end);
	fprintf(out, ",\"bytes_in\":%llu,\"bytes_out\":%llu,\"lport\":%u",
		(unsigned long long)r->bytes_in,
		(unsigned long long)r->bytes_out, r->lport);
	fprintf(out, ",\"tgid\":%u,\"writer_tid\":%u", r->tgid, r->writer_tid);
	comm = r->writer_tid ? tt_analyzer_comm(a, r->writer_tid) : NULL;
	if (comm) {
		fprintf(out, ",\"writer_comm\":");
		json_str(out, comm, TT_COMM_LEN);
	}
	fprintf(out, ",\"closed_mid_stream\":%s,\"lost\":%s",
		r->closed_mid_stream ? "true" : "false",
		r->lost ? "true" : "false");
	if (r->complete) {
		fprintf(out, ",\"incomplete_reason\":null}");
	} else {
		fprintf(out, ",\"incomplete_reason\":");
		json_str(out,
			 tt_incomplete_str(r->incomplete, why, sizeof(why)),
			 sizeof(why));
		fputc('}', out);
	}
}

int tt_report_json(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o)
{
	struct report_data d;
	size_t i;
	int err;

	err = collect(a, o, &d);
	if (err)
		goto cleanup;
	fprintf(out, "{\"requests\":[");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		if (i)
			fputc(',', out);
		json_request(out, a, tt_analyzer_request(a, i));
	}
	fprintf(out,
		"],\"summary\":{\"requests\":%zu,\"complete\":%zu,"
		"\"incomplete\":%zu,\"include_incomplete\":%s",
		d.complete + d.incomplete, d.complete, d.incomplete,
		o->include_incomplete ? "true" : "false");
	json_summary(out, "ttft_ns", &d.s_ttft);
	json_summary(out, "tpot_ns", &d.s_tpot);
	json_summary(out, "itl_ns", &d.s_itl);
	fprintf(out, ",\"drops\":%llu,\"events\":%llu}",
		(unsigned long long)tt_analyzer_lost(a),
		(unsigned long long)tt_analyzer_events(a));
	if (meta) {
		fprintf(out, ",\"meta\":{\"hostname\":");
		json_str(out, meta->hostname, sizeof(meta->hostname));
		fprintf(out, ",\"kernel\":");
		json_str(out, meta->kernel, sizeof(meta->kernel));
		fprintf(out, ",\"options\":");
		json_str(out, meta->options, sizeof(meta->options));
		fputc('}', out);
	}
	fprintf(out, "}\n");
	err = ferror(out) ? -EIO : 0;
cleanup:
	data_free(&d);
	return err;
}
