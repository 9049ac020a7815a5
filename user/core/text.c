// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Control bytes and invalid UTF-8 shown as escapes in text output. */
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "text.h"

const char *tt_text_escape(char *buf, size_t len, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max), i = 0, o = 0, k;
	char esc[8];

	if (!len)
		return buf;
	while (i < n) {
		k = tt_utf8_seq(p + i, n - i);
		/* C1 controls (U+0080..U+009F) act like ESC on some terminals */
		if (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)
			k = 0;
		if (p[i] == '\\')
			snprintf(esc, sizeof(esc), "\\\\");
		else if (p[i] == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (p[i] == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else if (p[i] == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (!k || p[i] < 0x20 || p[i] == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
		else {
			if (o + k >= len)
				break;
			memcpy(buf + o, p + i, k);
			o += k;
			i += k;
			continue;
		}
		k = strlen(esc);
		if (o + k >= len)
			break;
		memcpy(buf + o, esc, k);
		o += k;
		i++;
	}
	buf[o] = '\0';
	return buf;
}

void tt_html_str(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strnlen(s, max), i = 0, k;

	while (i < n) {
		k = tt_utf8_seq(p + i, n - i);
		/* the text escaper's rule: nothing invisible reaches a reader */
		if (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0)
			k = 0;
		if (p[i] == '&')
			fputs("&amp;", out);
		else if (p[i] == '<')
			fputs("&lt;", out);
		else if (p[i] == '>')
			fputs("&gt;", out);
		else if (p[i] == '"')
			fputs("&quot;", out);
		else if (p[i] == '\'')
			fputs("&#39;", out);
		else if (p[i] == '\n' || p[i] == '\t')
			fputc(p[i], out);
		else if (!k || p[i] < 0x20 || p[i] == 0x7f)
			fprintf(out, "\\x%02x", p[i]);
		else {
			fwrite(p + i, 1, k, out);
			i += k;
			continue;
		}
		i++;
	}
}

/* The recording's host, kernel and command line, escaped: they are bytes
 * of the recorded machine. */
void tt_meta_text(FILE *out, const struct tt_file_meta *m)
{
	char host[TT_TEXT_ROOM(sizeof(m->hostname))];
	char kernel[TT_TEXT_ROOM(sizeof(m->kernel))];
	char opts[TT_TEXT_ROOM(sizeof(m->options))];

	fprintf(out, "host: %s  kernel: %s\n",
		tt_text_escape(host, sizeof(host), m->hostname,
			       sizeof(m->hostname)),
		tt_text_escape(kernel, sizeof(kernel), m->kernel,
			       sizeof(m->kernel)));
	if (m->recorder[0])
		fprintf(out, "recorder: ttftrace %s\n",
			tt_text_escape(opts, sizeof(opts), m->recorder,
				       sizeof(m->recorder)));
	if (m->options[0])
		fprintf(out, "recorded with: %s\n",
			tt_text_escape(opts, sizeof(opts), m->options,
				       sizeof(m->options)));
}
