/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Send classification: from the first bytes of a server's send, tell the
 * status line and headers from token data (SSE "data:" events, possibly in
 * chunked framing) and from the end of the stream. Each send is judged on
 * its own bytes, but for one thing carried per connection: a "data:"
 * keyword cut by the end of a send ("da" | "ta: {...}").
 */
#ifndef TT_CLASSIFY_H
#define TT_CLASSIFY_H

#include <stddef.h>
#include <linux/types.h>
#include "ttftrace.h"

/*
 * Fills send->cls, send->tokens and send->flags from the first nbytes of a
 * send of send_len bytes (nbytes may be less than send_len: only the first
 * TT_SEND_CAPTURE bytes are copied). Never reads past data + nbytes.
 *
 * - "HTTP/1.x NNN ..." with no body in the capture: TT_SEND_HEADERS (also
 *   when the header block runs past the capture);
 * - headers and a body in one send: the body decides, F_HEADERS is set;
 * - SSE: each event with a "data:" line is a token, "data: [DONE]" ends
 *   the stream; comments (": ping") and other fields carry no token;
 * - chunked framing ("<hex>[;ext]\r\n" ... "\r\n") is removed before the
 *   SSE scan; the last chunk "0\r\n\r\n" ends the stream;
 * - a TLS record's header where no body is in progress: TT_SEND_OTHER
 *   with TT_SEND_F_TLS (an encrypted connection);
 * - anything else (plain JSON body, HTTP/2 frames): TT_SEND_OTHER.
 *
 * With the connection's carry (tt_classify_send_carry) the body's framing
 * is followed across sends by their full lengths (docs/design.md §3.1):
 * TT_SEND_F_END marks the send holding the body's last byte (Content-Length
 * reached, the last chunk, even past the capture when the chunk-size lines
 * on the way were captured), TT_SEND_F_CLOSE_DELIM a status line whose
 * body runs to the connection's close.
 */
void tt_classify_send(const void *data, size_t nbytes, __s64 send_len,
		      struct tt_send *send);

/* How the response's body ends (tt_sse_carry.frame). */
enum tt_frame {
	TT_FRAME_NONE = 0, /* unknown: no status line seen, or track lost */
	TT_FRAME_LENGTH, /* Content-Length: left body bytes to come */
	TT_FRAME_CHUNKED, /* left bytes of a chunk (payload and CRLF), then a
			   * chunk-size line */
	TT_FRAME_CLOSE, /* no length, not chunked: the body ends at close */
};

/* What a send of the connection left open: the start of a line that may
 * still become "data:" (a proper prefix of it, n bytes), and where the
 * response's body stands in its framing. */
#define TT_SSE_CARRY 4
/* streams a connection's carry remembers as left unended: a continuous
 * batch's round of 8 interleaved is seen */
#define TT_H2_LEFT 8

struct tt_sse_carry {
	__u8 n;
	__u8 bytes[TT_SSE_CARRY];
	__u8 frame; /* enum tt_frame */
	/* the latest status line said chunked (1) or not (2); 0: none seen.
	 * Outlives a lost track: a terminator in a send's tail still ends */
	__u8 chunked;
	/* an SSL_write's plaintext was sent on it: what is sent outside one
	 * is encrypted (a handshake's record, a ticket, an alert) */
	__u8 tls;
	/* its server's first send was HTTP/2's preface: frames from then on,
	 * left the bytes of the last one still to come */
	__u8 h2;
	/* HTTP/2 whose DATA carried SSE's "data:" lines: events are tokens */
	__u8 h2_sse;
	__u64 left;
	/* HTTP/2: the stream whose HEADERS or DATA went out last, unended
	 * (0: none), and the latest ones left unended for another */
	__u32 h2_open;
	__u32 h2_left[TT_H2_LEFT];
	/* HTTP/2: the latest stream an SSE [DONE] ended (0: none): its
	 * END_STREAM or RST_STREAM, sent later (Caddy's, once its proxy's
	 * handler returned), ends nothing more (streams are never reused) */
	__u32 h2_done;
};

/* tt_classify_send, continuing the line carry holds (when the send does
 * not begin a new response) and leaving in carry what this one leaves
 * open (a line only when the capture holds the whole send; the framing
 * always). carry may be NULL. */
void tt_classify_send_carry(const void *data, size_t nbytes, __s64 send_len,
			    struct tt_send *send, struct tt_sse_carry *carry);
/* The same with the send's last ntail bytes (tt_send_raw.tail) when the
 * capture did not hold it whole: a chunked terminator or "data: [DONE]"
 * there ends the response. */
void tt_classify_send_tail(const void *data, size_t nbytes, const void *tail,
			   size_t ntail, __s64 send_len, struct tt_send *send,
			   struct tt_sse_carry *carry);

/*
 * The carries of the collector's connections, by socket: a table probed
 * from the socket's own slot over a few (a carry lives from one send to
 * the next on its connection, an HTTP/2 one's for as long as it is open;
 * when every probed slot holds a live carry, the socket's own slot is
 * taken, and its owner's next send is judged alone, as without a carry).
 */
#define TT_CARRY_SLOTS 1024
struct tt_classifier {
	struct tt_carry_slot {
		__u64 sk;
		struct tt_sse_carry carry;
	} slot[TT_CARRY_SLOTS];
};

/* Classifies send (send->sk, send->len set) with its connection's carry
 * and the send's last bytes (tail may be NULL). */
void tt_classifier_send(struct tt_classifier *c, const void *data,
			size_t nbytes, const void *tail, size_t ntail,
			struct tt_send *send);
/* The same for a send the recorder saw inside OpenSSL's SSL_write (tls
 * 1: its first, data and tail the plaintext of plain_len bytes; 2: a
 * later one, plain_len 0) or outside one (tls 0): plaintext is classified
 * as any send,
 * with TT_SEND_F_TLS_PLAIN; on a connection that had some, a send outside
 * an SSL_write is an encrypted record (TT_SEND_F_TLS). send->len stays
 * the bytes sent. */
void tt_classifier_send_tls(struct tt_classifier *c, const void *data,
			    size_t nbytes, const void *tail, size_t ntail,
			    unsigned int tls, __s64 plain_len,
			    struct tt_send *send);
/* The same for a send outside an SSL_write that carries the records of n
 * earlier ones to a memory BIO (TT_EV_TLS_PLAIN, in order): their
 * plaintext, in order, is classified as the send's bytes would be (their
 * tokens summed, an end or status line in any of them the send's), with
 * TT_SEND_F_TLS_PLAIN. n is at least 1. */
void tt_classifier_send_pieces(struct tt_classifier *c,
			       const struct tt_tls_plain *p, size_t n,
			       struct tt_send *send);
/* A classified send longer than the capture, whose "data:" line starts
 * the recorder counted as it went out (tt_send_raw.data_lines, 0: not
 * counted): the events past the capture are tokens too. */
void tt_classify_data_lines(struct tt_send *send, unsigned int lines);
/* The connection ended or its socket was reused: its carry goes. */
void tt_classifier_forget(struct tt_classifier *c, __u64 sk);

const char *tt_send_class_name(unsigned int cls);

#endif /* TT_CLASSIFY_H */
