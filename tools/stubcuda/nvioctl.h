/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The NVIDIA ioctl encodings stubcuda issues on its device node, and the
 * fixed sequence each driver API call issues. On the FIFO that stands in
 * for the device every one of them fails with ENOTTY: the point is that a
 * tracer sees the attempt, the command and the result, as on a real GPU.
 *
 * Commands are _IOWR('F', nr, size): nr is an NVIDIA escape code, size the
 * size of that escape's parameter block. The blocks below are our own
 * stand-ins with the layout (hence the size) of the driver's; stubcuda
 * passes them zeroed and never reads them back.
 *
 * Sequence per call (command as the ioctl(2) request number):
 *
 *   cuInit (first successful call only)
 *     NV_ESC_CHECK_VERSION_STR   0xc04846d2
 *     NV_ESC_CARD_INFO           0xc04846c8
 *     NV_ESC_RM_ALLOC            0xc030462b   root client
 *     NV_ESC_RM_CONTROL          0xc020462a   attached GPU ids
 *   cuCtxCreate_v2
 *     NV_ESC_REGISTER_FD         0xc00446c9
 *     NV_ESC_ATTACH_GPUS_TO_FD   0xc00446d4
 *     NV_ESC_RM_ALLOC            0xc030462b   device
 *     NV_ESC_RM_ALLOC            0xc030462b   subdevice
 *     NV_ESC_RM_ALLOC            0xc030462b   channel group
 *     NV_ESC_ALLOC_OS_EVENT      0xc01046ce
 *   cuCtxDestroy_v2
 *     NV_ESC_FREE_OS_EVENT       0xc01046cf
 *     NV_ESC_RM_FREE             0xc0104629   x3
 *   cuMemAlloc_v2
 *     NV_ESC_RM_ALLOC            0xc030462b
 *     NV_ESC_RM_MAP_MEMORY       0xc038464e
 *   cuMemFree_v2
 *     NV_ESC_RM_UNMAP_MEMORY     0xc020464f
 *     NV_ESC_RM_FREE             0xc0104629
 *   cuModuleLoadData
 *     NV_ESC_RM_ALLOC_MEMORY     0xc0384627   code memory
 *     NV_ESC_RM_MAP_MEMORY       0xc038464e
 *   cuModuleUnload
 *     NV_ESC_RM_UNMAP_MEMORY     0xc020464f
 *     NV_ESC_RM_FREE             0xc0104629
 *   cuStreamCreate
 *     NV_ESC_RM_ALLOC            0xc030462b   channel
 *     NV_ESC_RM_CONTROL          0xc020462a   work submit token
 *   cuStreamDestroy_v2
 *     NV_ESC_RM_FREE             0xc0104629
 *   cuEventCreate
 *     NV_ESC_RM_CONTROL          0xc020462a
 *
 * Nothing else makes an ioctl: launches ring a user-mode doorbell and
 * waits spin on memory or block in poll(2) on the device fd, as on NVIDIA
 * hardware. Calls that fail their argument checks make no ioctl.
 */
#ifndef STUBCUDA_NVIOCTL_H
#define STUBCUDA_NVIOCTL_H

#include <stdint.h>
#include <linux/ioctl.h>

#define NV_IOCTL_MAGIC 'F'

/* resource-manager escapes */
#define NV_ESC_RM_ALLOC_MEMORY 0x27
#define NV_ESC_RM_FREE 0x29
#define NV_ESC_RM_CONTROL 0x2A
#define NV_ESC_RM_ALLOC 0x2B
#define NV_ESC_RM_MAP_MEMORY 0x4E
#define NV_ESC_RM_UNMAP_MEMORY 0x4F

/* NV_IOCTL_BASE (200) + n */
#define NV_ESC_CARD_INFO 0xC8
#define NV_ESC_REGISTER_FD 0xC9
#define NV_ESC_ALLOC_OS_EVENT 0xCE
#define NV_ESC_FREE_OS_EVENT 0xCF
#define NV_ESC_CHECK_VERSION_STR 0xD2
#define NV_ESC_ATTACH_GPUS_TO_FD 0xD4

/* RM_ALLOC: the 64-bit-handle form with a rights pointer */
struct stubnv_rm_alloc {
	uint32_t client, parent, object, class_id;
	uint64_t alloc_params __attribute__((aligned(8)));
	uint64_t rights __attribute__((aligned(8)));
	uint32_t params_size, flags, status;
};

struct stubnv_rm_control {
	uint32_t client, object, cmd, flags;
	uint64_t params __attribute__((aligned(8)));
	uint32_t params_size, status;
};

struct stubnv_rm_free {
	uint32_t client, parent, object, status;
};

/* RM_ALLOC_MEMORY and RM_MAP_MEMORY carry the device fd after the block */
struct stubnv_rm_alloc_memory {
	struct {
		uint32_t client, parent, object, class_id, flags;
		uint64_t memory __attribute__((aligned(8)));
		uint64_t limit __attribute__((aligned(8)));
		uint32_t status;
	} params;
	int fd;
};

struct stubnv_rm_map_memory {
	struct {
		uint32_t client, device, memory;
		uint64_t offset __attribute__((aligned(8)));
		uint64_t length __attribute__((aligned(8)));
		uint64_t linear_address __attribute__((aligned(8)));
		uint32_t status, flags;
	} params;
	int fd;
};

struct stubnv_rm_unmap_memory {
	uint32_t client, device, memory;
	uint64_t linear_address __attribute__((aligned(8)));
	uint32_t status, flags;
};

struct stubnv_os_event {
	uint32_t client, device, fd, status;
};

struct stubnv_card_info {
	uint8_t valid;
	struct {
		uint32_t domain;
		uint8_t bus, slot, function;
		uint16_t vendor_id, device_id;
	} pci;
	uint32_t gpu_id;
	uint16_t interrupt_line;
	uint64_t reg_address __attribute__((aligned(8)));
	uint64_t reg_size __attribute__((aligned(8)));
	uint64_t fb_address __attribute__((aligned(8)));
	uint64_t fb_size __attribute__((aligned(8)));
	uint32_t minor_number;
	uint8_t dev_name[10];
};

struct stubnv_version_str {
	uint32_t cmd, reply;
	char version[64];
};

_Static_assert(sizeof(struct stubnv_rm_alloc) == 0x30, "RM_ALLOC size");
_Static_assert(sizeof(struct stubnv_rm_control) == 0x20, "RM_CONTROL size");
_Static_assert(sizeof(struct stubnv_rm_free) == 0x10, "RM_FREE size");
_Static_assert(sizeof(struct stubnv_rm_alloc_memory) == 0x38,
	       "RM_ALLOC_MEMORY size");
_Static_assert(sizeof(struct stubnv_rm_map_memory) == 0x38,
	       "RM_MAP_MEMORY size");
_Static_assert(sizeof(struct stubnv_rm_unmap_memory) == 0x20,
	       "RM_UNMAP_MEMORY size");
_Static_assert(sizeof(struct stubnv_os_event) == 0x10, "OS_EVENT size");
_Static_assert(sizeof(struct stubnv_card_info) == 0x48, "CARD_INFO size");
_Static_assert(sizeof(struct stubnv_version_str) == 0x48,
	       "CHECK_VERSION_STR size");

#define STUBNV_IOWR(nr, type) \
	_IOC(_IOC_READ | _IOC_WRITE, NV_IOCTL_MAGIC, (nr), sizeof(type))

#define NV_IOCTL_RM_ALLOC STUBNV_IOWR(NV_ESC_RM_ALLOC, struct stubnv_rm_alloc)
#define NV_IOCTL_RM_CONTROL \
	STUBNV_IOWR(NV_ESC_RM_CONTROL, struct stubnv_rm_control)
#define NV_IOCTL_RM_FREE STUBNV_IOWR(NV_ESC_RM_FREE, struct stubnv_rm_free)
#define NV_IOCTL_RM_ALLOC_MEMORY \
	STUBNV_IOWR(NV_ESC_RM_ALLOC_MEMORY, struct stubnv_rm_alloc_memory)
#define NV_IOCTL_RM_MAP_MEMORY \
	STUBNV_IOWR(NV_ESC_RM_MAP_MEMORY, struct stubnv_rm_map_memory)
#define NV_IOCTL_RM_UNMAP_MEMORY \
	STUBNV_IOWR(NV_ESC_RM_UNMAP_MEMORY, struct stubnv_rm_unmap_memory)
#define NV_IOCTL_ALLOC_OS_EVENT \
	STUBNV_IOWR(NV_ESC_ALLOC_OS_EVENT, struct stubnv_os_event)
#define NV_IOCTL_FREE_OS_EVENT \
	STUBNV_IOWR(NV_ESC_FREE_OS_EVENT, struct stubnv_os_event)
#define NV_IOCTL_CARD_INFO \
	STUBNV_IOWR(NV_ESC_CARD_INFO, struct stubnv_card_info)
#define NV_IOCTL_REGISTER_FD STUBNV_IOWR(NV_ESC_REGISTER_FD, int)
#define NV_IOCTL_ATTACH_GPUS_TO_FD STUBNV_IOWR(NV_ESC_ATTACH_GPUS_TO_FD, \
						uint32_t)
#define NV_IOCTL_CHECK_VERSION_STR \
	STUBNV_IOWR(NV_ESC_CHECK_VERSION_STR, struct stubnv_version_str)

/* The sequences in the table above, as initialisers of unsigned long[]. */
#define STUBNV_SEQ_INIT                                                  \
	{ NV_IOCTL_CHECK_VERSION_STR, NV_IOCTL_CARD_INFO, NV_IOCTL_RM_ALLOC, \
	  NV_IOCTL_RM_CONTROL }
#define STUBNV_SEQ_CTX_CREATE                                           \
	{ NV_IOCTL_REGISTER_FD, NV_IOCTL_ATTACH_GPUS_TO_FD,              \
	  NV_IOCTL_RM_ALLOC,    NV_IOCTL_RM_ALLOC,                      \
	  NV_IOCTL_RM_ALLOC,    NV_IOCTL_ALLOC_OS_EVENT }
#define STUBNV_SEQ_CTX_DESTROY                                       \
	{ NV_IOCTL_FREE_OS_EVENT, NV_IOCTL_RM_FREE, NV_IOCTL_RM_FREE, \
	  NV_IOCTL_RM_FREE }
#define STUBNV_SEQ_MEM_ALLOC { NV_IOCTL_RM_ALLOC, NV_IOCTL_RM_MAP_MEMORY }
#define STUBNV_SEQ_MEM_FREE { NV_IOCTL_RM_UNMAP_MEMORY, NV_IOCTL_RM_FREE }
#define STUBNV_SEQ_MODULE_LOAD \
	{ NV_IOCTL_RM_ALLOC_MEMORY, NV_IOCTL_RM_MAP_MEMORY }
#define STUBNV_SEQ_MODULE_UNLOAD { NV_IOCTL_RM_UNMAP_MEMORY, NV_IOCTL_RM_FREE }
#define STUBNV_SEQ_STREAM_CREATE { NV_IOCTL_RM_ALLOC, NV_IOCTL_RM_CONTROL }
#define STUBNV_SEQ_STREAM_DESTROY { NV_IOCTL_RM_FREE }
#define STUBNV_SEQ_EVENT_CREATE { NV_IOCTL_RM_CONTROL }

/* large enough for any parameter block above */
#define STUBNV_PARAMS_MAX 0x48

#endif /* STUBCUDA_NVIOCTL_H */
