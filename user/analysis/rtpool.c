// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A runtime's helper pool (docs/design.md §4.4, "A runtime's helper pool"):
 * V8's platform workers, in Node, wait together on one condition variable
 * for the tasks an isolate posts (a garbage collection's, a compiler's). A
 * handler that builds and parses a long prompt posts several, waking the
 * pool: no hand-off, though the workers later wake the loop back (the
 * collection's end). Node names them "node", as its loop: they are told by
 * what they do.
 */
#include "cp_internal.h"
#include "waits.h"
#include "tt_arch.h"

/* a pool: this many threads wait on its word at least */
#define POOL_WAITERS 3

/* tid reads or writes a request of the index */
static bool serves(const struct rq_index *ix, __u32 tid)
{
	size_t a = cp_act_after(ix, tid, 0);

	return a < ix->nact && ix->act[a].tid == tid;
}

bool cp_mm_call(__s32 nr)
{
	return nr == TT_NR_mmap || nr == TT_NR_munmap || nr == TT_NR_mprotect ||
	       nr == TT_NR_brk || nr == TT_NR_mremap || nr == TT_NR_madvise;
}

/* A wait or wake in such a call, or in none (a page fault's) */
static bool mm_wait(__s32 nr)
{
	return nr < 0 || cp_mm_call(nr);
}

/* th serves no request, waits and wakes by futex(2) alone (or by the
 * address space's lock, its page faults' too) */
static bool futex_only(const struct tt_critpath *cp, const struct rq_index *ix,
		       const struct cp_thread *th)
{
	size_t i, waits = 0;
	__s32 nr;

	if (serves(ix, th->tid))
		return false;
	for (i = 0; i < th->nrecs; i++) {
		if (th->recs[i].state != REC_BLOCKED ||
		    th->recs[i].info >= cp->nblocks)
			continue;
		nr = cp->blocks[th->recs[i].info].syscall;
		if (nr != TT_NR_futex && !mm_wait(nr))
			return false;
		waits += nr == TT_NR_futex;
	}
	for (i = 0; i < th->nwout; i++) {
		nr = cp->wakes[th->wout[i]].syscall;
		if (nr != TT_NR_futex && !mm_wait(nr))
			return false;
	}
	return waits > 0;
}

/* A condition variable's waiters sleep on one of two adjacent words
 * (glibc's __g_signals[2], its groups in turn): the pair is the pool's */
static __u64 word_pair(__u64 word)
{
	return word & ~7ULL;
}

/* The waiters of word (word_pair()'s half), all futex_only(), into tid[]
 * (n so far, distinct); false when one is not */
static bool pool_waiters(const struct tt_critpath *cp, __u64 word, __u32 tgid,
			 __u32 *tid, size_t *n)
{
	const struct cp_word *fw = cp_word_find(cp, word, tgid);
	const struct cp_thread *x;
	size_t i, j;

	for (i = 0; fw && i < WORD_WAITERS && fw->waiter[i]; i++) {
		x = cp_thread_find(cp, fw->waiter[i]);
		if (!x || !x->futex_only)
			return false;
		for (j = 0; j < *n && tid[j] != x->tid; j++)
			;
		if (j == *n)
			tid[(*n)++] = x->tid;
	}
	return true;
}

/* (word, tgid) is a pool's: POOL_WAITERS threads or more wait on its pair,
 * all futex_only() (marked so), and it is no runtime's lock (CPython's
 * GIL) */
static bool pool_word(const struct tt_critpath *cp, __u64 word, __u32 tgid)
{
	__u32 tid[2 * WORD_WAITERS];
	__u64 pair = word_pair(word);
	size_t n = 0;

	if (cp_runtime_word(cp, pair, tgid) ||
	    cp_runtime_word(cp, pair + 4, tgid))
		return false;
	return pool_waiters(cp, pair, tgid, tid, &n) &&
	       pool_waiters(cp, pair + 4, tgid, tid, &n) && n >= POOL_WAITERS;
}

/* The pools' word pairs found, (word_pair(), tgid): a process has one or
 * two */
#define POOL_WORDS 8
struct pool_words {
	__u64 word[POOL_WORDS];
	__u32 tgid[POOL_WORDS];
	size_t n;
};

static bool pool_known(const struct pool_words *pw, __u64 word, __u32 tgid)
{
	size_t i;

	for (i = 0; i < pw->n; i++)
		if (pw->word[i] == word && pw->tgid[i] == tgid)
			return true;
	return false;
}

/* The pool words a thread serving requests woke th on */
static void pool_woken(const struct tt_critpath *cp, const struct rq_index *ix,
		       const struct cp_thread *th, struct pool_words *pw)
{
	const struct cp_wake *w;
	size_t i;

	for (i = 0; i < th->nrecs && pw->n < POOL_WORDS; i++) {
		if (th->recs[i].state != REC_RUNNABLE ||
		    th->recs[i].info == NONE32)
			continue;
		w = &cp->wakes[th->recs[i].info];
		if (w->syscall != TT_NR_futex ||
		    pool_known(pw, word_pair(w->arg0), th->tgid) ||
		    !serves(ix, w->waker_tid) ||
		    !pool_word(cp, w->arg0, th->tgid))
			continue;
		pw->word[pw->n] = word_pair(w->arg0);
		pw->tgid[pw->n++] = th->tgid;
	}
}

/* A pool's thread is futex_only() and waits on a word a thread serving
 * requests woke one of them on: a task posted to the pool */
void cp_mark_rt_pools(struct tt_critpath *cp, const struct rq_index *ix)
{
	struct pool_words pw = { .n = 0 };
	struct cp_thread *th;
	size_t i, j;

	for (i = 0; i < cp->nthreads; i++)
		cp->threads[i]->futex_only = futex_only(cp, ix, cp->threads[i]);
	for (i = 0; i < cp->nthreads; i++)
		if (cp->threads[i]->futex_only)
			pool_woken(cp, ix, cp->threads[i], &pw);
	for (i = 0; i < cp->nthreads; i++) {
		th = cp->threads[i];
		th->rt_pool = false;
		for (j = 0; th->futex_only && j < CP_THREAD_WORDS; j++)
			if (pool_known(&pw, word_pair(th->waited_words[j]),
				       th->tgid))
				th->rt_pool = true;
	}
}
