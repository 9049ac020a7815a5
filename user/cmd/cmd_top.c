// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ttftrace top: the live core's frames on a terminal, refreshed every
 * interval (docs/design.md §10.2); -b prints them as text, --replay feeds
 * a recording through the same core instead of tracing.
 */
#include <argp.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include "cmds.h"
#include "live.h"
#include "record.h"
#include "top.h"
#include "ttfile.h"
#include "util.h"

#define MAX_TARGETS 64
#define MAX_RECORD_ARGS (2 * MAX_TARGETS + 8)

struct top_args {
	const char *pids[MAX_TARGETS];
	int npids;
	const char *command;
	bool batch, fast;
	long frames; /* -n: 0 for no end */
	__u64 interval_ns, span_ns;
	const char *replay;
	enum tt_live_sort sort;
	bool verbose;
};

enum { OPT_REPLAY = 256, OPT_FAST };

static const char top_doc[] =
	"Show the traced server's requests live: rolling TTFT, TPOT and ITL percentiles, stage shares, the slowest recent requests, drops. Writes no recording.\n"
	"\n"
	"Keys: q quits, s changes the sort (TTFT, TPOT, age).\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace top -p 1234                  # a live view, every second\n"
	"  ttftrace top -b -n 5 -p 1234          # five frames as text\n"
	"  ttftrace top -b --fast --replay a.ttft  # a recording's frames";

static const struct argp_option top_options[] = {
	{ "pid", 'p', "PID", 0,
	  "Trace this process and its children (repeatable)", 0 },
	{ "command", 'c', "CMD", 0, "Start CMD (with /bin/sh -c) and trace it",
	  0 },
	{ "batch", 'b', NULL, 0,
	  "Print frames as text, one after the other (no terminal control)",
	  0 },
	{ "iterations", 'n', "N", 0, "Stop after N frames", 0 },
	{ "delay", 'd', "INTERVAL", 0,
	  "Refresh every INTERVAL (default 1s; e.g. 500ms, 2s)", 0 },
	{ "window", 'w', "SPAN", 0,
	  "Rolling span of the figures, and the longest request followed (default 30s)",
	  0 },
	{ "sort", 's', "KEY", 0,
	  "Sort the slowest requests by ttft (default), tpot or age", 0 },
	{ "replay", OPT_REPLAY, "FILE", 0,
	  "Replay recording FILE through the live analysis instead of tracing, paced at its own speed",
	  0 },
	{ "fast", OPT_FAST, NULL, 0,
	  "With --replay: as fast as it reads, a frame per INTERVAL of trace time",
	  0 },
	{ "verbose", 'v', NULL, 0, "The recorder's messages too", 0 },
	{},
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_args *a = state->input;
	long n;

	switch (key) {
	case 'p':
		if (tt_parse_long(arg, 1, 4194304, &n))
			argp_error(state, "invalid PID: '%s'", arg);
		if (a->npids == MAX_TARGETS)
			argp_error(state, "at most %d PIDs", MAX_TARGETS);
		a->pids[a->npids++] = arg;
		break;
	case 'c':
		a->command = arg;
		break;
	case 'b':
		a->batch = true;
		break;
	case 'n':
		if (tt_parse_long(arg, 1, 1000000000, &a->frames))
			argp_error(state, "invalid frame count: '%s'", arg);
		break;
	case 'd':
		if (tt_parse_duration(arg, &a->interval_ns) ||
		    a->interval_ns < 10000000ULL)
			argp_error(state,
				   "invalid interval: '%s' (10ms or more)",
				   arg);
		break;
	case 'w':
		if (tt_parse_duration(arg, &a->span_ns) ||
		    a->span_ns < 5000000000ULL)
			argp_error(state, "invalid span: '%s' (5s or more)",
				   arg);
		break;
	case 's':
		if (!strcmp(arg, "ttft"))
			a->sort = TT_LIVE_BY_TTFT;
		else if (!strcmp(arg, "tpot"))
			a->sort = TT_LIVE_BY_TPOT;
		else if (!strcmp(arg, "age"))
			a->sort = TT_LIVE_BY_AGE;
		else
			argp_error(state,
				   "invalid sort '%s': ttft, tpot or age", arg);
		break;
	case OPT_REPLAY:
		a->replay = arg;
		break;
	case OPT_FAST:
		a->fast = true;
		break;
	case 'v':
		a->verbose = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!a->replay && !a->npids && !a->command)
			argp_error(
				state,
				"nothing to show: give -p PID, -c CMD or --replay FILE");
		if (a->replay && (a->npids || a->command))
			argp_error(
				state,
				"--replay traces nothing: no -p or -c with it");
		if (a->fast && !a->replay)
			argp_error(state, "--fast goes with --replay");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* A replay's Ctrl-C or SIGTERM: stop, the terminal restored (tracing has
 * the recorder's own handler). */
static volatile sig_atomic_t replay_stop;

static void on_replay_signal(int sig)
{
	replay_stop = sig;
}

/* The terminal of the interactive view, restored however top ends. */
static struct termios saved_tio;
static bool tio_saved;

static void term_restore(void)
{
	if (!tio_saved)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	/* the cursor back, the main screen back */
	fputs("\x1b[?25h\x1b[?1049l", stdout);
	fflush(stdout);
	tio_saved = false;
}

/* Keys without Enter, no echo; Ctrl-C still a signal (the recorder's). */
static void term_raw(void)
{
	struct termios tio;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tio))
		return;
	tio = saved_tio;
	tio.c_lflag &= ~(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &tio))
		return;
	tio_saved = true;
	atexit(term_restore);
	fputs("\x1b[?1049h\x1b[?25l", stdout);
}

struct top_view {
	const struct top_args *a;
	const char *what;
	enum tt_live_sort sort;
	long shown;
	struct tt_live *live; /* while record runs */
	__u64 last_frame;
	struct tt_live_frame f;
};

static int show(struct top_view *v, const struct tt_live_frame *f)
{
	if (!v->a->batch)
		fputs("\x1b[H\x1b[2J", stdout);
	else if (v->shown)
		fputc('\n', stdout);
	v->shown++;
	if (tt_top_text(stdout, f, v->what) || fflush(stdout))
		return -EIO;
	return 0;
}

/* What the keys asked: "quit", a new sort (true), or nothing. */
static const char *read_keys(struct top_view *v, bool *resort)
{
	char c;

	*resort = false;
	if (v->a->batch || !tio_saved)
		return NULL;
	while (read(STDIN_FILENO, &c, 1) == 1) {
		if (c == 'q' || c == 'Q')
			return "quit";
		if (c == 's' || c == 'S') {
			v->sort = (v->sort + 1) % TT_LIVE_NSORT;
			*resort = true;
		}
	}
	return NULL;
}

static const char *live_tick(void *ctx, __u64 now)
{
	struct top_view *v = ctx;
	const char *why;
	bool resort;
	__u64 n;

	why = read_keys(v, &resort);
	if (why)
		return why;
	if (resort || (!v->last_frame && v->sort != TT_LIVE_BY_TTFT)) {
		tt_live_sort(v->live, v->sort);
		tt_live_kick(v->live);
	}
	n = tt_live_frame(v->live, &v->f);
	if (n == v->last_frame)
		return NULL;
	v->last_frame = n;
	if (show(v, &v->f))
		return "output error";
	return v->a->frames && v->shown >= v->a->frames ? "frames shown" : NULL;
}

static int top_live(struct top_args *a, struct top_view *v)
{
	char *argv[MAX_RECORD_ARGS];
	struct tt_record_hooks h = {
		.no_file = true,
		.want_live = true,
		.interval_ns = a->interval_ns,
		.span_ns = a->span_ns,
		.live_out = &v->live,
		.tick = live_tick,
		.ctx = v,
	};
	int argc = 0, err;

	argv[argc++] = "ttftrace top";
	if (!a->verbose)
		argv[argc++] = "-q";
	for (int i = 0; i < a->npids; i++) {
		argv[argc++] = "-p";
		argv[argc++] = (char *)a->pids[i];
	}
	if (a->command) {
		argv[argc++] = "-c";
		argv[argc++] = (char *)a->command;
	}
	argv[argc] = NULL;
	if (!a->batch)
		term_raw();
	err = tt_record_with(argc, argv, &h);
	term_restore();
	return err;
}

/* Sleeps until the next frame of a paced replay, reading keys meanwhile. */
static const char *pace(struct top_view *v, __u64 until, bool *resort)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	const char *why = NULL;
	__u64 now;

	*resort = false;
	while (!why && !replay_stop &&
	       (now = tt_clock_ns(CLOCK_MONOTONIC)) < until) {
		bool r;

		if (!tio_saved) {
			usleep((until - now) / 1000);
			break;
		}
		poll(&p, 1, (int)((until - now) / 1000000) + 1);
		why = read_keys(v, &r);
		*resort |= r;
	}
	return why;
}

/* One refresh of the replay at trace time t, and its frame. 0, 1 (enough
 * frames, or quit) or -errno. */
static int replay_frame(struct tt_window *w, struct top_view *v, __u64 t,
			bool last)
{
	int err = tt_window_refresh(w, t, last);

	if (!err)
		err = tt_window_frame(w, v->sort, &v->f);
	if (!err)
		err = show(v, &v->f);
	if (err)
		return err;
	return v->a->frames && v->shown >= v->a->frames;
}

static int top_replay(const struct top_args *a, struct top_view *v)
{
	struct tt_window_opts wo = { .span_ns = a->span_ns };
	struct sigaction sa = {};
	const struct tt_file_meta *meta;
	struct tt_window *w = NULL;
	struct tt_reader *r;
	struct tt_event ev;
	__u64 next = 0, wall = 0, last_ts = 0;
	char msg[512];
	const char *why = NULL;
	bool resort;
	int n, err = 1, done = 0;

	r = tt_reader_open(a->replay, msg, sizeof(msg));
	if (!r) {
		fprintf(stderr, "ttftrace: %s\n", msg);
		return 1;
	}
	meta = tt_reader_meta(r);
	wo.procs = meta->procs;
	wo.nprocs = meta->nprocs;
	wo.devs = meta->devs;
	wo.ndevs = meta->ndevs;
	w = tt_window_new(&wo);
	if (!w) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	sa.sa_handler = on_replay_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (!a->batch)
		term_raw();
	while (!done && !why && !replay_stop &&
	       (n = tt_reader_next(r, &ev)) == 1) {
		if (!next) {
			next = ev.h.ts + a->interval_ns;
			wall = tt_clock_ns(CLOCK_MONOTONIC) + a->interval_ns;
		}
		while (!done && !why && !replay_stop && ev.h.ts >= next) {
			if (!a->fast) {
				/* a new sort shows in the next frame */
				why = pace(v, wall, &resort);
				wall += a->interval_ns;
			}
			done = replay_frame(w, v, next, false);
			next += a->interval_ns;
		}
		if (done < 0 || why)
			break;
		if (tt_window_add(w, &ev)) {
			done = -ENOMEM;
			break;
		}
		if (ev.h.ts > last_ts)
			last_ts = ev.h.ts;
	}
	/* the end of the recording: every request left is counted */
	if (!done && !why && !replay_stop)
		done = replay_frame(w, v, last_ts, true);
	if (done < 0) {
		fprintf(stderr, "ttftrace: replaying %s: %s\n", a->replay,
			strerror(-done));
		goto cleanup;
	}
	err = 0;
cleanup:
	term_restore();
	tt_window_free(w);
	tt_reader_close(r);
	return err;
}

int tt_cmd_top(int argc, char **argv)
{
	struct top_args a = { .interval_ns = 1000000000ULL };
	struct argp argp = { top_options, top_parse, NULL, top_doc };
	struct top_view v = { .a = &a };
	char what[128];

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	v.sort = a.sort;
	if (a.replay)
		snprintf(what, sizeof(what), "%s", a.replay);
	else if (a.npids)
		snprintf(what, sizeof(what), "pid %s%s", a.pids[0],
			 a.npids > 1 ? " ..." : "");
	else
		snprintf(what, sizeof(what), "%s", a.command);
	v.what = what;
	return a.replay ? top_replay(&a, &v) : top_live(&a, &v);
}
