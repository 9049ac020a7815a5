/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Perfetto export on synthetic streams, checked in C (no Python): the
 * output parses as strict JSON, every slice is well formed and nests on its
 * track, every event sits on a named track, every flow start has its end
 * and both bind to a slice, request spans and phases cover their times.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "tt_test.h"
#include "critpath.h"
#include "perfetto.h"
#include "cp_stream.h"
#include "json_check.h"

/* What a trace holds, pointing into its parsed tree. */
struct pf_slice {
	uint64_t pid, tid, ts, dur;
	const char *name;
	const struct jc_val *ev;
};

struct pf_flow {
	uint64_t pid, tid, ts, id;
	char ph;
	const char *cat, *name;
};

struct pf_name {
	uint64_t pid, tid;
	const char *name;
	size_t len;
};

struct trace {
	char *text;
	size_t len;
	struct jc_val root;
	struct pf_slice *slices;
	struct pf_flow *flows;
	struct pf_name *threads, *procs;
	size_t nslices, nflows, nthreads, nprocs;
};

static void trace_free(struct trace *t)
{
	jc_free(&t->root);
	free(t->text);
	free(t->slices);
	free(t->flows);
	free(t->threads);
	free(t->procs);
	memset(t, 0, sizeof(*t));
}

/* Exports to memory; 0 or what tt_perfetto_write returned. */
static int export_trace(struct trace *t, const struct tt_critpath *cp,
			const struct tt_request *reqs,
			const struct tt_cp_result *res, size_t n)
{
	FILE *f;
	int err;

	memset(t, 0, sizeof(*t));
	f = open_memstream(&t->text, &t->len);
	ASSERT_OK_PTR(f, "f");
	if (!f)
		return -ENOMEM;
	err = tt_perfetto_write(f, cp, reqs, res, n);
	fclose(f);
	return err;
}

/* Keeps a copy to open in ui.perfetto.dev: TT_PERFETTO_OUT=FILE. */
static void save(const struct trace *t, const char *path)
{
	FILE *f = path ? fopen(path, "w") : NULL;

	if (!f)
		return;
	ASSERT_EQ(fwrite(t->text, 1, t->len, f), t->len, "fwrite");
	fclose(f);
}

static const struct pf_name *find_name(const struct pf_name *v, size_t n,
				       uint64_t pid, uint64_t tid, bool by_tid)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].pid == pid && (!by_tid || v[i].tid == tid))
			return &v[i];
	return NULL;
}

static const char *cat_of(const struct pf_slice *s)
{
	const char *cat = jc_str(s->ev, "cat");

	return cat ? cat : "";
}

static int cmp_slice(const void *a, const void *b)
{
	const struct pf_slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* the parent first */
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	/* a state holds the GPU call that fills it */
	return !strcmp(cat_of(y), "thread") - !strcmp(cat_of(x), "thread");
}

/* a call nested in a thread's state: a GPU call or a file read */
static bool is_call(const struct pf_slice *s)
{
	return !strcmp(cat_of(s), "gpu") || !strcmp(cat_of(s), "storage");
}

/* Slices on a track nest (or follow each other); a thread's states only
 * follow each other, and hold its calls (GPU calls may hold ioctls). */
static void check_nesting(struct trace *t)
{
	const struct pf_slice *stack[16];
	size_t i, depth = 0;

	if (t->nslices)
		qsort(t->slices, t->nslices, sizeof(*t->slices), cmp_slice);
	for (i = 0; i < t->nslices; i++) {
		const struct pf_slice *s = &t->slices[i];

		if (i && (s->pid != t->slices[i - 1].pid ||
			  s->tid != t->slices[i - 1].tid))
			depth = 0;
		while (depth &&
		       stack[depth - 1]->ts + stack[depth - 1]->dur <= s->ts)
			depth--;
		if (depth) {
			const struct pf_slice *p = stack[depth - 1];

			if (s->ts + s->dur > p->ts + p->dur)
				fprintf(stderr, "  \"%s\" crosses \"%s\"\n",
					s->name, p->name);
			ASSERT_LE(s->ts + s->dur, p->ts + p->dur, "ts + s.dur");
			ASSERT_TRUE(s->pid == TT_PERFETTO_REQ_PID || is_call(s),
				    "s->pid == TT_PERFETTO_REQ_PID || is_c...");
		}
		if (s->pid != TT_PERFETTO_REQ_PID && !depth)
			ASSERT_TRUE(
				!strcmp(s->name, "running") ||
					!strcmp(s->name, "runnable") ||
					!strncmp(s->name, "blocked: ", 9),
				"!strcmp(s->name, \"running\") || !strcm...");
		ASSERT_LT(depth, 16, "depth");
		if (depth < 16)
			stack[depth++] = s;
	}
}

/* The slice on (pid, tid) that holds time ts strictly inside, or NULL. */
static const struct pf_slice *slice_at(const struct trace *t, uint64_t pid,
				       uint64_t tid, uint64_t ts)
{
	const struct pf_slice *found = NULL;
	size_t i;

	/* the deepest: the last that holds it in (ts, -dur) order */
	for (i = 0; i < t->nslices; i++) {
		const struct pf_slice *s = &t->slices[i];

		if (s->pid == pid && s->tid == tid && s->ts <= ts &&
		    ts < s->ts + s->dur)
			found = s;
	}
	return found;
}

/* Each flow start has one end with its id, cat and name, later, and both
 * bind to a slice of their own track. */
static void check_flows(const struct trace *t)
{
	size_t i, j, ends;

	for (i = 0; i < t->nflows; i++) {
		const struct pf_flow *s = &t->flows[i];

		ASSERT_OK_PTR(slice_at(t, s->pid, s->tid, s->ts), "slice_at");
		if (s->ph != 's')
			continue;
		for (j = 0, ends = 0; j < t->nflows; j++) {
			const struct pf_flow *f = &t->flows[j];

			if (f->id != s->id || j == i)
				continue;
			ASSERT_EQ(f->ph, 'f', "f.ph");
			ASSERT_TRUE(!strcmp(f->cat, s->cat) &&
					    !strcmp(f->name, s->name),
				    "!strcmp(f->cat, s->cat) && !strcmp(f-...");
			ASSERT_GE(f->ts, s->ts, "f.ts");
			ends++;
		}
		ASSERT_EQ(ends, 1, "ends");
	}
	for (i = 0; i < t->nflows; i++) {
		if (t->flows[i].ph != 'f')
			continue;
		for (j = 0, ends = 0; j < t->nflows; j++)
			if (t->flows[j].ph == 's' &&
			    t->flows[j].id == t->flows[i].id)
				ends++;
		ASSERT_EQ(ends, 1, "ends");
	}
}

static void *push(void *v, size_t n, size_t size)
{
	void *nv = realloc(v, (n + 1) * size);

	if (!nv) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	return nv;
}

/* One event of traceEvents: checked and added to t. */
static void parse_event(struct trace *t, const struct jc_val *ev)
{
	const char *ph = jc_str(ev, "ph"), *name = jc_str(ev, "name");
	const struct jc_val *args = jc_get(ev, "args");
	uint64_t pid = 0, tid = 0;

	ASSERT_EQ(ev->type, JC_OBJ, "ev.type");
	ASSERT_TRUE(ph && name, "ph && name");
	ASSERT_TRUE(jc_u64(ev, "pid", &pid) && jc_u64(ev, "tid", &tid),
		    "jc_u64");
	if (!ph || !name)
		return;
	ASSERT_TRUE(!args || args->type == JC_OBJ,
		    "!args || args->type == JC_OBJ");
	if (!strcmp(ph, "M")) {
		const struct jc_val *nm = jc_get(args, "name");
		struct pf_name **v;
		size_t *n;

		ASSERT_TRUE(nm && nm->type == JC_STR,
			    "nm && nm->type == JC_STR");
		if (!nm || nm->type != JC_STR)
			return;
		if (!strcmp(name, "thread_name")) {
			v = &t->threads;
			n = &t->nthreads;
			ASSERT_FALSE(find_name(*v, *n, pid, tid, true),
				     "find_name");
		} else {
			ASSERT_STREQ(name, "process_name", "name");
			v = &t->procs;
			n = &t->nprocs;
			ASSERT_FALSE(find_name(*v, *n, pid, 0, false),
				     "find_name");
		}
		*v = push(*v, *n, sizeof(**v));
		(*v)[(*n)++] = (struct pf_name){ pid, tid, nm->str, nm->len };
	} else if (!strcmp(ph, "X")) {
		struct pf_slice s = {
			.pid = pid, .tid = tid, .name = name, .ev = ev
		};

		/* ts and dur: non-negative microseconds, ns decimals */
		ASSERT_TRUE(jc_us_to_ns(jc_get(ev, "ts"), &s.ts),
			    "jc_us_to_ns");
		ASSERT_TRUE(jc_us_to_ns(jc_get(ev, "dur"), &s.dur),
			    "jc_us_to_ns");
		ASSERT_OK_PTR(jc_str(ev, "cat"), "jc_str");
		t->slices = push(t->slices, t->nslices, sizeof(s));
		t->slices[t->nslices++] = s;
	} else {
		struct pf_flow f = { .pid = pid,
				     .tid = tid,
				     .ph = *ph,
				     .name = name,
				     .cat = jc_str(ev, "cat") };
		const char *bp = jc_str(ev, "bp");

		ASSERT_TRUE(!strcmp(ph, "s") || !strcmp(ph, "f"),
			    "!strcmp(ph, \"s\") || !strcmp(ph, \"f\")");
		ASSERT_TRUE(jc_u64(ev, "id", &f.id), "jc_u64");
		ASSERT_TRUE(jc_us_to_ns(jc_get(ev, "ts"), &f.ts),
			    "jc_us_to_ns");
		ASSERT_OK_PTR(f.cat, "f.cat");
		if (!f.cat)
			f.cat = "";
		/* the end binds to the slice around it, not the next one */
		ASSERT_TRUE(*ph == 's' ? !bp : bp && !strcmp(bp, "e"),
			    "*ph == 's' ? !bp : bp && !strcmp(bp, ...");
		t->flows = push(t->flows, t->nflows, sizeof(f));
		t->flows[t->nflows++] = f;
	}
}

/* Parses t->text strictly and checks what every trace must keep. */
static void check_trace(struct trace *t)
{
	const struct jc_val *evs;
	char err[160];
	size_t i;

	ASSERT_TRUE(t->len > 0 && t->text[t->len - 1] == '\n',
		    "t->len > 0 && t->text[t->len - 1] == ...");
	if (jc_parse(t->text, t->len, &t->root, err, sizeof(err))) {
		fprintf(stderr, "  not JSON: %s\n", err);
		ASSERT_FALSE("the export parses as JSON",
			     "\"the export parses as JSON\"");
		return;
	}
	ASSERT_EQ(t->root.type, JC_OBJ, "root.type");
	ASSERT_TRUE(jc_str(&t->root, "displayTimeUnit") &&
			    !strcmp(jc_str(&t->root, "displayTimeUnit"), "ns"),
		    "jc_str");
	evs = jc_get(&t->root, "traceEvents");
	ASSERT_TRUE(evs && evs->type == JC_ARR, "evs && evs->type == JC_ARR");
	if (!evs || evs->type != JC_ARR)
		return;
	for (i = 0; i < evs->n; i++)
		parse_event(t, &evs->items[i]);
	/* every slice and flow is on a named thread of a named process */
	for (i = 0; i < t->nslices; i++) {
		ASSERT_TRUE(find_name(t->threads, t->nthreads, t->slices[i].pid,
				      t->slices[i].tid, true),
			    "find_name");
		ASSERT_TRUE(find_name(t->procs, t->nprocs, t->slices[i].pid, 0,
				      false),
			    "find_name");
	}
	for (i = 0; i < t->nflows; i++)
		ASSERT_TRUE(find_name(t->threads, t->nthreads, t->flows[i].pid,
				      t->flows[i].tid, true),
			    "find_name");
	check_nesting(t);
	check_flows(t);
}

static const struct pf_slice *find_slice(const struct trace *t,
					 const char *name, uint64_t pid,
					 uint64_t tid, uint64_t ts)
{
	size_t i;

	for (i = 0; i < t->nslices; i++)
		if (!strcmp(t->slices[i].name, name) &&
		    t->slices[i].pid == pid && t->slices[i].tid == tid &&
		    t->slices[i].ts == ts)
			return &t->slices[i];
	return NULL;
}

/* The request span named name, or NULL. */
static const struct pf_slice *find_span(const struct trace *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nslices; i++)
		if (t->slices[i].pid == TT_PERFETTO_REQ_PID &&
		    !strcmp(t->slices[i].name, name))
			return &t->slices[i];
	return NULL;
}

/* The span of r covers [t_arrive, t_wire]; its phases tile it in order. */
static void check_span(const struct trace *t, const struct pf_slice *sp,
		       const struct tt_request *r, uint64_t t0,
		       const char *const *phases, const uint64_t *bounds,
		       int nphases)
{
	const struct pf_slice *ph;
	int i;

	ASSERT_OK_PTR(sp, "sp");
	if (!sp)
		return;
	ASSERT_EQ(sp->ts, r->t_arrive - t0, "sp.ts");
	ASSERT_EQ(sp->dur, r->t_wire - r->t_arrive, "sp.dur");
	for (i = 0; i < nphases; i++) {
		ph = find_slice(t, phases[i], sp->pid, sp->tid, bounds[i] - t0);
		ASSERT_OK_PTR(ph, "ph");
		if (ph)
			ASSERT_EQ(ph->dur, bounds[i + 1] - bounds[i], "ph.dur");
	}
	ASSERT_EQ(bounds[0], r->t_arrive, "bounds[0]");
	ASSERT_EQ(bounds[nphases], r->t_wire, "bounds[nphases]");
}

static struct tt_request mkreq(__u64 id, __u64 arrive, __u64 read,
			       __u64 first_write, __u64 wire, __u32 writer)
{
	struct tt_request r = { .id = id,
				.family = AF_INET,
				.rport = 5550 + id,
				.tgid = TGID(writer),
				.writer_tid = writer,
				.t_arrive = arrive,
				.t_read = read,
				.t_first_write = first_write,
				.t_wire = wire,
				.tokens = 1,
				.complete = arrive && read && first_write &&
					    wire };

	inet_pton(AF_INET, "10.0.0.1", r.raddr);
	r.ttft = arrive && wire ? wire - arrive : 0;
	if (!r.complete)
		r.incomplete = TT_INC_NO_WIRE;
	return r;
}

/* The chain of cp_chain() with its engine 201 in another process, and
 * thread names. */
static struct tt_critpath *chain_stream(void)
{
	struct stream s = { 0 };

	/* a comm of any bytes: quote, backslash, control, not UTF-8, é */
	comm(&s, 1, 101, "fe\"\\\x01\xff\xc3\xa9");
	comm(&s, 2, 102, "tokenizer");
	comm(&s, 3, 200, "engine-proc");
	comm(&s, 4, 201, "engine");
	cp_chain(&s, 201);
	return cp_feed(&s);
}

static void to_cp(const struct tt_request *r, size_t n, __u32 reader,
		  struct tt_cp_request *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i] = req(r[i].id, r[i].t_arrive, r[i].t_read,
			     r[i].t_first_write, r[i].t_wire, reader,
			     r[i].writer_tid);
		out[i].t_end = r[i].t_wire;
	}
}

static void test_export(void)
{
	struct tt_request rq[4] = {
		mkreq(1, 1000 * US, 1100 * US, 2000 * US, 2100 * US, 104),
		mkreq(2, 1500 * US, 1600 * US, 1700 * US, 1800 * US, 101),
		mkreq(3, 1550 * US, 1560 * US, 1570 * US, 0, 101),
		mkreq(4, 2200 * US, 2250 * US, 2300 * US, 2400 * US, 101),
	};
	static const char *const short_phases[3] = { "network.in", "processing",
						     "network.out" };
	/* request 1 is picked up at once: its reader's work and the rest of
	 * the path are one processing phase, nothing is queued */
	const uint64_t b1[4] = { 1000 * US, 1100 * US, 2000 * US, 2100 * US };
	const uint64_t b2[4] = { 1500 * US, 1600 * US, 1700 * US, 1800 * US };
	const uint64_t b4[4] = { 2200 * US, 2250 * US, 2300 * US, 2400 * US };
	/* pid, tid of the "s" and "f" of each arrow, and their times */
	static const uint64_t want_flows[3][6] = {
		{ 100, 101, 1150 * US, 100, 102, 1210 * US },
		{ 100, 102, 1360 * US, 200, 201, 1501500 },
		{ 200, 201, 1701500, 100, 104, 1925 * US },
	};
	struct tt_critpath *cp = chain_stream();
	struct tt_cp_request crq[4];
	struct tt_cp_result res[4];
	const struct pf_slice *sp1, *sp2, *sp4, *sl;
	const struct pf_name *nm;
	struct trace t;
	size_t i, k;

	inet_pton(AF_INET6, "::1", rq[1].raddr);
	rq[1].family = AF_INET6;
	to_cp(rq, 4, 101, crq);
	ASSERT_OK(tt_critpath_walk_all(cp, crq, 4, res),
		  "tt_critpath_walk_all");
	/* the pick-up's engine ran at 1220 us */
	ASSERT_EQ(res[0].t_dispatch, 1220 * US, "res[0].t_dispatch");
	ASSERT_OK(export_trace(&t, cp, rq, res, 4), "export_trace");
	save(&t, getenv("TT_PERFETTO_OUT"));
	check_trace(&t);

	/* tracks: 4 threads with timelines in 2 processes, one lane pair */
	ASSERT_EQ(t.nthreads, 4 + 2, "t.nthreads");
	ASSERT_EQ(t.nprocs, 3, "t.nprocs");
	nm = find_name(t.threads, t.nthreads, 100, 101, true);
	/* the byte that is not UTF-8 is U+FFFD (tt_json_str) */
	ASSERT_TRUE(nm && nm->len == 10 &&
			    !memcmp(nm->name, "fe\"\\\x01\xef\xbf\xbd\xc3\xa9", 10),
		    "nm && nm->len == 10 && !memcmp(nm->nam...");
	nm = find_name(t.threads, t.nthreads, 100, 104, true);
	ASSERT_TRUE(nm && !strcmp(nm->name, "tid 104"),
		    "nm && !strcmp(nm->name, \"tid 104\")");
	nm = find_name(t.procs, t.nprocs, 200, 0, false);
	ASSERT_TRUE(nm && !strcmp(nm->name, "engine-proc"),
		    "nm && !strcmp(nm->name, \"engine-proc\")");
	nm = find_name(t.procs, t.nprocs, 100, 0, false);
	ASSERT_TRUE(nm && !strcmp(nm->name, "pid 100"),
		    "nm && !strcmp(nm->name, \"pid 100\")");
	nm = find_name(t.procs, t.nprocs, TT_PERFETTO_REQ_PID, 0, false);
	ASSERT_TRUE(nm && !strcmp(nm->name, "requests"),
		    "nm && !strcmp(nm->name, \"requests\")");
	/* thread 200 has a name and no timeline: no track */
	ASSERT_FALSE(find_name(t.threads, t.nthreads, 200, 200, true),
		     "find_name");

	/* thread states; the last ones stretch to the end of the view */
	sl = find_slice(&t, "blocked: futex 0x10", 200, 201, 60 * US);
	ASSERT_TRUE(sl && sl->dur == 1440 * US, "sl && sl->dur == 1440 * US");
	sl = find_slice(&t, "runnable", 100, 102, 1200 * US);
	ASSERT_TRUE(sl && sl->dur == 20 * US, "sl && sl->dur == 20 * US");
	sl = find_slice(&t, "running", 100, 104, 1950 * US);
	ASSERT_TRUE(sl && sl->dur == 450 * US, "sl && sl->dur == 450 * US");
	sl = find_slice(&t, "running", 100, 101, 0);
	ASSERT_TRUE(sl && sl->dur == 2400 * US, "sl && sl->dur == 2400 * US");

	/* spans, phases, lanes */
	sp1 = find_span(&t, "request 1 10.0.0.1:5551");
	sp2 = find_span(&t, "request 2 [::1]:5552");
	sp4 = find_span(&t, "request 4 10.0.0.1:5554");
	check_span(&t, sp1, &rq[0], 0, short_phases, b1, 3);
	check_span(&t, sp2, &rq[1], 0, short_phases, b2, 3);
	check_span(&t, sp4, &rq[3], 0, short_phases, b4, 3);
	ASSERT_FALSE(find_span(&t, "request 3 10.0.0.1:5553"), "find_span");
	ASSERT_TRUE(sp1 && sp2 && sp4 && sp1->tid != sp2->tid &&
			    sp1->tid == sp4->tid,
		    "sp1 && sp2 && sp4 && sp1->tid != sp2-...");
	/* request 1's path, nested in its phases */
	ASSERT_TRUE(sp1 && find_slice(&t, "compute.cpu", sp1->pid, sp1->tid,
				      1503 * US),
		    "sp1 && find_slice(&t, \"compute.cpu\", ...");
	ASSERT_TRUE(sp1 && find_slice(&t, "scheduler.runqueue", sp1->pid,
				      sp1->tid, 1900 * US),
		    "sp1 && find_slice(&t, \"scheduler.runq...");
	if (sp1) {
		const struct jc_val *args = jc_get(sp1->ev, "args");
		const struct jc_val *st = jc_get(args, "stages_us");
		uint64_t ns;

		ASSERT_FALSE(jc_get(st, "scheduler.queue"), "jc_get");
		ASSERT_TRUE(jc_us_to_ns(jc_get(st, "compute.cpu"), &ns) &&
				    ns == 827 * US,
			    "jc_us_to_ns(jc_get(st, \"compute.cpu\")...");
		ASSERT_TRUE(jc_str(args, "dispatch") &&
				    !strcmp(jc_str(args, "dispatch"), "pickup"),
			    "jc_str");
	}

	/* arrows: 101 -> 102 -> 201 -> 104, bound to the states of the path */
	ASSERT_EQ(t.nflows, 6, "t.nflows");
	for (i = 0; i < t.nflows && t.nflows == 6; i++) {
		const struct pf_flow *f = &t.flows[i];

		k = i / 2;
		ASSERT_EQ(f->ph, (i % 2 ? 'f' : 's'), "f.ph");
		ASSERT_EQ(f->pid, want_flows[k][i % 2 * 3], "f.pid");
		ASSERT_EQ(f->tid, want_flows[k][i % 2 * 3 + 1], "f.tid");
		ASSERT_EQ(f->ts, want_flows[k][i % 2 * 3 + 2], "f.ts");
	}
	sl = t.nflows == 6 ? slice_at(&t, 200, 201, t.flows[3].ts) : NULL;
	ASSERT_TRUE(sl && !strcmp(sl->name, "runnable"),
		    "sl && !strcmp(sl->name, \"runnable\")");

	trace_free(&t);
	for (i = 0; i < 4; i++)
		tt_cp_result_free(&res[i]);
	tt_critpath_free(cp);
}

/*
 * A busy engine 102 hands request B's token to writer 112 at 1500 us and
 * A's to 111 at 2000 us; reader 101 let A go when it blocked at 1150 us.
 * A's phases: network.in, processing (the reader), scheduler.queue,
 * processing, network.out; no arrow crosses the queue.
 */
static void test_queue_phases(void)
{
	struct tt_request rq[2] = {
		mkreq(1, 50 * US, 100 * US, 1520 * US, 1560 * US, 112),
		mkreq(2, 1000 * US, 1100 * US, 2050 * US, 2100 * US, 111),
	};
	static const char *const phases[5] = { "network.in", "processing",
					       "scheduler.queue", "processing",
					       "network.out" };
	const uint64_t b[6] = { 1000 * US, 1100 * US, 1150 * US,
				1500 * US, 2050 * US, 2100 * US };
	static const uint64_t want_flows[4][3] = {
		{ 102, 's', 800 * US }, { 112, 'f', 1505 * US },
		{ 102, 's', 1750 * US }, { 111, 'f', 2005 * US },
	};
	struct tt_cp_request crq[2];
	struct tt_cp_result res[2];
	const struct pf_slice *sp;
	struct stream s = { 0 };
	struct tt_critpath *cp;
	struct trace t;
	size_t i;
	__u32 w;

	sw_in(&s, 0, 101);
	sw_in(&s, 0, 102);
	for (w = 111; w <= 112; w++) {
		sw_in(&s, 1, w);
		sw_out(&s, 2, w, (struct blk){ .sys = NR_FUTEX, .arg0 = w });
	}
	sw_out(&s, 1150 * US, 101, (struct blk){ .sys = NR_EPOLL_WAIT });
	wake(&s, 1500 * US, 102, 112, 0, NR_FUTEX, 112);
	sw_in(&s, 1510 * US, 112);
	sw_out(&s, 1530 * US, 112,
	       (struct blk){ .sys = NR_FUTEX, .arg0 = 112 });
	wake(&s, 2000 * US, 102, 111, 0, NR_FUTEX, 111);
	sw_in(&s, 2010 * US, 111);
	cp = cp_feed(&s);
	to_cp(rq, 2, 101, crq);
	ASSERT_OK(tt_critpath_walk_all(cp, crq, 2, res),
		  "tt_critpath_walk_all");
	ASSERT_EQ(res[1].dispatch, TT_CP_DISP_HANDOFF, "res[1].dispatch");
	ASSERT_EQ(res[1].t_enqueue, 1150 * US, "res[1].t_enqueue");
	ASSERT_EQ(res[1].t_dispatch, 1500 * US, "res[1].t_dispatch");
	ASSERT_EQ(res[1].stage_ns[TT_ST_QUEUE], 350 * US,
		  "res[1].stage_ns[TT_ST_QUEUE]");
	ASSERT_OK(export_trace(&t, cp, rq, res, 2), "export_trace");
	check_trace(&t);
	sp = find_span(&t, "request 2 10.0.0.1:5552");
	check_span(&t, sp, &rq[1], 0, phases, b, 5);
	ASSERT_TRUE(sp && find_slice(&t, "compute.cpu", sp->pid, sp->tid,
				     1100 * US),
		    "sp && find_slice(&t, \"compute.cpu\", s...");
	ASSERT_EQ(t.nflows, 4, "t.nflows");
	for (i = 0; i < t.nflows && t.nflows == 4; i++) {
		ASSERT_EQ(t.flows[i].tid, want_flows[i][0], "flows[i].tid");
		ASSERT_EQ(t.flows[i].ph, want_flows[i][1], "flows[i].ph");
		ASSERT_EQ(t.flows[i].ts, want_flows[i][2], "flows[i].ts");
	}
	trace_free(&t);
	for (i = 0; i < 2; i++)
		tt_cp_result_free(&res[i]);
	tt_critpath_free(cp);
}

/* The reader's runqueue wait shows inside network.in; phases are not
 * repeated as path slices. */
static void test_reader_runqueue(void)
{
	struct tt_request rq =
		mkreq(1, 1000 * US, 1050 * US, 1500 * US, 1600 * US, 101);
	struct stream s = { 0 };
	const struct pf_slice *sp, *sl;
	struct tt_cp_request crq;
	struct tt_critpath *cp;
	struct tt_cp_result res;
	struct trace t;
	size_t i;

	sw_in(&s, 100 * US, 101);
	sw_out(&s, 200 * US, 101,
	       (struct blk){ .sys = NR_RECVFROM, .arg0 = 5, .mode = S_IFSOCK });
	wake(&s, 1000 * US, UNTRACED, 101, TT_F_SOFTIRQ, -1, 0);
	sw_in(&s, 1010 * US, 101);
	cp = cp_feed(&s);
	to_cp(&rq, 1, 101, &crq);
	ASSERT_OK(tt_critpath_walk(cp, &crq, &res), "tt_critpath_walk");
	ASSERT_OK(export_trace(&t, cp, &rq, &res, 1), "export_trace");
	check_trace(&t);
	sp = find_span(&t, "request 1 10.0.0.1:5551");
	ASSERT_OK_PTR(sp, "sp");
	if (sp) {
		/* t0 is the first event, at 100 us */
		sl = find_slice(&t, "scheduler.runqueue", sp->pid, sp->tid,
				900 * US);
		ASSERT_TRUE(sl && sl->dur == 10 * US,
			    "sl && sl->dur == 10 * US");
		sl = find_slice(&t, "network.in", sp->pid, sp->tid, 900 * US);
		ASSERT_TRUE(sl && sl->dur == 50 * US,
			    "sl && sl->dur == 50 * US");
		sl = find_slice(&t, "running", 100, 101, 910 * US);
		ASSERT_TRUE(sl && sl->dur == 590 * US,
			    "sl && sl->dur == 590 * US");
	}
	for (i = 0; i < t.nslices; i++) {
		const char *cat = jc_str(t.slices[i].ev, "cat");

		ASSERT_TRUE(cat && (strcmp(cat, "critical path") ||
				    strcmp(t.slices[i].name, "network.in")),
			    "cat && (strcmp(cat, \"critical path\") ...");
	}
	ASSERT_EQ(t.nflows, 0, "t.nflows");
	trace_free(&t);
	tt_cp_result_free(&res);
	tt_critpath_free(cp);
}

/* A's wait for its reader, busy with X when A came, shows inside
 * network.in as scheduler.backlog, a slice of the path. */
static void test_reader_backlog(void)
{
	struct tt_request rq[2] = {
		mkreq(1, 50 * US, 100 * US, 200 * US, 3000 * US, 101),
		mkreq(2, 1000 * US, 1050 * US, 1100 * US, 1150 * US, 101),
	};
	struct stream s = { 0 };
	const struct pf_slice *sp, *sl;
	struct tt_cp_request crq[2];
	struct tt_cp_result res[2];
	struct tt_critpath *cp;
	struct trace t;
	size_t i;

	sw_in(&s, 0, 101);
	cp = cp_feed(&s);
	to_cp(rq, 2, 101, crq);
	ASSERT_OK(tt_critpath_walk_all(cp, crq, 2, res),
		  "tt_critpath_walk_all");
	ASSERT_OK(export_trace(&t, cp, rq, res, 2), "export_trace");
	check_trace(&t);
	sp = find_span(&t, "request 2 10.0.0.1:5552");
	ASSERT_OK_PTR(sp, "sp");
	if (sp) {
		sl = find_slice(&t, "scheduler.backlog", sp->pid, sp->tid,
				1000 * US);
		ASSERT_TRUE(sl && sl->dur == 50 * US,
			    "sl && sl->dur == 50 * US");
		sl = find_slice(&t, "network.in", sp->pid, sp->tid, 1000 * US);
		ASSERT_TRUE(sl && sl->dur == 50 * US,
			    "sl && sl->dur == 50 * US");
	}
	trace_free(&t);
	for (i = 0; i < 2; i++)
		tt_cp_result_free(&res[i]);
	tt_critpath_free(cp);
}

/* _IOWR('F', 0x2A, 32): NV_ESC_RM_CONTROL */
#define NV_RM_CONTROL 0xc020462aU

/* The slice named name on thread 101's track at t (absolute, t0 900 us). */
static const struct pf_slice *slice_101(const struct trace *t, const char *name,
					__u64 at)
{
	return find_slice(t, name, 100, 101, at - 900 * US);
}

/*
 * GPU calls nest in the thread's states, cut to them: a blocking sync
 * spans running, blocked and running again; an ioctl nests in the sync,
 * one that crosses its end is cut there; the walk's GPU time shows.
 */
static void test_gpu_calls(void)
{
	struct tt_request rq =
		mkreq(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101);
	struct tt_dev_info nv = { .path = "/dev/nvidia0",
				  .rdev = GPU_RDEV,
				  .kind = TT_GPU_NVIDIA,
				  .dev = 5,
				  .ino = 400 };
	const struct pf_slice *sp, *sl;
	struct stream s = { 0 };
	struct tt_cp_request crq;
	struct tt_critpath *cp;
	struct tt_cp_result res;
	const struct jc_val *args;
	struct tt_event *ev;
	struct trace t;

	sw_in(&s, 900 * US, 101);
	sw_in(&s, 950 * US, 103);
	gpu_call(&s, 1150 * US, 1160 * US, 101, "cuLaunchKernel");
	/* probed at its entry only (--gpu-probes=all): it ends at the sync */
	ev = ev_new(&s, TT_EV_GPU_CALL, 1170 * US, 101);
	ev->call.ts_enter = 1170 * US;
	ev->call.fn = cuda_fn("cuLaunchKernel_ptsz");
	ev->call.flags = TT_CALL_ENTRY;
	gpu_call(&s, 1200 * US, 1560 * US, 101, "cuStreamSynchronize");
	gpu_ioctl(&s, 1203 * US, 1206 * US, 101, NV_RM_CONTROL, GPU_RDEV);
	sw_out(&s, 1210 * US, 101,
	       (struct blk){ .sys = NR_POLL,
			     .arg0 = 0x7f00,
			     .mode = S_IFCHR,
			     .rdev = GPU_RDEV });
	wake(&s, 1540 * US, 103, 101, 0, NR_WRITE, 6);
	sw_out(&s, 1545 * US, 103, (struct blk){ .sys = NR_FUTEX, .arg0 = 5 });
	sw_in(&s, 1550 * US, 101);
	gpu_ioctl(&s, 1555 * US, 1565 * US, 101, NV_RM_CONTROL, GPU_RDEV);
	cp = cp_feed(&s);
	ASSERT_OK(tt_critpath_add_gpu_device(cp, &nv),
		  "tt_critpath_add_gpu_device");
	to_cp(&rq, 1, 101, &crq);
	ASSERT_OK(tt_critpath_walk(cp, &crq, &res), "tt_critpath_walk");
	ASSERT_EQ(res.stage_ns[TT_ST_GPU], 350 * US, "res.stage_ns[TT_ST_GPU]");
	ASSERT_OK(export_trace(&t, cp, &rq, &res, 1), "export_trace");
	save(&t, getenv("TT_PERFETTO_GPU_OUT"));
	check_trace(&t);

	sl = slice_101(&t, "cuLaunchKernel", 1150 * US);
	ASSERT_TRUE(sl && sl->dur == 10 * US, "sl && sl->dur == 10 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && jc_str(args, "class") &&
			    !strcmp(jc_str(args, "class"), "launch") &&
			    jc_str(args, "stage") &&
			    !strcmp(jc_str(args, "stage"), "compute.cpu"),
		    "args && jc_str(args, \"class\") && !str...");
	ASSERT_TRUE(args && jc_get(args, "ret"), "a launch's ret");
	sl = slice_101(&t, "cuLaunchKernel_ptsz", 1170 * US);
	ASSERT_TRUE(sl && sl->dur == 30 * US, "entry-only: sl->dur == 30 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && !jc_get(args, "ret") && jc_str(args, "probe") &&
			    !strcmp(jc_str(args, "probe"), "entry only"),
		    "entry-only: no ret, probe: entry only");
	/* one call, three pieces: one per state it spans */
	sl = slice_101(&t, "cuStreamSynchronize", 1200 * US);
	ASSERT_TRUE(sl && sl->dur == 10 * US, "sl && sl->dur == 10 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && jc_str(args, "stage") &&
			    !strcmp(jc_str(args, "stage"), "compute.gpu"),
		    "args && jc_str(args, \"stage\") && !str...");
	sl = slice_101(&t, "cuStreamSynchronize", 1210 * US);
	ASSERT_TRUE(sl && sl->dur == 330 * US, "sl && sl->dur == 330 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && !jc_get(args, "stage"),
		    "args && !jc_get(args, \"stage\")");
	sl = slice_101(&t, "blocked: sync cuStreamSynchronize", 1210 * US);
	ASSERT_TRUE(sl && sl->dur == 330 * US, "sl && sl->dur == 330 * US");
	sl = slice_101(&t, "cuStreamSynchronize", 1550 * US);
	ASSERT_TRUE(sl && sl->dur == 10 * US, "sl && sl->dur == 10 * US");
	sl = slice_101(&t, "ioctl NV_ESC_RM_CONTROL", 1203 * US);
	ASSERT_TRUE(sl && sl->dur == 3 * US, "sl && sl->dur == 3 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && jc_str(args, "cmd") &&
			    !strcmp(jc_str(args, "cmd"), "0xc020462a"),
		    "args && jc_str(args, \"cmd\") && !strcm...");
	sl = slice_101(&t, "ioctl NV_ESC_RM_CONTROL", 1560 * US);
	ASSERT_TRUE(sl && sl->dur == 5 * US, "sl && sl->dur == 5 * US");
	/* the request's path says where the GPU time went */
	sp = find_span(&t, "request 1 10.0.0.1:5551");
	ASSERT_TRUE(sp && find_slice(&t, "compute.gpu", sp->pid, sp->tid,
				     (1210 - 900) * US),
		    "sp && find_slice(&t, \"compute.gpu\", s...");
	trace_free(&t);
	tt_cp_result_free(&res);
	tt_critpath_free(cp);
}

/*
 * A file read nests in the thread's states like a GPU call, cut to them:
 * its on-CPU piece says the walk made it storage.io (docs/design.md
 * §4.3), and the request's path shows it.
 */
static void test_file_reads(void)
{
	struct tt_request rq =
		mkreq(1, 1000 * US, 1100 * US, 1600 * US, 1650 * US, 101);
	const struct pf_slice *sp, *sl;
	struct stream s = { 0 };
	struct tt_cp_request crq;
	struct tt_critpath *cp;
	struct tt_cp_result res;
	const struct jc_val *args;
	struct trace t;

	sw_in(&s, 900 * US, 101);
	file_read(&s, 1200 * US, 1400 * US, 101, NR_PREAD64, S_IFREG,
		  O_DIRECT_X86);
	sw_out(&s, 1250 * US, 101,
	       (struct blk){ .sys = NR_PREAD64,
			     .arg0 = 9,
			     .mode = S_IFREG,
			     .iowait = true });
	wake(&s, 1350 * US, 0, 101, TT_F_HARDIRQ, -1, 0);
	sw_in(&s, 1360 * US, 101);
	cp = cp_feed(&s);
	to_cp(&rq, 1, 101, &crq);
	ASSERT_OK(tt_critpath_walk(cp, &crq, &res), "tt_critpath_walk");
	ASSERT_EQ(res.stage_ns[TT_ST_STORAGE], 190 * US,
		  "res.stage_ns[TT_ST_STORAGE]");
	ASSERT_OK(export_trace(&t, cp, &rq, &res, 1), "export_trace");
	check_trace(&t);

	sl = slice_101(&t, "pread64 direct", 1200 * US);
	ASSERT_TRUE(sl && sl->dur == 50 * US, "sl && sl->dur == 50 * US");
	ASSERT_STREQ(sl ? jc_str(sl->ev, "cat") : NULL, "storage", "cat");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && jc_str(args, "stage") &&
			    !strcmp(jc_str(args, "stage"), "storage.io"),
		    "on-CPU piece: stage storage.io");
	sl = slice_101(&t, "pread64 direct", 1250 * US);
	ASSERT_TRUE(sl && sl->dur == 100 * US, "sl && sl->dur == 100 * US");
	args = sl ? jc_get(sl->ev, "args") : NULL;
	ASSERT_TRUE(args && !jc_get(args, "stage"), "blocked piece: no stage");
	sl = slice_101(&t, "pread64 direct", 1360 * US);
	ASSERT_TRUE(sl && sl->dur == 40 * US, "sl && sl->dur == 40 * US");
	sp = find_span(&t, "request 1 10.0.0.1:5551");
	ASSERT_TRUE(sp && find_slice(&t, "storage.io", sp->pid, sp->tid,
				     (1200 - 900) * US),
		    "the path's storage.io slice");
	trace_free(&t);
	tt_cp_result_free(&res);
	tt_critpath_free(cp);
}

/* Nothing traced, nothing walked: still a valid, loadable file. */
static void test_empty_and_partial(void)
{
	struct tt_critpath *cp = tt_critpath_new();
	struct tt_request rq[2] = {
		mkreq(1, 1000 * US, 1100 * US, 1500 * US, 1600 * US, 101),
		mkreq(2, 0, 1100 * US, 1500 * US, 1600 * US, 101),
	};
	static const char *const phases[3] = { "network.in", "processing",
					       "network.out" };
	const uint64_t b[4] = { 1000 * US, 1100 * US, 1500 * US, 1600 * US };
	const struct jc_val *evs;
	struct trace t;

	ASSERT_OK(export_trace(&t, cp, NULL, NULL, 0), "export_trace");
	check_trace(&t);
	evs = jc_get(&t.root, "traceEvents");
	ASSERT_TRUE(evs && evs->n == 0, "evs && evs->n == 0");
	trace_free(&t);

	/* no critpath, no walk: spans and phases only, time from t_arrive */
	ASSERT_OK(export_trace(&t, NULL, rq, NULL, 2), "export_trace");
	check_trace(&t);
	ASSERT_EQ(t.nflows, 0, "t.nflows");
	ASSERT_EQ(t.nslices, 4, "t.nslices");
	check_span(&t, find_span(&t, "request 1 10.0.0.1:5551"), &rq[0],
		   1000 * US, phases, b, 3);
	ASSERT_FALSE(find_span(&t, "request 2 10.0.0.1:5552"), "find_span");
	trace_free(&t);
	tt_critpath_free(cp);
}

static ssize_t full_write(void *cookie, const char *buf, size_t size)
{
	errno = ENOSPC;
	return -1;
}

/* A full disk is an error, not a truncated file passed as good. */
static void test_write_error(void)
{
	cookie_io_functions_t full = { .write = full_write };
	struct tt_request rq = mkreq(1, 1000, 1100, 1500, 1600, 101);
	FILE *f = fopencookie(NULL, "w", full);

	ASSERT_OK_PTR(f, "f");
	if (!f)
		return;
	ASSERT_EQ(tt_perfetto_write(f, NULL, &rq, NULL, 1), -EIO,
		  "tt_perfetto_write");
	fclose(f);
}

/* The checker itself is strict: what it must refuse and accept. */
static void test_json_check(void)
{
	static const char *const bad[] = {
		"",
		"{",
		"[1,]",
		"{\"a\":1,}",
		"01",
		"1.",
		"-",
		"\"\\x\"",
		"\"\x01\"",
		"\"\xff\"",
		"\"\xc0\xaf\"",
		"\"\\ud800\"",
		"\"\\udc00\"",
		"{\"a\":1,\"a\":2}",
		"[1] x",
		"tru",
		"{1:2}",
		"\"\xed\xa0\x80\"",
		"\"\\u12\"",
		"\"\\\b\"",
		"[\"a\" \"b\"]",
	};
	static const char *const good[] = {
		"{}",
		"[]",
		"0",
		"-0.5e+3",
		"\"\\u00e9\\ud83d\\ude00\\/\"",
		"{\"a\":[true,false,null,{\"b\":\"\xc3\xa9\"}]}",
	};
	struct jc_val v;
	char err[160];
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = jc_parse(bad[i], strlen(bad[i]), &v, err, sizeof(err));

		if (!r)
			fprintf(stderr, "  accepted bad %zu: %s\n", i, bad[i]);
		ASSERT_EQ(r, -1, "r");
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int r = jc_parse(good[i], strlen(good[i]), &v, err,
				 sizeof(err));

		if (r)
			fprintf(stderr, "  refused good %zu: %s\n", i, err);
		ASSERT_EQ(r, 0, "r");
		if (i == 4)
			ASSERT_TRUE(v.type == JC_STR && v.len == 7 &&
					    !memcmp(v.str,
						    "\xc3\xa9\xf0\x9f\x98\x80/",
						    7),
				    "v.type == JC_STR && v.len == 7 && !me...");
		jc_free(&v);
	}
	ASSERT_OK(jc_parse("12.345", 6, &v, err, sizeof(err)), "jc_parse");
	ASSERT_TRUE(jc_us_to_ns(&v, &ns) && ns == 12345,
		    "jc_us_to_ns(&v, &ns) && ns == 12345");
	jc_free(&v);
	ASSERT_OK(jc_parse("-1.0", 4, &v, err, sizeof(err)), "jc_parse");
	ASSERT_FALSE(jc_us_to_ns(&v, &ns), "jc_us_to_ns");
	jc_free(&v);
}

int main(void)
{
	TT_RUN(test_json_check);
	TT_RUN(test_export);
	TT_RUN(test_queue_phases);
	TT_RUN(test_reader_runqueue);
	TT_RUN(test_reader_backlog);
	TT_RUN(test_gpu_calls);
	TT_RUN(test_file_reads);
	TT_RUN(test_empty_and_partial);
	TT_RUN(test_write_error);
	TT_EXIT();
}
