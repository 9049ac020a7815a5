/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Feeds files (or every file of a directory) to LLVMFuzzerTestOneInput, so
 * the corpus replays under gcc and the sanitizers without libFuzzer.
 *   fuzz_replay FILE|DIR...   prints "replayed N inputs", exit 0
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "rb");
	int ret = -1;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			uint8_t *b = realloc(buf, cap ? cap * 2 : 65536);

			if (!b)
				goto cleanup;
			buf = b;
			cap = cap ? cap * 2 : 65536;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		goto cleanup;
	}
	/* a copy of exactly len bytes, so ASan sees reads past the input */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact)
			goto cleanup;
		memcpy(exact, buf, len);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	ret = 0;

cleanup:
	free(buf);
	fclose(f);
	return ret;
}

int main(int argc, char **argv)
{
	long count = 0;
	int i, failed = 0;

	for (i = 1; i < argc; i++) {
		struct stat sb;
		struct dirent *de;
		DIR *d;

		if (stat(argv[i], &sb)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			failed = 1;
			continue;
		}
		if (!S_ISDIR(sb.st_mode)) {
			failed |= replay_file(argv[i]) != 0;
			count++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d))) {
			char path[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
				 de->d_name);
			failed |= replay_file(path) != 0;
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %ld inputs\n", count);
	return failed;
}
