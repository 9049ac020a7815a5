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

/* A "Transfer-Encoding: ... chunked" line in the header block. */
static bool header_says_chunked(const __u8 *p, size_t n)
{
	static const char name[] = "transfer-encoding:";
	size_t i = 0, start, len;

	while (i < n) {
		start = i;
		while (i < n && p[i] != '\n')
			i++;
		len = i - start;
		i++;
		if (len > sizeof(name) - 1 &&
		    !strncasecmp((const char *)p + start, name,
				 sizeof(name) - 1) &&
		    contains_ci(p + start + sizeof(name) - 1,
				len - (sizeof(name) - 1), "chunked"))
			return true;
	}
	return false;
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
static void sse_scan(const __u8 *p, size_t n, struct sse_result *res)
{
	bool has_data = false, is_done = false, cut;
	size_t i = 0, start, len, vlen;
	const __u8 *v;

	memset(res, 0, sizeof(*res));
	res->cut_start = n;
	while (i < n) {
		start = i;
		while (i < n && p[i] != '\r' && p[i] != '\n')
			i++;
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

/* whole: p[0..n) is the send to its last byte (nothing cut by the capture) */
static void classify(const __u8 *p, size_t n, bool whole, struct tt_send *send,
		     bool allow_interim, struct tt_sse_carry *carry)
{
	const __u8 *end;
	unsigned int code;
	size_t hdr_len;
	bool declared = false;

	code = status_code(p, n);
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
			return;
		}
		hdr_len = end + 4 - p;
		if (code < 200) {
			/* "100 Continue": the real response may follow */
			if (hdr_len < n && allow_interim) {
				classify(p + hdr_len, n - hdr_len, whole, send,
					 false, carry);
				return;
			}
			send->flags |= TT_SEND_F_INTERIM;
			send->cls = TT_SEND_OTHER;
			return;
		}
		send->flags |= TT_SEND_F_HEADERS;
		send->status = code;
		declared = header_says_chunked(p, hdr_len);
		if (declared)
			send->flags |= TT_SEND_F_CHUNKED;
		if (hdr_len == n) {
			/* a body past the capture is unseen: not a token */
			send->cls = whole ? TT_SEND_HEADERS : TT_SEND_OTHER;
			return;
		}
		p += hdr_len;
		n -= hdr_len;
	}
	classify_body(p, n, declared, whole, send, carry);
}

void tt_classify_send_carry(const void *data, size_t nbytes, __s64 send_len,
			    struct tt_send *send, struct tt_sse_carry *carry)
{
	size_t n = nbytes;

	send->cls = TT_SEND_OTHER;
	send->tokens = 0;
	send->flags = 0;
	send->status = 0;
	if (!data || send_len <= 0)
		return;
	if (n > TT_SEND_CAPTURE)
		n = TT_SEND_CAPTURE;
	if ((__u64)send_len < n)
		n = send_len;
	if (!n)
		return;
	classify(data, n, (__u64)send_len == n, send, true, carry);
}

void tt_classify_send(const void *data, size_t nbytes, __s64 send_len,
		      struct tt_send *send)
{
	tt_classify_send_carry(data, nbytes, send_len, send, NULL);
}

static size_t carry_slot(__u64 sk)
{
	return (size_t)((sk * 0x9E3779B97F4A7C15ULL) >> 54) % TT_CARRY_SLOTS;
}

void tt_classifier_send(struct tt_classifier *c, const void *data,
			size_t nbytes, struct tt_send *send)
{
	struct tt_carry_slot *s = &c->slot[carry_slot(send->sk)];
	struct tt_sse_carry none = { 0 };

	/* another connection's carry in this slot is not ours */
	tt_classify_send_carry(data, nbytes, send->len, send,
			       s->sk == send->sk ? &s->carry : &none);
	if (none.n) {
		s->sk = send->sk;
		s->carry = none;
	}
}

void tt_classifier_forget(struct tt_classifier *c, __u64 sk)
{
	struct tt_carry_slot *s = &c->slot[carry_slot(sk)];

	if (s->sk == sk)
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
