/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Private to the .ttft reader and writer: the per-type field table that
 * drives both the record encoder and decoder, the codec state that makes
 * records small (timestamp deltas, thread and socket caches), and
 * little-endian helpers. Codec state is reset at each block start so that
 * every block decodes on its own and a bad block can be skipped.
 */
#ifndef TT_FILE_CODEC_H
#define TT_FILE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "event.h"

/* How one payload field is stored. */
enum ttfile_kind {
	TTFILE_K_UINT = 1, /* unsigned integer of 1, 2, 4 or 8 bytes: varint */
	TTFILE_K_SINT, /* signed integer: zigzag varint */
	TTFILE_K_BYTES, /* byte array: length without trailing zeros, bytes */
	TTFILE_K_TS, /* u64 timestamp: zigzag delta from the header ts */
	TTFILE_K_SK, /* u64 socket: socket cache slot; selects the slot */
	TTFILE_K_SEQ, /* u32 TCP sequence: delta from the slot's last seq */
	TTFILE_K_TID, /* u32 thread id: zigzag delta from the header tid */
	TTFILE_K_TGID, /* u32 process id: zigzag delta from the header tgid */
};

struct ttfile_field {
	uint16_t off; /* in the payload */
	uint8_t size;
	uint8_t kind; /* enum ttfile_kind */
};

#define TTFILE_MAX_FIELDS 12

/* How one stored event type is encoded; what the type is (name, payload
 * size) is core/event.c's: adding a stored type is an entry in each. */
struct ttfile_type_desc {
	uint8_t nfields;
	struct ttfile_field fields[TTFILE_MAX_FIELDS];
};

/* Descriptor of a type, or NULL when the type is unknown. */
const struct ttfile_type_desc *ttfile_type_desc(unsigned int type);

/* Direct-mapped caches: a value's slot depends on the value only, so a
 * thread or socket keeps its one-byte code for as long as it stays. */
#define TTFILE_THREAD_SLOTS 64
#define TTFILE_SOCK_SLOTS 128

struct ttfile_codec {
	uint64_t prev_ts;
	uint64_t thread[TTFILE_THREAD_SLOTS]; /* tgid << 32 | tid */
	uint64_t sk[TTFILE_SOCK_SLOTS];
	uint32_t seq[TTFILE_SOCK_SLOTS]; /* last TCP sequence seen per socket */
	uint64_t prev_new_sk; /* socket misses are deltas from the last one */
};

/* Upper bound of one encoded record (checked against the table by
 * ttfile_codec_self_check) and lower bound (type, ts, cpu, thread, flags). */
#define TTFILE_REC_MAX 256
#define TTFILE_REC_MIN 5

void ttfile_codec_reset(struct ttfile_codec *c);
/* Encodes ev into out (room for TTFILE_REC_MAX bytes); returns the length,
 * or 0 when ev's type is never stored. */
size_t ttfile_encode(struct ttfile_codec *c, const struct tt_event *ev,
		     uint8_t *out);
/* Decodes one record at *p (advanced past it) into ev; 0 or -EBADMSG on a
 * malformed record, an unknown type or a value that does not fit. */
int ttfile_decode(struct ttfile_codec *c, const uint8_t **p, const uint8_t *end,
		  struct tt_event *ev);
/* Checks the field table: fields tile each payload exactly, known kinds,
 * a socket before any sequence, records within TTFILE_REC_MAX. 0 or -1
 * with a reason in err. */
int ttfile_codec_self_check(char *err, size_t errlen);

static inline void ttfile_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline uint32_t ttfile_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void ttfile_put_le64(uint8_t *p, uint64_t v)
{
	ttfile_put_le32(p, (uint32_t)v);
	ttfile_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t ttfile_get_le64(const uint8_t *p)
{
	return (uint64_t)ttfile_get_le32(p) | (uint64_t)ttfile_get_le32(p + 4)
						      << 32;
}

#endif /* TT_FILE_CODEC_H */
