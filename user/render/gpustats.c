// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gpu.h"
#include "gpustats.h"
#include "json.h"
#include "stats.h"
#include "text.h"

#define NAME_LEN 48

/* One row of a table: a name, its latencies and its errors, and the
 * calls recorded at their entry only (TT_CALL_ENTRY: neither known). */
struct gpu_row {
	char name[NAME_LEN];
	struct tt_u64vec ns;
	__u64 errors;
	size_t untimed;
};

struct gpu_table {
	struct gpu_row *rows;
	size_t n, cap;
};

struct tt_gpustats {
	struct tt_dev_info *devs;
	size_t ndevs;
	struct gpu_table ioctls;
	struct gpu_table calls;
};

struct tt_gpustats *tt_gpustats_new(const struct tt_dev_info *devs,
				    size_t ndevs)
{
	struct tt_gpustats *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (ndevs) {
		g->devs = malloc(ndevs * sizeof(*devs));
		if (!g->devs) {
			free(g);
			return NULL;
		}
		memcpy(g->devs, devs, ndevs * sizeof(*devs));
		g->ndevs = ndevs;
	}
	return g;
}

static const struct tt_dev_info *find_dev(const struct tt_gpustats *g,
					  const struct tt_ioctl *ioc)
{
	for (size_t i = 0; i < g->ndevs; i++) {
		const struct tt_dev_info *d = &g->devs[i];

		if ((ioc->rdev && d->rdev == ioc->rdev) ||
		    (d->ino == ioc->ino && d->dev == ioc->dev))
			return d;
	}
	return NULL;
}

const char *tt_gpustats_ioctl_name(const struct tt_gpustats *g,
				   const struct tt_ioctl *ioc, char *buf,
				   size_t len)
{
	const struct tt_dev_info *d = find_dev(g, ioc);

	return tt_gpu_ioctl_name(ioc->cmd, d ? d->kind : TT_GPU_UNKNOWN, buf,
				 len);
}

/* Adds one latency to the row called name (rows are few: a linear scan);
 * one of a call recorded at its entry only is not known: !timed. */
static int table_add(struct gpu_table *t, const char *name, bool timed,
		     __u64 ns, bool error)
{
	struct gpu_row *row = NULL, *grown;

	for (size_t i = 0; i < t->n && !row; i++)
		if (!strcmp(t->rows[i].name, name))
			row = &t->rows[i];
	if (!row) {
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 16;

			grown = realloc(t->rows, cap * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			t->rows = grown;
			t->cap = cap;
		}
		row = &t->rows[t->n++];
		memset(row, 0, sizeof(*row));
		snprintf(row->name, sizeof(row->name), "%s", name);
	}
	if (!timed) {
		row->untimed++;
		return 0;
	}
	row->errors += error;
	return tt_u64vec_push(&row->ns, ns);
}

int tt_gpustats_add(struct tt_gpustats *g, const struct tt_event *ev)
{
	const struct tt_cuda_fn *fns;
	char name[NAME_LEN];
	size_t nfns;

	switch (ev->h.type) {
	case TT_EV_IOCTL:
		tt_gpustats_ioctl_name(g, &ev->ioc, name, sizeof(name));
		return table_add(&g->ioctls, name, true,
				 ev->h.ts - ev->ioc.ts_enter, ev->ioc.ret < 0);
	case TT_EV_GPU_CALL:
		fns = tt_cuda_fns(&nfns);
		if (ev->call.fn < nfns)
			snprintf(name, sizeof(name), "%s", fns[ev->call.fn].name);
		else
			snprintf(name, sizeof(name), "cuda#%u", ev->call.fn);
		return table_add(&g->calls, name,
				 !(ev->call.flags & TT_CALL_ENTRY),
				 ev->h.ts - ev->call.ts_enter,
				 ev->call.ret != 0);
	}
	return 0;
}

bool tt_gpustats_any(const struct tt_gpustats *g)
{
	return g->ioctls.n || g->calls.n;
}

static size_t row_count(const struct gpu_row *r)
{
	return r->ns.n + r->untimed;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct gpu_row *x = a, *y = b;

	if (row_count(x) != row_count(y))
		return row_count(x) < row_count(y) ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void table_text(FILE *out, struct gpu_table *t, const char *title)
{
	char p50[32], p90[32], p99[32], max[32];
	struct tt_summary s;

	if (t->n) /* qsort(NULL, 0, ...) is undefined */
		qsort(t->rows, t->n, sizeof(*t->rows), cmp_rows);
	fprintf(out, "\n%-36s %8s %7s %10s %10s %10s %10s\n", title, "COUNT",
		"ERRORS", "P50_MS", "P90_MS", "P99_MS", "MAX_MS");
	for (size_t i = 0; i < t->n; i++) {
		const struct gpu_row *r = &t->rows[i];

		tt_summarize(r->ns.v, r->ns.n, &s);
		if (!s.n) /* every call at its entry only */
			fprintf(out, "%-36s %8zu %7s %10s %10s %10s %10s\n",
				r->name, row_count(r), "-", "-", "-", "-", "-");
		else
			fprintf(out, "%-36s %8zu %7llu %10s %10s %10s %10s\n",
				r->name, row_count(r),
				(unsigned long long)r->errors,
				tt_fmt_ms(p50, sizeof(p50), s.p50),
				tt_fmt_ms(p90, sizeof(p90), s.p90),
				tt_fmt_ms(p99, sizeof(p99), s.p99),
				tt_fmt_ms(max, sizeof(max), s.max));
	}
}

int tt_gpustats_text(FILE *out, struct tt_gpustats *g)
{
	char path[TT_TEXT_ROOM(sizeof(g->devs->path))];

	fprintf(out, "\nGPU devices:");
	if (!g->ndevs)
		fprintf(out, " none found");
	for (size_t i = 0; i < g->ndevs; i++)
		fprintf(out, "%s %s (%s)", i ? "," : "",
			tt_text_escape(path, sizeof(path), g->devs[i].path,
				       sizeof(g->devs[i].path)),
			tt_gpu_kind_name(g->devs[i].kind));
	fputc('\n', out);
	if (g->ioctls.n)
		table_text(out, &g->ioctls, "GPU IOCTL");
	if (g->calls.n)
		table_text(out, &g->calls, "CUDA DRIVER CALL");
	return ferror(out) ? -EIO : 0;
}

static void table_json(FILE *out, struct gpu_table *t)
{
	struct tt_summary s;

	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), cmp_rows);
	fputc('[', out);
	for (size_t i = 0; i < t->n; i++) {
		tt_summarize(t->rows[i].ns.v, t->rows[i].ns.n, &s);
		/* a name may hold an ioctl's type byte: '"', '\\' */
		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		tt_json_str(out, t->rows[i].name, sizeof(t->rows[i].name));
		/* errors and ns over the timed calls (none: null) */
		fprintf(out,
			",\"count\":%zu,\"errors\":", row_count(&t->rows[i]));
		if (!s.n)
			fputs("null,\"ns\":null", out);
		else
			fprintf(out,
				"%llu,\"ns\":{\"p50\":%llu,\"p90\":%llu,\"p99\":%llu,\"max\":%llu}",
				(unsigned long long)t->rows[i].errors,
				(unsigned long long)s.p50,
				(unsigned long long)s.p90,
				(unsigned long long)s.p99,
				(unsigned long long)s.max);
		fprintf(out, ",\"timed\":%zu}", s.n);
	}
	fputc(']', out);
}

int tt_gpustats_json(FILE *out, struct tt_gpustats *g)
{
	fputs("{\"devices\":[", out);
	for (size_t i = 0; i < g->ndevs; i++) {
		fputs(i ? ",{\"path\":" : "{\"path\":", out);
		tt_json_str(out, g->devs[i].path, sizeof(g->devs[i].path));
		fprintf(out, ",\"kind\":\"%s\",\"rdev\":%u}",
			tt_gpu_kind_name(g->devs[i].kind), g->devs[i].rdev);
	}
	fputs("],\"ioctls\":", out);
	table_json(out, &g->ioctls);
	fputs(",\"cuda_calls\":", out);
	table_json(out, &g->calls);
	fputc('}', out);
	return ferror(out) ? -EIO : 0;
}

static void table_free(struct gpu_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		tt_u64vec_free(&t->rows[i].ns);
	free(t->rows);
}

void tt_gpustats_free(struct tt_gpustats *g)
{
	if (!g)
		return;
	table_free(&g->ioctls);
	table_free(&g->calls);
	free(g->devs);
	free(g);
}
