// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The frame of TTFT on synthetic requests and readings: --slo parsing and
 * the MLPerf presets, E2E, attainment, goodput over the active time, p99
 * against each limit, the stage of a miss, cost, and energy: counters
 * across a wrap, power readings, per-request shares, busy cores; and the
 * text and JSON the report gets (docs/design.md §9).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "energy.h"
#include "frame.h"
#include "slo.h"
#include "tt_test.h"

#define MS 1000000ULL
/* a double computed two ways: equal but for rounding */
#define ASSERT_NEAR(a, b, name) ASSERT_TRUE(fabs((a) - (b)) < 1e-9, name)

static void test_parse(void)
{
	struct tt_slo s;
	char err[256];

	ASSERT_OK(tt_slo_parse("ttft=450ms,tpot=40ms", &s, err, sizeof(err)),
		  "ttft,tpot");
	ASSERT_EQ(s.ttft_ns, 450 * MS, "ttft");
	ASSERT_EQ(s.tpot_ns, 40 * MS, "tpot");
	ASSERT_EQ(s.e2e_ns, 0, "no e2e");
	ASSERT_OK(tt_slo_parse("e2e=2s,ttft=1500us,tpot=900ns", &s, err,
			       sizeof(err)),
		  "units");
	ASSERT_EQ(s.e2e_ns, 2000 * MS, "e2e s");
	ASSERT_EQ(s.ttft_ns, 1500000, "ttft us");
	ASSERT_EQ(s.tpot_ns, 900, "tpot ns");
	ASSERT_OK(tt_slo_parse("ttft=0.5s", &s, err, sizeof(err)), "fraction");
	ASSERT_EQ(s.ttft_ns, 500 * MS, "0.5s");
}

/* MLCommons' mlperf.conf: "NAME TTFT-ms TPOT-ms" */
static void test_presets(void)
{
	static const char want[] = "llama2-70b 2000 200\n"
				   "llama2-70b-interactive 450 40\n"
				   "llama3_1-405b 6000 175\n"
				   "llama3_1-405b-interactive 4500 80\n"
				   "llama3_1-8b 2000 100\n"
				   "llama3_1-8b-interactive 500 30\n"
				   "deepseek-r1 2000 80\n";
	unsigned long long ttft, tpot;
	char spec[64], name[40], err[256];
	const char *p = want;
	struct tt_slo s;
	int used, n = 0;

	while (sscanf(p, "%39s %llu %llu\n%n", name, &ttft, &tpot, &used) ==
	       3) {
		p += used;
		n++;
		snprintf(spec, sizeof(spec), "mlperf:%s", name);
		if (!ASSERT_OK(tt_slo_parse(spec, &s, err, sizeof(err)), spec))
			continue;
		ASSERT_EQ(s.ttft_ns, ttft * MS, "preset ttft");
		ASSERT_EQ(s.tpot_ns, tpot * MS, "preset tpot");
		ASSERT_EQ(s.e2e_ns, 0, "preset e2e");
		ASSERT_STREQ(s.name, spec, "preset name");
	}
	ASSERT_EQ(n, 7, "seven presets");
}

static void test_bad_specs(void)
{
	static const char *const bad[] = {
		"",
		"ttft",
		"ttft=",
		"ttft=abc",
		"ttft=0ms",
		"ttft=-5ms",
		"ttft=10",
		"ttft=10xs",
		"foo=1ms",
		"ttft=1ms,ttft=2ms",
		"mlperf:nope",
		"mlperf:",
		",",
		"ttft=nanms",
		"ttft=infs",
	};
	char err[256];
	struct tt_slo s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ASSERT_EQ(tt_slo_parse(bad[i], &s, err, sizeof(err)), -EINVAL,
			  bad[i]);
		ASSERT_TRUE(err[0] && !strchr(err, '\n'), "one-line reason");
	}
	tt_slo_parse("mlperf:nope", &s, err, sizeof(err));
	ASSERT_TRUE(strstr(err, "llama2-70b-interactive") != NULL,
		    "the presets are named");
}

/* A complete request: arrives at t ms, TTFT and TPOT in ms, its stages
 * all queue but for 1 ms of compute.cpu. */
static struct tt_request req(__u64 id, double t, double ttft, double tpot,
			     unsigned int tokens)
{
	struct tt_request r = { .id = id,
				.complete = true,
				.attributed = true };

	r.t_arrive = (__u64)(t * MS) + 1000 * MS;
	r.ttft = (__u64)(ttft * MS);
	r.t_wire = r.t_arrive + r.ttft;
	r.t_first_write = r.t_wire - 10000;
	r.tokens = tokens;
	r.tpot = (__u64)(tpot * MS);
	if (tokens >= 2) {
		r.tpot_at_wire = true;
		r.t_last_wire = r.t_wire + r.tpot * (tokens - 1);
		r.t_last_write = r.t_last_wire - 10000;
	} else {
		r.t_last_write = r.t_first_write;
	}
	r.stage_ns[TT_ST_CPU] = 1 * MS;
	r.stage_ns[TT_ST_QUEUE] = r.ttft - 1 * MS;
	return r;
}

static void test_e2e(void)
{
	struct tt_request r = req(1, 0, 10, 2, 5);
	bool wire;

	ASSERT_EQ(tt_request_e2e(&r, &wire), 18 * MS, "ttft + 4 tpot");
	ASSERT_TRUE(wire, "at the wire");
	r.tpot_at_wire = false; /* the last XMIT was not seen: its send */
	ASSERT_EQ(tt_request_e2e(&r, &wire), 18 * MS - 10000, "at the send");
	ASSERT_FALSE(wire, "not at the wire");
	r = req(2, 0, 7, 0, 1);
	ASSERT_EQ(tt_request_e2e(&r, NULL), 7 * MS, "one token: its TTFT");
	r.t_arrive = 0;
	ASSERT_EQ(tt_request_e2e(&r, NULL), 0, "no arrival: unknown");
}

/*
 * Ten requests over 1 s of active time (arrivals 0..900 ms, the last ends
 * at 1000 ms): 7 meet ttft<=20ms,tpot<=5ms; #8 misses TTFT in its queue,
 * #9 misses TPOT (decode), #10 misses TTFT in network.in; #11 is
 * incomplete, #12 one token (no TPOT to judge).
 */
static size_t scenario(struct tt_request *r)
{
	size_t i;

	for (i = 0; i < 7; i++)
		r[i] = req(i + 1, i * 100, 10, 2, 11); /* e2e 30 ms */
	r[7] = req(8, 700, 50, 2, 11);
	r[8] = req(9, 750, 10, 9, 11);
	r[9] = req(10, 800, 40, 2, 11);
	r[9].stage_ns[TT_ST_QUEUE] = 9 * MS; /* the others' median */
	r[9].stage_ns[TT_ST_NET_IN] = 30 * MS;
	r[10] = req(11, 850, 10, 2, 11);
	r[10].complete = false;
	r[10].incomplete = TT_INC_LOST;
	r[11] = req(12, 990, 10, 0, 1); /* ends at 1000 ms */
	return 12;
}

static void test_attainment_goodput(void)
{
	struct tt_request r[16];
	bool apart[16] = {};
	size_t n = scenario(r);
	struct tt_frame f;
	struct tt_slo s;
	char err[128];

	ASSERT_OK(tt_slo_parse("ttft=20ms,tpot=5ms", &s, err, sizeof(err)),
		  "parse");
	if (!ASSERT_OK(tt_frame_compute(&f, r, n, NULL, &s, 0), "compute"))
		return;
	ASSERT_EQ(f.served, 11, "served: complete requests");
	ASSERT_EQ(f.excluded, 1, "the incomplete one is not judged");
	ASSERT_EQ(f.met, 8, "7 + the one-token request");
	ASSERT_NEAR(f.attainment, 8.0 / 11, "attainment");
	ASSERT_EQ(f.active_ns, 1000 * MS, "active: first arrival to last end");
	ASSERT_EQ(f.goodput_rps, 8.0, "goodput requests/s");
	ASSERT_EQ(f.goodput_tps, 7 * 11 + 1.0, "goodput tokens/s");
	ASSERT_EQ(f.output_tokens, 10 * 11 + 1, "output tokens");
	ASSERT_EQ(f.output_tps, 111.0, "throughput");
	ASSERT_EQ(f.rps, 11.0, "requests/s");
	ASSERT_EQ(f.over_ttft, 2, "over ttft");
	ASSERT_EQ(f.over_tpot, 1, "over tpot");
	ASSERT_EQ(f.p99_ttft, 50 * MS, "p99 ttft");
	ASSERT_EQ(f.p99_tpot, 9 * MS, "p99 tpot");
	ASSERT_EQ(f.req[7].verdict, TT_SLO_MISSED, "#8 missed");
	ASSERT_EQ(f.req[7].cause, TT_ST_QUEUE, "#8: its queue");
	ASSERT_EQ(f.req[8].cause, TT_SLO_DECODE, "#9: decode");
	ASSERT_EQ(f.req[9].cause, TT_ST_NET_IN, "#10: network.in");
	ASSERT_EQ(f.req[10].verdict, TT_SLO_NOT_JUDGED, "#11 not judged");
	ASSERT_EQ(f.req[11].verdict, TT_SLO_MET, "#12: one token meets TPOT");
	ASSERT_EQ(f.by_cause[TT_ST_QUEUE], 1, "by cause: queue");
	ASSERT_EQ(f.by_cause[TT_SLO_DECODE], 1, "by cause: decode");
	ASSERT_EQ(f.by_cause[TT_ST_NET_IN], 1, "by cause: net.in");
	tt_frame_free(&f);

	/* a gateway's call to its runner: apart, neither served nor excluded */
	r[n] = req(13, 500, 10, 2, 11);
	r[n].complete = false;
	r[n].incomplete = TT_INC_HOP;
	if (ASSERT_OK(tt_frame_compute(&f, r, n + 1, NULL, &s, 0),
		      "compute hop")) {
		ASSERT_EQ(f.hops, 1, "the hop counted apart");
		ASSERT_EQ(f.excluded, 1, "not an incomplete request");
		ASSERT_EQ(f.served, 11, "nor a served one");
	}
	tt_frame_free(&f);

	/* a TLS handshake's exchange: apart too, as the report counts it */
	r[n] = req(13, 500, 10, 0, 0);
	r[n].complete = false;
	r[n].incomplete = TT_INC_TLS;
	apart[n] = true;
	if (ASSERT_OK(tt_frame_compute(&f, r, n + 1, apart, &s, 0),
		      "compute tls")) {
		ASSERT_EQ(f.tls, 1, "the handshake counted apart");
		ASSERT_EQ(f.excluded, 1, "not an incomplete request");
		ASSERT_EQ(f.served, 11, "nor a served one");
		ASSERT_EQ(f.req[n].verdict, TT_SLO_NOT_JUDGED, "not judged");
	}
	tt_frame_free(&f);

	/* an E2E limit: 30 ms requests meet 30 ms, not 29 */
	ASSERT_OK(tt_slo_parse("e2e=29ms", &s, err, sizeof(err)), "e2e");
	if (ASSERT_OK(tt_frame_compute(&f, r, n, NULL, &s, 0), "compute e2e")) {
		ASSERT_EQ(f.met, 1, "only the 10 ms one-token request");
		ASSERT_EQ(f.req[0].cause, TT_SLO_DECODE, "E2E miss: decode");
	}
	tt_frame_free(&f);
	ASSERT_OK(tt_slo_parse("e2e=30ms", &s, err, sizeof(err)), "e2e");
	if (ASSERT_OK(tt_frame_compute(&f, r, n, NULL, &s, 0), "compute e2e"))
		ASSERT_EQ(f.met, 8, "at the limit meets it");
	tt_frame_free(&f);
}

/* A miss no stage of which is above its median (its time is elsewhere,
 * say its stages do not cover it): charged to its largest stage. */
static void test_miss_without_excess(void)
{
	struct tt_request r[3] = { req(1, 0, 10, 2, 3), req(2, 10, 10, 2, 3),
				   req(3, 20, 30, 2, 3) };
	struct tt_frame f;
	struct tt_slo s;
	char err[128];

	r[2].stage_ns[TT_ST_QUEUE] = 9 * MS; /* as the met ones' */
	tt_slo_parse("ttft=20ms", &s, err, sizeof(err));
	if (!ASSERT_OK(tt_frame_compute(&f, r, 3, NULL, &s, 0), "compute"))
		return;
	ASSERT_EQ(f.met, 2, "met");
	ASSERT_EQ(f.req[2].cause, TT_ST_QUEUE, "its largest stage");
	tt_frame_free(&f);
}

static void test_cost_and_no_slo(void)
{
	struct tt_request r[16];
	size_t n = scenario(r);
	struct tt_frame f;

	if (!ASSERT_OK(tt_frame_compute(&f, r, n, NULL, NULL, 3.6), "compute"))
		return;
	ASSERT_FALSE(f.has_slo, "no slo");
	ASSERT_EQ(f.req[0].verdict, TT_SLO_NOT_JUDGED, "nothing judged");
	/* $3.6/h = $0.001/s at 111 tokens/s and 11 requests/s */
	ASSERT_NEAR(f.usd_per_mtok, 1e-3 / 111 * 1e6, "$/1M tokens");
	ASSERT_NEAR(f.usd_per_request, 1e-3 / 11, "$/request");
	ASSERT_EQ(f.e2e.n, 11, "E2E of the served");
	ASSERT_EQ(f.e2e.max, 100 * MS, "10 ms + 10 tokens of 9 ms");
	tt_frame_free(&f);
}

static struct tt_event reading(__u64 t_ms, unsigned int domain,
			       unsigned int kind, __u64 value, __u64 max)
{
	struct tt_event ev = { .h = { .ts = t_ms * MS, .type = TT_EV_ENERGY } };

	ev.energy.kind = kind;
	ev.energy.source = TT_ESRC_POWERCAP;
	ev.energy.domain = domain;
	ev.energy.value = value;
	ev.energy.max = max;
	snprintf(ev.energy.name, sizeof(ev.energy.name), "zone%u", domain);
	return ev;
}

static void test_energy_counters(void)
{
	struct tt_energy_acc e = {};
	struct tt_event ev;
	__u64 ns;

	static const struct {
		__u64 t_ms;
		unsigned int domain, kind;
		__u64 value, max;
	} in[] = {
		/* a RAPL counter that wraps at 1000 J: 999 J, 0.5 J, 3 J */
		{ 1000, 0, TT_ENERGY_COUNTER, 999000000, 1000000000 },
		{ 2000, 0, TT_ENERGY_COUNTER, 500000, 1000000000 },
		{ 3000, 0, TT_ENERGY_COUNTER, 3000000, 1000000000 },
		/* 10 W for 2 s, then 30 W: (10 + 30) / 2 W for 1 s */
		{ 1000, 1, TT_ENERGY_POWER, 10000000, 0 },
		{ 3000, 1, TT_ENERGY_POWER, 10000000, 0 },
		{ 4000, 1, TT_ENERGY_POWER, 30000000, 0 },
		/* a counter without a range that goes back: a reset */
		{ 1000, 2, TT_ENERGY_COUNTER, 5000000, 0 },
		{ 2000, 2, TT_ENERGY_COUNTER, 1000000, 0 },
		{ 3000, 2, TT_ENERGY_COUNTER, 2000000, 0 },
		{ 3000, 2, TT_ENERGY_UTIL, 40, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		ev = reading(in[i].t_ms, in[i].domain, in[i].kind, in[i].value,
			     in[i].max);
		ASSERT_OK(tt_energy_add(&e, &ev), "add");
	}
	if (!ASSERT_EQ(e.nd, 3, "domains"))
		goto cleanup;
	ASSERT_EQ(tt_energy_joules(&e.d[0], &ns), 4.0, "1 + 0.5 + 2.5 J");
	ASSERT_EQ(ns, 2000 * MS, "span");
	ASSERT_EQ(e.d[0].wraps, 1, "one wrap");
	ASSERT_EQ(tt_energy_joules(&e.d[1], NULL), 40.0, "20 J + 20 J");
	ASSERT_EQ(tt_energy_joules(&e.d[2], NULL), 1.0, "after the reset");
	ASSERT_EQ(tt_energy_at(&e.d[0], 1500 * MS), 0.75, "interpolated");
	ASSERT_EQ(tt_energy_at(&e.d[0], 0), 0.0, "clamped before");
	ASSERT_EQ(tt_energy_at(&e.d[0], 9000 * MS), 4.0, "clamped after");
	ASSERT_EQ(e.d[2].util_n, 1, "utilization read");
cleanup:
	tt_energy_free(&e);
}

static struct tt_event sw(__u64 t_us, unsigned int cpu, bool prev, bool next)
{
	struct tt_event ev = { .h = { .ts = t_us * 1000 + 5000 * MS,
				      .type = TT_EV_SWITCH,
				      .cpu = cpu } };

	ev.sw.sw_flags = (prev ? TT_SW_PREV_TRACED : 0) |
			 (next ? TT_SW_NEXT_TRACED : 0);
	return ev;
}

static void test_energy_shares_and_busy(void)
{
	struct tt_energy_acc e = {};
	struct tt_energy_result res;
	struct tt_request r[4];
	__u64 e2e[4];
	struct tt_event ev;
	size_t i;

	/* 10 J in [1 s, 2 s), 20 J in [2 s, 3 s), 5 J in [3 s, 4 s) */
	static const __u64 uj[] = { 0, 10000000, 30000000, 35000000 };
	for (i = 0; i < 4; i++) {
		ev = reading(1000 * (i + 1), 0, TT_ENERGY_COUNTER, uj[i], 0);
		ASSERT_OK(tt_energy_add(&e, &ev), "add");
	}
	/* #1 alone in [1.0, 1.5); #1 and #2 share [1.5, 2.0) and [2, 2.5) */
	memset(r, 0, sizeof(r));
	r[0].t_arrive = 1000 * MS, e2e[0] = 1500 * MS, r[0].tokens = 10;
	r[1].t_arrive = 1500 * MS, e2e[1] = 1000 * MS, r[1].tokens = 20;
	r[2].t_arrive = 0, e2e[2] = 0, r[2].tokens = 5; /* no E2E: no share */
	/* a hop inside #1: its tokens are #1's, it takes no share */
	r[3].t_arrive = 1100 * MS, e2e[3] = 300 * MS, r[3].tokens = 10;
	r[3].incomplete = TT_INC_HOP;
	/* in [5 s, 5.01 s) CPU 0 runs traced threads 2 ms, CPU 1 3 + 6 ms */
	ev = sw(0, 0, false, true);
	ASSERT_OK(tt_energy_add(&e, &ev), "sw");
	ev = sw(2000, 0, true, false);
	ASSERT_OK(tt_energy_add(&e, &ev), "sw");
	ev = sw(1000, 1, false, true);
	ASSERT_OK(tt_energy_add(&e, &ev), "sw");
	ev = sw(4000, 1, true, true);
	ASSERT_OK(tt_energy_add(&e, &ev), "sw");
	ev = sw(12000, 1, true, false); /* 2 ms more, past the window */
	ASSERT_OK(tt_energy_add(&e, &ev), "sw");
	if (!ASSERT_OK(tt_energy_compute(&e, r, e2e, 4, 5000 * MS,
					 5000 * MS + 10 * MS, &res),
		       "compute"))
		goto cleanup;
	ASSERT_EQ(res.joules, 35.0, "joules");
	ASSERT_EQ(res.tokens, 35, "every token");
	ASSERT_EQ(res.tokens_per_j, 1.0, "tokens/J");
	ASSERT_NEAR(res.mean_w, 35.0 / 3, "mean W");
	/* [1,2): #1 1 s, #2 0.5 s: 10 J by 2:1; [2,3): 0.5 s each: 20 J
	 * halves; [3,4): no request: idle */
	ASSERT_NEAR(res.req_j[0], 10.0 * 2 / 3 + 10, "#1's share");
	ASSERT_NEAR(res.req_j[1], 10.0 / 3 + 10, "#2's share");
	ASSERT_EQ(res.req_j[2], 0.0, "no E2E, no share");
	ASSERT_EQ(res.req_j[3], 0.0, "a hop: no share");
	ASSERT_EQ(res.idle_j, 5.0, "idle");
	ASSERT_NEAR(res.cpu_cores, 1.1, "11 ms busy in 10 ms");
cleanup:
	tt_energy_result_free(&res);
	tt_energy_free(&e);
}

/* What the report prints, with and without sensors. */
static void test_render(void)
{
	struct tt_energy_acc e = {};
	struct tt_energy_result en;
	struct tt_request r[16];
	size_t n = scenario(r), len = 0;
	struct tt_frame_view v;
	struct tt_frame f;
	struct tt_slo s;
	char *buf = NULL, err[128];
	FILE *out;
	__u64 e2e[16] = {};

	tt_slo_parse("mlperf:llama2-70b-interactive", &s, err, sizeof(err));
	s.ttft_ns = 20 * MS;
	s.tpot_ns = 5 * MS;
	if (!ASSERT_OK(tt_frame_compute(&f, r, n, NULL, &s, 2), "compute"))
		return;
	ASSERT_OK(tt_energy_compute(&e, r, e2e, n, 0, 0, &en), "energy");
	v = (struct tt_frame_view){ &f, &e, &en };
	out = open_memstream(&buf, &len);
	tt_frame_text(out, &v);
	fputc('|', out);
	tt_frame_json(out, &v);
	fputc('|', out);
	tt_frame_request_json(out, &v, 7);
	fclose(out);
	static const char *const want[] = {
		"8 of 11 complete requests met it (72.7%)",
		/* no sensor: said, and no figure */
		"energy: no energy sensor in this recording",
		"\"energy\":null",
		"\"slo\":{\"name\":\"mlperf:llama2-70b-interactive\",\"ttft_ns\":20000000,\"tpot_ns\":5000000,\"e2e_ns\":null,\"requests\":11,\"met\":8",
		"\"goodput_rps\":8,\"goodput_tps\":78",
		"\"violations_by_stage\":{\"network.in\":1,\"scheduler.queue\":1,\"decode\":1}",
		/* request #8 */
		"\"slo_met\":false,\"slo_miss_stage\":\"scheduler.queue\"",
		"\"e2e_ns\":70000000",
		"\"cost\":{\"usd_per_hour\":2,",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ASSERT_TRUE(strstr(buf, want[i]) != NULL, want[i]);
	free(buf);
	tt_energy_result_free(&en);
	tt_frame_free(&f);
}

int main(void)
{
	TT_RUN(test_parse);
	TT_RUN(test_presets);
	TT_RUN(test_bad_specs);
	TT_RUN(test_e2e);
	TT_RUN(test_attainment_goodput);
	TT_RUN(test_miss_without_excess);
	TT_RUN(test_cost_and_no_slo);
	TT_RUN(test_energy_counters);
	TT_RUN(test_energy_shares_and_busy);
	TT_RUN(test_render);
	TT_EXIT();
}
