/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stubcuda: a CUDA driver library (libcuda.so.1) that simulates one GPU on
 * the CPU, so that ttftrace can be tested on machines without GPUs. This
 * header declares the subset of the driver API it exports; the signatures
 * are those of the CUDA driver API, so code written against it also runs
 * on a real libcuda.so.1.
 *
 * The simulated GPU
 *   One device queue per context: every launch of the context, whatever
 *   its stream, runs in launch order, one at a time. A kernel starts when
 *   it is launched or when the previous one ends, whichever is later, and
 *   ends `duration` ns later. The timeline is fixed at launch, so a busy
 *   host CPU does not slow the "GPU". A device thread per context retires
 *   the kernels at their end times (blocked in ppoll(2) on the device fd
 *   meanwhile), writes the log and wakes blocking waiters.
 *
 * Kernel durations
 *   cuLaunchKernel*: kernelParams[0] points to a uint64_t, the kernel's
 *   duration in ns; with kernelParams NULL the duration is gridDimX * 1000
 *   ns. `extra` is ignored. Durations over 600 s are refused.
 *     uint64_t ns = 2000000;
 *     void *params[] = { &ns };
 *     cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, params, NULL);
 *   cuGraphLaunch: the duration given to stubcuGraphSetDuration() for the
 *   executable graph (0 until set). A graph runs as one queue entry.
 *
 * Launch overhead
 *   Every launch (kernel or graph) first spends STUBCUDA_LAUNCH_NS of the
 *   calling thread's CPU time in a busy loop (default 4000 ns), then
 *   enqueues and returns.
 *
 * Waits (cuStreamSynchronize[_ptsz], cuEventSynchronize, cuCtxSynchronize,
 * cuMemcpyDtoH_v2[_ptds]), by the context's scheduling flags:
 *   CU_CTX_SCHED_AUTO (0), CU_CTX_SCHED_SPIN: busy-wait on the clock until
 *     the awaited work's end time: the thread stays on CPU.
 *   CU_CTX_SCHED_YIELD: the same, calling sched_yield() in the loop.
 *   CU_CTX_SCHED_BLOCKING_SYNC: block in poll(2) for POLLIN on the device
 *     fd until the device thread retires the awaited work and writes a
 *     byte to the device node for this waiter, which reads it back.
 *   STUBCUDA_SYNC=spin|yield|block overrides the flags of every context.
 * What a wait waits for: a created stream, its last launch; the NULL (and
 * legacy, per-thread) default stream, cuCtxSynchronize and the DtoH copies,
 * every launch made in the context so far; an event, the work it recorded
 * (nothing, if never recorded).
 *
 * Memory: device memory is anonymous host memory (mmap, reserved lazily,
 * so large allocations are cheap); CUdeviceptr is its address. Copies are
 * memcpy: HtoD at once, DtoH after waiting as above. Copies out of range
 * of an allocation fail with CUDA_ERROR_INVALID_VALUE.
 *
 * Environment (read once, by the first successful cuInit)
 *   STUBCUDA_DEVICE=PATH  the device node: a FIFO, created (mkfifo, 0600)
 *     if missing; an existing non-FIFO is refused (cuInit fails with
 *     CUDA_ERROR_NO_DEVICE). Default /tmp/stubcuda-PID.nvidia0, removed
 *     at exit. Opened O_RDWR|O_NONBLOCK; all ioctls (see nvioctl.h) and
 *     blocking waits use it. Give each process its own path: blocking
 *     waiters of two processes on one FIFO may take each other's bytes.
 *   STUBCUDA_LAUNCH_NS=N  launch overhead in ns of CPU time (default 4000)
 *   STUBCUDA_SYNC=spin|yield|block  overrides the contexts' flags
 *   STUBCUDA_LOG=FILE  ground truth, appended one line per event, written
 *     with one write(2) each (CLOCK_MONOTONIC ns; ids count from 1 per
 *     process; stream 0 is the default stream; lines starting with '#'
 *     are comments):
 *     kernel,CTX,STREAM,SEQ,T_LAUNCH_ENTER,T_LAUNCH_EXIT,T_START,T_END,
 *            DURATION,FN,NAME,TID          (when the kernel is retired)
 *     sync,FN,T_ENTER,T_EXIT,MODE,CTX,TID,SEQ  (SEQ: last awaited launch)
 *     ioctl,API,T_ENTER,T_EXIT,CMD,RET,ERRNO,TID  (CMD in hex)
 *     device,PID,MAJOR,MINOR,INO,PATH      (cuInit: the node's st_dev
 *                                           and st_ino)
 *   T_LAUNCH_EXIT is when the launch was enqueued (the call returns right
 *   after); T_START/T_END are the simulated GPU's; FN is the exported
 *   function called; NAME the kernel name from cuModuleGetFunction, or
 *   "graph"; MODE spin, yield or block.
 *
 * Errors: CUDA_ERROR_NOT_INITIALIZED before cuInit (except
 * cuDriverGetVersion, cuGetErrorString/Name); CUDA_ERROR_INVALID_VALUE for
 * NULL out-pointers and bad flags; CUDA_ERROR_INVALID_CONTEXT without a
 * current context; CUDA_ERROR_INVALID_HANDLE for unknown or destroyed
 * handles (handles are checked against a table, so stale ones are caught).
 * Destroying a context destroys its streams, events, modules, functions,
 * executable graphs and memory, after its queued work has run.
 *
 * Not supported: fork() after cuInit; dlclose() (the library pins itself
 * once a context exists); cuGetProcAddress (dlsym the symbols instead).
 */
#ifndef STUBCUDA_H
#define STUBCUDA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError_enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_INVALID_VALUE = 1,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_INITIALIZED = 3,
	CUDA_ERROR_NO_DEVICE = 100,
	CUDA_ERROR_INVALID_DEVICE = 101,
	CUDA_ERROR_INVALID_IMAGE = 200,
	CUDA_ERROR_INVALID_CONTEXT = 201,
	CUDA_ERROR_INVALID_HANDLE = 400,
	CUDA_ERROR_NOT_FOUND = 500,
	CUDA_ERROR_NOT_READY = 600,
	CUDA_ERROR_NOT_SUPPORTED = 801,
	CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUlaunchAttribute_st CUlaunchAttribute; /* ignored */

typedef struct CUlaunchConfig_st {
	unsigned int gridDimX, gridDimY, gridDimZ;
	unsigned int blockDimX, blockDimY, blockDimZ;
	unsigned int sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned int numAttrs;
} CUlaunchConfig;

/* cuCtxCreate flags */
#define CU_CTX_SCHED_AUTO 0x0
#define CU_CTX_SCHED_SPIN 0x1
#define CU_CTX_SCHED_YIELD 0x2
#define CU_CTX_SCHED_BLOCKING_SYNC 0x4
#define CU_CTX_SCHED_MASK 0x7
#define CU_CTX_MAP_HOST 0x8
#define CU_CTX_LMEM_RESIZE_TO_MAX 0x10
/* cuStreamCreate flags */
#define CU_STREAM_DEFAULT 0x0
#define CU_STREAM_NON_BLOCKING 0x1
/* cuEventCreate flags */
#define CU_EVENT_DEFAULT 0x0
#define CU_EVENT_BLOCKING_SYNC 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_EVENT_INTERPROCESS 0x4
/* special stream handles: both mean the default stream here */
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuGetErrorString(CUresult error, const char **pStr);
CUresult cuGetErrorName(CUresult error, const char **pStr);

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxSynchronize(void);

CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod,
			     const char *name);

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
			 size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice,
			 size_t ByteCount);
CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice,
			      size_t ByteCount);

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamQuery(CUstream hStream);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamSynchronize_ptsz(CUstream hStream);

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuEventDestroy_v2(CUevent hEvent);

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
			unsigned int gridDimY, unsigned int gridDimZ,
			unsigned int blockDimX, unsigned int blockDimY,
			unsigned int blockDimZ, unsigned int sharedMemBytes,
			CUstream hStream, void **kernelParams, void **extra);
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
			     unsigned int gridDimY, unsigned int gridDimZ,
			     unsigned int blockDimX, unsigned int blockDimY,
			     unsigned int blockDimZ,
			     unsigned int sharedMemBytes, CUstream hStream,
			     void **kernelParams, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
			  void **kernelParams, void **extra);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
			       void **kernelParams, void **extra);

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult cuGraphDestroy(CUgraph hGraph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec,
				     CUgraph hGraph, unsigned long long flags);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
/* stubcuda extension: the simulated run time of an executable graph */
CUresult stubcuGraphSetDuration(CUgraphExec hGraphExec, uint64_t ns);

/*
 * Loading the library at run time (what the demo server and the tests
 * do): stubcuda_load() dlopens PATH and fills one pointer per function,
 * named like the function. Defined only where <dlfcn.h> is included before
 * this header (link with -ldl on glibc < 2.34).
 */
#define STUBCUDA_FUNCS(X)                                                 \
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) \
	X(cuDeviceGetName) X(cuGetErrorString) X(cuGetErrorName)           \
	X(cuCtxCreate_v2) X(cuCtxDestroy_v2) X(cuCtxSetCurrent)            \
	X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData)         \
	X(cuModuleUnload) X(cuModuleGetFunction) X(cuMemAlloc_v2)          \
	X(cuMemFree_v2) X(cuMemcpyHtoD_v2) X(cuMemcpyDtoH_v2)              \
	X(cuMemcpyDtoH_v2_ptds) X(cuStreamCreate) X(cuStreamDestroy_v2)    \
	X(cuStreamQuery) X(cuStreamSynchronize)                            \
	X(cuStreamSynchronize_ptsz) X(cuEventCreate) X(cuEventRecord)      \
	X(cuEventQuery) X(cuEventSynchronize) X(cuEventDestroy_v2)         \
	X(cuLaunchKernel) X(cuLaunchKernel_ptsz) X(cuLaunchKernelEx)       \
	X(cuLaunchKernelEx_ptsz) X(cuGraphCreate) X(cuGraphDestroy)        \
	X(cuGraphInstantiateWithFlags) X(cuGraphExecDestroy)               \
	X(cuGraphLaunch) X(cuGraphLaunch_ptsz) X(stubcuGraphSetDuration)

#define STUBCUDA_MEMBER(fn) __typeof__(fn) *fn;
struct stubcuda_api {
	void *handle; /* from dlopen */
	STUBCUDA_FUNCS(STUBCUDA_MEMBER)
};
#undef STUBCUDA_MEMBER

#ifdef RTLD_NOW
/* 0, or -1 with a one-line reason in err; the handle stays open. */
static inline int stubcuda_load(struct stubcuda_api *api, const char *path,
				char *err, size_t errlen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(err, errlen, "%s", dlerror());
		return -1;
	}
	api->handle = h;
#define STUBCUDA_SYM(fn)                                                 \
	api->fn = (__typeof__(api->fn))dlsym(h, #fn);                    \
	if (!api->fn) {                                                  \
		snprintf(err, errlen, "%s: no symbol %s", path, #fn);    \
		return -1;                                               \
	}
	STUBCUDA_FUNCS(STUBCUDA_SYM)
#undef STUBCUDA_SYM
	return 0;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* STUBCUDA_H */
