/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one JSON string writer (json.h) and the one text escaper (text.h),
 * case by case: what goes in, what must come out. */
#include <stdlib.h>
#include "json.h"
#include "json_check.h"
#include "text.h"
#include "tt_test.h"

struct esc_case {
	const char *in;
	size_t max; /* 0: SIZE_MAX */
	const char *json; /* what tt_json_str writes */
	const char *text; /* what tt_text_escape writes */
};

static const struct esc_case cases[] = {
	{ "plain", 0, "\"plain\"", "plain" },
	{ "q\"b\\", 0, "\"q\\\"b\\\\\"", "q\"b\\\\" },
	{ "\x1b[2J\n\t\r\x7f", 0, "\"\\u001b[2J\\u000a\\u0009\\u000d\\u007f\"",
	  "\\x1b[2J\\n\\t\\r\\x7f" },
	{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 0,
	  "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
	  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
	/* a stray continuation, 0xff, an overlong '/', a surrogate */
	{ "\x80\xff\xc0\xaf\xed\xa0\x80", 0,
	  "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	  "\xef\xbf\xbd\xef\xbf\xbd\"",
	  "\\x80\\xff\\xc0\\xaf\\xed\\xa0\\x80" },
	/* a C1 control (U+009B, CSI on some terminals) is valid UTF-8 */
	{ "\xc2\x9b", 0, "\"\xc2\x9b\"", "\\xc2\\x9b" },
	/* a sequence cut by max */
	{ "ab\xc3\xa9", 3, "\"ab\xef\xbf\xbd\"", "ab\\xc3" },
};

static void test_cases(void)
{
	char buf[200];
	struct jc_val v;
	char *out;
	size_t len, i;
	FILE *f;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct esc_case *c = &cases[i];
		size_t max = c->max ? c->max : SIZE_MAX;

		f = open_memstream(&out, &len);
		tt_json_str(f, c->in, max);
		fclose(f);
		if (strcmp(out, c->json))
			fprintf(stderr, "  case %zu: json %s, want %s\n", i,
				out, c->json);
		ASSERT_TRUE(!strcmp(out, c->json), "!strcmp(out, c->json)");
		ASSERT_TRUE(jc_parse(out, len, &v, buf, sizeof(buf)) == 0,
			    "jc_parse(out, len, &v, buf, sizeof(bu...");
		jc_free(&v);
		free(out);
		tt_text_escape(buf, sizeof(buf), c->in, max);
		if (strcmp(buf, c->text))
			fprintf(stderr, "  case %zu: text %s, want %s\n", i,
				buf, c->text);
		ASSERT_TRUE(!strcmp(buf, c->text), "!strcmp(buf, c->text)");
	}
}

/* Every byte value, alone and after a lead byte: strict JSON each time. */
static void test_all_bytes_strict(void)
{
	char s[3] = { 0 }, err[200];
	struct jc_val v;
	unsigned int b, lead;
	char *out;
	size_t len;
	FILE *f;

	for (lead = 0; lead < 2; lead++) {
		for (b = 1; b < 256; b++) {
			s[0] = lead ? (char)0xe2 : (char)b;
			s[1] = lead ? (char)b : 0;
			f = open_memstream(&out, &len);
			tt_json_str(f, s, SIZE_MAX);
			fclose(f);
			if (jc_parse(out, len, &v, err, sizeof(err))) {
				fprintf(stderr, "  byte %02x: %s\n", b, err);
				ASSERT_TRUE(!"strict JSON", "!\"strict JSON\"");
			}
			jc_free(&v);
			free(out);
		}
	}
}

/* The escape is cut at an escape's boundary, always terminated. */
/* HTML: hostile thread names are text, in an element or an attribute */
static void test_html(void)
{
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "<script>", "&lt;script&gt;" },
		{ "a\"b'c&d", "a&quot;b&#39;c&amp;d" },
		{ "<img src=x>", "&lt;img src=x&gt;" },
		{ "\x1b[2J\xff\xc2\x9b", "\\x1b[2J\\xff\\xc2\\x9b" },
		{ "\xc3\xa9\n\t\\", "\xc3\xa9\n\t\\" },
	};
	size_t i, len;
	char *out;
	FILE *f;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		f = open_memstream(&out, &len);
		tt_html_str(f, c[i].in, SIZE_MAX);
		fclose(f);
		ASSERT_STREQ(out, c[i].out, c[i].in);
		free(out);
	}
	/* max cuts the string: nothing of what lies beyond */
	f = open_memstream(&out, &len);
	tt_html_str(f, "ab<cd", 2);
	fclose(f);
	ASSERT_STREQ(out, "ab", "cut at max");
	free(out);
}

static void test_text_room(void)
{
	char small[6];

	ASSERT_TRUE(!strcmp(tt_text_escape(small, sizeof(small), "ab\x1b", 3),
			    "ab"),
		    "!strcmp(tt_text_escape(small, sizeof(...");
	ASSERT_TRUE(!strcmp(tt_text_escape(small, sizeof(small), "abcdefg", 7),
			    "abcde"),
		    "!strcmp(tt_text_escape(small, sizeof(...");
}

static void test_utf8_cut(void)
{
	ASSERT_EQ(tt_utf8_cut("abc", 3), 3, "tt_utf8_cut(\"abc\", 3)");
	ASSERT_EQ(tt_utf8_cut("a\xc3\xa9", 3), 3,
		  "tt_utf8_cut(\"a\\xc3\\xa9\", 3)");
	ASSERT_EQ(tt_utf8_cut("a\xc3", 2), 1, "tt_utf8_cut(\"a\\xc3\", 2)");
	ASSERT_EQ(tt_utf8_cut("a\xe2\x82", 3), 1,
		  "tt_utf8_cut(\"a\\xe2\\x82\", 3)");
	ASSERT_EQ(tt_utf8_cut("a\xe2\x82\xac", 4), 4,
		  "tt_utf8_cut(\"a\\xe2\\x82\\xac\", 4)");
	ASSERT_EQ(tt_utf8_cut("a\xf0\x9f\x98", 4), 1,
		  "tt_utf8_cut(\"a\\xf0\\x9f\\x98\", 4)");
	/* bytes that no lead began are not ours to drop */
	ASSERT_EQ(tt_utf8_cut("a\x80\x80", 3), 3,
		  "tt_utf8_cut(\"a\\x80\\x80\", 3)");
}

int main(void)
{
	TT_RUN(test_cases);
	TT_RUN(test_all_bytes_strict);
	TT_RUN(test_html);
	TT_RUN(test_text_room);
	TT_RUN(test_utf8_cut);
	TT_EXIT();
}
