/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Writes the seed corpus of fuzz_reader into DIR: small valid recordings,
 * a header-only one, a truncated one, corrupted ones, raw block records and
 * a file that is not a recording. The seeds are committed; rerun after a
 * format change (tests/fuzz/fuzz.sh --gen-corpus).
 *   gen_corpus DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ttfile.h"
#include "ttfile_codec.h"

static const char *dir;

static const char *seed_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void die(const char *what)
{
	fprintf(stderr, "gen_corpus: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *name, const uint8_t *buf, size_t len)
{
	int fd = open(seed_path(name), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd))
		die(name);
}

static uint8_t *get(const char *name, size_t *len)
{
	static uint8_t buf[1 << 16];
	int fd = open(seed_path(name), O_RDONLY);
	ssize_t n;

	if (fd < 0)
		die(name);
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		die(name);
	close(fd);
	*len = n;
	return buf;
}

/* One event of each stored type (and a few more), from a small PRNG. */
static size_t make_events(struct tt_event *evs, size_t max, uint64_t seed)
{
	uint64_t ts = 1000000;
	size_t n = 0;
	unsigned int type;

	while (n < max) {
		for (type = 1; type < TT_EV_MAX && n < max; type++) {
			struct tt_event *ev = &evs[n];
			int size = tt_event_payload_size(type);
			uint8_t *payload = (uint8_t *)&ev->fork;
			int i;

			if (size < 0)
				continue;
			memset(ev, 0, sizeof(*ev));
			seed = seed * 6364136223846793005ull + 1;
			ts += 700 + (seed >> 54);
			ev->h.ts = ts;
			ev->h.type = type;
			ev->h.tgid = 100;
			ev->h.tid = 100 + (seed >> 62);
			ev->h.cpu = seed >> 61;
			/* two varying bytes per 8: small and large values */
			for (i = 0; i < size; i++)
				payload[i] =
					(i & 7) < 2 ? seed >> (8 * i % 64) : 0;
			n++;
		}
	}
	return n;
}

static void write_recording(const char *name, size_t nevents, size_t per)
{
	struct tt_proc_info procs[2] = {
		{ 100, 100, "server" },
		{ 100, 101, "engine" },
	};
	struct tt_dev_info devs[1] = { { "/dev/nvidia0", 195 << 8, 1 } };
	struct tt_file_meta meta = {
		.hostname = "fuzzhost",
		.kernel = "6.18.0 #1 SMP",
		.mono_ns = 123456789,
		.real_ns = 1700000000000000000ull,
		.options = "record -p 100",
		.procs = procs,
		.nprocs = 2,
		.devs = devs,
		.ndevs = 1,
	};
	struct tt_event evs[64];
	struct tt_writer *w;
	size_t i, n = make_events(evs, nevents < 64 ? nevents : 64, 7);

	w = tt_writer_open(seed_path(name), &meta);
	if (!w)
		die(name);
	for (i = 0; i < n; i++) {
		if (tt_writer_add(w, &evs[i]))
			die(name);
		if (per && (i + 1) % per == 0 && tt_writer_flush(w))
			die(name);
	}
	if (tt_writer_close(w, NULL))
		die(name);
	chmod(seed_path(name), 0644);
}

int main(int argc, char **argv)
{
	static const char text[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct ttfile_codec codec;
	struct tt_event evs[32];
	uint8_t raw[32 * TTFILE_REC_MAX], *buf;
	size_t len, rlen = 0, i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	dir = argv[1];
	write_recording("valid-one-block", 16, 0);
	write_recording("valid-three-blocks", 24, 8);
	write_recording("header-only", 0, 0);

	buf = get("valid-three-blocks", &len);
	put("truncated-mid-block", buf, len - 7);
	buf[len / 2] ^= 0x40;
	put("corrupt-block-data", buf, len);
	buf = get("valid-three-blocks", &len);
	buf[len - 40] ^= 0x01;
	put("corrupt-last-block", buf, len);

	n = make_events(evs, 32, 9);
	ttfile_codec_reset(&codec);
	for (i = 0; i < n; i++)
		rlen += ttfile_encode(&codec, &evs[i], raw + rlen);
	put("raw-records", raw, rlen);
	put("not-a-recording", (const uint8_t *)text, sizeof(text) - 1);
	return 0;
}
