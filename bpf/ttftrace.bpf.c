// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ttftrace BPF side: socket receives and sends, connection life and process
 * life of the traced processes, filtered in the kernel by a map of tgids and a
 * map of their listening ports. One ring buffer carries every record.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/usdt.bpf.h>
#include "ttftrace.h"
#include "tt_arch.h"

#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define MSG_PEEK 2
#define ANON_INODE_FS_MAGIC 0x09041934

/* TCP states, as include/net/tcp_states.h numbers them */
#define TCP_ESTABLISHED 1
#define TCP_CLOSE 7
#define TCP_LISTEN 10


char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by user space between open and load. */
const volatile __u32 send_capture_bytes = TT_SEND_CAPTURE;
/* Wake the collector only once this much is waiting: a wakeup per record
 * would make the collector switch in and out with the traced threads,
 * and those switches are events too. The collector polls on a timer. */
const volatile __u64 wakeup_bytes = 1 << 20;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by user space before load */
} events SEC(".maps");

/* Records the ring buffer refused, per CPU: always reported. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Traced tgids, one byte each (PID_MAX_LIMIT of them): an array lookup is
 * inlined by the verifier where a hash lookup is a helper call, and the
 * hottest programs (sched_switch, the sends) filter on it. A byte per tgid,
 * not a bit, so that BPF and user space (mmap) set and clear them with plain
 * stores and no read-modify-write races. */
#define TT_TGID_WORDS (TT_PID_MAX_LIMIT / 8)
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TT_TGID_WORDS);
	__type(key, __u32); /* tgid / 8 */
	__type(value, struct tt_tgid_word);
} traced_tgids SEC(".maps");

/* Listening TCP ports of traced processes: their accepted sockets are the
 * server-side connections, even before accept() returns. An array by port
 * (non-zero: traced), inlined as traced_tgids is: server_sock() runs for
 * every transmit and data_ready of the machine. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 65536);
	__type(key, __u32); /* local port, host order */
	__type(value, __u64);
} traced_ports SEC(".maps");

/* Local ports of traced processes' client TCP sockets, by port: the tgid
 * that sent on it (0: none). A server connection whose peer has one of
 * these ports carries hops (docs/design.md §4.11). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32); /* local port, host order */
	__type(value, __u32);
} client_ports SEC(".maps");

/* Connections already announced with TT_EV_CONN_OPEN: a mark kept with
 * the socket, which every send, receive and data_ready looks at (a hash
 * lookup by address was 100-180 ns of each send, bench/prog_cost.sh). It
 * goes with the socket: an address reused is a new connection. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} conns SEC(".maps");

static __always_inline bool conn_announced(const struct sock *sk)
{
	return bpf_sk_storage_get(&conns, (struct sock *)sk, 0, 0);
}

/* Connections that ended (TCP_CLOSE, their port released): a send that a
 * reset interrupted after its bytes went out is still recorded. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64); /* struct sock * */
	__type(value, __u8);
} closed_conns SEC(".maps");

/* Syscall entry time of the latest write/send syscall on this CPU, and its
 * thread: an inline per-CPU access at entry and at the send, where task
 * storage cost two helper calls per send. A thread leaves a CPU only
 * through sched_switch, which moves its entry to send_enter_moved: at the
 * send, an entry of another thread (or none) here means that one. */
struct send_enter {
	__u32 tid; /* 0: none (tid 0 is the idle task, never traced) */
	__u32 pad;
	__u64 ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct send_enter);
} send_enter SEC(".maps");

/* Entries of threads switched out after a write/send syscall's entry (a
 * blocked send, or a preemption), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, __u64);
} send_enter_moved SEC(".maps");

static __always_inline struct send_enter *this_send_enter(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&send_enter, &zero);
}

/* A thread exits (on its CPU): no entry of its survives for a thread
 * that reuses its tid. */
static __always_inline void forget_send_enter(__u32 tid)
{
	struct send_enter *se = this_send_enter();

	if (se && se->tid == tid)
		se->tid = 0;
	bpf_map_delete_elem(&send_enter_moved, &tid);
}

static __always_inline __u8 *tgid_slot(__u32 tgid)
{
	__u32 idx = tgid / 8;
	struct tt_tgid_word *w = bpf_map_lookup_elem(&traced_tgids, &idx);

	return w ? &w->b[tgid & 7] : NULL;
}

static __always_inline bool tgid_traced(__u32 tgid)
{
	__u8 *b = tgid_slot(tgid);
	bool traced = b && *b;

	/* keeps clang from OR-ing two lookups' pointers, which the verifier
	 * refuses */
	asm volatile("" : "+r"(traced));
	return traced;
}

/* Bumped after every change BPF makes to traced_tgids (a fork of a new
 * process, the last thread's exit): user space scans the 4 MiB map again
 * only when it moved, not at every look (user/record/collector.c). */
__u64 tgids_gen = 0;

static __always_inline void tgid_set(__u32 tgid, __u8 v)
{
	__u8 *b = tgid_slot(tgid);

	if (!b)
		return;
	*b = v;
	__sync_fetch_and_add(&tgids_gen, 1);
}

static __always_inline bool port_traced(__u16 port)
{
	__u32 key = port;
	__u64 *v = bpf_map_lookup_elem(&traced_ports, &key);

	return v && *v;
}

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&lost, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* The last forced wakeup of the collector from this CPU (its record's
 * time). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_wakeup SEC(".maps");

/* A CPU wakes the collector at most this often while the buffer stays
 * above wakeup_bytes: a wakeup is an irq_work, a self-IPI (a VM exit on
 * a guest), and until the collector gets a CPU every record saw the
 * buffer full enough and sent one more (docs/design.md §2.4). */
#define WAKEUP_GAP_NS 1000000

static __always_inline void submit(void *rec)
{
	__u64 ts = ((struct tt_hdr *)rec)->ts, flags = BPF_RB_NO_WAKEUP;
	__u32 zero = 0;
	__u64 *last;

	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		last = bpf_map_lookup_elem(&last_wakeup, &zero);
		if (last && ts - *last >= WAKEUP_GAP_NS) {
			*last = ts;
			flags = BPF_RB_FORCE_WAKEUP;
		}
	}
	bpf_ringbuf_submit(rec, flags);
}

/* A record stamped now, as thread id (tgid << 32 | tid): a program that
 * already has the ids passes them, a helper call less per record. */
static __always_inline void *reserve_as(__u32 size, __u16 type, __u64 id)
{
	struct tt_hdr *h = bpf_ringbuf_reserve(&events, size, 0);

	if (!h) {
		count_lost();
		return NULL;
	}
	h->ts = bpf_ktime_get_ns();
	h->tgid = id >> 32;
	h->tid = (__u32)id;
	h->type = type;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = 0;
	return h;
}

static __always_inline void *reserve(__u32 size, __u16 type)
{
	return reserve_as(size, type, bpf_get_current_pid_tgid());
}

/* A TCP socket whose local port is a traced listener's, and not the
 * listener itself: a server-side connection of a traced process. */
static __always_inline bool server_sock(const struct sock *sk)
{
	__u16 port;

	if (!sk || sk->sk_protocol != IPPROTO_TCP)
		return false;
	port = sk->__sk_common.skc_num;
	if (!port_traced(port))
		return false;
	return sk->__sk_common.skc_state != TCP_LISTEN;
}

/* Announces a connection the first time any hook sees it, so that sockets
 * opened before tracing started are described too. */
static __always_inline void ensure_conn(const struct sock *sk)
{
	__u64 key = (__u64)sk;
	struct tt_event_conn {
		struct tt_hdr h;
		struct tt_conn c;
	} *e;
	__u8 *seen;

	if (conn_announced(sk))
		return;
	/* a reset socket still gets a last recv: never announce it again */
	if (BPF_CORE_READ(sk, __sk_common.skc_state) == TCP_CLOSE)
		return;
	seen = bpf_sk_storage_get(&conns, (struct sock *)sk, 0,
				  BPF_SK_STORAGE_GET_F_CREATE);
	if (!seen)
		return; /* not marked seen: the next hook retries */
	e = reserve(sizeof(*e), TT_EV_CONN_OPEN);
	if (!e) {
		bpf_sk_storage_delete(&conns, (struct sock *)sk);
		return;
	}
	*seen = 1;
	bpf_map_delete_elem(&closed_conns, &key); /* the address reused */
	e->c.sk = key;
	e->c.family = BPF_CORE_READ(sk, __sk_common.skc_family);
	e->c.lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->c.rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->c.pad = 0;
	__builtin_memset(e->c.laddr, 0, sizeof(e->c.laddr));
	__builtin_memset(e->c.raddr, 0, sizeof(e->c.raddr));
	if (e->c.family == AF_INET6) {
		BPF_CORE_READ_INTO(&e->c.laddr, sk,
				   __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&e->c.raddr, sk,
				   __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		BPF_CORE_READ_INTO((__u32 *)e->c.laddr, sk,
				   __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)e->c.raddr, sk,
				   __sk_common.skc_daddr);
	}
	submit(e);
}

static __always_inline void emit_sock_as(__u16 type, const struct sock *sk,
					 __s64 len, __u32 flags, __u64 id)
{
	struct tt_event_sock {
		struct tt_hdr h;
		struct tt_sock s;
	} *e = reserve_as(sizeof(*e), type, id);

	if (!e)
		return;
	e->h.flags = flags;
	e->s.sk = (__u64)sk;
	e->s.len = len;
	submit(e);
}

static __always_inline void emit_sock(__u16 type, const struct sock *sk,
				      __s64 len, __u32 flags)
{
	emit_sock_as(type, sk, len, flags, bpf_get_current_pid_tgid());
}

/* ---- interrupt context ---- */

/* Interrupt nesting per CPU, so that a wakeup from interrupt context is not
 * blamed on whichever thread the interrupt happened to land on. */
struct irq_depth {
	__u32 hardirq;
	__u32 softirq;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_depth);
} irq_depth SEC(".maps");

/* Block requests issued by traced threads, until they complete. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* struct request * */
	__type(value, __u8);
} traced_rqs SEC(".maps");

static __always_inline struct irq_depth *this_irq_depth(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_depth, &zero);
}

static __always_inline void irq_enter_exit(bool soft, bool enter)
{
	struct irq_depth *d = this_irq_depth();
	__u32 *n;

	if (!d)
		return;
	n = soft ? &d->softirq : &d->hardirq;
	if (enter)
		(*n)++;
	else if (*n) /* attached mid-interrupt: never go below zero */
		(*n)--;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(tt_irq_entry)
{
	irq_enter_exit(false, true);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(tt_irq_exit)
{
	irq_enter_exit(false, false);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(tt_softirq_entry)
{
	irq_enter_exit(true, true);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(tt_softirq_exit)
{
	irq_enter_exit(true, false);
	return 0;
}

/* Timer expiry (nanosleep, futex timeouts) wakes threads from the timer
 * interrupt, which has no irq_handler_entry of its own. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(tt_hrtimer_entry)
{
	irq_enter_exit(false, true);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(tt_hrtimer_exit)
{
	irq_enter_exit(false, false);
	return 0;
}

static __always_inline __u32 irq_flags(void)
{
	struct irq_depth *d = this_irq_depth();
	__u32 flags = 0;

	if (d && d->hardirq)
		flags |= TT_F_HARDIRQ;
	if (d && d->softirq)
		flags |= TT_F_SOFTIRQ;
	return flags;
}

/* ---- processes ---- */

/* An OpenSSL SSL_write in progress on a thread: the plaintext it was
 * given, for the sends it makes (docs/design.md §3.1, "TLS") */
struct tls_write {
	__u64 buf;
	__u32 num;
	__u32 sends; /* sends made inside it so far */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct tls_write);
} tls_writes SEC(".maps");

/* A thread's TT_EV_TLS_PLAIN records: the next one's seq, and the first
 * no send has carried yet */
struct tls_seq {
	__u32 next;
	__u32 first;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct tls_seq);
} tls_seqs SEC(".maps");

/* The same of a goroutine's crypto/tls Writes, by go_tls_key() (it may
 * send on another thread than it wrote on), and its latest one's */
struct go_tls_seq {
	struct tls_seq s;
	__u32 len;
	__u64 buf;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct go_tls_seq);
} go_tls_seqs SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tt_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct tt_event_fork {
		struct tt_hdr h;
		struct tt_fork f;
	} *e;

	if (!tgid_traced(ptgid))
		return 0;
	if (ctgid != ptgid)
		tgid_set(ctgid, 1);
	e = reserve(sizeof(*e), TT_EV_FORK);
	if (!e)
		return 0;
	e->f.child_tgid = ctgid;
	e->f.child_tid = BPF_CORE_READ(child, pid);
	BPF_CORE_READ_STR_INTO(&e->f.comm, child, comm);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(tt_exit, struct task_struct *p, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), tid;
	struct tt_hdr *e;

	if (!tgid_traced(tgid))
		return 0;
	e = reserve(sizeof(*e), TT_EV_EXIT);
	if (e)
		submit(e);
	tid = BPF_CORE_READ(p, pid);
	forget_send_enter(tid);
	bpf_map_delete_elem(&tls_writes, &tid);
	bpf_map_delete_elem(&tls_seqs, &tid);
	/* the last thread of the process: forget the tgid (PIDs are reused) */
	if (group_dead)
		tgid_set(tgid, 0);
	return 0;
}

static __always_inline void emit_comm(struct task_struct *task)
{
	struct tt_event_comm {
		struct tt_hdr h;
		struct tt_comm c;
	} *e = reserve(sizeof(*e), TT_EV_COMM);

	if (!e)
		return;
	e->h.tgid = BPF_CORE_READ(task, tgid);
	e->h.tid = BPF_CORE_READ(task, pid);
	BPF_CORE_READ_STR_INTO(&e->c.comm, task, comm);
	/* the recorder looks at a new program at once (its runtime's probes
	 * must be on before its first request); execs are rare */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(tt_exec, struct task_struct *p)
{
	if (tgid_traced(BPF_CORE_READ(p, tgid)))
		emit_comm(p);
	return 0;
}

/* Thread names set after creation (prctl PR_SET_NAME, pthread_setname_np)
 * are what a person recognises; the rename tracepoint fires before the copy,
 * so the collector re-reads names from /proc at the end as well. */
SEC("tp_btf/task_rename")
int BPF_PROG(tt_rename, struct task_struct *task, const char *comm)
{
	struct tt_event_comm {
		struct tt_hdr h;
		struct tt_comm c;
	} *e;

	if (!tgid_traced(BPF_CORE_READ(task, tgid)))
		return 0;
	e = reserve(sizeof(*e), TT_EV_COMM);
	if (!e)
		return 0;
	e->h.tgid = BPF_CORE_READ(task, tgid);
	e->h.tid = BPF_CORE_READ(task, pid);
	bpf_probe_read_kernel_str(&e->c.comm, sizeof(e->c.comm), comm);
	submit(e);
	return 0;
}

/* ---- connections ---- */

static __always_inline void forget_client_port(__u32 port)
{
	__u32 *owner = bpf_map_lookup_elem(&client_ports, &port);

	if (owner && *owner)
		*owner = 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(tt_sock_state, const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk, yes = 1;
	__u32 port;
	__u8 one = 1;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return 0;
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (newstate == TCP_LISTEN) {
		if (tgid_traced(bpf_get_current_pid_tgid() >> 32))
			bpf_map_update_elem(&traced_ports, &port, &yes,
					    BPF_ANY);
		return 0;
	}
	/* a client socket leaving ESTABLISHED (its port still bound): the
	 * port may go to an untraced process next */
	if (oldstate == TCP_ESTABLISHED && !port_traced(port))
		forget_client_port(port);
	/* by TCP_CLOSE the port is released (inet_num is 0): go by the
	 * socket's address alone */
	if (conn_announced(sk)) {
		/* the peer's FIN (to CLOSE_WAIT) is only a half-close: the
		 * server's own close or a reset after it ends the connection */
		if (oldstate == TCP_ESTABLISHED ||
		    oldstate == TT_TCP_CLOSE_WAIT)
			emit_sock(TT_EV_CONN_CLOSE, sk, newstate, 0);
		if (newstate == TCP_CLOSE) {
			bpf_sk_storage_delete(&conns, (struct sock *)sk);
			bpf_map_update_elem(&closed_conns, &key, &one, BPF_ANY);
		}
		return 0;
	}
	if (newstate == TCP_ESTABLISHED && oldstate != TCP_LISTEN &&
	    port_traced(port))
		ensure_conn(sk);
	return 0;
}

/* ---- data hand-offs between threads: eventfds, unix sockets, pipes ---- */

/* inode modes: the file types the hooks tell apart */
#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#define S_IFIFO 0010000

/* WAKING, WAKEUP_NEW, DATA_WAKE and DATA_READ records */
struct tt_event_wake {
	struct tt_hdr h;
	struct tt_wake w;
};

/* The syscall current is in and its first argument, for a wake it makes:
 * FUTEX_WAKE's word, the fd written. */
static __always_inline void waker_regs(struct tt_wake *w,
				       struct task_struct *cur)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);

	w->waker_syscall = TT_REGS_SYSCALL_NR(regs);
	w->waker_arg0 = PT_REGS_PARM1_SYSCALL(regs);
}

/* The thread that last read an eventfd (by its file) or a unix socket (by
 * its sock), traced threads only: whom a write to it hands data to. */
struct ipc_reader {
	__u32 tid;
	__u32 tgid;
	/* a data wake since its last read, or a pipe written behind unread
	 * data (tt_ipc_kind) */
	__u32 pending;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ipc_reader);
} ipc_readers SEC(".maps");

static __always_inline struct file *fd_file(struct task_struct *task,
					    __u64 fd);

/* Current, a traced thread, reads obj: its reader from now on. A read of
 * what a data wake announced is recorded: the analysis follows that wake
 * only to a reader that read after it; so is one of a pipe written behind
 * unread data: where a batcher took its input (docs/design.md §4.4). */
static __always_inline void ipc_reader_note(__u64 obj, __u64 id)
{
	struct ipc_reader *r = bpf_map_lookup_elem(&ipc_readers, &obj);
	struct ipc_reader nr = { .tid = (__u32)id, .tgid = id >> 32 };
	struct tt_event_wake *e;

	if (!r || r->tid != nr.tid) {
		bpf_map_update_elem(&ipc_readers, &obj, &nr, BPF_ANY);
		return;
	}
	if (!r->pending)
		return;
	e = reserve_as(sizeof(*e), TT_EV_DATA_READ, id);
	if (!e)
		return;
	e->w.target_tid = nr.tid;
	e->w.target_tgid = nr.tgid;
	e->w.target_cpu = r->pending;
	e->w.waker_syscall = -1;
	e->w.waker_arg0 = 0;
	r->pending = 0;
	submit(e);
}

/*
 * Current (id), a traced thread, writes to obj, kind tt_ipc_kind: a
 * TT_EV_DATA_WAKE of its last reader, another traced thread. The kernel's
 * wakeup shows only when that reader sleeps on obj; a preempted or busy
 * reader gets none, and the data hand-off would be lost (docs/design.md
 * §4.4).
 */
static __always_inline void ipc_written(__u64 obj, __u32 kind, __u64 id)
{
	struct ipc_reader *r = bpf_map_lookup_elem(&ipc_readers, &obj);
	struct tt_event_wake *e;

	if (!r || r->tid == (__u32)id)
		return;
	e = reserve_as(sizeof(*e), TT_EV_DATA_WAKE, id);
	if (!e)
		return;
	e->w.target_tid = r->tid;
	e->w.target_tgid = r->tgid;
	e->w.target_cpu = kind;
	waker_regs(&e->w, bpf_get_current_task_btf());
	r->pending = kind;
	submit(e);
}

/* Current (id) writes to pipe obj behind data its reader has yet to take:
 * no hand-off of this write, but the reader's next read is recorded. */
static __always_inline void ipc_written_behind(__u64 obj, __u64 id)
{
	struct ipc_reader *r = bpf_map_lookup_elem(&ipc_readers, &obj);

	if (r && r->tid != (__u32)id && !r->pending)
		r->pending = TT_IPC_PIPE_BEHIND;
}

/* A pipe's bytes written and read by traced threads (struct tt_pipe_io),
 * by its inode: created by its first traced read; its reads are recorded
 * once a traced write came (written is not 0). */
struct pipe_pos {
	__u64 written;
	__u64 read;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct pipe_pos);
} pipe_pos SEC(".maps");

static __always_inline void pipe_io_emit(const struct tt_pipe_io *io)
{
	struct {
		struct tt_hdr h;
		struct tt_pipe_io p;
	} *e = reserve(sizeof(*e), TT_EV_PIPE_IO);

	if (e) {
		e->p = *io;
		submit(e);
	}
}

/* Current, a traced thread, writes len bytes to pipe obj, empty or not: its
 * bytes' place in the pipe's stream, when a traced thread reads it. */
static __always_inline void pipe_write_count(__u64 obj, bool empty, __u64 len)
{
	struct pipe_pos *pp = bpf_map_lookup_elem(&pipe_pos, &obj);
	struct tt_pipe_io io = { .pipe = obj, .len = len, .op = TT_PIPE_WRITE };

	if (!pp || !len)
		return;
	/* all bytes written so far were read, by whomever */
	if (empty)
		pp->read = pp->written;
	io.pos = __sync_fetch_and_add(&pp->written, len);
	pipe_io_emit(&io);
}

/* Current, a traced thread, read ret bytes from pipe obj. */
static __always_inline void pipe_read_count(__u64 obj, long ret)
{
	struct pipe_pos *pp = bpf_map_lookup_elem(&pipe_pos, &obj);
	struct tt_pipe_io io = { .pipe = obj, .len = ret, .op = TT_PIPE_READ };

	if (!pp || !pp->written || ret <= 0)
		return;
	io.pos = __sync_fetch_and_add(&pp->read, ret);
	pipe_io_emit(&io);
}

static __always_inline bool unix_sock(const struct sock *sk)
{
	return sk && BPF_CORE_READ(sk, __sk_common.skc_family) == AF_UNIX;
}

/* ---- receives ---- */

/* user space holds receive stamping on; CLOCK_TAI - CLOCK_REALTIME (the
 * kernel's TAI offset, whole seconds), kept current by it */
volatile bool rx_stamps = false;
volatile __s64 tai_minus_real = 0;

/*
 * When the device handed the socket's newest queued segment to the stack,
 * on CLOCK_MONOTONIC; 0 when unknown. The kernel stamps received skbs in
 * CLOCK_REALTIME while any socket asks for timestamps (the recorder holds
 * one that does); TCP keeps the newest stamp on a segment coalesced into
 * the queue's tail. The stamp's age is read on its own clock now, through
 * CLOCK_TAI, which a step of CLOCK_REALTIME (NTP, a VM's time sync) moves
 * alike: an offset between the clocks kept by user space is wrong from the
 * step to its next refresh, milliseconds for every request in between.
 */
static __always_inline __u64 rx_dev_time(const struct sock *sk)
{
	struct sk_buff *skb;
	__s64 t, age;
	__u64 now;

	/* BTF pointers: direct loads, where BPF_CORE_READ is a helper call */
	if (!rx_stamps || !sk->sk_receive_queue.qlen)
		return 0;
	skb = sk->sk_receive_queue.prev;
	if (!skb)
		return 0;
	/* a delivery time (EDT, forwarded) is no receive stamp */
	if (bpf_core_field_exists(skb->tstamp_type) &&
	    BPF_CORE_READ_BITFIELD(skb, tstamp_type))
		return 0;
	t = skb->tstamp;
	if (t <= 0)
		return 0;
	age = (__s64)bpf_ktime_get_tai_ns() - tai_minus_real - t;
	now = bpf_ktime_get_ns();
	/* a stamp ahead of its clock, or of long ago: no lead */
	if (age < 0 || age > TT_DEV_LEAD_MAX_NS)
		return now;
	return now - age;
}

/* TT_F_HOP and TT_F_HOP_SENDER of a server socket's data */
static __always_inline __u32 hop_flags(const struct sock *sk)
{
	__u32 port = bpf_ntohs(sk->__sk_common.skc_dport), *owner;

	owner = bpf_map_lookup_elem(&client_ports, &port);
	if (!owner || !*owner)
		return 0;
	if (*owner == bpf_get_current_pid_tgid() >> 32)
		return TT_F_HOP | TT_F_HOP_SENDER;
	return TT_F_HOP;
}

/* A traced process sends on a TCP socket that no traced listener accepted:
 * a client socket, marked before its bytes reach the peer (this runs at the
 * start of tcp_sendmsg, in the sender's context). */
SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tt_client_send, const struct sock *sk)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, port, *owner;

	if (!tgid_traced(tgid))
		return 0;
	port = sk->__sk_common.skc_num;
	if (port_traced(port))
		return 0;
	owner = bpf_map_lookup_elem(&client_ports, &port);
	if (owner && *owner != tgid)
		*owner = tgid;
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(tt_data_ready, const struct sock *sk)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	struct tt_event_sock_dev {
		struct tt_hdr h;
		struct tt_sock_dev s;
	} *e;
	__u64 id, ts_dev;
	__u32 queued, flags;

	if (!server_sock(sk)) {
		/* a unix socket's sender, in process context */
		if (!unix_sock(sk) || irq_flags())
			return 0;
		id = bpf_get_current_pid_tgid();
		if (tgid_traced(id >> 32))
			ipc_written((__u64)sk, TT_IPC_UNIX, id);
		return 0;
	}
	ensure_conn(sk);
	queued = BPF_CORE_READ(tp, rcv_nxt) - BPF_CORE_READ(tp, copied_seq);
	flags = irq_flags() | hop_flags(sk);
	ts_dev = rx_dev_time(sk);
	if (!ts_dev) {
		emit_sock(TT_EV_DATA_READY, sk, queued, flags);
		return 0;
	}
	e = reserve(sizeof(*e), TT_EV_DATA_READY_DEV);
	if (!e)
		return 0;
	e->h.flags = flags;
	e->s.sk = (__u64)sk;
	e->s.len = queued;
	/* the record's time is read after the stamp's: never before it */
	if (ts_dev > e->h.ts || ts_dev + TT_DEV_LEAD_MAX_NS < e->h.ts)
		ts_dev = e->h.ts;
	e->s.ts_dev = ts_dev;
	submit(e);
	return 0;
}

/* A traced process reads on a socket its own send marked as a client
 * socket: a gateway reads its runner's answer (the hop's reply). */
static __always_inline void hop_reply(const struct sock *sk, int ret, __u64 id)
{
	__u32 port, *owner;

	if (BPF_CORE_READ(sk, sk_protocol) != IPPROTO_TCP)
		return;
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	owner = bpf_map_lookup_elem(&client_ports, &port);
	if (owner && *owner == id >> 32)
		emit_sock_as(TT_EV_RECV, sk, ret,
			     TT_F_HOP_REPLY | port << TT_F_PORT_SHIFT, id);
}

/* Threads that read a traced server connection: their polls are recorded
 * (an event loop's turns), no other thread's (ZMQ's I/O threads poll for
 * every message); 1 while it has read one since its last recorded poll. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} server_readers SEC(".maps");

static __always_inline void server_reader_note(__u32 tid)
{
	__u8 one = 1, *read = bpf_map_lookup_elem(&server_readers, &tid);

	if (!read)
		bpf_map_update_elem(&server_readers, &tid, &one, BPF_ANY);
	else if (!*read)
		*read = 1;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tt_recv, struct sock *sk, int ret, int flags)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!tgid_traced(id >> 32) || (flags & MSG_PEEK))
		return 0;
	if (!server_sock(sk)) {
		if (ret > 0 && unix_sock(sk))
			ipc_reader_note((__u64)sk, id);
		else if (ret > 0)
			hop_reply(sk, ret, id);
		return 0;
	}
	ensure_conn(sk);
	emit_sock_as(TT_EV_RECV, sk, ret, 0, id);
	server_reader_note((__u32)id);
	return 0;
}

/* A server reader's epoll wait returned: a turn of its loop begins
 * (docs/design.md §4.4), with reads when it returned ready fds, with the
 * callbacks an earlier turn scheduled when none (asyncio polls without
 * waiting then: where a loop ran its handlers). Of those that returned
 * none, only the first since the thread's last read of a connection: a
 * loop that waits for its workers polls many times in a row (a failed
 * wait is none). */
static __always_inline int poll_exit_emit(long ret, __u32 nr)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct tt_event_poll {
		struct tt_hdr h;
		struct tt_poll p;
	} *e;
	__u8 *read;

	if (ret < 0 || !tgid_traced(id >> 32))
		return 0;
	read = bpf_map_lookup_elem(&server_readers, &tid);
	if (!read || (!ret && !*read))
		return 0;
	*read = 0;
	e = reserve(sizeof(*e), TT_EV_POLL);
	if (!e)
		return 0;
	e->p.nready = ret;
	e->p.syscall_nr = nr;
	submit(e);
	return 0;
}

#define POLL_HOOK(name)                                                 \
	SEC("tracepoint/syscalls/sys_exit_" #name)                      \
	int tt_poll_##name##_exit(struct trace_event_raw_sys_exit *ctx) \
	{                                                               \
		return poll_exit_emit(ctx->ret, TT_NR_##name);          \
	}

POLL_HOOK(epoll_wait)
POLL_HOOK(epoll_pwait)
POLL_HOOK(epoll_pwait2)

/* ---- sends ---- */

static __always_inline int note_send_enter(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct send_enter *se;

	if (!tgid_traced(id >> 32))
		return 0;
	se = this_send_enter();
	if (se) {
		se->ts = bpf_ktime_get_ns();
		se->tid = (__u32)id;
	}
	return 0;
}

/* The entry time of the current thread's write/send syscall, consumed; 0
 * when unknown (the syscall began before tracing did). */
static __always_inline __u64 take_send_enter(__u32 tid)
{
	struct send_enter *se = this_send_enter();
	__u64 *moved, ts = 0;

	if (se && se->tid == tid) {
		se->tid = 0;
		return se->ts;
	}
	moved = bpf_map_lookup_elem(&send_enter_moved, &tid);
	if (moved) {
		ts = *moved;
		bpf_map_delete_elem(&send_enter_moved, &tid);
	}
	return ts;
}

/* prev leaves this CPU: an entry of its own here goes with it. */
static __always_inline void move_send_enter(__u32 prev_tid)
{
	struct send_enter *se = this_send_enter();

	if (!se || se->tid != prev_tid)
		return;
	bpf_map_update_elem(&send_enter_moved, &prev_tid, &se->ts, BPF_ANY);
	se->tid = 0;
}

/*
 * An XMIT made inside a send, held until that send's record: on loopback,
 * and on a device whose queue is free, tcp_sendmsg transmits before
 * sock_send_length fires, and the two then cost one reservation. Per CPU:
 * only a traced thread's XMIT in process context inside a write, writev,
 * sendto or sendmsg whose entry this CPU saw is held, so its send follows
 * on this CPU unless the thread switches out, and tt_switch writes it out
 * then; so does a send of another socket, and a second XMIT of the same
 * send goes out on its own.
 */
struct xmit_stash {
	__u32 tid; /* 0: none held */
	__u32 tgid;
	__u64 ts;
	struct tt_xmit x;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xmit_stash);
} xmit_stash SEC(".maps");

/* Set by user space before load (TTFTRACE_XMIT_HOLD=0 turns it off). */
const volatile bool xmit_hold = true;

struct tt_event_xmit {
	struct tt_hdr h;
	struct tt_xmit x;
};

static __always_inline struct xmit_stash *this_xmit_stash(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xmit_stash, &zero);
}

/* Writes a held XMIT as a record of its own, stamped when it was made. */
static __always_inline void flush_xmit(struct xmit_stash *st)
{
	struct tt_event_xmit *e;
	__u32 tid = st->tid;

	st->tid = 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return;
	}
	e->h.ts = st->ts;
	e->h.tgid = st->tgid;
	e->h.tid = tid;
	e->h.type = TT_EV_XMIT;
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.flags = 0;
	e->x = st->x;
	submit(e);
}

/* Whether current is inside a send syscall whose entry this CPU saw. */
static __always_inline bool in_send_syscall(__u32 tid)
{
	struct send_enter *se = this_send_enter();
	struct pt_regs *regs;
	long nr;

	if (!se || se->tid != tid)
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	nr = TT_REGS_SYSCALL_NR(regs);
	return nr == TT_NR_write || nr == TT_NR_writev || nr == TT_NR_sendto ||
	       nr == TT_NR_sendmsg;
}

/*
 * Whether a pipe holds no data: a write to it then is what its reader's
 * next read takes. Behind older data it is not (a pipe is FIFO: LitServe's
 * response pipe holds tokens its reader has yet to take), and no data wake
 * is made of it. Linux before 5.5 counted buffers otherwise: never empty.
 */
static __always_inline bool pipe_empty(struct inode *inode)
{
	struct pipe_inode_info *pipe;

	if (!bpf_core_field_exists(struct pipe_inode_info, head))
		return false;
	pipe = BPF_CORE_READ(inode, i_pipe);
	return pipe && BPF_CORE_READ(pipe, head) == BPF_CORE_READ(pipe, tail);
}

/* The bytes of a writev's first IOV_COUNTED iovecs: a pipe's writers
 * pass one or two (a longer one leaves the count short until the pipe
 * empties again). */
#define IOV_COUNTED 8

static __always_inline __u64 iov_bytes(const struct iovec *uiov, __u64 n)
{
	struct iovec iov;
	__u64 sum = 0;
	__u32 i;

	for (i = 0; i < IOV_COUNTED && i < n; i++) {
		if (bpf_probe_read_user(&iov, sizeof(iov), &uiov[i]))
			break;
		sum += iov.iov_len;
	}
	return sum;
}

/*
 * A write to an empty pipe with a known reader, or an 8-byte one (how an
 * eventfd is signalled) to a known reader's eventfd: a data hand-off; one
 * behind unread data in a pipe only marks it for its reader's next read. A
 * pipe's two ends are two files of one inode: it is known by its inode.
 */
static __always_inline void ipc_write_note(__u64 fd, bool eventfd_sized,
					   __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct inode *inode;
	struct file *file;
	bool empty;

	if (!tgid_traced(id >> 32))
		return;
	file = fd_file(bpf_get_current_task_btf(), fd);
	if (!file)
		return;
	inode = BPF_CORE_READ(file, f_inode);
	if (inode && (BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFIFO) {
		empty = pipe_empty(inode);
		if (empty)
			ipc_written((__u64)inode, TT_IPC_PIPE, id);
		else
			ipc_written_behind((__u64)inode, id);
		pipe_write_count((__u64)inode, empty, len);
	} else if (eventfd_sized) {
		ipc_written((__u64)file, TT_IPC_EVENTFD, id);
	}
}

SEC("tracepoint/syscalls/sys_enter_write")
int tt_enter_write(struct trace_event_raw_sys_enter *ctx)
{
	ipc_write_note(ctx->args[0], ctx->args[2] == 8, ctx->args[2]);
	return note_send_enter();
}

SEC("tracepoint/syscalls/sys_enter_writev")
int tt_enter_writev(struct trace_event_raw_sys_enter *ctx)
{
	ipc_write_note(ctx->args[0], false,
		       iov_bytes((const struct iovec *)ctx->args[1],
				 ctx->args[2]));
	return note_send_enter();
}

SEC("tracepoint/syscalls/sys_enter_sendto")
int tt_enter_sendto(void *ctx)
{
	return note_send_enter();
}

SEC("tracepoint/syscalls/sys_enter_sendmsg")
int tt_enter_sendmsg(void *ctx)
{
	return note_send_enter();
}

/* Where a send syscall's bytes are: one buffer (write, sendto) or an iovec
 * array (writev, sendmsg's msghdr), read once for every reader below. */
struct send_src {
	unsigned long base; /* the buffer, or the iovec array */
	__u64 iovlen; /* iovecs, when !flat */
	bool flat;
};

/* The syscall's own registers say which syscall it is, so a stale entry
 * can never be taken for it. False when sendmsg's msghdr is unreadable. */
static __always_inline bool send_source(long nr, struct pt_regs *regs,
					struct send_src *src)
{
	unsigned long arg1 = PT_REGS_PARM2_SYSCALL(regs);
	__u64 arg2 = PT_REGS_PARM3_SYSCALL(regs);
	struct user_msghdr msg;

	/* loaded here: one load of either regs or msg is refused */
	barrier_var(arg1);
	barrier_var(arg2);
	src->flat = nr == TT_NR_write || nr == TT_NR_sendto;
	if (nr != TT_NR_sendmsg) {
		src->base = arg1;
		src->iovlen = arg2;
		return true;
	}
	if (bpf_probe_read_user(&msg, sizeof(msg), (void *)arg1))
		return false;
	src->base = (unsigned long)msg.msg_iov;
	src->iovlen = msg.msg_iovlen;
	return true;
}

/* Vectored sends gather their first iovecs here; twice the capture, so
 * that a copy at any offset below it fits whatever its length. */
struct send_gather {
	__u8 data[2 * TT_SEND_CAPTURE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct send_gather);
} send_gather SEC(".maps");

/* iovecs read at a time: a gather goes on in rounds of them, up to
 * TT_SEND_IOVECS, with a small array on the stack */
#define GATHER_ROUND 8

/* Copies the first want bytes of an iovec array to out; returns how many.
 * Servers write a chunk-size line, the event and its CRLF as iovecs of
 * one writev (hyper does): the tokens are past the first iovec. */
static __always_inline __u32 gather_iovecs(const struct iovec *uiov,
					   __u64 iovlen, __u32 want, __u8 *out)
{
	struct iovec iov[GATHER_ROUND];
	struct send_gather *g;
	__u32 zero = 0, i, r, nr;
	__u64 off = 0, n;

	if (iovlen > TT_SEND_IOVECS)
		iovlen = TT_SEND_IOVECS;
	nr = iovlen < GATHER_ROUND ? iovlen : GATHER_ROUND;
	if (!nr || bpf_probe_read_user(iov, nr * sizeof(iov[0]), uiov))
		return 0;
	/* one iovec holds it all: no need to gather */
	if (iov[0].iov_len >= want || iovlen == 1) {
		n = iov[0].iov_len < want ? iov[0].iov_len : want;
		if (n > TT_SEND_CAPTURE)
			n = TT_SEND_CAPTURE;
		return bpf_probe_read_user(out, n, iov[0].iov_base) ? 0 : n;
	}
	g = bpf_map_lookup_elem(&send_gather, &zero);
	if (!g)
		return 0;
	for (r = 0; r < TT_SEND_IOVECS / GATHER_ROUND; r++) {
		if (r) {
			if (r * GATHER_ROUND >= iovlen || off >= want)
				break;
			n = iovlen - r * GATHER_ROUND;
			if (n > GATHER_ROUND)
				n = GATHER_ROUND;
			nr = n;
			n *= sizeof(iov[0]);
			/* the clamped register is the one used */
			barrier_var(n);
			if (n > sizeof(iov) ||
			    bpf_probe_read_user(iov, n,
						uiov + r * GATHER_ROUND))
				break;
		}
		for (i = 0; i < GATHER_ROUND; i++) {
			if (i >= nr || off >= want)
				break;
			n = iov[i].iov_len;
			if (n > want - off)
				n = want - off;
			if (n > TT_SEND_CAPTURE)
				n = TT_SEND_CAPTURE;
			/* off < want <= capture: a no-op */
			off &= TT_SEND_CAPTURE - 1;
			if (n && bpf_probe_read_user(g->data + off, n,
						     iov[i].iov_base))
				goto copied;
			off += n;
		}
	}
copied:
	if (off > TT_SEND_CAPTURE)
		off = TT_SEND_CAPTURE;
	barrier_var(off); /* the clamped register is the one passed on */
	return bpf_probe_read_kernel(out, off, g->data) ? 0 : off;
}

/* The first bytes of the send in progress, up to want. Returns how many
 * were copied to out. */
static __always_inline __u32 send_bytes(const struct send_src *src, __u32 want,
					__u8 *out)
{
	if (src->flat) {
		if (want > TT_SEND_CAPTURE)
			want = TT_SEND_CAPTURE;
		return bpf_probe_read_user(out, want, (void *)src->base) ? 0 :
									   want;
	}
	return gather_iovecs((const struct iovec *)src->base, src->iovlen, want,
			     out);
}

/* The last bytes of a send of sent bytes (more than the capture): of its
 * buffer, or of the iovec its last byte is in, among the first
 * TT_SEND_TAIL_IOVECS (Node ends a response with a writev of nine).
 * Returns how many were copied to out. */
static __always_inline __u32 send_tail(const struct send_src *src, __u64 sent,
				       __u8 *out)
{
	const struct iovec *uiov = (const struct iovec *)src->base;
	struct iovec iov;
	__u64 off = 0, k;
	__u32 i;

	if (src->flat)
		return bpf_probe_read_user(
			       out, TT_SEND_TAIL,
			       (void *)(src->base + sent - TT_SEND_TAIL)) ?
			       0 :
			       TT_SEND_TAIL;
	for (i = 0; i < TT_SEND_TAIL_IOVECS; i++) {
		if (i >= src->iovlen ||
		    bpf_probe_read_user(&iov, sizeof(iov), uiov + i))
			return 0;
		if (off + iov.iov_len < sent) {
			off += iov.iov_len;
			continue;
		}
		k = sent - off;
		if (k > TT_SEND_TAIL)
			k = TT_SEND_TAIL;
		barrier_var(k);
		if (!k || k > TT_SEND_TAIL)
			return 0;
		return bpf_probe_read_user(out, k,
					   iov.iov_base + (sent - off) - k) ?
			       0 :
			       k;
	}
	return 0;
}

/* count "data:" line starts past the capture: set by the recorder where
 * the kernel has bpf_loop (5.17) */
const volatile bool count_data_lines = false;

#define COUNT_CHUNK 64
/* the bytes of a send that must hold an event for the rest to be scanned */
#define COUNT_HEAD 512
/* "\ndata:", its bytes from the lowest: no string in a section of its own */
#define LINE_PATTERN 0x3a617461640aULL

/* A send's bytes, read COUNT_CHUNK at a time and scanned for "\ndata:" */
struct line_count {
	struct send_src src;
	__u64 at, left; /* what is left of the buffer or iovec at hand */
	__u64 todo; /* bytes of the send still to scan */
	__u64 scanned; /* bytes of the send scanned */
	__u32 iov; /* the next iovec */
	__u32 match; /* bytes of "\ndata:" matched so far */
	__u32 lines;
	__u8 has_data; /* the event at hand has had a data: line */
	__u8 line_empty; /* the line at hand is empty so far ('\r' aside) */
	__u16 pad;
	__u8 buf[COUNT_CHUNK];
};

/* In a map, not on the stack: the verifier then knows none of its values,
 * and the loops' states converge (a count it knew would differ each time) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct line_count);
} line_counts SEC(".maps");

/* bpf_loop's context is on the stack: the map value's address */
struct line_count_ref {
	struct line_count *c;
};

/* match states past "\ndata:": its value next, or after one space */
#define MATCHED_DATA 6
#define MATCHED_SPACE 7

/* A data: line whose value begins with b: an event's first counts, but
 * for "data: [DONE]" (token events are JSON objects or text) */
static __always_inline void data_line(struct line_count *c, __u8 b)
{
	c->lines += b != '[' && !c->has_data;
	c->has_data = 1;
}

/*
 * One byte a call (a loop over the chunk would be verified byte by byte).
 * An event is its lines up to a blank one; one with several data: lines
 * (a payload of several lines) is one event, as the capture counts it.
 */
static long scan_byte(__u32 j, void *arg)
{
	struct line_count *c = ((struct line_count_ref *)arg)->c;
	__u8 b = c->buf[j & (COUNT_CHUNK - 1)];
	__u32 m = c->match & 7;

	if (b == '\n') {
		if (m >= MATCHED_DATA)
			data_line(c, b); /* "data:" with no value */
		else if (c->line_empty)
			c->has_data = 0;
		c->line_empty = 1;
		c->match = 1;
		return 0;
	}
	if (b != '\r')
		c->line_empty = 0;
	if (m == MATCHED_DATA && b == ' ') {
		c->match = MATCHED_SPACE;
		return 0;
	}
	if (m >= MATCHED_DATA) {
		data_line(c, b);
		c->match = 0;
		return 0;
	}
	c->match = b == ((LINE_PATTERN >> (m * 8)) & 0xff) ? m + 1 : 0;
	return 0;
}

static long count_chunk(__u32 i, void *arg)
{
	struct line_count *c = ((struct line_count_ref *)arg)->c;
	struct iovec v;
	__u64 n;

	/* a send with no event in its head (headers included) is no SSE
	 * stream's: a large JSON answer is not scanned through */
	if (!c->todo || (!c->lines && c->scanned >= COUNT_HEAD))
		return 1;
	if (!c->left) {
		/* the next iovec; one a round, the loop bounds them */
		if (c->src.flat || c->iov >= c->src.iovlen ||
		    bpf_probe_read_user(&v, sizeof(v),
					(const struct iovec *)c->src.base +
						c->iov))
			return 1;
		c->iov++;
		c->at = (__u64)v.iov_base;
		c->left = v.iov_len;
		return 0;
	}
	n = c->left < c->todo ? c->left : c->todo;
	if (n > COUNT_CHUNK)
		n = COUNT_CHUNK;
	barrier_var(n);
	if (!n || n > COUNT_CHUNK ||
	    bpf_probe_read_user(c->buf, n, (void *)c->at))
		return 1;
	bpf_loop(n, scan_byte, arg, 0);
	c->at += n;
	c->left -= n;
	c->todo -= n;
	c->scanned += n;
	return 0;
}

/* The events with a data: line in the first TT_SEND_COUNT bytes of a send
 * of sent bytes (a line starts where the send does); none past its first
 * COUNT_HEAD bytes when those hold none. */
static __always_inline __u16 count_lines(const struct send_src *src, __u64 sent)
{
	struct line_count_ref ref;
	struct line_count *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&line_counts, &zero);
	if (!c)
		return 0;
	c->src = *src;
	c->todo = sent < TT_SEND_COUNT ? sent : TT_SEND_COUNT;
	c->scanned = 0;
	c->match = 1;
	c->lines = 0;
	c->has_data = 0;
	c->line_empty = 1;
	c->iov = 0;
	/* one buffer is at hand from the start; iovecs are read in turn */
	c->at = src->flat ? src->base : 0;
	c->left = src->flat ? c->todo : 0;
	ref.c = c;
	bpf_loop(TT_SEND_COUNT / COUNT_CHUNK + TT_SEND_TAIL_IOVECS, count_chunk,
		 &ref, 0);
	return c->lines;
}

/* SSL_write(ssl, buf, num) and SSL_write_ex(ssl, buf, num, written) */
SEC("uprobe")
int BPF_KPROBE(tt_tls_write, void *ssl, const void *buf, long num)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;
	struct tls_write w = {
		.buf = (unsigned long)buf,
		/* an int for SSL_write, a size_t for SSL_write_ex */
		.num = (int)num > 0 ? (__u32)num : 0,
	};

	if (!tgid_traced(id >> 32))
		return 0;
	bpf_map_update_elem(&tls_writes, &tid, &w, BPF_ANY);
	return 0;
}

/* How many first bytes of total are read: the capture, or less when
 * send_capture_bytes says so. */
static __always_inline __u64 capture_len(__u64 total)
{
	__u64 n = total < TT_SEND_CAPTURE ? total : TT_SEND_CAPTURE;

	return n < send_capture_bytes ? n : send_capture_bytes;
}

/* A send's or a plaintext's bytes as the records carry them: its first
 * ones, its last ones past the capture and its "data:" lines counted. */
static __always_inline void capture(const struct send_src *src, __u64 total,
				    __u8 *data, __u16 *nbytes, __u8 *tail,
				    __u16 *ntail, __u16 *data_lines)
{
	__u64 n = capture_len(total);

	*nbytes = n ? send_bytes(src, n, data) : 0;
	*ntail = total > TT_SEND_CAPTURE ? send_tail(src, total, tail) : 0;
	*data_lines = total > TT_SEND_CAPTURE && count_data_lines ?
			      count_lines(src, total) :
			      0;
}

/* Goroutine g's key in go_tls_seqs and on its pieces: the process in it
 * (Go heaps sit at the same addresses in every process) */
static __always_inline __u32 go_tls_key(__u32 tgid, __u64 g)
{
	__u64 h = (g ^ ((__u64)tgid << 40)) * 0x9e3779b97f4a7c15ULL;

	return (__u32)(h >> 33) | TT_TLS_GO_KEY;
}

/* Plaintext of num bytes at buf that the next TCP send of key (a thread,
 * or a goroutine) carries as TLS records: a TT_EV_TLS_PLAIN record of that
 * tid, numbered by sq, key's (the collector pairs them) */
static __always_inline void tls_plain(__u64 id, struct tls_seq *sq, __u32 key,
				      __u64 buf, __u32 num)
{
	struct send_src src = { .flat = true, .base = buf };
	struct tt_event_tls {
		struct tt_hdr h;
		struct tt_tls_plain p;
	} *e;

	e = reserve_as(sizeof(*e), TT_EV_TLS_PLAIN, (id >> 32) << 32 | key);
	if (!e)
		return;
	e->p.len = num;
	e->p.seq = sq->next++;
	capture(&src, num, e->p.data, &e->p.nbytes, e->p.tail, &e->p.ntail,
		&e->p.data_lines);
	submit(e);
}

/* An SSL_write that made no send of its own wrote to a memory BIO: its
 * plaintext, for the thread's next send */
SEC("uretprobe")
int BPF_KRETPROBE(tt_tls_write_return, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;
	struct tls_write *tw = bpf_map_lookup_elem(&tls_writes, &tid);
	struct tls_seq *sq, zero = {};

	if (!tw)
		return 0;
	if (!tw->sends && (int)ret > 0 && tw->num) {
		bpf_map_update_elem(&tls_seqs, &tid, &zero, BPF_NOEXIST);
		sq = bpf_map_lookup_elem(&tls_seqs, &tid);
		if (sq)
			tls_plain(id, sq, tid, tw->buf, tw->num);
	}
	bpf_map_delete_elem(&tls_writes, &tid);
	return 0;
}

/* Go's crypto/tls.(*Conn).Write(b []byte): the receiver, then b's pointer
 * and length in registers (Go 1.17+). The Conn sends its records itself
 * after, from the same goroutine, on whatever thread runs it then: the
 * plaintext waits for the goroutine's next send. Entry only: Go moves
 * stacks, which breaks return probes. */
SEC("uprobe")
int tt_go_tls_write(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), len = TT_GO_ARG3(ctx);
	__u64 buf = TT_GO_ARG2(ctx);
	__u32 key = go_tls_key(id >> 32, TT_GO_G(ctx));
	struct go_tls_seq *gs, zero = {};

	if (!tgid_traced(id >> 32) || !len || len > 0xffffffffULL)
		return 0;
	bpf_map_update_elem(&go_tls_seqs, &key, &zero, BPF_NOEXIST);
	gs = bpf_map_lookup_elem(&go_tls_seqs, &key);
	if (!gs)
		return 0;
	/* a call that grew its stack ran its prologue, and this probe, twice:
	 * the same Write, its bytes not sent yet */
	if (gs->s.first != gs->s.next && gs->buf == buf && gs->len == len)
		return 0;
	gs->buf = buf;
	gs->len = len;
	tls_plain(id, &gs->s, key, buf, len);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(tt_send, struct sock *sk, int ret, int flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tcp_sock *tp;
	__u64 skey = (__u64)sk;
	struct task_struct *task;
	struct send_src src;
	struct xmit_stash *st = NULL;
	struct tls_write *tw;
	struct tls_seq *sq;
	__u32 tls_from = 0, tls_to = 0, tls_key = 0;
	struct tt_send_raw *s;
	struct pt_regs *regs;
	bool hold = false;
	struct tt_hdr *h;
	/* plain: the bytes whose first ones are read (the plaintext's, or
	 * the syscall's own) */
	__u64 enter, plain = 0;
	__u32 tid;
	long nr;

	if (!tgid_traced(id >> 32))
		return 0;
	/* the plaintext of SSL_writes to a memory BIO since its last TCP
	 * send: this send's, whichever connection it is on */
	tid = id;
	sq = bpf_map_lookup_elem(&tls_seqs, &tid);
	if (!sq && ret > 0 && sk->sk_protocol == IPPROTO_TCP) {
		/* a goroutine's crypto/tls Writes: its g is in the registers
		 * at its syscalls */
		regs = (struct pt_regs *)bpf_task_pt_regs(
			bpf_get_current_task_btf());
		tls_key = go_tls_key(id >> 32, TT_GO_G(regs));
		sq = bpf_map_lookup_elem(&go_tls_seqs, &tls_key);
	}
	if (sq && ret > 0 && sk->sk_protocol == IPPROTO_TCP) {
		tls_from = sq->first;
		tls_to = sq->next;
		sq->first = sq->next;
	}
	/* an XMIT this thread made is this send's, of this socket, or out */
	st = this_xmit_stash();
	if (st && st->tid == (__u32)id) {
		hold = st->x.sk == skey;
		if (!hold)
			flush_xmit(st);
	}
	if (server_sock(sk)) {
		ensure_conn(sk);
	} else if (sk->sk_protocol != IPPROTO_TCP ||
		   !bpf_map_lookup_elem(&closed_conns, &skey)) {
		if (hold)
			flush_xmit(st);
		return 0;
	}
	h = reserve_as(sizeof(*h) + sizeof(*s), TT_EV_SEND_RAW, id);
	if (!h) {
		if (hold) {
			st->tid = 0;
			count_lost(); /* the XMIT it carried */
		}
		return 0;
	}
	s = (void *)(h + 1);
	s->xmit_held = 0;
	s->data_lines = 0;
	if (hold) {
		st->tid = 0;
		s->xmit_held = 1;
		s->xmit_ts = st->ts;
		s->xmit = st->x;
	}
	s->send.sk = (__u64)sk;
	s->send.len = ret;
	enter = take_send_enter((__u32)id);
	s->send.ts_enter = enter ? enter : h->ts;
	/* a BTF pointer: a direct load, where BPF_CORE_READ is a helper call */
	tp = bpf_skc_to_tcp_sock(sk);
	s->send.seq = (tp ? tp->write_seq : 0) - (ret > 0 ? ret : 0);
	s->send.cls = 0;
	s->send.tokens = 0;
	s->send.flags = 0;
	s->send.status = 0;
	s->nbytes = 0;
	s->ntail = 0;
	s->tls = 0;
	s->plain_len = 0;
	s->tls_from = tls_from;
	s->tls_to = tls_to;
	s->tls_key = sq ? tls_key : 0;
	tw = ret > 0 ? bpf_map_lookup_elem(&tls_writes, &tid) : NULL;
	if (tw) {
		/* encrypted bytes: the plaintext is read instead, once */
		s->tls = tw->sends++ ? 2 : 1;
		if (s->tls == 2) {
			submit(h);
			return 0;
		}
		plain = tw->num;
		s->plain_len = plain;
		src.base = tw->buf;
		src.iovlen = 0;
		src.flat = true;
	}
	/* nothing to read (failed, or capture off and short): no user reads,
	 * nor the registers that find them */
	if (!tw && !capture_len(ret > 0 ? ret : 0) && ret <= TT_SEND_CAPTURE) {
		submit(h);
		return 0;
	}
	if (!tw) {
		/* the syscall's own bytes */
		task = bpf_get_current_task_btf();
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		nr = TT_REGS_SYSCALL_NR(regs);
		if ((nr != TT_NR_write && nr != TT_NR_writev &&
		     nr != TT_NR_sendto && nr != TT_NR_sendmsg) ||
		    !send_source(nr, regs, &src)) {
			submit(h);
			return 0;
		}
		plain = ret;
	}
	capture(&src, plain, s->data, &s->nbytes, s->tail, &s->ntail,
		&s->data_lines);
	submit(h);
	return 0;
}

/* An skb of a traced connection is handed to the device driver: the wire
 * time of the bytes it carries, named by their TCP sequence numbers. This is
 * net_dev_start_xmit, not net_dev_xmit: after the driver's xmit the skb may
 * be freed or orphaned (loopback orphans it), so skb->sk is gone by then. */
SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tt_xmit, const struct sk_buff *skb, const struct net_device *dev)
{
	struct tt_event_xmit *e;
	unsigned char *head;
	__u16 thoff, dataoff;
	struct xmit_stash *st;
	struct sock *sk;
	__u32 seq, flags;
	__u8 th[13];
	__s32 payload;
	__u64 id;

	sk = skb->sk;
	if (!server_sock(sk))
		return 0;
	head = skb->head;
	thoff = skb->transport_header;
	dataoff = skb->data - head;
	if (bpf_probe_read_kernel(th, sizeof(th), head + thoff))
		return 0;
	payload = (__s32)skb->len - (thoff - dataoff) -
		  (th[12] >> 4) * 4;
	if (payload <= 0)
		return 0; /* pure ACKs carry no response bytes */
	__builtin_memcpy(&seq, &th[4], sizeof(seq));
	seq = bpf_ntohl(seq);
	flags = irq_flags();
	id = bpf_get_current_pid_tgid();
	st = xmit_hold && !flags ? this_xmit_stash() : NULL;
	if (st && !st->tid && in_send_syscall((__u32)id)) {
		st->ts = bpf_ktime_get_ns();
		st->tgid = id >> 32;
		st->x.sk = (__u64)sk;
		st->x.seq = seq;
		st->x.end_seq = seq + payload;
		st->x.len = skb->len;
		st->x.pad = 0;
		st->tid = (__u32)id; /* last: it says the rest is there */
		return 0;
	}
	e = reserve_as(sizeof(*e), TT_EV_XMIT, id);
	if (!e)
		return 0;
	e->h.flags = flags;
	e->x.sk = (__u64)sk;
	e->x.seq = seq;
	e->x.end_seq = seq + payload;
	e->x.len = skb->len;
	e->x.pad = 0;
	submit(e);
	return 0;
}

/* ---- threads: switches, wakeups and why a thread blocked ---- */

/* syscalls whose first argument is the fd a thread waits on */
static __always_inline bool fd_syscall(long nr)
{
	switch (nr) {
	case TT_NR_read:
	case TT_NR_write:
	case TT_NR_ioctl:
	case TT_NR_pread64:
	case TT_NR_readv:
	case TT_NR_writev:
	case TT_NR_connect:
	case TT_NR_accept:
	case TT_NR_sendto:
	case TT_NR_recvfrom:
	case TT_NR_sendmsg:
	case TT_NR_recvmsg:
	case TT_NR_epoll_wait:
	case TT_NR_epoll_pwait:
	case TT_NR_accept4:
	case TT_NR_preadv:
	case TT_NR_recvmmsg:
	case TT_NR_preadv2:
		return true;
	}
	return false;
}

/*
 * The open file behind fd of task, or NULL: every fd hook reads it so.
 * Direct loads through the task's BTF pointers (a faulting one reads 0)
 * and one helper call for the array slot: every read(2) of a traced
 * process comes here, sockets and pipes included (a helper call per
 * field: 8 of them on this path).
 */
static __always_inline struct file *fd_file(struct task_struct *task, __u64 fd)
{
	struct files_struct *files = task->files;
	struct fdtable *fdt;
	struct file *file;

	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || fd >= fdt->max_fds)
		return NULL;
	if (bpf_probe_read_kernel(&file, sizeof(file), fdt->fd + fd) || !file)
		return NULL;
	return file;
}

static __always_inline void describe_fd(struct task_struct *task, __u64 fd,
					struct tt_switch *sw)
{
	struct file *file = fd_file(task, fd);
	struct inode *inode;

	if (!file)
		return;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return;
	sw->fd_mode = BPF_CORE_READ(inode, i_mode);
	sw->fd_rdev = BPF_CORE_READ(inode, i_rdev);
	sw->fd_dev = BPF_CORE_READ(inode, i_sb, s_dev);
	sw->fd_ino = BPF_CORE_READ(inode, i_ino);
	sw->sw_flags |= TT_SW_FD;
	if (BPF_CORE_READ(inode, i_sb, s_magic) == ANON_INODE_FS_MAGIC)
		sw->sw_flags |= TT_SW_ANON_INODE;
}

/* this CPU's steal clock at its last switch with a traced side, and when */
struct cpu_steal {
	__u64 steal, ts;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_steal);
} cpu_steal SEC(".maps");

/*
 * A TT_EV_STEAL for prev when the hypervisor took its CPU while it ran.
 * The kernel's steal clock (paravirt, KVM's and Xen's) is read into the
 * runqueue's prev_steal_time_rq by the update_rq_clock() of this very
 * __schedule(); prev was switched in at this CPU's last traced switch (its
 * next was prev), so the change since is prev's run's. now is this
 * switch's record's time (a clock read costs as much as the rest). A
 * kernel without CONFIG_PARAVIRT_TIME_ACCOUNTING or group scheduling has
 * no such field: no record, ever.
 */
static __always_inline void note_steal(struct task_struct *prev,
				       bool prev_traced, __u64 now)
{
	struct tt_event_steal {
		struct tt_hdr h;
		struct tt_steal st;
	} *e;
	struct cpu_steal *cs;
	__u32 zero = 0;
	__u64 steal, ts_on, stolen;
	struct cfs_rq *cfs;

	if (!bpf_core_field_exists(struct cfs_rq, rq) ||
	    !bpf_core_field_exists(struct rq, prev_steal_time_rq))
		return;
	cs = bpf_map_lookup_elem(&cpu_steal, &zero);
	cfs = prev->se.cfs_rq;
	if (!cs || !cfs || !cfs->rq)
		return;
	steal = cfs->rq->prev_steal_time_rq;
	stolen = cs->ts && steal > cs->steal ? steal - cs->steal : 0;
	ts_on = cs->ts;
	cs->steal = steal;
	cs->ts = now;
	if (!prev_traced || stolen < TT_STEAL_MIN_NS)
		return;
	e = reserve(sizeof(*e), TT_EV_STEAL);
	if (!e)
		return;
	e->st.ns = stolen;
	e->st.ts_on = ts_on;
	submit(e);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(tt_switch, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	__u32 prev_tgid = prev->tgid;
	__u32 next_tgid = next->tgid;
	bool prev_traced = tgid_traced(prev_tgid);
	bool next_traced = tgid_traced(next_tgid);
	struct tt_event_switch {
		struct tt_hdr h;
		struct tt_switch sw;
	} *e;
	struct xmit_stash *st;
	struct pt_regs *regs;
	struct pollfd pfd;
	__u64 now;
	long nr, op;

	if (!prev_traced && !next_traced)
		return 0;
	if (prev_traced) {
		move_send_enter(prev->pid);
		/* its send goes on elsewhere, or later: the XMIT goes now */
		st = this_xmit_stash();
		if (st && st->tid == prev->pid)
			flush_xmit(st);
	}
	/* current is prev */
	e = reserve_as(sizeof(*e), TT_EV_SWITCH,
		       (__u64)prev_tgid << 32 | (__u32)prev->pid);
	if (!e)
		return 0;
	__builtin_memset(&e->sw, 0, sizeof(e->sw));
	e->sw.next_tid = next->pid;
	e->sw.next_tgid = next_tgid;
	e->sw.prev_state = preempt ? 0 : prev_state;
	e->sw.syscall_nr = -1;
	e->sw.sw_flags = (prev_traced ? TT_SW_PREV_TRACED : 0) |
			 (next_traced ? TT_SW_NEXT_TRACED : 0);
	if (prev_traced && e->sw.prev_state) {
		if (BPF_CORE_READ_BITFIELD(prev, in_iowait))
			e->sw.sw_flags |= TT_SW_IOWAIT;
		regs = (struct pt_regs *)bpf_task_pt_regs(prev);
		nr = TT_REGS_SYSCALL_NR(regs);
		e->sw.syscall_nr = nr;
		e->sw.arg0 = PT_REGS_PARM1_SYSCALL(regs);
		if (fd_syscall(nr)) {
			describe_fd(prev, e->sw.arg0, &e->sw);
		} else if (nr == TT_NR_futex) {
			/* FUTEX_WAIT or _WAIT_BITSET with a timeout: a
			 * batcher's timed wait (docs/design.md §4.4) */
			op = PT_REGS_PARM2_SYSCALL(regs) & 0x7f;
			if ((op == 0 || op == 9) && PT_REGS_PARM4_SYSCALL(regs))
				e->sw.sw_flags |= TT_SW_TIMED;
		} else if (nr == TT_NR_poll || nr == TT_NR_ppoll) {
			/* current is still prev: its memory is readable */
			if (!bpf_probe_read_user(&pfd, sizeof(pfd),
						 (void *)e->sw.arg0))
				describe_fd(prev, pfd.fd, &e->sw);
		}
	}
	now = e->h.ts;
	submit(e);
	note_steal(prev, prev_traced, now);
	return 0;
}

static __always_inline void emit_wake(__u16 type, struct task_struct *p)
{
	__u32 tgid = p->tgid;
	struct tt_event_wake *e;
	struct task_struct *cur;

	if (!tgid_traced(tgid))
		return;
	e = reserve(sizeof(*e), type);
	if (!e)
		return;
	e->h.flags = irq_flags();
	e->w.target_tid = p->pid;
	e->w.target_tgid = tgid;
	e->w.target_cpu = p->wake_cpu;
	e->w.waker_syscall = -1;
	e->w.waker_arg0 = 0;
	cur = bpf_get_current_task_btf();
	if (!e->h.flags && !(cur->flags & 0x00200000 /* PF_KTHREAD */))
		waker_regs(&e->w, cur);
	submit(e);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(tt_waking, struct task_struct *p)
{
	emit_wake(TT_EV_WAKING, p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(tt_wakeup_new, struct task_struct *p)
{
	emit_wake(TT_EV_WAKEUP_NEW, p);
	return 0;
}

/* ---- storage ---- */

static __always_inline void emit_block(struct request *rq, __u16 phase,
				       int error)
{
	struct tt_event_block {
		struct tt_hdr h;
		struct tt_block b;
	} *e = reserve(sizeof(*e), TT_EV_BLOCK);

	if (!e)
		return;
	e->h.flags = irq_flags();
	e->b.rq = (__u64)rq;
	e->b.sector = BPF_CORE_READ(rq, __sector);
	e->b.nr_bytes = BPF_CORE_READ(rq, __data_len);
	e->b.dev = BPF_CORE_READ(rq, q, disk, part0, bd_dev);
	e->b.phase = phase;
	e->b.write = BPF_CORE_READ(rq, cmd_flags) & 1;
	e->b.error = error;
	submit(e);
}

static __always_inline void block_submitted(struct request *rq, __u16 phase)
{
	__u64 key = (__u64)rq;
	__u8 one = 1;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32) &&
	    !bpf_map_lookup_elem(&traced_rqs, &key))
		return;
	bpf_map_update_elem(&traced_rqs, &key, &one, BPF_ANY);
	emit_block(rq, phase, 0);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(tt_block_insert, struct request *rq)
{
	block_submitted(rq, TT_BLK_INSERT);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(tt_block_issue, struct request *rq)
{
	block_submitted(rq, TT_BLK_ISSUE);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(tt_block_complete, struct request *rq, int error,
	     unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;

	if (!bpf_map_lookup_elem(&traced_rqs, &key))
		return 0;
	bpf_map_delete_elem(&traced_rqs, &key);
	emit_block(rq, TT_BLK_COMPLETE, error);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(tt_filemap_fault, struct address_space *mapping,
	     unsigned long index)
{
	struct tt_event_fault {
		struct tt_hdr h;
		struct tt_fault f;
	} *e;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	e = reserve(sizeof(*e), TT_EV_FAULT);
	if (!e)
		return 0;
	e->f.ino = BPF_CORE_READ(mapping, host, i_ino);
	e->f.dev = BPF_CORE_READ(mapping, host, i_sb, s_dev);
	e->f.index = index;
	e->f.pad = 0;
	submit(e);
	return 0;
}

/* ---- file I/O: reads on regular files and block devices ---- */

/* The file read a thread is in, from its syscall entry to its exit. */
struct fileio_enter {
	__u64 ts; /* 0: none in progress */
	__u64 pipe; /* or a read of this pipe (its inode), 0: none */
	__u64 efd; /* or of this eventfd (its file), 0: none */
	__u64 ino;
	__u32 dev, rdev, fd, mode, f_flags;
	__s32 syscall;
};

/* with the task, as send_enter_ts: cheaper than a hash by tid for the
 * file reads (measured: 250 ns a read less), the same for the others */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fileio_enter);
} fileio_enter SEC(".maps");

/* Filesystems whose regular files are the kernel's own state, not
 * storage: /proc, sysfs and the other kernfs and pseudo mounts, and anon
 * inodes (eventfd, timerfd, signalfd: S_IFREG on recent kernels). */
static __always_inline bool pseudo_fs(unsigned long magic)
{
	switch (magic) {
	case ANON_INODE_FS_MAGIC:
	case 0x9fa0: /* proc */
	case 0x62656572: /* sysfs */
	case 0x27e0eb: /* cgroup */
	case 0x63677270: /* cgroup2 */
	case 0x64626720: /* debugfs */
	case 0x74726163: /* tracefs */
	case 0x73636673: /* securityfs */
	case 0xcafe4a11: /* bpf */
	case 0x50494446: /* pidfs */
	case 0x6e736673: /* nsfs */
	case 0x62656570: /* configfs */
	case 0xf97cff8c: /* selinuxfs */
	case 0x444d4142: /* dma-buf */
	case 0xde5e81e4: /* efivarfs */
	case 0x6165676c: /* pstore */
		return true;
	}
	return false;
}

/*
 * A read syscall's entry: noted only for a traced thread and an fd on a
 * regular file of a filesystem that stores data, or a block device
 * (docs/design.md §2.1). A read of a socket costs the tgid lookup and
 * the walk to the inode's mode; of a pipe, a reader's note (§4.4) more;
 * of an eventfd or /proc a read of the superblock's magic more.
 */
static __always_inline int fileio_enter_note(__u64 fd, __s32 nr)
{
	struct task_struct *task;
	struct fileio_enter *fe;
	struct inode *inode;
	struct file *file;
	__u64 id = bpf_get_current_pid_tgid();
	unsigned long magic;
	__u32 mode;

	if (!tgid_traced(id >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	file = fd_file(task, fd);
	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return 0;
	mode = BPF_CORE_READ(inode, i_mode);
	/* anon inodes have no type (S_IFREG on some kernels) */
	if ((mode & S_IFMT) == S_IFREG || !(mode & S_IFMT)) {
		magic = BPF_CORE_READ(inode, i_sb, s_magic);
		/* an eventfd's reader (timerfds and signalfds: no writer);
		 * at its exit too: blocked in the read when the write came,
		 * it reads the data then */
		if (magic == ANON_INODE_FS_MAGIC && nr == TT_NR_read) {
			ipc_reader_note((__u64)file, id);
			fe = bpf_task_storage_get(
				&fileio_enter, task, 0,
				BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (fe)
				fe->efd = (__u64)file;
		}
		if (!(mode & S_IFMT) || pseudo_fs(magic))
			return 0;
	} else if ((mode & S_IFMT) == S_IFIFO) {
		/* a pipe's reader, for its writers' data wakes, and its
		 * bytes' count */
		if (nr != TT_NR_read && nr != TT_NR_readv)
			return 0;
		ipc_reader_note((__u64)inode, id);
		if (!bpf_map_lookup_elem(&pipe_pos, &inode))
			bpf_map_update_elem(&pipe_pos, &inode,
					    &(struct pipe_pos){}, BPF_NOEXIST);
		fe = bpf_task_storage_get(&fileio_enter, task, 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (fe)
			fe->pipe = (__u64)inode;
		return 0;
	} else if ((mode & S_IFMT) != S_IFBLK) {
		return 0;
	}
	fe = bpf_task_storage_get(&fileio_enter, task, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!fe)
		return 0;
	fe->pipe = 0;
	fe->ino = BPF_CORE_READ(inode, i_ino);
	fe->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	fe->rdev = BPF_CORE_READ(inode, i_rdev);
	fe->fd = fd;
	fe->mode = mode;
	fe->f_flags = BPF_CORE_READ(file, f_flags);
	fe->syscall = nr;
	fe->ts = bpf_ktime_get_ns();
	return 0;
}

/* Its exit: one TT_EV_FILEIO per file read, the interval and its bytes. */
static __always_inline int fileio_exit_emit(long ret)
{
	struct tt_event_fileio {
		struct tt_hdr h;
		struct tt_fileio f;
	} *e;
	struct fileio_enter *fe;

	/* every read of the machine comes here: an untraced process's costs
	 * the inline filter, not the storage lookup's helper call */
	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	fe = bpf_task_storage_get(&fileio_enter, bpf_get_current_task_btf(), 0,
				  0);
	if (fe && fe->pipe) {
		pipe_read_count(fe->pipe, ret);
		fe->pipe = 0;
		return 0;
	}
	if (fe && fe->efd) {
		if (ret > 0)
			ipc_reader_note(fe->efd, bpf_get_current_pid_tgid());
		fe->efd = 0;
		return 0;
	}
	if (!fe || !fe->ts)
		return 0;
	e = reserve(sizeof(*e), TT_EV_FILEIO);
	if (e) {
		e->f.ts_enter = fe->ts;
		e->f.ret = ret;
		e->f.ino = fe->ino;
		e->f.dev = fe->dev;
		e->f.rdev = fe->rdev;
		e->f.fd = fe->fd;
		e->f.mode = fe->mode;
		e->f.f_flags = fe->f_flags;
		e->f.syscall = fe->syscall;
		submit(e);
	}
	fe->ts = 0;
	return 0;
}

#define FILEIO_HOOKS(name)                                                  \
	SEC("tracepoint/syscalls/sys_enter_" #name)                         \
	int tt_fileio_##name##_enter(struct trace_event_raw_sys_enter *ctx) \
	{                                                                   \
		return fileio_enter_note(ctx->args[0], TT_NR_##name);       \
	}                                                                   \
	SEC("tracepoint/syscalls/sys_exit_" #name)                          \
	int tt_fileio_##name##_exit(struct trace_event_raw_sys_exit *ctx)   \
	{                                                                   \
		return fileio_exit_emit(ctx->ret);                          \
	}

FILEIO_HOOKS(read)
FILEIO_HOOKS(pread64)
FILEIO_HOOKS(readv)
FILEIO_HOOKS(preadv)
FILEIO_HOOKS(preadv2)

/*
 * ---- io_uring: its calls that submit or reap requests on files ----
 *
 * A ring's wait is on its anon inode, and its I/O wait is set for any
 * request in flight (a socket's too): the requests' own files say which
 * calls are storage's (docs/design.md §4.3). An io_uring_enter(2) call of a
 * traced thread is noted as a file read is; a read request on a regular
 * file or block device submitted in it (its fd's file), or completed in
 * it (the request's file: completions run as their submitter's task work,
 * so in its call when it waits), gives it that file, and its exit one
 * TT_EV_FILEIO (syscall TT_NR_io_uring_enter). Left out: a fixed file's
 * submission (its file is known when issued, after the hook), writes, and
 * completions that run outside the caller's call (another thread's wait
 * on a shared ring, an io-wq worker's, SQPOLL's thread's).
 */

/* The UAPI's read opcodes: each names a file by the SQE's fd. Writes are
 * left out, as a write syscall's are: a server's log lines would become
 * storage. */
static __always_inline bool uring_read_op(__u8 op)
{
	return op == IORING_OP_READV || op == IORING_OP_READ_FIXED ||
	       op == IORING_OP_READ || op == 49 /* READ_MULTISHOT */ ||
	       op == 60 /* READV_FIXED */;
}

/* Gives fe, an io_uring_enter call with no file yet, file's storage when
 * op reads it */
static __always_inline void uring_file(struct fileio_enter *fe, __u8 op,
				       struct file *file)
{
	struct inode *inode;
	__u32 mode;

	if (!file || !uring_read_op(op))
		return;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return;
	mode = BPF_CORE_READ(inode, i_mode);
	if ((mode & S_IFMT) != S_IFREG && (mode & S_IFMT) != S_IFBLK)
		return;
	if ((mode & S_IFMT) == S_IFREG &&
	    pseudo_fs(BPF_CORE_READ(inode, i_sb, s_magic)))
		return;
	fe->ino = BPF_CORE_READ(inode, i_ino);
	fe->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	fe->rdev = BPF_CORE_READ(inode, i_rdev);
	fe->f_flags = BPF_CORE_READ(file, f_flags);
	fe->mode = mode;
}

/* current's io_uring_enter call in progress that has no file yet, or NULL */
static __always_inline struct fileio_enter *uring_call(void)
{
	struct fileio_enter *fe;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return NULL;
	fe = bpf_task_storage_get(&fileio_enter, bpf_get_current_task_btf(), 0,
				  0);
	return fe && fe->ts && fe->syscall == TT_NR_io_uring_enter &&
			       !fe->mode ?
		       fe :
		       NULL;
}

SEC("tracepoint/syscalls/sys_enter_io_uring_enter")
int tt_fileio_io_uring_enter_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct fileio_enter *fe;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	fe = bpf_task_storage_get(&fileio_enter, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!fe)
		return 0;
	fe->pipe = 0;
	fe->mode = 0; /* no file yet */
	fe->fd = ctx->args[0];
	fe->syscall = TT_NR_io_uring_enter;
	fe->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_io_uring_enter")
int tt_fileio_io_uring_enter_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct fileio_enter *fe = uring_call();

	/* a call that neither submitted nor reaped a file read: no record */
	if (fe)
		fe->ts = 0;
	return fileio_exit_emit(ctx->ret);
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(tt_uring_submit, struct io_kiocb *req)
{
	struct fileio_enter *fe = uring_call();
	__u8 op;

	if (!fe || !bpf_core_field_exists(req->cqe.fd) ||
	    BPF_CORE_READ(req, flags) & REQ_F_FIXED_FILE)
		return 0;
	/* cqe.fd is the SQE's fd only for opcodes with a file (a read's):
	 * for others it is what the recycled request last held */
	op = BPF_CORE_READ(req, opcode);
	if (!uring_read_op(op))
		return 0;
	uring_file(fe, op,
		   fd_file(bpf_get_current_task_btf(),
			   BPF_CORE_READ(req, cqe.fd)));
	return 0;
}

/* the request is the second argument since 5.19 (hooks.c checks) */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(tt_uring_complete, void *ring, void *req_arg)
{
	struct fileio_enter *fe = uring_call();
	struct io_kiocb *req = req_arg;

	if (fe)
		uring_file(fe, BPF_CORE_READ(req, opcode),
			   BPF_CORE_READ(req, file));
	return 0;
}

/* ---- GPU: ioctls on device nodes, CUDA driver calls ---- */

struct gpu_inode {
	__u32 dev;
	__u32 pad;
	__u64 ino;
};

/* GPU device nodes, by device number (char devices) and by inode (any
 * other node named with --gpu-device): filled by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u8);
} gpu_rdevs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct gpu_inode);
	__type(value, __u8);
} gpu_inodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct tt_ioctl);
} ioctl_enter SEC(".maps");

struct cuda_enter {
	__u64 ts;
	__u64 arg0;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64); /* tid << 16 | function */
	__type(value, struct cuda_enter);
} cuda_enter SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_ioctl")
int tt_ioctl_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *task;
	struct tt_switch fdinfo = {};
	struct tt_ioctl ioc = {};
	struct gpu_inode gi = {};
	__u32 tid = (__u32)id;

	if (!tgid_traced(id >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	describe_fd(task, ctx->args[0], &fdinfo);
	if (!(fdinfo.sw_flags & TT_SW_FD))
		return 0;
	gi.dev = fdinfo.fd_dev;
	gi.ino = fdinfo.fd_ino;
	if (!(fdinfo.fd_rdev && bpf_map_lookup_elem(&gpu_rdevs, &fdinfo.fd_rdev)) &&
	    !bpf_map_lookup_elem(&gpu_inodes, &gi))
		return 0;
	ioc.ts_enter = bpf_ktime_get_ns();
	ioc.cmd = ctx->args[1];
	ioc.fd = ctx->args[0];
	ioc.rdev = fdinfo.fd_rdev;
	ioc.dev = gi.dev;
	ioc.ino = gi.ino;
	bpf_map_update_elem(&ioctl_enter, &tid, &ioc, BPF_ANY);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int tt_ioctl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct tt_event_ioctl {
		struct tt_hdr h;
		struct tt_ioctl i;
	} *e;
	struct tt_ioctl *ioc = bpf_map_lookup_elem(&ioctl_enter, &tid);

	if (!ioc)
		return 0;
	e = reserve(sizeof(*e), TT_EV_IOCTL);
	if (e) {
		e->i = *ioc;
		e->i.ret = ctx->ret;
		submit(e);
	}
	bpf_map_delete_elem(&ioctl_enter, &tid);
	return 0;
}

#define NEEDLE_LEN 10 /* strlen("libcuda.so") */

/* A traced process opening a CUDA driver library (dlopen, or the loader at
 * exec): the collector attaches the uprobes to it. */
SEC("tracepoint/syscalls/sys_enter_openat")
int tt_openat(struct trace_event_raw_sys_enter *ctx)
{
	const char needle[NEEDLE_LEN] = "libcuda.so";
	struct tt_event_lib {
		struct tt_hdr h;
		struct tt_lib_open l;
	} *e;
	char path[TT_LIB_PATH_LEN];
	int len, i, j;
	bool found = false;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	len = bpf_probe_read_user_str(path, sizeof(path), (void *)ctx->args[1]);
	for (i = 0; i < TT_LIB_PATH_LEN - NEEDLE_LEN && !found; i++) {
		if (i + NEEDLE_LEN > len)
			return 0;
		for (j = 0; j < NEEDLE_LEN; j++)
			if (path[i + j] != needle[j])
				break;
		found = j == NEEDLE_LEN;
	}
	if (!found)
		return 0;
	e = reserve(sizeof(*e), TT_EV_LIB_OPEN);
	if (!e)
		return 0;
	__builtin_memcpy(e->l.path, path, sizeof(path));
	submit(e);
	return 0;
}

/* A whole message handed to ZMQ by a traced thread (its last part: the
 * parts before carry ZMQ_SNDMORE); the cookie says which function, so
 * where its socket and flags are (enum tt_msg_fn). */
SEC("uprobe")
int BPF_KPROBE(tt_msg_send)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 fn = bpf_get_attach_cookie(ctx), sock, flags;
	/* all read first: a register picked by a branch would be a load from
	 * a moved ctx pointer, which the verifier refuses */
	__u64 p1 = PT_REGS_PARM1(ctx), p2 = PT_REGS_PARM2(ctx);
	__u64 p3 = PT_REGS_PARM3(ctx), p4 = PT_REGS_PARM4(ctx);
	struct tt_event_msg {
		struct tt_hdr h;
		struct tt_msg_send m;
	} *e;

	if (!tgid_traced(id >> 32))
		return 0;
	sock = fn == TT_MSG_ZMQ_MSG_SEND ? p2 : p1;
	flags = fn == TT_MSG_ZMQ_SEND ? p4 : p3;
	if (flags & TT_ZMQ_SNDMORE)
		return 0;
	e = reserve_as(sizeof(*e), TT_EV_MSG_SEND, id);
	if (!e)
		return 0;
	e->m.sock = sock;
	e->m.fn = fn;
	e->m.flags = flags;
	submit(e);
	return 0;
}

struct tt_event_call {
	struct tt_hdr h;
	struct tt_gpu_call c;
};

/* Fills and submits a reserved GPU_CALL record of function fn. */
static __always_inline void cuda_call_submit(struct tt_event_call *e,
					     __u64 ts_enter, __u64 arg0,
					     long ret, __u64 fn, __u16 flags)
{
	e->c.ts_enter = ts_enter;
	e->c.arg0 = arg0;
	e->c.ret = ret;
	e->c.fn = fn;
	e->c.flags = flags;
	submit(e);
}

/* Entry and return of the probed CUDA driver functions; the attach cookie
 * is the function's index in the collector's table. */
SEC("uprobe")
int BPF_KPROBE(tt_cuda_entry)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 key = ((id & 0xffffffff) << 16) | bpf_get_attach_cookie(ctx);
	struct cuda_enter ce;

	if (!tgid_traced(id >> 32))
		return 0;
	ce.ts = bpf_ktime_get_ns();
	ce.arg0 = PT_REGS_PARM1(ctx);
	bpf_map_update_elem(&cuda_enter, &key, &ce, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(tt_cuda_return, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 fn = bpf_get_attach_cookie(ctx);
	__u64 key = ((id & 0xffffffff) << 16) | fn;
	struct cuda_enter *ce = bpf_map_lookup_elem(&cuda_enter, &key);
	struct tt_event_call *e;

	if (!ce)
		return 0;
	e = reserve_as(sizeof(*e), TT_EV_GPU_CALL, id);
	if (e)
		cuda_call_submit(e, ce->ts, ce->arg0, ret, fn, 0);
	bpf_map_delete_elem(&cuda_enter, &key);
	return 0;
}

/* A function probed at its entry only (a kernel launch: the analysis needs
 * its start, docs/design.md §4.5): the record is written there, no return
 * probe (a uretprobe costs more than the uprobe) and no map. */
SEC("uprobe")
int BPF_KPROBE(tt_cuda_entry_only)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct tt_event_call *e;

	if (!tgid_traced(id >> 32))
		return 0;
	e = reserve_as(sizeof(*e), TT_EV_GPU_CALL, id);
	if (e)
		cuda_call_submit(e, e->h.ts, PT_REGS_PARM1(ctx), 0,
				 bpf_get_attach_cookie(ctx), TT_CALL_ENTRY);
	return 0;
}

/* One load per case: clang would merge them into one at a variable offset
 * from ctx, which the verifier refuses. */
#define REG_ARG_CASE(n, expr)                                                  \
	case n:                                                                \
		v = expr;                                                      \
		asm volatile("" : "+r"(v));                                    \
		break

/* The value of argument n (1-based) at a function's entry, or 0. */
static __always_inline __u64 reg_arg(struct pt_regs *ctx, __u64 n)
{
	__u64 v = 0;

	switch (n) {
		REG_ARG_CASE(1, PT_REGS_PARM1(ctx));
		REG_ARG_CASE(2, PT_REGS_PARM2(ctx));
		REG_ARG_CASE(3, PT_REGS_PARM3(ctx));
		REG_ARG_CASE(4, PT_REGS_PARM4(ctx));
		REG_ARG_CASE(5, PT_REGS_PARM5(ctx));
		REG_ARG_CASE(6, TT_REGS_PARM6(ctx));
	}
	return v;
}

/* A marker's peer flags and port (bits 16-31, as tt_mark.spec holds it):
 * named by argument n (0: none), its value v read or not. */
static __always_inline __u32 peer_flags(__u64 n, __u64 v, bool read)
{
	if (!n)
		return 0;
	if (!read || v > TT_MARK_PEER_MAX)
		return TT_MARK_F_PEER_UNREAD;
	return TT_MARK_F_PEER | (__u32)v << 16;
}

/* flags: TT_MARK_F_* below bit 16, the peer port above (peer_flags()) */
static __always_inline void emit_mark(__u64 cookie, __u64 key, __u32 flags)
{
	struct tt_event_mark {
		struct tt_hdr h;
		struct tt_mark m;
	} *e;

	e = reserve(sizeof(*e), TT_EV_MARK);
	if (!e)
		return;
	e->m.key = flags & TT_MARK_F_KEY ? key : 0;
	e->m.kind = TT_MARK_COOKIE_KIND(cookie);
	e->m.flags = (__u16)flags;
	e->m.spec = TT_MARK_SPEC(TT_MARK_COOKIE_SPEC(cookie), flags >> 16);
	submit(e);
}

/* An application marker (record --mark): an entry probe only, never a
 * return probe (a runtime that moves stacks breaks those); the cookie says
 * its kind and which argument registers hold its key and its peer. */
SEC("uprobe")
int BPF_KPROBE(tt_mark)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u64 arg = TT_MARK_COOKIE_ARG(cookie);
	__u64 peer = TT_MARK_COOKIE_PEER(cookie);

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	emit_mark(cookie, reg_arg(ctx, arg),
		  (arg ? TT_MARK_F_KEY : 0) |
			  peer_flags(peer, reg_arg(ctx, peer), true));
	return 0;
}

/* The same on a USDT probe: libbpf keeps the attach cookie for its own
 * argument specs and hands ours back through bpf_usdt_cookie(). */
SEC("usdt")
int BPF_USDT(tt_mark_usdt)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u64 arg = TT_MARK_COOKIE_ARG(cookie);
	__u64 peer_arg = TT_MARK_COOKIE_PEER(cookie);
	long key = 0, peer = 0;
	__u32 flags = 0;
	bool peer_read;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (arg)
		flags = bpf_usdt_arg(ctx, arg - 1, &key) ?
				TT_MARK_F_KEY | TT_MARK_F_UNREAD :
				TT_MARK_F_KEY;
	peer_read = peer_arg && !bpf_usdt_arg(ctx, peer_arg - 1, &peer);
	emit_mark(cookie, key, flags | peer_flags(peer_arg, peer, peer_read));
	return 0;
}

/* The audit event each Python marker waits for, by its index (--mark). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TT_MAX_MARKS);
	__type(key, __u32);
	__type(value, struct tt_py_event);
} py_events SEC(".maps");

/* CPython's object layout in every 64-bit release build of 3.8 to 3.14
 * (the free-threaded build's header differs): an object's type, a
 * variable object's size (an int's: up to 3.11 its signed digit count,
 * from 3.12 a tag with the count above three bits), a type's basic size (a
 * tuple's: where its items start, 24, 32 in 3.14 with its cached hash) and
 * flags, an int's 30-bit digits. */
#define PY_OB_TYPE 8
#define PY_VAR_SIZE 16
#define PY_TP_BASICSIZE 32
#define PY_TP_FLAGS 168
#define PY_TPFLAGS_LONG_SUBCLASS (1ULL << 24)
#define PY_TPFLAGS_TUPLE_SUBCLASS (1ULL << 26)
#define PY_TPFLAGS_UNICODE_SUBCLASS (1ULL << 28)
#define PY_TUPLE_ITEMS_MAX 64
#define PY_LONG_DIGITS 24
#define PY_LONG_SHIFT 30
#define PY_LONG_TAG_SHIFT 3
/* a str's length and state (bit 5 compact, bit 6 ASCII in every one); a
 * compact ASCII str's bytes follow PyASCIIObject, its wstr pointer gone
 * in 3.12 */
#define PY_STR_LENGTH 16
#define PY_STR_STATE 32
#define PY_STR_COMPACT_ASCII (3u << 5)
#define PY_STR_BYTES_311 48
#define PY_STR_BYTES_312 40
/* a str key hashes its first bytes: ids are shorter */
#define PY_STR_KEY_BYTES 128
#define FNV64_OFFSET 0xcbf29ce484222325ULL
#define FNV64_PRIME 0x100000001b3ULL

/* The tp_flags of obj's type: its fast subclass bits say tuple, int, str.
 * Never the type's name: that lies in the interpreter's read-only data,
 * which a process forked from it may not have mapped, and a BPF read
 * takes no page fault (a multiprocessing child). */
static __always_inline __u64 py_type_flags(const void *obj)
{
	const void *type = NULL;
	__u64 flags = 0;

	if (bpf_probe_read_user(&type, sizeof(type), obj + PY_OB_TYPE) ||
	    bpf_probe_read_user(&flags, sizeof(flags), type + PY_TP_FLAGS))
		return 0;
	return flags;
}

/* FNV-1a of a compact ASCII str's first bytes: the same id hashes the
 * same in every process. */
static __always_inline bool py_str_key(const void *str, __u32 layout,
				       __u64 *key)
{
	__u32 at = layout == TT_PY_LAYOUT_312 ? PY_STR_BYTES_312 :
						PY_STR_BYTES_311;
	__u8 bytes[PY_STR_KEY_BYTES];
	__u64 len = 0, h = FNV64_OFFSET;
	__u32 state = 0;

	if (layout == TT_PY_LAYOUT_UNKNOWN ||
	    bpf_probe_read_user(&state, sizeof(state), str + PY_STR_STATE) ||
	    (state & PY_STR_COMPACT_ASCII) != PY_STR_COMPACT_ASCII ||
	    bpf_probe_read_user(&len, sizeof(len), str + PY_STR_LENGTH))
		return false;
	if (len > PY_STR_KEY_BYTES)
		len = PY_STR_KEY_BYTES;
	if (!len || bpf_probe_read_user(bytes, len & (2 * PY_STR_KEY_BYTES - 1),
					str + at))
		return false;
	for (__u32 i = 0; i < PY_STR_KEY_BYTES && i < len; i++)
		h = (h ^ bytes[i]) * FNV64_PRIME;
	*key = h;
	return true;
}

/* An int's value, its sign dropped: its two low digits (60 bits). */
static __always_inline bool py_int_key(const void *num, __u32 layout,
				       __u64 *key)
{
	__u32 digits[2] = {};
	__s64 size = 0, ndigits;

	if (bpf_probe_read_user(&size, sizeof(size), num + PY_VAR_SIZE) ||
	    bpf_probe_read_user(digits, sizeof(digits), num + PY_LONG_DIGITS))
		return false;
	if (layout == TT_PY_LAYOUT_311)
		ndigits = size < 0 ? -size : size;
	else if (layout == TT_PY_LAYOUT_312)
		ndigits = size >> PY_LONG_TAG_SHIFT;
	else /* a tag under 8 is zero's: counts from -2 to 2 read right */
		ndigits = size >= -2 && size <= 2 ? (size < 0 ? -size : size) :
						    size >> PY_LONG_TAG_SHIFT;
	*key = digits[0] |
	       (ndigits >= 2 ? (__u64)digits[1] << PY_LONG_SHIFT : 0);
	return true;
}

/* Item n (1-based) of the audit event's argument tuple: false if there is
 * none, or no tuple where one is. */
static __always_inline bool py_item(const void *args, __u32 n,
				    const void **item)
{
	const void *type = NULL;
	__s64 size = 0, items = 0;

	return (py_type_flags(args) & PY_TPFLAGS_TUPLE_SUBCLASS) &&
	       !bpf_probe_read_user(&size, sizeof(size), args + PY_VAR_SIZE) &&
	       n <= size &&
	       !bpf_probe_read_user(&type, sizeof(type), args + PY_OB_TYPE) &&
	       !bpf_probe_read_user(&items, sizeof(items),
				    type + PY_TP_BASICSIZE) &&
	       items >= PY_VAR_SIZE + 8 && items <= PY_TUPLE_ITEMS_MAX &&
	       !bpf_probe_read_user(item, sizeof(*item),
				    args + items + 8 * (n - 1));
}

/* Item n as a key: an int's value or an ASCII str's hash
 * (TT_MARK_F_VALUE), else the object's address (the same object within
 * one process); the flags, with TT_MARK_F_UNREAD when there is no item. */
static __always_inline __u16 py_key(const void *args, __u32 n, __u32 layout,
				    __u64 *key)
{
	const void *item = NULL;
	__u64 type_flags;

	if (!py_item(args, n, &item))
		return TT_MARK_F_KEY | TT_MARK_F_UNREAD;
	*key = (__u64)item;
	type_flags = py_type_flags(item);
	if (((type_flags & PY_TPFLAGS_LONG_SUBCLASS) &&
	     py_int_key(item, layout, key)) ||
	    ((type_flags & PY_TPFLAGS_UNICODE_SUBCLASS) &&
	     py_str_key(item, layout, key)))
		return TT_MARK_F_KEY | TT_MARK_F_VALUE;
	return TT_MARK_F_KEY;
}

/* Item n as an int's value (its low 60 bits): false if it is none. */
static __always_inline bool py_int_item(const void *args, __u32 n, __u32 layout,
					__u64 *v)
{
	const void *item = NULL;

	return py_item(args, n, &item) &&
	       (py_type_flags(item) & PY_TPFLAGS_LONG_SUBCLASS) &&
	       py_int_key(item, layout, v);
}

/* A Python marker: CPython's python:audit probe (sys.audit(event, *args)),
 * its arguments the event's name and the tuple of the rest; only the event
 * the marker names counts (a longer name, read one past, does not). */
SEC("usdt")
int BPF_USDT(tt_mark_python, const char *event, const void *args)
{
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 arg = TT_MARK_COOKIE_ARG(cookie),
	      spec = TT_MARK_COOKIE_SPEC(cookie),
	      peer_arg = TT_MARK_COOKIE_PEER(cookie),
	      layout = TT_MARK_COOKIE_PY_LAYOUT(cookie);
	char name[TT_PY_EVENT_LEN + 1];
	struct tt_py_event *want;
	__u64 key = 0, peer = 0;
	__u32 flags = 0;
	bool peer_read;

	if (!tgid_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	want = bpf_map_lookup_elem(&py_events, &spec);
	if (!want || bpf_probe_read_user_str(name, sizeof(name), event) < 0)
		return 0;
	for (int i = 0; i < TT_PY_EVENT_LEN; i++) {
		if (name[i] != want->name[i])
			return 0;
		if (!name[i])
			break;
	}
	if (arg)
		flags = py_key(args, arg, layout, &key);
	/* the peer port: an int */
	peer_read = peer_arg && py_int_item(args, peer_arg, layout, &peer);
	emit_mark(cookie, key, flags | peer_flags(peer_arg, peer, peer_read));
	return 0;
}

#include "tt_go.bpf.h"
