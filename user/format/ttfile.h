/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The .ttft recording: a header (magic, version, host, kernel, clock
 * reference, options, process table, device table) and then zlib-compressed
 * blocks of events, each with its length and a CRC32, so that a file cut
 * short reads back up to its last whole block.
 */
#ifndef TT_FILE_H
#define TT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include "event.h"

struct tt_write_stats {
	__u64 events;
	__u64 blocks;
	__u64 bytes; /* file size */
	bool libdeflate; /* blocks compressed by libdeflate, not zlib */
};

struct tt_read_stats {
	__u64 events;
	__u64 blocks_ok;
	__u64 blocks_bad; /* checksum or decode failure: skipped, reported */
	bool truncated; /* the file ends inside a block */
	bool trailer_expected; /* its version ends a whole file with one */
	bool closed; /* the trailer was read: the recorder closed it */
	__u64 trailer_events; /* what the trailer says was written */
	bool libdeflate; /* blocks inflated by libdeflate, not zlib */
};

struct tt_writer;
struct tt_reader;

/* Creates or truncates path with mode 0600, never through a symbolic link
 * at path. Returns NULL and sets errno on failure. */
struct tt_writer *tt_writer_open(const char *path,
				 const struct tt_file_meta *meta);
/* The same on a file the caller opened (record opens its output once,
 * exclusively): the writer owns fd from here on, also on failure. */
struct tt_writer *tt_writer_open_fd(int fd, const struct tt_file_meta *meta);
/* Buffers one event; a full block is compressed and written. 0 or -errno. */
int tt_writer_add(struct tt_writer *w, const struct tt_event *ev);
/* Writes out the current partial block (call periodically, so that a kill
 * loses at most the last interval). 0 or -errno. */
int tt_writer_flush(struct tt_writer *w);
/* Flushes, closes and frees; stats may be NULL. 0 or -errno. */
int tt_writer_close(struct tt_writer *w, struct tt_write_stats *stats);

/* Whether path starts like a recording (so that no output overwrites one). */
bool tt_file_is_recording(const char *path);

/* Opens and validates the header. On failure returns NULL and writes a
 * one-line reason (no trailing newline) into err. */
struct tt_reader *tt_reader_open(const char *path, char *err, size_t errlen);
const struct tt_file_meta *tt_reader_meta(const struct tt_reader *r);
/* 1: *ev holds the next event; 0: end of the readable data. Bad blocks are
 * skipped and counted, never fatal; a truncated tail ends the stream. */
int tt_reader_next(struct tt_reader *r, struct tt_event *ev);
void tt_reader_stats(const struct tt_reader *r, struct tt_read_stats *st);
void tt_reader_close(struct tt_reader *r);

#endif /* TT_FILE_H */
