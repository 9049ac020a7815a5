/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Send classification on real server bytes (uvicorn, vLLM, sse-starlette). */
#include <stdlib.h>
#include "classify.h"
#include "tlsplain.h"
#include "tt_test.h"
#include "server_bytes.h"

#define VLLM_CHUNK(content)                                                      \
	"data: {\"id\":\"chatcmpl-3f2a\",\"object\":\"chat.completion.chunk\","  \
	"\"created\":1732920000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\"," \
	"\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" content "\"},"     \
	"\"logprobs\":null,\"finish_reason\":null}]}\n\n"

#define DONE_CHUNK_BYTES "e\r\ndata: [DONE]\n\n\r\n"

#define LONG_CONTENT \
	"a token of sixty characters, more or less, to pass the capture"

/* Classifies exactly len bytes from a heap buffer of that size, so that the
 * sanitizer build catches any read past the capture. */
static struct tt_send classify_n(const char *bytes, size_t len,
				 long long send_len)
{
	struct tt_send s = { .cls = 99, .tokens = 99, .flags = 0xffff };
	char *copy = malloc(len ? len : 1);

	memcpy(copy, bytes, len);
	tt_classify_send(copy, len, send_len, &s);
	free(copy);
	return s;
}

static struct tt_send classify(const char *bytes)
{
	size_t len = strlen(bytes);

	/* what the BPF side captures: at most TT_SEND_CAPTURE bytes */
	return classify_n(bytes, len < TT_SEND_CAPTURE ? len : TT_SEND_CAPTURE,
			  len);
}

/* Wraps payload in one HTTP/1.1 chunk, as uvicorn's httptools does. */
static char *chunk(char *buf, size_t len, const char *payload)
{
	snprintf(buf, len, "%zx\r\n%s\r\n", strlen(payload), payload);
	return buf;
}

#define CHECK_SEND(s, want_cls, want_tokens, want_flags)          \
	do {                                                      \
		ASSERT_EQ((s).cls, want_cls, "(s).cls");          \
		ASSERT_EQ((s).tokens, want_tokens, "(s).tokens"); \
		ASSERT_EQ((s).flags, want_flags, "(s).flags");    \
	} while (0)

static void test_headers_only(void)
{
	struct tt_send s = classify(UVICORN_SSE_HEADERS);

	CHECK_SEND(s, TT_SEND_HEADERS, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_CHUNKED);
	s = classify("HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
}

static void test_headers_longer_than_capture(void)
{
	char big[1024];
	struct tt_send s;
	size_t i;

	strcpy(big, "HTTP/1.1 200 OK\r\nx-request-id: ");
	for (i = strlen(big); i < 400; i++)
		big[i] = 'a';
	strcpy(big + i, "\r\n\r\n" VLLM_CHUNK("Hi"));
	s = classify(big);
	/* the blank line is not in the capture: headers only, assumed */
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
}

static void test_headers_fill_capture_body_unseen(void)
{
	char buf[TT_SEND_CAPTURE + 1];
	const char *tail = "\r\n\r\n";
	struct tt_send s;
	size_t i;

	strcpy(buf, "HTTP/1.1 200 OK\r\nx-pad: ");
	for (i = strlen(buf); i < TT_SEND_CAPTURE - strlen(tail); i++)
		buf[i] = 'p';
	strcpy(buf + i, tail);
	ASSERT_EQ(strlen(buf), TT_SEND_CAPTURE, "strlen");
	/* 300 bytes were sent: a body follows, but beyond the capture */
	s = classify_n(buf, TT_SEND_CAPTURE, 300);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS);
	/* exactly the headers were sent */
	s = classify_n(buf, TT_SEND_CAPTURE, TT_SEND_CAPTURE);
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
}

static void test_headers_with_sse_body(void)
{
	struct tt_send s = classify("HTTP/1.1 200 OK\r\n"
				    "Content-Type: text/event-stream\r\n"
				    "Cache-Control: no-cache\r\n\r\n"
				    "data: {\"token\":\"Hello\"}\n\n");

	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_HEADERS | TT_SEND_F_SSE);
}

static void test_headers_with_chunked_sse_body(void)
{
	char buf[1024], c[512];
	struct tt_send s;

	snprintf(buf, sizeof(buf), "%s%s", UVICORN_SSE_HEADERS,
		 chunk(c, sizeof(c), "data: {\"t\":\"Hi\"}\n\n"));
	s = classify(buf);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_HEADERS | TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
}

static void test_sse_token(void)
{
	struct tt_send s = classify(VLLM_CHUNK(" Hello"));

	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	/* longer than the capture: the event is cut, its data: line seen */
	ASSERT_GT(strlen(VLLM_CHUNK(LONG_CONTENT)), TT_SEND_CAPTURE, "strlen");
	s = classify(VLLM_CHUNK(LONG_CONTENT));
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	s = classify("data: {\"text\":\"a\"}\n\ndata: {\"text\":\"b\"}\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 2, TT_SEND_F_SSE);
	s = classify("data:{\"text\":\"a\"}\r\n\r\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	s = classify("event: message\r\nid: 7\r\ndata: {\"t\":1}\r\n\r\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	/* one event of two data lines is one token */
	s = classify("data: {\"a\":\ndata: 1}\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
}

static void test_sse_done(void)
{
	struct tt_send s = classify("data: [DONE]\n\n");

	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_SSE);
	s = classify("data:[DONE]\r\n\r\n");
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_SSE);
	s = classify("data: {\"t\":\"end\"}\n\ndata: [DONE]\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1, TT_SEND_F_SSE);
	/* the marker cut by the capture */
	s = classify_n("data: [DO", 9, 14);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_SSE);
	/* a finished line that merely starts like it is data */
	s = classify("data: [D\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
}

static void test_sse_comments(void)
{
	struct tt_send s = classify(": ping\n\n");

	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* sse-starlette's keepalive */
	s = classify(": ping - 2025-11-29 22:50:00.123456+00:00\r\n\r\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify("event: ping\nretry: 3000\n\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify(": ping\n\ndata: {\"t\":\"x\"}\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
}

static void test_chunked(void)
{
	char c[512], two[1024];
	struct tt_send s;

	s = classify(chunk(c, sizeof(c), VLLM_CHUNK("Hi")));
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	s = classify("0\r\n\r\n");
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_CHUNKED);
	s = classify("e\r\ndata: [DONE]\n\n\r\n");
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	s = classify("e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	snprintf(two, sizeof(two), "%s%s",
		 chunk(c, sizeof(c), "data: {\"t\":\"!\"}\n\n"),
		 "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n");
	s = classify(two);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	/* a token chunk followed by the last chunk */
	snprintf(two, sizeof(two), "%s0\r\n\r\n",
		 chunk(c, sizeof(c), "data: {\"t\":\"!\"}\n\n"));
	s = classify(two);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	/* chunk extensions and upper-case hex */
	s = classify("F;name=value\r\ndata: {\"t\":1}\n\n\r\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	/* an SSE event split across two chunks of one send */
	s = classify("3\r\ndat\r\n7\r\na: x\n\n\r\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	/* a keepalive in a chunk */
	s = classify(chunk(c, sizeof(c), ": ping\n\n"));
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_CHUNKED);
	/* the size line alone (writev's first iovec): payload unseen */
	s = classify_n("5e\r\n", 4, 100);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_CHUNKED);
}

static void test_not_sse(void)
{
	struct tt_send s;

	s = classify("{\"id\":\"cmpl-1\",\"object\":\"text_completion\","
		     "\"choices\":[{\"text\":\"Hello world\"}]}");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify(
		"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
		"content-length: 27\r\n\r\n{\"choices\":[{\"text\":\"x\"}]}");
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS);
	/* words that begin with hex digits are no chunk */
	s = classify("deadbeef is not a chunk\r\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify("123");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify("HTTP/1.1 2000 OK\r\n\r\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
}

static void test_http2_is_other(void)
{
	static const char frame[] = {
		0x00, 0x00, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, /* DATA */
		'd',  'a',  't',  'a',	':',  ' ',  'x',  '\n', '\n', 0,
	};
	struct tt_send s = classify("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* a DATA frame: the binary frame header hides the "data:" line */
	s = classify_n(frame, 9 + 9, 9 + 14);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
}

static void test_interim(void)
{
	struct tt_send s = classify("HTTP/1.1 100 Continue\r\n\r\n");

	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_INTERIM);
	s = classify(
		"HTTP/1.1 100 Continue\r\n\r\n"
		"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
}

static void test_degenerate(void)
{
	struct tt_send s;

	s = classify_n("data: x\n\n", 9, -32); /* EPIPE */
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify_n("", 0, 100); /* nothing captured */
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* more captured than sent: only the sent bytes count */
	s = classify_n("data: x\n\ndata: y\n\n", 18, 9);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	tt_classify_send(NULL, 10, 10, &s);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
}

static void test_capture_limit(void)
{
	char buf[400];
	struct tt_send s;

	/* a data: line that starts past the first 256 bytes is not seen */
	memset(buf, 'x', 300);
	strcpy(buf + 300, "\n\ndata: y\n\n");
	s = classify_n(buf, strlen(buf), strlen(buf));
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* many small events: every one in the capture counts */
	buf[0] = '\0';
	while (strlen(buf) + 9 < sizeof(buf))
		strcat(buf, "data: t\n\n");
	s = classify(buf);
	CHECK_SEND(s, TT_SEND_TOKEN, TT_SEND_CAPTURE / 9, TT_SEND_F_SSE);
}

/* Issue 13 item 11: "da" | "ta: {...}" across two sends, kept per
 * connection; and the status of a status line. */
static void test_split_keyword(void)
{
	struct tt_sse_carry carry = { 0 };
	struct tt_classifier *cls = calloc(1, sizeof(*cls));
	struct tt_send s = { 0 };
	char c1[64], c2[64];

	tt_classify_send_carry("da", 2, 2, &s, &carry);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	ASSERT_EQ(carry.n, 2, "carry.n");
	tt_classify_send_carry("ta: {\"t\":1}\n\n", 13, 13, &s, &carry);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	ASSERT_EQ(carry.n, 0, "carry.n");
	/* alone, as before: no token in either */
	s = classify("ta: {\"t\":1}\n\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* in chunks: the keyword is cut inside the chunks' payload */
	chunk(c1, sizeof(c1), "data: {}\n\nd");
	chunk(c2, sizeof(c2), "ata: [DONE]\n\n");
	tt_classify_send_carry(c1, strlen(c1), strlen(c1), &s, &carry);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE | TT_SEND_F_CHUNKED);
	ASSERT_EQ(carry.n, 1, "carry.n");
	tt_classify_send_carry(c2, strlen(c2), strlen(c2), &s, &carry);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_SSE | TT_SEND_F_CHUNKED);
	/* "dat" then a status line: a new response, the carry is dropped */
	tt_classify_send_carry("dat", 3, 3, &s, &carry);
	ASSERT_EQ(carry.n, 3, "carry.n");
	tt_classify_send_carry("HTTP/1.1 429 Too Many Requests\r\n\r\n", 34, 34,
			       &s, &carry);
	/* no length, not chunked: its body, if any, ends at the close */
	CHECK_SEND(s, TT_SEND_HEADERS, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_CLOSE_DELIM);
	ASSERT_EQ(s.status, 429, "s.status");
	ASSERT_EQ(carry.n, 0, "carry.n");
	/* a send cut by the capture: its end is unseen, nothing carried */
	tt_classify_send_carry("data: x\n\nda", 12, 500, &s, &carry);
	ASSERT_EQ(carry.n, 0, "carry.n");
	/* the collector's table: two connections interleaved, one closed */
	s.sk = 0x100;
	s.len = 2;
	tt_classifier_send(cls, "da", 2, NULL, 0, &s);
	s.sk = 0x200;
	tt_classifier_send(cls, "da", 2, NULL, 0, &s);
	s.len = 13;
	tt_classifier_send(cls, "ta: {\"t\":2}\n\n", 13, NULL, 0, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	tt_classifier_forget(cls, 0x100);
	s.sk = 0x100;
	tt_classifier_send(cls, "ta: {\"t\":2}\n\n", 13, NULL, 0, &s);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	free(cls);
}

/* Classifies a send of len bytes whose first min(len, capture) are b, and
 * whose last ntail are tail, with the connection's carry. */
static struct tt_send conn_send(struct tt_sse_carry *carry, const char *b,
				size_t len, const char *tail, size_t ntail)
{
	struct tt_send s = { .cls = 99, .tokens = 99, .flags = 0xffff };
	size_t n = len < TT_SEND_CAPTURE ? len : TT_SEND_CAPTURE;
	char *copy = malloc(n ? n : 1);

	memcpy(copy, b, n);
	tt_classify_send_tail(copy, n, tail, ntail, len, &s, carry);
	free(copy);
	return s;
}

#define SEND(carry, b) conn_send(carry, b, strlen(b), NULL, 0)

/* One HTTP/2 frame at p: its header and plen bytes of payload (0x88:
 * a header block's ":status: 200", HPACK's static entry 8); its size */
static size_t h2_frame(char *p, __u8 type, __u8 flags, __u32 sid,
		       size_t plen)
{
	p[0] = 0;
	p[1] = plen >> 8;
	p[2] = plen & 0xff;
	p[3] = type;
	p[4] = flags;
	p[5] = sid >> 24;
	p[6] = sid >> 16;
	p[7] = sid >> 8;
	p[8] = sid;
	memset(p + 9, type == 1 ? 0x88 : 'x', plen);
	return 9 + plen;
}

/* gRPC's C core serving a server-streaming call, send by send as
 * localai_backend.py's were recorded: the preface, its ACK, a PING's
 * ACK, the response headers with the first message, a message per send,
 * the trailers; then a frame cut by a send, a lost header, a reset. */
static void test_grpc_stream(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;
	char b[512];
	size_t n;

	n = h2_frame(b, 4, 0, 0, 24);	      /* SETTINGS */
	n += h2_frame(b + n, 8, 0, 0, 4); /* WINDOW_UPDATE */
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	ASSERT_EQ(c.h2, 1, "c.h2");
	s = conn_send(&c, b, h2_frame(b, 4, 1, 0, 0), NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	s = conn_send(&c, b, h2_frame(b, 6, 1, 0, 8), NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	n = h2_frame(b, 1, 4, 1, 140);
	n += h2_frame(b + n, 0, 0, 1, 14);
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2 | TT_SEND_F_HEADERS);
	ASSERT_EQ(s.status, 200, "s.status");
	s = conn_send(&c, b, h2_frame(b, 0, 0, 1, 9), NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2);
	/* the trailers (grpc-status) end the stream */
	s = conn_send(&c, b, h2_frame(b, 1, 5, 1, 15), NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_H2 | TT_SEND_F_END);
	/* a message larger than a send: the rest of it is skipped */
	n = h2_frame(b, 0, 0, 3, 300);
	s = conn_send(&c, b, 200, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2);
	ASSERT_EQ(c.left, 109, "c.left");
	n = h2_frame(b + 109, 0, 1, 3, 4);
	s = conn_send(&c, b, 109 + n, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1, TT_SEND_F_H2 | TT_SEND_F_END);
	ASSERT_EQ(c.left, 0, "c.left");
	/* a frame's header past the capture: the next send begins anew */
	memset(b, 0, sizeof(b));
	n = h2_frame(b + 250, 0, 0, 5, 4);
	s = conn_send(&c, b, 250 + n, NULL, 0);
	ASSERT_EQ(s.flags, TT_SEND_F_H2, "s.flags");
	ASSERT_EQ(c.left, 0, "c.left");
	/* RST_STREAM ends the stream; an unknown :status is 0 */
	n = h2_frame(b, 1, 4, 7, 3);
	b[9] = 0x48;
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_H2 | TT_SEND_F_HEADERS);
	ASSERT_EQ(s.status, 0, "s.status");
	s = conn_send(&c, b, h2_frame(b, 3, 0, 7, 4), NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_H2 | TT_SEND_F_END);
	/* a padded message whose pad length lies past the capture: still a
	 * message, a token */
	n = h2_frame(b, 0, 0, 11, TT_SEND_CAPTURE - 2 * 9);
	n += h2_frame(b + n, 0, 0x8, 11, 20);
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 2, TT_SEND_F_H2);
	ASSERT_EQ(c.left, 0, "c.left");
	/* messages past the capture and the trailers at the send's end:
	 * the tail shows them */
	n = 0;
	while (n < 280)
		n += h2_frame(b + n, 0, 0, 9, 14);
	n += h2_frame(b + n, 1, 5, 9, 15);
	s = conn_send(&c, b, n, b + n - 32, 32);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 11, TT_SEND_F_H2 | TT_SEND_F_END);
	/* a tail whose bytes only look like a frame's end: no end */
	memset(b + n - 32, 0, 32);
	s = conn_send(&c, b, n, b + n - 32, 32);
	ASSERT_EQ(s.flags, TT_SEND_F_H2, "s.flags");
	/* an HTTP/1 response on it would be a frame's bytes: it stays h2 */
	s = SEND(&c, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
	ASSERT_TRUE(s.flags & TT_SEND_F_H2, "frames");
}

/* Streams multiplexed on one connection (a kept grpc.ClientConn's calls):
 * a stream left unended for another that sends again says so; streams
 * one after another, or one whose end the capture lost, do not */
static void test_h2_multiplexed(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;
	char b[256];
	__u32 sid;
	size_t n;

	conn_send(&c, b, h2_frame(b, 4, 0, 0, 24), NULL, 0);
	/* one after another: no flag */
	for (sid = 1; sid <= 3; sid += 2) {
		n = h2_frame(b, 1, 4, sid, 20);
		n += h2_frame(b + n, 0, 0, sid, 14);
		s = conn_send(&c, b, n, NULL, 0);
		s = conn_send(&c, b, h2_frame(b, 1, 5, sid, 15), NULL, 0);
		ASSERT_FALSE(s.flags & TT_SEND_F_H2_MUX, "sequential");
	}
	/* stream 5's end past the capture, unseen; 7 after it: no flag */
	conn_send(&c, b, h2_frame(b, 0, 0, 5, 14), NULL, 0);
	s = conn_send(&c, b, h2_frame(b, 1, 4, 7, 20), NULL, 0);
	ASSERT_FALSE(s.flags & TT_SEND_F_H2_MUX, "after a lost end");
	/* 9 begins while 7 is open; 7 goes on: interleaved, and 9 then */
	s = conn_send(&c, b, h2_frame(b, 1, 4, 9, 20), NULL, 0);
	ASSERT_FALSE(s.flags & TT_SEND_F_H2_MUX, "a second stream begins");
	s = conn_send(&c, b, h2_frame(b, 0, 0, 7, 14), NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2 | TT_SEND_F_H2_MUX);
	n = h2_frame(b, 0, 0, 9, 14);
	s = conn_send(&c, b, n + h2_frame(b + n, 1, 5, 9, 15), NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1,
		   TT_SEND_F_H2 | TT_SEND_F_H2_MUX | TT_SEND_F_END);
	/* 7, left for 9, reset: its last frame; then 11 alone */
	s = conn_send(&c, b, h2_frame(b, 3, 0, 7, 4), NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0,
		   TT_SEND_F_H2 | TT_SEND_F_H2_MUX | TT_SEND_F_END);
	n = h2_frame(b, 1, 4, 11, 20);
	n += h2_frame(b + n, 0, 0, 11, 14);
	s = conn_send(&c, b, n + h2_frame(b + n, 1, 5, 11, 15), NULL, 0);
	ASSERT_FALSE(s.flags & TT_SEND_F_H2_MUX, "a stream alone again");
	/* a continuous batch of 8, a token each in turn: the second round
	 * says so */
	memset(&c, 0, sizeof(c));
	c.h2 = 1;
	for (sid = 1; sid <= 15; sid += 2) {
		s = conn_send(&c, b, h2_frame(b, 0, 0, sid, 14), NULL, 0);
		ASSERT_FALSE(s.flags & TT_SEND_F_H2_MUX, "first round");
	}
	s = conn_send(&c, b, h2_frame(b, 0, 0, 1, 14), NULL, 0);
	ASSERT_TRUE(s.flags & TT_SEND_F_H2_MUX, "second round");
}

/* One DATA frame at p on stream sid carrying text; its size */
static size_t h2_data(char *p, __u8 flags, __u32 sid, const char *text)
{
	size_t n = h2_frame(p, 0, flags, sid, strlen(text));

	memcpy(p + 9, text, strlen(text));
	return n;
}

/* SSE proxied to an HTTP/2 client (nginx's "listen ... http2", Caddy):
 * each upstream read is a DATA frame, so a frame holds one event, two, a
 * part of one, or the [DONE] alone; its events are the tokens. */
static void test_h2_sse(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;
	char b[512];
	size_t n;

	conn_send(&c, b, h2_frame(b, 4, 0, 0, 18), NULL, 0);
	n = h2_frame(b, 1, 4, 1, 20);
	n += h2_data(b + n, 0, 1, "data: {\"t\": 1}\n\n");
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_H2 | TT_SEND_F_HEADERS | TT_SEND_F_SSE);
	s = conn_send(&c, b, h2_data(b, 0, 1, "data: a\n\ndata: b\n\n"), NULL,
		      0);
	CHECK_SEND(s, TT_SEND_TOKEN, 2, TT_SEND_F_H2 | TT_SEND_F_SSE);
	/* an event split by the upstream's reads: one token */
	s = conn_send(&c, b, h2_data(b, 0, 1, "data: {\"t\":"), NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2 | TT_SEND_F_SSE);
	s = conn_send(&c, b, h2_data(b, 0, 1, " 3}\n\n"), NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	/* padded: the pad length, then the padding */
	n = h2_frame(b, 0, 0x8, 1, 14);
	b[9] = 4;
	memcpy(b + 10, "data: x\n\n", 9);
	memset(b + 19, 0, 4);
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2 | TT_SEND_F_SSE);
	/* [DONE] ends it as over HTTP/1; its END_STREAM, sent later
	 * (Caddy's, once its handler returned, after the client's next
	 * request came), or a RST_STREAM of it, ends nothing more: not in a
	 * send of its own, nor in the tail of a long one (WINDOW_UPDATEs for
	 * that request's upload) */
	s = conn_send(&c, b, h2_data(b, 0, 1, "data: [DONE]\n\n"), NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_H2);
	s = conn_send(&c, b, h2_frame(b, 0, 1, 1, 0), NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	s = conn_send(&c, b, h2_frame(b, 3, 0, 1, 4), NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	/* [DONE] and END_STREAM in one send end it there */
	n = h2_data(b, 0, 3, "data: [DONE]\n\n");
	n += h2_frame(b + n, 0, 1, 3, 0);
	s = conn_send(&c, b, n, NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_H2 | TT_SEND_F_END);
	for (n = 0; n < 270;)
		n += h2_frame(b + n, 8, 0, n % 2 ? 5 : 0, 4);
	n += h2_frame(b + n, 0, 1, 3, 0);
	s = conn_send(&c, b, n, b + n - 32, 32);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_H2);
	/* a stream that had no [DONE]: its END_STREAM ends it */
	s = conn_send(&c, b, h2_frame(b, 0, 1, 5, 0), NULL, 0);
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_H2 | TT_SEND_F_END);
}

/* A connection that answered HTTP/1 first never becomes HTTP/2; nor does
 * one whose first bytes are no SETTINGS frame (stream 0, 6-byte units) */
static void test_h2_preface_only(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;
	char b[64];

	SEND(&c, "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}");
	s = conn_send(&c, b, h2_frame(b, 4, 0, 0, 24), NULL, 0);
	ASSERT_EQ(s.flags, 0, "s.flags");
	memset(&c, 0, sizeof(c));
	s = conn_send(&c, b, h2_frame(b, 4, 0, 0, 20), NULL, 0);
	ASSERT_EQ(s.flags, 0, "not 6-byte settings");
	s = conn_send(&c, b, h2_frame(b, 4, 0, 1, 24), NULL, 0);
	ASSERT_EQ(s.flags, 0, "not stream 0");
	s = conn_send(&c, b, h2_frame(b, 4, 0, 0, 24), NULL, 0);
	ASSERT_EQ(s.flags, TT_SEND_F_H2, "s.flags");
}


/* uvicorn (h11) and aiohttp: the headers alone, then the body in a send of
 * its own, or split in two; the end is where Content-Length says. */
static void test_length_across_sends(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;

	s = SEND(&c, "HTTP/1.1 200 OK\r\nserver: uvicorn\r\n"
		     "content-length: 20\r\ncontent-type: application/json"
		     "\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
	ASSERT_EQ(c.frame, TT_FRAME_LENGTH, "c.frame");
	ASSERT_EQ(c.left, 20, "c.left");
	s = SEND(&c, "{\"choices\":");
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	ASSERT_EQ(c.left, 9, "c.left");
	s = SEND(&c, "[\"hi\"]}\n\n");
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_END);
	ASSERT_EQ(c.frame, TT_FRAME_NONE, "c.frame");
	/* the next response's headers, body in the same send (Go, Node) */
	s = SEND(&c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS | TT_SEND_F_END);
	/* Content-Length: 0, and a 204: the headers are the whole answer */
	s = SEND(&c, "HTTP/1.1 200 OK\r\ncontent-length:0\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS | TT_SEND_F_END);
	s = SEND(&c, "HTTP/1.1 204 No Content\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS | TT_SEND_F_END);
}

/* A sized body longer than the capture: its bytes are counted by the
 * sends' lengths, its end past the capture still found. */
static void test_length_past_capture(void)
{
	struct tt_sse_carry c = { 0 };
	char big[1200];
	struct tt_send s;
	int h;

	h = snprintf(big, sizeof(big),
		     "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n");
	memset(big + h, 'x', sizeof(big) - h);
	/* headers and the first 500 body bytes; the other 500 later */
	s = conn_send(&c, big, h + 500, NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS);
	ASSERT_EQ(c.left, 500, "c.left");
	s = conn_send(&c, big + h, 499, NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* the last byte: nothing captured of it still counts */
	tt_classify_send_tail(NULL, 0, NULL, 0, 1, &s, &c);
	ASSERT_EQ(s.flags, TT_SEND_F_END, "s.flags");
	/* all 1000 in one send with the headers */
	s = conn_send(&c, big, h + 1000, NULL, 0);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS | TT_SEND_F_END);
}

#define NODE_HEAD                                                \
	"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" \
	"Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n"    \
	"Transfer-Encoding: chunked\r\n\r\n"

/* Chunked bodies as Go, Node and hyper write them: headers with the first
 * chunk, one chunk per send, and the end in the last token's send (Node,
 * hyper) or alone (Go, uvicorn, aiohttp). */
static void test_chunked_ends(void)
{
	struct tt_sse_carry c = { 0 };
	char buf[512], ev[64];
	struct tt_send s;

	chunk(ev, sizeof(ev), "data: {\"t\":1}\n\n");
	snprintf(buf, sizeof(buf), "%s%s", NODE_HEAD, ev);
	s = SEND(&c, buf);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_HEADERS | TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	ASSERT_EQ(c.frame, TT_FRAME_CHUNKED, "c.frame");
	/* Node: the last token, [DONE] and the terminator in one writev */
	snprintf(buf, sizeof(buf), "%s" DONE_CHUNK_BYTES "0\r\n\r\n", ev);
	s = SEND(&c, buf);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_END);
	/* Go: the terminator alone, with no [DONE] before it */
	s = SEND(&c, NODE_HEAD);
	s = SEND(&c, ev);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	s = SEND(&c, "0\r\n\r\n");
	CHECK_SEND(s, TT_SEND_DONE, 0, TT_SEND_F_CHUNKED | TT_SEND_F_END);
	/* hyper's uppercase size, a chunk extension */
	s = SEND(&c, NODE_HEAD);
	s = SEND(&c, "F;x=1\r\ndata: {\"t\":2}\n\n\r\n0\r\n\r\n");
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_END);
}

/* A chunk split across sends (a partial write): the next send begins in
 * its payload, and the terminator after it is found by the chunk's size. */
static void test_chunk_split_across_sends(void)
{
	struct tt_sse_carry c = { 0 };
	char payload[301], buf[400];
	struct tt_send s;
	int h;

	SEND(&c, NODE_HEAD);
	memset(payload, 'x', 300);
	payload[300] = 0;
	memcpy(payload, "data: ", 6);
	payload[298] = '\n';
	payload[299] = '\n';
	h = snprintf(buf, sizeof(buf), "12C\r\n%s\r\n0\r\n\r\n", payload);
	/* the first 200 bytes, then the rest */
	s = conn_send(&c, buf, 200, NULL, 0);
	ASSERT_EQ(s.cls, TT_SEND_TOKEN, "s.cls");
	ASSERT_TRUE(!(s.flags & TT_SEND_F_END), "no end yet");
	ASSERT_EQ(c.left, 300 + 2 - (200 - 5), "c.left");
	s = conn_send(&c, buf + 200, h - 200, NULL, 0);
	ASSERT_TRUE(s.flags & TT_SEND_F_END,
		    "the terminator past a split chunk");
	ASSERT_EQ(c.frame, TT_FRAME_NONE, "c.frame");
}

/* The end past the capture (events larger than it, no [DONE]): only the
 * send's last bytes hold the terminator; a [DONE] there ends the stream. */
static void test_end_in_tail(void)
{
	struct tt_sse_carry c = { 0 };
	char payload[401], buf[512];
	struct tt_send s;
	int h;

	memset(payload, 'x', 400);
	payload[400] = 0;
	memcpy(payload, "data: ", 6);
	payload[398] = '\n';
	payload[399] = '\n';
	SEND(&c, NODE_HEAD);
	h = snprintf(buf, sizeof(buf), "190\r\n%s\r\n0\r\n\r\n", payload);
	/* without its tail: a token, the end unseen */
	s = conn_send(&c, buf, h, NULL, 0);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	/* with it (16 bytes of a write's end; a writev's last iovec alone) */
	SEND(&c, NODE_HEAD);
	s = conn_send(&c, buf, h, buf + h - 16, 16);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_END);
	SEND(&c, NODE_HEAD);
	s = conn_send(&c, buf, h, "0\r\n\r\n", 5);
	ASSERT_TRUE(s.flags & TT_SEND_F_END, "last iovec 0 CRLF CRLF");
	/* a body that is not chunked: those bytes are no terminator */
	SEND(&c, "HTTP/1.0 200 OK\r\n\r\n");
	s = conn_send(&c, buf, h, buf + h - 16, 16);
	ASSERT_TRUE(!(s.flags & TT_SEND_F_END), "not chunked: no end");
	/* [DONE] in the tail of an unframed SSE send */
	h = snprintf(buf, sizeof(buf), "%sdata: [DONE]\n\n", payload);
	s = conn_send(&c, buf, h, buf + h - 20, 20);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 1, TT_SEND_F_SSE);
	/* a token whose text is "data: [DONE]" is no end */
	h = snprintf(buf, sizeof(buf), "%s", payload);
	h = snprintf(buf + h - 2, sizeof(buf) - h, "\"data: [DONE]\"}\n\n") +
	    h - 2;
	s = conn_send(&c, buf, h, buf + h - TT_SEND_TAIL, TT_SEND_TAIL);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
}

/* Events past the capture, counted by the recorder as they went out
 * (tt_send_raw.data_lines): tokens too. */
static void test_data_lines_past_capture(void)
{
	char buf[1024];
	struct tt_send s;
	int h;

	h = snprintf(buf, sizeof(buf), "%s%s%s%s", VLLM_CHUNK("one"),
		     VLLM_CHUNK("two"), VLLM_CHUNK("three"),
		     VLLM_CHUNK("four"));
	/* the capture shows the first and the start of the second */
	s = classify_n(buf, TT_SEND_CAPTURE, h);
	CHECK_SEND(s, TT_SEND_TOKEN, 2, TT_SEND_F_SSE);
	tt_classify_data_lines(&s, 4);
	CHECK_SEND(s, TT_SEND_TOKEN, 4, TT_SEND_F_SSE);
	/* fewer than the capture showed (a count cut short): kept */
	tt_classify_data_lines(&s, 2);
	CHECK_SEND(s, TT_SEND_TOKEN, 4, TT_SEND_F_SSE);
	/* the end the tail showed stays: tokens and the end */
	h = snprintf(buf, sizeof(buf), "%s%s%sdata: [DONE]\n\n",
		     VLLM_CHUNK("one"), VLLM_CHUNK("two"), VLLM_CHUNK("three"));
	s = classify_n(buf, TT_SEND_CAPTURE, h);
	tt_classify_send_tail(buf, TT_SEND_CAPTURE, buf + h - 20, 20, h, &s,
			      NULL);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 2, TT_SEND_F_SSE);
	tt_classify_data_lines(&s, 3);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 3, TT_SEND_F_SSE);
	/* none counted: as classified */
	tt_classify_data_lines(&s, 0);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 3, TT_SEND_F_SSE);
}

/* HTTP/1.0 or no length and no chunking: the body runs to the close. */
static void test_close_delimited(void)
{
	struct tt_sse_carry c = { 0 };
	struct tt_send s;

	s = SEND(&c, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream"
		     "\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_CLOSE_DELIM);
	ASSERT_EQ(c.frame, TT_FRAME_CLOSE, "c.frame");
	s = SEND(&c, "data: {}\n\n");
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_SSE);
	/* HTTP/1.0 with a length is sized */
	s = SEND(&c, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}");
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_HEADERS | TT_SEND_F_END);
	/* an HTTP/1.1 event stream without length (the demo's plain SSE)
	 * ends at its [DONE]: a close before it is a cut */
	s = SEND(&c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
		     "\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0, TT_SEND_F_HEADERS);
	/* unless the server says it closes */
	s = SEND(&c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
		     "\r\nConnection: close\r\n\r\n");
	CHECK_SEND(s, TT_SEND_HEADERS, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_CLOSE_DELIM);
}

/* A server that encrypts: its first reply is a TLS handshake record, its
 * data application-data records; never a body's bytes that look alike. */
static void test_tls_records(void)
{
	static const char hello[] = { 0x16, 0x03, 0x03, 0x00, 0x7a, 0x02 };
	static const char data[] = { 0x17, 0x03, 0x03, 0x00, 0x2b, 0x5e };
	static const char big[] = { 0x17, 0x03, 0x03, 0x48, 0x01, 0x00 };
	struct tt_sse_carry c = { 0 };
	char body[64];
	struct tt_send s = classify_n(hello, sizeof(hello), 1337);

	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	s = classify_n(data, sizeof(data), 48);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	/* a header cut short, or a record longer than TLS allows: no */
	s = classify_n(data, 4, 4);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	s = classify_n(big, sizeof(big), 40000);
	CHECK_SEND(s, TT_SEND_OTHER, 0, 0);
	/* inside a chunk of a body in progress, such bytes are its payload */
	SEND(&c, NODE_HEAD);
	s = conn_send(&c, "40\r\n", 4, NULL, 0);
	memcpy(body, data, sizeof(data));
	memset(body + sizeof(data), 'x', sizeof(body) - sizeof(data));
	s = conn_send(&c, body, sizeof(body), NULL, 0);
	ASSERT_TRUE(!(s.flags & TT_SEND_F_TLS), "a payload is no record");
}

/* The collector's table keeps each connection's framing between sends. */
static void test_classifier_keeps_framing(void)
{
	struct tt_classifier *cls = calloc(1, sizeof(*cls));
	static const char head[] =
		"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\n";
	struct tt_send s = { .sk = 0x300, .len = sizeof(head) - 1 };

	tt_classifier_send(cls, head, s.len, NULL, 0, &s);
	s.sk = 0x400;
	s.len = 4;
	tt_classifier_send(cls, "{}{}", 4, NULL, 0, &s);
	ASSERT_EQ(s.flags, 0, "another connection: no end");
	s.sk = 0x300;
	tt_classifier_send(cls, "{}{}", 4, NULL, 0, &s);
	ASSERT_EQ(s.flags, TT_SEND_F_END, "its own: the end");
	free(cls);
}

/* The slot classify.c gives a socket's carry first (its hash) */
static size_t own_slot(__u64 sk)
{
	return (size_t)((sk * 0x9E3779B97F4A7C15ULL) >> 54) % TT_CARRY_SLOTS;
}

/* Two HTTP/2 connections whose sockets hash to one slot keep their
 * carries (per-call gRPC connections, many at once): the second probes
 * on, and the first's next message is still a token. */
static void test_classifier_probes_slots(void)
{
	struct tt_classifier *cls = calloc(1, sizeof(*cls));
	struct tt_send s = { .sk = 0x1000 };
	__u64 other = 0x1040;
	char b[64];
	size_t n;

	while (own_slot(other) != own_slot(s.sk))
		other += 0x40;
	n = h2_frame(b, 4, 0, 0, 24);
	s.len = n;
	tt_classifier_send(cls, b, n, NULL, 0, &s);
	ASSERT_EQ(s.flags, TT_SEND_F_H2, "first: h2");
	s.sk = other;
	tt_classifier_send(cls, b, n, NULL, 0, &s);
	ASSERT_EQ(s.flags, TT_SEND_F_H2, "second: h2");
	s.sk = 0x1000;
	n = h2_frame(b, 0, 0, 1, 14);
	s.len = n;
	tt_classifier_send(cls, b, n, NULL, 0, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2);
	tt_classifier_forget(cls, 0x1000);
	tt_classifier_send(cls, b, n, NULL, 0, &s);
	ASSERT_EQ(s.flags, 0, "forgotten");
	s.sk = other;
	tt_classifier_send(cls, b, n, NULL, 0, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_H2);
	free(cls);
}

/* A plaintext piece as the recorder's TT_EV_TLS_PLAIN holds it */
static struct tt_tls_plain tls_piece(const char *b, __u32 seq)
{
	struct tt_tls_plain p = { .len = strlen(b), .seq = seq };

	p.nbytes = p.len < TT_SEND_CAPTURE ? p.len : TT_SEND_CAPTURE;
	memcpy(p.data, b, p.nbytes);
	return p;
}

#define TLS_HEAD                                                 \
	"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" \
	"transfer-encoding: chunked\r\n\r\n"
#define TLS_EVENT "9\r\ndata: 1\n\n\r\n"
#define TLS_DONE "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"

/* Sends made inside SSL_write are classified from its plaintext, by the
 * plaintext's length (the records are longer); the framing goes on
 * across them; once a connection had plaintext, a send outside an
 * SSL_write (a ticket, an alert) is an encrypted record, whatever its
 * bytes, and leaves the framing alone. */
static void test_tls_plaintext(void)
{
	struct tt_classifier *cls = calloc(1, sizeof(*cls));
	struct tt_send s = { .sk = 0x500, .len = sizeof(TLS_HEAD) + 21 };

	tt_classifier_send_tls(cls, TLS_HEAD, sizeof(TLS_HEAD) - 1, NULL, 0, 1,
			       sizeof(TLS_HEAD) - 1, &s);
	CHECK_SEND(s, TT_SEND_HEADERS, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_CHUNKED | TT_SEND_F_TLS_PLAIN);
	ASSERT_EQ(s.len, sizeof(TLS_HEAD) + 21, "the bytes sent stay");
	s.len = 5 + 8 + 16;
	tt_classifier_send_tls(cls,
			       "\x17\x03\x03\x00\x18"
			       "6\r\ndata",
			       13, NULL, 0, 0, 0, &s);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_TLS);
	/* a later send of one SSL_write: nothing of it, the framing kept */
	tt_classifier_send_tls(cls, NULL, 0, NULL, 0, 2, 0, &s);
	CHECK_SEND(s, TT_SEND_OTHER, 0, TT_SEND_F_TLS_PLAIN);
	s.len = 60;
	tt_classifier_send_tls(cls, TLS_EVENT, sizeof(TLS_EVENT) - 1, NULL, 0,
			       1, sizeof(TLS_EVENT) - 1, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_TLS_PLAIN);
	tt_classifier_send_tls(cls, TLS_DONE, sizeof(TLS_DONE) - 1, NULL, 0, 1,
			       sizeof(TLS_DONE) - 1, &s);
	CHECK_SEND(s, TT_SEND_DONE, 0,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_END |
			   TT_SEND_F_TLS_PLAIN);
	/* other connections, no plaintext: their bytes decide */
	s.sk = 0x600;
	tt_classifier_send_tls(cls, TLS_EVENT, sizeof(TLS_EVENT) - 1, NULL, 0,
			       0, 0, &s);
	ASSERT_TRUE(!(s.flags & (TT_SEND_F_TLS | TT_SEND_F_TLS_PLAIN)),
		    "no record there, no plaintext");
	s = (struct tt_send){ .sk = 0x800, .len = sizeof(TLS_HEAD) - 1 };
	tt_classifier_send_tls(cls, TLS_HEAD, s.len, NULL, 0, 0, 0, &s);
	s.len = sizeof(TLS_EVENT) - 1;
	tt_classifier_send_tls(cls, TLS_EVENT, s.len, NULL, 0, 0, 0, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1, TT_SEND_F_CHUNKED | TT_SEND_F_SSE);
	free(cls);
}

/* A memory BIO's send carries the records of several SSL_writes: their
 * plaintext in order is its bytes (asyncio writes the headers and the
 * first event, then sends once). */
static void test_tls_pieces(void)
{
	struct tt_classifier *cls = calloc(1, sizeof(*cls));
	struct tt_tls_plain p[3] = { tls_piece(TLS_HEAD, 0),
				     tls_piece(TLS_EVENT, 1),
				     tls_piece(TLS_DONE, 2) };
	struct tt_send s = { .sk = 0x700, .len = 300 };

	tt_classifier_send_pieces(cls, p, 2, &s);
	CHECK_SEND(s, TT_SEND_TOKEN, 1,
		   TT_SEND_F_HEADERS | TT_SEND_F_CHUNKED | TT_SEND_F_SSE |
			   TT_SEND_F_TLS_PLAIN);
	ASSERT_EQ(s.status, 200, "s.status");
	ASSERT_EQ(s.len, 300, "the bytes sent stay");
	p[0] = tls_piece(TLS_EVENT, 3);
	tt_classifier_send_pieces(cls, p, 3, &s);
	CHECK_SEND(s, TT_SEND_TOKEN_DONE, 2,
		   TT_SEND_F_CHUNKED | TT_SEND_F_SSE | TT_SEND_F_END |
			   TT_SEND_F_TLS_PLAIN);
	/* a piece past the capture: its data: lines, counted as it went */
	p[0] = tls_piece(TLS_EVENT, 6);
	p[0].data_lines = 3;
	tt_classifier_send_pieces(cls, p, 1, &s);
	ASSERT_EQ(s.tokens, 3, "s.tokens");
	/* a sized answer: its body, not its headers, says what the send is */
	p[0] = tls_piece("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n", 4);
	p[1] = tls_piece("{}", 5);
	tt_classifier_send_pieces(cls, p, 2, &s);
	CHECK_SEND(s, TT_SEND_OTHER, 0,
		   TT_SEND_F_HEADERS | TT_SEND_F_END | TT_SEND_F_TLS_PLAIN);
	free(cls);
}

/* The recorder keeps each thread's pieces until a send takes those since
 * its thread's last send, older ones gone (another send took them). */
static void test_tls_pending(void)
{
	struct tt_tls_pending *tp = tt_tls_pending_new();
	const struct tt_tls_plain *out;
	struct tt_tls_plain p;
	__u32 seq;

	for (seq = 0; seq < 4; seq++) {
		p = tls_piece(TLS_EVENT, seq);
		tt_tls_pending_add(tp, 41, &p);
	}
	p = tls_piece(TLS_HEAD, 0);
	tt_tls_pending_add(tp, 42, &p);
	ASSERT_EQ(tt_tls_pending_take(tp, 41, 2, 4, &out), 2, "seq 2 and 3");
	ASSERT_EQ(out[0].seq, 2, "in order");
	ASSERT_EQ(out[1].seq, 3, "in order");
	ASSERT_EQ(tt_tls_pending_take(tp, 41, 0, 4, &out), 0, "taken once");
	ASSERT_EQ(tt_tls_pending_take(tp, 42, 0, 0, &out), 0, "none asked");
	ASSERT_EQ(tt_tls_pending_take(tp, 42, 0, 1, &out), 1, "another's");
	ASSERT_EQ(out[0].len, sizeof(TLS_HEAD) - 1, "its piece");
	tt_tls_pending_free(tp);
}

static void test_class_names(void)
{
	ASSERT_STREQ(tt_send_class_name(TT_SEND_TOKEN), "token",
		     "tt_send_class_name");
	ASSERT_STREQ(tt_send_class_name(TT_SEND_TOKEN_DONE), "token+done",
		     "tt_send_class_name");
	ASSERT_STREQ(tt_send_class_name(77), "unknown", "tt_send_class_name");
}

int main(void)
{
	TT_RUN(test_headers_only);
	TT_RUN(test_headers_longer_than_capture);
	TT_RUN(test_headers_fill_capture_body_unseen);
	TT_RUN(test_headers_with_sse_body);
	TT_RUN(test_headers_with_chunked_sse_body);
	TT_RUN(test_sse_token);
	TT_RUN(test_sse_done);
	TT_RUN(test_sse_comments);
	TT_RUN(test_chunked);
	TT_RUN(test_not_sse);
	TT_RUN(test_http2_is_other);
	TT_RUN(test_tls_records);
	TT_RUN(test_grpc_stream);
	TT_RUN(test_h2_multiplexed);
	TT_RUN(test_h2_sse);
	TT_RUN(test_h2_preface_only);
	TT_RUN(test_interim);
	TT_RUN(test_degenerate);
	TT_RUN(test_capture_limit);
	TT_RUN(test_split_keyword);
	TT_RUN(test_length_across_sends);
	TT_RUN(test_length_past_capture);
	TT_RUN(test_chunked_ends);
	TT_RUN(test_chunk_split_across_sends);
	TT_RUN(test_end_in_tail);
	TT_RUN(test_data_lines_past_capture);
	TT_RUN(test_close_delimited);
	TT_RUN(test_classifier_keeps_framing);
	TT_RUN(test_classifier_probes_slots);
	TT_RUN(test_tls_plaintext);
	TT_RUN(test_tls_pieces);
	TT_RUN(test_tls_pending);
	TT_RUN(test_class_names);
	TT_EXIT();
}
