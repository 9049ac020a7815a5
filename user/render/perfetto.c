/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Chrome trace event JSON for ui.perfetto.dev and chrome://tracing: thread
 * tracks from the critpath timelines, request lanes with their phases and
 * critical paths, flow arrows along each path's jumps between threads.
 * Arrows bind to slices by timestamp, so each end sits in the middle of a
 * path segment, which lies inside one state slice of its thread's track.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gpu.h"
#include "json.h"
#include "perfetto.h"

/* A thread with a track. */
struct pf_thread {
	__u32 tid, tgid;
};

struct pf {
	FILE *out;
	const struct tt_critpath *cp;
	__u64 t0; /* every timestamp is written relative to it */
	__u64 t_end; /* the end of the view: open states stretch to it */
	bool first; /* no event written yet */
	bool first_arg; /* no member written yet in the open args object */
	struct pf_thread *threads; /* sorted by (tgid, tid) */
	struct pf_thread *by_tid; /* the same, sorted by tid */
	size_t nthreads;
	__u64 flow_id;
	/* the thread intervals are being written for */
	__u32 tid, tgid;
	/* its GPU calls inside the interval being written */
	struct tt_cp_call *calls;
	size_t ncalls, capcalls;
	int err;
};

/* ---- JSON output ---- */

static void put_us(struct pf *w, __u64 ns)
{
	fprintf(w->out, "%llu.%03llu", (unsigned long long)(ns / 1000),
		(unsigned long long)(ns % 1000));
}

/* t relative to t0, in microseconds */
static void put_ts(struct pf *w, __u64 t)
{
	put_us(w, t > w->t0 ? t - w->t0 : 0);
}

/* Opens an event: {"ph":ph,"pid":pid,"tid":tid,"name":name */
static void ev_open(struct pf *w, const char *ph, __u32 pid, __u32 tid,
		    const char *name)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = false;
	fprintf(w->out, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"name\":", ph,
		pid, tid);
	tt_json_str(w->out, name, SIZE_MAX);
}

/* A complete event over [start, end), left open for args. */
static void ev_slice(struct pf *w, __u32 pid, __u32 tid, const char *name,
		     const char *cat, __u64 start, __u64 end)
{
	ev_open(w, "X", pid, tid, name);
	fprintf(w->out, ",\"cat\":\"%s\",\"ts\":", cat);
	put_ts(w, start);
	fputs(",\"dur\":", w->out);
	put_us(w, end > start ? end - start : 0);
}

static void args_open(struct pf *w)
{
	fputs(",\"args\":{", w->out);
	w->first_arg = true;
}

static void arg_key(struct pf *w, const char *key)
{
	if (!w->first_arg)
		fputc(',', w->out);
	w->first_arg = false;
	tt_json_str(w->out, key, SIZE_MAX);
	fputc(':', w->out);
}

static void arg_str(struct pf *w, const char *key, const char *v, size_t max)
{
	arg_key(w, key);
	tt_json_str(w->out, v, max);
}

static void arg_u64(struct pf *w, const char *key, __u64 v)
{
	arg_key(w, key);
	fprintf(w->out, "%llu", (unsigned long long)v);
}

static void arg_us(struct pf *w, const char *key, __u64 ns)
{
	arg_key(w, key);
	put_us(w, ns);
}

static void arg_bool(struct pf *w, const char *key, bool v)
{
	arg_key(w, key);
	fputs(v ? "true" : "false", w->out);
}

/* closes the args object and the event */
static void args_close(struct pf *w)
{
	fputs("}}", w->out);
}

/* A metadata event naming a process or a thread. */
static void ev_name(struct pf *w, const char *what, __u32 pid, __u32 tid,
		    const char *name)
{
	ev_open(w, "M", pid, tid, what);
	args_open(w);
	arg_str(w, "name", name, SIZE_MAX);
	args_close(w);
}

/* ---- threads ---- */

static int stop_at_first(const struct tt_cp_interval *iv, void *ctx)
{
	return 1;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct pf_thread *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_tid(const void *a, const void *b)
{
	const struct pf_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The threads that have a timeline, in both orders. */
static int threads_collect(struct pf *w)
{
	size_t n = w->cp ? tt_critpath_nthreads(w->cp) : 0, i;
	struct pf_thread t;

	w->threads = calloc(n ? n : 1, sizeof(*w->threads));
	w->by_tid = calloc(n ? n : 1, sizeof(*w->by_tid));
	if (!w->threads || !w->by_tid)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (tt_critpath_thread(w->cp, i, &t.tid, &t.tgid))
			continue;
		/* a name alone makes no track */
		if (tt_critpath_intervals(w->cp, t.tid, w->t_end, stop_at_first,
					  NULL) != 1)
			continue;
		w->threads[w->nthreads++] = t;
	}
	qsort(w->threads, w->nthreads, sizeof(*w->threads), cmp_thread);
	if (w->nthreads)
		memcpy(w->by_tid, w->threads, w->nthreads * sizeof(*w->by_tid));
	qsort(w->by_tid, w->nthreads, sizeof(*w->by_tid), cmp_tid);
	return 0;
}

static const struct pf_thread *thread_track(const struct pf *w, __u32 tid)
{
	struct pf_thread key = { .tid = tid };

	if (!tid)
		return NULL;
	return bsearch(&key, w->by_tid, w->nthreads, sizeof(*w->by_tid),
		       cmp_tid);
}

static void threads_names(struct pf *w)
{
	const char *comm;
	char buf[32];
	size_t i;

	for (i = 0; i < w->nthreads; i++) {
		const struct pf_thread *t = &w->threads[i];

		if (!i || t->tgid != w->threads[i - 1].tgid) {
			comm = tt_critpath_comm(w->cp, t->tgid);
			snprintf(buf, sizeof(buf), "pid %u", t->tgid);
			ev_name(w, "process_name", t->tgid, t->tgid,
				comm ? comm : buf);
		}
		comm = tt_critpath_comm(w->cp, t->tid);
		snprintf(buf, sizeof(buf), "tid %u", t->tid);
		ev_name(w, "thread_name", t->tgid, t->tid, comm ? comm : buf);
	}
}

static int call_collect(const struct tt_cp_call *c, void *ctx)
{
	struct pf *w = ctx;
	struct tt_cp_call *grown;
	size_t cap;

	if (w->ncalls == w->capcalls) {
		cap = w->capcalls ? w->capcalls * 2 : 16;
		grown = realloc(w->calls, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		w->calls = grown;
		w->capcalls = cap;
	}
	w->calls[w->ncalls++] = *c;
	return 0;
}

static const char *cuda_class_name(unsigned int cls)
{
	switch (cls) {
	case TT_CUDA_LAUNCH:
		return "launch";
	case TT_CUDA_GRAPH:
		return "graph";
	case TT_CUDA_SYNC:
		return "sync";
	}
	return "other";
}

/* A GPU call cut to [s, e): a slice nested in the state slice. */
static void call_slice(struct pf *w, const struct tt_cp_interval *iv,
		       const struct tt_cp_call *c, __u64 s, __u64 e)
{
	char name[48], cmd[16];

	if (c->kind == TT_CP_CALL_IOCTL)
		snprintf(name, sizeof(name), "ioctl %.40s", c->name);
	else
		snprintf(name, sizeof(name), "%.40s", c->name);
	ev_slice(w, w->tgid, w->tid, name,
		 c->kind == TT_CP_CALL_FILEIO ? "storage" : "gpu", s, e);
	args_open(w);
	if (c->kind == TT_CP_CALL_FILEIO) {
		arg_key(w, "ret");
		fprintf(w->out, "%lld", (long long)c->ret);
		/* on-CPU time inside a file read is storage (§4.3) */
		if (iv->state == TT_CP_RUNNING)
			arg_str(w, "stage", tt_stage_name(TT_ST_STORAGE),
				SIZE_MAX);
	} else if (c->kind == TT_CP_CALL_IOCTL) {
		snprintf(cmd, sizeof(cmd), "%#x", c->cmd);
		arg_str(w, "cmd", cmd, sizeof(cmd));
		arg_key(w, "ret");
		fprintf(w->out, "%lld", (long long)c->ret);
	} else {
		arg_str(w, "class", cuda_class_name(c->cls), SIZE_MAX);
		if (c->entry_only) {
			/* no return probe: its end is the next call's start */
			arg_str(w, "probe", "entry only", SIZE_MAX);
		} else {
			arg_key(w, "ret");
			fprintf(w->out, "%lld", (long long)c->ret);
		}
		/* what the walk makes of on-CPU time inside it */
		if (iv->state == TT_CP_RUNNING &&
		    (c->cls == TT_CUDA_SYNC || c->cls == TT_CUDA_LAUNCH ||
		     c->cls == TT_CUDA_GRAPH))
			arg_str(w, "stage",
				tt_stage_name(c->cls == TT_CUDA_SYNC ?
						      TT_ST_GPU :
						      TT_ST_CPU),
				SIZE_MAX);
	}
	args_close(w);
}

/*
 * The calls inside state iv, cut to it: CUDA calls (disjoint), then
 * ioctls and file reads nested in them or beside them; one that would
 * cross a CUDA call (a clock slip) is cut where it meets it.
 */
static void thread_calls(struct pf *w, const struct tt_cp_interval *iv)
{
	size_t i, j;
	__u64 s, e;
	int err;

	w->ncalls = 0;
	err = tt_critpath_calls(w->cp, w->tid, iv->start, iv->end, call_collect,
				w);
	if (err) {
		if (err == -ENOMEM)
			w->err = err;
		return;
	}
	for (i = 0; i < w->ncalls; i++) {
		const struct tt_cp_call *c = &w->calls[i];

		s = c->start > iv->start ? c->start : iv->start;
		e = c->end < iv->end ? c->end : iv->end;
		for (j = 0; c->kind != TT_CP_CALL_CUDA && j < w->ncalls; j++) {
			const struct tt_cp_call *k = &w->calls[j];

			if (k->kind != TT_CP_CALL_CUDA || k->end <= s ||
			    k->start >= e || (k->start <= s && k->end >= e) ||
			    (k->start >= s && k->end <= e))
				continue;
			if (k->start > s)
				e = k->start;
			else
				s = k->end;
		}
		if (e > s)
			call_slice(w, iv, c, s, e);
	}
}

static int thread_state(const struct tt_cp_interval *iv, void *ctx)
{
	struct pf *w = ctx;
	char name[48];

	if (iv->state == TT_CP_BLOCKED)
		snprintf(name, sizeof(name), "blocked: %s", iv->reason);
	else
		snprintf(name, sizeof(name), "%s", tt_cp_state_name(iv->state));
	ev_slice(w, w->tgid, w->tid, name, "thread", iv->start, iv->end);
	args_open(w);
	arg_str(w, "reason", iv->reason, sizeof(iv->reason));
	if (iv->state == TT_CP_BLOCKED)
		arg_str(w, "stage_if_not_followed", tt_stage_name(iv->stage),
			SIZE_MAX);
	if (iv->waker_tid)
		arg_u64(w, "waker", iv->waker_tid);
	args_close(w);
	thread_calls(w, iv);
	return w->err;
}

static void threads_states(struct pf *w)
{
	size_t i;

	for (i = 0; i < w->nthreads && !w->err; i++) {
		w->tid = w->threads[i].tid;
		w->tgid = w->threads[i].tgid;
		tt_critpath_intervals(w->cp, w->tid, w->t_end, thread_state, w);
	}
}

/* ---- requests ---- */

/* A request's phase boundaries, clamped as the walk clamps them. */
struct pf_phases {
	__u64 t[6]; /* arrive, read, enqueue, dispatch, first write, wire */
};

/* The work before the queue (parsing, tokenizing) and after it are both
 * processing: one slice when nothing was queued. */
static const char *const phase_names[5] = {
	"network.in",
	"processing",
	"scheduler.queue",
	"processing",
	"network.out",
};

static __u64 clamp(__u64 x, __u64 lo, __u64 hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* False when the request has no span (t_arrive or t_wire unknown). */
static bool phases_of(const struct tt_request *r,
		      const struct tt_cp_result *res, struct pf_phases *p)
{
	__u64 a = r->t_arrive, w = r->t_wire, rd, f;

	if (!a || !w || w < a)
		return false;
	rd = clamp(r->t_read ? r->t_read : a, a, w);
	f = clamp(r->t_first_write ? r->t_first_write : w, rd, w);
	p->t[0] = a;
	p->t[1] = rd;
	p->t[3] = res && res->segs ? clamp(res->t_dispatch, rd, f) : rd;
	p->t[2] = res && res->segs ? clamp(res->t_enqueue, rd, p->t[3]) : rd;
	p->t[4] = f;
	p->t[5] = w;
	return true;
}

struct pf_lanes {
	size_t *order; /* drawable requests by t_arrive */
	size_t *lane; /* lane of each request (by index in reqs) */
	__u64 *busy_until; /* per lane */
	size_t n, nlanes;
	const struct tt_request *reqs;
};

static int cmp_arrive(const void *a, const void *b, void *ctx)
{
	const struct tt_request *reqs = ctx;
	const struct tt_request *x = &reqs[*(const size_t *)a];
	const struct tt_request *y = &reqs[*(const size_t *)b];

	if (x->t_arrive != y->t_arrive)
		return x->t_arrive < y->t_arrive ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Packs the drawable requests into as few non-overlapping lanes as the
 * greedy first fit by arrival gives. */
static int lanes_assign(struct pf_lanes *l, const struct tt_request *reqs,
			const struct tt_cp_result *results, size_t n)
{
	struct pf_phases p;
	size_t i, k;

	l->reqs = reqs;
	l->order = calloc(n ? n : 1, sizeof(*l->order));
	l->lane = calloc(n ? n : 1, sizeof(*l->lane));
	l->busy_until = calloc(n ? n : 1, sizeof(*l->busy_until));
	if (!l->order || !l->lane || !l->busy_until)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (phases_of(&reqs[i], results ? &results[i] : NULL, &p))
			l->order[l->n++] = i;
	qsort_r(l->order, l->n, sizeof(*l->order), cmp_arrive, (void *)reqs);
	for (i = 0; i < l->n; i++) {
		const struct tt_request *r = &reqs[l->order[i]];

		for (k = 0; k < l->nlanes; k++)
			if (l->busy_until[k] <= r->t_arrive)
				break;
		if (k == l->nlanes)
			l->nlanes++;
		l->busy_until[k] = r->t_wire;
		l->lane[l->order[i]] = k;
	}
	return 0;
}

static void lanes_free(struct pf_lanes *l)
{
	free(l->order);
	free(l->lane);
	free(l->busy_until);
}

static void request_span(struct pf *w, __u32 lane, const struct tt_request *r,
			 const struct tt_cp_result *res)
{
	char peer[64], name[96], inc[128];
	int st;

	tt_request_peer(r, peer, sizeof(peer));
	snprintf(name, sizeof(name), "request %llu %s",
		 (unsigned long long)r->id, peer);
	ev_slice(w, TT_PERFETTO_REQ_PID, lane, name, "request", r->t_arrive,
		 r->t_wire);
	args_open(w);
	arg_u64(w, "id", r->id);
	arg_str(w, "peer", peer, sizeof(peer));
	arg_us(w, "ttft_us", r->t_wire - r->t_arrive);
	arg_u64(w, "tokens", r->tokens);
	arg_bool(w, "complete", r->complete);
	arg_str(w, "status", tt_incomplete_str(r->incomplete, inc, sizeof(inc)),
		sizeof(inc));
	if (r->writer_tid)
		arg_u64(w, "writer", r->writer_tid);
	if (res && res->segs) {
		arg_str(w, "dispatch", tt_cp_dispatch_name(res->dispatch),
			SIZE_MAX);
		arg_str(w, "enqueue", tt_cp_enqueue_name(res->enqueue),
			SIZE_MAX);
		arg_bool(w, "path_complete", res->complete);
		arg_key(w, "stages_us");
		fputc('{', w->out);
		w->first_arg = true;
		for (st = 0; st < TT_ST_MAX; st++)
			if (res->stage_ns[st])
				arg_us(w, tt_stage_name(st), res->stage_ns[st]);
		fputc('}', w->out);
		w->first_arg = false;
	}
	args_close(w);
}

/* The phases of a request and, inside each, its path cut to the phase. */
static void request_phases(struct pf *w, __u32 lane, const struct tt_request *r,
			   const struct tt_cp_result *res,
			   const struct pf_phases *p)
{
	bool unqueued = p->t[2] == p->t[3] ||
			(res && !res->stage_ns[TT_ST_QUEUE]);
	__u64 s, e, lo, hi;
	size_t i;
	int ph;

	for (ph = 0; ph < 5; ph++) {
		lo = p->t[ph];
		hi = p->t[ph + 1];
		/* nothing queued: one processing slice, not two (a
		 * pick-up's engine may wait for a CPU between the two) */
		if (ph == 1 && unqueued)
			hi = p->t[4];
		else if (ph == 3 && unqueued)
			continue;
		if (hi <= lo)
			continue;
		ev_slice(w, TT_PERFETTO_REQ_PID, lane, phase_names[ph], "phase",
			 lo, hi);
		args_open(w);
		arg_u64(w, "request", r->id);
		args_close(w);
		for (i = 0; res && i < res->nsegs; i++) {
			const struct tt_cp_segment *sg = &res->segs[i];

			/* a phase segment is the phase slice itself, but
			 * the reader's work for others inside network.in */
			if (sg->state == TT_CP_PHASE &&
			    sg->stage != TT_ST_BACKLOG)
				continue;
			s = clamp(sg->start, lo, hi);
			e = clamp(sg->start + sg->dur, lo, hi);
			if (e <= s)
				continue;
			ev_slice(w, TT_PERFETTO_REQ_PID, lane,
				 tt_stage_name(sg->stage), "critical path", s,
				 e);
			args_open(w);
			arg_u64(w, "request", r->id);
			if (sg->tid)
				arg_u64(w, "tid", sg->tid);
			arg_str(w, "state", tt_cp_state_name(sg->state),
				SIZE_MAX);
			arg_str(w, "reason", sg->reason, sizeof(sg->reason));
			args_close(w);
		}
	}
}

static void requests_write(struct pf *w, const struct pf_lanes *l,
			   const struct tt_cp_result *results)
{
	char buf[32];
	struct pf_phases p;
	size_t i, k;

	if (!l->n)
		return;
	ev_name(w, "process_name", TT_PERFETTO_REQ_PID, 0, "requests");
	for (k = 0; k < l->nlanes; k++) {
		snprintf(buf, sizeof(buf), "lane %zu", k + 1);
		ev_name(w, "thread_name", TT_PERFETTO_REQ_PID, k + 1, buf);
	}
	for (i = 0; i < l->n; i++) {
		size_t ri = l->order[i];
		const struct tt_request *r = &l->reqs[ri];
		const struct tt_cp_result *res = results ? &results[ri] : NULL;
		__u32 lane = l->lane[ri] + 1;

		phases_of(r, res, &p);
		request_span(w, lane, r, res);
		request_phases(w, lane, r, res, &p);
	}
}

/* ---- arrows ---- */

static bool thread_seg(const struct tt_cp_segment *sg)
{
	return sg->state == TT_CP_RUNNING || sg->state == TT_CP_RUNNABLE ||
	       sg->state == TT_CP_BLOCKED;
}

static void flow_end(struct pf *w, const char *ph, const struct pf_thread *t,
		     const struct tt_cp_segment *sg, __u64 req_id)
{
	ev_open(w, ph, t->tgid, t->tid, "critical path");
	fprintf(w->out, ",\"cat\":\"critpath\",\"id\":%llu,\"ts\":",
		(unsigned long long)w->flow_id);
	/* the middle of the segment: inside the thread's state slice */
	put_ts(w, sg->start + sg->dur / 2);
	if (*ph == 'f')
		fputs(",\"bp\":\"e\"", w->out);
	args_open(w);
	arg_u64(w, "request", req_id);
	args_close(w);
}

/* An arrow at each jump of the walked path [t_read, t_first_write): from
 * the waker's segment to the woken thread's next one (the queue between
 * a hand-off and its pick-up is no thread's: no arrow across it). */
static void request_flows(struct pf *w, const struct tt_request *r,
			  const struct tt_cp_result *res,
			  const struct pf_phases *p)
{
	const struct pf_thread *from, *to;
	size_t i;

	for (i = 1; i < res->nsegs; i++) {
		const struct tt_cp_segment *a = &res->segs[i - 1];
		const struct tt_cp_segment *b = &res->segs[i];

		if (a->start < p->t[1] || b->start + b->dur > p->t[4] ||
		    !thread_seg(a) || !thread_seg(b) || a->tid == b->tid)
			continue;
		from = thread_track(w, a->tid);
		to = thread_track(w, b->tid);
		if (!from || !to)
			continue;
		w->flow_id++;
		flow_end(w, "s", from, a, r->id);
		flow_end(w, "f", to, b, r->id);
	}
}

static void flows_write(struct pf *w, const struct tt_request *reqs,
			const struct tt_cp_result *results, size_t n)
{
	struct pf_phases p;
	size_t i;

	for (i = 0; results && w->nthreads && i < n; i++)
		if (results[i].segs && phases_of(&reqs[i], &results[i], &p))
			request_flows(w, &reqs[i], &results[i], &p);
}

/* ---- the file ---- */

static void extend(__u64 *lo, __u64 *hi, bool *any, __u64 t)
{
	if (!t)
		return;
	if (!*any || t < *lo)
		*lo = t;
	if (!*any || t > *hi)
		*hi = t;
	*any = true;
}

/* t0 and the end of the view: the events fed and the requests' times. */
static void time_range(struct pf *w, const struct tt_request *reqs, size_t n)
{
	struct tt_critpath_stats st;
	bool any = false;
	size_t i;

	if (w->cp) {
		tt_critpath_stats(w->cp, &st);
		if (st.events) {
			w->t0 = st.first_ts;
			w->t_end = st.last_ts;
			any = true;
		}
	}
	for (i = 0; i < n; i++) {
		extend(&w->t0, &w->t_end, &any, reqs[i].t_arrive);
		extend(&w->t0, &w->t_end, &any, reqs[i].t_read);
		extend(&w->t0, &w->t_end, &any, reqs[i].t_first_write);
		extend(&w->t0, &w->t_end, &any, reqs[i].t_wire);
		extend(&w->t0, &w->t_end, &any, reqs[i].t_last_write);
		extend(&w->t0, &w->t_end, &any, reqs[i].t_end);
	}
}

int tt_perfetto_write(FILE *out, const struct tt_critpath *cp,
		      const struct tt_request *reqs,
		      const struct tt_cp_result *results, size_t n)
{
	struct pf w = { .out = out, .cp = cp, .first = true };
	struct pf_lanes l = { 0 };
	int err;

	time_range(&w, reqs, n);
	err = threads_collect(&w);
	if (!err)
		err = lanes_assign(&l, reqs, results, n);
	if (err)
		goto cleanup;
	fputs("{\"traceEvents\":[", out);
	threads_names(&w);
	threads_states(&w);
	err = w.err;
	requests_write(&w, &l, results);
	/* after every slice: a flow binds to the slice open at its time */
	flows_write(&w, reqs, results, n);
	fprintf(out,
		"\n],\n\"displayTimeUnit\":\"ns\",\n"
		"\"otherData\":{\"generator\":\"ttftrace\","
		"\"clock\":\"CLOCK_MONOTONIC\",\"t0_ns\":\"%llu\"}}\n",
		(unsigned long long)w.t0);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
cleanup:
	lanes_free(&l);
	free(w.threads);
	free(w.by_tid);
	free(w.calls);
	return err;
}
