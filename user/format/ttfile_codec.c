/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Record codec of the .ttft format. A record is:
 *   u8 type, varint zigzag(ts - previous ts), varint cpu, thread code,
 *   varint flags, then each payload field as its table entry says.
 * Thread code: the (tgid, tid) cache slot, or TTFILE_THREAD_SLOTS followed
 * by varint tgid and varint zigzag(tid - tgid), which fills the slot.
 * Socket code: the same with TTFILE_SOCK_SLOTS, a miss carrying
 * zigzag(sk - previous missed sk). Sequences are zigzag deltas from the
 * last sequence stored for that socket slot, so a send and its xmit cost a
 * byte or two each. Payload timestamps are deltas from the header's ts,
 * payload thread ids (switch next, wake target) from the header's ids.
 * Byte arrays drop their trailing zeros. The decoder rejects values that
 * do not fit their field, so damage shows as a bad block, not bad data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "ttfile_codec.h"

/* clang-format off */
#define FLD(st, m, kind)                                                      \
	{ offsetof(struct st, m), sizeof(((struct st *)0)->m), TTFILE_K_##kind }

#define SOCK_FIELDS(st) FLD(st, sk, SK), FLD(st, len, SINT)
#define WAKE_FIELDS                                                           \
	FLD(tt_wake, target_tid, TID), FLD(tt_wake, target_tgid, TGID),      \
	FLD(tt_wake, waker_syscall, SINT), FLD(tt_wake, target_cpu, UINT),   \
	FLD(tt_wake, waker_arg0, UINT)

/* Indexed by type; a stored type's fields must tile its payload as
 * tt_event_payload_size() gives it (ttfile_codec_self_check). */
static const struct ttfile_type_desc type_table[TT_EV_MAX] = {
	[TT_EV_FORK] = {
		3, {
			FLD(tt_fork, child_tgid, UINT),
			FLD(tt_fork, child_tid, UINT),
			FLD(tt_fork, comm, BYTES),
		} },
	[TT_EV_EXIT] = { 0, {} },
	[TT_EV_COMM] = {
		1, {
			FLD(tt_comm, comm, BYTES),
		} },
	[TT_EV_CONN_OPEN] = {
		7, {
			FLD(tt_conn, sk, SK),
			FLD(tt_conn, family, UINT),
			FLD(tt_conn, lport, UINT),
			FLD(tt_conn, rport, UINT),
			FLD(tt_conn, pad, UINT),
			FLD(tt_conn, laddr, BYTES),
			FLD(tt_conn, raddr, BYTES),
		} },
	[TT_EV_CONN_CLOSE] = {
		2,
		{ SOCK_FIELDS(tt_sock) } },
	[TT_EV_DATA_READY] = {
		2,
		{ SOCK_FIELDS(tt_sock) } },
	[TT_EV_DATA_READY_DEV] = {
		3, {
			SOCK_FIELDS(tt_sock_dev),
			FLD(tt_sock_dev, ts_dev, TS),
		} },
	[TT_EV_RECV] = {
		2,
		{ SOCK_FIELDS(tt_sock) } },
	[TT_EV_SEND] = {
		8, {
			FLD(tt_send, sk, SK),
			FLD(tt_send, len, SINT),
			FLD(tt_send, ts_enter, TS),
			FLD(tt_send, seq, SEQ),
			FLD(tt_send, cls, UINT),
			FLD(tt_send, tokens, UINT),
			FLD(tt_send, flags, UINT),
			FLD(tt_send, status, UINT),
		} },
	[TT_EV_XMIT] = {
		5, {
			FLD(tt_xmit, sk, SK),
			FLD(tt_xmit, seq, SEQ),
			FLD(tt_xmit, end_seq, SEQ),
			FLD(tt_xmit, len, UINT),
			FLD(tt_xmit, pad, UINT),
		} },
	[TT_EV_LOST] = {
		4, {
			FLD(tt_lost, count, UINT),
			FLD(tt_lost, since_ts, TS),
			FLD(tt_lost, lost_cpu, UINT),
			FLD(tt_lost, pad, UINT),
		} },
		[TT_EV_SWITCH] = {
		11, {
			FLD(tt_switch, next_tid, TID),
			FLD(tt_switch, next_tgid, TGID),
			FLD(tt_switch, prev_state, SINT),
			FLD(tt_switch, syscall_nr, SINT),
			FLD(tt_switch, sw_flags, UINT),
			FLD(tt_switch, arg0, UINT),
			FLD(tt_switch, fd_ino, UINT),
			FLD(tt_switch, fd_mode, UINT),
			FLD(tt_switch, fd_rdev, UINT),
			FLD(tt_switch, fd_dev, UINT),
			FLD(tt_switch, pad, UINT),
		} },
	[TT_EV_WAKING] = { 5,
			   { WAKE_FIELDS } },
	[TT_EV_WAKEUP_NEW] = { 5,
			       { WAKE_FIELDS } },
	[TT_EV_DATA_WAKE] = { 5,
			      { WAKE_FIELDS } },
	[TT_EV_DATA_READ] = { 5,
			      { WAKE_FIELDS } },
	[TT_EV_STEAL] = {
		2, {
			FLD(tt_steal, ns, UINT),
			FLD(tt_steal, ts_on, TS),
		} },
	[TT_EV_PIPE_IO] = {
		4, {
			FLD(tt_pipe_io, pipe, UINT),
			FLD(tt_pipe_io, pos, UINT),
			FLD(tt_pipe_io, len, UINT),
			FLD(tt_pipe_io, op, UINT),
		} },
	[TT_EV_POLL] = {
		2, {
			FLD(tt_poll, nready, SINT),
			FLD(tt_poll, syscall_nr, UINT),
		} },
	[TT_EV_MSG_SEND] = {
		3, {
			FLD(tt_msg_send, sock, UINT),
			FLD(tt_msg_send, fn, UINT),
			FLD(tt_msg_send, flags, UINT),
		} },
	[TT_EV_BLOCK] = {
		7, {
			FLD(tt_block, rq, UINT),
			FLD(tt_block, sector, UINT),
			FLD(tt_block, nr_bytes, UINT),
			FLD(tt_block, dev, UINT),
			FLD(tt_block, phase, UINT),
			FLD(tt_block, write, UINT),
			FLD(tt_block, error, SINT),
		} },
	[TT_EV_FAULT] = {
		4, {
			FLD(tt_fault, ino, UINT),
			FLD(tt_fault, index, UINT),
			FLD(tt_fault, dev, UINT),
			FLD(tt_fault, pad, UINT),
		} },
	[TT_EV_IOCTL] = {
		7, {
			FLD(tt_ioctl, ts_enter, TS),
			FLD(tt_ioctl, ret, SINT),
			FLD(tt_ioctl, cmd, UINT),
			FLD(tt_ioctl, fd, UINT),
			FLD(tt_ioctl, rdev, UINT),
			FLD(tt_ioctl, dev, UINT),
			FLD(tt_ioctl, ino, UINT),
		} },
	[TT_EV_GPU_CALL] = {
		5, {
			FLD(tt_gpu_call, ts_enter, TS),
			FLD(tt_gpu_call, arg0, UINT),
			FLD(tt_gpu_call, ret, SINT),
			FLD(tt_gpu_call, fn, UINT),
			FLD(tt_gpu_call, flags, UINT),
		} },
	[TT_EV_RTLOCK] = {
		4, {
			FLD(tt_rtlock, lo, UINT),
			FLD(tt_rtlock, hi, UINT),
			FLD(tt_rtlock, kind, UINT),
			FLD(tt_rtlock, pad, UINT),
		} },
	[TT_EV_GO] = {
		3, {
			FLD(tt_go, g, UINT),
			FLD(tt_go, from, UINT),
			FLD(tt_go, to, UINT),
		} },
	[TT_EV_GO_CHAN] = {
		3, {
			FLD(tt_go_chan, ch, UINT),
			FLD(tt_go_chan, op, UINT),
			FLD(tt_go_chan, qcount, UINT),
		} },
	[TT_EV_MARK] = {
		4, {
			FLD(tt_mark, key, UINT),
			FLD(tt_mark, kind, UINT),
			FLD(tt_mark, flags, UINT),
			FLD(tt_mark, spec, UINT),
		} },
	[TT_EV_ENERGY] = {
		7, {
			FLD(tt_energy, value, UINT),
			FLD(tt_energy, max, UINT),
			FLD(tt_energy, kind, UINT),
			FLD(tt_energy, source, UINT),
			FLD(tt_energy, domain, UINT),
			FLD(tt_energy, pad, UINT),
			FLD(tt_energy, name, BYTES),
		} },
	[TT_EV_FILEIO] = {
		9, {
			FLD(tt_fileio, ts_enter, TS),
			FLD(tt_fileio, ret, SINT),
			FLD(tt_fileio, ino, UINT),
			FLD(tt_fileio, dev, UINT),
			FLD(tt_fileio, rdev, UINT),
			FLD(tt_fileio, fd, UINT),
			FLD(tt_fileio, mode, UINT),
			FLD(tt_fileio, f_flags, UINT),
			FLD(tt_fileio, syscall, SINT),
		} },
	};
/* clang-format on */

_Static_assert(TT_EV_MAX <= 256, "record types are stored as one byte");
_Static_assert(TTFILE_THREAD_SLOTS == 64 && TTFILE_SOCK_SLOTS == 128,
	       "slot hashes below assume 2^6 and 2^7 slots, hits in 1 byte");

const struct ttfile_type_desc *ttfile_type_desc(unsigned int type)
{
	if (type >= TT_EV_MAX || tt_event_payload_size(type) < 0)
		return NULL;
	return &type_table[type];
}

static inline uint64_t zz64(uint64_t v)
{
	return (v << 1) ^ (0 - (v >> 63));
}

static inline uint64_t unzz64(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static inline uint32_t zz32(uint32_t v)
{
	return (v << 1) ^ (0u - (v >> 31));
}

static inline uint32_t unzz32(uint32_t z)
{
	return (z >> 1) ^ (0u - (z & 1));
}

static inline unsigned int thread_slot(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> (64 - 6);
}

static inline unsigned int sock_slot(uint64_t sk)
{
	return (sk * 0x9e3779b97f4a7c15ull) >> (64 - 7);
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline int get_varint(const uint8_t **pp, const uint8_t *end,
			     uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	unsigned int shift;

	if (p < end && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	for (shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (p == end)
			return -1;
		b = *p++;
		if (shift == 63 && b > 1)
			return -1; /* more than 64 bits */
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* A varint that must fit in 'bits' bits. */
static inline int get_varint_max(const uint8_t **pp, const uint8_t *end,
				 uint64_t *v, unsigned int bits)
{
	if (get_varint(pp, end, v))
		return -1;
	if (bits < 64 && (*v >> bits))
		return -1;
	return 0;
}

static inline uint64_t load_uint(const uint8_t *p, unsigned int size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	case 4:
		memcpy(&v32, p, 4);
		return v32;
	default:
		memcpy(&v64, p, 8);
		return v64;
	}
}

/* Stores the low 'size' bytes of v (host order, like the struct). */
static inline void store_uint(uint8_t *p, unsigned int size, uint64_t v)
{
	uint8_t v8 = v;
	uint16_t v16 = v;
	uint32_t v32 = v;

	switch (size) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* Sign-extends a 'size'-byte integer to 64 bits, as unsigned arithmetic. */
static inline uint64_t sign_extend(uint64_t v, unsigned int size)
{
	unsigned int bits = size * 8;
	uint64_t sign;

	if (bits >= 64)
		return v;
	sign = 1ull << (bits - 1);
	v &= (sign << 1) - 1;
	return (v ^ sign) - sign;
}

void ttfile_codec_reset(struct ttfile_codec *c)
{
	memset(c, 0, sizeof(*c));
}

size_t ttfile_encode(struct ttfile_codec *c, const struct tt_event *ev,
		     uint8_t *out)
{
	const struct ttfile_type_desc *d = ttfile_type_desc(ev->h.type);
	const uint8_t *payload = (const uint8_t *)&ev->fork;
	uint64_t key = (uint64_t)ev->h.tgid << 32 | ev->h.tid;
	unsigned int slot, sk_slot = 0, i;
	uint8_t *p = out;

	if (!d)
		return 0;
	*p++ = (uint8_t)ev->h.type;
	p = put_varint(p, zz64(ev->h.ts - c->prev_ts));
	c->prev_ts = ev->h.ts;
	p = put_varint(p, ev->h.cpu);
	slot = thread_slot(key);
	if (c->thread[slot] == key) {
		*p++ = slot;
	} else {
		*p++ = TTFILE_THREAD_SLOTS;
		p = put_varint(p, ev->h.tgid);
		p = put_varint(p, zz32(ev->h.tid - ev->h.tgid));
		c->thread[slot] = key;
	}
	p = put_varint(p, ev->h.flags);

	for (i = 0; i < d->nfields; i++) {
		const struct ttfile_field *f = &d->fields[i];
		const uint8_t *src = payload + f->off;
		uint64_t v;
		unsigned int n;

		switch (f->kind) {
		case TTFILE_K_UINT:
			p = put_varint(p, load_uint(src, f->size));
			break;
		case TTFILE_K_SINT:
			v = sign_extend(load_uint(src, f->size), f->size);
			p = put_varint(p, zz64(v));
			break;
		case TTFILE_K_BYTES:
			for (n = f->size; n > 0 && !src[n - 1]; n--)
				;
			*p++ = n;
			memcpy(p, src, n);
			p += n;
			break;
		case TTFILE_K_TS:
			p = put_varint(p, zz64(load_uint(src, 8) - ev->h.ts));
			break;
		case TTFILE_K_SK:
			v = load_uint(src, 8);
			sk_slot = sock_slot(v);
			if (c->sk[sk_slot] == v) {
				*p++ = sk_slot;
			} else {
				p = put_varint(p, TTFILE_SOCK_SLOTS);
				p = put_varint(p, zz64(v - c->prev_new_sk));
				c->prev_new_sk = v;
				c->sk[sk_slot] = v;
				c->seq[sk_slot] = 0;
			}
			break;
		case TTFILE_K_SEQ:
			v = load_uint(src, 4);
			p = put_varint(p, zz32((uint32_t)v - c->seq[sk_slot]));
			c->seq[sk_slot] = v;
			break;
		case TTFILE_K_TID:
			p = put_varint(p, zz32(load_uint(src, 4) - ev->h.tid));
			break;
		case TTFILE_K_TGID:
			p = put_varint(p, zz32(load_uint(src, 4) - ev->h.tgid));
			break;
		}
	}
	return p - out;
}

/* Inlined with a constant d, the field loop unrolls and each field's
 * kind and size fold away: an indirect jump per field was a fifth of the
 * decode (mispredicted, as kinds follow types). */
static inline __attribute__((always_inline)) int
decode_fields_of(struct ttfile_codec *c, const struct ttfile_type_desc *d,
		 const uint8_t **pp, const uint8_t *end, struct tt_event *ev)
{
	uint8_t *payload = (uint8_t *)&ev->fork;
	const uint8_t *p = *pp;
	unsigned int sk_slot = 0, i;

#pragma GCC unroll 16
	for (i = 0; i < d->nfields; i++) {
		const struct ttfile_field *f = &d->fields[i];
		uint8_t *dst = payload + f->off;
		uint64_t v;
		unsigned int n;

		switch (f->kind) {
		case TTFILE_K_UINT:
			if (get_varint_max(&p, end, &v, f->size * 8))
				return -1;
			store_uint(dst, f->size, v);
			break;
		case TTFILE_K_SINT:
			if (get_varint(&p, end, &v))
				return -1;
			v = unzz64(v);
			/* the value must be what its field can hold */
			if (sign_extend(v, f->size) != v)
				return -1;
			store_uint(dst, f->size, v);
			break;
		case TTFILE_K_BYTES:
			if (p == end || *p > f->size || end - p - 1 < *p)
				return -1;
			n = *p++;
			memcpy(dst, p, n);
			p += n;
			break;
		case TTFILE_K_TS:
			if (get_varint(&p, end, &v))
				return -1;
			store_uint(dst, 8, unzz64(v) + ev->h.ts);
			break;
		case TTFILE_K_SK:
			if (get_varint_max(&p, end, &v, 8))
				return -1;
			if (v < TTFILE_SOCK_SLOTS) {
				sk_slot = v;
				v = c->sk[sk_slot];
				/* a slot that was never filled */
				if (sock_slot(v) != sk_slot)
					return -1;
			} else if (v == TTFILE_SOCK_SLOTS) {
				if (get_varint(&p, end, &v))
					return -1;
				v = unzz64(v) + c->prev_new_sk;
				c->prev_new_sk = v;
				sk_slot = sock_slot(v);
				c->sk[sk_slot] = v;
				c->seq[sk_slot] = 0;
			} else {
				return -1;
			}
			store_uint(dst, 8, v);
			break;
		case TTFILE_K_SEQ:
			if (get_varint_max(&p, end, &v, 32))
				return -1;
			c->seq[sk_slot] += unzz32(v);
			store_uint(dst, 4, c->seq[sk_slot]);
			break;
		case TTFILE_K_TID:
		case TTFILE_K_TGID:
			if (get_varint_max(&p, end, &v, 32))
				return -1;
			v = unzz32(v) +
			    (f->kind == TTFILE_K_TID ? ev->h.tid : ev->h.tgid);
			store_uint(dst, 4, v);
			break;
		default:
			return -1;
		}
	}
	*pp = p;
	return 0;
}

/* The types most records are, each decoded by its own unrolled copy. */
static int decode_fields(struct ttfile_codec *c,
			 const struct ttfile_type_desc *d, const uint8_t **pp,
			 const uint8_t *end, struct tt_event *ev)
{
	switch (ev->h.type) {
	case TT_EV_SWITCH:
		return decode_fields_of(c, &type_table[TT_EV_SWITCH], pp, end,
					ev);
	case TT_EV_WAKING:
		return decode_fields_of(c, &type_table[TT_EV_WAKING], pp, end,
					ev);
	case TT_EV_SEND:
		return decode_fields_of(c, &type_table[TT_EV_SEND], pp, end,
					ev);
	case TT_EV_XMIT:
		return decode_fields_of(c, &type_table[TT_EV_XMIT], pp, end,
					ev);
	default:
		return decode_fields_of(c, d, pp, end, ev);
	}
}

int ttfile_decode(struct ttfile_codec *c, const uint8_t **pp,
		  const uint8_t *end, struct tt_event *ev)
{
	/* copied, not memset: gcc's rep stos for 96 bytes was an eighth of
	 * the decode */
	static const struct tt_event zero_event;
	const struct ttfile_type_desc *d;
	const uint8_t *p = *pp;
	uint64_t v, tgid;
	unsigned int slot;

	*ev = zero_event;
	if (p == end)
		return -EBADMSG;
	d = ttfile_type_desc(*p);
	if (!d)
		return -EBADMSG;
	ev->h.type = *p++;
	if (get_varint(&p, end, &v))
		return -EBADMSG;
	ev->h.ts = c->prev_ts + unzz64(v);
	c->prev_ts = ev->h.ts;
	if (get_varint_max(&p, end, &v, 16))
		return -EBADMSG;
	ev->h.cpu = v;
	if (get_varint_max(&p, end, &v, 8))
		return -EBADMSG;
	if (v < TTFILE_THREAD_SLOTS) {
		slot = v;
		v = c->thread[slot];
		if (thread_slot(v) != slot)
			return -EBADMSG;
	} else if (v == TTFILE_THREAD_SLOTS) {
		if (get_varint_max(&p, end, &tgid, 32) ||
		    get_varint_max(&p, end, &v, 32))
			return -EBADMSG;
		v = tgid << 32 | (uint32_t)(tgid + unzz32(v));
		c->thread[thread_slot(v)] = v;
	} else {
		return -EBADMSG;
	}
	ev->h.tgid = v >> 32;
	ev->h.tid = (uint32_t)v;
	if (get_varint_max(&p, end, &v, 32))
		return -EBADMSG;
	ev->h.flags = v;
	if (decode_fields(c, d, &p, end, ev))
		return -EBADMSG;
	*pp = p;
	return 0;
}

static unsigned int varint_max_len(unsigned int bits)
{
	return (bits + 6) / 7;
}

int ttfile_codec_self_check(char *err, size_t errlen)
{
	unsigned int type, i;

	for (type = 0; type < TT_EV_MAX; type++) {
		const struct ttfile_type_desc *d = ttfile_type_desc(type);
		const char *name = tt_event_type_name(type);
		int size = tt_event_payload_size(type);
		unsigned int off = 0, maxlen;
		bool have_sk = false;

		if (!strcmp(name, "unknown")) {
			snprintf(err, errlen, "type %u has no entry", type);
			return -1;
		}
		if (size < 0)
			continue;
		if ((size_t)size >
			    sizeof(struct tt_event) - sizeof(struct tt_hdr) ||
		    d->nfields > TTFILE_MAX_FIELDS) {
			snprintf(err, errlen, "%s: bad size", name);
			return -1;
		}
		/* type, ts, cpu, thread miss, flags */
		maxlen = 1 + varint_max_len(64) + varint_max_len(16) + 1 +
			 2 * varint_max_len(32) + varint_max_len(32);
		for (i = 0; i < d->nfields; i++) {
			const struct ttfile_field *f = &d->fields[i];
			bool int_size = f->size == 1 || f->size == 2 ||
					f->size == 4 || f->size == 8;
			bool ok;

			switch (f->kind) {
			case TTFILE_K_UINT:
				ok = int_size;
				maxlen += varint_max_len(f->size * 8);
				break;
			case TTFILE_K_SINT:
				ok = int_size;
				maxlen += varint_max_len(64);
				break;
			case TTFILE_K_BYTES:
				ok = f->size >= 1;
				maxlen += 1 + f->size;
				break;
			case TTFILE_K_TS:
				ok = f->size == 8;
				maxlen += varint_max_len(64);
				break;
			case TTFILE_K_SK:
				ok = f->size == 8;
				have_sk = true;
				maxlen += 2 + varint_max_len(64);
				break;
			case TTFILE_K_SEQ:
				ok = f->size == 4 && have_sk;
				maxlen += varint_max_len(32);
				break;
			case TTFILE_K_TID:
			case TTFILE_K_TGID:
				ok = f->size == 4;
				maxlen += varint_max_len(32);
				break;
			default:
				ok = false;
				break;
			}
			if (!ok || f->off != off) {
				snprintf(err, errlen, "%s: field %u bad",
					 name, i);
				return -1;
			}
			off += f->size;
		}
		if (off != (unsigned int)size) {
			snprintf(err, errlen,
				 "%s: fields cover %u of %d payload bytes",
				 name, off, size);
			return -1;
		}
		if (maxlen > TTFILE_REC_MAX) {
			snprintf(err, errlen, "%s: records up to %u bytes",
				 name, maxlen);
			return -1;
		}
	}
	return 0;
}
