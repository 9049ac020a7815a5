/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The recording's architecture (tt_arch.h, docs/design.md §8): written,
 * read back, absent in older files, and refused by report when foreign. */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include "tt_arch.h"
#include "ttfile.h"
#include "tt_test.h"

static char path[] = "/tmp/tt_arch_XXXXXX";

static bool write_with_arch(__u32 arch)
{
	struct tt_file_meta meta = { .arch = arch };
	struct tt_writer *w;

	unlink(path);
	w = tt_writer_open(path, &meta);
	return w && tt_writer_close(w, NULL) == 0;
}

static __u32 read_arch(const char *p, bool *ok)
{
	struct tt_reader *r;
	char err[256];
	__u32 arch;

	r = tt_reader_open(p, err, sizeof(err));
	*ok = r != NULL;
	if (!r)
		return 0;
	arch = tt_reader_meta(r)->arch;
	tt_reader_close(r);
	return arch;
}

static void test_round_trip(void)
{
	bool ok;

	ASSERT_TRUE(write_with_arch(0), "write_with_arch(0)");
	ASSERT_EQ(read_arch(path, &ok), TT_ARCH, "read_arch(path, &ok)");
	ASSERT_TRUE(ok, "ok");
	ASSERT_TRUE(write_with_arch(TT_ARCH_ARM64),
		    "write_with_arch(TT_ARCH_ARM64)");
	ASSERT_EQ(read_arch(path, &ok), TT_ARCH_ARM64, "read_arch(path, &ok)");
	ASSERT_TRUE(ok, "ok");
}

/* The fuzz corpus was written before the field: every file of it that
 * opens reads as arch 0 (x86-64's, from before the field). */
static void test_older_files(void)
{
	char p[512];
	struct dirent *de;
	size_t opened = 0;
	DIR *d = opendir("tests/fuzz/corpus");
	bool ok;

	ASSERT_TRUE(d != NULL, "d != NULL");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "tests/fuzz/corpus/%s", de->d_name);
		if (read_arch(p, &ok) != 0)
			ASSERT_TRUE(!"an older file has no architecture",
				    "!\"an older file has no architecture\"");
		opened += ok;
	}
	if (d)
		closedir(d);
	ASSERT_TRUE(opened > 0, "opened > 0");
}

/* report analyses only its own architecture's recordings; --events
 * shows a foreign one's with a warning. */
static void test_report_refuses_foreign(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char cmd[1024];
	int rc;

	ASSERT_TRUE(write_with_arch(TT_ARCH_ARM64),
		    "write_with_arch(TT_ARCH_ARM64)");
	snprintf(cmd, sizeof(cmd),
		 "%s/ttftrace report %s 2>&1 | grep -q 'recorded on arm64'",
		 out, path);
	ASSERT_TRUE(system(cmd) == 0, "system(cmd) == 0");
	snprintf(cmd, sizeof(cmd), "%s/ttftrace report %s >/dev/null 2>&1", out,
		 path);
	rc = system(cmd);
	ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1,
		    "WIFEXITED(rc) && WEXITSTATUS(rc) == 1");
	snprintf(cmd, sizeof(cmd),
		 "%s/ttftrace report --events %s >/dev/null 2>&1", out, path);
	ASSERT_TRUE(system(cmd) == 0, "system(cmd) == 0");
	ASSERT_TRUE(write_with_arch(0), "write_with_arch(0)");
	snprintf(cmd, sizeof(cmd), "%s/ttftrace report %s >/dev/null 2>&1", out,
		 path);
	ASSERT_TRUE(system(cmd) == 0, "system(cmd) == 0");
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd >= 0)
		close(fd);
	TT_RUN(test_round_trip);
	TT_RUN(test_older_files);
	TT_RUN(test_report_refuses_foreign);
	unlink(path);
	TT_EXIT();
}
