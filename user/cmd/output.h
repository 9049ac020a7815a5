/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Output files of the commands (a recording, an HTML page), created
 * safely: never through a symbolic link, never over another's file. */
#ifndef TT_OUTPUT_H
#define TT_OUTPUT_H

#include <stdio.h>
#include <sys/stat.h>

/*
 * Moves an existing file at path aside (to path.old) as perf does, then
 * creates path once, exclusively and without following a link: a user who
 * can write its directory cannot turn root's writes onto another file.
 * A link or a non-regular file at path is refused. opt names the option
 * that gave path, for the messages. The fd (mode 0600), or -1 (said why);
 * *st says which file it is.
 */
int tt_output_create(const char *path, const char *opt, struct stat *st);
/* The same as a stdio stream opened for writing, or NULL (said why); a
 * ttftrace recording at path is refused, not moved aside. */
FILE *tt_output_fopen(const char *path, const char *opt, struct stat *st);
/* Closes f, written to path (tt_output_fopen) with err (0 or -errno); on
 * any error says why in one line and removes the file. 0 or 1. */
int tt_output_close(FILE *f, const char *path, const struct stat *st, int err);
/* Removes an output that never got its content, if path still names it. */
void tt_output_discard(const char *path, const struct stat *created);

#endif /* TT_OUTPUT_H */
