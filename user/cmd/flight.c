// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * record's live side: the ring of recent events, analysed again every
 * EVAL_NS with the analyzer, for the flight recorder's triggers and dumps
 * and for OTLP export (docs/design.md §11).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analyzer.h"
#include "containers.h"
#include "flight.h"
#include "otlp.h"
#include "otlp_send.h"
#include "ring.h"
#include "ttfile.h"
#include "util.h"

/* how often the ring is analysed again: every EVAL_NS, or, when an
 * analysis takes longer than EVAL_NS / EVAL_SHARE, that many times its
 * duration, so that analysing stays under 1 / EVAL_SHARE of a CPU */
#define EVAL_NS 500000000ULL
#define EVAL_SHARE 3
/* a request counts as finished once its end is this far in the past
 * (events are stamped on CLOCK_MONOTONIC, as record's clock): past the
 * analyzer's reorder window, its last XMITs in */
#define SETTLE_NS 200000000ULL
/* what a dump holds after the request that fired it */
#define POST_NS 500000000ULL
/* the window analysed for --otlp without --ring */
#define OTLP_WINDOW_NS 10000000000ULL
#define DEFAULT_RING_BYTES (256ULL << 20)
#define DEFAULT_DUMP_GAP_NS 10000000000ULL
/* a batch of spans is sent once it holds this much */
#define BATCH_BYTES (512u << 10)
/* how long record waits at its end for the last spans to go out */
#define OTLP_DRAIN_NS 5000000000ULL
/* dumps being written at once, each by a child process */
#define MAX_WRITERS 4

enum { TRIG_TTFT, TRIG_TPOT, TRIG_E2E, TRIG_SLO };
static const char *const trig_names[] = { "ttft", "tpot", "e2e", "slo" };

enum {
	OPT_RING = 0x1100,
	OPT_RING_SIZE,
	OPT_TRIGGER,
	OPT_SLO,
	OPT_DUMP_GAP,
	OPT_OTLP,
};

static const struct argp_option flight_options[] = {
	{ NULL, 0, NULL, 0, "Flight recorder and export:", 1 },
	{ "ring", OPT_RING, "DURATION", 0,
	  "Flight recorder: keep only the last DURATION of events in memory (no file written as it goes) and write them to OUT-TIME.ttft when a trigger fires",
	  1 },
	{ "trigger", OPT_TRIGGER, "SPEC", 0,
	  "With --ring: dump when a finished request has ttft>D, tpot>D or e2e>D, or (slo) misses --slo (repeatable); SIGUSR1 always dumps",
	  1 },
	{ "slo", OPT_SLO, "SPEC", 0,
	  "The SLO of --trigger slo: ttft=450ms,tpot=40ms[,e2e=2s] or mlperf:NAME",
	  1 },
	{ "dump-interval", OPT_DUMP_GAP, "DURATION", 0,
	  "At most one triggered dump per DURATION (default 10s): later triggers wait and share the next dump",
	  1 },
	{ "ring-size", OPT_RING_SIZE, "SIZE", 0,
	  "Cap on the ring's memory (default 256M): a busier server keeps less than --ring, said at the end",
	  1 },
	{ "otlp", OPT_OTLP, "URL", 0,
	  "Send each finished request as OpenTelemetry spans, OTLP/HTTP protobuf, to URL/v1/traces (http:// only)",
	  1 },
	{},
};

static int parse_trigger(const char *spec, struct tt_flight_trigger *t,
			 char *err, size_t errlen)
{
	const char *gt = strchr(spec, '>');

	if (!strcmp(spec, "slo")) {
		t->kind = TRIG_SLO;
		return 0;
	}
	for (int k = TRIG_TTFT; gt && k < TRIG_SLO; k++) {
		if ((size_t)(gt - spec) != strlen(trig_names[k]) ||
		    strncmp(spec, trig_names[k], gt - spec))
			continue;
		if (tt_parse_duration(gt + 1, &t->limit_ns))
			break;
		t->kind = k;
		return 0;
	}
	snprintf(
		err, errlen,
		"invalid --trigger '%s': ttft>DURATION, tpot>DURATION, e2e>DURATION or slo",
		spec);
	return -EINVAL;
}

static error_t flight_parse(int key, char *arg, struct argp_state *state)
{
	struct tt_flight_opts *o = state->input;
	char err[256];

	switch (key) {
	case OPT_RING:
		if (tt_parse_duration(arg, &o->ring_ns))
			argp_error(
				state,
				"invalid --ring '%s': a duration such as 30s",
				arg);
		break;
	case OPT_RING_SIZE:
		if (tt_parse_size(arg, &o->ring_bytes) ||
		    o->ring_bytes < (1u << 20))
			argp_error(state,
				   "invalid --ring-size '%s': 1M or more", arg);
		break;
	case OPT_TRIGGER:
		if (o->ntriggers == TT_FLIGHT_MAX_TRIGGERS)
			argp_error(state, "at most %d --trigger",
				   TT_FLIGHT_MAX_TRIGGERS);
		if (parse_trigger(arg, &o->triggers[o->ntriggers], err,
				  sizeof(err)))
			argp_error(state, "%s", err);
		o->ntriggers++;
		break;
	case OPT_SLO:
		if (tt_slo_parse(arg, &o->slo, err, sizeof(err)))
			argp_error(state, "invalid --slo '%s': %s", arg, err);
		o->has_slo = true;
		break;
	case OPT_DUMP_GAP:
		if (tt_parse_duration(arg, &o->dump_gap_ns))
			argp_error(state, "invalid --dump-interval '%s'", arg);
		break;
	case OPT_OTLP:
		o->otlp = arg;
		break;
	case ARGP_KEY_END:
		for (int i = 0; i < o->ntriggers; i++)
			if (o->triggers[i].kind == TRIG_SLO && !o->has_slo)
				argp_error(state,
					   "--trigger slo needs --slo SPEC");
		if (!o->ring_ns && (o->ntriggers || o->ring_bytes))
			argp_error(state,
				   "--trigger and --ring-size need --ring");
		if (!o->ring_ns && o->dump_gap_ns)
			argp_error(state, "--dump-interval needs --ring");
		if (o->has_slo && !o->ntriggers)
			argp_error(state,
				   "--slo of record is for --trigger slo");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp tt_flight_argp = { flight_options, flight_parse, NULL, NULL,
				     NULL,	     NULL,	   NULL };

static volatile sig_atomic_t dump_asked;

static void on_usr1(int sig)
{
	dump_asked = 1;
}

struct tt_flight {
	struct tt_flight_opts o;
	const struct tt_file_meta *meta;
	const char *output;
	bool quiet;
	struct tt_ring *ring;
	__u64 added_since_eval, last_eval;
	bool unsettled; /* the last analysis left a request to settle */
	__u64 evals, eval_max_ns, eval_max_events; /* what analysis costs */
	__u64 eval_gap; /* EVAL_NS, or more after a long analysis */
	/* (t_arrive, hash of sk) of the requests done with: exported,
	 * judged; forgotten once their arrival leaves the window */
	struct tt_hmap seen;
	/* dumps */
	__u64 dump_at; /* CLOCK_MONOTONIC of the pending dump, 0: none */
	__u64 last_dump; /* when the last one was written */
	char why[160]; /* what fired the pending dump */
	unsigned int dumps, fired, coalesced;
	unsigned int failed; /* dumps not written */
	pid_t writers[MAX_WRITERS]; /* the children writing dumps */
	int nwriters;
	/* export */
	struct tt_otlp_sender *otlp;
	struct tt_otlp_src src;
	struct tt_pbuf batch;
	size_t batch_spans;
	__u64 exported;
};

struct tt_flight *tt_flight_open(const struct tt_flight_opts *o,
				 const char *output,
				 const struct tt_file_meta *meta, bool quiet,
				 int *err)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct tt_flight *f;
	char msg[256];

	*err = 0;
	if (!o->ring_ns && !o->otlp)
		return NULL;
	*err = -1;
	f = calloc(1, sizeof(*f));
	if (!f) {
		fprintf(stderr, "ttftrace: out of memory\n");
		return NULL;
	}
	f->o = *o;
	if (!f->o.ring_bytes)
		f->o.ring_bytes = DEFAULT_RING_BYTES;
	if (!f->o.dump_gap_ns)
		f->o.dump_gap_ns = DEFAULT_DUMP_GAP_NS;
	f->meta = meta;
	f->output = output;
	f->quiet = quiet;
	f->src = (struct tt_otlp_src){ meta->hostname, meta->mono_ns,
				       meta->real_ns };
	f->ring = tt_ring_new(o->ring_ns ? o->ring_ns : OTLP_WINDOW_NS,
			      f->o.ring_bytes);
	if (!f->ring) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	if (o->otlp) {
		f->otlp = tt_otlp_sender_open(o->otlp, msg, sizeof(msg));
		if (!f->otlp) {
			fprintf(stderr, "ttftrace: --otlp %s\n", msg);
			goto cleanup;
		}
	}
	if (o->ring_ns)
		sigaction(SIGUSR1, &sa, NULL);
	*err = 0;
	return f;
cleanup:
	tt_ring_free(f->ring);
	free(f);
	return NULL;
}

bool tt_flight_ring_only(const struct tt_flight *f)
{
	return f && f->o.ring_ns;
}

int tt_flight_add(struct tt_flight *f, const struct tt_event *ev)
{
	f->added_since_eval++;
	return tt_ring_add(f->ring, ev);
}

static int feed(void *ctx, const struct tt_event *ev)
{
	return tt_analyzer_add(ctx, ev);
}

static int write_one(void *ctx, const struct tt_event *ev)
{
	return tt_writer_add(ctx, ev);
}

/* OUT-YYYYmmdd-HHMMSS[-N].ttft beside OUT, created once and exclusively
 * (never through a link, never over a file): the fd, or -1 (said why). */
static int dump_create(const struct tt_flight *f, char *path, size_t len)
{
	size_t base = strlen(f->output);
	time_t now = time(NULL);
	char stamp[32];
	struct tm tm;
	int fd = -1;

	if (base > 5 && !strcmp(f->output + base - 5, ".ttft"))
		base -= 5;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int n = 1; n < 100 && fd < 0; n++) {
		if (n == 1)
			snprintf(path, len, "%.*s-%s.ttft", (int)base,
				 f->output, stamp);
		else
			snprintf(path, len, "%.*s-%s-%d.ttft", (int)base,
				 f->output, stamp, n);
		fd = open(path,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		fprintf(stderr, "ttftrace: cannot create flight dump %s: %s\n",
			path, strerror(errno));
	return fd;
}

/* The ring, whole, into fd (path, dump number nr, asked at t0): 0, or 1
 * (said why). */
static int write_dump(const struct tt_flight *f, int fd, const char *path,
		      unsigned int nr, __u64 t0)
{
	struct tt_write_stats ws = {};
	struct tt_writer *w;
	int err;

	w = tt_writer_open_fd(fd, f->meta);
	if (!w) {
		fprintf(stderr, "ttftrace: cannot write %s: %s\n", path,
			strerror(errno));
		unlink(path);
		return 1;
	}
	err = tt_ring_each(f->ring, write_one, w);
	if (tt_writer_close(w, &ws) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "ttftrace: writing flight dump %s failed: %s\n",
			path, strerror(-err));
		return 1;
	}
	if (!f->quiet)
		fprintf(stderr,
			"ttftrace: flight dump %u: %s (%s; %llu events, %.1f ms to write)\n",
			nr, path, f->why, (unsigned long long)ws.events,
			(tt_clock_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	return 0;
}

/* Collects the dump writers that are done (all of them when wait). */
static void reap(struct tt_flight *f, bool wait)
{
	for (int i = 0; i < f->nwriters;) {
		int st = 0;
		pid_t p = waitpid(f->writers[i], &st, wait ? 0 : WNOHANG);

		if (!p) {
			i++;
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p > 0 && (!WIFEXITED(st) || WEXITSTATUS(st)))
			f->failed++;
		f->writers[i] = f->writers[--f->nwriters];
	}
}

/*
 * Writes the ring to a new dump. A child process writes it from its
 * copy-on-write image of the ring, so that record's loop goes on draining
 * the ring buffer; without one (fork failed, MAX_WRITERS busy) it is
 * written here. Recording goes on whatever happens: always 0.
 */
static int dump(struct tt_flight *f, __u64 now)
{
	char path[4096];
	pid_t pid = -1;
	int fd;

	f->dump_at = 0;
	f->last_dump = now;
	fd = dump_create(f, path, sizeof(path));
	if (fd < 0) {
		f->failed++;
		return 0;
	}
	f->dumps++;
	reap(f, false);
	if (f->nwriters < MAX_WRITERS)
		pid = fork();
	if (!pid)
		_exit(write_dump(f, fd, path, f->dumps, now));
	if (pid < 0) {
		f->failed += write_dump(f, fd, path, f->dumps, now);
		return 0;
	}
	close(fd);
	f->writers[f->nwriters++] = pid;
	return 0;
}

/* Asks for a dump at 'at', at the earliest dump_gap after the last. */
static void want_dump(struct tt_flight *f, __u64 at, bool rate_limited,
		      const char *why)
{
	if (rate_limited && f->last_dump &&
	    at < f->last_dump + f->o.dump_gap_ns)
		at = f->last_dump + f->o.dump_gap_ns;
	if (f->dump_at) {
		f->coalesced++;
		if (at < f->dump_at)
			f->dump_at = at;
		return;
	}
	f->dump_at = at;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

/* The first trigger r fires, described into why; false when none does. */
static bool fires(const struct tt_flight *f, const struct tt_request *r,
		  char *why, size_t len)
{
	__u64 v[3] = { r->ttft, r->tokens >= 2 ? r->tpot : 0,
		       tt_request_e2e(r, NULL) };
	const struct tt_slo *s = &f->o.slo;

	for (int i = 0; i < f->o.ntriggers; i++) {
		const struct tt_flight_trigger *t = &f->o.triggers[i];
		int k = t->kind;

		if (k == TRIG_SLO && ((s->ttft_ns && v[0] > s->ttft_ns) ||
				      (s->tpot_ns && v[1] > s->tpot_ns) ||
				      (s->e2e_ns && v[2] > s->e2e_ns))) {
			snprintf(
				why, len,
				"request on port %u missed the SLO: ttft %.3f s, tpot %.3f s, e2e %.3f s",
				r->rport, v[0] / 1e9, v[1] / 1e9, v[2] / 1e9);
			return true;
		}
		if (k != TRIG_SLO && v[k] > t->limit_ns) {
			snprintf(why, len,
				 "request on port %u: %s %.3f s > %.3f s",
				 r->rport, trig_names[k], v[k] / 1e9,
				 t->limit_ns / 1e9);
			return true;
		}
	}
	return false;
}

static int flush_batch(struct tt_flight *f)
{
	int err = 0;

	if (f->batch.err)
		err = f->batch.err;
	else if (f->batch_spans)
		tt_otlp_sender_push(f->otlp, &f->batch, f->batch_spans, false);
	tt_pbuf_free(&f->batch);
	f->batch_spans = 0;
	return err;
}

/* The requests of the window that are done (or all at the end), each
 * once: judged by the triggers, exported. */
static int visit(struct tt_flight *f, const struct tt_analyzer *an,
		 const struct tt_ring_stats *rs, __u64 now, bool final)
{
	char why[160];
	int err = 0, n;

	for (size_t i = 0; i < tt_analyzer_nrequests(an) && !err; i++) {
		const struct tt_request *r = tt_analyzer_request(an, i);
		__u32 k2 = (__u32)(r->sk ^ r->sk >> 32);

		/* only requests whose arrival is in the window: one cut by
		 * it would be seen again, cut elsewhere */
		if (!r->t_arrive || r->t_arrive < rs->first_ts)
			continue;
		if (!final && r->end == TT_END_OPEN)
			continue;
		if (!final && r->t_end + SETTLE_NS > now) {
			f->unsettled = true;
			continue;
		}
		if (tt_hmap_find(&f->seen, r->t_arrive, k2))
			continue;
		if (!tt_hmap_insert(&f->seen, r->t_arrive, k2, r->t_arrive))
			return -ENOMEM;
		if (f->o.ring_ns && fires(f, r, why, sizeof(why))) {
			f->fired++;
			want_dump(f, now + POST_NS, true, why);
		}
		if (!f->otlp)
			continue;
		n = tt_otlp_add_request(&f->batch, &f->src, an, i);
		if (n < 0)
			return n;
		f->batch_spans += n;
		f->exported++;
		if (f->batch.len >= BATCH_BYTES)
			err = flush_batch(f);
	}
	if (f->otlp && !err)
		err = flush_batch(f);
	return err;
}

/* Forgets the requests whose arrival left the window. */
static int prune_seen(struct tt_flight *f, __u64 first_ts)
{
	struct tt_hmap keep = {};

	for (size_t i = 0; i < f->seen.cap; i++) {
		const struct tt_hmap_ent *e = &f->seen.e[i];

		if (e->used && e->val >= first_ts &&
		    tt_hmap_put(&keep, e->k1, e->k2, e->val)) {
			tt_hmap_free(&keep);
			return -ENOMEM;
		}
	}
	tt_hmap_free(&f->seen);
	f->seen = keep;
	return 0;
}

static int evaluate(struct tt_flight *f, __u64 now, bool final)
{
	struct tt_analyzer *an = tt_analyzer_new();
	struct tt_ring_stats rs;
	int err = -ENOMEM;
	__u64 took;

	f->last_eval = now;
	f->added_since_eval = 0;
	f->unsettled = false;
	if (!an)
		return -ENOMEM;
	tt_ring_stats(f->ring, &rs);
	/* the segments are what the child spans are made of */
	tt_analyzer_keep_paths(an, f->otlp != NULL);
	if (tt_analyzer_add_procs(an, f->meta->procs, f->meta->nprocs) ||
	    tt_analyzer_add_devices(an, f->meta->devs, f->meta->ndevs))
		goto cleanup;
	err = tt_ring_each(f->ring, feed, an);
	if (!err)
		err = tt_analyzer_finish(an);
	if (!err)
		err = visit(f, an, &rs, now, final);
	if (!err)
		err = prune_seen(f, rs.first_ts);
	took = tt_clock_ns(CLOCK_MONOTONIC) - now;
	f->eval_gap = took * EVAL_SHARE > EVAL_NS ? took * EVAL_SHARE : EVAL_NS;
	f->evals++;
	if (took > f->eval_max_ns) {
		f->eval_max_ns = took;
		f->eval_max_events = rs.events;
	}
cleanup:
	tt_analyzer_free(an);
	return err;
}

int tt_flight_tick(struct tt_flight *f, __u64 now)
{
	int err = 0;

	if (!f)
		return 0;
	if (f->nwriters)
		reap(f, false);
	if (dump_asked && f->o.ring_ns) {
		dump_asked = 0;
		want_dump(f, now, false, "SIGUSR1");
	}
	if ((f->added_since_eval || f->unsettled) &&
	    now - f->last_eval >= f->eval_gap && (f->otlp || f->o.ntriggers))
		err = evaluate(f, now, false);
	if (!err && f->dump_at && now >= f->dump_at)
		err = dump(f, now);
	return err;
}

void tt_flight_close(struct tt_flight *f)
{
	struct tt_otlp_send_stats st = {};
	struct tt_ring_stats rs;
	__u64 now = tt_clock_ns(CLOCK_MONOTONIC);

	if (!f)
		return;
	if (f->otlp || f->o.ntriggers)
		evaluate(f, now, true);
	if (f->dump_at)
		dump(f, now);
	reap(f, true);
	tt_ring_stats(f->ring, &rs);
	if (f->o.ring_ns && !f->quiet)
		fprintf(stderr,
			"ttftrace: flight recorder: %u dump(s)%s, %u trigger(s) fired (%u shared a dump); ring held %.1f s, %llu events, %.1f MiB at the end%s\n",
			f->dumps, f->failed ? " (some failed)" : "", f->fired,
			f->coalesced,
			rs.last_ts > rs.first_ts ?
				(rs.last_ts - rs.first_ts) / 1e9 :
				0.0,
			(unsigned long long)rs.events, rs.bytes / 1048576.0,
			rs.cut_chunks ? "; --ring-size cut it short of --ring" :
					"");
	if (f->evals && !f->quiet)
		fprintf(stderr,
			"ttftrace: live analysis: %llu run(s) of the ring, the longest %.1f ms over %llu events\n",
			(unsigned long long)f->evals, f->eval_max_ns / 1e6,
			(unsigned long long)f->eval_max_events);
	if (f->otlp) {
		tt_otlp_sender_close(f->otlp, OTLP_DRAIN_NS, &st);
		if (!f->quiet || st.spans_dropped)
			fprintf(stderr,
				"ttftrace: OTLP: %llu request(s), %llu span(s) sent in %llu batch(es), %llu span(s) dropped%s%s\n",
				(unsigned long long)f->exported,
				(unsigned long long)st.spans_sent,
				(unsigned long long)st.batches_sent,
				(unsigned long long)st.spans_dropped,
				st.spans_dropped && st.last_error[0] ? ": " :
								       "",
				st.spans_dropped ? st.last_error : "");
	}
	tt_pbuf_free(&f->batch);
	tt_hmap_free(&f->seen);
	tt_ring_free(f->ring);
	free(f);
}

int tt_otlp_export_all(const char *url, const struct tt_analyzer *a,
		       const struct tt_file_meta *meta)
{
	struct tt_otlp_src src = { meta->hostname, meta->mono_ns,
				   meta->real_ns };
	struct tt_otlp_send_stats st = {};
	struct tt_otlp_sender *s;
	struct tt_pbuf b = {};
	size_t spans = 0, n = tt_analyzer_nrequests(a);
	char msg[256];
	int k = 0;

	s = tt_otlp_sender_open(url, msg, sizeof(msg));
	if (!s) {
		fprintf(stderr, "ttftrace: --otlp %s\n", msg);
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		k = tt_otlp_add_request(&b, &src, a, i);
		if (k < 0)
			break;
		spans += k;
		if (b.len >= BATCH_BYTES || i + 1 == n) {
			tt_otlp_sender_push(s, &b, spans, true);
			spans = 0;
		}
	}
	k = b.err;
	if (k)
		fprintf(stderr, "ttftrace: out of memory encoding spans\n");
	tt_pbuf_free(&b);
	tt_otlp_sender_close(s, 30 * 1000000000ULL, &st);
	fprintf(stderr,
		"ttftrace: OTLP: %zu request(s), %llu span(s) sent to %s in %llu batch(es), %llu dropped%s%s\n",
		n, (unsigned long long)st.spans_sent, url,
		(unsigned long long)st.batches_sent,
		(unsigned long long)st.spans_dropped,
		st.spans_dropped ? ": " : "",
		st.spans_dropped ? st.last_error : "");
	return st.spans_dropped || k ? 1 : 0;
}
