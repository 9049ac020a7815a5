/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The .ttft recording format: round trips, block damage, truncation,
 * errors, file mode, size per event and reader speed. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tt_test.h"
#include "ttfile.h"
#include "ttfile_codec.h"

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
	static char path[4][128];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static const unsigned int stored_types[] = {
	TT_EV_FORK,	  TT_EV_EXIT,	    TT_EV_COMM,
	TT_EV_CONN_OPEN,  TT_EV_CONN_CLOSE, TT_EV_DATA_READY,
	TT_EV_RECV,	  TT_EV_SEND,	    TT_EV_XMIT,
	TT_EV_LOST,	  TT_EV_SWITCH,	    TT_EV_WAKING,
	TT_EV_WAKEUP_NEW, TT_EV_BLOCK,	    TT_EV_FAULT,
	TT_EV_IOCTL,	  TT_EV_GPU_CALL,   TT_EV_RTLOCK,
	TT_EV_MARK,	  TT_EV_FILEIO,	    TT_EV_ENERGY,
	TT_EV_GO,	  TT_EV_GO_CHAN,    TT_EV_DATA_WAKE,
	TT_EV_DATA_READ,  TT_EV_MSG_SEND,   TT_EV_DATA_READY_DEV,
	TT_EV_STEAL,	  TT_EV_PIPE_IO,    TT_EV_POLL,
};
#define NSTORED (sizeof(stored_types) / sizeof(stored_types[0]))

/* An event of type with its payload bytes from fill (the rest zero, as the
 * reader returns it). */
static void make_event(struct tt_event *ev, unsigned int type, uint64_t ts,
		       uint64_t *seed, int fill)
{
	int size = tt_event_payload_size(type);
	uint8_t *payload = (uint8_t *)&ev->fork;
	int i;

	memset(ev, 0, sizeof(*ev));
	ev->h.type = type;
	ev->h.ts = ts;
	ev->h.tgid = tt_rnd(seed);
	ev->h.tid = tt_rnd(seed);
	ev->h.cpu = tt_rnd(seed);
	ev->h.flags = tt_rnd(seed);
	for (i = 0; i < size; i++)
		payload[i] = fill >= 0 ? fill : (uint8_t)tt_rnd(seed);
}

/* Writes n events; returns the file size or 0. */
static uint64_t write_events(const char *path, const struct tt_file_meta *m,
			     const struct tt_event *evs, size_t n,
			     size_t flush_every)
{
	struct tt_write_stats st;
	struct tt_writer *w = tt_writer_open(path, m);
	size_t i;

	ASSERT_OK_PTR(w, "w");
	if (!w)
		return 0;
	for (i = 0; i < n; i++) {
		ASSERT_OK(tt_writer_add(w, &evs[i]), "tt_writer_add");
		if (flush_every && (i + 1) % flush_every == 0)
			ASSERT_OK(tt_writer_flush(w), "tt_writer_flush");
	}
	ASSERT_OK(tt_writer_close(w, &st), "tt_writer_close");
	ASSERT_EQ(st.events, n, "st.events");
	return st.bytes;
}

/* Reads a whole file; returns the number of events matching want[0..],
 * stopping at the first mismatch. */
static size_t read_events(const char *path, const struct tt_event *want,
			  size_t nwant, struct tt_read_stats *st)
{
	struct tt_event ev;
	struct tt_reader *r;
	char err[256];
	size_t n = 0;
	bool same = true;

	r = tt_reader_open(path, err, sizeof(err));
	ASSERT_OK_PTR(r, "r");
	if (!r) {
		fprintf(stderr, "  %s\n", err);
		return 0;
	}
	while (tt_reader_next(r, &ev) == 1) {
		if (same && n < nwant && !memcmp(&ev, &want[n], sizeof(ev)))
			n++;
		else
			same = false;
	}
	ASSERT_OK(tt_reader_next(r, &ev), "tt_reader_next");
	tt_reader_stats(r, st);
	tt_reader_close(r);
	return n;
}

static void test_type_table(void)
{
	char err[128] = "";
	unsigned int i;

	ASSERT_OK(ttfile_codec_self_check(err, sizeof(err)),
		  "ttfile_codec_self_check");
	if (err[0])
		fprintf(stderr, "  %s\n", err);
	ASSERT_EQ(tt_event_payload_size(TT_EV_FORK), sizeof(struct tt_fork),
		  "tt_event_payload_size");
	ASSERT_OK(tt_event_payload_size(TT_EV_EXIT), "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_COMM), sizeof(struct tt_comm),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_CONN_OPEN),
		  sizeof(struct tt_conn), "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_CONN_CLOSE),
		  sizeof(struct tt_sock), "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_DATA_READY),
		  sizeof(struct tt_sock), "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_RECV), sizeof(struct tt_sock),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_SEND), sizeof(struct tt_send),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_XMIT), sizeof(struct tt_xmit),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_LOST), sizeof(struct tt_lost),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_SWITCH), sizeof(struct tt_switch),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_WAKING), sizeof(struct tt_wake),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_WAKEUP_NEW),
		  sizeof(struct tt_wake), "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_BLOCK), sizeof(struct tt_block),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_FAULT), sizeof(struct tt_fault),
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_MARK), sizeof(struct tt_mark),
		  "tt_event_payload_size");
	ASSERT_STREQ(tt_event_type_name(TT_EV_MARK), "mark",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_mark_kind_name(TT_MARK_DISPATCH), "dispatch",
		     "tt_mark_kind_name");
	ASSERT_EQ(tt_event_payload_size(TT_EV_FILEIO), sizeof(struct tt_fileio),
		  "tt_event_payload_size");
	ASSERT_STREQ(tt_event_type_name(TT_EV_FILEIO), "fileio",
		     "tt_event_type_name");
	ASSERT_EQ(tt_event_payload_size(TT_EV_NONE), -1,
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_SEND_RAW), -1,
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(TT_EV_MAX), -1,
		  "tt_event_payload_size");
	ASSERT_EQ(tt_event_payload_size(0xffff), -1, "tt_event_payload_size");
	ASSERT_STREQ(tt_event_type_name(TT_EV_FORK), "fork",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_event_type_name(TT_EV_DATA_READY), "data_ready",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_event_type_name(TT_EV_CONN_OPEN), "conn_open",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_event_type_name(TT_EV_SEND_RAW), "send_raw",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_event_type_name(TT_EV_MAX), "unknown",
		     "tt_event_type_name");
	ASSERT_STREQ(tt_event_type_name(12345), "unknown",
		     "tt_event_type_name");
	for (i = 1; i < TT_EV_MAX; i++)
		ASSERT_TRUE(strcmp(tt_event_type_name(i), "unknown"), "strcmp");
}

static void fill_meta(struct tt_file_meta *m, struct tt_proc_info *procs,
		      struct tt_dev_info *devs)
{
	memset(m, 0, sizeof(*m));
	memset(m->hostname, 'h', sizeof(m->hostname) - 1);
	snprintf(m->kernel, sizeof(m->kernel), "6.18.0 #1 SMP PREEMPT_DYNAMIC");
	m->mono_ns = UINT64_MAX;
	m->real_ns = 1700000000123456789ull;
	snprintf(m->options, sizeof(m->options), "record -p 42 -o x.ttft");
	/* the recorder's version (2.1), at its longest */
	memset(m->recorder, 'v', sizeof(m->recorder) - 1);
	memset(&procs[0], 0, sizeof(procs[0]) * 2);
	procs[0].tgid = 42;
	procs[0].tid = 43;
	memset(procs[0].comm, 'c', sizeof(procs[0].comm) - 1);
	procs[1].tgid = UINT32_MAX;
	procs[1].tid = 0;
	memset(&devs[0], 0, sizeof(devs[0]));
	snprintf(devs[0].path, sizeof(devs[0].path), "/dev/nvidia0");
	devs[0].rdev = 195 << 8;
	devs[0].kind = 7;
	m->procs = procs;
	m->nprocs = 2;
	m->devs = devs;
	m->ndevs = 1;
}

static void test_round_trip_extremes(void)
{
	const char *path = tmp_path("extremes.ttft");
	static const int fills[] = { 0, 0xff, 0x80, 0x7f, -1, -1, -1 };
	struct tt_event evs[NSTORED * 7 + 4];
	struct tt_proc_info procs[2];
	struct tt_dev_info devs[1];
	const struct tt_file_meta *rm;
	struct tt_file_meta m;
	struct tt_read_stats st;
	struct tt_reader *r;
	uint64_t seed = 1;
	size_t n = 0, i, j;
	char err[256];

	fill_meta(&m, procs, devs);
	for (i = 0; i < NSTORED; i++) {
		for (j = 0; j < 7; j++) {
			uint64_t ts = j == 0 ? 0 :
				      j == 1 ? UINT64_MAX :
					       tt_rnd(&seed);

			make_event(&evs[n], stored_types[i], ts, &seed,
				   fills[j]);
			if (j == 0)
				memset(&evs[n].h, 0, sizeof(evs[n].h));
			if (j == 1) {
				memset(&evs[n].h, 0xff, sizeof(evs[n].h));
			}
			evs[n].h.type = stored_types[i];
			n++;
		}
	}
	/* negative lengths, the most negative s64, full comm strings */
	make_event(&evs[n], TT_EV_RECV, 5, &seed, 0);
	evs[n++].sock.len = INT64_MIN;
	make_event(&evs[n], TT_EV_SEND, 4, &seed, 0);
	evs[n].send.len = -11;
	evs[n++].send.ts_enter = 9;
	make_event(&evs[n], TT_EV_COMM, 3, &seed, 0);
	memcpy(evs[n++].comm.comm, "abcdefghijklmnop", TT_COMM_LEN);
	make_event(&evs[n], TT_EV_FORK, 2, &seed, 0);
	memcpy(evs[n++].fork.comm, "python3\0\0\0\0\0\0\0\0z", TT_COMM_LEN);

	ASSERT_GT(write_events(path, &m, evs, n, 0), 0, "write_events");
	ASSERT_EQ(read_events(path, evs, n, &st), n, "read_events");
	ASSERT_EQ(st.events, n, "st.events");
	ASSERT_EQ(st.blocks_ok, 1, "st.blocks_ok");
	ASSERT_EQ(st.blocks_bad, 0, "st.blocks_bad");
	ASSERT_FALSE(st.truncated, "st.truncated");

	r = tt_reader_open(path, err, sizeof(err));
	ASSERT_OK_PTR(r, "r");
	if (!r)
		return;
	rm = tt_reader_meta(r);
	ASSERT_STREQ(rm->hostname, m.hostname, "rm.hostname");
	ASSERT_STREQ(rm->kernel, m.kernel, "rm.kernel");
	ASSERT_STREQ(rm->options, m.options, "rm.options");
	ASSERT_STREQ(rm->recorder, m.recorder, "rm.recorder");
	ASSERT_EQ(rm->mono_ns, m.mono_ns, "rm.mono_ns");
	ASSERT_EQ(rm->real_ns, m.real_ns, "rm.real_ns");
	ASSERT_EQ(rm->nprocs, 2, "rm.nprocs");
	ASSERT_EQ(rm->ndevs, 1, "rm.ndevs");
	if (rm->nprocs == 2 && rm->ndevs == 1) {
		ASSERT_FALSE(memcmp(rm->procs, procs, sizeof(procs)), "memcmp");
		ASSERT_FALSE(memcmp(rm->devs, devs, sizeof(devs)), "memcmp");
	}
	tt_reader_close(r);
}

static void test_rejects_unstored_types(void)
{
	const char *path = tmp_path("unstored.ttft");
	struct tt_write_stats st;
	struct tt_writer *w = tt_writer_open(path, NULL);
	struct tt_event ev;
	uint64_t seed = 2;

	ASSERT_OK_PTR(w, "w");
	if (!w)
		return;
	make_event(&ev, TT_EV_SEND, 1, &seed, 0);
	ev.h.type = TT_EV_SEND_RAW;
	ASSERT_EQ(tt_writer_add(w, &ev), -EINVAL, "tt_writer_add");
	ev.h.type = TT_EV_NONE;
	ASSERT_EQ(tt_writer_add(w, &ev), -EINVAL, "tt_writer_add");
	ev.h.type = TT_EV_MAX;
	ASSERT_EQ(tt_writer_add(w, &ev), -EINVAL, "tt_writer_add");
	ev.h.type = 0x1ff;
	ASSERT_EQ(tt_writer_add(w, &ev), -EINVAL, "tt_writer_add");
	ASSERT_EQ(tt_writer_add(w, NULL), -EINVAL, "tt_writer_add");
	ASSERT_OK(tt_writer_close(w, &st), "tt_writer_close");
	ASSERT_EQ(st.events, 0, "st.events");
	ASSERT_EQ(st.blocks, 0, "st.blocks");
}

/* Random events of every stored type, timestamps mostly rising. */
static struct tt_event *random_events(size_t n, uint64_t seed)
{
	struct tt_event *evs = calloc(n, sizeof(*evs));
	uint64_t ts = 1000000000;
	size_t i;

	for (i = 0; evs && i < n; i++) {
		ts += tt_rnd(&seed) % 5000;
		make_event(&evs[i], stored_types[tt_rnd(&seed) % NSTORED],
			   ts - tt_rnd(&seed) % 300, &seed, -1);
		evs[i].h.tgid %= 8;
		evs[i].h.tid %= 64;
		evs[i].h.cpu %= 16;
		evs[i].h.flags %= 4;
	}
	return evs;
}

static void test_many_blocks(void)
{
	const char *path = tmp_path("many.ttft");
	size_t n = 200000;
	struct tt_event *evs = random_events(n, 3);
	struct tt_write_stats wst;
	struct tt_read_stats st;
	struct tt_writer *w;
	size_t i;

	ASSERT_OK_PTR(evs, "evs");
	if (!evs)
		return;
	w = tt_writer_open(path, NULL);
	ASSERT_OK_PTR(w, "w");
	if (!w)
		goto cleanup;
	for (i = 0; i < n; i++)
		ASSERT_OK(tt_writer_add(w, &evs[i]), "tt_writer_add");
	ASSERT_OK(tt_writer_close(w, &wst), "tt_writer_close");
	ASSERT_EQ(wst.events, n, "wst.events");
	ASSERT_GT(wst.blocks, 20, "wst.blocks");
	ASSERT_EQ(read_events(path, evs, n, &st), n, "read_events");
	ASSERT_EQ(st.events, n, "st.events");
	ASSERT_EQ(st.blocks_ok, wst.blocks, "st.blocks_ok");
	ASSERT_EQ(st.blocks_bad, 0, "st.blocks_bad");
	ASSERT_FALSE(st.truncated, "st.truncated");

cleanup:
	free(evs);
}

/* The writer's two compressors (libdeflate where the system has it, zlib's
 * deflate with TTFTRACE_ZLIB=1) write blocks both decompressors (the
 * same choice) inflate to the same events; libdeflate's are no bigger. */
static void test_compressors(void)
{
	void *lib = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
	size_t n = 300000, i, j;
	struct tt_event *evs = random_events(n, 7);
	struct tt_write_stats wst[2];
	struct tt_read_stats st;
	struct tt_writer *w;

	ASSERT_OK_PTR(evs, "evs");
	if (!evs)
		goto cleanup;
	for (i = 0; i < 2; i++) {
		if (i)
			setenv("TTFTRACE_ZLIB", "1", 1);
		w = tt_writer_open(tmp_path(i ? "zlib.ttft" : "ldef.ttft"),
				   NULL);
		unsetenv("TTFTRACE_ZLIB");
		ASSERT_OK_PTR(w, "w");
		if (!w)
			goto cleanup;
		for (size_t k = 0; k < n; k++)
			ASSERT_OK(tt_writer_add(w, &evs[k]), "tt_writer_add");
		ASSERT_OK(tt_writer_close(w, &wst[i]), "tt_writer_close");
		/* each file read with either decompressor */
		for (j = 0; j < 2; j++) {
			if (j)
				setenv("TTFTRACE_ZLIB", "1", 1);
			ASSERT_EQ(read_events(tmp_path(i ? "zlib.ttft" :
							   "ldef.ttft"),
					      evs, n, &st),
				  n, "read_events");
			unsetenv("TTFTRACE_ZLIB");
			ASSERT_EQ(st.blocks_bad, 0, "st.blocks_bad");
			ASSERT_EQ(st.blocks_ok, wst[i].blocks, "st.blocks_ok");
			ASSERT_EQ(st.libdeflate, !j && lib, "inflated by");
		}
	}
	ASSERT_EQ(wst[0].libdeflate, lib != NULL, "libdeflate used");
	ASSERT_FALSE(wst[1].libdeflate, "TTFTRACE_ZLIB=1: zlib");
	ASSERT_EQ(wst[0].blocks, wst[1].blocks, "blocks");
	if (lib)
		ASSERT_LE(wst[0].bytes, wst[1].bytes, "libdeflate's bytes");
	printf("  ttfile: %s %llu bytes, zlib %llu\n",
	       lib ? "libdeflate" : "(no libdeflate) zlib",
	       (unsigned long long)wst[0].bytes,
	       (unsigned long long)wst[1].bytes);

cleanup:
	if (lib)
		dlclose(lib);
	free(evs);
}

/* A small file of nblocks blocks of per events each (cut by flush);
 * bounds[k] is the file size after block k, bounds[0] the header's end. */
static int write_small_file(const char *path, struct tt_event *evs,
			    size_t nblocks, size_t per, off_t *bounds)
{
	struct tt_writer *w = tt_writer_open(path, NULL);
	struct stat sb;
	size_t i;

	ASSERT_OK_PTR(w, "w");
	if (!w)
		return -1;
	ASSERT_OK(stat(path, &sb), "stat");
	bounds[0] = sb.st_size;
	for (i = 0; i < nblocks * per; i++) {
		ASSERT_OK(tt_writer_add(w, &evs[i]), "tt_writer_add");
		if ((i + 1) % per == 0) {
			ASSERT_OK(tt_writer_flush(w), "tt_writer_flush");
			ASSERT_OK(stat(path, &sb), "stat");
			bounds[(i + 1) / per] = sb.st_size;
		}
	}
	ASSERT_OK(tt_writer_close(w, NULL), "tt_writer_close");
	return 0;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY);
	int ret = -1;

	*buf = NULL;
	if (fd < 0 || fstat(fd, &sb))
		goto cleanup;
	*len = sb.st_size;
	*buf = malloc(*len + 1);
	if (*buf && read(fd, *buf, *len) == (ssize_t)*len)
		ret = 0;

cleanup:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int put_file(const char *path, const uint8_t *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int ret = -1;

	if (fd < 0)
		return -1;
	if (write(fd, buf, len) == (ssize_t)len)
		ret = 0;
	close(fd);
	return ret;
}

static void test_truncated_every_offset(void)
{
	const char *path = tmp_path("small.ttft");
	const char *cut = tmp_path("cut.ttft");
	enum { NBLOCKS = 5, PER = 7 };
	struct tt_event *evs = random_events(NBLOCKS * PER, 4);
	off_t bounds[NBLOCKS + 1];
	struct tt_read_stats st;
	struct tt_reader *r;
	size_t len, off, k, whole;
	uint8_t *buf = NULL;
	char err[256];
	int bad_offsets = 0;

	if (!evs || write_small_file(path, evs, NBLOCKS, PER, bounds) ||
	    read_file(path, &buf, &len)) {
		ASSERT_TRUE(0, "0");
		goto cleanup;
	}
	/* the blocks, then the 24-byte trailer of a closed recording */
	ASSERT_EQ(len, bounds[NBLOCKS] + 24, "len");
	for (off = 0; off <= len; off++) {
		bool ok = true;

		if (put_file(cut, buf, off)) {
			ASSERT_TRUE(0, "0");
			break;
		}
		err[0] = '\0';
		r = tt_reader_open(cut, err, sizeof(err));
		if (off < (size_t)bounds[0]) {
			/* inside the header: a clear error, no reader */
			ok = !r && err[0] && !strchr(err, '\n') &&
			     strstr(err, off ? "truncated header" : "empty");
			if (r)
				tt_reader_close(r);
		} else if (!r) {
			ok = false;
		} else {
			for (whole = 0;
			     whole < NBLOCKS && bounds[whole + 1] <= (off_t)off;
			     whole++)
				;
			tt_reader_close(r);
			k = read_events(cut, evs, NBLOCKS * PER, &st);
			ok = k == whole * PER && st.events == k &&
			     st.blocks_ok == whole && st.blocks_bad == 0 &&
			     st.trailer_expected &&
			     st.closed == (off == len) &&
			     st.truncated == (off != (size_t)bounds[whole] &&
					      off != len);
		}
		if (!ok && bad_offsets++ < 5)
			fprintf(stderr, "  cut at %zu of %zu: wrong (%s)\n",
				off, len, err);
	}
	ASSERT_EQ(bad_offsets, 0, "bad_offsets");

cleanup:
	free(buf);
	free(evs);
}

/* Flips one byte at offset of a copy and reads it: every block but the
 * one hit must come back, and that block counted bad. */
static void check_corruption(const uint8_t *buf, size_t len, size_t offset,
			     const struct tt_event *evs, size_t nblocks,
			     size_t per, size_t hit_block)
{
	const char *path = tmp_path("corrupt.ttft");
	struct tt_read_stats st;
	struct tt_event ev;
	struct tt_reader *r;
	uint8_t *copy = malloc(len);
	size_t n = 0, want = 0;
	char err[256];

	if (!copy) {
		ASSERT_TRUE(0, "0");
		return;
	}
	memcpy(copy, buf, len);
	copy[offset] ^= 0x5a;
	ASSERT_OK(put_file(path, copy, len), "put_file");
	free(copy);
	r = tt_reader_open(path, err, sizeof(err));
	ASSERT_OK_PTR(r, "r");
	if (!r)
		return;
	while (tt_reader_next(r, &ev) == 1) {
		if (want / per == hit_block)
			want += per; /* the bad block's events are skipped */
		if (want < nblocks * per &&
		    !memcmp(&ev, &evs[want], sizeof(ev)))
			n++;
		want++;
	}
	tt_reader_stats(r, &st);
	tt_reader_close(r);
	ASSERT_EQ(n, (nblocks - 1) * per, "n");
	ASSERT_EQ(st.events, (nblocks - 1) * per, "st.events");
	ASSERT_EQ(st.blocks_bad, 1, "st.blocks_bad");
	ASSERT_EQ(st.blocks_ok, nblocks - 1, "st.blocks_ok");
	ASSERT_FALSE(st.truncated, "st.truncated");
	if (st.blocks_bad != 1 || n != (nblocks - 1) * per)
		fprintf(stderr, "  byte %zu of block %zu\n", offset, hit_block);
}

static void test_corrupt_block(void)
{
	const char *path = tmp_path("blocks.ttft");
	enum { NBLOCKS = 6, PER = 50 };
	struct tt_event *evs = random_events(NBLOCKS * PER, 5);
	off_t bounds[NBLOCKS + 1];
	uint8_t *buf = NULL;
	size_t len, k;

	if (!evs || write_small_file(path, evs, NBLOCKS, PER, bounds) ||
	    read_file(path, &buf, &len)) {
		ASSERT_TRUE(0, "0");
		goto cleanup;
	}
	for (k = 0; k < NBLOCKS; k++) {
		size_t start = bounds[k], size = bounds[k + 1] - bounds[k];

		/* compressed data, its first and last byte */
		check_corruption(buf, len, start + 24 + (size - 24) / 2, evs,
				 NBLOCKS, PER, k);
		check_corruption(buf, len, start + 24, evs, NBLOCKS, PER, k);
		check_corruption(buf, len, start + size - 1, evs, NBLOCKS, PER,
				 k);
		/* frame: marker, compressed length, event count, CRCs */
		check_corruption(buf, len, start, evs, NBLOCKS, PER, k);
		check_corruption(buf, len, start + 7, evs, NBLOCKS, PER, k);
		check_corruption(buf, len, start + 12, evs, NBLOCKS, PER, k);
		check_corruption(buf, len, start + 16, evs, NBLOCKS, PER, k);
		check_corruption(buf, len, start + 23, evs, NBLOCKS, PER, k);
	}

cleanup:
	free(buf);
	free(evs);
}

static void expect_open_error(const char *path, const char *what)
{
	char err[256] = "";
	struct tt_reader *r = tt_reader_open(path, err, sizeof(err));

	ASSERT_NULL(r, "r");
	if (r)
		tt_reader_close(r);
	ASSERT_PTR_EQ(strstr(err, path), err, "strstr");
	ASSERT_OK_PTR(strstr(err, what), "strstr");
	ASSERT_NULL(strchr(err, '\n'), "strchr");
	if (!strstr(err, what))
		fprintf(stderr, "  got \"%s\", want \"%s\"\n", err, what);
}

static void test_bad_files(void)
{
	const char *text = tmp_path("notes.txt");
	const char *empty = tmp_path("empty.ttft");
	const char *good = tmp_path("good.ttft");
	const char *bad = tmp_path("bad.ttft");
	static const char hello[] = "hello, this is not a recording\n";
	struct tt_event ev;
	uint64_t seed = 6;
	uint8_t *buf = NULL;
	size_t len;

	ASSERT_OK(put_file(text, (const uint8_t *)hello, sizeof(hello)),
		  "put_file");
	expect_open_error(text, "not a ttftrace recording (bad magic)");
	ASSERT_OK(put_file(empty, NULL, 0), "put_file");
	expect_open_error(empty, "empty file");
	expect_open_error(tmp_path("missing.ttft"), "No such file");
	expect_open_error(tmpdir, "Is a directory");

	make_event(&ev, TT_EV_EXIT, 1, &seed, 0);
	ASSERT_GT(write_events(good, NULL, &ev, 1, 0), 0, "write_events");
	if (read_file(good, &buf, &len)) {
		ASSERT_TRUE(0, "0");
		return;
	}
	buf[8] = 3; /* version */
	ASSERT_OK(put_file(bad, buf, len), "put_file");
	expect_open_error(bad, "version 3 is newer");
	buf[8] = 2;
	buf[20] ^= 1; /* inside the header body */
	ASSERT_OK(put_file(bad, buf, len), "put_file");
	expect_open_error(bad, "corrupt header (checksum mismatch)");
	buf[20] ^= 1;
	buf[12] = 0xff; /* body length */
	buf[13] = 0xff;
	buf[14] = 0xff;
	buf[15] = 0xff;
	ASSERT_OK(put_file(bad, buf, len), "put_file");
	expect_open_error(bad, "corrupt header");
	ASSERT_OK(put_file(bad, buf, 12), "put_file");
	expect_open_error(bad, "truncated header");
	free(buf);
}

/* A link planted at the path is never written through (issue 13). */
static void test_no_write_through_link(void)
{
	const char *victim = tmp_path("victim");
	const char *path = tmp_path("link.ttft");
	struct stat before, after;
	struct tt_writer *w;
	FILE *f = fopen(victim, "w");

	if (!ASSERT_OK_PTR(f, "victim"))
		return;
	fputs("precious\n", f);
	fclose(f);
	ASSERT_OK(chmod(victim, 0644), "chmod victim");
	ASSERT_OK(stat(victim, &before), "stat victim");
	ASSERT_OK(symlink(victim, path), "symlink");
	errno = 0;
	w = tt_writer_open(path, NULL);
	ASSERT_NULL(w, "writer through a link");
	ASSERT_EQ(errno, ELOOP, "errno");
	if (w)
		tt_writer_close(w, NULL);
	ASSERT_OK(stat(victim, &after), "stat victim after");
	ASSERT_EQ(after.st_size, before.st_size, "victim size");
	ASSERT_EQ(after.st_mode & 07777, 0644, "victim mode");
	unlink(path);
	unlink(victim);
}

/* Writes an empty recording at path and checks it is private (0600). */
static void check_private_write(const char *path, const char *name)
{
	struct tt_writer *w;
	struct stat sb;

	w = tt_writer_open(path, NULL);
	ASSERT_OK_PTR(w, name);
	if (w)
		ASSERT_OK(tt_writer_close(w, NULL), name);
	ASSERT_OK(stat(path, &sb), name);
	ASSERT_EQ(sb.st_mode & 07777, 0600, name);
}

static void test_file_mode(void)
{
	const char *path = tmp_path("mode.ttft");
	mode_t old = umask(0);
	int fd;

	check_private_write(path, "new file mode");
	/* an existing file of another mode is made private too */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	ASSERT_GE(fd, 0, "fd");
	if (fd >= 0)
		close(fd);
	ASSERT_OK(chmod(path, 0644), "chmod");
	check_private_write(path, "existing file mode");
	umask(old);
}

/* A writer that hits the file size limit returns -EFBIG and drops that
 * block only: once the limit is lifted it goes on, and the file reads back
 * with no bad block. */
static void test_write_error(void)
{
	const char *path = tmp_path("full.ttft");
	size_t n = 100000;
	struct tt_event *evs = random_events(n, 7);
	struct tt_read_stats st;
	int status = -1;
	pid_t pid;

	ASSERT_OK_PTR(evs, "evs");
	if (!evs)
		return;
	errno = 0;
	ASSERT_NULL(tt_writer_open("/dev/full", NULL), "tt_writer_open");
	ASSERT_EQ(errno, ENOSPC, "errno");

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct tt_writer *w;
		struct rlimit rl;
		int ret = 0, efbig = 0;
		size_t i;

		signal(SIGXFSZ, SIG_IGN);
		if (getrlimit(RLIMIT_FSIZE, &rl))
			_exit(10);
		rl.rlim_cur = 200000;
		if (setrlimit(RLIMIT_FSIZE, &rl))
			_exit(11);
		w = tt_writer_open(path, NULL);
		if (!w)
			_exit(12);
		for (i = 0; i < n; i++) {
			ret = tt_writer_add(w, &evs[i]);
			if (ret == -EFBIG && !efbig++) {
				rl.rlim_cur = rl.rlim_max;
				if (setrlimit(RLIMIT_FSIZE, &rl))
					_exit(13);
			} else if (ret) {
				_exit(14);
			}
		}
		ret = tt_writer_close(w, NULL);
		_exit(efbig == 1 && !ret ? 0 : 15);
	}
	ASSERT_GT(pid, 0, "pid");
	if (pid > 0)
		ASSERT_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "WIFEXITED(status) && WEXITSTATUS(stat...");
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "  child exit %d\n", WEXITSTATUS(status));
	ASSERT_GT(read_events(path, evs, n, &st), 1000, "read_events");
	ASSERT_TRUE(st.events > n / 2 && st.events < n,
		    "st.events > n / 2 && st.events < n");
	ASSERT_EQ(st.blocks_bad, 0, "st.blocks_bad");
	ASSERT_FALSE(st.truncated, "st.truncated");
	free(evs);
}

/* A server's stream: 8 threads, 32 connections, events ~1 us apart with
 * some jitter, DATA_READY/RECV/SEND/XMIT mixed. */
static struct tt_event *realistic_events(size_t n)
{
	struct tt_event *evs = calloc(n, sizeof(*evs));
	uint32_t seqs[32];
	uint64_t seed = 8, ts = 3600000000000ull;
	size_t i;

	for (i = 0; i < 32; i++)
		seqs[i] = tt_rnd(&seed);
	for (i = 0; evs && i < n; i++) {
		struct tt_event *ev = &evs[i];
		unsigned int conn = tt_rnd(&seed) % 32, tid = tt_rnd(&seed) % 8;
		unsigned int kind = tt_rnd(&seed) % 100;
		uint64_t sk = 0xffff888104a3c000ull + conn * 0x940ull;

		ts += 500 + tt_rnd(&seed) % 1000;
		ev->h.ts = ts -
			   (tt_rnd(&seed) % 16 == 0 ? tt_rnd(&seed) % 3000 : 0);
		ev->h.tgid = 31337;
		ev->h.tid = 31337 + tid;
		ev->h.cpu = (tid + (tt_rnd(&seed) % 8 == 0)) % 8;
		if (kind < 15) {
			ev->h.type = TT_EV_DATA_READY;
			ev->h.flags = TT_F_SOFTIRQ;
			ev->sock.sk = sk;
			ev->sock.len = 200 + tt_rnd(&seed) % 1800;
		} else if (kind < 30) {
			ev->h.type = TT_EV_RECV;
			ev->sock.sk = sk;
			ev->sock.len = 200 + tt_rnd(&seed) % 1800;
		} else if (kind < 65) {
			ev->h.type = TT_EV_SEND;
			ev->send.sk = sk;
			ev->send.len = 20 + tt_rnd(&seed) % 100;
			ev->send.ts_enter =
				ev->h.ts - 1000 - tt_rnd(&seed) % 4000;
			ev->send.seq = seqs[conn];
			seqs[conn] += ev->send.len;
			ev->send.cls = TT_SEND_TOKEN;
			ev->send.tokens = 1;
			ev->send.flags = TT_SEND_F_SSE | TT_SEND_F_CHUNKED;
		} else {
			uint32_t len = 20 + tt_rnd(&seed) % 100;

			ev->h.type = TT_EV_XMIT;
			ev->xmit.sk = sk;
			ev->xmit.seq = seqs[conn] - len;
			ev->xmit.end_seq = seqs[conn];
			ev->xmit.len = len + 66;
		}
	}
	return evs;
}

/* The scheduler's share of a recording: switches with their blocking
 * reason and wakeups, among 8 server threads and the idle task. */
static struct tt_event *sched_events(size_t n)
{
	struct tt_event *evs = calloc(n, sizeof(*evs));
	uint64_t seed = 9, ts = 3600000000000ull;
	size_t i;

	for (i = 0; evs && i < n; i++) {
		struct tt_event *ev = &evs[i];
		unsigned int tid = tt_rnd(&seed) % 9, other = tt_rnd(&seed) % 9;
		uint64_t futex = 0x7f3a5c012340ull + (tt_rnd(&seed) % 4) * 0x40;
		unsigned int why = tt_rnd(&seed) % 4;

		ts += 300 + tt_rnd(&seed) % 2000;
		ev->h.ts = ts;
		ev->h.tgid = tid == 8 ? 0 : 31337;
		ev->h.tid = tid == 8 ? 0 : 31337 + tid;
		ev->h.cpu = tid % 8;
		if (tt_rnd(&seed) % 3) {
			ev->h.type = TT_EV_SWITCH;
			ev->sw.next_tgid = other == 8 ? 0 : 31337;
			ev->sw.next_tid = other == 8 ? 0 : 31337 + other;
			ev->sw.prev_state = why ? 1 : 0;
			ev->sw.sw_flags = TT_SW_PREV_TRACED |
					  (other < 8 ? TT_SW_NEXT_TRACED : 0);
			if (why == 1) {
				ev->sw.syscall_nr = 202;
				ev->sw.arg0 = futex;
			} else if (why >= 2) {
				ev->sw.syscall_nr = why == 2 ? 7 : 0;
				ev->sw.arg0 = 5 + why;
				ev->sw.sw_flags |= TT_SW_FD;
				ev->sw.fd_ino = 4193000 + why;
				ev->sw.fd_mode = 0140000;
				ev->sw.fd_dev = 8;
			} else {
				ev->sw.syscall_nr = -1;
			}
		} else {
			ev->h.type = TT_EV_WAKING;
			ev->wake.target_tgid = 31337;
			ev->wake.target_tid = 31337 + other % 8;
			ev->wake.waker_syscall = 202;
			ev->wake.target_cpu = other % 8;
			ev->wake.waker_arg0 = futex;
		}
	}
	return evs;
}

static void test_bytes_per_event_sched(void)
{
	size_t n = 200000;
	struct tt_event *evs = sched_events(n);
	uint64_t hdr_bytes, bytes;
	struct tt_read_stats st;
	double per_event;

	ASSERT_OK_PTR(evs, "evs");
	if (!evs)
		return;
	hdr_bytes = write_events(tmp_path("empty-rec.ttft"), NULL, evs, 0, 0);
	bytes = write_events(tmp_path("sched.ttft"), NULL, evs, n, 0);
	ASSERT_EQ(read_events(tmp_path("sched.ttft"), evs, n, &st), n,
		  "read_events");
	per_event = (double)(bytes - hdr_bytes) / n;
	printf("  ttfile: %.2f bytes/event on disk for switch/waking\n",
	       per_event);
	ASSERT_LE(per_event, 12.0, "per_event");
	free(evs);
}

static void test_bytes_per_event(void)
{
	const char *path = tmp_path("realistic.ttft");
	size_t n = 1000000, i, got = 0;
	struct tt_event *evs = realistic_events(n);
	struct tt_write_stats wst;
	struct tt_read_stats st;
	struct tt_writer *w;
	struct tt_reader *r;
	struct tt_event ev;
	uint64_t hdr_bytes, ts_sum = 0;
	double t0, t1, t2, per_event;
	char err[256];

	ASSERT_OK_PTR(evs, "evs");
	if (!evs)
		return;
	/* the same header alone, to count the blocks' bytes only */
	hdr_bytes = write_events(tmp_path("empty-rec.ttft"), NULL, evs, 0, 0);
	w = tt_writer_open(path, NULL);
	ASSERT_OK_PTR(w, "w");
	if (!w)
		goto cleanup;
	t0 = tt_now_s();
	for (i = 0; i < n; i++)
		ASSERT_OK(tt_writer_add(w, &evs[i]), "tt_writer_add");
	ASSERT_OK(tt_writer_close(w, &wst), "tt_writer_close");
	t1 = tt_now_s();
	r = tt_reader_open(path, err, sizeof(err));
	ASSERT_OK_PTR(r, "r");
	if (!r)
		goto cleanup;
	while (tt_reader_next(r, &ev) == 1) {
		ts_sum += ev.h.ts;
		if (got < n && !memcmp(&ev, &evs[got], sizeof(ev)))
			got++;
	}
	t2 = tt_now_s();
	tt_reader_stats(r, &st);
	tt_reader_close(r);
	ASSERT_EQ(got, n, "got");
	ASSERT_EQ(st.events, n, "st.events");
	per_event = (double)(wst.bytes - hdr_bytes) / n;
	printf("  ttfile: %.2f bytes/event on disk (%zu events, %llu blocks), "
	       "write %.1f M events/s, read %.1f M events/s\n",
	       per_event, n, (unsigned long long)wst.blocks,
	       n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6);
	ASSERT_LE(per_event, 12.0, "per_event");
	ASSERT_NEQ(ts_sum, 0, "ts_sum");

cleanup:
	free(evs);
}

static const char *corpus_dir(void)
{
	static const char *const dirs[] = { "tests/fuzz/corpus",
					    "../tests/fuzz/corpus" };
	struct stat sb;
	size_t i;

	for (i = 0; i < 2; i++)
		if (!stat(dirs[i], &sb) && S_ISDIR(sb.st_mode))
			return dirs[i];
	return NULL;
}

/* The committed fuzz seeds that are whole recordings still read clean:
 * catches format changes that would orphan existing files. */
static void test_corpus_seeds(void)
{
	const char *dir = corpus_dir();
	struct tt_read_stats st;
	struct dirent *de;
	struct tt_event ev;
	struct tt_reader *r;
	char path[512], err[256];
	int seen = 0;
	DIR *d = dir ? opendir(dir) : NULL;

	ASSERT_OK_PTR(d, "d");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "valid-", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		r = tt_reader_open(path, err, sizeof(err));
		ASSERT_OK_PTR(r, "r");
		if (!r) {
			fprintf(stderr, "  %s\n", err);
			continue;
		}
		/* written before the recorder's version was: none, and read */
		ASSERT_STREQ(tt_reader_meta(r)->recorder, "", "recorder");
		while (tt_reader_next(r, &ev) == 1)
			;
		tt_reader_stats(r, &st);
		tt_reader_close(r);
		ASSERT_GT(st.events, 0, "st.events");
		ASSERT_EQ(st.blocks_bad, 0, "st.blocks_bad");
		ASSERT_FALSE(st.truncated, "st.truncated");
		seen++;
	}
	closedir(d);
	ASSERT_GT(seen, 0, "seen");
}

static void remove_tmpdir(void)
{
	struct dirent *de;
	char path[512];
	DIR *d = opendir(tmpdir);

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tt_ttfile.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	TT_RUN(test_type_table);
	TT_RUN(test_round_trip_extremes);
	TT_RUN(test_rejects_unstored_types);
	TT_RUN(test_many_blocks);
	TT_RUN(test_compressors);
	TT_RUN(test_truncated_every_offset);
	TT_RUN(test_corrupt_block);
	TT_RUN(test_bad_files);
	TT_RUN(test_file_mode);
	TT_RUN(test_no_write_through_link);
	TT_RUN(test_write_error);
	TT_RUN(test_bytes_per_event);
	TT_RUN(test_bytes_per_event_sched);
	if (corpus_dir())
		TT_RUN(test_corpus_seeds);
	else
		printf("SKIP: test_corpus_seeds: no tests/fuzz/corpus here\n");
	remove_tmpdir();
	TT_EXIT();
}
