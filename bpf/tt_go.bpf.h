/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Goroutines (docs/design.md §4.10): entry-only uprobes on the Go
 * scheduler's functions, each one goroutine state change (execute: starts
 * on this M; ready: readied; park_m: parks; goschedImpl: yields or is
 * preempted; goexit0: exits; exitsyscall0: leaves its M after a syscall),
 * the change in the attach cookie (TT_GO_COOKIE); or, where one of them is
 * missing, on runtime.casgstatus(gp, oldval, newval), which every change
 * goes through but syscalls too. Never a uretprobe: Go moves stacks, which
 * breaks return probes. Included once, by ttftrace.bpf.c.
 */

/* The probes' hits, per CPU, traced or not: every hit costs a trap, which
 * the recorder weighs against its budget (docs/design.md §4.10). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} go_hits SEC(".maps");

static __always_inline bool go_hit_traced(void)
{
	__u32 zero = 0;
	__u64 *hits = bpf_map_lookup_elem(&go_hits, &zero);

	if (hits)
		*hits += 1;
	return tgid_traced(bpf_get_current_pid_tgid() >> 32);
}

static __always_inline void go_emit(__u64 g, __u32 from, __u32 to)
{
	struct tt_event_go {
		struct tt_hdr h;
		struct tt_go go;
	} *e = reserve(sizeof(*e), TT_EV_GO);

	if (!e)
		return;
	e->go.g = g;
	e->go.from = from;
	e->go.to = to;
	submit(e);
}

/* A scheduler function whose first argument is the goroutine it changes. */
SEC("uprobe")
int tt_go_sched(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);

	if (go_hit_traced())
		go_emit(TT_GO_ARG1(ctx), TT_GO_COOKIE_FROM(cookie),
			TT_GO_COOKIE_TO(cookie));
	return 0;
}

/* runtime.chansend(c, ...) or runtime.chanrecv(c, ...), the op in the
 * cookie: with the buffered count read at the entry (docs/design.md §4.10) */
SEC("uprobe")
int tt_go_chan(struct pt_regs *ctx)
{
	__u32 op = (__u32)bpf_get_attach_cookie(ctx);
	__u64 ch = TT_GO_ARG1(ctx), qcount = 0;
	struct tt_event_go_chan {
		struct tt_hdr h;
		struct tt_go_chan c;
	} *e;

	if (!go_hit_traced() || !ch)
		return 0;
	/* hchan.qcount is the struct's first word in every Go */
	if (bpf_probe_read_user(&qcount, sizeof(qcount), (void *)ch))
		return 0;
	/* a receive from an empty buffer blocks: the sender's ready says it */
	if (op == TT_GO_CHAN_RECV && !qcount)
		return 0;
	e = reserve(sizeof(*e), TT_EV_GO_CHAN);
	if (!e)
		return 0;
	e->c.ch = ch;
	e->c.op = op;
	e->c.qcount = qcount > 0xffffffffULL ? 0xffffffffU : (__u32)qcount;
	submit(e);
	return 0;
}

SEC("uprobe")
int tt_go_status(struct pt_regs *ctx)
{
	__u32 from = (__u32)TT_GO_ARG2(ctx), to = (__u32)TT_GO_ARG3(ctx);

	if (!go_hit_traced())
		return 0;
	/* a syscall or a stack copy keeps the goroutine on its thread */
	if ((from == TT_GO_RUNNING && to == TT_GO_SYSCALL) ||
	    (from == TT_GO_SYSCALL && to == TT_GO_RUNNING) ||
	    (from == TT_GO_COPYSTACK && to == TT_GO_RUNNING))
		return 0;
	go_emit(TT_GO_ARG1(ctx), from, to);
	return 0;
}
