/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Private to the critical-path analysis: what user/analysis/waits.c says of
 * a thread's records (docs/design.md §4.3, §4.5): which waits are the
 * network's, a lock's, a runtime's, a poll's or the GPU's, the calls,
 * ioctls and file reads around them, and the labels the drill-down gives.
 */
#ifndef TT_WAITS_H
#define TT_WAITS_H

#include "cp_internal.h"

/* Why a blocked record is a wait for the GPU, if it is one. */
struct gpu_wait {
	const struct cp_call *sync; /* the sync call it is in */
	const struct cp_ioctl *ioc; /* the GPU ioctl it is in */
	const struct cp_gpudev *dev; /* the device, when registered */
	bool fd; /* on a GPU device fd */
};

bool cp_block_is_net(const struct tt_critpath *cp, const struct cp_rec *rec);
/* Record j of th ends a wait its timer ended (a hard interrupt's wake). */
bool cp_timer_ended(const struct tt_critpath *cp, const struct cp_thread *th,
		    long j);
/* The use of futex word (word, tgid), or NULL when nobody waited or woke. */
const struct cp_word *cp_word_find(const struct tt_critpath *cp, __u64 word,
				   __u32 tgid);
/* The runtime lock range of tgid that holds futex word, or NULL. */
const struct cp_rtrange *cp_runtime_word(const struct tt_critpath *cp,
					 __u64 word, __u32 tgid);
/* A runtime's lock range in a process, as the recorder found it (or Go's
 * taken back: TT_RT_GO with hi 0). */
int cp_add_rtrange(struct tt_critpath *cp, const struct tt_event *ev);
/* Process tgid runs CPython (the recorder found its _PyRuntime). */
bool cp_runs_cpython(const struct tt_critpath *cp, __u32 tgid);
/* Blocked record rec of th waits on a futex word that is a lock (§4.3's
 * counts) or a runtime's. */
bool cp_block_on_lock(const struct tt_critpath *cp, const struct cp_thread *th,
		      const struct cp_rec *rec);
/* Blocked record rec of th waits on a runtime's lock (CPython's GIL). */
bool cp_block_is_runtime(const struct tt_critpath *cp,
			 const struct cp_thread *th, const struct cp_rec *rec);
/* Record rec is a wait in poll(2), select(2) or epoll: an event loop's. */
bool cp_block_polls(const struct tt_critpath *cp, const struct cp_rec *rec);
enum tt_stage cp_block_judge(const struct tt_critpath *cp,
			     const struct cp_thread *th,
			     const struct cp_rec *rec, char *buf, size_t len);
const struct cp_call *cp_call_at(const struct cp_thread *th, __u64 t);
size_t cp_calls_before(const struct cp_thread *th, __u64 t);
void cp_cuda_fn_name(__u16 fn, char *buf, size_t len);
bool cp_gpu_wait_of(const struct tt_critpath *cp, const struct cp_thread *th,
		    const struct cp_rec *rec, struct gpu_wait *gw);
void cp_ioctl_name(const struct tt_critpath *cp, const struct cp_ioctl *io,
		   char *buf, size_t len);
size_t cp_ioctls_before(const struct cp_thread *th, __u64 t);
size_t cp_fileios_before(const struct cp_thread *th, __u64 t);
/* Of [s, t) of th, the time the hypervisor took (its runs' steal, spread
 * evenly over each run: where in a run it fell is not known). */
__u64 cp_steal_in(const struct cp_thread *th, __u64 s, __u64 t);
/* Futex word (word, tgid) is a mutex its threads pass around: one of its
 * first waiters woke it too, and it was waited on often enough. */
bool cp_word_passed(const struct tt_critpath *cp, __u64 word, __u32 tgid);
/*
 * c's first file read in (tb, t) after more than a drain's CPU
 * (DRAIN_CPU_NS, the hypervisor's steal aside) since its boundary tb, or 0:
 * its hand-offs in that time woke nobody (their targets busy, as a CPython
 * handler preempted or waiting for the GIL is), so tb is stale, and a read
 * of the storage this request's compute needs is where it took it up, as
 * a GPU launch is (cp_gpu_dispatch()), or its preemption on the way to it.
 * Read sooner, it may have admitted at tb and read after some bookkeeping:
 * tb stands.
 */
__u64 cp_stale_boundary_read(const struct tt_critpath *cp,
			     const struct cp_thread *c, __u64 tb, __u64 t);
/*
 * Where the read loop of th whose read or wait at t is storage started: its
 * earlier reads since floor, each apart from the next by nothing but waits
 * for a CPU or the GIL and a little CPU (loop_gap()), or its preemption on
 * its way to the first of them. A server's clock around its loop counts
 * them, where the path may have followed the GIL's holders past the first
 * reads (docs/design.md §4.4, the storage span).
 */
__u64 cp_read_loop_start(const struct tt_critpath *cp,
			 const struct cp_thread *th, __u64 t, __u64 floor);
/* "pread64 direct", "read file", "readv blkdev": what the thread read */
void cp_fileio_name(const struct cp_fileio *f, char *buf, size_t len);
bool cp_is_launch(const struct cp_call *c);
void cp_label(char *buf, size_t len, const char *a, const char *b);
long cp_lost_before(const struct tt_critpath *cp, __u64 t);
int cp_prepare(struct tt_critpath *cp, size_t nreq);

#endif /* TT_WAITS_H */
