// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* One tiny program per attach type, loaded one at a time by 'ttftrace check'
 * to learn what this kernel allows. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u64 hits;

SEC("tracepoint/syscalls/sys_enter_getppid")
int probe_tracepoint(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(probe_tp_btf, bool preempt, struct task_struct *prev)
{
	return 0;
}

SEC("raw_tp/sched_switch")
int probe_raw_tp(void *ctx)
{
	return 0;
}

SEC("kprobe/vfs_read")
int probe_kprobe(void *ctx)
{
	return 0;
}

SEC("fentry/vfs_read")
int BPF_PROG(probe_fentry)
{
	return 0;
}

SEC("uprobe")
int probe_uprobe(void *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}

/* bpf_task_pt_regs: what ttftrace reads a blocked thread's syscall from */
SEC("tp_btf/sched_switch")
int BPF_PROG(probe_task_pt_regs, bool preempt, struct task_struct *prev)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);

	return regs ? 0 : 1;
}
