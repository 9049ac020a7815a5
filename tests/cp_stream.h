/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Synthetic scheduler event streams for the critical-path tests: threads
 * switch in and out, block in syscalls on typed fds, wake each other. The
 * helpers append in any order; cp_feed() sorts by time and feeds a new
 * critpath. Include after tt_test.h.
 */
#ifndef TT_CP_STREAM_H
#define TT_CP_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "tt_test.h"
#include "critpath.h"
#include "gpu.h"

#define US 1000ULL
/* Threads 101, 102 ... belong to process 100; 201 ... to 200. */
#define TGID(tid) ((tid) / 100 * 100)
/* A thread of a process nobody traces. */
#define UNTRACED 9001

#define NR_READ 0
#define NR_WRITE 1
#define NR_IOCTL 16
#define NR_PREAD64 17
#define NR_POLL 7
#define NR_MMAP 9
#define NR_MUNMAP 11
#define NR_NANOSLEEP 35
#define NR_RECVFROM 45
#define NR_SENDMSG 46
#define NR_RECVMSG 47
#define NR_FUTEX 202
#define NR_EPOLL_WAIT 232
#define NR_IO_URING_ENTER 426

#define GPU_RDEV ((195u << 20) | 0)
/* open(2)'s O_DIRECT on x86-64 (TT_O_DIRECT) */
#define O_DIRECT_X86 040000

struct stream {
	struct tt_event *ev;
	size_t n, cap;
};

/* What a thread blocks in at its switch-out. */
struct blk {
	int sys;
	__u64 arg0;
	__u32 mode; /* S_IF* of the fd in arg0, 0 for none */
	__u32 rdev;
	__u32 dev; /* the fd's filesystem device, 8:1 when 0 */
	__u64 ino;
	bool iowait;
	bool anon; /* the fd is an anon inode (eventfd, timerfd, epoll) */
	bool timed; /* a futex wait with a timeout */
	bool go_exit; /* a goroutine's exit, as the goroutine pass writes it */
};

static inline struct tt_event *ev_new(struct stream *s, unsigned int type,
				      __u64 ts, __u32 tid)
{
	struct tt_event *ev;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	ev = &s->ev[s->n++];
	memset(ev, 0, sizeof(*ev));
	ev->h.type = type;
	ev->h.ts = ts;
	ev->h.tid = tid;
	ev->h.tgid = tid ? TGID(tid) : 0;
	return ev;
}

/* The idle task hands the CPU to tid. */
static inline void sw_in(struct stream *s, __u64 ts, __u32 tid)
{
	struct tt_event *ev = ev_new(s, TT_EV_SWITCH, ts, 0);

	ev->sw.next_tid = tid;
	ev->sw.next_tgid = TGID(tid);
	ev->sw.sw_flags = TT_SW_NEXT_TRACED;
	ev->sw.syscall_nr = -1;
}

/* tid blocks in b; the idle task runs. */
static inline void sw_out(struct stream *s, __u64 ts, __u32 tid, struct blk b)
{
	struct tt_event *ev = ev_new(s, TT_EV_SWITCH, ts, tid);

	ev->sw.prev_state = 1;
	ev->sw.syscall_nr = b.sys;
	ev->sw.arg0 = b.arg0;
	ev->sw.sw_flags = TT_SW_PREV_TRACED;
	if (b.iowait)
		ev->sw.sw_flags |= TT_SW_IOWAIT;
	if (b.timed)
		ev->sw.sw_flags |= TT_SW_TIMED;
	if (b.go_exit)
		ev->sw.sw_flags |= TT_SW_GO_EXIT;
	if (b.mode) {
		ev->sw.sw_flags |= TT_SW_FD;
		ev->sw.fd_mode = b.mode | 0600;
		ev->sw.fd_rdev = b.rdev;
		ev->sw.fd_dev = b.dev ? b.dev : (8u << 20) | 1;
		ev->sw.fd_ino = b.ino;
	}
	if (b.anon) {
		/* one shared inode on the anon inode fs (dev 0:15 or so) */
		ev->sw.sw_flags |= TT_SW_ANON_INODE;
		ev->sw.fd_dev = 15;
	}
}

/* tid is preempted by an untraced thread (still runnable). */
static inline void preempt(struct stream *s, __u64 ts, __u32 tid)
{
	struct tt_event *ev = ev_new(s, TT_EV_SWITCH, ts, tid);

	ev->sw.next_tid = UNTRACED;
	ev->sw.next_tgid = TGID(UNTRACED);
	ev->sw.syscall_nr = -1;
	ev->sw.sw_flags = TT_SW_PREV_TRACED;
}

/* current wakes target; flags TT_F_HARDIRQ/SOFTIRQ say the context. */
static inline void wake(struct stream *s, __u64 ts, __u32 current, __u32 target,
			__u32 flags, int sys, __u64 arg0)
{
	struct tt_event *ev = ev_new(s, TT_EV_WAKING, ts, current);

	ev->h.flags = flags;
	ev->wake.target_tid = target;
	ev->wake.target_tgid = TGID(target);
	ev->wake.waker_syscall = flags ? -1 : sys;
	ev->wake.waker_arg0 = flags ? 0 : arg0;
}

static inline void lost(struct stream *s, __u64 since, __u64 ts)
{
	struct tt_event *ev = ev_new(s, TT_EV_LOST, ts, 0);

	ev->lost.since_ts = since;
	ev->lost.count = 10;
}

/* tid's name is now comm. */
static inline void comm(struct stream *s, __u64 ts, __u32 tid, const char *name)
{
	struct tt_event *ev = ev_new(s, TT_EV_COMM, ts, tid);

	snprintf(ev->comm.comm, sizeof(ev->comm.comm), "%s", name);
}

/* The index of CUDA function name in tt_cuda_fns(). */
static inline __u16 cuda_fn(const char *name)
{
	const struct tt_cuda_fn *fns;
	size_t n, i;

	fns = tt_cuda_fns(&n);
	for (i = 0; i < n; i++)
		if (!strcmp(fns[i].name, name))
			return i;
	fprintf(stderr, "no CUDA function %s\n", name);
	exit(1);
}

/* tid was in CUDA function name over [enter, ret). */
static inline void gpu_call(struct stream *s, __u64 enter, __u64 ret, __u32 tid,
			    const char *name)
{
	struct tt_event *ev = ev_new(s, TT_EV_GPU_CALL, ret, tid);

	ev->call.ts_enter = enter;
	ev->call.fn = cuda_fn(name);
}

/* tid was in ioctl cmd on a GPU node over [enter, ret). */
static inline void gpu_ioctl(struct stream *s, __u64 enter, __u64 ret,
			     __u32 tid, __u32 cmd, __u32 rdev)
{
	struct tt_event *ev = ev_new(s, TT_EV_IOCTL, ret, tid);

	ev->ioc.ts_enter = enter;
	ev->ioc.cmd = cmd;
	ev->ioc.fd = 7;
	ev->ioc.rdev = rdev;
	ev->ioc.dev = 5;
	ev->ioc.ino = 400 + (rdev & 0xfffff);
}

/* tid was in file read sys on a file of type mode (S_IFREG, S_IFBLK) with
 * open flags f_flags over [enter, ret); it read 4096 bytes. */
static inline void file_read(struct stream *s, __u64 enter, __u64 ret,
			     __u32 tid, int sys, __u32 mode, __u32 f_flags)
{
	struct tt_event *ev = ev_new(s, TT_EV_FILEIO, ret, tid);

	ev->fileio.ts_enter = enter;
	ev->fileio.syscall = sys;
	ev->fileio.mode = mode | 0644;
	ev->fileio.f_flags = f_flags;
	ev->fileio.fd = 9;
	ev->fileio.ret = 4096;
}

/*
 * Reader 101 (running throughout) -> tokenizer 102 (pipe, at 1200 us) ->
 * engine (futex word 0x10, at 1500 us) -> writer 104 (at 1900 us; it runs
 * from 1950 us).
 */
static inline void cp_chain(struct stream *s, __u32 engine)
{
	struct blk pipe_in = { .sys = NR_READ, .arg0 = 4, .mode = S_IFIFO };
	struct blk word = { .sys = NR_FUTEX, .arg0 = 0x10 };

	sw_in(s, 0, 101);
	sw_in(s, 10 * US, 102);
	sw_out(s, 50 * US, 102, pipe_in);
	sw_in(s, 20 * US, engine);
	sw_out(s, 60 * US, engine, word);
	sw_in(s, 30 * US, 104);
	sw_out(s, 70 * US, 104,
	       (struct blk){ .sys = NR_RECVFROM, .arg0 = 6, .mode = S_IFSOCK });
	wake(s, 1200 * US, 101, 102, 0, NR_WRITE, 5);
	sw_in(s, 1220 * US, 102);
	wake(s, 1500 * US, 102, engine, 0, NR_FUTEX, 0x10);
	sw_out(s, 1510 * US, 102, pipe_in);
	sw_in(s, 1503 * US, engine);
	wake(s, 1900 * US, engine, 104, 0, NR_WRITE, 7);
	sw_out(s, 1910 * US, engine, word);
	sw_in(s, 1950 * US, 104);
}

static inline int cp_cmp_ts(const void *a, const void *b)
{
	const struct tt_event *x = a, *y = b;

	return x->h.ts < y->h.ts ? -1 : x->h.ts > y->h.ts;
}

/* Sorts the stream by time (helpers append in any order; equal times
 * keep their order), feeds it to a new critpath and empties the stream. */
static inline struct tt_critpath *cp_feed(struct stream *s)
{
	struct tt_critpath *cp = tt_critpath_new();
	size_t i;

	if (!ASSERT_OK_PTR(cp, "tt_critpath_new"))
		exit(1);
	/* make the sort stable: break ties by position through cpu */
	for (i = 0; i < s->n; i++)
		s->ev[i].h.cpu = i;
	qsort(s->ev, s->n, sizeof(*s->ev), cp_cmp_ts);
	for (i = 1; i < s->n; i++) {
		size_t j = i;

		while (j > 0 && s->ev[j - 1].h.ts == s->ev[j].h.ts &&
		       s->ev[j - 1].h.cpu > s->ev[j].h.cpu) {
			struct tt_event t = s->ev[j];

			s->ev[j] = s->ev[j - 1];
			s->ev[j - 1] = t;
			j--;
		}
	}
	for (i = 0; i < s->n; i++)
		ASSERT_OK(tt_critpath_add(cp, &s->ev[i]), "tt_critpath_add");
	free(s->ev);
	memset(s, 0, sizeof(*s));
	return cp;
}

static inline struct tt_cp_request req(__u64 id, __u64 arrive, __u64 read,
				       __u64 first_write, __u64 wire,
				       __u32 reader, __u32 writer)
{
	return (struct tt_cp_request){ .id = id,
				       .t_arrive = arrive,
				       .t_read = read,
				       .t_first_write = first_write,
				       .t_wire = wire,
				       .reader_tid = reader,
				       .writer_tid = writer };
}

#endif /* TT_CP_STREAM_H */
