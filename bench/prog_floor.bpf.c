// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Calibration for bench/prog_cost.sh: what the building blocks of ttftrace's
 * programs cost on this machine, each alone on sys_enter_getppid, measured
 * the same way (kernel.bpf_stats_enabled=1), so that per-program figures can
 * be read against the floor of the measurement itself.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} rb SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int empty(void *ctx)
{
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int get_pid_tgid(void *ctx)
{
	return bpf_get_current_pid_tgid() == 1;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int ktime_get_ns(void *ctx)
{
	return bpf_ktime_get_ns() == 1;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int hash_lookup(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int probe_read_8(void *ctx)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (void *)bpf_get_current_task());
	return v == 1;
}

SEC("tracepoint/syscalls/sys_enter_getppid")
int ringbuf_64(void *ctx)
{
	__u64 *p = bpf_ringbuf_reserve(&rb, 64, 0);

	if (!p)
		return 0;
	p[0] = 1;
	/* discarded: no reader here, and the same work as a submit */
	bpf_ringbuf_discard(p, BPF_RB_NO_WAKEUP);
	return 0;
}
