/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The architecture in one place (docs/design.md §8): the syscall numbers
 * that the BPF programs and the analysis compare against, the pt_regs
 * field that holds a task's syscall number, and the architecture a
 * recording carries. Included by the BPF programs (after vmlinux.h, with
 * __TARGET_ARCH_<arch> from the Makefile) and by user space (after
 * <linux/types.h>); no includes of its own.
 *
 * Supported: x86-64. Any other architecture stops the build here: its
 * syscall numbers differ (arm64 uses the generic table: read is 63, futex
 * 98), and a recording's raw numbers are only meaningful on the
 * architecture they were taken on.
 */
#ifndef __TT_ARCH_H
#define __TT_ARCH_H

/* tt_file_meta.arch: the architecture whose syscall numbers a recording
 * holds (0: a recording from before the field, taken on x86-64). */
#define TT_ARCH_UNKNOWN 0
#define TT_ARCH_X86_64 1
#define TT_ARCH_ARM64 2 /* named, so a report can say what it cannot read */
#define TT_ARCH_NAMES { "unknown", "x86-64", "arm64" }

#if defined(__TARGET_ARCH_x86) || (!defined(__TARGET_ARCH_arm64) && \
				   !defined(__bpf__) && defined(__x86_64__))

#define TT_ARCH TT_ARCH_X86_64
/* Debian's multiarch library directory (where libcuda.so.1 lives) */
#define TT_ARCH_LIBDIR "/usr/lib/x86_64-linux-gnu"
/* struct pt_regs' field holding the syscall number at syscall entry */
#define TT_REGS_SYSCALL_NR(regs) ((regs)->orig_ax)
/* Go's internal register ABI (Go 1.17+): the first integer arguments */
#define TT_GO_ARG1(regs) ((regs)->ax)
#define TT_GO_ARG2(regs) ((regs)->bx)
#define TT_GO_ARG3(regs) ((regs)->cx)
/* ... and the running goroutine (g), in Go code and at its syscalls */
#define TT_GO_G(regs) ((regs)->r14)
/* integer arguments passed in registers (rdi, rsi, rdx, rcx, r8, r9): a
 * marker's key=argN reads one of them at the function's entry */
#define TT_ARCH_REG_ARGS 6
/* the sixth (libbpf's PT_REGS_PARMn stop at five) */
#define TT_REGS_PARM6(regs) ((regs)->r9)

/* open(2)'s O_DIRECT, as a file's f_flags hold it */
#define TT_O_DIRECT 040000

/* x86-64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) */
#define TT_NR_read 0
#define TT_NR_write 1
#define TT_NR_poll 7
#define TT_NR_mmap 9
#define TT_NR_mprotect 10
#define TT_NR_munmap 11
#define TT_NR_brk 12
#define TT_NR_ioctl 16
#define TT_NR_pread64 17
#define TT_NR_pwrite64 18
#define TT_NR_readv 19
#define TT_NR_writev 20
#define TT_NR_select 23
#define TT_NR_sched_yield 24
#define TT_NR_mremap 25
#define TT_NR_madvise 28
#define TT_NR_nanosleep 35
#define TT_NR_connect 42
#define TT_NR_accept 43
#define TT_NR_sendto 44
#define TT_NR_recvfrom 45
#define TT_NR_sendmsg 46
#define TT_NR_recvmsg 47
#define TT_NR_wait4 61
#define TT_NR_fsync 74
#define TT_NR_fdatasync 75
#define TT_NR_futex 202
#define TT_NR_clock_nanosleep 230
#define TT_NR_epoll_wait 232
#define TT_NR_pselect6 270
#define TT_NR_ppoll 271
#define TT_NR_epoll_pwait 281
#define TT_NR_accept4 288
#define TT_NR_preadv 295
#define TT_NR_pwritev 296
#define TT_NR_recvmmsg 299
#define TT_NR_sendmmsg 307
#define TT_NR_preadv2 327
#define TT_NR_pwritev2 328
#define TT_NR_io_uring_enter 426
#define TT_NR_epoll_pwait2 441
#define TT_NR_futex_waitv 449

#else
#error "ttftrace supports x86-64 only (docs/design.md §8): add this architecture's syscall numbers and pt_regs field to bpf/tt_arch.h"
#endif

/* The syscalls the drill-down names, as a table initializer:
 * { nr, "name" }, ... */
#define TT_SYSCALL_NAME(n) { TT_NR_##n, #n }
#define TT_SYSCALL_NAMES                                                      \
	TT_SYSCALL_NAME(read), TT_SYSCALL_NAME(write), TT_SYSCALL_NAME(poll), \
	TT_SYSCALL_NAME(ioctl), TT_SYSCALL_NAME(pread64),                     \
	TT_SYSCALL_NAME(pwrite64), TT_SYSCALL_NAME(readv),                    \
	TT_SYSCALL_NAME(writev), TT_SYSCALL_NAME(select),                     \
	TT_SYSCALL_NAME(sched_yield), TT_SYSCALL_NAME(nanosleep),             \
	TT_SYSCALL_NAME(connect), TT_SYSCALL_NAME(accept),                    \
	TT_SYSCALL_NAME(sendto), TT_SYSCALL_NAME(recvfrom),                   \
	TT_SYSCALL_NAME(sendmsg), TT_SYSCALL_NAME(recvmsg),                   \
	TT_SYSCALL_NAME(wait4), TT_SYSCALL_NAME(fsync),                       \
	TT_SYSCALL_NAME(fdatasync), TT_SYSCALL_NAME(futex),                   \
	TT_SYSCALL_NAME(clock_nanosleep), TT_SYSCALL_NAME(epoll_wait),        \
	TT_SYSCALL_NAME(pselect6), TT_SYSCALL_NAME(ppoll),                    \
	TT_SYSCALL_NAME(epoll_pwait), TT_SYSCALL_NAME(accept4),               \
	TT_SYSCALL_NAME(preadv), TT_SYSCALL_NAME(pwritev),                    \
	TT_SYSCALL_NAME(recvmmsg), TT_SYSCALL_NAME(sendmmsg),                 \
	TT_SYSCALL_NAME(preadv2), TT_SYSCALL_NAME(pwritev2),                  \
	TT_SYSCALL_NAME(io_uring_enter), TT_SYSCALL_NAME(epoll_pwait2),       \
	TT_SYSCALL_NAME(futex_waitv)

#endif /* __TT_ARCH_H */
