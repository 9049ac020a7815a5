/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Private to the critical-path analysis: the rules of user/analysis/locks.c
 * (docs/design.md §4.3, §4.4), for the walk and the hand-off scans.
 */
#ifndef TT_LOCKS_H
#define TT_LOCKS_H

#include "cp_internal.h"

/* When th, woken at its record k, first ran after t: t when not at once. */
__u64 cp_ran_after(const struct cp_thread *th, long k, __u64 t);
/* When consumer th, whose hand-off at tb bounds the queue, ran again: its
 * hand-off's target often preempts it at once (a wakeup on its CPU), and
 * the engine admits the next request only when it runs again (its wait
 * for a CPU stays scheduler.runqueue), past a release of its mutex that
 * preempted it again. tb when it ran on. */
__u64 cp_ran_after_boundary(const struct tt_critpath *cp,
			    const struct cp_thread *th, __u64 tb);
/* c's wake of from at tj was the release of an application's mutex
 * (not a runtime's lock) from blocked on right after c's earlier wake of
 * it through another futex word (one nobody passes around): a condition
 * variable's signal, then its mutex taken by others first (a convoy; c ran
 * its next step meanwhile). The hand-off is that signal's time; else tj.
 * A pool's worker may then pop another item than the one it was signalled
 * for; the rule assumes each waiter waits for its own (tokens). */
__u64 cp_signal_before_mutex(const struct tt_critpath *cp,
			     const struct cp_thread *c, __u64 tj, __u32 from);
/* When th, taking a request up at t, first ran holding the interpreter
 * lock for good: its waits for that lock (another thread of its process
 * held it) while it ran less than a relay's CPU (RELAY_CPU_NS) in all since
 * t keep the request waiting, the waits for a CPU after them too: a waiter
 * that got the lock and waits again at once let it go (CPython's holder
 * asked to drop it; a wait that timed out asks, then waits again). t when
 * it ran on; the last such run up to limit (the token's hand-off). */
__u64 cp_ran_past_gil(const struct tt_critpath *cp, const struct cp_thread *th,
		      __u64 t, __u64 limit);
/* Consumer th handed off to another request (its boundary cs->tb) and soon
 * after (RELAY_CPU_NS) waited for a lock of a thread that is not this
 * request's reader or writer, whose wake ended its record k: an engine that
 * hands its step's tokens to its output thread and waits for a lock that
 * thread then holds (the queue's mutex, the GIL) is at its boundary, and the
 * holder's work is no part of this request's path. */
bool cp_boundary_then_lock(const struct walk *wk, const struct cp_thread *th,
			   long k, const struct consumer *cs);
/* th, a thread the reader started at t for the request, waited for an
 * application's lock (not only the GIL) before it ran a relay's CPU: when
 * it held it (transformers' generate() threads queue on the model's lock,
 * text-generation-webui's generation_lock); else 0. */
__u64 cp_spawned_lock(const struct tt_critpath *cp, const struct cp_thread *th,
		      __u64 t);
/* On a walk that looks for it (its releases): runnable record k of th
 * ends a wait on a lock (the GIL, a word judged a lock) that the request's
 * reader released, and since floor th ran less than a relay's CPU and
 * blocked on locks only: it worked on nothing since floor, so took up
 * nothing queued after floor before k. */
bool cp_release_pickup(const struct walk *wk, const struct cp_thread *th,
		       long k, __u64 floor);
/* A hand-off before th's lock waits that end at runnable record k, when
 * th waited on locks only since: the wake to stay on th for, or NULL. */
const struct cp_wake *cp_lock_detour(const struct tt_critpath *cp,
				     const struct cp_thread *th, long k,
				     __u64 floor);
/* A detour the first walk takes too (the wait is charged as th's, the GIL's
 * counted). A convoy: cp_lock_detour()'s hand-off handed (not the reader's)
 * brought the request's writer th its token, and the lock th then waited on
 * until its runnable record k is one its threads pass around (an
 * application's mutex, the GIL), whoever released it. Or the GIL that the
 * request's reader or writer held over th, come to by a hand-off (cs: not
 * as the GIL's holder), handed work before: the event loop's work for
 * other requests (tools/scenarios' hf). */
bool cp_first_detour(const struct walk *wk, const struct cp_thread *th, long k,
		     const struct cp_wake *handed, const struct consumer *cs);
/* The record of th's turn at an application's lock that k ends (or whose
 * tries for the GIL k ends), or -1. */
long cp_lock_turn(const struct walk *wk, const struct cp_thread *th, long k);
/* An event loop's release of a lock to a worker, above floor and the last
 * other request's first token, before th's pick-up at tb by the loop: the
 * lock's next holder's turn, when it ran holding it; else 0 (§4.3). */
__u64 cp_loop_lock_turn(const struct walk *wk, const struct cp_thread *th,
			__u64 floor, __u64 tb);
/* holder woke tid through a word no lock's (a put, a notify, a data
 * wake) in [from, t]: it hands tid work, or a result. */
bool cp_handed_work(const struct tt_critpath *cp,
		    const struct cp_thread *holder, __u32 tid, __u64 from,
		    __u64 t);
/* The holder of the lock whose wait ends at th's runnable record k, a wait
 * begun above lo, works elsewhere: busy with another request (its handler
 * thread holding the GIL), or holding the GIL over a thread that the walk
 * came to by a hand-off (handed; not the writer), neither of the two having
 * woken the other through a word no lock's since the request came. Its
 * path counts only while th waited (walk.c's struct lock_return). */
bool cp_holder_elsewhere(const struct walk *wk, const struct cp_thread *th,
			 long k, const struct cp_thread *holder, bool handed,
			 __u64 lo);
/* tid is the request's writer, serving no other request at t: its own
 * handler (grpc's pool thread), not a relay. */
bool cp_writer_alone(const struct walk *wk, __u32 tid, __u64 t);
/* The request's writer, serving no other request then, started th or
 * woke it (not through a lock) after the read and before the wait its
 * turn k ends: when; else 0. */
__u64 cp_writer_handed(const struct walk *wk, const struct cp_thread *th,
		       long k);
/* When th, at its turn k, first ran holding the lock and the GIL. */
__u64 cp_lock_acquired(const struct tt_critpath *cp, const struct cp_thread *th,
		       long k);

#endif /* TT_LOCKS_H */
