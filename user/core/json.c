// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The one JSON string writer and the UTF-8 rules it and the header use. */
#include <string.h>
#include <linux/types.h>
#include "json.h"

size_t tt_utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	__u32 cp;

	if (!n)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

size_t tt_utf8_cut(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = n, lead;

	/* back over continuation bytes to the last lead byte: at most 3 */
	while (i > 0 && n - i < 4 && (p[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || p[i - 1] < 0xc0)
		return n;
	lead = i - 1;
	/* the sequence that lead begins is whole only if it fits */
	if (p[lead] >= 0xf0)
		return n - lead >= 4 ? n : lead;
	if (p[lead] >= 0xe0)
		return n - lead >= 3 ? n : lead;
	return n - lead >= 2 ? n : lead;
}

void tt_json_str(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max), i = 0, k;

	fputc('"', out);
	while (i < n) {
		if (p[i] == '"' || p[i] == '\\') {
			fprintf(out, "\\%c", p[i]);
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			fprintf(out, "\\u%04x", p[i]);
		} else if (p[i] < 0x80) {
			fputc(p[i], out);
		} else {
			k = tt_utf8_seq(p + i, n - i);
			if (k) {
				fwrite(p + i, 1, k, out);
				i += k;
				continue;
			}
			/* U+FFFD: a JSON file must be UTF-8, a comm is any bytes */
			fputs("\xef\xbf\xbd", out);
		}
		i++;
	}
	fputc('"', out);
}

void tt_json_kv_str(FILE *out, const char *key, const char *s, size_t max)
{
	fprintf(out, ",\"%s\":", key);
	tt_json_str(out, s, max);
}

void tt_json_kv_opt(FILE *out, const char *key, unsigned long long v)
{
	if (v)
		fprintf(out, ",\"%s\":%llu", key, v);
	else
		fprintf(out, ",\"%s\":null", key);
}
