// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* GPU device nodes: found under /dev, or named with --gpu-device. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "gpudev.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

__u32 tt_kdev(unsigned long long st_rdev)
{
	return (major(st_rdev) << 20) | minor(st_rdev);
}

static int add_dev(const char *path, unsigned int kind,
		   struct tt_dev_info **devs, size_t *ndevs)
{
	struct tt_dev_info *grown, *d;
	struct stat st;

	if (stat(path, &st))
		return -errno;
	for (size_t i = 0; i < *ndevs; i++)
		if ((*devs)[i].ino == st.st_ino &&
		    (*devs)[i].dev == tt_kdev(st.st_dev))
			return 0;
	grown = realloc(*devs, (*ndevs + 1) * sizeof(**devs));
	if (!grown)
		return -ENOMEM;
	*devs = grown;
	d = &grown[(*ndevs)++];
	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->rdev = S_ISCHR(st.st_mode) ? tt_kdev(st.st_rdev) : 0;
	d->kind = kind;
	d->dev = tt_kdev(st.st_dev);
	d->ino = st.st_ino;
	return 0;
}

static int scan_dir(const char *dir, const char *pattern, unsigned int kind,
		    struct tt_dev_info **devs, size_t *ndevs)
{
	char path[800];
	struct dirent *de;
	int err = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && !err) {
		if (fnmatch(pattern, de->d_name, 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		err = add_dev(path, kind, devs, ndevs);
		if (err == -ENOENT || err == -EACCES)
			err = 0; /* gone, or not ours to see: not fatal */
	}
	closedir(d);
	return err;
}

int tt_gpu_discover(const char *dev_root, struct tt_dev_info **devs,
		    size_t *ndevs)
{
	static const struct {
		const char *sub, *pattern;
		unsigned int kind;
	} where[] = {
		{ "", "nvidia[0-9]*", TT_GPU_NVIDIA },
		{ "", "nvidiactl", TT_GPU_NVIDIA },
		{ "", "nvidia-uvm*", TT_GPU_NVIDIA_UVM },
		{ "/dri", "card[0-9]*", TT_GPU_DRM },
		{ "/dri", "renderD[0-9]*", TT_GPU_DRM },
		{ "", "kfd", TT_GPU_KFD },
		{ "/accel", "accel[0-9]*", TT_GPU_ACCEL },
	};
	char dir[512];
	int err;

	for (size_t i = 0; i < ARRAY_LEN(where); i++) {
		snprintf(dir, sizeof(dir), "%s%s", dev_root, where[i].sub);
		err = scan_dir(dir, where[i].pattern, where[i].kind, devs,
			       ndevs);
		if (err)
			return err;
	}
	return 0;
}

int tt_gpu_add_device(const char *path, struct tt_dev_info **devs,
		      size_t *ndevs, char *err, size_t errlen)
{
	int e;

	if (strlen(path) >= sizeof((*devs)->path)) {
		snprintf(err, errlen, "GPU device path too long: %s", path);
		return -ENAMETOOLONG;
	}
	e = add_dev(path, TT_GPU_USER, devs, ndevs);
	if (e)
		snprintf(err, errlen, "GPU device %s: %s", path, strerror(-e));
	return e;
}
