/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* GPU device nodes of this machine, for the recording's device table. */
#ifndef TT_GPUDEV_H
#define TT_GPUDEV_H

#include <stddef.h>
#include "event.h"
#include "gpu.h"

/* Kernel-internal dev_t (inode->i_rdev) from a user-space st_rdev. */
__u32 tt_kdev(unsigned long long st_rdev);

/* Appends the GPU device nodes found under dev_root ("/dev" normally; tests
 * give a directory of their own) to *devs. 0 or -errno. */
int tt_gpu_discover(const char *dev_root, struct tt_dev_info **devs,
		    size_t *ndevs);
/* Appends PATH as a user-named GPU device (any file: a char device, or a
 * FIFO standing in for one). A one-line reason in err on failure. */
int tt_gpu_add_device(const char *path, struct tt_dev_info **devs,
		      size_t *ndevs, char *err, size_t errlen);

#endif /* TT_GPUDEV_H */
