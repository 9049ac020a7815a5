/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The .ttft recording file (docs/design.md §5). All integers little-endian.
 *
 * Header:
 *   "TTFTRACE", u32 version, u32 body_len, body, u32 crc32(version..body)
 *   body: str hostname, str kernel, u64 mono_ns, u64 real_ns, str options,
 *         u32 nprocs, nprocs x (u32 tgid, u32 tid, str comm),
 *         u32 ndevs, ndevs x (str path, u32 rdev, u32 kind)
 *         [u32 ndevs, ndevs x (u32 dev, u64 ino)]  (appended in 1.1)
 *         [u32 arch]  (appended in version 2: TT_ARCH_*, tt_arch.h)
 *         [str recorder]  (appended in 2.1: the writing ttftrace's version)
 *   str: u16 length, bytes (no NUL). Bytes after the known fields are
 *   ignored, so a later minor revision may append fields.
 * Then blocks, each a 24-byte frame and zlib data:
 *   marker D7 'T' 'B' 'K', u32 clen, u32 ulen, u32 nevents,
 *   u32 crc32(data), u32 crc32(the 20 frame bytes before it)
 *   The data inflates to ulen bytes of nevents records (ttfile_codec.c);
 *   each block decodes on its own.
 * Version 2 ends a properly closed recording with a 24-byte trailer:
 *   marker D7 'T' 'E' 'N', u32 blocks, u64 events, u32 0,
 *   u32 crc32(the 20 bytes before it)
 *   so that a file cut at a block boundary (kill -9, a full disk) is told
 *   from a whole one. Version 1 files have no trailer.
 *
 * Reading: a block whose data fails its CRC, inflate or decode is counted
 * bad and skipped by its (CRC-checked) length. A frame that fails its own
 * CRC or bounds has no length to trust: the reader counts one bad block and
 * scans forward for the next valid frame. A file that ends inside a frame
 * or its data sets truncated; every whole block before it is returned.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "json.h"
#include "tt_arch.h"
#include "ttfile.h"
#include "ttfile_codec.h"

#define TTF_MAGIC "TTFTRACE"
#define TTF_MAGIC_LEN 8
#define TTF_VERSION 2
#define TTF_VERSION_TRAILER 2 /* the first version that ends with one */
#define TTF_HDR_FIXED 16 /* magic, version, body_len */
#define TTF_HDR_BODY_MAX (128u << 20)
#define TTF_MAX_PROCS (1u << 20)
#define TTF_MAX_DEVS (1u << 20)

#define TTF_FRAME_LEN 24
/* Encoded records per block before compression; a flush may cut it short. */
#define TTF_BLOCK_TARGET (64u << 10)
/* Readers accept up to 16 times what this writer produces. */
#define TTF_BLOCK_RAW_MAX (1u << 20)
#define TTF_READ_CHUNK (64u << 10)

static const uint8_t block_marker[4] = { 0xd7, 'T', 'B', 'K' };
static const uint8_t trailer_marker[4] = { 0xd7, 'T', 'E', 'N' };

/* Fuzzing builds skip checksums so that the fuzzer reaches the parsers. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define crc_matches(a, b) ((void)(a), (void)(b), true)
#else
#define crc_matches(a, b) ((a) == (b))
#endif

static uint32_t crc32_of(const uint8_t *p, size_t len)
{
	return crc32(crc32(0, Z_NULL, 0), p, len);
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * libdeflate, where the system has it: a whole-buffer compressor that
 * writes the same zlib stream as deflate() (any reader inflates it) in
 * half the time at level 1, a little smaller, and the writer's
 * compression is most of the recorder's CPU (docs/design.md §5.2); its
 * decompressor inflates a block in a third of inflate()'s time, which was
 * a sixth of report's. Looked up at run time: no build dependency, zlib
 * where it is missing.
 */
struct ldeflate {
	void *lib;
	void *c; /* struct libdeflate_compressor * */
	size_t (*compress)(void *c, const void *in, size_t in_n, void *out,
			   size_t out_n);
	void (*free_c)(void *c);
	void *d; /* struct libdeflate_decompressor * */
	/* libdeflate_zlib_decompress_ex: 0 on success */
	int (*decompress)(void *d, const void *in, size_t in_n, void *out,
			  size_t out_n, size_t *in_used, size_t *out_made);
	void (*free_d)(void *d);
};

/* TTFTRACE_ZLIB=1 keeps zlib's deflate and inflate (tests compare them).
 * A writer gets the compressor, a reader the decompressor. */
static void ldeflate_open(struct ldeflate *ld, bool writer)
{
	void *(*alloc_c)(int level);
	void *(*alloc_d)(void);
	const char *env = getenv("TTFTRACE_ZLIB");

	if (env && *env && strcmp(env, "0"))
		return;
	ld->lib = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
	if (!ld->lib)
		return;
	if (writer) {
		*(void **)&alloc_c =
			dlsym(ld->lib, "libdeflate_alloc_compressor");
		*(void **)&ld->compress =
			dlsym(ld->lib, "libdeflate_zlib_compress");
		*(void **)&ld->free_c =
			dlsym(ld->lib, "libdeflate_free_compressor");
		if (alloc_c && ld->compress && ld->free_c)
			ld->c = alloc_c(1);
	} else {
		*(void **)&alloc_d =
			dlsym(ld->lib, "libdeflate_alloc_decompressor");
		*(void **)&ld->decompress =
			dlsym(ld->lib, "libdeflate_zlib_decompress_ex");
		*(void **)&ld->free_d =
			dlsym(ld->lib, "libdeflate_free_decompressor");
		if (alloc_d && ld->decompress && ld->free_d)
			ld->d = alloc_d();
	}
	if (!ld->c && !ld->d) {
		dlclose(ld->lib);
		memset(ld, 0, sizeof(*ld));
	}
}

static void ldeflate_close(struct ldeflate *ld)
{
	if (ld->c)
		ld->free_c(ld->c);
	if (ld->d)
		ld->free_d(ld->d);
	if (ld->lib)
		dlclose(ld->lib);
}

/* ---- writer ---- */

struct tt_writer {
	int fd;
	bool zs_ready;
	z_stream zs;
	struct ldeflate ld;
	struct ttfile_codec codec;
	uint8_t *raw; /* encoded records of the current block */
	size_t raw_len;
	uint32_t raw_events;
	uint8_t *out; /* frame and compressed data */
	size_t out_cap;
	struct tt_write_stats stats;
};

static uint8_t *put_str(uint8_t *p, const char *s, size_t size)
{
	size_t n = strnlen(s, size - 1);

	/* ours (host, kernel, options) filled their fields: cut at a UTF-8
	 * character boundary, a command line cut mid-character is not UTF-8;
	 * comms stay the kernel's bytes */
	if (n == size - 1 && size > TT_COMM_LEN)
		n = tt_utf8_cut(s, n);

	p[0] = n;
	p[1] = n >> 8;
	memcpy(p + 2, s, n);
	return p + 2 + n;
}

/* Serializes the header; returns its length or 0 with errno set. */
static size_t build_header(const struct tt_file_meta *m, uint8_t **bufp)
{
	static const struct tt_file_meta empty;
	const struct tt_proc_info *pi;
	const struct tt_dev_info *di;
	size_t cap, i;
	uint8_t *buf, *p;

	if (!m)
		m = &empty;
	if (m->nprocs > TTF_MAX_PROCS || m->ndevs > TTF_MAX_DEVS ||
	    (m->nprocs && !m->procs) || (m->ndevs && !m->devs)) {
		errno = EINVAL;
		return 0;
	}
	cap = TTF_HDR_FIXED + 4 + 3 * 2 + sizeof(m->hostname) +
	      sizeof(m->kernel) + sizeof(m->options) + 16 + 8 +
	      m->nprocs * (8 + 2 + sizeof(pi->comm)) +
	      m->ndevs * (2 + sizeof(di->path) + 8) + 4 + m->ndevs * 12 + 4 +
	      2 + sizeof(m->recorder);
	buf = malloc(cap);
	if (!buf)
		return 0;
	memcpy(buf, TTF_MAGIC, TTF_MAGIC_LEN);
	ttfile_put_le32(buf + 8, TTF_VERSION);
	p = buf + TTF_HDR_FIXED;
	p = put_str(p, m->hostname, sizeof(m->hostname));
	p = put_str(p, m->kernel, sizeof(m->kernel));
	ttfile_put_le64(p, m->mono_ns);
	ttfile_put_le64(p + 8, m->real_ns);
	p = put_str(p + 16, m->options, sizeof(m->options));
	ttfile_put_le32(p, m->nprocs);
	p += 4;
	for (i = 0; i < m->nprocs; i++) {
		pi = &m->procs[i];
		ttfile_put_le32(p, pi->tgid);
		ttfile_put_le32(p + 4, pi->tid);
		p = put_str(p + 8, pi->comm, sizeof(pi->comm));
	}
	ttfile_put_le32(p, m->ndevs);
	p += 4;
	for (i = 0; i < m->ndevs; i++) {
		di = &m->devs[i];
		p = put_str(p, di->path, sizeof(di->path));
		ttfile_put_le32(p, di->rdev);
		ttfile_put_le32(p + 4, di->kind);
		p += 8;
	}
	ttfile_put_le32(p, m->ndevs);
	p += 4;
	for (i = 0; i < m->ndevs; i++) {
		ttfile_put_le32(p, m->devs[i].dev);
		ttfile_put_le64(p + 4, m->devs[i].ino);
		p += 12;
	}
	/* whose syscall numbers the records hold: this build's by default */
	ttfile_put_le32(p, m->arch ? m->arch : TT_ARCH);
	p += 4;
	p = put_str(p, m->recorder, sizeof(m->recorder));
	ttfile_put_le32(buf + 12, p - buf - TTF_HDR_FIXED);
	ttfile_put_le32(p,
			crc32_of(buf + TTF_MAGIC_LEN, p - buf - TTF_MAGIC_LEN));
	p += 4;
	*bufp = buf;
	return p - buf;
}

static void writer_free(struct tt_writer *w)
{
	ldeflate_close(&w->ld);
	if (w->zs_ready)
		deflateEnd(&w->zs);
	free(w->raw);
	free(w->out);
	free(w);
}

struct tt_writer *tt_writer_open_fd(int fd, const struct tt_file_meta *meta)
{
	struct tt_writer *w = NULL;
	uint8_t *hdr = NULL;
	size_t hdr_len;
	struct stat st;
	int err;

	hdr_len = build_header(meta, &hdr);
	if (!hdr_len)
		goto cleanup;
	w = calloc(1, sizeof(*w));
	if (!w)
		goto cleanup;
	w->fd = fd;
	fd = -1;
	/* level 1: twice the speed of the default for ~5% more bytes; the
	 * writer must keep up with the ring buffer */
	if (deflateInit(&w->zs, Z_BEST_SPEED) != Z_OK) {
		errno = ENOMEM;
		goto cleanup;
	}
	w->zs_ready = true;
	ldeflate_open(&w->ld, true);
	w->stats.libdeflate = w->ld.c != NULL;
	w->raw = malloc(TTF_BLOCK_TARGET + TTFILE_REC_MAX);
	w->out_cap = TTF_FRAME_LEN +
		     deflateBound(&w->zs, TTF_BLOCK_TARGET + TTFILE_REC_MAX);
	w->out = malloc(w->out_cap);
	if (!w->raw || !w->out)
		goto cleanup;
	/* 0600 whatever the umask or an earlier file's mode */
	if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_mode & 07777) != 0600 && fchmod(w->fd, 0600) < 0)
		goto cleanup;
	err = write_all(w->fd, hdr, hdr_len);
	if (err) {
		errno = -err;
		goto cleanup;
	}
	w->stats.bytes = hdr_len;
	free(hdr);
	return w;

cleanup:
	err = errno;
	free(hdr);
	if (fd >= 0)
		close(fd);
	if (w) {
		if (w->fd >= 0)
			close(w->fd);
		writer_free(w);
	}
	errno = err;
	return NULL;
}

struct tt_writer *tt_writer_open(const char *path,
				 const struct tt_file_meta *meta)
{
	/* never through a link planted at path */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
				    O_CLOEXEC, 0600);

	if (fd < 0)
		return NULL;
	return tt_writer_open_fd(fd, meta);
}

/* Compresses and writes the current block. On a write error the block's
 * events are dropped and a partly written block is cut off again. */
static int write_block(struct tt_writer *w)
{
	uint8_t *f = w->out;
	size_t clen;
	int err;

	if (!w->raw_events)
		return 0;
	/* 0: it did not fit deflateBound's room (it always does) */
	clen = w->ld.c ? w->ld.compress(w->ld.c, w->raw, w->raw_len,
					w->out + TTF_FRAME_LEN,
					w->out_cap - TTF_FRAME_LEN) :
			 0;
	if (!clen) {
		deflateReset(&w->zs);
		w->zs.next_in = w->raw;
		w->zs.avail_in = w->raw_len;
		w->zs.next_out = w->out + TTF_FRAME_LEN;
		w->zs.avail_out = w->out_cap - TTF_FRAME_LEN;
		if (deflate(&w->zs, Z_FINISH) != Z_STREAM_END) {
			err = -EIO;
			goto cleanup;
		}
		clen = w->zs.total_out;
	}
	memcpy(f, block_marker, sizeof(block_marker));
	ttfile_put_le32(f + 4, clen);
	ttfile_put_le32(f + 8, w->raw_len);
	ttfile_put_le32(f + 12, w->raw_events);
	ttfile_put_le32(f + 16, crc32_of(f + TTF_FRAME_LEN, clen));
	ttfile_put_le32(f + 20, crc32_of(f, 20));
	err = write_all(w->fd, f, TTF_FRAME_LEN + clen);
	if (err) {
		/* fails harmlessly where the output is not a regular file */
		if (ftruncate(w->fd, w->stats.bytes) == 0)
			lseek(w->fd, w->stats.bytes, SEEK_SET);
		goto cleanup;
	}
	w->stats.bytes += TTF_FRAME_LEN + clen;
	w->stats.blocks++;
	w->stats.events += w->raw_events;

cleanup:
	w->raw_len = 0;
	w->raw_events = 0;
	ttfile_codec_reset(&w->codec);
	return err;
}

int tt_writer_add(struct tt_writer *w, const struct tt_event *ev)
{
	size_t n;

	if (!w || !ev)
		return -EINVAL;
	n = ttfile_encode(&w->codec, ev, w->raw + w->raw_len);
	if (!n)
		return -EINVAL;
	w->raw_len += n;
	w->raw_events++;
	if (w->raw_len >= TTF_BLOCK_TARGET)
		return write_block(w);
	return 0;
}

int tt_writer_flush(struct tt_writer *w)
{
	if (!w)
		return -EINVAL;
	return write_block(w);
}

/* Marks the recording whole: only a writer that got this far writes it. */
static int write_trailer(struct tt_writer *w)
{
	uint8_t t[TTF_FRAME_LEN];
	int err;

	memcpy(t, trailer_marker, sizeof(trailer_marker));
	ttfile_put_le32(t + 4, w->stats.blocks);
	ttfile_put_le64(t + 8, w->stats.events);
	ttfile_put_le32(t + 16, 0);
	ttfile_put_le32(t + 20, crc32_of(t, 20));
	err = write_all(w->fd, t, sizeof(t));
	if (err) {
		/* a cut trailer would read as a cut block: none at all */
		if (ftruncate(w->fd, w->stats.bytes) == 0)
			lseek(w->fd, w->stats.bytes, SEEK_SET);
		return err;
	}
	w->stats.bytes += sizeof(t);
	return 0;
}

int tt_writer_close(struct tt_writer *w, struct tt_write_stats *stats)
{
	int err;

	if (!w)
		return -EINVAL;
	err = write_block(w);
	if (!err)
		err = write_trailer(w);
	if (close(w->fd) < 0 && !err)
		err = -errno;
	if (stats)
		*stats = w->stats;
	writer_free(w);
	return err;
}

bool tt_file_is_recording(const char *path)
{
	char magic[TTF_MAGIC_LEN];
	bool ret;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	ret = read(fd, magic, sizeof(magic)) == sizeof(magic) &&
	      !memcmp(magic, TTF_MAGIC, sizeof(magic));
	close(fd);
	return ret;
}

/* ---- reader ---- */

/* Buffered input that grows only as data arrives, so no length field can
 * make it allocate more than about twice what the file holds. */
struct ttf_in {
	int fd;
	uint8_t *buf;
	size_t cap, pos, end;
	bool eof;
};

static size_t in_avail(const struct ttf_in *in)
{
	return in->end - in->pos;
}

/* Makes want bytes available at pos unless the file ends first. 0 or
 * -errno on a read error or no memory. */
static int in_fill(struct ttf_in *in, size_t want)
{
	if (in_avail(in) >= want)
		return 0;
	if (in->pos && in->pos + want > in->cap) {
		memmove(in->buf, in->buf + in->pos, in_avail(in));
		in->end -= in->pos;
		in->pos = 0;
	}
	while (in_avail(in) < want && !in->eof) {
		ssize_t n;

		if (in->end == in->cap) {
			size_t cap = in->cap ? in->cap * 2 : TTF_READ_CHUNK;
			uint8_t *buf = realloc(in->buf, cap);

			if (!buf)
				return -ENOMEM;
			in->buf = buf;
			in->cap = cap;
		}
		n = read(in->fd, in->buf + in->end, in->cap - in->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			in->eof = true;
		in->end += n;
	}
	return 0;
}

struct frame {
	uint32_t clen, ulen, nevents, crc;
};

struct tt_reader {
	struct ttf_in in;
	bool zs_ready;
	z_stream zs;
	struct ldeflate ld;
	struct ttfile_codec codec;
	uint8_t *raw;
	size_t raw_cap;
	struct tt_event *evs; /* the current block, decoded */
	size_t evs_cap, nevs, cur;
	bool done;
	struct tt_file_meta meta;
	struct tt_read_stats stats;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint32_t cur_u32(struct cursor *c)
{
	uint32_t v;

	if (c->bad || c->end - c->p < 4) {
		c->bad = true;
		return 0;
	}
	v = ttfile_get_le32(c->p);
	c->p += 4;
	return v;
}

static uint64_t cur_u64(struct cursor *c)
{
	uint64_t v;

	if (c->bad || c->end - c->p < 8) {
		c->bad = true;
		return 0;
	}
	v = ttfile_get_le64(c->p);
	c->p += 8;
	return v;
}

/* Copies a string that must fit in size bytes with its NUL. */
static void cur_str(struct cursor *c, char *dst, size_t size)
{
	size_t n;

	if (c->bad || c->end - c->p < 2) {
		c->bad = true;
		return;
	}
	n = c->p[0] | (size_t)c->p[1] << 8;
	if (n >= size || (size_t)(c->end - c->p - 2) < n) {
		c->bad = true;
		return;
	}
	memcpy(dst, c->p + 2, n);
	dst[n] = '\0';
	c->p += 2 + n;
}

/* Parses the header body; returns NULL or what is wrong. */
static const char *parse_meta(struct tt_file_meta *m, const uint8_t *body,
			      size_t len)
{
	struct cursor c = { body, body + len, false };
	size_t i, n;

	cur_str(&c, m->hostname, sizeof(m->hostname));
	cur_str(&c, m->kernel, sizeof(m->kernel));
	m->mono_ns = cur_u64(&c);
	m->real_ns = cur_u64(&c);
	cur_str(&c, m->options, sizeof(m->options));
	if (c.bad)
		return "host, kernel, clock or options";
	n = cur_u32(&c);
	/* each entry takes at least 10 bytes: bounds the allocation */
	if (c.bad || n > TTF_MAX_PROCS || n > (size_t)(c.end - c.p) / 10)
		return "process count";
	m->procs = n ? calloc(n, sizeof(*m->procs)) : NULL;
	if (n && !m->procs)
		return "out of memory";
	m->nprocs = n;
	for (i = 0; i < n; i++) {
		m->procs[i].tgid = cur_u32(&c);
		m->procs[i].tid = cur_u32(&c);
		cur_str(&c, m->procs[i].comm, sizeof(m->procs[i].comm));
	}
	if (c.bad)
		return "process table";
	n = cur_u32(&c);
	if (c.bad || n > TTF_MAX_DEVS || n > (size_t)(c.end - c.p) / 10)
		return "device count";
	m->devs = n ? calloc(n, sizeof(*m->devs)) : NULL;
	if (n && !m->devs)
		return "out of memory";
	m->ndevs = n;
	for (i = 0; i < n; i++) {
		cur_str(&c, m->devs[i].path, sizeof(m->devs[i].path));
		m->devs[i].rdev = cur_u32(&c);
		m->devs[i].kind = cur_u32(&c);
	}
	if (c.bad)
		return "device table";
	/* the inode of each device, appended later: absent in older files */
	if (c.p < c.end && cur_u32(&c) == n) {
		for (i = 0; i < n; i++) {
			m->devs[i].dev = cur_u32(&c);
			m->devs[i].ino = cur_u64(&c);
		}
		if (c.bad)
			return "device inodes";
		/* the architecture, appended in version 2: older files are
		 * x86-64's */
		if (c.p < c.end) {
			m->arch = cur_u32(&c);
			if (c.bad)
				return "architecture";
		}
		/* the recorder's version, appended in 2.1 */
		if (c.p < c.end) {
			cur_str(&c, m->recorder, sizeof(m->recorder));
			if (c.bad)
				return "recorder version";
		}
	}
	return NULL;
}

void tt_reader_close(struct tt_reader *r)
{
	if (!r)
		return;
	if (r->in.fd >= 0)
		close(r->in.fd);
	if (r->zs_ready)
		inflateEnd(&r->zs);
	ldeflate_close(&r->ld);
	free(r->in.buf);
	free(r->raw);
	free(r->evs);
	free(r->meta.procs);
	free(r->meta.devs);
	free(r);
}

struct tt_reader *tt_reader_open(const char *path, char *err, size_t errlen)
{
	struct tt_reader *r;
	const uint8_t *h;
	uint32_t version, body_len;
	size_t avail;
	const char *why;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r) {
		set_err(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	r->in.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->in.fd < 0) {
		set_err(err, errlen, "%s: %s", path, strerror(errno));
		goto cleanup;
	}
	ret = in_fill(&r->in, TTF_HDR_FIXED);
	if (ret) {
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		goto cleanup;
	}
	avail = in_avail(&r->in);
	h = r->in.buf;
	if (!avail) {
		set_err(err, errlen, "%s: empty file, not a ttftrace recording",
			path);
		goto cleanup;
	}
	if (memcmp(h, TTF_MAGIC,
		   avail < TTF_MAGIC_LEN ? avail : TTF_MAGIC_LEN)) {
		set_err(err, errlen, "%s: not a ttftrace recording (bad magic)",
			path);
		goto cleanup;
	}
	if (avail < TTF_HDR_FIXED) {
		set_err(err, errlen, "%s: truncated header", path);
		goto cleanup;
	}
	version = ttfile_get_le32(h + 8);
	body_len = ttfile_get_le32(h + 12);
	if (version > TTF_VERSION) {
		set_err(err, errlen,
			"%s: recording format version %u is newer than this ttftrace reads (%u)",
			path, version, TTF_VERSION);
		goto cleanup;
	}
	if (version == 0 || body_len > TTF_HDR_BODY_MAX) {
		set_err(err, errlen,
			"%s: corrupt header (version %u, length %u)", path,
			version, body_len);
		goto cleanup;
	}
	ret = in_fill(&r->in, TTF_HDR_FIXED + (size_t)body_len + 4);
	if (ret) {
		set_err(err, errlen, "%s: %s", path, strerror(-ret));
		goto cleanup;
	}
	if (in_avail(&r->in) < TTF_HDR_FIXED + (size_t)body_len + 4) {
		set_err(err, errlen, "%s: truncated header", path);
		goto cleanup;
	}
	h = r->in.buf; /* in_fill may have moved it */
	if (!crc_matches(crc32_of(h + TTF_MAGIC_LEN,
				  TTF_HDR_FIXED - TTF_MAGIC_LEN + body_len),
			 ttfile_get_le32(h + TTF_HDR_FIXED + body_len))) {
		set_err(err, errlen, "%s: corrupt header (checksum mismatch)",
			path);
		goto cleanup;
	}
	why = parse_meta(&r->meta, h + TTF_HDR_FIXED, body_len);
	if (why) {
		set_err(err, errlen, "%s: corrupt header (%s)", path, why);
		goto cleanup;
	}
	r->in.pos += TTF_HDR_FIXED + (size_t)body_len + 4;
	r->stats.trailer_expected = version >= TTF_VERSION_TRAILER;
	if (inflateInit(&r->zs) != Z_OK) {
		set_err(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	r->zs_ready = true;
	ldeflate_open(&r->ld, false);
	r->stats.libdeflate = r->ld.d != NULL;
	return r;

cleanup:
	tt_reader_close(r);
	return NULL;
}

const struct tt_file_meta *tt_reader_meta(const struct tt_reader *r)
{
	return &r->meta;
}

/* The trailer at p, checked: the recording was closed properly. */
static bool trailer_parse(struct tt_reader *r, const uint8_t *p)
{
	if (memcmp(p, trailer_marker, sizeof(trailer_marker)) ||
	    !crc_matches(crc32_of(p, 20), ttfile_get_le32(p + 20)))
		return false;
	r->stats.closed = true;
	r->stats.trailer_events = ttfile_get_le64(p + 8);
	return true;
}

/* Checks the frame at p: marker, its own CRC, sane lengths. */
static bool frame_parse(const uint8_t *p, struct frame *f)
{
	if (memcmp(p, block_marker, sizeof(block_marker)))
		return false;
	if (!crc_matches(crc32_of(p, 20), ttfile_get_le32(p + 20)))
		return false;
	f->clen = ttfile_get_le32(p + 4);
	f->ulen = ttfile_get_le32(p + 8);
	f->nevents = ttfile_get_le32(p + 12);
	f->crc = ttfile_get_le32(p + 16);
	return f->ulen <= TTF_BLOCK_RAW_MAX && f->clen > 0 &&
	       f->clen <= compressBound(f->ulen) && f->nevents > 0 &&
	       f->nevents <= f->ulen / TTFILE_REC_MIN;
}

/* The frame at pos is invalid: scans for the next valid one. Returns 1
 * when pos is at a valid frame (in *f), 0 at the end of the file. */
static int resync(struct tt_reader *r, struct frame *f)
{
	struct ttf_in *in = &r->in;

	in->pos++;
	for (;;) {
		const uint8_t *hit = memmem(in->buf + in->pos, in_avail(in),
					    block_marker, sizeof(block_marker));
		size_t keep;

		if (hit) {
			in->pos = hit - in->buf;
			if (in_fill(in, TTF_FRAME_LEN) ||
			    in_avail(in) < TTF_FRAME_LEN) {
				r->stats.truncated = true;
				return 0;
			}
			if (frame_parse(in->buf + in->pos, f))
				return 1;
			in->pos++;
			continue;
		}
		if (in->eof) {
			in->pos = in->end;
			return 0;
		}
		/* keep a marker's worth of bytes that a read may complete */
		keep = in_avail(in) < 3 ? in_avail(in) : 3;
		in->pos = in->end - keep;
		if (in_fill(in, keep + 1)) {
			r->stats.truncated = true;
			return 0;
		}
	}
}

/* Reads, checks and decodes the next block into r->evs; sets done at the
 * end of the readable data. */
/* Inflates a block's data into r->raw: exactly ulen bytes from all clen. */
static bool inflate_block(struct tt_reader *r, const uint8_t *data,
			  uint32_t clen, uint32_t ulen)
{
	size_t used;

	if (r->ld.d)
		return !r->ld.decompress(r->ld.d, data, clen, r->raw, ulen,
					 &used, NULL) &&
		       used == clen;
	inflateReset(&r->zs);
	r->zs.next_in = (uint8_t *)data;
	r->zs.avail_in = clen;
	r->zs.next_out = r->raw;
	r->zs.avail_out = ulen;
	return inflate(&r->zs, Z_FINISH) == Z_STREAM_END && !r->zs.avail_out &&
	       !r->zs.avail_in;
}

static void load_block(struct tt_reader *r)
{
	struct ttf_in *in = &r->in;
	const uint8_t *data, *p, *end;
	struct frame f;
	size_t i;

	r->nevs = r->cur = 0;
	if (in_fill(in, TTF_FRAME_LEN)) {
		r->stats.truncated = true;
		r->done = true;
		return;
	}
	if (!in_avail(in)) {
		r->done = true;
		return;
	}
	if (in_avail(in) < TTF_FRAME_LEN) {
		r->stats.truncated = true;
		r->done = true;
		return;
	}
	if (trailer_parse(r, in->buf + in->pos)) {
		in->pos += TTF_FRAME_LEN;
		r->done = true;
		return;
	}
	if (!frame_parse(in->buf + in->pos, &f)) {
		r->stats.blocks_bad++;
		if (!resync(r, &f)) {
			r->done = true;
			return;
		}
	}
	if (in_fill(in, TTF_FRAME_LEN + (size_t)f.clen) ||
	    in_avail(in) < TTF_FRAME_LEN + (size_t)f.clen) {
		r->stats.truncated = true;
		r->done = true;
		return;
	}
	data = in->buf + in->pos + TTF_FRAME_LEN;
	in->pos += TTF_FRAME_LEN + (size_t)f.clen;
	if (!crc_matches(crc32_of(data, f.clen), f.crc))
		goto bad;

	if (r->raw_cap < f.ulen) {
		uint8_t *raw = realloc(r->raw, f.ulen);

		if (!raw)
			goto bad;
		r->raw = raw;
		r->raw_cap = f.ulen;
	}
	if (!inflate_block(r, data, f.clen, f.ulen))
		goto bad;

	ttfile_codec_reset(&r->codec);
	p = r->raw;
	end = r->raw + f.ulen;
	for (i = 0; i < f.nevents; i++) {
		if (i == r->evs_cap) {
			/* grows with what decodes, not with nevents */
			size_t cap = r->evs_cap ? r->evs_cap * 2 : 1024;
			struct tt_event *evs;

			evs = reallocarray(r->evs, cap, sizeof(*evs));
			if (!evs)
				goto bad;
			r->evs = evs;
			r->evs_cap = cap;
		}
		if (ttfile_decode(&r->codec, &p, end, &r->evs[i]))
			goto bad;
	}
	if (p != end)
		goto bad;
	r->nevs = f.nevents;
	r->stats.blocks_ok++;
	return;

bad:
	r->stats.blocks_bad++;
}

int tt_reader_next(struct tt_reader *r, struct tt_event *ev)
{
	while (r->cur == r->nevs) {
		if (r->done)
			return 0;
		load_block(r);
	}
	*ev = r->evs[r->cur++];
	r->stats.events++;
	return 1;
}

void tt_reader_stats(const struct tt_reader *r, struct tt_read_stats *st)
{
	*st = r->stats;
}
