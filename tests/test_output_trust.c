/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Output a user can trust (issue 13, items 9 and 10), on synthetic streams:
 * whatever bytes a traced program puts in its thread names, a device path
 * or an ioctl number holds, or a recording's options hold, every JSON
 * output is strictly valid UTF-8 JSON and no text output carries a raw
 * control byte. Only the renderers' public API is used, so this test also
 * builds against a tree that predates the escapers.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "analyzer.h"
#include "dump.h"
#include "gpu.h"
#include "gpustats.h"
#include "json_check.h"
#include "perfetto.h"
#include "report.h"
#include "ttfile.h"
#include "tt_test.h"

#define US 1000ULL
#define MS 1000000ULL

/* A name that clears a terminal and fakes a report line. */
static const char fake_line[] = "\x1b[2J\x1b[H\nTTFT 1.0ms ok\n";
/* Quote, backslash, a control byte, bytes that are not UTF-8, é. */
static const char bad_bytes[] = "a\"\\\x01\xff\xc3\xa9\xe2\x82";

struct mem {
	char *text;
	size_t len;
	FILE *f;
};

static void mem_open(struct mem *m)
{
	memset(m, 0, sizeof(*m));
	m->f = open_memstream(&m->text, &m->len);
}

static void mem_close(struct mem *m)
{
	fclose(m->f);
}

/* Strictly valid JSON (json_check.h: UTF-8, escapes, no raw controls). */
static bool strict_json(const struct mem *m, struct jc_val *v)
{
	char err[160];

	if (jc_parse(m->text, m->len, v, err, sizeof(err))) {
		fprintf(stderr, "  invalid JSON: %s\n", err);
		return false;
	}
	return true;
}

/* No control byte but the newlines that end lines. */
static bool no_raw_controls(const struct mem *m)
{
	for (size_t i = 0; i < m->len; i++) {
		unsigned char c = m->text[i];

		if ((c < 0x20 && c != '\n') || c == 0x7f) {
			fprintf(stderr, "  raw byte 0x%02x at %zu\n", c, i);
			return false;
		}
	}
	return true;
}

/* The faked report line does not start a line of its own. */
static bool no_fake_line(const struct mem *m)
{
	const char *p = m->text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, "TTFT 1.0ms ok", 13))
			return false;
	return true;
}

static struct tt_event mk(unsigned int type, __u64 ts, __u32 tid)
{
	struct tt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.h.type = type;
	ev.h.ts = ts;
	ev.h.tgid = 100;
	ev.h.tid = tid;
	return ev;
}

static struct tt_event comm_ev(__u64 ts, __u32 tid, const char *name)
{
	struct tt_event ev = mk(TT_EV_COMM, ts, tid);

	memcpy(ev.comm.comm, name, strnlen(name, TT_COMM_LEN));
	return ev;
}

/* One complete request read by thread 101 and written by thread 102, both
 * renamed: 101 to fake_line, 102 to bad_bytes. */
static struct tt_analyzer *named_analysis(void)
{
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_event evs[10];
	size_t n = 0, i;

	evs[n] = mk(TT_EV_SWITCH, 1 * US, 0);
	evs[n].h.tgid = 0;
	evs[n].sw.next_tid = 101;
	evs[n].sw.next_tgid = 100;
	evs[n].sw.sw_flags = TT_SW_NEXT_TRACED;
	evs[n++].sw.syscall_nr = -1;
	evs[n++] = comm_ev(2 * US, 101, fake_line);
	evs[n++] = comm_ev(3 * US, 102, bad_bytes);
	evs[n] = mk(TT_EV_CONN_OPEN, 4 * US, 101);
	evs[n].conn.sk = 0x10;
	evs[n].conn.rport = 1000;
	evs[n].conn.lport = 8000;
	evs[n].conn.family = AF_INET;
	inet_pton(AF_INET, "10.0.0.1", evs[n++].conn.raddr);
	evs[n] = mk(TT_EV_DATA_READY, 1 * MS, 0);
	evs[n].sock.sk = 0x10;
	evs[n++].sock.len = 100;
	evs[n] = mk(TT_EV_RECV, 1 * MS + 10 * US, 101);
	evs[n].sock.sk = 0x10;
	evs[n++].sock.len = 100;
	evs[n] = mk(TT_EV_XMIT, 2 * MS + 5 * US, 102);
	evs[n].xmit.sk = 0x10;
	evs[n].xmit.seq = 1000;
	evs[n++].xmit.end_seq = 1050;
	evs[n] = mk(TT_EV_SEND, 2 * MS + 10 * US, 102);
	evs[n].send.sk = 0x10;
	evs[n].send.len = 50;
	evs[n].send.ts_enter = 2 * MS;
	evs[n].send.seq = 1000;
	evs[n].send.cls = TT_SEND_TOKEN;
	evs[n].send.tokens = 1;
	evs[n++].send.flags = TT_SEND_F_SSE;
	evs[n] = mk(TT_EV_SEND, 3 * MS, 102);
	evs[n].send.sk = 0x10;
	evs[n].send.ts_enter = 3 * MS - 10 * US;
	evs[n].send.seq = 1050;
	evs[n].send.cls = TT_SEND_DONE;
	evs[n++].send.flags = TT_SEND_F_SSE;
	for (i = 0; i < n; i++)
		ASSERT_TRUE(tt_analyzer_add(a, &evs[i]) == 0,
			    "tt_analyzer_add(a, &evs[i]) == 0");
	tt_analyzer_finish(a);
	return a;
}

/* report --json: the writer's name, host, kernel and options. */
static void test_report_json_any_bytes(void)
{
	struct tt_analyzer *a = named_analysis();
	struct tt_report_opts o = { .json = true };
	struct tt_file_meta meta = { 0 };
	const struct jc_val *reqs;
	struct jc_val v;
	struct mem m;

	snprintf(meta.hostname, sizeof(meta.hostname), "host\xff\x1b");
	snprintf(meta.kernel, sizeof(meta.kernel), "6.18 \"x\\y\"");
	snprintf(meta.options, sizeof(meta.options), "record -c '%s'",
		 bad_bytes);
	mem_open(&m);
	ASSERT_TRUE(tt_report_json(m.f, a, &meta, &o) == 0,
		    "tt_report_json(m.f, a, &meta, &o) == 0");
	mem_close(&m);
	if (strict_json(&m, &v)) {
		reqs = jc_get(&v, "requests");
		ASSERT_TRUE(reqs && reqs->type == JC_ARR && reqs->n == 1,
			    "reqs && reqs->type == JC_ARR && reqs-...");
		/* quote, backslash, \u0001 kept; 0xff and the cut é2 82 are
		 * U+FFFD each, é stays */
		if (reqs && reqs->n == 1)
			ASSERT_TRUE(
				jc_str(&reqs->items[0], "writer_comm") &&
					!strcmp(jc_str(&reqs->items[0],
						       "writer_comm"),
						"a\"\\\x01\xef\xbf\xbd\xc3\xa9"
						"\xef\xbf\xbd\xef\xbf\xbd"),
				"jc_str(&reqs->items[0], \"writer_comm\"...");
		jc_free(&v);
	} else {
		ASSERT_TRUE(!"report --json is strict JSON",
			    "!\"report --json is strict JSON\"");
	}
	free(m.text);
	tt_analyzer_free(a);
}

/* report -R and the text summary: names and host escaped. */
static void test_report_text_escaped(void)
{
	struct tt_analyzer *a = named_analysis();
	struct tt_report_opts o = { .requests = true };
	struct tt_file_meta meta = { 0 };
	struct mem m;

	snprintf(meta.hostname, sizeof(meta.hostname), "%s", fake_line);
	mem_open(&m);
	ASSERT_TRUE(tt_report_request(m.f, a, 1) == 0,
		    "tt_report_request(m.f, a, 1) == 0");
	ASSERT_TRUE(tt_report_text(m.f, a, &meta, &o) == 0,
		    "tt_report_text(m.f, a, &meta, &o) == 0");
	mem_close(&m);
	ASSERT_TRUE(no_raw_controls(&m), "no_raw_controls(&m)");
	ASSERT_TRUE(no_fake_line(&m), "no_fake_line(&m)");
	/* the name is shown, as escapes */
	ASSERT_TRUE(strstr(m.text, "\\x1b[2J\\x1b[H\\nTTFT 1.0ms ok") != NULL,
		    "strstr(m.text, \"\\\\x1b[2J\\\\x1b[H\\\\nTTF...");
	free(m.text);
	tt_analyzer_free(a);
}

/* --events: COMM and FORK records. */
static void test_events_escaped(void)
{
	struct tt_event ev = comm_ev(1 * MS, 101, fake_line);
	struct mem m;

	mem_open(&m);
	ASSERT_TRUE(tt_dump_event(m.f, &ev, 0) == 0,
		    "tt_dump_event(m.f, &ev, 0) == 0");
	ev = mk(TT_EV_FORK, 2 * MS, 101);
	ev.fork.child_tgid = 100;
	ev.fork.child_tid = 103;
	memcpy(ev.fork.comm, fake_line, TT_COMM_LEN - 1);
	ASSERT_TRUE(tt_dump_event(m.f, &ev, 0) == 0,
		    "tt_dump_event(m.f, &ev, 0) == 0");
	mem_close(&m);
	ASSERT_TRUE(no_raw_controls(&m), "no_raw_controls(&m)");
	ASSERT_TRUE(no_fake_line(&m), "no_fake_line(&m)");
	free(m.text);
}

/* report -P: thread names of any bytes. */
static void test_perfetto_any_bytes(void)
{
	struct tt_analyzer *a = named_analysis();
	struct jc_val v;
	struct mem m;

	mem_open(&m);
	ASSERT_TRUE(tt_perfetto_write(m.f, tt_analyzer_critpath(a),
				      tt_analyzer_request(a, 0),
				      tt_analyzer_cp_result(a, 0),
				      tt_analyzer_nrequests(a)) == 0,
		    "tt_perfetto_write(m.f, tt_analyzer_cr...");
	mem_close(&m);
	ASSERT_TRUE(strict_json(&m, &v), "strict_json(&m, &v)");
	jc_free(&v);
	free(m.text);
	tt_analyzer_free(a);
}

/* GPU tables: an ioctl whose type byte is '"' or '\' on a -G device, and
 * a device path with a control byte. */
static void test_gpu_json_any_ioctl(void)
{
	struct tt_dev_info dev = { .rdev = 7 << 20, .kind = TT_GPU_USER };
	static const unsigned char types[] = { '"', '\\', 0x1b };
	struct tt_gpustats *g;
	struct tt_event ev;
	struct jc_val v;
	struct mem m;

	snprintf(dev.path, sizeof(dev.path), "/dev/x\"\\\x1b\xff");
	g = tt_gpustats_new(&dev, 1);
	ASSERT_TRUE(g != NULL, "g != NULL");
	if (!g)
		return;
	for (size_t i = 0; i < sizeof(types); i++) {
		ev = mk(TT_EV_IOCTL, (i + 1) * MS, 101);
		ev.ioc.ts_enter = ev.h.ts - 10 * US;
		ev.ioc.cmd = 3u << 30 | 8u << 16 | types[i] << 8 | 0x7b;
		ev.ioc.rdev = dev.rdev;
		ASSERT_TRUE(tt_gpustats_add(g, &ev) == 0,
			    "tt_gpustats_add(g, &ev) == 0");
	}
	mem_open(&m);
	ASSERT_TRUE(tt_gpustats_json(m.f, g) == 0,
		    "tt_gpustats_json(m.f, g) == 0");
	mem_close(&m);
	ASSERT_TRUE(strict_json(&m, &v), "strict_json(&m, &v)");
	jc_free(&v);
	free(m.text);
	mem_open(&m);
	ASSERT_TRUE(tt_gpustats_text(m.f, g) == 0,
		    "tt_gpustats_text(m.f, g) == 0");
	mem_close(&m);
	ASSERT_TRUE(no_raw_controls(&m), "no_raw_controls(&m)");
	free(m.text);
	tt_gpustats_free(g);
}

/* A command line that fills the recording's options cuts at a character
 * boundary: read back, it is UTF-8 and the report's JSON holds it. */
static void test_options_cut_whole(void)
{
	char path[] = "/tmp/tt_trust_XXXXXX", err[128];
	struct tt_file_meta meta = { 0 };
	const struct tt_file_meta *got;
	struct tt_analyzer *a = tt_analyzer_new();
	struct tt_report_opts o = { .json = true };
	struct tt_writer *w;
	struct tt_reader *r;
	struct jc_val v;
	struct mem m;
	size_t i, n;
	int fd;

	/* 509 ASCII bytes, then "€" (3 bytes) across the 511-byte limit */
	for (i = 0; i < 509; i++)
		meta.options[i] = 'a';
	memcpy(meta.options + 509, "\xe2\x82", 2);
	fd = mkstemp(path);
	ASSERT_TRUE(fd >= 0, "fd >= 0");
	close(fd);
	unlink(path);
	w = tt_writer_open(path, &meta);
	ASSERT_TRUE(w != NULL, "w != NULL");
	if (w)
		ASSERT_TRUE(tt_writer_close(w, NULL) == 0,
			    "tt_writer_close(w, NULL) == 0");
	r = tt_reader_open(path, err, sizeof(err));
	ASSERT_TRUE(r != NULL, "r != NULL");
	if (r) {
		got = tt_reader_meta(r);
		n = strnlen(got->options, sizeof(got->options));
		ASSERT_EQ(n, 509, "n");
		tt_analyzer_finish(a);
		mem_open(&m);
		ASSERT_TRUE(tt_report_json(m.f, a, got, &o) == 0,
			    "tt_report_json(m.f, a, got, &o) == 0");
		mem_close(&m);
		ASSERT_TRUE(strict_json(&m, &v), "strict_json(&m, &v)");
		jc_free(&v);
		free(m.text);
		tt_reader_close(r);
	}
	tt_analyzer_free(a);
	unlink(path);
}

int main(void)
{
	TT_RUN(test_report_json_any_bytes);
	TT_RUN(test_report_text_escaped);
	TT_RUN(test_events_escaped);
	TT_RUN(test_perfetto_any_bytes);
	TT_RUN(test_gpu_json_any_ioctl);
	TT_RUN(test_options_cut_whole);
	TT_EXIT();
}
