/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one text escaper: every string from a recording that reaches text
 * output (thread names, device paths, host and options) goes through it,
 * so a name such as "\x1b[2J" cannot clear a terminal or fake a line
 * (docs/design.md §6.3).
 */
#ifndef TT_TEXT_H
#define TT_TEXT_H

#include <stddef.h>
#include <stdio.h>
#include "event.h"

/*
 * s, at most max bytes or up to its NUL, into buf (always terminated,
 * cut at an escape's boundary): '\' as "\\", \n \r \t as themselves
 * escaped, other control bytes, DEL, C1 controls and bytes that are not
 * valid UTF-8 as "\xNN"; the rest as it is. Returns buf.
 */
const char *tt_text_escape(char *buf, size_t len, const char *s, size_t max);

/*
 * The one HTML escaper: s, at most max bytes or up to its NUL, as text
 * safe in an element or a quoted attribute of an HTML page: & < > " ' as
 * entities, newlines and tabs as themselves (white space to HTML: a
 * <pre> keeps them), other control bytes, DEL, C1 controls and bytes that are not valid
 * UTF-8 as "\xNN" (as tt_text_escape shows them); the rest as it is.
 */
void tt_html_str(FILE *out, const char *s, size_t max);

/* Room for the escape of a string of n bytes: "\xNN" per byte at most. */
#define TT_TEXT_ROOM(n) (4 * (n) + 1)

/* The recording's host, kernel, recorder and command line, one per line,
 * escaped: they are bytes of the recorded machine. */
void tt_meta_text(FILE *out, const struct tt_file_meta *m);

#endif /* TT_TEXT_H */
