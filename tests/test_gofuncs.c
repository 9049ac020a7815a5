// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Go's function table (user/record/gofuncs.c), the way a stripped Go
 * program's scheduler functions are found for the goroutine probes: tables
 * of each layout written here as Go's linker writes them, then cut short
 * and corrupted. The real binaries (stripped, position-independent, linked
 * by the system's linker) are tests/test_scen_go.sh's go-stripped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gofuncs.h"
#include "tt_test.h"

#define MAGIC_116 0xfffffffaU
#define MAGIC_118 0xfffffff0U
#define MAGIC_120 0xfffffff1U
#define TEXT 0x401000ULL

struct fn {
	const char *name;
	__u64 off; /* from the text */
};

static const struct fn fns[] = {
	{ "runtime.text", 0 },
	{ "runtime.chansend", 0x40 },
	{ "runtime.casgstatus", 0x2340 },
	{ "main.main", 0x9000 },
};

#define NFNS (sizeof(fns) / sizeof(fns[0]))

struct table {
	unsigned char b[1024];
	size_t len;
	size_t name_at[NFNS]; /* where function i's name offset is */
	size_t rec_at[NFNS]; /* where function i's record offset is */
};

static void put(struct table *t, size_t at, __u64 v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		t->b[at + i] = (unsigned char)(v >> (8 * i));
}

/* A table as Go's linker writes it: the header, the names, then the
 * function table (entry, record) and each function's record (entry,
 * name's offset). Go 1.18+ count entries from the text (text_start in the
 * header: 0 as a position-independent file holds it, before relocation). */
static void build(struct table *t, __u32 magic, unsigned int ptr,
		  __u64 text_start)
{
	bool from_text = magic != MAGIC_116;
	unsigned int field = from_text ? 4 : ptr;
	unsigned int nwords = from_text ? 8 : 7, w = 0;
	size_t names, funcs, at, rec;

	memset(t, 0, sizeof(*t));
	put(t, 0, magic, 4);
	t->b[6] = 1; /* the instruction quantum */
	t->b[7] = (unsigned char)ptr;
	names = 8 + nwords * ptr;
	at = names;
	for (size_t i = 0; i < NFNS; i++) {
		strcpy((char *)t->b + at, fns[i].name);
		at += strlen(fns[i].name) + 1;
	}
	funcs = (at + 7) & ~7UL;
	put(t, 8 + ptr * w++, NFNS, ptr); /* nfunc */
	put(t, 8 + ptr * w++, 0, ptr); /* nfiles */
	if (from_text)
		put(t, 8 + ptr * w++, text_start, ptr);
	put(t, 8 + ptr * w++, names, ptr); /* funcnameOffset */
	w += 3; /* cu, file and pc tables: not read */
	put(t, 8 + ptr * w, funcs, ptr); /* pclnOffset */
	rec = (NFNS + 1) * 2 * field;
	for (size_t i = 0, name = 0; i < NFNS; i++) {
		__u64 entry = from_text ? fns[i].off : TEXT + fns[i].off;

		put(t, funcs + 2 * i * field, entry, field);
		t->rec_at[i] = funcs + (2 * i + 1) * field;
		put(t, t->rec_at[i], rec, field);
		put(t, funcs + rec, entry, field);
		t->name_at[i] = funcs + rec + field;
		put(t, t->name_at[i], name, 4);
		name += strlen(fns[i].name) + 1;
		rec += field + 4;
	}
	t->len = funcs + rec;
}

static const char *const wanted[] = { "runtime.casgstatus", "runtime.absent",
				      "main.main" };

#define NWANTED (sizeof(wanted) / sizeof(wanted[0]))

/* Every layout: the functions asked for, at their addresses */
static void test_pclntab_layouts(void)
{
	static const struct {
		__u32 magic;
		unsigned int ptr;
	} layouts[] = {
		{ MAGIC_116, 8 },
		{ MAGIC_118, 8 },
		{ MAGIC_120, 8 },
		{ MAGIC_120, 4 },
	};
	struct table t;
	__u64 addrs[NWANTED];

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		build(&t, layouts[i].magic, layouts[i].ptr, TEXT);
		ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED,
					     addrs),
			  2, "found");
		ASSERT_EQ(addrs[0], TEXT + 0x2340, "runtime.casgstatus");
		ASSERT_EQ(addrs[1], 0, "a name not there");
		ASSERT_EQ(addrs[2], TEXT + 0x9000, "main.main");
	}
}

/* Go 1.18+: the header's text address, else (0 in a position-independent
 * file) the one given, the text section's */
static void test_pclntab_text(void)
{
	struct table t;
	__u64 addrs[NWANTED];

	build(&t, MAGIC_118, 8, 0);
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0x5000, wanted, NWANTED,
				     addrs),
		  2, "found, relocated");
	ASSERT_EQ(addrs[0], 0x5000 + 0x2340, "from the text given");
	build(&t, MAGIC_118, 8, TEXT);
	tt_go_pclntab_find(t.b, t.len, 0x5000, wanted, NWANTED, addrs);
	ASSERT_EQ(addrs[0], TEXT + 0x2340, "the header's text first");
}

/* No table, or one of a layout not known here */
static void test_pclntab_not_a_table(void)
{
	struct table t;
	__u64 addrs[NWANTED];

	build(&t, MAGIC_118, 8, TEXT);
	t.b[0] = 0xfb; /* Go 1.2's: no register ABI to probe */
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs),
		  -EINVAL, "Go 1.2's layout");
	build(&t, MAGIC_118, 8, TEXT);
	t.b[7] = 2;
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs),
		  -EINVAL, "a pointer size of 2");
	build(&t, MAGIC_118, 8, TEXT);
	t.b[4] = 1;
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs),
		  -EINVAL, "padding not zero");
	build(&t, MAGIC_118, 8, TEXT);
	put(&t, 8, 1ULL << 40, 8);
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs),
		  -EINVAL, "more functions than the table holds");
	ASSERT_EQ(tt_go_pclntab_find(t.b, 7, 0, wanted, NWANTED, addrs),
		  -EINVAL, "shorter than a header");
}

/* A function whose record or name lies outside the table is not found;
 * the others still are */
static void test_pclntab_corrupt_entries(void)
{
	struct table t;
	__u64 addrs[NWANTED];

	build(&t, MAGIC_120, 8, TEXT);
	put(&t, t.name_at[2], 0x7fffffff, 4);
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs), 1,
		  "a name past the end");
	ASSERT_EQ(addrs[0], 0, "runtime.casgstatus not found");
	ASSERT_EQ(addrs[2], TEXT + 0x9000, "main.main still");
	build(&t, MAGIC_120, 8, TEXT);
	put(&t, t.rec_at[3], 0xffffffff, 4);
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs), 1,
		  "a record past the end");
	ASSERT_EQ(addrs[2], 0, "main.main not found");
	/* a name at the table's end, without its NUL, though a NUL follows
	 * it in memory (the names begin after the preamble and 8 words) */
	build(&t, MAGIC_120, 8, TEXT);
	memcpy(t.b + t.len, "main.main", 9);
	put(&t, t.name_at[3], t.len - (8 + 8 * 8), 4);
	t.len += 9;
	ASSERT_EQ(tt_go_pclntab_find(t.b, t.len, 0, wanted, NWANTED, addrs), 1,
		  "a name without its end");
	ASSERT_EQ(addrs[2], 0, "main.main not found");
}

/* Every prefix of a table, each in a buffer of its own length (ASan and
 * valgrind see a read past it): an error, or fewer found, never a read
 * past the end */
static void test_pclntab_truncated(void)
{
	struct table t;
	__u64 addrs[NWANTED];
	int bad = 0;

	build(&t, MAGIC_120, 8, TEXT);
	for (size_t len = 0; len < t.len; len++) {
		unsigned char *cut = malloc(len ? len : 1);
		int found;

		if (!ASSERT_TRUE(cut != NULL, "malloc"))
			return;
		memcpy(cut, t.b, len);
		found = tt_go_pclntab_find(cut, len, 0, wanted, NWANTED, addrs);
		bad += found > 2 || (found < 0 && found != -EINVAL);
		free(cut);
	}
	ASSERT_EQ(bad, 0, "prefixes with a wrong answer");
}

int main(void)
{
	TT_RUN(test_pclntab_layouts);
	TT_RUN(test_pclntab_text);
	TT_RUN(test_pclntab_not_a_table);
	TT_RUN(test_pclntab_corrupt_entries);
	TT_RUN(test_pclntab_truncated);
	TT_EXIT();
}
