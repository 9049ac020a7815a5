/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one JSON string writer: every string that reaches a JSON output (the
 * report, the Perfetto trace) goes through tt_json_str, so that the output
 * is valid UTF-8 JSON whatever bytes a traced program put in its thread
 * names, a host name or an option held (docs/design.md §6.3).
 */
#ifndef TT_JSON_H
#define TT_JSON_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes s, at most max bytes or up to its NUL, as a quoted JSON string:
 * '"' and '\' are backslash-escaped, control bytes (< 0x20) and DEL become
 * \u00XX, valid UTF-8 is copied, and each byte that does not start a valid
 * UTF-8 sequence (stray continuation bytes, overlong forms, surrogates,
 * code points past U+10FFFF, a cut sequence) becomes U+FFFD.
 */
void tt_json_str(FILE *out, const char *s, size_t max);
/* ,"key":"s" with s as tt_json_str writes it; key is ours, plain ASCII. */
void tt_json_kv_str(FILE *out, const char *key, const char *s, size_t max);
/* ,"key":v, or ,"key":null when v is 0 (unknown, none, no such limit) */
void tt_json_kv_opt(FILE *out, const char *key, unsigned long long v);

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if none;
 * ASCII (including NUL) is 1. */
size_t tt_utf8_seq(const unsigned char *p, size_t n);
/* The longest prefix of s[0..n) that does not end inside a UTF-8 sequence
 * that s began (a copy cut at a fixed size stays whole characters). */
size_t tt_utf8_cut(const char *s, size_t n);

#endif /* TT_JSON_H */
