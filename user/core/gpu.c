// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct ioctl_name {
	unsigned int nr;
	const char *name;
};

/* NVIDIA control-device escapes: the nr of _IOWR('F', nr, size) */
static const struct ioctl_name nvidia_escapes[] = {
	{ 0x27, "NV_ESC_RM_ALLOC_MEMORY" },
	{ 0x28, "NV_ESC_RM_ALLOC_OBJECT" },
	{ 0x29, "NV_ESC_RM_FREE" },
	{ 0x2A, "NV_ESC_RM_CONTROL" },
	{ 0x2B, "NV_ESC_RM_ALLOC" },
	{ 0x32, "NV_ESC_RM_CONFIG_GET" },
	{ 0x33, "NV_ESC_RM_CONFIG_SET" },
	{ 0x34, "NV_ESC_RM_DUP_OBJECT" },
	{ 0x35, "NV_ESC_RM_SHARE" },
	{ 0x37, "NV_ESC_RM_CONFIG_GET_EX" },
	{ 0x38, "NV_ESC_RM_CONFIG_SET_EX" },
	{ 0x39, "NV_ESC_RM_I2C_ACCESS" },
	{ 0x41, "NV_ESC_RM_IDLE_CHANNELS" },
	{ 0x4A, "NV_ESC_RM_VID_HEAP_CONTROL" },
	{ 0x4D, "NV_ESC_RM_ACCESS_REGISTRY" },
	{ 0x4E, "NV_ESC_RM_MAP_MEMORY" },
	{ 0x4F, "NV_ESC_RM_UNMAP_MEMORY" },
	{ 0x52, "NV_ESC_RM_GET_EVENT_DATA" },
	{ 0x54, "NV_ESC_RM_ALLOC_CONTEXT_DMA2" },
	{ 0x56, "NV_ESC_RM_ADD_VBLANK_CALLBACK" },
	{ 0x57, "NV_ESC_RM_MAP_MEMORY_DMA" },
	{ 0x58, "NV_ESC_RM_UNMAP_MEMORY_DMA" },
	{ 0x59, "NV_ESC_RM_BIND_CONTEXT_DMA" },
	{ 0x5C, "NV_ESC_RM_EXPORT_OBJECT_TO_FD" },
	{ 0x5D, "NV_ESC_RM_IMPORT_OBJECT_FROM_FD" },
	{ 0x5E, "NV_ESC_RM_UPDATE_DEVICE_MAPPING_INFO" },
	/* NV_IOCTL_BASE (200) + n */
	{ 0xC8, "NV_ESC_CARD_INFO" },
	{ 0xC9, "NV_ESC_REGISTER_FD" },
	{ 0xCA, "NV_ESC_ENV_INFO" },
	{ 0xCE, "NV_ESC_ALLOC_OS_EVENT" },
	{ 0xCF, "NV_ESC_FREE_OS_EVENT" },
	{ 0xD1, "NV_ESC_STATUS_CODE" },
	{ 0xD2, "NV_ESC_CHECK_VERSION_STR" },
	{ 0xD3, "NV_ESC_IOCTL_XFER_CMD" },
	{ 0xD4, "NV_ESC_ATTACH_GPUS_TO_FD" },
	{ 0xD5, "NV_ESC_QUERY_DEVICE_INTR" },
	{ 0xD6, "NV_ESC_SYS_PARAMS" },
	{ 0xD7, "NV_ESC_NUMA_INFO" },
	{ 0xD8, "NV_ESC_SET_NUMA_STATUS" },
	{ 0xD9, "NV_ESC_EXPORT_TO_DMABUF_FD" },
	{ 0xDA, "NV_ESC_WAIT_OPEN_COMPLETE" },
};

/* nvidia-uvm commands are plain numbers, not _IOC encodings */
static const struct ioctl_name uvm_commands[] = {
	{ 1, "UVM_RESERVE_VA" },
	{ 2, "UVM_RELEASE_VA" },
	{ 3, "UVM_REGION_COMMIT" },
	{ 4, "UVM_REGION_DECOMMIT" },
	{ 5, "UVM_REGION_SET_STREAM" },
	{ 6, "UVM_SET_STREAM_RUNNING" },
	{ 7, "UVM_SET_STREAM_STOPPED" },
	{ 9, "UVM_RUN_TEST" },
	{ 10, "UVM_ADD_SESSION" },
	{ 11, "UVM_REMOVE_SESSION" },
	{ 12, "UVM_ENABLE_COUNTERS" },
	{ 13, "UVM_MAP_COUNTER" },
	{ 14, "UVM_CREATE_EVENT_QUEUE" },
	{ 15, "UVM_REMOVE_EVENT_QUEUE" },
	{ 16, "UVM_MAP_EVENT_QUEUE" },
	{ 17, "UVM_EVENT_CTRL" },
	{ 18, "UVM_REGISTER_MPS_SERVER" },
	{ 19, "UVM_REGISTER_MPS_CLIENT" },
	{ 20, "UVM_GET_GPU_UUID_TABLE" },
	{ 23, "UVM_CREATE_RANGE_GROUP" },
	{ 24, "UVM_DESTROY_RANGE_GROUP" },
	{ 25, "UVM_REGISTER_GPU_VASPACE" },
	{ 26, "UVM_UNREGISTER_GPU_VASPACE" },
	{ 27, "UVM_REGISTER_CHANNEL" },
	{ 28, "UVM_UNREGISTER_CHANNEL" },
	{ 29, "UVM_ENABLE_PEER_ACCESS" },
	{ 30, "UVM_DISABLE_PEER_ACCESS" },
	{ 31, "UVM_SET_RANGE_GROUP" },
	{ 33, "UVM_MAP_EXTERNAL_ALLOCATION" },
	{ 34, "UVM_FREE" },
	{ 35, "UVM_MEM_MAP" },
	{ 36, "UVM_DEBUG_ACCESS_MEMORY" },
	{ 37, "UVM_REGISTER_GPU" },
	{ 38, "UVM_UNREGISTER_GPU" },
	{ 39, "UVM_PAGEABLE_MEM_ACCESS" },
	{ 40, "UVM_PREVENT_MIGRATION_RANGE_GROUPS" },
	{ 41, "UVM_ALLOW_MIGRATION_RANGE_GROUPS" },
	{ 42, "UVM_SET_PREFERRED_LOCATION" },
	{ 43, "UVM_UNSET_PREFERRED_LOCATION" },
	{ 44, "UVM_ENABLE_READ_DUPLICATION" },
	{ 45, "UVM_DISABLE_READ_DUPLICATION" },
	{ 46, "UVM_SET_ACCESSED_BY" },
	{ 47, "UVM_UNSET_ACCESSED_BY" },
	{ 51, "UVM_MIGRATE" },
	{ 53, "UVM_MIGRATE_RANGE_GROUP" },
	{ 54, "UVM_ENABLE_SYSTEM_WIDE_ATOMICS" },
	{ 55, "UVM_DISABLE_SYSTEM_WIDE_ATOMICS" },
	{ 56, "UVM_TOOLS_INIT_EVENT_TRACKER" },
	{ 57, "UVM_TOOLS_SET_NOTIFICATION_THRESHOLD" },
	{ 58, "UVM_TOOLS_EVENT_QUEUE_ENABLE_EVENTS" },
	{ 59, "UVM_TOOLS_EVENT_QUEUE_DISABLE_EVENTS" },
	{ 60, "UVM_TOOLS_ENABLE_COUNTERS" },
	{ 61, "UVM_TOOLS_DISABLE_COUNTERS" },
	{ 62, "UVM_TOOLS_READ_PROCESS_MEMORY" },
	{ 63, "UVM_TOOLS_WRITE_PROCESS_MEMORY" },
	{ 64, "UVM_TOOLS_GET_PROCESSOR_UUID_TABLE" },
	{ 65, "UVM_MAP_DYNAMIC_PARALLELISM_REGION" },
	{ 66, "UVM_UNMAP_EXTERNAL" },
	{ 67, "UVM_TOOLS_FLUSH_EVENTS" },
	{ 68, "UVM_ALLOC_SEMAPHORE_POOL" },
	{ 69, "UVM_CLEAN_UP_ZOMBIE_RESOURCES" },
	{ 70, "UVM_PAGEABLE_MEM_ACCESS_ON_GPU" },
	{ 71, "UVM_POPULATE_PAGEABLE" },
	{ 72, "UVM_VALIDATE_VA_RANGE" },
	{ 73, "UVM_CREATE_EXTERNAL_RANGE" },
	{ 74, "UVM_MAP_EXTERNAL_SPARSE" },
	{ 0x30000001, "UVM_INITIALIZE" },
	{ 0x30000002, "UVM_DEINITIALIZE" },
};

/* Generic DRM ioctls: _IO*('d', nr, ...); nr >= 0x40 is the driver's own */
static const struct ioctl_name drm_core[] = {
	{ 0x00, "DRM_IOCTL_VERSION" },
	{ 0x01, "DRM_IOCTL_GET_UNIQUE" },
	{ 0x02, "DRM_IOCTL_GET_MAGIC" },
	{ 0x09, "DRM_IOCTL_GEM_CLOSE" },
	{ 0x0A, "DRM_IOCTL_GEM_FLINK" },
	{ 0x0B, "DRM_IOCTL_GEM_OPEN" },
	{ 0x0C, "DRM_IOCTL_GET_CAP" },
	{ 0x0D, "DRM_IOCTL_SET_CLIENT_CAP" },
	{ 0x2D, "DRM_IOCTL_PRIME_HANDLE_TO_FD" },
	{ 0x2E, "DRM_IOCTL_PRIME_FD_TO_HANDLE" },
	{ 0xBF, "DRM_IOCTL_SYNCOBJ_CREATE" },
	{ 0xC0, "DRM_IOCTL_SYNCOBJ_DESTROY" },
	{ 0xC1, "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD" },
	{ 0xC2, "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE" },
	{ 0xC3, "DRM_IOCTL_SYNCOBJ_WAIT" },
	{ 0xC4, "DRM_IOCTL_SYNCOBJ_RESET" },
	{ 0xC5, "DRM_IOCTL_SYNCOBJ_SIGNAL" },
	{ 0xCA, "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT" },
	{ 0xCD, "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL" },
};

static const char *find_name(const struct ioctl_name *t, size_t n,
			     unsigned int nr)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].nr == nr)
			return t[i].name;
	return NULL;
}

const char *tt_gpu_ioctl_name(__u32 cmd, unsigned int kind, char *buf,
			      size_t len)
{
	static const char *const dirs[] = { "_IO", "_IOW", "_IOR", "_IOWR" };
	unsigned int type = (cmd >> 8) & 0xff, nr = cmd & 0xff;
	unsigned int size = (cmd >> 16) & 0x3fff, dir = cmd >> 30;
	const char *name = NULL;

	bool any = kind == TT_GPU_USER || kind == TT_GPU_UNKNOWN;

	if (kind == TT_GPU_NVIDIA_UVM ||
	    (any && (cmd < 0x100 || (cmd & 0xfffffff0) == 0x30000000)))
		name = find_name(uvm_commands, ARRAY_LEN(uvm_commands), cmd);
	if (!name && type == 'F')
		name = find_name(nvidia_escapes, ARRAY_LEN(nvidia_escapes), nr);
	/* DRM_COMMAND_BASE..END (0x40..0x9f) belongs to the driver */
	if (!name && type == 'd' && (nr < 0x40 || nr >= 0xa0))
		name = find_name(drm_core, ARRAY_LEN(drm_core), nr);
	if (name)
		snprintf(buf, len, "%s", name);
	else if (type == 'd' && nr >= 0x40 && nr < 0xa0)
		snprintf(buf, len, "DRM_IOCTL_DRIVER(0x%02x)", nr - 0x40);
	else if (type >= 0x20 && type < 0x7f)
		snprintf(buf, len, "%s('%c',0x%02x,%u)", dirs[dir], type, nr,
			 size);
	else
		snprintf(buf, len, "0x%08x", cmd);
	return buf;
}

const char *tt_gpu_kind_name(unsigned int kind)
{
	static const char *const names[] = { "unknown", "nvidia", "nvidia-uvm",
					     "drm", "kfd", "accel", "user" };

	return kind < ARRAY_LEN(names) ? names[kind] : "unknown";
}

static const struct tt_cuda_fn cuda_fns[] = {
	{ "cuLaunchKernel", TT_CUDA_LAUNCH },
	{ "cuLaunchKernel_ptsz", TT_CUDA_LAUNCH },
	{ "cuLaunchKernelEx", TT_CUDA_LAUNCH },
	{ "cuLaunchKernelEx_ptsz", TT_CUDA_LAUNCH },
	{ "cuGraphLaunch", TT_CUDA_GRAPH },
	{ "cuGraphLaunch_ptsz", TT_CUDA_GRAPH },
	{ "cuStreamSynchronize", TT_CUDA_SYNC },
	{ "cuStreamSynchronize_ptsz", TT_CUDA_SYNC },
	{ "cuEventSynchronize", TT_CUDA_SYNC },
	{ "cuCtxSynchronize", TT_CUDA_SYNC },
	{ "cuMemcpyDtoH_v2", TT_CUDA_SYNC },
	{ "cuMemcpyDtoH_v2_ptds", TT_CUDA_SYNC },
};

const struct tt_cuda_fn *tt_cuda_fns(size_t *n)
{
	*n = ARRAY_LEN(cuda_fns);
	return cuda_fns;
}

bool tt_cuda_fn_wanted(const struct tt_cuda_fn *fn, const char *mode)
{
	if (!strcmp(mode, "all"))
		return true;
	if (!strcmp(mode, "sync"))
		return fn->cls != TT_CUDA_LAUNCH;
	return false;
}

/*
 * A kernel launch's return says when it ended and its CUresult. The
 * analysis uses its start (the GPU rule's first launch, docs/design.md
 * §4.4) and labels the on-CPU time from there to the thread's next call
 * "launch" (compute.cpu either way, §4.5); its end is inferred (§4.5).
 * Launches come by the hundred per iteration, so their return probe is
 * the cost of --gpu-probes=all. Graph launches (one per iteration, probed
 * by default) and syncs (whose wait is compute.gpu up to their return)
 * keep theirs.
 */
bool tt_cuda_fn_entry_only(const struct tt_cuda_fn *fn)
{
	return fn->cls == TT_CUDA_LAUNCH;
}

bool tt_is_libcuda(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10);
}
