/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Goroutines (docs/design.md §4.10): an entry-only uprobe on the Go
 * runtime's runtime.casgstatus(gp *g, oldval, newval uint32), the one
 * function every goroutine state change goes through. Never a uretprobe:
 * Go moves stacks, which breaks return probes. Included once, by
 * ttftrace.bpf.c.
 */

/* The probe's hits, per CPU, traced or not: every hit costs a trap, which
 * the recorder weighs against its budget (docs/design.md §4.10). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} go_hits SEC(".maps");

SEC("uprobe")
int tt_go_status(struct pt_regs *ctx)
{
	__u32 from = (__u32)TT_GO_ARG2(ctx), to = (__u32)TT_GO_ARG3(ctx);
	struct tt_event_go {
		struct tt_hdr h;
		struct tt_go go;
	} *e;
	__u32 zero = 0;
	__u64 *hits = bpf_map_lookup_elem(&go_hits, &zero);

	if (hits)
		*hits += 1;
	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	/* a syscall or a stack copy keeps the goroutine on its thread */
	if ((from == TT_GO_RUNNING && to == TT_GO_SYSCALL) ||
	    (from == TT_GO_SYSCALL && to == TT_GO_RUNNING) ||
	    (from == TT_GO_COPYSTACK && to == TT_GO_RUNNING))
		return 0;
	e = reserve(sizeof(*e), TT_EV_GO);
	if (!e)
		return 0;
	e->go.g = TT_GO_ARG1(ctx);
	e->go.from = from;
	e->go.to = to;
	submit(e);
	return 0;
}
