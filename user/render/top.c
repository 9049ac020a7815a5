// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* ttftrace top's frame as text (see top.h). */
#include <errno.h>
#include <string.h>
#include "analyzer.h"
#include "stats.h"
#include "text.h"
#include "top.h"

/* short names of the stage rows, five to a line */
static const char *const short_rows[TT_LIVE_ROWS] = {
	"net.in",  "net.out", "backlog", "queue", "runq",
	"storage", "gpu",     "cpu",	 "other",
};

static void ms(char *buf, size_t len, __u64 ns)
{
	if (!ns)
		snprintf(buf, len, "-");
	else
		tt_fmt_ms(buf, len, ns);
}

static void summary_row(FILE *out, const char *name, const struct tt_summary *s)
{
	char p50[24], p90[24], p99[24], max[24];

	if (!s->n) {
		fprintf(out, "%-5s %10s %10s %10s %10s %7d\n", name, "-", "-",
			"-", "-", 0);
		return;
	}
	tt_fmt_ms(p50, sizeof(p50), s->p50);
	tt_fmt_ms(p90, sizeof(p90), s->p90);
	tt_fmt_ms(p99, sizeof(p99), s->p99);
	tt_fmt_ms(max, sizeof(max), s->max);
	fprintf(out, "%-5s %10s %10s %10s %10s %7zu\n", name, p50, p90, p99,
		max, s->n);
}

/* The incomplete requests of the span by reason, as far as 80 columns go. */
static void incomplete_line(FILE *out, const struct tt_live_frame *f)
{
	char buf[TT_TOP_COLS + 1], name[32];
	size_t n = 0, k;
	int len;

	if (f->totals.hops)
		n += snprintf(buf, sizeof(buf), "hops %llu apart; ",
			      (unsigned long long)f->totals.hops);
	if (f->totals.tls)
		n += snprintf(buf + n, sizeof(buf) - n, "tls %llu apart; ",
			      (unsigned long long)f->totals.tls);
	n += snprintf(buf + n, sizeof(buf) - n, "incomplete %zu",
		      f->n - f->complete);
	for (k = 0; k < TT_INC_NBITS && n < sizeof(buf); k++) {
		if (!f->incomplete[k])
			continue;
		tt_incomplete_str(1u << k, name, sizeof(name));
		len = snprintf(buf + n, sizeof(buf) - n, "%s%s %zu",
			       n > 14 && strchr(buf, ':') ? ", " : ": ", name,
			       f->incomplete[k]);
		if (len < 0 || n + len >= sizeof(buf))
			break;
		n += len;
	}
	fprintf(out, "%s\n", buf);
}

int tt_top_text(FILE *out, const struct tt_live_frame *f, const char *what)
{
	char esc[TT_TEXT_ROOM(40)], ttft[24], tpot[24], age[24];
	const struct tt_live_req *r;
	double span = (double)f->span_ns / 1e9;
	__u64 t = f->first_ts && f->now > f->first_ts ? f->now - f->first_ts :
							0;
	size_t k;

	tt_text_escape(esc, sizeof(esc), what, 40);
	/* escaped, then cut: the line stays within 80 columns */
	fprintf(out, "ttftrace top - %.40s - t+%.1fs, last %.0fs\n", esc,
		(double)t / 1e9, span);
	fprintf(out,
		"requests %llu (%llu complete), %.1f/s; last %.0fs: %zu, %zu new\n",
		(unsigned long long)f->totals.requests,
		(unsigned long long)f->totals.complete, f->rate, span, f->n,
		f->fresh);
	incomplete_line(out, f);
	fprintf(out,
		"drops %llu records (%llu in %.0fs); events %llu, %zu kept\n",
		(unsigned long long)f->totals.lost, (unsigned long long)f->lost,
		span, (unsigned long long)f->totals.events, f->kept_events);
	fprintf(out, "\n%-5s %10s %10s %10s %10s %7s\n", "ms", "p50", "p90",
		"p99", "max", "n");
	summary_row(out, "TTFT", &f->ttft);
	summary_row(out, "TPOT", &f->tpot);
	summary_row(out, "ITL", &f->itl);
	/* two lines, five and four, the second under the first: 80 columns */
	for (k = 0; k < TT_LIVE_ROWS; k++) {
		if (k == 0)
			fprintf(out, "stages of %-5zu", f->attributed);
		else if (k == 5)
			fprintf(out, "%-15s", "");
		fprintf(out, " %-7s %3.0f%%%s", short_rows[k],
			f->share[k] * 100.0,
			k == 4 || k == TT_LIVE_ROWS - 1 ? "\n" : "");
	}
	fprintf(out, "\nslowest by %s (s: sort, q: quit)\n",
		tt_live_sort_name(f->sort));
	fprintf(out, "%6s  %-21s %9s %8s %6s %-19s\n", "age s", "peer",
		"TTFT ms", "TPOT ms", "tokens", "dominant");
	for (k = 0; k < f->nslow; k++) {
		r = &f->slow[k];
		ms(ttft, sizeof(ttft), r->ttft);
		ms(tpot, sizeof(tpot), r->tpot);
		snprintf(age, sizeof(age), "%.1f",
			 f->now > r->anchor ?
				 (double)(f->now - r->anchor) / 1e9 :
				 0.0);
		fprintf(out, "%6s  %-21.21s %9s %8s %6u %-19s\n", age, r->peer,
			ttft, tpot, r->tokens,
			r->complete ?
				(f->slow_dominant[k] ? f->slow_dominant[k] :
						       "-") :
				"incomplete");
	}
	return ferror(out) ? -EIO : 0;
}
