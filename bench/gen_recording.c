/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * gen_recording: writes a synthetic .ttft recording shaped like the demo
 * server under a steady paced load, for bench/analyzer.sh. One engine thread
 * wakes every token interval and hands a token to each request of its batch;
 * one front-end thread per keep-alive connection reads the request, writes
 * the headers, then one SSE event per token. The scheduler events (switches,
 * wakeups, some lock contention) and socket events follow what ttftrace
 * records of build/tools/demo-server on 2 CPUs: about half switches, a fifth
 * wakeups, the rest sends and their transmits. Every request is complete.
 *
 *   gen_recording [-n EVENTS] [-c CONNS] [-r REQ/S] [-t TOKENS]
 *                 [-i TOKEN_US] [-s SEED] FILE
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tt_arch.h"
#include "ttfile.h"

#define SERVER_TGID 4000
#define ENGINE_TID 4002
#define FRONTEND_TID0 4100
#define CLIENT_TGID 9000
#define NCPUS 2
#define ENGINE_CPU 0
#define NR_READ 0
#define NR_FUTEX TT_NR_futex
#define NR_CLOCK_NANOSLEEP 230
#define PROMPT_BYTES 278
#define HEADERS_BYTES 123
#define TOKEN_BYTES 64
#define DONE_BYTES 14
#define TCPIP_HDR_BYTES 66
/* one token hand-off in CONTENDED_PCT of them also meets the request lock */
#define CONTENDED_PCT 30

struct gen_opts {
	__u64 events;
	unsigned int conns;
	double rate;
	unsigned int tokens;
	__u64 interval_ns;
	__u64 seed;
	const char *path;
};

struct gen_conn {
	__u64 sk;
	__u64 futex; /* the front-end's condition variable word */
	__u64 next_arrival; /* paced like loadgen --rate: one slot per gap */
	__u32 seq;
	__u32 fe_tid;
	__u32 client_tid;
	unsigned int cpu;
	unsigned int tokens_left;
	bool opened;
	bool waiting; /* request read, not yet admitted by the engine */
	bool active; /* in the engine's batch */
};

struct gen_thread {
	__u32 tgid;
	__u32 tid;
};

struct gen {
	struct gen_opts o;
	struct tt_writer *w;
	struct gen_conn *conns;
	struct gen_thread cur[NCPUS]; /* what runs on each CPU */
	__u64 now;
	__u64 last_ts;	/* of the latest event written */
	__u64 rng;
	__u64 events;
	__u64 requests;
	int err;
};

static __u64 rnd(struct gen *g)
{
	/* xorshift64*: fast and reproducible from the seed */
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 2685821657736338717ULL;
}

static __u64 rnd_range(struct gen *g, __u64 lo, __u64 hi)
{
	return lo + rnd(g) % (hi - lo + 1);
}

/* Starts an event at the current time on cpu, then moves time on by the
 * few microseconds a kernel path takes between two traced events. */
static void hdr(struct gen *g, struct tt_event *ev, __u16 type,
		unsigned int cpu, __u32 tgid, __u32 tid, __u32 flags)
{
	memset(ev, 0, sizeof(*ev));
	ev->h.ts = g->now;
	g->last_ts = g->now;
	ev->h.type = type;
	ev->h.cpu = cpu;
	ev->h.tgid = tgid;
	ev->h.tid = tid;
	ev->h.flags = flags;
	g->now += rnd_range(g, 1000, 9000);
}

static void put(struct gen *g, const struct tt_event *ev)
{
	int err;

	if (g->err)
		return;
	err = tt_writer_add(g->w, ev);
	if (err)
		g->err = err;
	else
		g->events++;
}

static bool traced(__u32 tgid)
{
	return tgid == SERVER_TGID;
}

/* A context switch on cpu to next: recorded only when either side is a
 * server thread, as the BPF program does; prev's syscall only when it is
 * a server thread that blocks. */
static void sw(struct gen *g, unsigned int cpu, __u32 next_tgid,
	       __u32 next_tid, __s64 prev_state, __s32 nr, __u64 arg0)
{
	struct gen_thread prev = g->cur[cpu];
	struct tt_event ev;

	g->cur[cpu].tgid = next_tgid;
	g->cur[cpu].tid = next_tid;
	if (!traced(prev.tgid) && !traced(next_tgid))
		return;
	hdr(g, &ev, TT_EV_SWITCH, cpu, prev.tgid, prev.tid, 0);
	ev.sw.next_tid = next_tid;
	ev.sw.next_tgid = next_tgid;
	ev.sw.prev_state = prev_state;
	ev.sw.syscall_nr = -1;
	ev.sw.sw_flags = (traced(prev.tgid) ? TT_SW_PREV_TRACED : 0) |
			 (traced(next_tgid) ? TT_SW_NEXT_TRACED : 0);
	if (traced(prev.tgid) && prev_state) {
		ev.sw.syscall_nr = nr;
		ev.sw.arg0 = arg0;
	}
	put(g, &ev);
}

/* A wakeup of a server thread by whatever runs on cpu (flags: irq). */
static void wake(struct gen *g, unsigned int cpu, __u32 flags,
		 __u32 target_tid, unsigned int target_cpu, __s32 nr,
		 __u64 arg0)
{
	struct tt_event ev;

	hdr(g, &ev, TT_EV_WAKING, cpu, g->cur[cpu].tgid, g->cur[cpu].tid,
	    flags);
	ev.wake.target_tid = target_tid;
	ev.wake.target_tgid = SERVER_TGID;
	ev.wake.target_cpu = target_cpu;
	ev.wake.waker_syscall = flags ? -1 : nr;
	ev.wake.waker_arg0 = flags ? 0 : arg0;
	put(g, &ev);
}

static void sock_ev(struct gen *g, __u16 type, unsigned int cpu, __u32 flags,
		    const struct gen_conn *c, __s64 len)
{
	struct tt_event ev;

	hdr(g, &ev, type, cpu, g->cur[cpu].tgid, g->cur[cpu].tid, flags);
	ev.sock.sk = c->sk;
	ev.sock.len = len;
	put(g, &ev);
}

static void conn_open(struct gen *g, unsigned int cpu, struct gen_conn *c,
		      unsigned int index)
{
	struct tt_event ev;

	hdr(g, &ev, TT_EV_CONN_OPEN, cpu, g->cur[cpu].tgid, g->cur[cpu].tid,
	    TT_F_SOFTIRQ);
	ev.conn.sk = c->sk;
	ev.conn.family = 2;
	ev.conn.lport = 8000;
	ev.conn.rport = 40000 + index;
	ev.conn.laddr[0] = ev.conn.raddr[0] = 127;
	ev.conn.laddr[3] = ev.conn.raddr[3] = 1;
	put(g, &ev);
	c->opened = true;
}

/* The front-end's write of len bytes: the skb reaches the device inside
 * the syscall, the send event comes at its return. The syscall began
 * after the thread's previous event (its read, its switch-in, its last
 * send), which is the latest one written. */
static void send_ev(struct gen *g, struct gen_conn *c, __u32 len, __u16 cls,
		    __u32 flags)
{
	__u64 enter = g->last_ts + (g->now - g->last_ts) / 2;
	struct tt_event ev;

	hdr(g, &ev, TT_EV_XMIT, c->cpu, SERVER_TGID, c->fe_tid, 0);
	ev.xmit.sk = c->sk;
	ev.xmit.seq = c->seq;
	ev.xmit.end_seq = c->seq + len;
	ev.xmit.len = len + TCPIP_HDR_BYTES;
	put(g, &ev);
	hdr(g, &ev, TT_EV_SEND, c->cpu, SERVER_TGID, c->fe_tid, 0);
	ev.send.sk = c->sk;
	ev.send.len = len;
	ev.send.ts_enter = enter;
	ev.send.seq = c->seq;
	ev.send.cls = cls;
	ev.send.tokens = cls == TT_SEND_TOKEN || cls == TT_SEND_TOKEN_DONE;
	ev.send.flags = flags;
	put(g, &ev);
	c->seq += len;
}

/* The client's request reaches the kernel (softirq on the client's CPU),
 * the front-end wakes, reads it, answers the headers and waits. */
static void arrive(struct gen *g, struct gen_conn *c, unsigned int index,
		   bool engine_idle)
{
	unsigned int ccpu = rnd(g) & 1;

	if (!traced(g->cur[ccpu].tgid))
		g->cur[ccpu] = (struct gen_thread){ CLIENT_TGID, c->client_tid };
	if (!c->opened) {
		conn_open(g, ccpu, c, index);
		wake(g, ccpu, TT_F_SOFTIRQ, c->fe_tid, c->cpu, -1, 0);
	}
	sock_ev(g, TT_EV_DATA_READY, ccpu, TT_F_SOFTIRQ, c, PROMPT_BYTES);
	wake(g, ccpu, TT_F_SOFTIRQ, c->fe_tid, c->cpu, -1, 0);
	sw(g, c->cpu, SERVER_TGID, c->fe_tid, 1, -1, 0);
	sock_ev(g, TT_EV_RECV, c->cpu, 0, c, PROMPT_BYTES);
	if (engine_idle)
		wake(g, c->cpu, 0, ENGINE_TID, ENGINE_CPU, NR_FUTEX,
		     0x7f0000001000ULL);
	send_ev(g, c, HEADERS_BYTES, TT_SEND_HEADERS, TT_SEND_F_HEADERS);
	sw(g, c->cpu, CLIENT_TGID, c->client_tid, 1, NR_FUTEX, c->futex);
	c->waiting = true;
	c->tokens_left = g->o.tokens;
	g->requests++;
}

/* The engine (current on ENGINE_CPU) hands one token to c's front-end. */
static void token(struct gen *g, struct gen_conn *c)
{
	bool last = c->tokens_left == 1;
	bool same_cpu = c->cpu == ENGINE_CPU;

	wake(g, ENGINE_CPU, 0, c->fe_tid, c->cpu, NR_FUTEX, c->futex);
	sw(g, c->cpu, SERVER_TGID, c->fe_tid, same_cpu ? 0 : 1, -1, 0);
	if (rnd(g) % 100 < CONTENDED_PCT) {
		/* the front-end finds the request lock held and sleeps on it */
		if (same_cpu)
			sw(g, c->cpu, SERVER_TGID, ENGINE_TID, 1, NR_FUTEX,
			   c->futex + 8);
		else
			sw(g, c->cpu, 0, 0, 1, NR_FUTEX, c->futex + 8);
		wake(g, ENGINE_CPU, 0, c->fe_tid, c->cpu, NR_FUTEX,
		     c->futex + 8);
		sw(g, c->cpu, SERVER_TGID, c->fe_tid, same_cpu ? 0 : 1, -1, 0);
	}
	send_ev(g, c, TOKEN_BYTES, TT_SEND_TOKEN, TT_SEND_F_SSE);
	if (last)
		send_ev(g, c, DONE_BYTES, TT_SEND_DONE, TT_SEND_F_SSE);
	/* the front-end waits for the next token; the client reads it */
	sw(g, c->cpu, CLIENT_TGID, c->client_tid, 1,
	   last ? NR_READ : NR_FUTEX, last ? 5 + (c->fe_tid & 255) : c->futex);
	if (same_cpu)
		sw(g, c->cpu, SERVER_TGID, ENGINE_TID, 1, -1, 0);
	else
		sw(g, c->cpu, 0, 0, 1, -1, 0);
	c->tokens_left--;
	c->active = !last;
}

/* One decode step: the engine's timer fires, it emits a token to every
 * request of its batch, admits the waiting ones and sleeps again. */
static void engine_step(struct gen *g)
{
	unsigned int i;

	wake(g, ENGINE_CPU, TT_F_HARDIRQ, ENGINE_TID, ENGINE_CPU, -1, 0);
	sw(g, ENGINE_CPU, SERVER_TGID, ENGINE_TID, 0, -1, 0);
	for (i = 0; i < g->o.conns; i++)
		if (g->conns[i].active)
			token(g, &g->conns[i]);
	for (i = 0; i < g->o.conns; i++) {
		if (g->conns[i].waiting) {
			g->conns[i].waiting = false;
			g->conns[i].active = true;
		}
	}
	sw(g, ENGINE_CPU, 0, 0, 1, NR_CLOCK_NANOSLEEP, 1);
}

static bool engine_busy(const struct gen *g)
{
	for (unsigned int i = 0; i < g->o.conns; i++)
		if (g->conns[i].active || g->conns[i].waiting)
			return true;
	return false;
}

static int run(struct gen *g)
{
	__u64 gap = (__u64)(g->o.conns * 1e9 / g->o.rate);
	__u64 next_step = 0;
	bool arrivals = true;
	unsigned int i, first;

	for (i = 0; i < g->o.conns; i++) {
		struct gen_conn *c = &g->conns[i];

		/* kernel-looking socket addresses, 64-byte aligned, distinct */
		c->sk = 0xffff888100000000ULL + ((__u64)i << 12) +
			(rnd(g) & 0xfc0);
		c->futex = 0x7f3000000000ULL + ((__u64)i << 21) + 0x2e8;
		c->seq = (__u32)rnd(g);
		c->fe_tid = FRONTEND_TID0 + i;
		c->client_tid = CLIENT_TGID + 1 + i;
		c->cpu = i % NCPUS;
		c->next_arrival = g->now + (__u64)(i * 1e9 / g->o.rate);
	}
	while (!g->err) {
		__u64 t = ~0ULL;

		first = g->o.conns;
		for (i = 0; arrivals && i < g->o.conns; i++) {
			const struct gen_conn *c = &g->conns[i];

			if (!c->active && !c->waiting && c->next_arrival < t) {
				t = c->next_arrival;
				first = i;
			}
		}
		if (next_step && next_step <= t) {
			if (g->now < next_step)
				g->now = next_step;
			engine_step(g);
			next_step = engine_busy(g) ?
					    next_step + g->o.interval_ns +
						    rnd_range(g, 0, 200000) :
					    0;
		} else if (first < g->o.conns) {
			struct gen_conn *c = &g->conns[first];

			if (g->now < t)
				g->now = t;
			arrive(g, c, first, !next_step);
			if (!next_step)
				next_step = g->now + g->o.interval_ns;
			c->next_arrival += gap;
			if (c->next_arrival < g->now)
				c->next_arrival = g->now;
		} else {
			break; /* drained */
		}
		/* enough: no new requests, finish the running ones */
		if (g->events >= g->o.events)
			arrivals = false;
	}
	for (i = 0; i < g->o.conns && !g->err; i++)
		if (g->conns[i].opened)
			sock_ev(g, TT_EV_CONN_CLOSE, g->conns[i].cpu, 0,
				&g->conns[i], 7 /* TCP_CLOSE */);
	return g->err;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: gen_recording [-n EVENTS] [-c CONNS] [-r REQ/S] [-t TOKENS]\n"
		"                     [-i TOKEN_US] [-s SEED] FILE\n"
		"Writes a synthetic recording of the demo server under a paced load\n"
		"(defaults: -n 10000000 -c 200 -r 100 -t 64 -i 20000 -s 1).\n");
}

static int parse_u64(const char *s, __u64 lo, __u64 hi, __u64 *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *end || n < lo || n > hi)
		return -1;
	*v = n;
	return 0;
}

static int parse_args(int argc, char **argv, struct gen_opts *o)
{
	__u64 v;
	int c;

	while ((c = getopt(argc, argv, "n:c:r:t:i:s:h")) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64(optarg, 1, 1ULL << 40, &o->events))
				goto bad;
			break;
		case 'c':
			if (parse_u64(optarg, 1, 4000, &v))
				goto bad;
			o->conns = v;
			break;
		case 'r':
			if (parse_u64(optarg, 1, 1000000, &v))
				goto bad;
			o->rate = v;
			break;
		case 't':
			if (parse_u64(optarg, 1, 100000, &v))
				goto bad;
			o->tokens = v;
			break;
		case 'i':
			if (parse_u64(optarg, 1, 10000000, &v))
				goto bad;
			o->interval_ns = v * 1000;
			break;
		case 's':
			if (parse_u64(optarg, 1, ~0ULL, &o->seed))
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -1;
	}
	o->path = argv[optind];
	return 0;
bad:
	fprintf(stderr, "gen_recording: invalid -%c '%s'\n", c, optarg);
	return -1;
}

int main(int argc, char **argv)
{
	struct gen g = {
		.o = { .events = 10000000, .conns = 200, .rate = 100,
		       .tokens = 64, .interval_ns = 20000000, .seed = 1 },
	};
	struct tt_proc_info procs[2] = {
		{ SERVER_TGID, SERVER_TGID, "demo-server" },
		{ SERVER_TGID, ENGINE_TID, "demo-engine" },
	};
	struct tt_file_meta meta = {
		.hostname = "gen_recording",
		.kernel = "synthetic",
		.options = "bench/gen_recording",
		.procs = procs,
		.nprocs = 2,
	};
	struct tt_write_stats ws = {};
	int ret = 1;

	if (parse_args(argc, argv, &g.o))
		return 2;
	g.rng = g.o.seed * 0x9e3779b97f4a7c15ULL | 1;
	g.now = meta.mono_ns = 1000000000000ULL;
	meta.real_ns = 1700000000000000000ULL;
	g.conns = calloc(g.o.conns, sizeof(*g.conns));
	if (!g.conns) {
		fprintf(stderr, "gen_recording: out of memory\n");
		return 1;
	}
	g.w = tt_writer_open(g.o.path, &meta);
	if (!g.w) {
		fprintf(stderr, "gen_recording: cannot write %s: %s\n", g.o.path,
			strerror(errno));
		goto cleanup;
	}
	if (run(&g)) {
		fprintf(stderr, "gen_recording: writing %s: %s\n", g.o.path,
			strerror(-g.err));
		tt_writer_close(g.w, NULL);
		goto cleanup;
	}
	if (tt_writer_close(g.w, &ws)) {
		fprintf(stderr, "gen_recording: closing %s: %s\n", g.o.path,
			strerror(errno));
		goto cleanup;
	}
	printf("gen_recording: %llu events, %llu requests, %.1f s of trace, %llu bytes (%.2f bytes/event) in %s\n",
	       (unsigned long long)ws.events,
	       (unsigned long long)g.requests,
	       (g.now - meta.mono_ns) / 1e9, (unsigned long long)ws.bytes,
	       (double)ws.bytes / ws.events, g.o.path);
	ret = 0;
cleanup:
	free(g.conns);
	return ret;
}
