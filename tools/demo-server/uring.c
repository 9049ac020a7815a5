// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * --kv-uring: the KV reads through an io_uring of the engine's own, one
 * read submitted and waited for per io_uring_enter(2), as an engine that
 * loads its blocks with io_uring does (no liburing: the raw syscalls and
 * the rings mapped by hand, as io_uring(7) shows).
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "demo-server.h"

static int uring_setup(unsigned int entries, struct io_uring_params *p)
{
	return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int uring_enter(int fd, unsigned int submit, unsigned int wait)
{
	return (int)syscall(__NR_io_uring_enter, fd, submit, wait,
			    IORING_ENTER_GETEVENTS, NULL, 0);
}

int kv_ring_open(struct kv_ring *r)
{
	struct io_uring_params p;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	r->fd = uring_setup(4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(__u32);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sq = mmap(NULL, r->sq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = mmap(NULL, r->sqes_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED ||
	    r->sqes == MAP_FAILED) {
		err = -errno;
		kv_ring_close(r);
		return err;
	}
	r->sq_tail = (unsigned int *)((char *)r->sq + p.sq_off.tail);
	r->sq_mask = *(unsigned int *)((char *)r->sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)((char *)r->sq + p.sq_off.array);
	r->cq_head = (unsigned int *)((char *)r->cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)((char *)r->cq + p.cq_off.tail);
	r->cq_mask = *(unsigned int *)((char *)r->cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->cq + p.cq_off.cqes);
	return 0;
}

void kv_ring_close(struct kv_ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq && r->cq != MAP_FAILED)
		munmap(r->cq, r->cq_len);
	if (r->sq && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

ssize_t kv_ring_pread(struct kv_ring *r, int fd, void *buf, size_t len,
		      uint64_t off)
{
	unsigned int tail = *r->sq_tail, head;
	struct io_uring_sqe *sqe = &r->sqes[tail & r->sq_mask];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = (unsigned int)len;
	sqe->off = off;
	r->sq_array[tail & r->sq_mask] = tail & r->sq_mask;
	atomic_store_explicit((_Atomic unsigned int *)r->sq_tail, tail + 1,
			      memory_order_release);
	while (uring_enter(r->fd, 1, 1) < 0)
		if (errno != EINTR)
			goto broken;
	head = *r->cq_head;
	while (head == atomic_load_explicit((_Atomic unsigned int *)r->cq_tail,
					    memory_order_acquire))
		if (uring_enter(r->fd, 0, 1) < 0 && errno != EINTR)
			goto broken;
	res = r->cqes[head & r->cq_mask].res;
	atomic_store_explicit((_Atomic unsigned int *)r->cq_head, head + 1,
			      memory_order_release);
	if (res < 0) {
		errno = -res;
		return -1;
	}
	return res;
broken:
	/* an entry or a completion may be left in the ring: no later read
	 * may take its result, the ring is closed (reads go to pread) */
	res = errno;
	kv_ring_close(r);
	errno = res;
	return -1;
}
