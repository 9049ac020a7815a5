/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Text and JSON renderers of an analysis (see report.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "json.h"
#include "report.h"
#include "slo.h"
#include "stats.h"
#include "text.h"
#include "util.h"

#define NREASONS TT_INC_NBITS

/*
 * Rows of a stage breakdown: the stages of enum tt_stage, and one more,
 * "other", the sum of its three sub-stages. Printed in ROW_ORDER: each
 * sub-stage of other under it.
 */
#define ROW_OTHER TT_ST_MAX
#define NROWS (TT_ST_MAX + 1)
static const int row_order[NROWS] = {
	TT_ST_NET_IN,	TT_ST_NET_OUT, TT_ST_BACKLOG, TT_ST_QUEUE,
	TT_ST_RUNQUEUE, TT_ST_STORAGE, TT_ST_GPU,     TT_ST_CPU,
	ROW_OTHER,	TT_ST_SLEEP,   TT_ST_LOCK,    TT_ST_UNKNOWN,
};
/* The stages of the JSON "stages" object and of DOMINANT: other whole. */
#define NMAIN TT_ST_ROWS
static const int main_rows[NMAIN] = {
	TT_ST_NET_IN, TT_ST_NET_OUT,  TT_ST_BACKLOG,
	TT_ST_QUEUE,  TT_ST_RUNQUEUE, TT_ST_STORAGE,
	TT_ST_GPU,    TT_ST_CPU,      ROW_OTHER,
};
static const int other_rows[3] = { TT_ST_SLEEP, TT_ST_LOCK, TT_ST_UNKNOWN };
/* The percentiles whose request the breakdown shows. */
static const double pick_pct[3] = { 50, 90, 99 };

static bool row_is_sub(int row)
{
	return row == TT_ST_SLEEP || row == TT_ST_LOCK || row == TT_ST_UNKNOWN;
}

static const char *row_name(int row)
{
	return row == ROW_OTHER ? "other" : tt_stage_name(row);
}

static __u64 row_ns(const struct tt_request *r, int row)
{
	if (row != ROW_OTHER)
		return r->stage_ns[row];
	return tt_stage_row_ns(r->stage_ns, TT_ST_MAIN);
}

/* The critical path of request i was walked: its stages sum to its TTFT. */
static bool has_stages(const struct tt_analyzer *a, size_t i)
{
	const struct tt_cp_result *res = tt_analyzer_cp_result(a, i);

	return res && !(res->incomplete & TT_CP_INC_NOT_WALKED);
}

/* The stage (other whole) with the most time, NULL when there is none. */
static const char *dominant(const struct tt_analyzer *a, size_t i)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	__u64 best = 0;
	int k, row = -1;

	if (!has_stages(a, i))
		return NULL;
	for (k = 0; k < NMAIN; k++) {
		if (row_ns(r, main_rows[k]) > best) {
			best = row_ns(r, main_rows[k]);
			row = main_rows[k];
		}
	}
	return row < 0 ? NULL : row_name(row);
}

/* What the percentiles are taken over. */
struct report_data {
	struct tt_u64vec ttft, tpot;
	struct tt_summary s_ttft, s_tpot, s_itl, s_itl_emit;
	size_t complete, incomplete;
	size_t hops; /* counted apart: inside the requests that made them */
	/* hops among multiplexed HTTP/2 streams, requests through them */
	size_t h2_mux_hops, h2_mux;
	/* TLS (docs/design.md §3.1): requests read as OpenSSL's plaintext;
	 * exchanges of their connections with no HTTP (handshakes, tickets,
	 * alerts: counted apart); requests on encrypted connections with no
	 * plaintext seen (incomplete) */
	size_t tls_plain, tls_apart, tls_unread;
	bool *apart; /* per request: a TLS exchange counted apart, or NULL */
	size_t reasons[NREASONS]; /* incomplete requests per TT_INC_* bit */
	size_t errors, no_token; /* answered without tokens: counted apart */
	size_t bunched; /* of the TPOT requests, tokens bunched at the wire */
	size_t itl_bunched; /* of the ITL gaps, emitted apart, left together */
	/* of the TTFT percentiles' requests, those whose path lost time to
	 * the hypervisor (steal_ns), in all and the most one lost */
	size_t stolen;
	__u64 steal_total, steal_max;
	/* the requests of the TTFT percentiles whose stages are known */
	struct tt_u64vec stage[NROWS];
	struct tt_summary s_stage[NROWS];
	unsigned __int128 stage_total[NROWS], ttft_total;
	struct tt_u64vec members; /* indices of the TTFT percentiles' requests */
	/* index of the request whose TTFT is each pick_pct, or SIZE_MAX */
	size_t pick[3];
};

static void data_free(struct report_data *d)
{
	int k;

	tt_u64vec_free(&d->ttft);
	tt_u64vec_free(&d->tpot);
	for (k = 0; k < NROWS; k++)
		tt_u64vec_free(&d->stage[k]);
	tt_u64vec_free(&d->members);
	free(d->apart);
}

/* Adds request i's stages to the breakdown. */
static int collect_stages(const struct tt_analyzer *a, size_t i,
			  struct report_data *d)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	int k;

	if (!has_stages(a, i))
		return 0;
	for (k = 0; k < NROWS; k++) {
		if (tt_u64vec_push(&d->stage[k], row_ns(r, k)))
			return -ENOMEM;
		d->stage_total[k] += row_ns(r, k);
	}
	d->ttft_total += r->ttft;
	return 0;
}

/* The first request (in id order) whose TTFT is each percentile. */
static void pick_requests(const struct tt_analyzer *a, struct report_data *d)
{
	__u64 want;
	size_t j;
	int k;

	for (k = 0; k < 3; k++) {
		d->pick[k] = SIZE_MAX;
		if (!d->s_ttft.n)
			continue;
		want = tt_percentile_sorted(d->ttft.v, d->ttft.n, pick_pct[k]);
		for (j = 0; j < d->members.n; j++) {
			if (tt_analyzer_request(a, d->members.v[j])->ttft ==
			    want) {
				d->pick[k] = d->members.v[j];
				break;
			}
		}
	}
}

static int collect(const struct tt_analyzer *a, const struct tt_report_opts *o,
		   struct report_data *d)
{
	const struct tt_request *r;
	size_t i, k;
	int err = 0;

	memset(d, 0, sizeof(*d));
	err = tt_analyzer_tls_apart(a, &d->apart);
	if (err)
		goto cleanup;
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		if (r->incomplete & TT_INC_HOP) {
			d->hops++;
			d->h2_mux_hops += r->h2_mux;
			continue;
		}
		d->tls_plain += r->tls;
		if (d->apart && d->apart[i]) {
			d->tls_apart++;
			continue;
		}
		d->h2_mux += r->h2_mux;
		d->tls_unread += !!(r->incomplete & TT_INC_TLS);
		if (r->complete) {
			d->complete++;
		} else {
			d->incomplete++;
			for (k = 0; k < NREASONS; k++)
				if (r->incomplete & (1u << k))
					d->reasons[k]++;
		}
		d->errors += !!(r->incomplete & TT_INC_ERROR);
		d->no_token += !!(r->incomplete & TT_INC_NO_TOKEN);
		/* no first token: no TTFT to count, whatever the options */
		if ((!r->complete && !o->include_incomplete) ||
		    (r->incomplete & TT_INC_NOT_TOKENS))
			continue;
		if (r->complete || r->ttft) {
			err = tt_u64vec_push(&d->ttft, r->ttft) ||
					      tt_u64vec_push(&d->members, i) ||
					      collect_stages(a, i, d) ?
				      -ENOMEM :
				      0;
			if (err)
				goto cleanup;
			d->stolen += !!r->steal_ns;
			d->steal_total += r->steal_ns;
			if (r->steal_ns > d->steal_max)
				d->steal_max = r->steal_ns;
		}
		if (r->tokens >= 2 && r->t_last_write >= r->t_first_write &&
		    r->t_first_write) {
			err = tt_u64vec_push(&d->tpot, r->tpot);
			if (err)
				goto cleanup;
			d->bunched += r->bunched;
		}
		d->itl_bunched += r->itl_bunched;
	}
	tt_summarize(d->ttft.v, d->ttft.n, &d->s_ttft);
	tt_summarize(d->tpot.v, d->tpot.n, &d->s_tpot);
	err = tt_analyzer_itl_summary(a, o->include_incomplete, false,
				      &d->s_itl);
	if (!err)
		err = tt_analyzer_itl_summary(a, o->include_incomplete, true,
					      &d->s_itl_emit);
	if (err)
		goto cleanup;
	for (k = 0; k < NROWS; k++)
		tt_summarize(d->stage[k].v, d->stage[k].n, &d->s_stage[k]);
	pick_requests(a, d);
cleanup:
	return err;
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

/* Row name, indented under "other" when a sub-stage. */
static void stage_label(char *buf, size_t len, int row)
{
	snprintf(buf, len, "%s%s", row_is_sub(row) ? "  " : "", row_name(row));
}

static void text_stages(FILE *out, const struct report_data *d)
{
	char name[32], mean[32], p50[32], p90[32], p99[32];
	const struct tt_summary *s;
	int k, row;

	if (!d->s_stage[0].n) {
		fprintf(out,
			"\nstages: no critical path among these requests (no scheduler events for their threads?)\n");
		return;
	}
	fprintf(out, "\n%-20s %10s %10s %10s %10s %7s  (%zu requests)\n",
		"stage (ms)", "mean", "p50", "p90", "p99", "share",
		d->s_stage[0].n);
	for (k = 0; k < NROWS; k++) {
		row = row_order[k];
		s = &d->s_stage[row];
		stage_label(name, sizeof(name), row);
		fprintf(out, "%-20s %10s %10s %10s %10s %6.1f%%\n", name,
			tt_fmt_ms(mean, sizeof(mean), s->mean),
			tt_fmt_ms(p50, sizeof(p50), s->p50),
			tt_fmt_ms(p90, sizeof(p90), s->p90),
			tt_fmt_ms(p99, sizeof(p99), s->p99),
			d->ttft_total ? 100.0 * (double)d->stage_total[row] /
						(double)d->ttft_total :
					0.0);
	}
	fprintf(out,
		"share: of the summed TTFT. Each stage's percentiles are its own, across requests.\n");
}

/* The stages of the requests at the TTFT percentiles, side by side. */
static void text_picks(FILE *out, const struct tt_analyzer *a,
		       const struct report_data *d)
{
	const struct tt_request *r[3];
	char name[32], v[3][32];
	int k, j, row;

	if (!d->s_ttft.n)
		return;
	for (j = 0; j < 3; j++)
		r[j] = d->pick[j] != SIZE_MAX && has_stages(a, d->pick[j]) ?
			       tt_analyzer_request(a, d->pick[j]) :
			       NULL;
	fprintf(out, "\nbreakdown of the p50 / p90 / p99 request (ms):\n");
	fprintf(out, "%-20s %10s %10s %10s\n", "", "p50", "p90", "p99");
	for (j = 0; j < 3; j++) {
		if (d->pick[j] == SIZE_MAX)
			snprintf(v[j], sizeof(v[j]), "-");
		else
			snprintf(v[j], sizeof(v[j]), "#%llu",
				 (unsigned long long)tt_analyzer_request(
					 a, d->pick[j])
					 ->id);
	}
	fprintf(out, "%-20s %10s %10s %10s\n", "request", v[0], v[1], v[2]);
	for (j = 0; j < 3; j++) {
		if (d->pick[j] == SIZE_MAX)
			snprintf(v[j], sizeof(v[j]), "-");
		else
			tt_fmt_ms(v[j], sizeof(v[j]),
				  tt_analyzer_request(a, d->pick[j])->ttft);
	}
	fprintf(out, "%-20s %10s %10s %10s\n", "TTFT", v[0], v[1], v[2]);
	for (k = 0; k < NROWS; k++) {
		row = row_order[k];
		for (j = 0; j < 3; j++) {
			if (r[j])
				tt_fmt_ms(v[j], sizeof(v[j]),
					  row_ns(r[j], row));
			else
				snprintf(v[j], sizeof(v[j]), "-");
		}
		stage_label(name, sizeof(name), row);
		fprintf(out, "%-20s %10s %10s %10s\n", name, v[0], v[1], v[2]);
	}
}

static void text_table(FILE *out, const struct tt_analyzer *a,
		       const struct tt_report_extra *x)
{
	char peer[64], why[128], b1[32], b2[32], b3[32], b4[32], b5[32];
	char b6[32], slo[40];
	const struct tt_request *r;
	const char *dom;
	__u64 e2e;
	size_t i;

	fprintf(out, "\n%6s %-22s %10s %11s %10s %10s %6s %9s %10s %-18s %-24s %s\n",
		"ID", "PEER", "TTFT_MS", "ARRIVE>READ", "READ>WRITE",
		"WRITE>WIRE", "TOKENS", "TPOT_MS", "E2E_MS", "DOMINANT", "SLO",
		"STATUS");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		r = tt_analyzer_request(a, i);
		dom = dominant(a, i);
		e2e = tt_request_e2e(r, NULL);
		fprintf(out,
			"%6llu %-22s %10s %11s %10s %10s %6u %9s %10s %-18s %-24s %s\n",
			(unsigned long long)r->id,
			tt_request_peer(r, peer, sizeof(peer)),
			r->ttft ? tt_fmt_ms(b1, sizeof(b1), r->ttft) : "-",
			span_ms(b2, sizeof(b2), r->t_arrive, r->t_read),
			span_ms(b3, sizeof(b3), r->t_read, r->t_first_write),
			span_ms(b4, sizeof(b4), r->t_first_write, r->t_wire),
			r->tokens,
			r->tokens >= 2 ? tt_fmt_ms(b5, sizeof(b5), r->tpot) :
					 "-",
			e2e ? tt_fmt_ms(b6, sizeof(b6), e2e) : "-",
			dom ? dom : "-",
			x ? x->cell(x->ctx, i, slo, sizeof(slo)) : "-",
			r->complete ? "complete" :
				      tt_incomplete_str(r->incomplete, why,
							sizeof(why)));
	}
}

int tt_report_text(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o)
{
	struct tt_critpath_stats cst;
	struct report_data d;
	char why[64], b[32], b2[32];
	size_t k;
	bool first = true;
	int err;

	err = collect(a, o, &d);
	if (err)
		goto cleanup;
	tt_critpath_stats(tt_analyzer_critpath(a), &cst);
	if (meta)
		tt_meta_text(out, meta);
	fprintf(out, "requests: %zu (complete %zu, incomplete %zu)\n",
		d.complete + d.incomplete, d.complete, d.incomplete);
	if (d.hops)
		fprintf(out,
			"hops: %zu (sent on loopback by a traced process: "
			"inside the requests that sent them)\n",
			d.hops);
	if (d.h2_mux_hops)
		fprintf(out,
			"http/2: %zu hops on connections whose streams were multiplexed, not told apart: %zu requests' paths went through one, maybe another call's\n",
			d.h2_mux_hops, d.h2_mux);
	else if (d.h2_mux) /* a client's streams multiplexed */
		fprintf(out,
			"http/2: %zu requests on connections whose streams were multiplexed, not told apart: one may stand for several streams, its times for another's\n",
			d.h2_mux);
	if (d.tls_plain || d.tls_apart)
		fprintf(out,
			"tls: %zu requests read as the plaintext their TLS "
			"library encrypted; %zu exchanges with no HTTP on their "
			"connections (handshakes, tickets, alerts) counted "
			"apart\n",
			d.tls_plain, d.tls_apart);
	if (d.tls_unread)
		fprintf(out,
			"tls: %zu requests on encrypted connections whose "
			"plaintext no probe saw: no framing or token can be "
			"read (OpenSSL's libssl.so.3, Node and Go's crypto/tls "
			"are probed, --tls-probes); trace the server behind its TLS "
			"terminator\n",
			d.tls_unread);
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
	fprintf(out,
		"errors: %zu (status not 2xx), no token: %zu; neither counts in the percentiles\n",
		d.errors, d.no_token);
	fprintf(out, "drops: %llu lost records",
		(unsigned long long)tt_analyzer_lost(a));
	for (k = 0, first = true; k < TT_LOST_CPUS; k++) {
		if (!tt_analyzer_lost_cpu(a, k))
			continue;
		fprintf(out, "%scpu%zu %llu", first ? " (" : ", ", k,
			(unsigned long long)tt_analyzer_lost_cpu(a, k));
		first = false;
	}
	fprintf(out, "%s%s\n", first ? "" : ")",
		tt_analyzer_lost(a) ?
			"; requests overlapping them are incomplete" :
			"");
	fprintf(out, "events: %llu\n",
		(unsigned long long)tt_analyzer_events(a));
	if (cst.marks)
		fprintf(out,
			"markers: %llu hit, %llu named no request, %llu outside their request's read to first write\n",
			(unsigned long long)cst.marks,
			(unsigned long long)cst.marks_unbound,
			(unsigned long long)cst.marks_outside);
	fprintf(out, "\n%-10s %10s %10s %10s %10s  %s\n", "(ms)", "p50", "p90",
		"p99", "max",
		o->include_incomplete ? "(incomplete requests included)" :
					"(complete requests)");
	text_row(out, "TTFT", &d.s_ttft, "requests");
	text_row(out, "TPOT", &d.s_tpot, "requests");
	text_row(out, "ITL", &d.s_itl, "gaps");
	fprintf(out,
		"TTFT (wire): first request byte in the kernel to first token byte on the device.\n");
	if (d.bunched)
		fprintf(out,
			"TPOT (wire): %zu request(s) emitted tokens apart that left together (Nagle, a delayed ACK): their TPOT is the wire's; the server's emit rate is tpot_emit_ns in --json.\n",
			d.bunched);
	if (d.itl_bunched)
		fprintf(out,
			"ITL (wire): %zu of %zu gap(s) emitted apart left together: ITL is the wire's; the server's emit gaps are itl_emit_ns in --json.\n",
			d.itl_bunched, d.s_itl.n);
	if (d.stolen)
		fprintf(out,
			"steal: %zu request(s) lost %s ms on their paths to the hypervisor taking their threads' CPUs (VM steal, inside the stages; the most %s ms): steal_ns in --json.\n",
			d.stolen, tt_fmt_ms(b, sizeof(b), d.steal_total),
			tt_fmt_ms(b2, sizeof(b2), d.steal_max));
	if (o->extra)
		o->extra->text(out, o->extra->ctx);
	text_stages(out, &d);
	text_picks(out, a, &d);
	if (o->gpu)
		o->gpu->text(out, o->gpu->ctx);
	if (o->requests)
		text_table(out, a, o->extra);
	err = ferror(out) ? -EIO : 0;
cleanup:
	data_free(&d);
	return err;
}

/* ---- one request's critical path ---- */

/* "name/tid", the tid alone when the name is unknown, "-" for none. */
static const char *thread_label(const struct tt_analyzer *a, __u32 tid,
				char *buf, size_t len)
{
	char name[TT_TEXT_ROOM(TT_COMM_LEN)];
	const char *comm;

	if (!tid)
		return "-";
	comm = tt_analyzer_comm(a, tid);
	if (comm)
		snprintf(buf, len, "%s/%u",
			 tt_text_escape(name, sizeof(name), comm, TT_COMM_LEN),
			 tid);
	else
		snprintf(buf, len, "%u", tid);
	return buf;
}

/* t - base in ms (signed), "-" when t is unknown. */
static const char *rel_ms(char *buf, size_t len, __u64 t, __u64 base)
{
	char ms[32];

	if (!t)
		return "-";
	if (t >= base)
		return tt_fmt_ms(buf, len, t - base);
	snprintf(buf, len, "-%s", tt_fmt_ms(ms, sizeof(ms), base - t));
	return buf;
}

/* The TT_CP_INC_* bits as "no-data,lost". */
static const char *cp_incomplete_str(__u32 bits, char *buf, size_t len)
{
	static const char *const names[] = { "not-walked", "no-read", "no-data",
					     "lost" };

	if (!tt_bit_names(buf, len, bits, names, 4))
		snprintf(buf, len, "the segments do not cover the TTFT");
	return buf;
}

static void request_header(FILE *out, const struct tt_analyzer *a, size_t i,
			   __u64 base, const char *base_name)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	bool walked = has_stages(a, i);
	char peer[64], why[128], b[32], b2[32];
	char t1[TT_TEXT_ROOM(TT_COMM_LEN) + 16], t2[sizeof(t1)];

	fprintf(out, "request %llu  peer %s  %s\n", (unsigned long long)r->id,
		tt_request_peer(r, peer, sizeof(peer)),
		r->complete ?
			"complete" :
			tt_incomplete_str(r->incomplete, why, sizeof(why)));
	if (r->ttft)
		fprintf(out,
			"TTFT %s ms (wire: first request byte in the kernel to first token byte on the device)\n",
			tt_fmt_ms(b, sizeof(b), r->ttft));
	else
		fprintf(out, "TTFT unknown\n");
	fprintf(out, "read by %s, first token written by %s\n",
		thread_label(a, r->reader_tid, t1, sizeof(t1)),
		thread_label(a, r->writer_tid, t2, sizeof(t2)));
	if (r->h2_mux) /* docs/design.md §3.1, "HTTP/2" */
		fprintf(out, "HTTP/2 streams multiplexed: %s\n",
			r->incomplete & TT_INC_HOP ?
				"its frames may be another's" :
			r->hop_id ? "its hop may be another call's" :
				    "its frames or its hop may be another's");
	fprintf(out, "\ntimes (%s):\n", base_name);
	fprintf(out, "%-16s %10s  first request byte in the kernel\n",
		"t_arrive", rel_ms(b, sizeof(b), r->t_arrive, base));
	fprintf(out, "%-16s %10s  the app read the request\n", "t_read",
		rel_ms(b, sizeof(b), r->t_read, base));
	fprintf(out, "%-16s %10s  handed on to be computed: the queue starts (rule %s)\n",
		"t_enqueue", rel_ms(b, sizeof(b), walked ? r->t_enqueue : 0, base),
		walked ? tt_cp_enqueue_name(r->enqueue_rule) : "-");
	fprintf(out, "%-16s %10s  taken up for compute (rule %s: %s)\n",
		"t_dispatch",
		rel_ms(b, sizeof(b), walked ? r->t_dispatch : 0, base),
		walked ? tt_cp_dispatch_name(r->dispatch_rule) : "-",
		walked ? tt_cp_dispatch_why(r->dispatch_rule) :
			 "no critical path");
	fprintf(out, "%-16s %10s  first token handed toward the writer%s\n",
		"t_token", rel_ms(b, sizeof(b), walked ? r->t_token : 0, base),
		walked && r->token_marker ? " (rule marker)" : "");
	fprintf(out, "%-16s %10s  first token-carrying send\n", "t_first_write",
		rel_ms(b, sizeof(b), r->t_first_write, base));
	fprintf(out, "%-16s %10s  its first byte on the device\n", "t_wire",
		rel_ms(b, sizeof(b), r->t_wire, base));
	if (tt_request_e2e(r, NULL))
		fprintf(out, "%-16s %10s  E2E: its last token on the device%s\n",
			"E2E", tt_fmt_ms(b, sizeof(b), tt_request_e2e(r, NULL)),
			r->tokens >= 2 && !r->tpot_at_wire ? " (at its send: not seen there)" : "");
	if (walked && r->gil_ns)
		fprintf(out, "%-16s %10s  of the path spent waiting for the GIL (CPython's interpreter lock)\n",
			"GIL", tt_fmt_ms(b, sizeof(b), r->gil_ns));
	if (walked && r->steal_ns)
		fprintf(out, "%-16s %10s  of the path the hypervisor took its thread's CPU (VM steal; inside the stages)\n",
			"steal", tt_fmt_ms(b, sizeof(b), r->steal_ns));
	if (walked && r->t_storage_end)
		fprintf(out,
			"%-16s %10s  from its read loop's start to its last storage wait's end (%s storage.io)\n",
			"storage span",
			tt_fmt_ms(b, sizeof(b),
				  r->t_storage_end - r->t_storage_start),
			tt_fmt_ms(b2, sizeof(b2), r->stage_ns[TT_ST_STORAGE]));
}

static void request_stages(FILE *out, const struct tt_request *r)
{
	char name[32], b[32];
	int k, row;

	fprintf(out, "\n%-20s %10s %7s\n", "stage", "ms", "share");
	for (k = 0; k < NROWS; k++) {
		row = row_order[k];
		stage_label(name, sizeof(name), row);
		fprintf(out, "%-20s %10s %6.1f%%\n", name,
			tt_fmt_ms(b, sizeof(b), row_ns(r, row)),
			r->ttft ? 100.0 * (double)row_ns(r, row) /
					  (double)r->ttft :
				  0.0);
	}
}

/* One line per segment, in columns as wide as their widest cell. */
static void request_path(FILE *out, const struct tt_analyzer *a,
			 const struct tt_cp_result *res, __u64 base)
{
	char start[32], dur[32], thread[TT_TEXT_ROOM(TT_COMM_LEN) + 16];
	char reason[TT_TEXT_ROOM(sizeof(((struct tt_cp_segment *)0)->reason))];
	const struct tt_cp_segment *sg;
	int w_start = 5, w_dur = 3, w_thread = 6, w_reason = 6, pass, n;
	size_t k;

	for (pass = 0; pass < 2; pass++) {
		if (pass)
			fprintf(out, "%*s  %*s  %-*s  %-8s  %-*s  %s\n",
				w_start, "START", w_dur, "DUR", w_thread,
				"THREAD", "STATE", w_reason, "REASON", "STAGE");
		for (k = 0; k < res->nsegs; k++) {
			sg = &res->segs[k];
			rel_ms(start, sizeof(start), sg->start, base);
			tt_fmt_ms(dur, sizeof(dur), sg->dur);
			thread_label(a, sg->tid, thread, sizeof(thread));
			tt_text_escape(reason, sizeof(reason), sg->reason,
				       sizeof(sg->reason));
			if (!sg->tid)
				snprintf(thread, sizeof(thread), "-");
			if (!pass) {
				n = strlen(start);
				w_start = n > w_start ? n : w_start;
				n = strlen(dur);
				w_dur = n > w_dur ? n : w_dur;
				n = strlen(thread);
				w_thread = n > w_thread ? n : w_thread;
				n = strlen(reason);
				w_reason = n > w_reason ? n : w_reason;
				continue;
			}
			fprintf(out, "%*s  %*s  %-*s  %-8s  %-*s  %s\n",
				w_start, start, w_dur, dur, w_thread, thread,
				tt_cp_state_name(sg->state), w_reason, reason,
				tt_stage_name(sg->stage));
		}
	}
}

int tt_report_request(FILE *out, const struct tt_analyzer *a, __u64 id)
{
	size_t n = tt_analyzer_nrequests(a), i;
	const struct tt_cp_result *res;
	const struct tt_request *r;
	const char *base_name = "ms from t_arrive";
	char why[64];
	__u64 base;

	/* ids are 1..n in order after finish */
	if (!id || id > n || tt_analyzer_request(a, id - 1)->id != id)
		return -ENOENT;
	i = id - 1;
	r = tt_analyzer_request(a, i);
	res = tt_analyzer_cp_result(a, i);
	base = r->t_arrive;
	if (!base) {
		base = r->t_read ? r->t_read : r->t_first_write;
		base_name = r->t_read ? "ms from t_read" :
					"ms from t_first_write";
	}
	request_header(out, a, i, base, base_name);
	if (!has_stages(a, i)) {
		fprintf(out,
			"\ncritical path: not walked (it needs t_arrive, t_first_write, t_wire and the writer)\n");
		return ferror(out) ? -EIO : 0;
	}
	request_stages(out, r);
	fprintf(out, "\ncritical path: %zu segments, %s%s%s\n", res->nsegs,
		base_name, r->attributed ? "" : "; incomplete: ",
		r->attributed ?
			"" :
			cp_incomplete_str(res->incomplete, why, sizeof(why)));
	request_path(out, a, res, base);
	fprintf(out,
		"(where THREAD changes, the path went back to the thread whose wakeup ended the wait)\n");
	return ferror(out) ? -EIO : 0;
}

/* ---- JSON ---- */

/* "name":value, or "name":null when value is 0 (unknown) */
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

/* "stages":{...},"other_detail":{...} of request i, null when unknown */
static void json_request_stages(FILE *out, const struct tt_analyzer *a,
				size_t i)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	const char *dom = dominant(a, i);
	int k;

	if (!has_stages(a, i)) {
		fprintf(out, ",\"dispatch_rule\":null,\"enqueue_rule\":null,"
			     "\"token_rule\":null,\"dominant\":null,"
			     "\"stages\":null,\"other_detail\":null");
		return;
	}
	fprintf(out, ",\"dispatch_rule\":\"%s\",\"enqueue_rule\":\"%s\""
		     ",\"token_rule\":\"%s\"",
		tt_cp_dispatch_name(r->dispatch_rule),
		tt_cp_enqueue_name(r->enqueue_rule),
		r->token_marker ? "marker" : "inferred");
	if (dom)
		fprintf(out, ",\"dominant\":\"%s\"", dom);
	else
		fprintf(out, ",\"dominant\":null");
	fprintf(out, ",\"stages\":{");
	for (k = 0; k < NMAIN; k++)
		fprintf(out, "%s\"%s\":%llu", k ? "," : "",
			row_name(main_rows[k]),
			(unsigned long long)row_ns(r, main_rows[k]));
	fprintf(out, "},\"other_detail\":{");
	for (k = 0; k < 3; k++)
		fprintf(out, "%s\"%s\":%llu", k ? "," : "",
			tt_stage_name(other_rows[k]) + strlen("other."),
			(unsigned long long)r->stage_ns[other_rows[k]]);
	fputc('}', out);
}

static void json_request(FILE *out, const struct tt_analyzer *a, size_t i,
			 const struct report_data *d,
			 const struct tt_report_extra *x)
{
	const struct tt_request *r = tt_analyzer_request(a, i);
	char peer[64], why[128];
	const char *comm;

	fprintf(out, "{\"id\":%llu,\"peer\":", (unsigned long long)r->id);
	tt_json_str(out, tt_request_peer(r, peer, sizeof(peer)), sizeof(peer));
	tt_json_kv_opt(out, "t_arrive_ns", r->t_arrive);
	tt_json_kv_opt(out, "t_read_ns", r->t_read);
	tt_json_kv_opt(out, "t_first_write_ns", r->t_first_write);
	tt_json_kv_opt(out, "t_wire_ns", r->t_wire);
	tt_json_kv_opt(out, "ttft_ns", r->ttft);
	fprintf(out, ",\"tokens\":%u", r->tokens);
	if (r->tokens >= 2)
		fprintf(out, ",\"tpot_ns\":%llu", (unsigned long long)r->tpot);
	else
		fprintf(out, ",\"tpot_ns\":null");
	fprintf(out, ",\"complete\":%s", r->complete ? "true" : "false");
	tt_json_kv_opt(out, "status", r->status);
	tt_json_kv_opt(out, "t_headers_ns", r->t_headers);
	tt_json_kv_opt(out, "t_last_write_ns", r->t_last_write);
	/* tpot_ns is the wire's when tpot_at_wire; this the server's */
	tt_json_kv_opt(out, "tpot_emit_ns", r->tokens >= 2 ? r->tpot_emit : 0);
	tt_json_kv_opt(out, "t_last_wire_ns", r->t_last_wire);
	fprintf(out, ",\"tpot_at_wire\":%s,\"bunched\":%s",
		r->tpot_at_wire ? "true" : "false",
		r->bunched ? "true" : "false");
	fprintf(out, ",\"itl_at_wire\":%s,\"itl_bunched\":%u",
		r->itl_at_wire ? "true" : "false", r->itl_bunched);
	tt_json_kv_opt(out, "t_end_ns", r->t_end);
	fprintf(out, ",\"end\":\"%s\"", tt_end_name(r->end));
	fprintf(out, ",\"bytes_in\":%llu,\"bytes_out\":%llu,\"lport\":%u",
		(unsigned long long)r->bytes_in,
		(unsigned long long)r->bytes_out, r->lport);
	fprintf(out, ",\"tgid\":%u,\"writer_tid\":%u", r->tgid, r->writer_tid);
	comm = r->writer_tid ? tt_analyzer_comm(a, r->writer_tid) : NULL;
	if (comm) {
		fprintf(out, ",\"writer_comm\":");
		tt_json_str(out, comm, TT_COMM_LEN);
	}
	fprintf(out, ",\"tls\":%s,\"tls_apart\":%s,\"h2_multiplexed\":%s",
		r->tls ? "true" : "false",
		d->apart && d->apart[i] ? "true" : "false",
		r->h2_mux ? "true" : "false");
	fprintf(out, ",\"closed_mid_stream\":%s,\"lost\":%s",
		r->closed_mid_stream ? "true" : "false",
		r->lost ? "true" : "false");
	fprintf(out, ",\"reader_tid\":%u", r->reader_tid);
	tt_json_kv_opt(out, "t_enqueue_ns",
		       has_stages(a, i) ? r->t_enqueue : 0);
	tt_json_kv_opt(out, "t_dispatch_ns",
		       has_stages(a, i) ? r->t_dispatch : 0);
	tt_json_kv_opt(out, "t_token_ns", has_stages(a, i) ? r->t_token : 0);
	/* 0 is a finding here (no GIL wait on the path): null only unwalked */
	if (has_stages(a, i))
		fprintf(out, ",\"gil_ns\":%llu,\"steal_ns\":%llu",
			(unsigned long long)r->gil_ns,
			(unsigned long long)r->steal_ns);
	else
		fprintf(out, ",\"gil_ns\":null,\"steal_ns\":null");
	/* null: no storage on the path (or not walked) */
	tt_json_kv_opt(
		out, "storage_span_ns",
		has_stages(a, i) ? r->t_storage_end - r->t_storage_start : 0);
	fprintf(out, ",\"attributed\":%s", r->attributed ? "true" : "false");
	json_request_stages(out, a, i);
	if (x)
		x->request_json(out, x->ctx, i);
	/* null: no hop on the path / not a hop (docs/design.md §4.11) */
	tt_json_kv_opt(out, "hop_id", has_stages(a, i) ? r->hop_id : 0);
	tt_json_kv_opt(out, "hop_sender_tid",
		       (r->incomplete & TT_INC_HOP) ? r->hop_sender_tid : 0);
	tt_json_kv_opt(out, "hop_read_tid",
		       (r->incomplete & TT_INC_HOP) ? r->hop_read_tid : 0);
	if (r->complete) {
		fprintf(out, ",\"incomplete_reason\":null}");
	} else {
		fprintf(out, ",\"incomplete_reason\":");
		tt_json_str(out,
			 tt_incomplete_str(r->incomplete, why, sizeof(why)),
			 sizeof(why));
		fputc('}', out);
	}
}

/* "name":{"mean":..,"p50":..,"p90":..,"p99":..,"share":..} of a row */
static void json_stage_summary(FILE *out, const char *name,
			       const struct report_data *d, int row, bool first)
{
	const struct tt_summary *s = &d->s_stage[row];

	fprintf(out, "%s\"%s\":", first ? "" : ",", name);
	if (!s->n) {
		fprintf(out, "{\"mean\":null,\"p50\":null,\"p90\":null,"
			     "\"p99\":null,\"share\":null}");
		return;
	}
	fprintf(out, "{\"mean\":%llu,\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,",
		(unsigned long long)s->mean, (unsigned long long)s->p50,
		(unsigned long long)s->p90, (unsigned long long)s->p99);
	if (d->ttft_total)
		fprintf(out, "\"share\":%.6f}",
			(double)d->stage_total[row] / (double)d->ttft_total);
	else
		fprintf(out, "\"share\":null}");
}

static void json_summary_stages(FILE *out, const struct tt_analyzer *a,
				const struct report_data *d)
{
	int k;

	fprintf(out, ",\"stages_n\":%zu,\"stages\":{", d->s_stage[0].n);
	for (k = 0; k < NMAIN; k++)
		json_stage_summary(out, row_name(main_rows[k]), d, main_rows[k],
				   !k);
	fprintf(out, "},\"other_detail\":{");
	for (k = 0; k < 3; k++)
		json_stage_summary(
			out, tt_stage_name(other_rows[k]) + strlen("other."), d,
			other_rows[k], !k);
	fprintf(out, "},\"percentile_requests\":{");
	for (k = 0; k < 3; k++) {
		fprintf(out, "%s\"p%.0f\":", k ? "," : "", pick_pct[k]);
		if (d->pick[k] == SIZE_MAX)
			fprintf(out, "null");
		else
			fprintf(out, "%llu",
				(unsigned long long)tt_analyzer_request(
					a, d->pick[k])
					->id);
	}
	fputc('}', out);
}

int tt_report_json(FILE *out, const struct tt_analyzer *a,
		   const struct tt_file_meta *meta,
		   const struct tt_report_opts *o)
{
	struct tt_critpath_stats cst;
	struct report_data d;
	size_t i, k;
	int err;

	err = collect(a, o, &d);
	if (err)
		goto cleanup;
	fprintf(out, "{\"requests\":[");
	for (i = 0; i < tt_analyzer_nrequests(a); i++) {
		if (i)
			fputc(',', out);
		json_request(out, a, i, &d, o->extra);
	}
	fprintf(out,
		"],\"summary\":{\"requests\":%zu,\"complete\":%zu,"
		"\"incomplete\":%zu,\"errors\":%zu,\"no_token\":%zu,"
		"\"bunched\":%zu,\"itl_bunched\":%zu,\"steal_requests\":%zu,"
		"\"steal_ns\":%llu,\"steal_max_ns\":%llu,\"include_incomplete\":%s",
		d.complete + d.incomplete, d.complete, d.incomplete, d.errors,
		d.no_token, d.bunched, d.itl_bunched, d.stolen,
		(unsigned long long)d.steal_total,
		(unsigned long long)d.steal_max,
		o->include_incomplete ? "true" : "false");
	/* requests sent on by a traced gateway: inside the ones that sent them */
	fprintf(out,
		",\"hops\":%zu,\"h2_multiplexed_hops\":%zu,\"h2_multiplexed\":%zu",
		d.hops, d.h2_mux_hops, d.h2_mux);
	/* TLS (docs/design.md §3.1): read as plaintext; handshakes apart;
	 * unreadable (of the incomplete) */
	fprintf(out,
		",\"tls_requests\":%zu,\"tls_exchanges_apart\":%zu,\"tls_unread\":%zu",
		d.tls_plain, d.tls_apart, d.tls_unread);
	json_summary(out, "ttft_ns", &d.s_ttft);
	json_summary(out, "tpot_ns", &d.s_tpot);
	json_summary(out, "itl_ns", &d.s_itl);
	json_summary(out, "itl_emit_ns", &d.s_itl_emit);
	json_summary_stages(out, a, &d);
	fprintf(out, ",\"drops\":%llu,\"drops_per_cpu\":{",
		(unsigned long long)tt_analyzer_lost(a));
	for (i = 0, k = 0; i < TT_LOST_CPUS; i++) {
		if (tt_analyzer_lost_cpu(a, i))
			fprintf(out, "%s\"%zu\":%llu", k++ ? "," : "", i,
				(unsigned long long)tt_analyzer_lost_cpu(a, i));
	}
	fprintf(out, "},\"events\":%llu",
		(unsigned long long)tt_analyzer_events(a));
	tt_critpath_stats(tt_analyzer_critpath(a), &cst);
	fprintf(out,
		",\"markers\":{\"hit\":%llu,\"unbound\":%llu,\"outside\":%llu}",
		(unsigned long long)cst.marks,
		(unsigned long long)cst.marks_unbound,
		(unsigned long long)cst.marks_outside);
	if (o->extra)
		o->extra->json(out, o->extra->ctx);
	fputc('}', out);
	if (o->gpu) {
		fprintf(out, ",\"%s\":", o->gpu->key);
		o->gpu->json(out, o->gpu->ctx);
	}
	if (meta) {
		fprintf(out, ",\"meta\":{\"hostname\":");
		tt_json_str(out, meta->hostname, sizeof(meta->hostname));
		fprintf(out, ",\"kernel\":");
		tt_json_str(out, meta->kernel, sizeof(meta->kernel));
		fprintf(out, ",\"options\":");
		tt_json_str(out, meta->options, sizeof(meta->options));
		fprintf(out, ",\"recorder\":");
		tt_json_str(out, meta->recorder, sizeof(meta->recorder));
		fputc('}', out);
	}
	fprintf(out, "}\n");
	err = ferror(out) ? -EIO : 0;
cleanup:
	data_free(&d);
	return err;
}
