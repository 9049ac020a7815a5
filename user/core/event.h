/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The event stream: one typed record per kernel event, shared by the
 * collector, the recorder, the reader and the analyzer. */
#ifndef TT_EVENT_H
#define TT_EVENT_H

#include <stddef.h>
#include <linux/types.h>
#include "ttftrace.h"

struct tt_event {
	struct tt_hdr h;
	union {
		struct tt_fork fork;
		struct tt_comm comm;
		struct tt_conn conn;
		struct tt_sock sock;
		struct tt_sock_dev sock_dev;
		struct tt_steal steal;
		struct tt_send send;
		struct tt_xmit xmit;
		struct tt_lost lost;
		struct tt_switch sw;
		struct tt_wake wake;
		struct tt_block blk;
		struct tt_fault fault;
		struct tt_ioctl ioc;
		struct tt_gpu_call call;
		struct tt_rtlock rtlock;
		struct tt_go go;
		struct tt_go_chan go_chan;
		struct tt_msg_send msg;
		struct tt_mark mark;
		struct tt_energy energy;
		struct tt_fileio fileio;
		struct tt_pipe_io pipe;
		struct tt_poll poll;
	};
};

/* The recording's process table: one entry per thread. */
struct tt_proc_info {
	__u32 tgid;
	__u32 tid;
	char comm[TT_COMM_LEN];
};

struct tt_dev_info {
	char path[64]; /* e.g. /dev/nvidia0 */
	__u32 rdev; /* the kernel's internal dev_t, major << 20 | minor, as
		     * inode->i_rdev holds it (tt_switch.fd_rdev) */
	__u32 kind; /* enum tt_gpu_kind (gpu.h); 0 = unknown */
	__u32 dev; /* filesystem device and inode: how a node that is not a */
	__u64 ino; /* char device (a FIFO standing in for one) is known */
};

/* What a recording says of itself (the .ttft header, docs/design.md §5.1). */
struct tt_file_meta {
	char hostname[64];
	char kernel[128]; /* uname release and version */
	__u64 mono_ns; /* CLOCK_MONOTONIC ... */
	__u64 real_ns; /* ... and CLOCK_REALTIME read at the same instant */
	char options[512]; /* the recording's command line */
	struct tt_proc_info *procs;
	size_t nprocs;
	struct tt_dev_info *devs;
	size_t ndevs;
	/* TT_ARCH_* (tt_arch.h) whose syscall numbers the records hold; the
	 * writer stores this build's when 0, the reader gives 0 for files
	 * from before the field (all x86-64) */
	__u32 arch;
	/* the ttftrace that wrote it ("0.2+g1234abc"), "" in files from
	 * before the field (format 2.1, docs/design.md §5.4) */
	char recorder[64];
};

/* Size of the payload that follows the header for a stored type, or -1 when
 * the type is unknown or never stored (TT_EV_SEND_RAW). */
int tt_event_payload_size(unsigned int type);
const char *tt_event_type_name(unsigned int type);
/* "enqueue", "dispatch", "token" for TT_MARK_*; "?" for another. */
const char *tt_mark_kind_name(unsigned int kind);
/* "cpython" for TT_RT_CPYTHON; "runtime" for a kind this build does not know. */
const char *tt_rt_kind_name(unsigned int kind);

#endif /* TT_EVENT_H */
