/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Application markers (record --mark, docs/design.md §4.9): where a program
 * says itself that a request was enqueued, dispatched or got its first
 * token. A spec names an ELF symbol (plus a byte offset) or a USDT probe,
 * and optionally the argument that identifies the request.
 */
#ifndef TT_MARKS_H
#define TT_MARKS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct tt_mark_spec {
	__u32 kind; /* enum tt_mark_kind */
	__u32 arg; /* key=argN: N (1-based), 0 for none */
	__u32 peer_arg; /* peer=argM: M, the client's port, 0 for none */
	bool usdt;
	bool python; /* python:[PATH:]EVENT; symbol: the audit event */
	char path[PATH_MAX]; /* python: the interpreter, "" to be found */
	char symbol[256]; /* uprobe: the function; USDT: the probe's name */
	char provider[256]; /* USDT only */
	__u64 offset; /* uprobe: bytes past the symbol's start */
	__u32 py_layout; /* python: enum tt_py_layout of its interpreter */
	char shown[256]; /* python: the interpreter found, as its process names it */
};

/*
 * Parses "KIND=PATH:SYMBOL[+OFF]", "KIND=usdt:PATH:PROVIDER:NAME" or
 * "KIND=python:[PATH:]EVENT", each with [,key=argN][,peer=argM] (KIND:
 * enqueue, dispatch or token)
 * and checks it against the file: an ELF file, the symbol in its symbol
 * tables, the offset inside the symbol; for python, CPython's USDT probe
 * python:audit in PATH. 0, or -errno with one line in err.
 */
int tt_mark_parse(const char *text, struct tt_mark_spec *m, char *err,
		  size_t errlen);

/*
 * A python marker without PATH: the first program or libpython* of the
 * traced processes (each -p and its children) that has CPython's
 * python:audit probe. 0, or -errno with one line in err.
 */
int tt_mark_find_python(struct tt_mark_spec *m, const pid_t *pids, int npids,
			char *err, size_t errlen);

#endif /* TT_MARKS_H */
