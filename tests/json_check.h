/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A strict JSON parser for tests (RFC 8259): recursive descent into a small
 * tree. Rejects what lenient readers let through: trailing commas, leading
 * zeros, bad escapes, lone surrogates, raw control characters, bytes that
 * are not UTF-8, duplicate keys, trailing garbage.
 */
#ifndef TT_JSON_CHECK_H
#define TT_JSON_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jc_type { JC_NULL, JC_BOOL, JC_NUM, JC_STR, JC_ARR, JC_OBJ };

struct jc_val {
	enum jc_type type;
	bool b;
	double num;
	char *raw; /* JC_NUM: the number's text */
	char *str; /* JC_STR: unescaped UTF-8, NUL-terminated */
	size_t len; /* JC_STR: bytes in str */
	struct jc_val *items; /* JC_ARR, JC_OBJ: the values */
	char **keys; /* JC_OBJ: the keys */
	size_t n;
};

struct jc_parser {
	const char *p, *end;
	int depth;
	char err[128];
};

#define JC_MAX_DEPTH 64

static inline int jc_fail(struct jc_parser *ps, const char *why)
{
	if (!ps->err[0])
		snprintf(ps->err, sizeof(ps->err), "%s", why);
	return -1;
}

static inline void jc_ws(struct jc_parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static inline void jc_free(struct jc_val *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		jc_free(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->raw);
	free(v->str);
	memset(v, 0, sizeof(*v));
}

/* Appends code point c as UTF-8 to buf (room for 4 more bytes). */
static inline size_t jc_put_utf8(char *buf, size_t n, uint32_t c)
{
	if (c < 0x80) {
		buf[n++] = c;
	} else if (c < 0x800) {
		buf[n++] = 0xc0 | c >> 6;
		buf[n++] = 0x80 | (c & 0x3f);
	} else if (c < 0x10000) {
		buf[n++] = 0xe0 | c >> 12;
		buf[n++] = 0x80 | ((c >> 6) & 0x3f);
		buf[n++] = 0x80 | (c & 0x3f);
	} else {
		buf[n++] = 0xf0 | c >> 18;
		buf[n++] = 0x80 | ((c >> 12) & 0x3f);
		buf[n++] = 0x80 | ((c >> 6) & 0x3f);
		buf[n++] = 0x80 | (c & 0x3f);
	}
	return n;
}

static inline int jc_hex4(struct jc_parser *ps, uint32_t *c)
{
	int i;

	*c = 0;
	if (ps->end - ps->p < 4)
		return jc_fail(ps, "short \\u escape");
	for (i = 0; i < 4; i++) {
		char h = *ps->p++;

		*c <<= 4;
		if (h >= '0' && h <= '9')
			*c |= h - '0';
		else if (h >= 'a' && h <= 'f')
			*c |= h - 'a' + 10;
		else if (h >= 'A' && h <= 'F')
			*c |= h - 'A' + 10;
		else
			return jc_fail(ps, "bad hex digit");
	}
	return 0;
}

/*
 * A raw UTF-8 sequence at ps->p: its length, or 0 when invalid. Follows
 * the byte ranges of RFC 3629 section 4, which leave out overlong forms,
 * surrogates and code points above U+10FFFF.
 */
static inline size_t jc_utf8_len(const struct jc_parser *ps)
{
	const unsigned char *p = (const unsigned char *)ps->p;
	size_t avail = ps->end - ps->p, len, i;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed second byte */

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	len = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (avail < len || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* A string at ps->p (at its opening quote) into *out (malloc'd). */
static inline int jc_string(struct jc_parser *ps, char **out, size_t *len)
{
	static const char escapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	size_t cap = 16, n = 0, k;
	char *buf = malloc(cap), *nb;
	const char *esc;
	uint32_t c, lo;

	if (!buf)
		return jc_fail(ps, "out of memory");
	ps->p++;
	for (;;) {
		if (n + 5 > cap) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb)
				goto fail_mem;
			buf = nb;
		}
		if (ps->p >= ps->end) {
			jc_fail(ps, "unterminated string");
			goto fail;
		}
		c = (unsigned char)*ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20) {
			jc_fail(ps, "raw control character in string");
			goto fail;
		}
		if (c >= 0x80) {
			k = jc_utf8_len(ps);
			if (!k) {
				jc_fail(ps, "invalid UTF-8");
				goto fail;
			}
			memcpy(buf + n, ps->p, k);
			n += k;
			ps->p += k;
			continue;
		}
		ps->p++;
		if (c != '\\') {
			buf[n++] = c;
			continue;
		}
		if (ps->p >= ps->end) {
			jc_fail(ps, "unterminated escape");
			goto fail;
		}
		c = (unsigned char)*ps->p++;
		if (c == 'u') {
			if (jc_hex4(ps, &c))
				goto fail;
			if (c >= 0xdc00 && c <= 0xdfff) {
				jc_fail(ps, "lone low surrogate");
				goto fail;
			}
			if (c >= 0xd800 && c <= 0xdbff) {
				if (ps->end - ps->p < 2 || ps->p[0] != '\\' ||
				    ps->p[1] != 'u') {
					jc_fail(ps, "lone high surrogate");
					goto fail;
				}
				ps->p += 2;
				if (jc_hex4(ps, &lo))
					goto fail;
				if (lo < 0xdc00 || lo > 0xdfff) {
					jc_fail(ps, "bad low surrogate");
					goto fail;
				}
				c = 0x10000 + ((c - 0xd800) << 10) +
				    (lo - 0xdc00);
			}
			n = jc_put_utf8(buf, n, c);
			continue;
		}
		/* the other escapes: each letter and what it stands for */
		esc = c ? strchr(escapes, c) : NULL;
		if (!esc || (esc - escapes) % 2) {
			jc_fail(ps, "bad escape");
			goto fail;
		}
		buf[n++] = esc[1];
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
fail_mem:
	jc_fail(ps, "out of memory");
fail:
	free(buf);
	return -1;
}

static inline bool jc_digit(const struct jc_parser *ps)
{
	return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

static inline int jc_number(struct jc_parser *ps, struct jc_val *v)
{
	const char *s = ps->p;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (!jc_digit(ps))
		return jc_fail(ps, "bad number");
	if (*ps->p == '0') {
		ps->p++;
		if (jc_digit(ps))
			return jc_fail(ps, "leading zero");
	} else {
		while (jc_digit(ps))
			ps->p++;
	}
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (!jc_digit(ps))
			return jc_fail(ps, "no digit after the point");
		while (jc_digit(ps))
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (!jc_digit(ps))
			return jc_fail(ps, "bad exponent");
		while (jc_digit(ps))
			ps->p++;
	}
	v->type = JC_NUM;
	v->raw = strndup(s, ps->p - s);
	if (!v->raw)
		return jc_fail(ps, "out of memory");
	v->num = strtod(v->raw, NULL);
	return 0;
}

static inline int jc_value(struct jc_parser *ps, struct jc_val *v);

static inline int jc_push(struct jc_parser *ps, struct jc_val *v, size_t *cap,
			  bool keys)
{
	void *ni, *nk;

	if (v->n < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 8;
	ni = realloc(v->items, *cap * sizeof(*v->items));
	if (!ni)
		return jc_fail(ps, "out of memory");
	v->items = ni;
	if (keys) {
		nk = realloc(v->keys, *cap * sizeof(*v->keys));
		if (!nk)
			return jc_fail(ps, "out of memory");
		v->keys = nk;
	}
	return 0;
}

/* Optional whitespace then the key of a member of v (an object): a string
 * none of the others has; then ':'. */
static inline int jc_key(struct jc_parser *ps, struct jc_val *v, char **key)
{
	size_t i, klen;

	jc_ws(ps);
	if (ps->p >= ps->end || *ps->p != '"')
		return jc_fail(ps, "expected a key");
	if (jc_string(ps, key, &klen))
		return -1;
	for (i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], *key))
			break;
	jc_ws(ps);
	if (i < v->n || ps->p >= ps->end || *ps->p != ':') {
		free(*key);
		return jc_fail(ps, i < v->n ? "duplicate key" : "expected :");
	}
	ps->p++;
	return 0;
}

/* An array or, when obj, an object, at its opening bracket. */
static inline int jc_container(struct jc_parser *ps, struct jc_val *v, bool obj)
{
	char close = obj ? '}' : ']', *key = NULL;
	size_t cap = 0;

	v->type = obj ? JC_OBJ : JC_ARR;
	ps->p++;
	jc_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		if (obj && jc_key(ps, v, &key))
			return -1;
		if (jc_push(ps, v, &cap, obj)) {
			free(key);
			return -1;
		}
		memset(&v->items[v->n], 0, sizeof(*v->items));
		if (obj)
			v->keys[v->n] = key;
		v->n++;
		if (jc_value(ps, &v->items[v->n - 1]))
			return -1;
		jc_ws(ps);
		if (ps->p >= ps->end)
			return jc_fail(ps, "unterminated array or object");
		if (*ps->p == close) {
			ps->p++;
			return 0;
		}
		if (*ps->p != ',')
			return jc_fail(ps, "expected , or the closing bracket");
		ps->p++;
	}
}

static inline bool jc_literal(struct jc_parser *ps, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n))
		return false;
	ps->p += n;
	return true;
}

static inline int jc_value(struct jc_parser *ps, struct jc_val *v)
{
	int err;

	jc_ws(ps);
	if (ps->p >= ps->end)
		return jc_fail(ps, "expected a value");
	if (++ps->depth > JC_MAX_DEPTH)
		return jc_fail(ps, "too deep");
	switch (*ps->p) {
	case '{':
	case '[':
		err = jc_container(ps, v, *ps->p == '{');
		break;
	case '"':
		v->type = JC_STR;
		err = jc_string(ps, &v->str, &v->len);
		break;
	case 't':
	case 'f':
		v->type = JC_BOOL;
		v->b = *ps->p == 't';
		err = jc_literal(ps, v->b ? "true" : "false") ?
			      0 :
			      jc_fail(ps, "bad literal");
		break;
	case 'n':
		v->type = JC_NULL;
		err = jc_literal(ps, "null") ? 0 : jc_fail(ps, "bad literal");
		break;
	default:
		err = jc_number(ps, v);
		break;
	}
	ps->depth--;
	return err;
}

/* Parses text[0..len) as one JSON value into *v (jc_free it); 0, or -1
 * with the reason in err. */
static inline int jc_parse(const char *text, size_t len, struct jc_val *v,
			   char *err, size_t errlen)
{
	struct jc_parser ps = { .p = text, .end = text + len };
	int ret;

	memset(v, 0, sizeof(*v));
	ret = jc_value(&ps, v);
	if (!ret) {
		jc_ws(&ps);
		if (ps.p != ps.end)
			ret = jc_fail(&ps, "trailing data");
	}
	if (ret) {
		snprintf(err, errlen, "%s (offset %td)", ps.err, ps.p - text);
		jc_free(v);
	}
	return ret;
}

/* The member key of object v, or NULL. */
static inline const struct jc_val *jc_get(const struct jc_val *v,
					  const char *key)
{
	size_t i;

	if (!v || v->type != JC_OBJ)
		return NULL;
	for (i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return &v->items[i];
	return NULL;
}

/* The string member key of v, or NULL. */
static inline const char *jc_str(const struct jc_val *v, const char *key)
{
	const struct jc_val *m = jc_get(v, key);

	return m && m->type == JC_STR ? m->str : NULL;
}

/*
 * A non-negative number of microseconds with at most three decimals
 * ("12.345") as exact nanoseconds; false for anything else.
 */
static inline bool jc_us_to_ns(const struct jc_val *v, uint64_t *ns)
{
	const char *p;
	uint64_t whole = 0, frac = 0;
	int digits = 0;

	if (!v || v->type != JC_NUM)
		return false;
	for (p = v->raw; *p >= '0' && *p <= '9'; p++)
		whole = whole * 10 + (*p - '0');
	if (p == v->raw)
		return false;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++)
			frac = frac * 10 + (*p - '0');
		if (digits == 0 || digits > 3)
			return false;
		while (digits++ < 3)
			frac *= 10;
	}
	if (*p)
		return false;
	*ns = whole * 1000 + frac;
	return true;
}

/* A non-negative integer member key of v. */
static inline bool jc_u64(const struct jc_val *v, const char *key,
			  uint64_t *out)
{
	const struct jc_val *m = jc_get(v, key);
	const char *p;
	uint64_t x = 0;

	if (!m || m->type != JC_NUM || !m->raw[0])
		return false;
	for (p = m->raw; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		x = x * 10 + (*p - '0');
	}
	*out = x;
	return true;
}

#endif /* TT_JSON_CHECK_H */
