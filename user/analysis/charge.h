/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Private to the critical-path walk (walk.c): its charges of the path,
 * latest first (charge.c says how each piece is judged).
 */
#ifndef TT_CHARGE_H
#define TT_CHARGE_H

#include "cp_internal.h"

/* One piece of the path, to stage; lost windows in it to other.unknown. */
void cp_charge(struct walk *wk, __u64 start, __u64 end, __u32 tid, __u8 state,
	       __u8 stage, const char *reason);
/* A wait for a runtime's lock on the path: its share of gil_ns. */
void cp_count_gil(struct walk *wk, __u64 lo, __u64 hi);
/* A piece of one of th's records. */
void cp_charge_rec(struct walk *wk, const struct cp_thread *th,
		   const struct cp_rec *rec, __u64 s, __u64 t);
/* th's records k and before, over [lo, t). */
void cp_charge_span(struct walk *wk, const struct cp_thread *th, long k,
		    __u64 lo, __u64 t);

#endif /* TT_CHARGE_H */
