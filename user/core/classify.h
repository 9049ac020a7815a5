/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Send classification: from the first bytes of a server's send, tell the
 * status line and headers from token data (SSE "data:" events, possibly in
 * chunked framing) and from the end of the stream. Stateless: each send is
 * judged on its own bytes, so the collector can call it per record.
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

const char *tt_send_class_name(unsigned int cls);

#endif /* TT_CLASSIFY_H */
