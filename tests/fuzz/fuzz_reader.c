/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fuzz target of the .ttft reader. Each input is used twice:
 *  1. as a whole file, read fully through the reader API: any input must
 *     give a clear one-line error or a stream of well-formed events;
 *  2. as raw (uncompressed) block records, decoded by the codec; what
 *     decodes is encoded again, decoded again and compared, and written
 *     through the writer and read back: encoder and decoder must agree.
 * Built by tests/fuzz/fuzz.sh (libFuzzer) and tests/fuzz/replay_main.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ttfile.h"
#include "ttfile_codec.h"

#define MAX_EVENTS 2048

#define require(cond)                                                         \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "fuzz_reader: %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                             \
			abort();                                              \
		}                                                             \
	} while (0)

static int memfd_with(const uint8_t *data, size_t size)
{
	int fd = memfd_create("ttfuzz", MFD_CLOEXEC);

	require(fd >= 0);
	while (size) {
		ssize_t n = write(fd, data, size);

		require(n > 0);
		data += n;
		size -= n;
	}
	return fd;
}

/* A returned event: a stored type, zeros after its payload. */
static void check_event(const struct tt_event *ev)
{
	const uint8_t *payload = (const uint8_t *)&ev->fork;
	int size = tt_event_payload_size(ev->h.type);
	size_t i;

	require(size >= 0);
	for (i = size; i < sizeof(*ev) - sizeof(ev->h); i++)
		require(payload[i] == 0);
}

static void check_meta(const struct tt_file_meta *m)
{
	size_t i;

	require(memchr(m->hostname, 0, sizeof(m->hostname)));
	require(memchr(m->kernel, 0, sizeof(m->kernel)));
	require(memchr(m->options, 0, sizeof(m->options)));
	require(m->nprocs <= (1u << 20) && m->ndevs <= (1u << 20));
	require(!m->nprocs || m->procs);
	require(!m->ndevs || m->devs);
	for (i = 0; i < m->nprocs; i++)
		require(memchr(m->procs[i].comm, 0, sizeof(m->procs[i].comm)));
	for (i = 0; i < m->ndevs; i++)
		require(memchr(m->devs[i].path, 0, sizeof(m->devs[i].path)));
}

/* Reads a file and returns its events (up to max into evs, if given). */
static size_t read_all(const char *path, struct tt_event *evs, size_t max,
		       struct tt_read_stats *st)
{
	struct tt_reader *r;
	struct tt_event ev;
	char err[256] = "";
	size_t n = 0;

	r = tt_reader_open(path, err, sizeof(err));
	if (!r) {
		require(err[0] && !strchr(err, '\n'));
		memset(st, 0, sizeof(*st));
		return 0;
	}
	check_meta(tt_reader_meta(r));
	while (tt_reader_next(r, &ev) == 1) {
		check_event(&ev);
		if (evs && n < max)
			evs[n] = ev;
		n++;
	}
	require(tt_reader_next(r, &ev) == 0);
	tt_reader_stats(r, st);
	require(st->events == n);
	require(st->blocks_ok <= n);
	tt_reader_close(r);
	return n;
}

static void fuzz_file(const uint8_t *data, size_t size)
{
	struct tt_read_stats st;
	char path[64];
	int fd = memfd_with(data, size);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	read_all(path, NULL, 0, &st);
	close(fd);
}

/* Writes evs through the writer (two blocks) and reads them back. */
static void round_trip_file(const struct tt_event *evs, size_t n)
{
	struct tt_event *back = calloc(n, sizeof(*back));
	struct tt_write_stats wst;
	struct tt_read_stats st;
	struct tt_writer *w;
	char path[64];
	size_t i;
	int fd = memfd_create("ttfuzz-w", MFD_CLOEXEC);

	require(fd >= 0 && back);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	w = tt_writer_open_fd(dup(fd), NULL);
	require(w);
	for (i = 0; i < n; i++) {
		require(tt_writer_add(w, &evs[i]) == 0);
		if (i == n / 2)
			require(tt_writer_flush(w) == 0);
	}
	require(tt_writer_close(w, &wst) == 0);
	require(wst.events == n);
	require(read_all(path, back, n, &st) == n);
	require(st.blocks_bad == 0 && !st.truncated);
	require(!memcmp(back, evs, n * sizeof(*evs)));
	free(back);
	close(fd);
}

static void fuzz_records(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct tt_event *evs = NULL, ev;
	struct ttfile_codec codec;
	size_t n = 0, cap = 0, len = 0, i;
	uint8_t *enc;

	ttfile_codec_reset(&codec);
	while (n < MAX_EVENTS) {
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			evs = realloc(evs, cap * sizeof(*evs));
			require(evs);
		}
		if (ttfile_decode(&codec, &p, end, &evs[n]))
			break;
		check_event(&evs[n]);
		n++;
	}
	enc = malloc(n * TTFILE_REC_MAX + 1);
	require(enc);
	ttfile_codec_reset(&codec);
	for (i = 0; i < n; i++) {
		size_t k = ttfile_encode(&codec, &evs[i], enc + len);

		require(k > 0 && k <= TTFILE_REC_MAX);
		len += k;
	}
	ttfile_codec_reset(&codec);
	p = enc;
	for (i = 0; i < n; i++) {
		require(ttfile_decode(&codec, &p, enc + len, &ev) == 0);
		require(!memcmp(&ev, &evs[i], sizeof(ev)));
	}
	require(p == enc + len);
	if (n)
		round_trip_file(evs, n);
	free(enc);
	free(evs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_file(data, size);
	fuzz_records(data, size);
	return 0;
}
