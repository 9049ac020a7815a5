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
 * - anything else (plain JSON body, HTTP/2 frames): TT_SEND_OTHER.
 */
void tt_classify_send(const void *data, size_t nbytes, __s64 send_len,
		      struct tt_send *send);

/* What a send of the connection left open: the start of a line that may
 * still become "data:" (a proper prefix of it, n bytes). */
#define TT_SSE_CARRY 4
struct tt_sse_carry {
	__u8 n;
	__u8 bytes[TT_SSE_CARRY];
};

/* tt_classify_send, continuing the line carry holds (when the send does
 * not begin a new response) and leaving in carry what this one leaves
 * open (only when the capture holds the whole send). carry may be NULL. */
void tt_classify_send_carry(const void *data, size_t nbytes, __s64 send_len,
			    struct tt_send *send, struct tt_sse_carry *carry);

/*
 * The carries of the collector's connections, by socket: a direct-mapped
 * table (a carry lives from one send to the next on its connection, so two
 * connections sharing a slot at once is rare; the later one wins and the
 * earlier's next send is judged alone, as without a carry).
 */
#define TT_CARRY_SLOTS 1024
struct tt_classifier {
	struct tt_carry_slot {
		__u64 sk;
		struct tt_sse_carry carry;
	} slot[TT_CARRY_SLOTS];
};

/* Classifies send (send->sk, send->len set) with its connection's carry. */
void tt_classifier_send(struct tt_classifier *c, const void *data,
			size_t nbytes, struct tt_send *send);
/* The connection ended or its socket was reused: its carry goes. */
void tt_classifier_forget(struct tt_classifier *c, __u64 sk);

const char *tt_send_class_name(unsigned int cls);

#endif /* TT_CLASSIFY_H */
