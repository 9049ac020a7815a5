/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Bytes real servers send, shared by the tests that classify and analyze
 * them: one copy, so that the two see the same server. */
#ifndef TT_SERVER_BYTES_H
#define TT_SERVER_BYTES_H

/* uvicorn's response headers for a streamed (SSE, chunked) completion */
#define UVICORN_SSE_HEADERS                                  \
	"HTTP/1.1 200 OK\r\n"                                \
	"date: Sat, 29 Nov 2025 22:50:00 GMT\r\n"            \
	"server: uvicorn\r\n"                                \
	"content-type: text/event-stream; charset=utf-8\r\n" \
	"transfer-encoding: chunked\r\n"                     \
	"\r\n"

#endif /* TT_SERVER_BYTES_H */
