// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Why a thread waited: a blocked record's stage and reason (GPU
 * device, storage, network, sleep, lock) and which futex words are locks
 * (docs/design.md §4.3).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cp_internal.h"
#include "waits.h"
#include <sys/stat.h>
#include "gpu.h"
#include "tt_arch.h"

/* The syscalls the drill-down names (tt_arch.h: this architecture's). */
static const struct {
	int nr;
	const char *name;
} syscall_names[] = { TT_SYSCALL_NAMES };

/* ---- names ---- */

const char *tt_stage_name(enum tt_stage s)
{
	static const char *const names[TT_ST_MAX] = {
		[TT_ST_NET_IN] = "network.in",
		[TT_ST_NET_OUT] = "network.out",
		[TT_ST_BACKLOG] = "scheduler.backlog",
		[TT_ST_QUEUE] = "scheduler.queue",
		[TT_ST_RUNQUEUE] = "scheduler.runqueue",
		[TT_ST_STORAGE] = "storage.io",
		[TT_ST_GPU] = "compute.gpu",
		[TT_ST_CPU] = "compute.cpu",
		[TT_ST_SLEEP] = "other.sleep",
		[TT_ST_LOCK] = "other.lock",
		[TT_ST_UNKNOWN] = "other.unknown",
	};

	return (unsigned int)s < TT_ST_MAX ? names[s] : "?";
}

const char *tt_stage_row_name(unsigned int row)
{
	if (row == TT_ST_MAIN)
		return "other";
	return row < TT_ST_MAIN ? tt_stage_name(row) : "?";
}

const char *tt_cp_state_name(enum tt_cp_state s)
{
	switch (s) {
	case TT_CP_PHASE:
		return "phase";
	case TT_CP_RUNNING:
		return "running";
	case TT_CP_RUNNABLE:
		return "runnable";
	case TT_CP_BLOCKED:
		return "blocked";
	case TT_CP_NODATA:
		return "no-data";
	}
	return "?";
}

const char *tt_cp_dispatch_name(enum tt_cp_dispatch d)
{
	switch (d) {
	case TT_CP_DISP_READ:
		return "read";
	case TT_CP_DISP_PICKUP:
		return "pickup";
	case TT_CP_DISP_HANDOFF:
		return "handoff";
	case TT_CP_DISP_GPU:
		return "gpu";
	case TT_CP_DISP_MARKER:
		return "marker";
	case TT_CP_DISP_RESUME:
		return "resume";
	case TT_CP_DISP_CHANNEL:
		return "channel";
	case TT_CP_DISP_LOCK:
		return "lock";
	case TT_CP_DISP_BATCH:
		return "batch";
	case TT_CP_DISP_TAKE:
		return "take";
	case TT_CP_DISP_RELEASE:
		return "release";
	case TT_CP_DISP_STORAGE:
		return "storage";
	case TT_CP_DISP_CALL:
		return "call";
	}
	return "?";
}

const char *tt_cp_dispatch_why(enum tt_cp_dispatch d)
{
	switch (d) {
	case TT_CP_DISP_PICKUP:
		return "the engine woken by the reader ran";
	case TT_CP_DISP_HANDOFF:
		return "the engine's last hand-off to another request";
	case TT_CP_DISP_GPU:
		return "the first GPU launch of the iteration after the one running when the request was read";
	case TT_CP_DISP_MARKER:
		return "an application marker (record --mark dispatch=)";
	case TT_CP_DISP_RESUME:
		return "the engine, preempted when the request was handed on, ran again";
	case TT_CP_DISP_CHANNEL:
		return "the engine took what the reader sent on a Go channel";
	case TT_CP_DISP_LOCK:
		return "the worker held the lock another request's thread released";
	case TT_CP_DISP_BATCH:
		return "the batcher's last wait on its input ended: it ran to compute";
	case TT_CP_DISP_TAKE:
		return "the engine, busy past its last hand-off to another request, read its input pipe";
	case TT_CP_DISP_RELEASE:
		return "the worker, idle since the read, ran after the reader released a lock it waited on";
	case TT_CP_DISP_STORAGE:
		return "the engine, busy past its last hand-off to another request, read the request's storage";
	case TT_CP_DISP_CALL:
		return "the caller's call came to the callee after the request was handed on";
	case TT_CP_DISP_READ:
		break;
	}
	return "nothing better: taken as t_read";
}

static const char *syscall_name(int nr)
{
	size_t i;

	for (i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
		if (syscall_names[i].nr == nr)
			return syscall_names[i].name;
	return NULL;
}

/* ---- classification of waits ---- */

/*
 * Whether a node is a registered GPU device: a char device (chr) by its
 * rdev or major, any node by dev and ino. *d gets the device registered
 * with the most detail (a path), or NULL for a major alone.
 */
static bool gpu_node(const struct tt_critpath *cp, bool chr, __u32 rdev,
		     __u32 dev, __u64 ino, const struct cp_gpudev **d)
{
	const struct cp_gpudev *g;
	bool major = false;
	size_t i;

	*d = NULL;
	for (i = 0; i < cp->ngpu_devs; i++) {
		g = &cp->gpu_devs[i];
		if (!((chr && g->rdev && g->rdev == rdev) ||
		      (g->ino && g->ino == ino && g->dev == dev)))
			continue;
		if (!*d || (!(*d)->path[0] && g->path[0]))
			*d = g;
	}
	for (i = 0; chr && !*d && i < cp->ngpu_majors; i++)
		major |= cp->gpu_majors[i] == rdev >> 20;
	return *d || major;
}

/* Calls of th that start before t (they are sorted and disjoint). */
size_t cp_calls_before(const struct cp_thread *th, __u64 t)
{
	return cp_starts_before(th->calls, th->ncalls, sizeof(*th->calls), t);
}

size_t cp_ioctls_before(const struct cp_thread *th, __u64 t)
{
	return cp_starts_before(th->ioctls, th->nioctls, sizeof(*th->ioctls),
				t);
}

size_t cp_fileios_before(const struct cp_thread *th, __u64 t)
{
	return cp_starts_before(th->fileios, th->nfileios, sizeof(*th->fileios),
				t);
}

/* Where c, preempted after tb, ran less than READ_AFTER_PREEMPT_NS before its
 * read at r, was switched out: on its way to the read, having taken the
 * request up; else r. Its waits after for the GIL do not count; any other
 * wait after is a wait for input (no storage rule then). */
static __u64 preempted_on_way(const struct tt_critpath *cp,
			      const struct cp_thread *c, __u64 tb, __u64 r)
{
	long k = cp_rec_before(c, r);
	__u64 cpu = 0, hi = r;

	for (; k > 0 && c->recs[k].ts > tb; hi = c->recs[k--].ts) {
		const struct cp_rec *rec = &c->recs[k];

		if (rec->state == REC_BLOCKED &&
		    !cp_block_is_runtime(cp, c, rec))
			return r;
		if (rec->state == REC_RUNNING) {
			cpu += hi - rec->ts;
			if (cpu >= READ_AFTER_PREEMPT_NS)
				return r;
		} else if (rec->state == REC_RUNNABLE &&
			   c->recs[k - 1].state == REC_RUNNING) {
			return rec->ts;
		}
	}
	return r;
}

/* f read storage: a read that failed or found nothing did not; an
 * io_uring_enter(2) call's return counts the requests it submitted, 0 for
 * one that reaped a read only */
static bool read_storage(const struct cp_fileio *f)
{
	return f->ret > 0 || (!f->ret && f->syscall == TT_NR_io_uring_enter);
}

__u64 cp_stale_boundary_read(const struct tt_critpath *cp,
			     const struct cp_thread *c, __u64 tb, __u64 t)
{
	size_t i = cp_fileios_before(c, tb + 1);
	__u64 r, cpu, steal;

	while (i < c->nfileios && !read_storage(&c->fileios[i]))
		i++;
	if (i >= c->nfileios || c->fileios[i].start >= t)
		return 0;
	r = c->fileios[i].start;
	cpu = cp_cpu_in(c, tb, r);
	steal = cp_steal_in(c, tb, r);
	if (cpu <= steal || cpu - steal < DRAIN_CPU_NS)
		return 0;
	return preempted_on_way(cp, c, tb, r);
}

/* Between its reads ending at a and starting at b, th waited for nothing but
 * a CPU or the GIL and ran less than READ_AFTER_PREEMPT_NS: one read loop. */
static bool loop_gap(const struct tt_critpath *cp, const struct cp_thread *th,
		     __u64 a, __u64 b)
{
	return cp_cpu_in(th, a, b) < READ_AFTER_PREEMPT_NS &&
	       !cp_blocked_in(cp, th, a, cp_rec_before(th, b));
}

__u64 cp_read_loop_start(const struct tt_critpath *cp,
			 const struct cp_thread *th, __u64 t, __u64 floor)
{
	size_t i = th ? cp_fileios_before(th, t + 1) : 0;
	__u64 start = t;

	/* the read the path entered the storage in */
	if (i && th->fileios[i - 1].end > t &&
	    th->fileios[i - 1].start >= floor)
		start = th->fileios[--i].start;
	for (; i > 0; i--) {
		const struct cp_fileio *p = &th->fileios[i - 1];

		if (!read_storage(p) || p->start < floor ||
		    !loop_gap(cp, th, p->end, start))
			break;
		start = p->start;
	}
	/* preempted on its way to its first read (at t_dispatch itself, as
	 * rule storage has it): set out to read there */
	return th && floor ? preempted_on_way(cp, th, floor - 1, start) : start;
}

void cp_fileio_name(const struct cp_fileio *f, char *buf, size_t len)
{
	const char *name = syscall_name(f->syscall);
	char sys[24];

	if (name)
		snprintf(sys, sizeof(sys), "%s", name);
	else
		snprintf(sys, sizeof(sys), "sys_%d", f->syscall);
	cp_label(buf, len, sys,
		 f->f_flags & TT_O_DIRECT      ? "direct" :
		 (f->mode & S_IFMT) == S_IFBLK ? "blkdev" :
						 "file");
}

/* The call of th around instant t, or NULL. */
const struct cp_call *cp_call_at(const struct cp_thread *th, __u64 t)
{
	size_t i = cp_calls_before(th, t + 1);

	return i && th->calls[i - 1].end > t ? &th->calls[i - 1] : NULL;
}

static const struct cp_ioctl *ioctl_at(const struct cp_thread *th, __u64 t)
{
	size_t i = cp_ioctls_before(th, t + 1);

	return i && th->ioctls[i - 1].end > t ? &th->ioctls[i - 1] : NULL;
}

/* "a b" in buf, cut to fit: a reason is a cp_label, not a record. */
void cp_label(char *buf, size_t len, const char *a, const char *b)
{
	size_t n = 0;

	while (*a && n + 1 < len)
		buf[n++] = *a++;
	if (n + 1 < len)
		buf[n++] = ' ';
	while (*b && n + 1 < len)
		buf[n++] = *b++;
	buf[n] = '\0';
}

bool cp_is_launch(const struct cp_call *c)
{
	return c->cls == TT_CUDA_LAUNCH || c->cls == TT_CUDA_GRAPH;
}

void cp_cuda_fn_name(__u16 fn, char *buf, size_t len)
{
	const struct tt_cuda_fn *fns;
	size_t n;

	fns = tt_cuda_fns(&n);
	if (fn < n)
		snprintf(buf, len, "%s", fns[fn].name);
	else
		snprintf(buf, len, "cuda#%u", fn);
}

/* The ioctl's name, decoded for the kind of its device. */
void cp_ioctl_name(const struct tt_critpath *cp, const struct cp_ioctl *io,
		   char *buf, size_t len)
{
	const struct cp_gpudev *d;

	gpu_node(cp, io->rdev != 0, io->rdev, io->dev, io->ino, &d);
	tt_gpu_ioctl_name(io->cmd, d ? d->kind : TT_GPU_UNKNOWN, buf, len);
}

static bool is_file_io(int nr)
{
	switch (nr) {
	case TT_NR_read:
	case TT_NR_write:
	case TT_NR_pread64:
	case TT_NR_pwrite64:
	case TT_NR_readv:
	case TT_NR_writev:
	case TT_NR_preadv:
	case TT_NR_pwritev:
	case TT_NR_preadv2:
	case TT_NR_pwritev2:
	case TT_NR_fsync:
	case TT_NR_fdatasync:
		return true;
	}
	return false;
}

static bool is_poll(int nr)
{
	switch (nr) {
	case TT_NR_poll:
	case TT_NR_select:
	case TT_NR_epoll_wait:
	case TT_NR_pselect6:
	case TT_NR_ppoll:
	case TT_NR_epoll_pwait:
	case TT_NR_epoll_pwait2:
		return true;
	}
	return false;
}

static __u32 fd_type(const struct cp_rec *rec, const struct cp_block *b)
{
	return rec->flags & REC_F_FD ? b->fd_mode & S_IFMT : 0;
}

/*
 * A wait inside a sync call, or on a GPU device fd (or in an ioctl on
 * one): compute.gpu whoever ends it, and never followed: on real hardware
 * an interrupt ends it, with a simulated device its thread.
 */
bool cp_gpu_wait_of(const struct tt_critpath *cp, const struct cp_thread *th,
		    const struct cp_rec *rec, struct gpu_wait *gw)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	__u32 type = fd_type(rec, b);
	const struct cp_gpudev *d;
	const struct cp_call *c;
	const struct cp_ioctl *io;

	memset(gw, 0, sizeof(*gw));
	if (!th)
		return false;
	c = th->ncalls ? cp_call_at(th, rec->ts) : NULL;
	if (c && c->cls == TT_CUDA_SYNC)
		gw->sync = c;
	if (!cp->ngpu_devs && !cp->ngpu_majors)
		return gw->sync;
	if (type && !(rec->flags & REC_F_ANON) &&
	    gpu_node(cp, type == S_IFCHR, b->fd_rdev, b->fd_dev, b->fd_ino,
		     &gw->dev))
		gw->fd = true;
	io = b->syscall == TT_NR_ioctl && th->nioctls ? ioctl_at(th, rec->ts) :
							NULL;
	if (io && gpu_node(cp, io->rdev != 0, io->rdev, io->dev, io->ino, &d)) {
		gw->ioc = io;
		gw->fd = true;
		if (d)
			gw->dev = d;
	}
	return gw->sync || gw->fd;
}

/* Where a blocked interval nobody traced ended goes (docs/design.md §4.3). */
static enum tt_stage block_stage(const struct tt_critpath *cp,
				 const struct cp_rec *rec)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	__u32 type = fd_type(rec, b);

	/*
	 * eventfd, timerfd, signalfd, epoll, io_uring: one shared inode (and
	 * S_IFREG on recent kernels), so neither the mode nor an I/O wait
	 * (io_uring sets one for any request) says storage; a timerfd looks
	 * like the rest; io_uring's file requests are judged apart.
	 */
	if (rec->flags & (REC_F_ANON | REC_F_PRETRACE))
		return TT_ST_UNKNOWN;
	if (rec->flags & REC_F_IOWAIT)
		return TT_ST_STORAGE;
	if ((type == S_IFREG || type == S_IFBLK) && is_file_io(b->syscall))
		return TT_ST_STORAGE;
	if (type == S_IFSOCK)
		return TT_ST_NET_OUT;
	if (b->syscall == TT_NR_nanosleep ||
	    b->syscall == TT_NR_clock_nanosleep)
		return TT_ST_SLEEP;
	if (b->syscall == TT_NR_futex)
		return TT_ST_LOCK;
	return TT_ST_UNKNOWN;
}

bool cp_timer_ended(const struct tt_critpath *cp, const struct cp_thread *th,
		    long j)
{
	const struct cp_rec *r = &th->recs[j];

	return r->state == REC_RUNNABLE &&
	       (r->info == NONE32 || cp->wakes[r->info].ctx == CTX_HARDIRQ);
}

/* A wait a loopback TCP send can end: on a socket, or in a poll. */
bool cp_block_is_net(const struct tt_critpath *cp, const struct cp_rec *rec)
{
	const struct cp_block *b = &cp->blocks[rec->info];

	return fd_type(rec, b) == S_IFSOCK || is_poll(b->syscall);
}

/* "futex 0x7000", "read file 8:1 iowait"; on a GPU fd (gw not NULL)
 * "poll /dev/nvidia0", or "ioctl gpu 195:0" when the path is unknown. */
static void block_reason(const struct tt_critpath *cp, const struct cp_rec *rec,
			 const struct gpu_wait *gw, char *buf, size_t len)
{
	const struct cp_block *b = &cp->blocks[rec->info];
	const char *name = syscall_name(b->syscall), *base;
	__u32 type = fd_type(rec, b);
	char sys[24], fd[24] = "";

	if (rec->flags & REC_F_PRETRACE) {
		snprintf(buf, len, "blocked before trace");
		return;
	}
	if (name)
		snprintf(sys, sizeof(sys), "%s", name);
	else if (b->syscall < 0)
		snprintf(sys, sizeof(sys), "%s",
			 rec->flags & REC_F_IOWAIT ? "fault" : "kernel");
	else
		snprintf(sys, sizeof(sys), "sys_%d", b->syscall);
	if (gw && gw->dev && gw->dev->path[0]) {
		/* the whole path if it fits, else its last part */
		base = strrchr(gw->dev->path, '/');
		if (strlen(sys) + 1 + strlen(gw->dev->path) < len || !base)
			cp_label(buf, len, sys, gw->dev->path);
		else
			cp_label(buf, len, sys, base + 1);
		return;
	}
	if (rec->flags & REC_F_ANON)
		type = 0;
	switch (type) {
	case S_IFCHR:
		snprintf(fd, sizeof(fd), " %s %u:%u", gw ? "gpu" : "chr",
			 b->fd_rdev >> 20, b->fd_rdev & 0xfffff);
		break;
	case S_IFREG:
		snprintf(fd, sizeof(fd), " file %u:%u", b->fd_dev >> 20,
			 b->fd_dev & 0xfffff);
		break;
	case S_IFBLK:
		snprintf(fd, sizeof(fd), " blk %u:%u", b->fd_rdev >> 20,
			 b->fd_rdev & 0xfffff);
		break;
	case S_IFSOCK:
		snprintf(fd, sizeof(fd), " socket");
		break;
	case S_IFIFO:
		snprintf(fd, sizeof(fd), " %spipe", gw ? "gpu " : "");
		break;
	default:
		if (gw)
			snprintf(fd, sizeof(fd), " gpu");
		else if (rec->flags & REC_F_ANON)
			snprintf(fd, sizeof(fd), " anon");
		else if (b->syscall == TT_NR_futex)
			snprintf(fd, sizeof(fd), " %#llx",
				 (unsigned long long)b->arg0);
		break;
	}
	snprintf(buf, len, "%s%s%s", sys, fd,
		 rec->flags & REC_F_IOWAIT ? " iowait" : "");
}

const struct cp_rtrange *cp_runtime_word(const struct tt_critpath *cp,
					 __u64 word, __u32 tgid)
{
	/* a process or two with an interpreter: a scan is enough */
	for (size_t i = 0; i < cp->nrtranges; i++) {
		const struct cp_rtrange *r = &cp->rtranges[i];

		if (r->tgid == tgid && word >= r->lo && word < r->hi)
			return r;
	}
	return NULL;
}

/* Drops tgid's ranges of kind, its words judged as any process's: its
 * goroutines are no longer followed, it runs another runtime now, or it
 * exec'd another program */
static void drop_ranges(struct tt_critpath *cp, __u32 tgid, __u32 kind)
{
	size_t i, j;

	for (i = j = 0; i < cp->nrtranges; i++)
		if (cp->rtranges[i].tgid != tgid ||
		    cp->rtranges[i].kind != kind)
			cp->rtranges[j++] = cp->rtranges[i];
	cp->prepared = cp->prepared && j == cp->nrtranges;
	cp->nrtranges = j;
}

int cp_add_rtrange(struct tt_critpath *cp, const struct tt_event *ev)
{
	const struct tt_rtlock *rl = &ev->rtlock;

	/* a range taken back (hi 0: an exec, Go's probe off), or another
	 * runtime's found: a Go program's fork that exec'd Python (LocalAI's
	 * backends), whose Go range, all its words, would hold the GIL's */
	if (!rl->hi)
		drop_ranges(cp, ev->h.tgid, rl->kind);
	else if (rl->kind != TT_RT_GO)
		drop_ranges(cp, ev->h.tgid, TT_RT_GO);
	if (rl->hi <= rl->lo || cp_runtime_word(cp, rl->lo, ev->h.tgid))
		return 0;
	if (tt_grow((void **)&cp->rtranges, &cp->caprtranges, cp->nrtranges + 1,
		    sizeof(*cp->rtranges)))
		return -ENOMEM;
	cp->rtranges[cp->nrtranges++] = (struct cp_rtrange){
		.lo = rl->lo,
		.hi = rl->hi,
		.tgid = ev->h.tgid,
		.kind = rl->kind,
	};
	/* the words' judgement changes: walks prepare again */
	cp->prepared = false;
	return 0;
}

bool cp_runs_cpython(const struct tt_critpath *cp, __u32 tgid)
{
	for (size_t i = 0; i < cp->nrtranges; i++)
		if (cp->rtranges[i].tgid == tgid &&
		    cp->rtranges[i].kind == TT_RT_CPYTHON)
			return true;
	return false;
}

/* The runtime whose futex word th blocked on in rec, or NULL. */
static const struct cp_rtrange *block_runtime(const struct tt_critpath *cp,
					      const struct cp_thread *th,
					      const struct cp_rec *rec)
{
	const struct cp_block *b;

	if (rec->state != REC_BLOCKED || rec->info == NONE32 ||
	    !cp->nrtranges)
		return NULL;
	b = &cp->blocks[rec->info];
	if (b->syscall != TT_NR_futex)
		return NULL;
	return cp_runtime_word(cp, b->arg0, th->tgid);
}

bool cp_block_is_runtime(const struct tt_critpath *cp,
			 const struct cp_thread *th, const struct cp_rec *rec)
{
	const struct cp_rtrange *rt = block_runtime(cp, th, rec);

	return rt && rt->kind == TT_RT_CPYTHON;
}

bool cp_block_polls(const struct tt_critpath *cp, const struct cp_rec *rec)
{
	return rec->state == REC_BLOCKED &&
	       is_poll(cp->blocks[rec->info].syscall);
}

/* rec, a wait in io_uring_enter(2), is inside a FILEIO record of that call:
 * one that submitted or reaped a request on a file (docs/design.md §4.3) */
static bool uring_file_wait(const struct tt_critpath *cp,
			    const struct cp_thread *th,
			    const struct cp_rec *rec)
{
	size_t i;

	if (!th || cp->blocks[rec->info].syscall != TT_NR_io_uring_enter)
		return false;
	i = cp_fileios_before(th, rec->ts + 1);
	return i && th->fileios[i - 1].syscall == TT_NR_io_uring_enter &&
	       th->fileios[i - 1].end > rec->ts;
}

/* The stage and reason of blocked record rec of th, when not followed. */
enum tt_stage cp_block_judge(const struct tt_critpath *cp,
			     const struct cp_thread *th,
			     const struct cp_rec *rec, char *buf, size_t len)
{
	struct gpu_wait gw;
	char name[40];

	/* the interpreter lock, named: a known problem users ask to see */
	if (cp_block_is_runtime(cp, th, rec)) {
		snprintf(buf, len, "GIL");
		return TT_ST_LOCK;
	}
	/* an M of a Go program parked by its scheduler */
	if (block_runtime(cp, th, rec)) {
		snprintf(buf, len, "Go scheduler");
		return TT_ST_RUNQUEUE;
	}
	/* a ring's wait in a call that submitted or reaped file requests:
	 * the storage's, where its anon inode and its I/O wait (any
	 * request's) say nothing */
	if (uring_file_wait(cp, th, rec)) {
		snprintf(buf, len, "io_uring_enter file%s",
			 rec->flags & REC_F_IOWAIT ? " iowait" : "");
		return TT_ST_STORAGE;
	}
	if (!cp_gpu_wait_of(cp, th, rec, &gw)) {
		block_reason(cp, rec, NULL, buf, len);
		return block_stage(cp, rec);
	}
	if (gw.sync) {
		cp_cuda_fn_name(gw.sync->fn, name, sizeof(name));
		cp_label(buf, len, "sync", name);
	} else if (gw.ioc) {
		cp_ioctl_name(cp, gw.ioc, name, sizeof(name));
		cp_label(buf, len, "ioctl", name);
	} else {
		block_reason(cp, rec, &gw, buf, len);
	}
	return TT_ST_GPU;
}

/* ---- preparation for walks ---- */

/* One of fw's first waiters woke it too: its threads pass it around. */
static bool word_shared(const struct cp_word *fw)
{
	int i, j;

	for (i = 0; i < WORD_WAITERS; i++)
		for (j = 0; j < 2; j++)
			if (fw->waiter[i] && fw->waiter[i] == fw->waker[j])
				return true;
	return false;
}

/* A lock (a GIL, a mutex) rather than a hand-off (docs/design.md §4.3): waited on
 * many times per request, or passed back and forth between threads. */
static bool word_lock(const struct cp_word *fw, __u64 limit)
{
	return fw->waits > limit ||
	       (word_shared(fw) && fw->waits >= LOCK_SHARED_WAITS);
}

const struct cp_word *cp_word_find(const struct tt_critpath *cp, __u64 word,
				   __u32 tgid)
{
	const struct tt_hmap_ent *ent =
		tt_hmap_find(&cp->futex_words, word, tgid);

	return ent ? &cp->words[ent->val] : NULL;
}

bool cp_word_passed(const struct tt_critpath *cp, __u64 word, __u32 tgid)
{
	const struct cp_word *fw = cp_word_find(cp, word, tgid);

	return fw && word_shared(fw) && fw->waits >= LOCK_SHARED_WAITS;
}

static bool word_is_lock(const struct tt_critpath *cp, __u64 word, __u32 tgid,
			 __u64 limit)
{
	const struct cp_word *fw = cp_word_find(cp, word, tgid);

	return fw && word_lock(fw, limit);
}

/*
 * Wake w of word fw, a lock by its waiters' own wakes of it or by its count,
 * is a producer's, a hand-off, when its waker never waited on the word: not
 * among its first waiters, nor among the words the waker waited on last
 * (where the word had more waiters than it keeps). A pool's queue is a lock
 * its workers pass among themselves (CPython's SimpleQueue releases it for
 * the next waiter), and the loop that feeds them only releases it. A word
 * waited on more than the count allows is a producer's only when its waker
 * does not block in futex(2) that often itself: a condition variable every
 * handler waits on for each token (llama.cpp's server_response, notified
 * for all at every step) is, and the loop that notifies it seldom waits;
 * two threads passing a turn through a word each way (a GIL of two words)
 * are not. Or the word's last waits were all its target's (w->solo:
 * whoever waited on it long before, an address malloc gave to another
 * thread's lock). waker: w's waker, NULL when untraced.
 */
static bool word_producer(const struct cp_thread *waker,
			  const struct cp_word *fw, const struct cp_wake *w,
			  __u64 limit)
{
	bool counted = fw->waits > limit;
	int i;

	if (w->solo && !counted)
		return true;
	for (i = 0; i < WORD_WAITERS; i++)
		if (fw->waiter[i] == w->waker_tid)
			return false;
	if (counted && (!waker || waker->futex_waits > limit))
		return false;
	if (!fw->more_waiters)
		return true;
	if (!waker)
		return false;
	for (i = 0; i < CP_THREAD_WORDS; i++)
		if (waker->waited_words[i] == w->arg0)
			return false;
	return true;
}

bool cp_block_on_lock(const struct tt_critpath *cp, const struct cp_thread *th,
		      const struct cp_rec *rec)
{
	const struct cp_block *b;

	if (rec->state != REC_BLOCKED || rec->info == NONE32)
		return false;
	b = &cp->blocks[rec->info];
	if (b->syscall != TT_NR_futex)
		return false;
	return cp_runtime_word(cp, b->arg0, th->tgid) ||
	       word_is_lock(cp, b->arg0, th->tgid, cp->lock_limit);
}

/*
 * w woke the word its target blocked on (b): the same address, or, from
 * another process, the same offset in a page: a shared futex (a POSIX
 * semaphore, a process-shared mutex), which each process maps at an
 * address of its own.
 */
static bool woke_its_word(const struct cp_wake *w, const struct cp_block *b,
			  __u32 waker_tgid, __u32 target_tgid)
{
	if (b->arg0 == w->arg0)
		return true;
	return waker_tgid && target_tgid && waker_tgid != target_tgid &&
	       (b->arg0 & FUTEX_PAGE_MASK) == (w->arg0 & FUTEX_PAGE_MASK);
}

static int cmp_window(const void *a, const void *b)
{
	const struct cp_window *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Judges futex words for n requests, filters hand-off candidates, merges
 * the lost windows. */
int cp_prepare(struct tt_critpath *cp, size_t nreq)
{
	__u64 limit = (__u64)LOCK_WAITS_PER_REQ * (nreq ? nreq : 1);
	struct cp_window *m;
	size_t i, j;

	if (cp->prepared && cp->prep_nreq == nreq &&
	    cp->prep_events == cp->events)
		return 0;
	cp->lock_words = 0;
	cp_mark_runtime_threads(cp);
	cp_mark_pool_workers(cp);
	for (i = 0; i < cp->nwords; i++)
		if (word_lock(&cp->words[i], limit))
			cp->lock_words++;
	for (i = 0; i < cp->nwakes; i++) {
		struct cp_wake *w = &cp->wakes[i];
		const struct cp_block *b =
			w->block != NONE32 ? &cp->blocks[w->block] : NULL;

		/* the waker, looked up once for its tgid and its own waits */
		const struct cp_thread *waker =
			cp_thread_find(cp, w->waker_tid);
		__u32 waker_tgid = waker ? waker->tgid : 0;
		const struct cp_thread *target =
			cp_thread_find(cp, w->target_tid);
		__u32 target_tgid = target ? target->tgid : 0;
		const struct cp_rtrange *rt = NULL;
		/* the waker's word, looked up once for both questions */
		const struct cp_word *fw =
			w->syscall == TT_NR_futex ?
				cp_word_find(cp, w->arg0, waker_tgid) :
				NULL;

		if (w->syscall == TT_NR_futex)
			rt = cp_runtime_word(cp, w->arg0, waker_tgid);
		if (!rt && b && b->syscall == TT_NR_futex)
			rt = cp_runtime_word(cp, b->arg0, target_tgid);
		if (w->syscall == CP_SYSCALL_SCHED ||
		    (rt && rt->kind == TT_RT_GO) ||
		    (waker && waker->runtime_own) ||
		    (target && target->runtime_own) ||
		    cp_pool_siblings(waker, target))
			w->lock = CP_LOCK_SCHED;
		else if (rt)
			w->lock = CP_LOCK_RUNTIME;
		else if (fw && word_producer(waker, fw, w, limit) &&
			 (!b || b->syscall != TT_NR_futex ||
			  woke_its_word(w, b, waker_tgid, target_tgid)))
			w->lock = CP_LOCK_NONE;
		else if ((fw && word_lock(fw, limit)) ||
			 (b && b->syscall == TT_NR_futex &&
			  word_is_lock(cp, b->arg0, target_tgid, limit)))
			w->lock = CP_LOCK_WORD;
		else
			w->lock = CP_LOCK_NONE;
	}
	free(cp->gpu_threads);
	cp->ngpu_threads = 0;
	cp->gpu_threads = malloc((cp->nthreads ? cp->nthreads : 1) *
				 sizeof(*cp->gpu_threads));
	if (!cp->gpu_threads)
		return -ENOMEM;
	for (i = 0; i < cp->nthreads; i++) {
		struct cp_thread *th = cp->threads[i];

		if (th->nsync)
			cp->gpu_threads[cp->ngpu_threads++] = i;
		free(th->cand);
		th->cand = NULL;
		th->ncand = 0;
		if (!th->nwout)
			continue;
		th->cand = malloc(th->nwout * sizeof(*th->cand));
		if (!th->cand)
			return -ENOMEM;
		for (j = 0; j < th->nwout; j++)
			if (!cp->wakes[th->wout[j]].lock &&
			    !cp_room_wake(cp, &cp->wakes[th->wout[j]]))
				th->cand[th->ncand++] = th->wout[j];
	}
	m = malloc((cp->nlost ? cp->nlost : 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	if (cp->nlost)
		memcpy(m, cp->lost, cp->nlost * sizeof(*m));
	qsort(m, cp->nlost, sizeof(*m), cmp_window);
	for (i = 0, j = 0; i < cp->nlost; i++) {
		if (j && m[i].start <= m[j - 1].end) {
			if (m[i].end > m[j - 1].end)
				m[j - 1].end = m[i].end;
		} else {
			m[j++] = m[i];
		}
	}
	free(cp->lost_merged);
	cp->lost_merged = m;
	cp->nlost_merged = j;
	cp->prep_nreq = nreq;
	cp->lock_limit = limit;
	cp->prep_events = cp->events;
	cp->prepared = true;
	return 0;
}

/* Index of the last merged lost window starting before t, or -1. */
long cp_lost_before(const struct tt_critpath *cp, __u64 t)
{
	return (long)cp_starts_before(cp->lost_merged, cp->nlost_merged,
				      sizeof(*cp->lost_merged), t) -
	       1;
}
