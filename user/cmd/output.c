// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Output files created safely (see output.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "output.h"
#include "ttfile.h"

int tt_output_create(const char *path, const char *opt, struct stat *st)
{
	char old[4096];
	int fd;

	if (!lstat(path, st)) {
		if (S_ISLNK(st->st_mode)) {
			fprintf(stderr,
				"ttftrace: %s is a symbolic link; ttftrace does not write through links: give a file path with %s\n",
				path, opt);
			return -1;
		}
		if (!S_ISREG(st->st_mode)) {
			fprintf(stderr,
				"ttftrace: %s exists and is not a regular file: give a file path with %s\n",
				path, opt);
			return -1;
		}
		if (snprintf(old, sizeof(old), "%s.old", path) >=
		    (int)sizeof(old)) {
			fprintf(stderr, "ttftrace: output path too long: %s\n",
				path);
			return -1;
		}
		/* rename moves the entry itself, never a link's target */
		if (rename(path, old)) {
			fprintf(stderr, "ttftrace: cannot move %s to %s: %s\n",
				path, old, strerror(errno));
			return -1;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		fprintf(stderr, "ttftrace: cannot create %s: %s%s\n", path,
			strerror(errno),
			errno == EEXIST ?
				" (it appeared while moving the old one aside)" :
				"");
		return -1;
	}
	if (fstat(fd, st)) {
		fprintf(stderr, "ttftrace: cannot stat %s: %s\n", path,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void tt_output_discard(const char *path, const struct stat *created)
{
	struct stat now;

	if (!lstat(path, &now) && now.st_dev == created->st_dev &&
	    now.st_ino == created->st_ino)
		unlink(path);
}

FILE *tt_output_fopen(const char *path, const char *opt, struct stat *st)
{
	FILE *f;
	int fd;

	/* a page given a recording's path by mistake: never move it aside */
	if (tt_file_is_recording(path)) {
		fprintf(stderr,
			"ttftrace: %s is a ttftrace recording; %s does not replace it: give another path\n",
			path, opt);
		return NULL;
	}
	fd = tt_output_create(path, opt, st);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "ttftrace: cannot write %s: %s\n", path,
			strerror(errno));
		close(fd);
		tt_output_discard(path, st);
	}
	return f;
}

int tt_output_close(FILE *f, const char *path, const struct stat *st, int err)
{
	if (fclose(f) && !err)
		err = -EIO;
	if (!err)
		return 0;
	fprintf(stderr, "ttftrace: cannot write %s: %s\n", path,
		strerror(-err));
	tt_output_discard(path, st);
	return 1;
}
