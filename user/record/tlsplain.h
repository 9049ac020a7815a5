/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Plaintext that OpenSSL's SSL_write gave a memory BIO (asyncio's and
 * uvloop's SSL, Node's TLS), kept per thread until the send that carries
 * its records takes it, or that a goroutine gave crypto/tls, kept per
 * goroutine (a key with TT_TLS_GO_KEY in the tid's place) (TT_EV_TLS_PLAIN;
 * docs/design.md §3.1, "TLS").
 */
#ifndef TT_TLSPLAIN_H
#define TT_TLSPLAIN_H

#include <stddef.h>
#include <linux/types.h>
#include "ttftrace.h"

struct tt_tls_pending;

struct tt_tls_pending *tt_tls_pending_new(void);
void tt_tls_pending_free(struct tt_tls_pending *tp);
/* Keeps thread tid's piece p (its latest: in seq order) */
void tt_tls_pending_add(struct tt_tls_pending *tp, __u32 tid,
			const struct tt_tls_plain *p);
/* Thread tid's pieces of seq in [from, to), in order, at *out (valid until
 * the next call); how many. Those before to are gone afterwards: a send
 * carries its thread's pieces since its last one, whichever it took. */
size_t tt_tls_pending_take(struct tt_tls_pending *tp, __u32 tid, __u32 from,
			   __u32 to, const struct tt_tls_plain **out);

#endif /* TT_TLSPLAIN_H */
