/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Percentiles, number formatting, and the text and JSON renderers. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include "../user/analyzer.h"
#include "../user/report.h"
#include "../user/stats.h"
#include "tt_test.h"

#define US 1000ULL
#define MS 1000000ULL

/* ---- a tiny JSON checker: is the text one valid JSON value? ---- */

static const char *json_value(const char *p, int depth);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    p[i]) ||
					    !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *s = p;

	if (*p == '-')
		p++;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	return p > s ? p : NULL;
}

static const char *json_value(const char *p, int depth)
{
	if (!p || depth > 32)
		return NULL;
	p = json_ws(p);
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		bool obj = *p == '{';

		p = json_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (obj) {
				p = json_string(json_ws(p));
				if (!p)
					return NULL;
				p = json_ws(p);
				if (*p++ != ':')
					return NULL;
			}
			p = json_value(p, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

static bool json_valid(const char *s)
{
	const char *end = json_value(s, 0);

	return end && *json_ws(end) == '\0';
}

/* ---- building an analysis ---- */

static struct tt_event mk(unsigned int type, __u64 ts)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = 100;
	ev.h.tid = 101;
	return ev;
}

static void add(struct tt_analyzer *a, const struct tt_event *ev)
{
	TT_CHECK(tt_analyzer_add(a, ev) == 0);
}

static void open_conn(struct tt_analyzer *a, __u64 sk, const char *ip,
		      __u16 port)
{
	struct tt_event ev = mk(TT_EV_CONN_OPEN, 0);

	ev.conn.sk = sk;
	ev.conn.rport = port;
	ev.conn.lport = 8000;
	ev.conn.family = strchr(ip, ':') ? AF_INET6 : AF_INET;
	inet_pton(ev.conn.family, ip, ev.conn.raddr);
	add(a, &ev);
}

static void sock_ev(struct tt_analyzer *a, unsigned int type, __u64 ts,
		    __u64 sk, __s64 len)
{
	struct tt_event ev = mk(type, ts);

	ev.sock.sk = sk;
	ev.sock.len = len;
	add(a, &ev);
}

static void send_ev(struct tt_analyzer *a, __u64 ts_enter, __u64 sk, __u32 seq,
		    unsigned int cls, unsigned int tokens)
{
	struct tt_event ev = mk(TT_EV_SEND, ts_enter + 10 * US);

	ev.send.sk = sk;
	ev.send.len = 50;
	ev.send.ts_enter = ts_enter;
	ev.send.seq = seq;
	ev.send.cls = cls;
	ev.send.tokens = tokens;
	ev.send.flags = TT_SEND_F_SSE;
	add(a, &ev);
	if (cls == TT_SEND_DONE)
		return;
	ev = mk(TT_EV_XMIT, ts_enter + 5 * US);
	ev.xmit.sk = sk;
	ev.xmit.seq = seq;
	ev.xmit.end_seq = seq + 50;
	add(a, &ev);
}

/* Arrives at t0, first token at t0 + first (wire 5 us later), 3 tokens
 * 2 ms apart; [DONE] unless cut (then the connection closes). */
static void request(struct tt_analyzer *a, __u64 sk, __u64 t0, __u64 first,
		    bool cut)
{
	sock_ev(a, TT_EV_DATA_READY, t0, sk, 100);
	sock_ev(a, TT_EV_RECV, t0 + 10 * US, sk, 100);
	send_ev(a, t0 + first, sk, 1000, TT_SEND_TOKEN, 1);
	send_ev(a, t0 + first + 2 * MS, sk, 1050, TT_SEND_TOKEN, 1);
	send_ev(a, t0 + first + 4 * MS, sk, 1100, TT_SEND_TOKEN, 1);
	if (cut)
		sock_ev(a, TT_EV_CONN_CLOSE, t0 + first + 5 * MS, sk, 8);
	else
		send_ev(a, t0 + first + 5 * MS, sk, 1150, TT_SEND_DONE, 0);
}

/* 3 complete requests (TTFT 10.005, 20.005, 30.005 ms) and one cut short
 * (TTFT 5.005 ms, from [::1]:5555); 3 records lost before any of them. */
static struct tt_analyzer *sample(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_event ev = mk(TT_EV_LOST, 500 * US);

	ev.lost.count = 3;
	ev.lost.since_ts = 100 * US;
	add(a, &ev);
	open_conn(a, 0x10, "10.0.0.1", 1000);
	open_conn(a, 0x20, "10.0.0.2", 2000);
	open_conn(a, 0x30, "::1", 5555);
	request(a, 0x10, 1 * MS, 10 * MS, false);
	request(a, 0x20, 2 * MS, 30 * MS, false);
	request(a, 0x30, 3 * MS, 5 * MS, true);
	request(a, 0x10, 100 * MS, 20 * MS, false);
	tt_analyzer_finish(a);
	return a;
}

/* Renders into a string (free it). */
static char *render(const struct tt_analyzer *a,
		    const struct tt_file_meta *meta,
		    const struct tt_report_opts *o, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		abort();
	err = json ? tt_report_json(f, a, meta, o) :
		     tt_report_text(f, a, meta, o);
	TT_CHECK_EQ_U64(err, 0);
	fclose(f);
	return buf;
}

/* The four numbers after "name" at the start of a line of text. */
static int row(const char *text, const char *name, double v[4])
{
	const char *p = text;
	size_t k = strlen(name);

	while (p && *p) {
		if (!strncmp(p, name, k) && p[k] == ' ')
			return sscanf(p + k, "%lf %lf %lf %lf", &v[0], &v[1],
				      &v[2], &v[3]);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* ---- tests ---- */

static void test_percentiles(void)
{
	__u64 v[100], ten[10] = { 100, 90, 80, 70, 60, 50, 40, 30, 20, 10 };
	__u64 three[3] = { 7, 3, 5 };
	struct tt_summary s;
	size_t i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i;
	tt_summarize(v, 100, &s);
	TT_CHECK_EQ_U64(s.n, 100);
	TT_CHECK_EQ_U64(s.min, 1);
	TT_CHECK_EQ_U64(s.p50, 50);
	TT_CHECK_EQ_U64(s.p90, 90);
	TT_CHECK_EQ_U64(s.p99, 99);
	TT_CHECK_EQ_U64(s.max, 100);
	TT_CHECK_EQ_U64(s.mean, 50); /* 50.5 rounded down */
	/* nearest rank: ceil(p/100 * n) */
	tt_summarize(ten, 10, &s);
	TT_CHECK_EQ_U64(s.p50, 50);
	TT_CHECK_EQ_U64(s.p90, 90);
	TT_CHECK_EQ_U64(s.p99, 100);
	TT_CHECK_EQ_U64(tt_percentile_sorted(ten, 10, 0), 10);
	TT_CHECK_EQ_U64(tt_percentile_sorted(ten, 10, 10), 10);
	TT_CHECK_EQ_U64(tt_percentile_sorted(ten, 10, 11), 20);
	TT_CHECK_EQ_U64(tt_percentile_sorted(ten, 10, 100), 100);
	tt_summarize(three, 3, &s);
	TT_CHECK_EQ_U64(s.p50, 5);
	TT_CHECK_EQ_U64(s.p90, 7);
	tt_summarize(three, 1, &s);
	TT_CHECK_EQ_U64(s.p50, 3);
	TT_CHECK_EQ_U64(s.p99, 3);
	tt_summarize(NULL, 0, &s);
	TT_CHECK_EQ_U64(s.n, 0);
	TT_CHECK_EQ_U64(s.p50, 0);
	TT_CHECK_EQ_U64(tt_percentile_sorted(NULL, 0, 50), 0);
}

static void test_fmt_and_vec(void)
{
	struct tt_u64vec vec = {};
	char buf[32];
	size_t i;

	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 1234567), "1.235"));
	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 0), "0.000"));
	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 499), "0.000"));
	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 500), "0.001"));
	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 20005000), "20.005"));
	TT_CHECK(!strcmp(tt_fmt_ms(buf, sizeof(buf), 999999600), "1000.000"));
	for (i = 0; i < 1000; i++)
		TT_CHECK(tt_u64vec_push(&vec, i * 3) == 0);
	TT_CHECK_EQ_U64(vec.n, 1000);
	TT_CHECK_EQ_U64(vec.v[999], 2997);
	tt_u64vec_free(&vec);
	TT_CHECK(vec.v == NULL && vec.n == 0);
}

static void test_peer(void)
{
	struct tt_request r;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.family = AF_INET;
	r.rport = 443;
	inet_pton(AF_INET, "192.0.2.7", r.raddr);
	TT_CHECK(
		!strcmp(tt_report_peer(&r, buf, sizeof(buf)), "192.0.2.7:443"));
	r.family = AF_INET6;
	inet_pton(AF_INET6, "2001:db8::5", r.raddr);
	TT_CHECK(!strcmp(tt_report_peer(&r, buf, sizeof(buf)),
			 "[2001:db8::5]:443"));
	inet_pton(AF_INET6, "::ffff:198.51.100.1", r.raddr);
	TT_CHECK(!strcmp(tt_report_peer(&r, buf, sizeof(buf)),
			 "198.51.100.1:443"));
	r.family = 0;
	TT_CHECK(!strcmp(tt_report_peer(&r, buf, sizeof(buf)), "unknown"));
}

static void test_text_summary(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = {};
	struct tt_file_meta meta;
	double v[4];
	char *out;

	memset(&meta, 0, sizeof(meta));
	strcpy(meta.hostname, "gpu-node-7");
	strcpy(meta.kernel, "6.18.0 #1 SMP PREEMPT_DYNAMIC");
	strcpy(meta.options, "ttftrace record -p 1234");
	out = render(a, &meta, &o, false);
	TT_CHECK(strstr(out, "host: gpu-node-7  kernel: 6.18.0") != NULL);
	TT_CHECK(strstr(out, "recorded with: ttftrace record -p 1234\n"));
	TT_CHECK(strstr(out, "requests: 4 (complete 3, incomplete 1)\n"));
	TT_CHECK(strstr(out, "incomplete: closed-mid-stream 1\n"));
	TT_CHECK(strstr(out, "drops: 3 lost records"));
	TT_CHECK(row(out, "TTFT", v) == 4);
	TT_CHECK(v[0] == 20.005 && v[1] == 30.005 && v[2] == 30.005 &&
		 v[3] == 30.005);
	TT_CHECK(strstr(out, "(3 requests)"));
	TT_CHECK(row(out, "TPOT", v) == 4);
	TT_CHECK(v[0] == 2.0 && v[1] == 2.0 && v[2] == 2.0);
	TT_CHECK(row(out, "ITL", v) == 4);
	TT_CHECK(v[0] == 2.0 && v[3] == 2.0);
	TT_CHECK(strstr(out, "(6 gaps)"));
	TT_CHECK(!strstr(out, "TTFT_MS")); /* no table unless asked */
	free(out);

	/* counting the incomplete one too: {5, 10, 20, 30} ms */
	o.include_incomplete = true;
	out = render(a, NULL, &o, false);
	TT_CHECK(!strstr(out, "host:"));
	TT_CHECK(row(out, "TTFT", v) == 4);
	TT_CHECK(v[0] == 10.005 && v[1] == 30.005 && v[3] == 30.005);
	TT_CHECK(strstr(out, "(4 requests)"));
	TT_CHECK(strstr(out, "(8 gaps)"));
	TT_CHECK(strstr(out, "incomplete requests included"));
	free(out);
	tt_analyzer_free(a);
}

static void test_text_requests_table(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = { .requests = true };
	char *out = render(a, NULL, &o, false);
	const char *line;

	TT_CHECK(strstr(out, "TTFT_MS") && strstr(out, "ARRIVE>READ") &&
		 strstr(out, "READ>WRITE") && strstr(out, "WRITE>WIRE") &&
		 strstr(out, "TOKENS") && strstr(out, "TPOT_MS"));
	/* request 1: 10.0.0.1:1000, arrive->read 10 us, read->write
	 * 9.990 ms, write->wire 5 us, 3 tokens, TPOT 2 ms */
	line = strstr(out, "10.0.0.1:1000");
	TT_CHECK(line != NULL);
	if (line) {
		char peer[64], ttft[32], ar[32], rw[32], ww[32], tpot[32],
			status[64];
		unsigned int tokens;

		TT_CHECK(sscanf(line, "%63s %31s %31s %31s %31s %u %31s %63s",
				peer, ttft, ar, rw, ww, &tokens, tpot,
				status) == 8);
		TT_CHECK(!strcmp(ttft, "10.005"));
		TT_CHECK(!strcmp(ar, "0.010"));
		TT_CHECK(!strcmp(rw, "9.990"));
		TT_CHECK(!strcmp(ww, "0.005"));
		TT_CHECK_EQ_U64(tokens, 3);
		TT_CHECK(!strcmp(tpot, "2.000"));
		TT_CHECK(!strcmp(status, "complete"));
	}
	line = strstr(out, "[::1]:5555");
	TT_CHECK(line && strstr(line, "closed-mid-stream"));
	free(out);
	tt_analyzer_free(a);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void test_json(void)
{
	static const char first[] =
		"{\"requests\":[{\"id\":1,\"peer\":\"10.0.0.1:1000\","
		"\"t_arrive_ns\":1000000,\"t_read_ns\":1010000,"
		"\"t_first_write_ns\":11000000,\"t_wire_ns\":11005000,"
		"\"ttft_ns\":10005000,\"tokens\":3,\"tpot_ns\":2000000,"
		"\"complete\":true,";
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = { .json = true };
	struct tt_file_meta meta;
	char *out;

	memset(&meta, 0, sizeof(meta));
	strcpy(meta.hostname, "host\"7");
	strcpy(meta.kernel, "6.18.0\\x");
	strcpy(meta.options, "record -c 'a\tb'\n");
	out = render(a, &meta, &o, true);
	TT_CHECK(json_valid(out));
	TT_CHECK(starts_with(out, first));
	TT_CHECK(strstr(out, "{\"id\":3,\"peer\":\"[::1]:5555\","));
	TT_CHECK(strstr(out, "\"ttft_ns\":5005000,\"tokens\":3,"
			     "\"tpot_ns\":2000000,\"complete\":false"));
	TT_CHECK(strstr(out, "\"incomplete_reason\":\"closed-mid-stream\""));
	TT_CHECK(strstr(out, "\"closed_mid_stream\":true"));
	TT_CHECK(strstr(out, "\"summary\":{\"requests\":4,\"complete\":3,"
			     "\"incomplete\":1,"));
	TT_CHECK(strstr(out, "\"ttft_ns\":{\"p50\":20005000,\"p90\":30005000,"
			     "\"p99\":30005000,\"max\":30005000,\"n\":3}"));
	TT_CHECK(strstr(out, "\"tpot_ns\":{\"p50\":2000000,\"p90\":2000000,"
			     "\"p99\":2000000,"));
	TT_CHECK(strstr(out, "\"itl_ns\":{\"p50\":2000000,"));
	TT_CHECK(strstr(out, "\"drops\":3"));
	TT_CHECK(strstr(out, "\"hostname\":\"host\\\"7\""));
	TT_CHECK(strstr(out, "\"kernel\":\"6.18.0\\\\x\""));
	TT_CHECK(strstr(out, "\"options\":\"record -c 'a\\u0009b'\\u000a\""));
	TT_CHECK(out[strlen(out) - 1] == '\n');
	free(out);
	tt_analyzer_free(a);
}

static void test_empty(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = {};
	char *out;

	tt_analyzer_finish(a);
	out = render(a, NULL, &o, false);
	TT_CHECK(strstr(out, "requests: 0 (complete 0, incomplete 0)\n"));
	TT_CHECK(strstr(out, "drops: 0 lost records\n"));
	TT_CHECK(strstr(out, "(no requests)"));
	free(out);
	out = render(a, NULL, &o, true);
	TT_CHECK(json_valid(out));
	TT_CHECK(starts_with(out,
			     "{\"requests\":[],\"summary\":{\"requests\":0,"));
	TT_CHECK(strstr(out, "\"ttft_ns\":{\"p50\":null,\"p90\":null,"
			     "\"p99\":null,\"max\":null,\"n\":0}"));
	TT_CHECK(strstr(out, "\"drops\":0"));
	TT_CHECK(!strstr(out, "\"meta\""));
	free(out);
	tt_analyzer_free(a);
}

static void test_unknown_values_are_null(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = { .requests = true };
	char *out;

	/* a request read on a connection opened before tracing, never
	 * answered */
	open_conn(a, 0x40, "10.0.0.4", 4000);
	sock_ev(a, TT_EV_RECV, 1 * MS, 0x40, 10);
	tt_analyzer_finish(a);
	out = render(a, NULL, &o, true);
	TT_CHECK(json_valid(out));
	TT_CHECK(strstr(out, "\"t_arrive_ns\":null,\"t_read_ns\":1000000,"
			     "\"t_first_write_ns\":null,\"t_wire_ns\":null,"
			     "\"ttft_ns\":null,\"tokens\":0,\"tpot_ns\":null,"
			     "\"complete\":false"));
	TT_CHECK(strstr(out, "no-arrive,no-response,open-at-end"));
	free(out);
	out = render(a, NULL, &o, false);
	TT_CHECK(strstr(out, "no-arrive,no-response,open-at-end"));
	free(out);
	tt_analyzer_free(a);
}

static void test_write_error(void)
{
	struct tt_analyzer *a = sample();
	struct tt_report_opts o = {};
	FILE *ro = fopen("/dev/null", "r");

	TT_CHECK(ro != NULL);
	if (ro) {
		TT_CHECK_EQ_U64(tt_report_text(ro, a, NULL, &o), -EIO);
		clearerr(ro);
		TT_CHECK_EQ_U64(tt_report_json(ro, a, NULL, &o), -EIO);
		fclose(ro);
	}
	tt_analyzer_free(a);
}

int main(void)
{
	TT_RUN(test_percentiles);
	TT_RUN(test_fmt_and_vec);
	TT_RUN(test_peer);
	TT_RUN(test_text_summary);
	TT_RUN(test_text_requests_table);
	TT_RUN(test_json);
	TT_RUN(test_empty);
	TT_RUN(test_unknown_values_are_null);
	TT_RUN(test_write_error);
	TT_EXIT();
}
