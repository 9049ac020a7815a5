/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Send classification from a send's first bytes (see classify.h). */
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "classify.h"

/* Longest chunk-size line we accept: 8 hex digits is 4 GiB per chunk. */
#define CHUNK_HEX_MAX 8

struct sse_result {
	unsigned int tokens; /* data events other than [DONE] */
	bool done; /* a "data: [DONE]" event */
	bool sse; /* any "data:" line */
	size_t cut_start; /* where a line cut by the end begins, else n */
};

static const char data_kw[] = "data:";

static bool is_hex(__u8 c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static unsigned int hex_value(__u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return c - 'A' + 10;
}

static bool is_digit(__u8 c)
{
	return c >= '0' && c <= '9';
}

/* "HTTP/1.x NNN": returns the status code, or 0 when p is no status line. */
static unsigned int status_code(const __u8 *p, size_t n)
{
	if (n < 12 || memcmp(p, "HTTP/1.", 7) || !is_digit(p[7]) ||
	    p[8] != ' ' || !is_digit(p[9]) || !is_digit(p[10]) ||
	    !is_digit(p[11]))
		return 0;
	if (n > 12 && p[12] != ' ' && p[12] != '\r' && p[12] != '\n')
		return 0;
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

/* Case-insensitive search of needle in p[0..n). */
static bool contains_ci(const __u8 *p, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; i + k <= n; i++)
		if (!strncasecmp((const char *)p + i, needle, k))
			return true;
	return false;
}

/* What the header block says of the body's framing. */
struct hdr_info {
	bool chunked; /* Transfer-Encoding: ... chunked */
	bool closes; /* HTTP/1.0, or Connection: close: the close may end it */
	bool event_stream; /* Content-Type: text/event-stream */
	bool has_length;
	__u64 length; /* Content-Length */
};

/* The value of header line p[0..len) when it is name (lowercase, with the
 * colon), else NULL; *vlen is its length. */
static const __u8 *header_value(const __u8 *p, size_t len, const char *name,
				size_t *vlen)
{
	size_t k = strlen(name);

	if (len <= k || strncasecmp((const char *)p, name, k))
		return NULL;
	*vlen = len - k;
	return p + k;
}

static void scan_headers(const __u8 *p, size_t n, struct hdr_info *h)
{
	size_t i = 0, start, len, vlen, j;
	const __u8 *v;
	__u64 x;

	memset(h, 0, sizeof(*h));
	h->closes = n >= 8 && !memcmp(p, "HTTP/1.0", 8);
	while (i < n) {
		start = i;
		while (i < n && p[i] != '\n')
			i++;
		len = i - start;
		i++;
		v = header_value(p + start, len, "transfer-encoding:", &vlen);
		if (v && contains_ci(v, vlen, "chunked"))
			h->chunked = true;
		v = header_value(p + start, len, "connection:", &vlen);
		if (v && contains_ci(v, vlen, "close"))
			h->closes = true;
		v = header_value(p + start, len, "content-type:", &vlen);
		if (v && contains_ci(v, vlen, "event-stream"))
			h->event_stream = true;
		v = header_value(p + start, len, "content-length:", &vlen);
		if (!v)
			continue;
		for (j = 0; j < vlen && (v[j] == ' ' || v[j] == '\t'); j++)
			;
		start = j;
		for (x = 0; j < vlen && is_digit(v[j]) && x < (1ULL << 59); j++)
			x = x * 10 + (v[j] - '0');
		if (j > start && (j == vlen || v[j] == '\r' || v[j] == ' ')) {
			h->has_length = true;
			h->length = x;
		}
	}
}

/* One chunk-size line at p[0..n): its size and length, false when it is
 * none or is cut by n. */
static bool size_line(const __u8 *p, size_t n, __u64 *size, size_t *len)
{
	size_t h;

	*size = 0;
	for (h = 0; h < n && is_hex(p[h]) && h <= CHUNK_HEX_MAX; h++)
		*size = *size * 16 + hex_value(p[h]);
	if (!h || h > CHUNK_HEX_MAX)
		return false;
	if (h < n && p[h] == ';') /* chunk extension */
		while (h < n && p[h] != '\r' && p[h] != '\n')
			h++;
	if (h + 1 >= n || p[h] != '\r' || p[h + 1] != '\n')
		return false;
	*len = h + 2;
	return true;
}

/*
 * Follows a chunked body over len bytes of a send, of which p[0..n) were
 * captured: payloads are skipped by their sizes, so only the chunk-size
 * lines need to lie in the capture. True at the last chunk ("0\r\n"; its
 * trailers are not waited for). A size line past the capture loses the
 * track (TT_FRAME_NONE).
 */
static bool chunks_follow(struct tt_sse_carry *c, const __u8 *p, size_t n,
			  __u64 len)
{
	__u64 pos = 0, k, size;
	size_t l;

	while (pos < len) {
		if (c->left) {
			k = len - pos < c->left ? len - pos : c->left;
			c->left -= k;
			pos += k;
			continue;
		}
		if (pos >= n || !size_line(p + pos, n - pos, &size, &l)) {
			c->frame = TT_FRAME_NONE;
			return false;
		}
		pos += l;
		if (!size) {
			c->frame = TT_FRAME_NONE;
			return true;
		}
		c->left = size + 2;
	}
	return false;
}

/* Takes len body bytes (p[0..n) of them captured) into the framing; true
 * when the body's last byte is among them. */
static bool frame_body(struct tt_sse_carry *c, const __u8 *p, size_t n,
		       __u64 len)
{
	switch (c->frame) {
	case TT_FRAME_LENGTH:
		if (len < c->left) {
			c->left -= len;
			return false;
		}
		c->frame = TT_FRAME_NONE;
		c->left = 0;
		return true;
	case TT_FRAME_CHUNKED:
		return chunks_follow(c, p, n, len);
	}
	return false;
}

/* A status line's headers set the framing of the body that follows. */
static void frame_begin(struct tt_sse_carry *c, const struct hdr_info *h,
			unsigned int code, struct tt_send *send)
{
	c->left = 0;
	c->chunked = h->chunked ? 1 : 2;
	if (code == 204 || code == 304) {
		c->frame = TT_FRAME_NONE; /* no body */
		send->flags |= TT_SEND_F_END;
	} else if (h->chunked) {
		c->frame = TT_FRAME_CHUNKED;
	} else if (h->has_length) {
		c->frame = TT_FRAME_LENGTH;
		c->left = h->length;
		if (!h->length)
			send->flags |= TT_SEND_F_END;
	} else {
		/* a body the close ends (RFC 9112 §6.3), but an event stream
		 * the server did not say it closes (HTTP/1.1, no Connection:
		 * close) ends at its [DONE]: a close before it cuts it */
		c->frame = TT_FRAME_CLOSE;
		if (h->closes || !h->event_stream)
			send->flags |= TT_SEND_F_CLOSE_DELIM;
	}
}

/*
 * Removes chunked framing from p[0..n) into out (which holds n bytes).
 * Returns false when p does not begin with a chunk (then out is unused).
 * A chunk whose payload runs past the capture ends the scan; *terminator
 * is set by the last chunk ("0\r\n"). declared: the headers said chunked,
 * so a framing error after the first chunk keeps what was decoded.
 */
static bool dechunk(const __u8 *p, size_t n, bool declared, __u8 *out,
		    size_t *outn, bool *terminator)
{
	size_t pos = 0, o = 0, h, take;
	unsigned int chunks = 0;
	__u64 size;

	*terminator = false;
	while (pos < n) {
		size = 0;
		for (h = pos; h < n && is_hex(p[h]) && h - pos <= CHUNK_HEX_MAX;
		     h++)
			size = size * 16 + hex_value(p[h]);
		if (h == pos || h - pos > CHUNK_HEX_MAX)
			goto bad_frame;
		if (h < n && p[h] == ';') /* chunk extension */
			while (h < n && p[h] != '\r' && p[h] != '\n')
				h++;
		if (h >= n || (p[h] == '\r' && h + 1 >= n)) {
			/* size line cut by the capture */
			if (!chunks)
				return false;
			break;
		}
		if (p[h] != '\r' || p[h + 1] != '\n')
			goto bad_frame;
		pos = h + 2;
		chunks++;
		if (!size) {
			*terminator = true;
			break;
		}
		take = n - pos < size ? n - pos : size;
		memcpy(out + o, p + pos, take);
		o += take;
		pos += take;
		if (take < size || pos >= n)
			break;
		/* the CRLF that closes the chunk's payload */
		if (p[pos] != '\r' || (pos + 1 < n && p[pos + 1] != '\n'))
			goto bad_frame;
		pos += 2;
	}
	*outn = o;
	return true;

bad_frame:
	/* one unchecked chunk of an undeclared body is more likely text */
	if (!chunks || (chunks == 1 && !declared))
		return false;
	*outn = o;
	return true;
}

/*
 * Counts SSE events that have a "data:" line. Each line start is checked;
 * a blank line ends an event; an event still open at the end of the
 * capture counts too (its blank line is beyond the captured bytes).
 */
/* The first CR or LF of p[i..n), or n: by memchr, every send of a stream
 * comes here (the recorder's hottest loop, byte by byte). */
static size_t line_end(const __u8 *p, size_t i, size_t n)
{
	const __u8 *lf = memchr(p + i, '\n', n - i);
	size_t e = lf ? (size_t)(lf - p) : n;
	const __u8 *cr = memchr(p + i, '\r', e - i);

	return cr ? (size_t)(cr - p) : e;
}

static void sse_scan(const __u8 *p, size_t n, struct sse_result *res)
{
	bool has_data = false, is_done = false, cut;
	size_t i = 0, start, len, vlen;
	const __u8 *v;

	memset(res, 0, sizeof(*res));
	res->cut_start = n;
	while (i < n) {
		start = i;
		i = line_end(p, i, n);
		len = i - start;
		cut = i >= n;
		if (cut)
			res->cut_start = start;
		/* one line end: CRLF, CR or LF */
		if (i < n && p[i] == '\r') {
			i++;
			if (i < n && p[i] == '\n')
				i++;
		} else if (i < n) {
			i++;
		}
		if (!len) {
			if (has_data) {
				if (is_done)
					res->done = true;
				else
					res->tokens++;
			}
			has_data = false;
			is_done = false;
			continue;
		}
		if (len < 5 || memcmp(p + start, data_kw, 5))
			continue;
		res->sse = true;
		has_data = true;
		v = p + start + 5;
		vlen = len - 5;
		if (vlen && *v == ' ')
			v++, vlen--;
		if (vlen == 6 && !memcmp(v, "[DONE]", 6))
			is_done = true;
		/* "data: [DO" cut by the capture: most likely the end */
		else if (cut && vlen >= 2 && vlen < 6 &&
			 !memcmp(v, "[DONE]", vlen))
			is_done = true;
	}
	if (has_data) {
		if (is_done)
			res->done = true;
		else
			res->tokens++;
	}
}

/*
 * The start of a line cut by the send's end that may still become "data:"
 * (1 to 4 bytes of it): kept in carry for the next send on the connection.
 * whole: the capture holds the send to its last byte.
 */
static void keep_carry(const __u8 *p, size_t n, size_t cut_start, bool whole,
		       struct tt_sse_carry *carry)
{
	size_t k = n - cut_start;

	carry->n = 0;
	if (!whole || !k || k >= sizeof(data_kw) - 1 ||
	    memcmp(p + cut_start, data_kw, k))
		return;
	memcpy(carry->bytes, p + cut_start, k);
	carry->n = k;
}

static void classify_body(const __u8 *body, size_t n, bool declared, bool whole,
			  struct tt_send *send, struct tt_sse_carry *carry)
{
	__u8 buf[TT_SEND_CAPTURE], joined[TT_SEND_CAPTURE + TT_SSE_CARRY];
	const __u8 *payload = body;
	size_t pn = n;
	struct sse_result res;
	bool terminator = false, done;

	if (dechunk(body, n, declared, buf, &pn, &terminator)) {
		send->flags |= TT_SEND_F_CHUNKED;
		payload = buf;
	} else {
		pn = n;
	}
	/* "da" ended the previous send: its line goes on here */
	if (carry && carry->n) {
		memcpy(joined, carry->bytes, carry->n);
		memcpy(joined + carry->n, payload, pn);
		payload = joined;
		pn += carry->n;
	}
	sse_scan(payload, pn, &res);
	if (carry)
		keep_carry(payload, pn, res.cut_start, whole && !terminator,
			   carry);
	if (res.sse)
		send->flags |= TT_SEND_F_SSE;
	done = res.done || terminator;
	send->tokens = res.tokens > 0xffff ? 0xffff : res.tokens;
	if (res.tokens && done)
		send->cls = TT_SEND_TOKEN_DONE;
	else if (res.tokens)
		send->cls = TT_SEND_TOKEN;
	else if (done)
		send->cls = TT_SEND_DONE;
	else
		send->cls = TT_SEND_OTHER;
}

/* A TLS record's header (RFC 8446 5.1: a content type from change cipher
 * spec to application data, version 3.x, a length up to 2^14 + 2048): no
 * HTTP response or body begins with those control bytes */
static bool tls_record(const __u8 *p, size_t n)
{
	return n >= 5 && p[0] >= 0x14 && p[0] <= 0x17 && p[1] == 0x03 &&
	       p[2] <= 0x04 && ((p[3] << 8) | p[4]) <= (1 << 14) + 2048;
}

/* HTTP/2 (RFC 9113 §4.1, §6): a frame's 9-byte header */
#define H2_HEADER 9
enum h2_type {
	H2_DATA = 0,
	H2_HEADERS = 1,
	H2_RST_STREAM = 3,
	H2_SETTINGS = 4,
};
#define H2_END_STREAM 0x1
#define H2_ACK 0x1
#define H2_PADDED 0x8

static __u32 be24(const __u8 *p)
{
	return (__u32)p[0] << 16 | (__u32)p[1] << 8 | p[2];
}

/* The stream of the frame whose header is at p (0: the connection's) */
static __u32 h2_stream(const __u8 *p)
{
	return (__u32)(p[5] & 0x7f) << 24 | be24(p + 6);
}

/* A HEADERS or DATA frame with END_STREAM ends its stream */
static bool h2_end_flag(const __u8 *p)
{
	return (p[3] == H2_HEADERS || p[3] == H2_DATA) &&
	       (p[4] & H2_END_STREAM) && h2_stream(p);
}

/* The server connection preface (§3.4): a SETTINGS frame on stream 0, a
 * whole number of 6-byte settings, is the first frame a server sends; no
 * HTTP/1 response, TLS record or body of one begins with those bytes */
static bool h2_preface(const __u8 *p, size_t n)
{
	__u32 flen;

	if (n < H2_HEADER || p[3] != H2_SETTINGS || (p[4] & ~H2_ACK))
		return false;
	flen = be24(p);
	return flen % 6 == 0 && flen <= 16384 && !(p[5] | p[6] | p[7] | p[8]);
}

/* A response's :status from the first byte of its header block, where it
 * is an entry of HPACK's static table (RFC 7541 appendix A); 0 else */
static unsigned int h2_status(__u8 b)
{
	static const unsigned short code[] = {
		200, 204, 206, 304, 400, 404, 500
	};

	return b >= 0x88 && b <= 0x8e ? code[b - 0x88] : 0;
}

/* A frame of stream sid goes out (its last if end): a stream left unended
 * for another that sends again proves the streams interleaved */
static void h2_track(struct tt_sse_carry *carry, __u32 sid, bool end,
		     struct tt_send *send)
{
	__u32 *left = carry->h2_left;
	size_t i, slot = TT_H2_LEFT - 1;

	for (i = 0; i < TT_H2_LEFT; i++) {
		if (left[i] != sid)
			continue;
		send->flags |= TT_SEND_F_H2_MUX;
		left[i] = 0;
	}
	if (carry->h2_open && carry->h2_open != sid) {
		/* the open one left for sid: into a free place, else the
		 * oldest's */
		for (i = 0; i < TT_H2_LEFT && left[i]; i++)
			;
		if (i == TT_H2_LEFT)
			memmove(left, left + 1, slot * sizeof(*left));
		left[i < TT_H2_LEFT ? i : slot] = carry->h2_open;
	}
	carry->h2_open = end ? 0 : sid;
}

/*
 * The tokens of a DATA frame (its header at f, p + n the capture's end): one
 * gRPC message, or, once the connection's DATA has carried "data:" lines
 * (SSE proxied to an HTTP/2 client: nginx and Caddy frame each upstream
 * read, two events, a [DONE] alone or part of one), its SSE events.
 */
static unsigned int h2_data_tokens(const __u8 *f, const __u8 *end,
				   struct tt_sse_carry *carry, bool *done)
{
	const __u8 *payload = f + H2_HEADER, *stop = payload + be24(f);
	struct sse_result res;

	if (f[4] & H2_PADDED) {
		/* its pad length, then the padding at its end; a gRPC message
		 * whose pad length the capture missed is one all the same */
		if (payload >= end || *payload >= be24(f))
			return !carry->h2_sse;
		stop -= *payload + 1;
		payload++;
	}
	if (stop > end)
		stop = end;
	sse_scan(payload, payload < stop ? stop - payload : 0, &res);
	if (res.sse)
		carry->h2_sse = 1;
	if (!carry->h2_sse)
		return 1;
	if (res.done)
		*done = true;
	return res.tokens;
}

/*
 * The frames of a send on an HTTP/2 connection (gRPC's, a proxy's to its
 * client), followed across sends by their lengths (carry->left: what the
 * last send's last frame still has to come). A stream's HEADERS begin its
 * response (its status when HPACK's static table has it), a DATA frame
 * with a payload has its tokens (h2_data_tokens()), and END_STREAM (the
 * trailers), RST_STREAM or an SSE [DONE] end it. Stream 0's frames
 * (SETTINGS, PING, WINDOW_UPDATE) are the connection's: no response. A
 * frame header past the capture loses the track until the next send, taken
 * to begin with a frame. A stream left unended for another that sends
 * again says the streams are multiplexed (TT_SEND_F_H2_MUX, h2_track()).
 */
static void h2_frames(const __u8 *p, size_t n, __u64 len, struct tt_send *send,
		      struct tt_sse_carry *carry)
{
	__u64 pos = carry->left < len ? carry->left : len, flen;
	unsigned int tokens = 0;
	bool end = false, ends, done = false;
	const __u8 *f;
	__u32 sid, done_sid = 0;

	carry->left -= pos;
	send->flags |= TT_SEND_F_H2;
	while (pos + H2_HEADER <= n) {
		f = p + pos;
		flen = be24(f);
		sid = h2_stream(f);
		/* its stream's last frame (h2_end_flag() says 0's none); a
		 * stream whose [DONE] went out in an earlier send ended then:
		 * its END_STREAM, its RST_STREAM end nothing more */
		ends = h2_end_flag(f) || (sid && f[3] == H2_RST_STREAM);
		if (sid && (f[3] == H2_HEADERS || f[3] == H2_DATA ||
			    f[3] == H2_RST_STREAM))
			h2_track(carry, sid, ends, send);
		if (ends)
			end = end || sid != carry->h2_done;
		else if (sid && f[3] == H2_HEADERS &&
			 !(send->flags & TT_SEND_F_HEADERS)) {
			send->flags |= TT_SEND_F_HEADERS;
			send->status = pos + H2_HEADER < n ?
					       h2_status(f[H2_HEADER]) :
					       0;
		}
		if (sid && f[3] == H2_DATA && flen) {
			tokens += h2_data_tokens(f, p + n, carry, &done);
			/* the stream of the send's first [DONE] */
			if (done && !done_sid)
				done_sid = sid;
		}
		pos += H2_HEADER + flen;
	}
	if (done_sid)
		carry->h2_done = done_sid;
	if (carry->h2_sse && tokens)
		send->flags |= TT_SEND_F_SSE;
	/* the last frame runs into the next send: skip its rest there */
	if (pos > len)
		carry->left = pos - len;
	send->tokens = tokens;
	if (end)
		send->flags |= TT_SEND_F_END;
	end = end || done;
	send->cls = tokens && end		      ? TT_SEND_TOKEN_DONE :
		    tokens			      ? TT_SEND_TOKEN :
		    end				      ? TT_SEND_DONE :
		    (send->flags & TT_SEND_F_HEADERS) ? TT_SEND_HEADERS :
							TT_SEND_OTHER;
}

/* whole: p[0..n) is the send to its last byte (nothing cut by the capture);
 * len: the send's length */
static void classify(const __u8 *p, size_t n, __u64 len, struct tt_send *send,
		     bool allow_interim, struct tt_sse_carry *carry)
{
	bool whole = len == n, declared = false;
	struct hdr_info hi;
	const __u8 *end;
	unsigned int code;
	size_t hdr_len;

	/* an HTTP/2 connection stays one (gRPC between a front and a
	 * backend): its frames, not HTTP/1's lines */
	if (carry && (carry->h2 || (carry->frame == TT_FRAME_NONE &&
				    !carry->chunked && h2_preface(p, n)))) {
		carry->h2 = 1;
		h2_frames(p, n, len, send, carry);
		return;
	}
	code = status_code(p, n);
	if (!code && (!carry || carry->frame == TT_FRAME_NONE) &&
	    tls_record(p, n)) {
		/* inside a body, a payload's bytes are anything */
		send->flags |= TT_SEND_F_TLS;
		return;
	}
	if (code) {
		/* a new response: a line left open by the previous is over */
		if (carry)
			carry->n = 0;
		end = memmem(p, n, "\r\n\r\n", 4);
		if (!end) {
			/* the header block runs past the capture */
			send->flags |= code < 200 ? TT_SEND_F_INTERIM :
						    TT_SEND_F_HEADERS;
			send->cls = code < 200 ? TT_SEND_OTHER :
						 TT_SEND_HEADERS;
			send->status = code < 200 ? 0 : code;
			if (carry && code >= 200)
				carry->frame = TT_FRAME_NONE;
			return;
		}
		hdr_len = end + 4 - p;
		if (code < 200) {
			/* "100 Continue": the real response may follow */
			if (hdr_len < n && allow_interim) {
				classify(p + hdr_len, n - hdr_len,
					 len - hdr_len, send, false, carry);
				return;
			}
			send->flags |= TT_SEND_F_INTERIM;
			send->cls = TT_SEND_OTHER;
			return;
		}
		send->flags |= TT_SEND_F_HEADERS;
		send->status = code;
		scan_headers(p, hdr_len, &hi);
		declared = hi.chunked;
		if (declared)
			send->flags |= TT_SEND_F_CHUNKED;
		if (carry)
			frame_begin(carry, &hi, code, send);
		p += hdr_len;
		n -= hdr_len;
		len -= hdr_len;
		if (!n) {
			/* a body past the capture is unseen: not a token */
			send->cls = whole ? TT_SEND_HEADERS : TT_SEND_OTHER;
			if (carry && len && frame_body(carry, p, 0, len))
				send->flags |= TT_SEND_F_END;
			return;
		}
	}
	classify_body(p, n, declared, whole, send, carry);
	if (carry && frame_body(carry, p, n, len))
		send->flags |= TT_SEND_F_END;
}

/* An HTTP/2 send past its capture: a frame that ends the send exactly
 * (its length from where its header would begin) and ends its stream, the
 * trailers of a server that wrote its last messages and them at once; not
 * a stream whose response a [DONE] ended already */
static void h2_tail(const __u8 *t, size_t k, struct tt_send *send,
		    const struct tt_sse_carry *carry)
{
	size_t o;

	for (o = 0; o + H2_HEADER <= k; o++)
		if (be24(t + o) == k - o - H2_HEADER && h2_end_flag(t + o) &&
		    h2_stream(t + o) != carry->h2_done) {
			send->flags |= TT_SEND_F_END;
			send->cls = send->cls == TT_SEND_TOKEN ?
					    TT_SEND_TOKEN_DONE :
					    TT_SEND_DONE;
			return;
		}
}

/*
 * The send's last bytes, when the capture missed them: "data: [DONE]"
 * there is the stream's end; so is the chunked terminator closing a chunked
 * body ("\r\n0\r\n\r\n", or a last iovec of "0\r\n\r\n" alone).
 */
/* A "data: [DONE]" line in the tail t[0..k): at a line start (or the
 * start of a tail shorter than TT_SEND_TAIL, a whole iovec), ending there
 * or at the tail's end; never inside a token's JSON text. */
static bool tail_done(const __u8 *t, size_t k)
{
	size_t i, e;

	for (i = 0; i + 5 <= k; i++) {
		if (memcmp(t + i, data_kw, 5) ||
		    (i ? t[i - 1] != '\n' && t[i - 1] != '\r' :
			 k >= TT_SEND_TAIL))
			continue;
		e = i + 5 + (i + 5 < k && t[i + 5] == ' ');
		if (e + 6 <= k && !memcmp(t + e, "[DONE]", 6) &&
		    (e + 6 == k || t[e + 6] == '\r' || t[e + 6] == '\n'))
			return true;
	}
	return false;
}

static void classify_tail(const __u8 *t, size_t k, bool chunked,
			  struct tt_send *send, struct tt_sse_carry *carry)
{
	static const char term[] = "\r\n0\r\n\r\n";
	bool done = tail_done(t, k);
	bool end = chunked && ((k >= 7 && !memcmp(t + k - 7, term, 7)) ||
			       (k == 5 && !memcmp(t, term + 2, 5)));

	if (done)
		send->cls = send->cls == TT_SEND_TOKEN ||
					    send->cls == TT_SEND_TOKEN_DONE ?
				    TT_SEND_TOKEN_DONE :
				    TT_SEND_DONE;
	if (!end)
		return;
	send->flags |= TT_SEND_F_END;
	if (carry) {
		carry->frame = TT_FRAME_NONE;
		carry->left = 0;
	}
}

void tt_classify_send_tail(const void *data, size_t nbytes, const void *tail,
			   size_t ntail, __s64 send_len, struct tt_send *send,
			   struct tt_sse_carry *carry)
{
	size_t n = nbytes;
	bool chunked;

	send->cls = TT_SEND_OTHER;
	send->tokens = 0;
	send->flags = 0;
	send->status = 0;
	if (send_len <= 0)
		return;
	if (!data || n > TT_SEND_CAPTURE)
		n = data ? TT_SEND_CAPTURE : 0;
	if ((__u64)send_len < n)
		n = send_len;
	if (n)
		classify(data, n, send_len, send, true, carry);
	else if (carry && frame_body(carry, data, 0, send_len))
		/* nothing captured: the bytes still count for the framing */
		send->flags |= TT_SEND_F_END;
	if (tail && ntail && (__u64)send_len > n &&
	    !(send->flags & TT_SEND_F_END)) {
		if (ntail > TT_SEND_TAIL)
			ntail = TT_SEND_TAIL;
		/* the headers' word when seen, else what the bytes looked like */
		chunked = carry && carry->chunked ?
				  carry->chunked == 1 :
				  !!(send->flags & TT_SEND_F_CHUNKED);
		if (carry && carry->h2)
			h2_tail(tail, ntail, send, carry);
		else
			classify_tail(tail, ntail, chunked, send, carry);
	}
}

/* Node writes a burst of events in one writev: the capture shows the
 * first few, the count all ([DONE] is not among them) */
void tt_classify_data_lines(struct tt_send *send, unsigned int lines)
{
	bool done = send->cls == TT_SEND_DONE ||
		    send->cls == TT_SEND_TOKEN_DONE;

	if (lines <= send->tokens)
		return;
	send->tokens = lines > 0xffff ? 0xffff : lines;
	send->cls = done ? TT_SEND_TOKEN_DONE : TT_SEND_TOKEN;
	send->flags |= TT_SEND_F_SSE;
}

void tt_classify_send_carry(const void *data, size_t nbytes, __s64 send_len,
			    struct tt_send *send, struct tt_sse_carry *carry)
{
	tt_classify_send_tail(data, nbytes, NULL, 0, send_len, send, carry);
}

void tt_classify_send(const void *data, size_t nbytes, __s64 send_len,
		      struct tt_send *send)
{
	tt_classify_send_carry(data, nbytes, send_len, send, NULL);
}

/* The slots a connection's carry may take from its own on: an HTTP/2
 * connection's carry is live as long as it is, and a per-call gRPC client
 * opens one per request (a LocalAI run lost two streams' ends to a shared
 * slot) */
#define CARRY_PROBES 8

static size_t carry_slot(__u64 sk)
{
	return (size_t)((sk * 0x9E3779B97F4A7C15ULL) >> 54) % TT_CARRY_SLOTS;
}

/* Anything for the connection's next send to know. */
static bool carry_live(const struct tt_sse_carry *carry)
{
	return carry->n || carry->frame != TT_FRAME_NONE || carry->h2;
}

/* sk's slot among the CARRY_PROBES from its own; NULL if it has none */
static struct tt_carry_slot *slot_find(struct tt_classifier *c, __u64 sk)
{
	size_t base = carry_slot(sk), i;

	for (i = 0; i < CARRY_PROBES; i++)
		if (c->slot[(base + i) % TT_CARRY_SLOTS].sk == sk)
			return &c->slot[(base + i) % TT_CARRY_SLOTS];
	return NULL;
}

/* A slot for sk: the first of its probes that holds nothing live (an
 * HTTP/2 connection's lives as long as it), else its own */
static struct tt_carry_slot *slot_claim(struct tt_classifier *c, __u64 sk)
{
	size_t base = carry_slot(sk), i;
	struct tt_carry_slot *s;

	for (i = 0; i < CARRY_PROBES; i++) {
		s = &c->slot[(base + i) % TT_CARRY_SLOTS];
		if (!s->sk || !carry_live(&s->carry))
			return s;
	}
	return &c->slot[base];
}

void tt_classifier_send(struct tt_classifier *c, const void *data,
			size_t nbytes, const void *tail, size_t ntail,
			struct tt_send *send)
{
	struct tt_carry_slot *s = slot_find(c, send->sk);
	struct tt_sse_carry none = { 0 };

	tt_classify_send_tail(data, nbytes, tail, ntail, send->len, send,
			      s ? &s->carry : &none);
	if (!s && carry_live(&none)) {
		s = slot_claim(c, send->sk);
		s->sk = send->sk;
		s->carry = none;
	}
}

void tt_classifier_send_tls(struct tt_classifier *c, const void *data,
			    size_t nbytes, const void *tail, size_t ntail,
			    unsigned int tls, __s64 plain_len,
			    struct tt_send *send)
{
	struct tt_carry_slot *s = slot_find(c, send->sk);
	__s64 sent = send->len;

	if (!tls && s && s->carry.tls) {
		*send = (struct tt_send){ .sk = send->sk,
					  .len = sent,
					  .ts_enter = send->ts_enter,
					  .seq = send->seq,
					  .flags = TT_SEND_F_TLS };
		return;
	}
	if (tls)
		send->len = plain_len;
	tt_classifier_send(c, data, nbytes, tail, ntail, send);
	send->len = sent;
	if (!tls)
		return;
	send->flags |= TT_SEND_F_TLS_PLAIN;
	s = slot_find(c, send->sk);
	if (!s) {
		s = slot_claim(c, send->sk);
		s->sk = send->sk;
		s->carry = (struct tt_sse_carry){ 0 };
	}
	s->carry.tls = 1;
}

void tt_classifier_send_pieces(struct tt_classifier *c,
			       const struct tt_tls_plain *p, size_t n,
			       struct tt_send *send)
{
	struct tt_send one, all = *send;
	bool done = false;
	size_t i;

	all.tokens = 0;
	all.flags = 0;
	all.status = 0;
	for (i = 0; i < n; i++) {
		one = *send;
		tt_classifier_send_tls(c, p[i].data, p[i].nbytes, p[i].tail,
				       p[i].ntail, 1, p[i].len, &one);
		tt_classify_data_lines(&one, p[i].data_lines);
		all.tokens = all.tokens + one.tokens > 0xffff ?
				     0xffff :
				     all.tokens + one.tokens;
		all.flags |= one.flags;
		if (!all.status)
			all.status = one.status;
		done |= one.cls == TT_SEND_DONE ||
			one.cls == TT_SEND_TOKEN_DONE;
		/* headers alone stay so only when nothing else came */
		if (!i || all.cls == TT_SEND_HEADERS)
			all.cls = one.cls;
	}
	if (all.tokens)
		all.cls = done ? TT_SEND_TOKEN_DONE : TT_SEND_TOKEN;
	else if (done)
		all.cls = TT_SEND_DONE;
	*send = all;
}

void tt_classifier_forget(struct tt_classifier *c, __u64 sk)
{
	struct tt_carry_slot *s = slot_find(c, sk);

	if (s)
		memset(s, 0, sizeof(*s));
}

const char *tt_send_class_name(unsigned int cls)
{
	switch (cls) {
	case TT_SEND_OTHER:
		return "other";
	case TT_SEND_HEADERS:
		return "headers";
	case TT_SEND_TOKEN:
		return "token";
	case TT_SEND_DONE:
		return "done";
	case TT_SEND_TOKEN_DONE:
		return "token+done";
	}
	return "unknown";
}
