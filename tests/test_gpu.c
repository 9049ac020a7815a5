// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* GPU device table, ioctl decoding and the GPU activity tables. */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "gpu.h"
#include "gpudev.h"
#include "gpustats.h"
#include "tt_test.h"

#define IOC(dir, type, nr, size)                                              \
	(((__u32)(dir) << 30) | ((__u32)(size) << 16) | ((type) << 8) | (nr))

static void expect_name(__u32 cmd, unsigned int kind, const char *want)
{
	char buf[64];

	tt_gpu_ioctl_name(cmd, kind, buf, sizeof(buf));
	if (strcmp(buf, want)) {
		fprintf(stderr, "  0x%08x kind %u: got %s, want %s\n", cmd, kind,
			buf, want);
		tt_test.failed_checks++;
	}
}

static void test_nvidia_ioctls(void)
{
	/* _IOWR('F', nr, size) as the NVIDIA user-mode driver encodes them */
	expect_name(IOC(3, 'F', 0x2B, 0x20), TT_GPU_NVIDIA, "NV_ESC_RM_ALLOC");
	expect_name(IOC(3, 'F', 0x2A, 0x20), TT_GPU_NVIDIA, "NV_ESC_RM_CONTROL");
	expect_name(IOC(3, 'F', 0x29, 0x10), TT_GPU_NVIDIA, "NV_ESC_RM_FREE");
	expect_name(IOC(3, 'F', 0x4E, 0x38), TT_GPU_NVIDIA,
		    "NV_ESC_RM_MAP_MEMORY");
	expect_name(IOC(3, 'F', 0xCE, 0x10), TT_GPU_NVIDIA,
		    "NV_ESC_ALLOC_OS_EVENT");
	expect_name(IOC(3, 'F', 0xD2, 0x48), TT_GPU_NVIDIA,
		    "NV_ESC_CHECK_VERSION_STR");
	expect_name(IOC(3, 'F', 0xC8, 0x600), TT_GPU_NVIDIA,
		    "NV_ESC_CARD_INFO");
	/* the stub's FIFO stands in for a device: still decoded by type */
	expect_name(IOC(3, 'F', 0x2B, 0x20), TT_GPU_USER, "NV_ESC_RM_ALLOC");
	expect_name(IOC(3, 'F', 0x99, 0x20), TT_GPU_NVIDIA,
		    "_IOWR('F',0x99,32)");
}

static void test_uvm_drm_generic(void)
{
	expect_name(37, TT_GPU_NVIDIA_UVM, "UVM_REGISTER_GPU");
	expect_name(0x30000001, TT_GPU_NVIDIA_UVM, "UVM_INITIALIZE");
	expect_name(51, TT_GPU_NVIDIA_UVM, "UVM_MIGRATE");
	/* seen on an H200 at CUDA init, 165 times */
	expect_name(73, TT_GPU_NVIDIA_UVM, "UVM_CREATE_EXTERNAL_RANGE");
	expect_name(IOC(3, 'd', 0x09, 8), TT_GPU_DRM, "DRM_IOCTL_GEM_CLOSE");
	expect_name(IOC(3, 'd', 0xC3, 40), TT_GPU_DRM, "DRM_IOCTL_SYNCOBJ_WAIT");
	expect_name(IOC(3, 'd', 0x44, 32), TT_GPU_DRM,
		    "DRM_IOCTL_DRIVER(0x04)");
	expect_name(IOC(1, 'K', 0x02, 96), TT_GPU_KFD, "_IOW('K',0x02,96)");
	expect_name(0x01020304, TT_GPU_DRM, "0x01020304");
	/* a small number on a DRM node is not taken for a UVM command */
	expect_name(37, TT_GPU_DRM, "0x00000025");
}

static void test_kdev(void)
{
	ASSERT_EQ(tt_kdev(makedev(195, 0)), (195u << 20) | 0, "tt_kdev");
	ASSERT_EQ(tt_kdev(makedev(226, 128)), (226u << 20) | 128, "tt_kdev");
	ASSERT_EQ(tt_kdev(makedev(509, 1)), (509u << 20) | 1, "tt_kdev");
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

static void test_discover(void)
{
	char root[] = "/tmp/tt-gpu-dev.XXXXXX", sub[600], err[256];
	struct tt_dev_info *devs = NULL;
	size_t n = 0;
	int kinds[8] = {};

	ASSERT_OK_PTR(mkdtemp(root), "mkdtemp");
	snprintf(sub, sizeof(sub), "%s/dri", root);
	mkdir(sub, 0700);
	touch(root, "nvidia0");
	touch(root, "nvidia1");
	touch(root, "nvidiactl");
	touch(root, "nvidia-uvm");
	touch(root, "nvidia-modeset-not-a-gpu");
	touch(root, "kfd");
	touch(sub, "card0");
	touch(sub, "renderD128");
	ASSERT_OK(tt_gpu_discover(root, &devs, &n), "tt_gpu_discover");
	ASSERT_EQ(n, 7, "n");
	for (size_t i = 0; i < n; i++) {
		ASSERT_TRUE(devs[i].kind > 0 && devs[i].kind < 8,
			    "devs[i].kind > 0 && devs[i].kind < 8");
		kinds[devs[i].kind]++;
		ASSERT_NEQ(devs[i].ino, 0, "devs[i].ino");
		ASSERT_EQ(devs[i].rdev, 0,
			  "devs[i].rdev"); /* regular files here */
	}
	ASSERT_EQ(kinds[TT_GPU_NVIDIA], 3, "kinds[TT_GPU_NVIDIA]");
	ASSERT_EQ(kinds[TT_GPU_NVIDIA_UVM], 1, "kinds[TT_GPU_NVIDIA_UVM]");
	ASSERT_EQ(kinds[TT_GPU_DRM], 2, "kinds[TT_GPU_DRM]");
	ASSERT_EQ(kinds[TT_GPU_KFD], 1, "kinds[TT_GPU_KFD]");
	/* again: a node is listed once */
	ASSERT_OK(tt_gpu_discover(root, &devs, &n), "tt_gpu_discover");
	ASSERT_EQ(n, 7, "n");
	snprintf(sub, sizeof(sub), "%s/nvidia0", root);
	ASSERT_OK(tt_gpu_add_device(sub, &devs, &n, err, sizeof(err)),
		  "tt_gpu_add_device");
	ASSERT_EQ(n, 7, "n");
	snprintf(sub, sizeof(sub), "%s/missing", root);
	ASSERT_LT(tt_gpu_add_device(sub, &devs, &n, err, sizeof(err)), 0,
		  "tt_gpu_add_device");
	ASSERT_TRUE(strstr(err, "missing") && strstr(err, "No such file"),
		    "strstr");
	/* a missing /dev subtree is not an error */
	ASSERT_OK(tt_gpu_discover("/nonexistent-dev-root", &devs, &n),
		  "tt_gpu_discover");
	free(devs);
	snprintf(sub, sizeof(sub), "rm -rf %s", root);
	ASSERT_OK(system(sub), "system");
}

static void test_cuda_table(void)
{
	const struct tt_cuda_fn *fns;
	size_t n, sync = 0, all = 0;

	fns = tt_cuda_fns(&n);
	ASSERT_GE(n, 10, "n");
	for (size_t i = 0; i < n; i++) {
		sync += tt_cuda_fn_wanted(&fns[i], "sync");
		all += tt_cuda_fn_wanted(&fns[i], "all");
		ASSERT_FALSE(tt_cuda_fn_wanted(&fns[i], "none"),
			     "tt_cuda_fn_wanted");
		/* every launch and only launches at their entry only: what
		 * --gpu-probes=sync probes keeps its return */
		ASSERT_EQ(tt_cuda_fn_entry_only(&fns[i]),
			  fns[i].cls == TT_CUDA_LAUNCH, "tt_cuda_fn_entry_only");
		ASSERT_FALSE(tt_cuda_fn_entry_only(&fns[i]) &&
				     tt_cuda_fn_wanted(&fns[i], "sync"),
			     "entry-only fns are all's");
		if (!strcmp(fns[i].name, "cuLaunchKernel"))
			ASSERT_FALSE(tt_cuda_fn_wanted(&fns[i], "sync"),
				     "tt_cuda_fn_wanted");
		if (!strcmp(fns[i].name, "cuStreamSynchronize") ||
		    !strcmp(fns[i].name, "cuGraphLaunch"))
			ASSERT_TRUE(tt_cuda_fn_wanted(&fns[i], "sync"),
				    "tt_cuda_fn_wanted");
	}
	ASSERT_TRUE(sync > 0 && sync < all && all == n,
		    "sync > 0 && sync < all && all == n");
	ASSERT_TRUE(tt_is_libcuda("/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
		    "tt_is_libcuda");
	ASSERT_TRUE(tt_is_libcuda("libcuda.so"), "tt_is_libcuda");
	ASSERT_TRUE(tt_is_libcuda("/opt/x/libcuda.so.580.159.03"),
		    "tt_is_libcuda");
	ASSERT_FALSE(tt_is_libcuda("/usr/lib/libcudart.so.12"),
		     "tt_is_libcuda");
	ASSERT_FALSE(tt_is_libcuda("/usr/lib/libcuda_stub/libfoo.so"),
		     "tt_is_libcuda");
}

static void test_gpustats_tables(void)
{
	struct tt_dev_info dev = { .path = "/dev/nvidiactl", .rdev = 195u << 20 | 255,
				   .kind = TT_GPU_NVIDIA };
	struct tt_gpustats *g = tt_gpustats_new(&dev, 1);
	struct tt_event ev;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	ASSERT_TRUE(g && !tt_gpustats_any(g), "g && !tt_gpustats_any(g)");
	for (int i = 1; i <= 10; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.h.type = TT_EV_IOCTL;
		ev.h.ts = 1000000 + i * 1000;
		ev.ioc.ts_enter = ev.h.ts - i * 1000; /* 1..10 us */
		ev.ioc.cmd = IOC(3, 'F', 0x2B, 0x20);
		ev.ioc.rdev = dev.rdev;
		ev.ioc.ret = i == 10 ? -25 : 0;
		ASSERT_OK(tt_gpustats_add(g, &ev), "tt_gpustats_add");
	}
	memset(&ev, 0, sizeof(ev));
	ev.h.type = TT_EV_GPU_CALL;
	ev.h.ts = 5000000;
	ev.call.ts_enter = 3000000;
	ev.call.fn = 6; /* cuStreamSynchronize */
	ASSERT_OK(tt_gpustats_add(g, &ev), "tt_gpustats_add");
	/* launches recorded at their entry: counted, neither timed nor
	 * judged (their end and CUresult are not known) */
	for (int i = 0; i < 2; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.h.type = TT_EV_GPU_CALL;
		ev.h.ts = ev.call.ts_enter = 6000000 + i * 1000;
		ev.call.ret = 1; /* not read */
		ev.call.fn = 0; /* cuLaunchKernel */
		ev.call.flags = TT_CALL_ENTRY;
		ASSERT_OK(tt_gpustats_add(g, &ev), "tt_gpustats_add");
	}
	ASSERT_TRUE(tt_gpustats_any(g), "tt_gpustats_any");
	out = open_memstream(&buf, &len);
	ASSERT_OK(tt_gpustats_json(out, g), "tt_gpustats_json");
	fclose(out);
	ASSERT_OK_PTR(
		strstr(buf,
		       "{\"name\":\"NV_ESC_RM_ALLOC\",\"count\":10,\"errors\":1,"
		       "\"ns\":{\"p50\":5000,\"p90\":9000,\"p99\":10000,\"max\":10000},"
		       "\"timed\":10}"),
		"strstr");
	ASSERT_OK_PTR(
		strstr(buf,
		       "{\"name\":\"cuStreamSynchronize\",\"count\":1,\"errors\":0,"
		       "\"ns\":{\"p50\":2000000,"),
		"strstr");
	ASSERT_OK_PTR(
		strstr(buf,
		       "{\"name\":\"cuLaunchKernel\",\"count\":2,\"errors\":null,"
		       "\"ns\":null,\"timed\":0}"),
		"strstr");
	ASSERT_OK_PTR(
		strstr(buf,
		       "\"devices\":[{\"path\":\"/dev/nvidiactl\",\"kind\":\"nvidia\""),
		"strstr");
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	ASSERT_OK(tt_gpustats_text(out, g), "tt_gpustats_text");
	fclose(out);
	ASSERT_TRUE(strstr(buf, "NV_ESC_RM_ALLOC") &&
			    strstr(buf, "cuStreamSynchronize"),
		    "strstr");
	ASSERT_OK_PTR(strstr(buf, "/dev/nvidiactl (nvidia)"), "strstr");
	ASSERT_OK_PTR(strstr(buf, "cuLaunchKernel                              2 "
				  "      -          -          -          -          -"),
		      "strstr");
	free(buf);
	tt_gpustats_free(g);
}

int main(void)
{
	TT_RUN(test_nvidia_ioctls);
	TT_RUN(test_uvm_drm_generic);
	TT_RUN(test_kdev);
	TT_RUN(test_discover);
	TT_RUN(test_cuda_table);
	TT_RUN(test_gpustats_tables);
	TT_EXIT();
}
