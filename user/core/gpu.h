/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * GPUs as ttftrace sees them: device nodes (the device table), the ioctls
 * made on them (decoded to names), and the CUDA driver library functions
 * probed with uprobes.
 */
#ifndef TT_GPU_H
#define TT_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum tt_gpu_kind {
	TT_GPU_UNKNOWN = 0,
	TT_GPU_NVIDIA = 1, /* /dev/nvidia[0-9]*, /dev/nvidiactl */
	TT_GPU_NVIDIA_UVM = 2, /* /dev/nvidia-uvm, /dev/nvidia-uvm-tools */
	TT_GPU_DRM = 3, /* /dev/dri/card*, renderD* */
	TT_GPU_KFD = 4, /* /dev/kfd (AMD compute) */
	TT_GPU_ACCEL = 5, /* /dev/accel/accel* */
	TT_GPU_USER = 6, /* --gpu-device PATH */
};

const char *tt_gpu_kind_name(unsigned int kind);

/* "NV_ESC_RM_ALLOC", "UVM_REGISTER_GPU", "DRM_IOCTL_GEM_CLOSE", or a
 * generic "_IOWR('F',0x99,0x20)" form; always fills buf and returns it. */
const char *tt_gpu_ioctl_name(__u32 cmd, unsigned int kind, char *buf,
			      size_t len);

/* CUDA driver functions ttftrace probes: their id is the uprobe's cookie
 * and tt_gpu_call.fn. */
enum tt_cuda_class {
	TT_CUDA_LAUNCH = 1, /* enqueue a kernel: on-CPU launch overhead */
	TT_CUDA_GRAPH = 2, /* enqueue a graph */
	TT_CUDA_SYNC = 3, /* wait for the GPU */
};

struct tt_cuda_fn {
	const char *name; /* the exported symbol */
	unsigned int cls; /* enum tt_cuda_class */
};

/* The table, indexed by tt_gpu_call.fn; *n gets its length. */
const struct tt_cuda_fn *tt_cuda_fns(size_t *n);
/* Whether --gpu-probes=MODE ("none", "sync", "all") probes fn. */
bool tt_cuda_fn_wanted(const struct tt_cuda_fn *fn, const char *mode);
/* Whether fn is probed at its entry only (no return probe): its record
 * (TT_CALL_ENTRY) has its start, not its end nor its CUresult. */
bool tt_cuda_fn_entry_only(const struct tt_cuda_fn *fn);

/* Whether a path names a CUDA driver library. */
bool tt_is_libcuda(const char *path);

#endif /* TT_GPU_H */
