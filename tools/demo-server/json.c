/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server JSON: the completion request body, a parser just wide enough
 * for {"prompt", "max_tokens", "stream"} and values it skips. */
#include "demo-server.h"

/* ------------------------------------------------------------------ JSON */

static const char *json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* a JSON string at p; sets *bytes to its decoded length in UTF-8 bytes */
static const char *json_string(const char *p, const char *end, size_t *bytes,
			       char *copy, size_t copy_size)
{
	size_t n = 0, add;

	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		char out = (char)c;

		if (c == '"') {
			if (copy && copy_size)
				copy[n < copy_size ? n : copy_size - 1] = '\0';
			if (bytes)
				*bytes = n;
			return p + 1;
		}
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			switch (*p) {
			case '"': case '\\': case '/':
				out = *p;
				break;
			case 'b': out = '\b'; break;
			case 'f': out = '\f'; break;
			case 'n': out = '\n'; break;
			case 'r': out = '\r'; break;
			case 't': out = '\t'; break;
			case 'u': {
				unsigned int cp = 0;
				int i;

				if (end - p < 5)
					return NULL;
				for (i = 1; i <= 4; i++) {
					char h = p[i];

					cp <<= 4;
					if (h >= '0' && h <= '9')
						cp |= h - '0';
					else if (h >= 'a' && h <= 'f')
						cp |= h - 'a' + 10;
					else if (h >= 'A' && h <= 'F')
						cp |= h - 'A' + 10;
					else
						return NULL;
				}
				p += 4;
				/* surrogates: 2 bytes each, 4 per pair */
				add = cp < 0x80 ? 1 : cp < 0x800 ? 2 :
				      (cp >= 0xd800 && cp < 0xe000) ? 2 : 3;
				for (; add; add--, n++)
					if (copy && n + 1 < copy_size)
						copy[n] = '?';
				continue;
			}
			default:
				return NULL;
			}
		}
		if (copy && n + 1 < copy_size)
			copy[n] = out;
		n++;
	}
	return NULL;
}

/* skips any JSON value; depth bounds nesting */
static const char *json_skip(const char *p, const char *end, int depth)
{
	char close;

	p = json_ws(p, end);
	if (p >= end || depth > 64)
		return NULL;
	if (*p == '"')
		return json_string(p, end, NULL, NULL, 0);
	if (*p == '{' || *p == '[') {
		close = *p == '{' ? '}' : ']';
		p = json_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p, end), end, NULL,
						NULL, 0);
				if (!p)
					return NULL;
				p = json_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p++;
			}
			p = json_skip(p, end, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p, end);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == close)
				return p + 1;
			return NULL;
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		while (p < end && strchr("+-.eE0123456789", *p))
			p++;
		return p;
	}
	if (end - p >= 4 && !memcmp(p, "true", 4))
		return p + 4;
	if (end - p >= 5 && !memcmp(p, "false", 5))
		return p + 5;
	if (end - p >= 4 && !memcmp(p, "null", 4))
		return p + 4;
	return NULL;
}

/* parses the completion body; on error *why says what is wrong */
int parse_completion(const char *s, size_t len, struct completion_args *args,
		     const char **why)
{
	const char *p = s, *end = s + len;
	bool has_prompt = false;

	memset(args, 0, sizeof(*args));
	*why = "body is not a JSON object";
	p = json_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = json_ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto tail;
	}
	for (;;) {
		char key[32];
		const char *v;

		p = json_string(json_ws(p, end), end, NULL, key, sizeof(key));
		if (!p)
			return -1;
		p = json_ws(p, end);
		if (p >= end || *p++ != ':')
			return -1;
		v = json_ws(p, end);
		if (!strcmp(key, "prompt")) {
			*why = "\"prompt\" must be a string";
			p = json_string(v, end, &args->prompt_bytes, NULL, 0);
			has_prompt = true;
		} else if (!strcmp(key, "max_tokens")) {
			char num[24];
			uint64_t n;

			*why = "\"max_tokens\" must be in 1..1000000";
			p = json_skip(v, end, 0);
			if (!p || p - v >= (ptrdiff_t)sizeof(num))
				return -1;
			memcpy(num, v, p - v);
			num[p - v] = '\0';
			if (!parse_u64_range(num, 1, MAX_TOKENS_LIMIT, &n))
				return -1;
			args->max_tokens = n;
			args->has_max_tokens = true;
		} else if (!strcmp(key, "stream")) {
			*why = "\"stream\" must be true or false";
			if (end - v >= 4 && !memcmp(v, "true", 4)) {
				args->stream = true;
				p = v + 4;
			} else if (end - v >= 5 && !memcmp(v, "false", 5)) {
				args->stream = false;
				p = v + 5;
			} else {
				return -1;
			}
		} else {
			p = json_skip(v, end, 0);
		}
		if (!p)
			return -1;
		*why = "body is not a JSON object";
		p = json_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		return -1;
	}
tail:
	if (json_ws(p, end) != end) {
		*why = "trailing bytes after the JSON object";
		return -1;
	}
	if (!has_prompt) {
		*why = "\"prompt\" is required";
		return -1;
	}
	return 0;
}
