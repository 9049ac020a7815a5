/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Records shared by the BPF programs and user space. Fixed-width types only:
 * this header is included both after vmlinux.h (BPF) and after <linux/types.h>
 * (user space), so it includes neither.
 */
#ifndef __TTFTRACE_H
#define __TTFTRACE_H

#define TT_COMM_LEN 16
/* Bytes of each send copied for classification (status line, SSE, chunked). */
#define TT_SEND_CAPTURE 256
/* iovecs of a writev/sendmsg gathered into the capture: Node writes four
 * per SSE event (chunk size, CRLF, event, CRLF) and coalesces the events
 * queued while its socket was busy into one writev */
#define TT_SEND_IOVECS 32
/* last bytes of a send longer than the capture: where its end (the chunked
 * terminator, "data: [DONE]") lies */
#define TT_SEND_TAIL 32
/* iovecs of a writev/sendmsg looked through for its last byte */
#define TT_SEND_TAIL_IOVECS 64
/* bytes of a send past the capture whose "data:" lines are counted
 * (tt_send_raw.data_lines): Node coalesces a burst of events into one
 * writev */
#define TT_SEND_COUNT 4096
/* tgids the traced_tgids map holds, a byte each: the kernel's PID_MAX_LIMIT
 * on 64-bit, the most kernel.pid_max can be raised to */
#define TT_PID_MAX_LIMIT (4 * 1024 * 1024)

/* One value of traced_tgids: tgids 8n to 8n+7, non-zero when traced. */
struct tt_tgid_word {
	__u8 b[8];
};

enum tt_event_type {
	TT_EV_NONE = 0,
	TT_EV_FORK = 1, /* hdr: parent; payload: the child */
	TT_EV_EXIT = 2, /* hdr: the thread that exits */
	TT_EV_COMM = 3, /* hdr: thread whose name is now comm (exec, start) */
	TT_EV_CONN_OPEN = 4, /* server-side connection of a traced listener */
	TT_EV_CONN_CLOSE = 5,
	TT_EV_DATA_READY = 6, /* kernel has bytes for the socket (softirq) */
	TT_EV_RECV = 7, /* the app read len bytes */
	TT_EV_SEND = 8, /* the app sent len bytes, classified */
	TT_EV_XMIT = 9, /* an skb of a traced socket reached the device */
	TT_EV_LOST = 10, /* records the ring buffer could not take */
	TT_EV_SEND_RAW = 11, /* BPF to collector only: send with its first bytes */
	TT_EV_SWITCH = 12, /* hdr: prev (current at the switch); payload: next */
	TT_EV_WAKING = 13, /* hdr: current (the waker outside irq context) */
	TT_EV_WAKEUP_NEW = 14, /* a new thread becomes runnable */
	TT_EV_BLOCK = 15, /* block request insert/issue/complete */
	TT_EV_FAULT = 16, /* file-backed page fault (filemap) */
	TT_EV_IOCTL = 17, /* an ioctl on a GPU device node, at its return */
	TT_EV_GPU_CALL = 18, /* a probed CUDA driver call, at its return (at
			      * its entry: TT_CALL_ENTRY) */
	TT_EV_LIB_OPEN = 19, /* BPF to collector only: a libcuda was opened */
	TT_EV_RTLOCK = 20, /* user space only: a runtime's own locks in tgid */
	TT_EV_MARK = 21, /* an application marker (record --mark) was hit */
	TT_EV_FILEIO = 22, /* a read syscall on a file or block device, at exit */
	TT_EV_ENERGY = 23, /* user space only: an energy or power sensor's reading */
	TT_EV_GO = 24, /* a goroutine's state change (Go's scheduler) */
	TT_EV_GO_CHAN = 25, /* a Go channel send, or a receive from its buffer */
	TT_EV_DATA_WAKE = 26, /* hdr: a writer; payload (tt_wake): the last
			       * reader of the eventfd or unix socket written */
	TT_EV_DATA_READ = 27, /* hdr: that reader reads it again (payload
			       * tt_wake: itself), a data wake before it */
	TT_EV_MSG_SEND = 28, /* hdr: a thread handing a whole message to a
			      * messaging library (ZMQ), at the call */
	TT_EV_DATA_READY_DEV = 29, /* DATA_READY with the time the device
				    * received the newest queued bytes */
	TT_EV_STEAL = 30, /* hdr: a thread switched out whose CPU the
			   * hypervisor took while it ran (tt_steal) */
	TT_EV_PIPE_IO = 31, /* hdr: a traced thread wrote to or read from a
			     * pipe a traced thread reads (tt_pipe_io) */
	TT_EV_TLS_PLAIN = 32, /* BPF to collector only: an SSL_write that
			       * sent nothing itself (tt_tls_plain) */
	TT_EV_POLL = 33, /* hdr: a reader of a traced connection whose epoll
			  * wait returned (tt_poll), at its return */
	TT_EV_MAX
};

/* tt_hdr.flags */
#define TT_F_HARDIRQ (1u << 0) /* emitted in hard interrupt context */
#define TT_F_SOFTIRQ (1u << 1) /* emitted in softirq context */
/* never recorded: a wake the analysis derives from a runtime's own events,
 * never a hand-off (a goroutine readied by the Go scheduler itself, or
 * started: docs/design.md §4.10) */
#define TT_F_RUNTIME (1u << 2)
/* DATA_READY: the peer's port is a client socket of a traced process on
 * this host, a hop (docs/design.md §4.11); HOP_SENDER: current is of that
 * process (on loopback the delivery runs in the sender's send) */
#define TT_F_HOP (1u << 3)
#define TT_F_HOP_SENDER (1u << 4)
/* RECV on a client socket of a traced process (a gateway reads its
 * runner's answer, §4.11): sk is the client socket, and the flags' high
 * half its local port, the runner's connection's peer port */
#define TT_F_HOP_REPLY (1u << 5)
#define TT_F_PORT_SHIFT 16

struct tt_hdr {
	__u64 ts; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 tgid; /* current task when emitted */
	__u32 tid;
	__u16 type; /* enum tt_event_type */
	__u16 cpu;
	__u32 flags;
};

struct tt_fork {
	__u32 child_tgid;
	__u32 child_tid;
	char comm[TT_COMM_LEN];
};

struct tt_comm {
	char comm[TT_COMM_LEN];
};

struct tt_conn {
	__u64 sk; /* kernel socket address: the connection's identity while open */
	__u16 family; /* AF_INET or AF_INET6 */
	__u16 lport; /* host order */
	__u16 rport;
	__u16 pad;
	__u8 laddr[16]; /* IPv4 in the first 4 bytes */
	__u8 raddr[16];
};

/* DATA_READY, RECV and CONN_CLOSE */
struct tt_sock {
	__u64 sk;
	/* RECV: bytes read (or -errno); DATA_READY: bytes queued (a FIN
	 * counts one); CONN_CLOSE: the new TCP state */
	__s64 len;
};

/* DATA_READY_DEV: a DATA_READY whose newest queued segment carries the
 * kernel's receive stamp, taken where the device handed it to the stack
 * (netif_rx, NAPI); a backlog or softirq deferral can hold it a while
 * before the socket has it (docs/design.md §3.2). */
struct tt_sock_dev {
	__u64 sk;
	__s64 len; /* bytes queued, as DATA_READY */
	__u64 ts_dev; /* CLOCK_MONOTONIC, at most the header's ts and at
		       * most TT_DEV_LEAD_MAX_NS before it */
};

/* A receive stamp further back is no arrival of the bytes just queued (a
 * clock stepped): the socket's own time stands. */
#define TT_DEV_LEAD_MAX_NS (10ull * 1000 * 1000)

/* CONN_CLOSE to this state is the peer's FIN: a half-close, the server may
 * still read and answer; any other CONN_CLOSE ends the connection. */
#define TT_TCP_CLOSE_WAIT 8

/* Send classes, decided in user space from the first bytes of a send. */
enum tt_send_class {
	TT_SEND_OTHER = 0, /* response bytes with no known framing */
	TT_SEND_HEADERS = 1, /* status line and headers only */
	TT_SEND_TOKEN = 2, /* carries token data (SSE data event, chunk) */
	TT_SEND_DONE = 3, /* end of stream: SSE [DONE] or last chunk */
	TT_SEND_TOKEN_DONE = 4, /* token data and the end in one send */
};

/* tt_send.flags */
#define TT_SEND_F_HEADERS (1u << 0) /* begins with an HTTP status line */
#define TT_SEND_F_CHUNKED (1u << 1) /* chunked transfer framing seen */
#define TT_SEND_F_SSE (1u << 2) /* SSE "data:" event seen */
/* the body's last byte, by its framing (Content-Length reached, the last
 * chunk): the response ends with this send */
#define TT_SEND_F_END (1u << 3)
/* a status line whose body has no length and is not chunked: it ends when
 * the connection closes */
#define TT_SEND_F_CLOSE_DELIM (1u << 4)
#define TT_SEND_F_INTERIM (1u << 8) /* an HTTP 1xx interim response */
/* begins with a TLS record's header: the connection is encrypted, its
 * framing and tokens unreadable (docs/design.md §3.1, "TLS") */
#define TT_SEND_F_TLS (1u << 9)
/* its bytes were classified from the plaintext an OpenSSL SSL_write was
 * given (a probe on the library), not from the encrypted ones sent */
#define TT_SEND_F_TLS_PLAIN (1u << 10)
/* sent on an HTTP/2 connection (gRPC): classified from its frames */
#define TT_SEND_F_H2 (1u << 11)
/* HTTP/2: it carries HEADERS or DATA of a stream whose response was left
 * unended for another's: the connection's streams are multiplexed, which
 * the analysis does not tell apart */
#define TT_SEND_F_H2_MUX (1u << 12)

struct tt_send {
	__u64 sk;
	__s64 len; /* bytes sent (or -errno) */
	__u64 ts_enter; /* syscall entry: when the app decided to send */
	__u32 seq; /* TCP sequence of the first byte sent */
	__u16 cls; /* enum tt_send_class */
	__u16 tokens; /* token events in the captured bytes */
	__u32 flags; /* TT_SEND_F_* */
	__u32 status; /* HTTP status of a status line it begins with, or 0 */
};

struct tt_xmit {
	__u64 sk;
	__u32 seq; /* TCP sequence of the first payload byte */
	__u32 end_seq; /* one past the last payload byte */
	__u32 len; /* skb length */
	__u32 pad;
};

struct tt_send_raw {
	struct tt_send send;
	__u16 nbytes; /* valid bytes in data */
	/* valid bytes in tail: the send's last ones (of its last iovec only),
	 * 0 when data holds the whole send */
	__u16 ntail;
	/* non-zero: xmit and xmit_ts are an XMIT of this send's socket made
	 * by this thread inside this send, on this CPU in process context,
	 * carried here instead of in a record of its own; the collector
	 * hands it on as the XMIT event it stands for (docs/design.md §2.4) */
	__u16 xmit_held;
	/* a send longer than the capture: the "data:" line starts in its
	 * first TT_SEND_COUNT bytes whose value does not begin with '['
	 * (its SSE events, not [DONE]), counted as it went out; 0 when not
	 * counted (docs/design.md §2.4) */
	__u16 data_lines;
	/* made inside OpenSSL's SSL_write (docs/design.md §3.1, "TLS"): 1
	 * for its first send, whose data, tail and data_lines are then the
	 * plaintext's, plain_len bytes; 2 for a later one (nothing of it) */
	__u32 tls;
	__u32 plain_len;
	/* the thread's TT_EV_TLS_PLAIN records this send carries: those of
	 * seq in [tls_from, tls_to) (its earlier ones went with other sends);
	 * tls_key, when not 0, names a goroutine's instead (their header's
	 * tid: TT_TLS_GO_KEY bit set) */
	__u32 tls_from, tls_to;
	__u32 tls_key;
	__u32 pad2;
	__u64 xmit_ts;
	struct tt_xmit xmit;
	__u8 data[TT_SEND_CAPTURE];
	__u8 tail[TT_SEND_TAIL];
};

/*
 * TT_EV_STEAL: the vCPU under the header's thread was stopped by the
 * hypervisor (steal time) for ns in all since it was switched in at ts_on,
 * read from the kernel's steal clock at the switch-out whose record it
 * follows (docs/design.md §4.7). The guest's clocks ran on: ns
 * of [ts_on, hdr.ts) was no work of the thread's.
 */
struct tt_steal {
	__u64 ns;
	__u64 ts_on;
};

/* TT_EV_POLL: an event loop's poll returned nready fds (docs/design.md
 * §4.4, "One poll's reads"): the reads it then makes until the next are
 * what that poll returned; one that returned none is a turn without reads
 * (recorded when it is the first poll since the thread's last read of a
 * connection; recorders before 2026-12 left those out). Only for threads
 * that read a traced server connection. */
struct tt_poll {
	__s32 nready;
	__u32 syscall_nr; /* epoll_wait, epoll_pwait or epoll_pwait2 */
};

/* TT_EV_PIPE_IO: a pipe's bytes in order, counted over its traced writes
 * and reads: bytes [pos, pos + len) of the pipe's stream; a read takes the
 * bytes of the writes whose ranges it covers (docs/design.md §4.4, "A
 * pipe's bytes"). A write to an empty pipe restarts the count of bytes
 * read at the bytes written: what untraced threads wrote or read before
 * leaves no drift past that. */
struct tt_pipe_io {
	__u64 pipe; /* the pipe's inode (its id, as a data wake's object) */
	__u64 pos;
	__u32 len; /* a write's bytes asked, a read's bytes got */
	__u32 op; /* enum tt_pipe_op */
};

enum tt_pipe_op {
	TT_PIPE_WRITE = 1, /* at the write's entry */
	TT_PIPE_READ = 2, /* at the read's exit */
};

/* Less steal than this in one run of a thread is no record (a host's
 * interrupt, not another guest's turn). */
#define TT_STEAL_MIN_NS (20ull * 1000)

struct tt_lost {
	__u64 count; /* records lost on this CPU since the previous TT_EV_LOST */
	__u64 since_ts; /* the loss happened in (since_ts, hdr.ts] */
	__u32 lost_cpu;
	__u32 pad;
};

/* tt_switch.sw_flags */
#define TT_SW_PREV_TRACED (1u << 0) /* prev is a traced thread */
#define TT_SW_NEXT_TRACED (1u << 1) /* next is a traced thread */
#define TT_SW_IOWAIT (1u << 2) /* prev->in_iowait: block I/O or fault */
#define TT_SW_FD (1u << 3) /* fd_* describe the fd in arg0 (or poll's) */
#define TT_SW_ANON_INODE (1u << 4) /* the fd is an anon inode: eventfd,
					* timerfd, epoll... (not a file) */
#define TT_SW_TIMED (1u << 5) /* a futex wait with a timeout */
/* prev is a goroutine that exited (user space's goroutine pass writes it,
 * never the kernel: docs/design.md §4.10) */
#define TT_SW_GO_EXIT (1u << 6)

/*
 * A context switch on hdr.cpu at hdr.ts. hdr.tgid/tid is prev; for prev the
 * switch-out reason is read from its syscall registers: the syscall number,
 * its first argument (futex word, fd, ...) and, for fd syscalls, the inode.
 */
struct tt_switch {
	__u32 next_tid;
	__u32 next_tgid;
	__s64 prev_state; /* 0: preempted (still runnable); else blocked */
	__s32 syscall_nr; /* prev's syscall, -1 when not in a syscall */
	__u32 sw_flags; /* TT_SW_* */
	__u64 arg0; /* the syscall's first argument */
	__u64 fd_ino;
	__u32 fd_mode; /* S_IFSOCK, S_IFCHR, S_IFREG, S_IFIFO ... */
	__u32 fd_rdev; /* device number of a char/block device node */
	__u32 fd_dev; /* filesystem device */
	__u32 pad;
};

/*
 * hdr is current: the waker when hdr.flags has neither TT_F_HARDIRQ nor
 * TT_F_SOFTIRQ. In softirq, current is whoever the softirq interrupted or
 * ran after (on loopback TCP: the sender).
 */
struct tt_wake {
	__u32 target_tid;
	__u32 target_tgid;
	__s32 waker_syscall; /* current's syscall, -1 in irq context or none */
	__u32 target_cpu; /* TT_EV_DATA_WAKE: enum tt_ipc_kind */
	__u64 waker_arg0; /* its first argument: FUTEX_WAKE's word */
};

/* TT_EV_MSG_SEND: a message handed to a messaging library. ZMQ queues it
 * for its I/O thread and signals that thread only when it sleeps: several
 * sends in a row make one wakeup, or none (docs/design.md §4.4). */
struct tt_msg_send {
	__u64 sock; /* the library's socket (ZMQ: its void *) */
	__u32 fn; /* enum tt_msg_fn: the function called */
	__u32 flags; /* its flags argument */
};

/* The probed functions; the uprobe cookie. Where their socket and flags
 * are: zmq_msg_send(msg, s, flags), zmq_send(s, buf, len, flags),
 * zmq_sendmsg(s, msg, flags). */
enum tt_msg_fn {
	TT_MSG_ZMQ_MSG_SEND = 1,
	TT_MSG_ZMQ_SEND = 2,
	TT_MSG_ZMQ_SENDMSG = 3,
};

#define TT_ZMQ_SNDMORE 2 /* ZMQ_SNDMORE: more parts of the message follow */

/* What a TT_EV_DATA_WAKE's writer wrote to (docs/design.md §4.4). */
enum tt_ipc_kind {
	TT_IPC_UNIX = 1, /* an AF_UNIX socket (sk_data_ready) */
	TT_IPC_EVENTFD = 2, /* an eventfd (an 8-byte write(2)) */
	TT_IPC_PIPE = 3, /* a pipe or FIFO (write(2), writev(2)) */
	/* DATA_READ only: a pipe written to behind unread data since the
	 * reader's last read, and no data wake */
	TT_IPC_PIPE_BEHIND = 4,
};

enum tt_block_phase {
	TT_BLK_INSERT = 0,
	TT_BLK_ISSUE = 1,
	TT_BLK_COMPLETE = 2,
};

struct tt_block {
	__u64 rq; /* struct request *: pairs the phases */
	__u64 sector;
	__u32 nr_bytes;
	__u32 dev;
	__u16 phase; /* enum tt_block_phase */
	__u16 write; /* 1 for writes */
	__s32 error;
};

struct tt_fault {
	__u64 ino;
	__u64 index; /* page index in the file */
	__u32 dev;
	__u32 pad;
};

/* A read syscall (read, pread64, readv, preadv, preadv2) on a regular file
 * or a block device node, at its return: the interval [ts_enter, hdr.ts). */
struct tt_fileio {
	__u64 ts_enter;
	__s64 ret; /* bytes read, or -errno */
	__u64 ino; /* the file's inode ... */
	__u32 dev; /* ... and filesystem device */
	__u32 rdev; /* a block device node's device number, else 0 */
	__u32 fd;
	__u32 mode; /* i_mode: S_IFREG or S_IFBLK and permissions */
	__u32 f_flags; /* the open file's flags (O_DIRECT ...) */
	__s32 syscall; /* TT_NR_* of tt_arch.h */
};

struct tt_ioctl {
	__u64 ts_enter;
	__s64 ret;
	__u32 cmd;
	__u32 fd;
	__u32 rdev; /* the node's device number (kernel dev_t), or 0 */
	__u32 dev; /* and its filesystem device and inode */
	__u64 ino;
};

struct tt_gpu_call {
	__u64 ts_enter;
	__u64 arg0; /* the first argument (stream, event, graph, function) */
	__s32 ret; /* CUresult; 0 with TT_CALL_ENTRY (not known) */
	__u16 fn; /* index into the collector's CUDA function table */
	__u16 flags; /* TT_CALL_* */
};

/* tt_gpu_call.flags: recorded at the call's entry by a probe with no
 * return probe (a kernel launch under --gpu-probes=all): ts_enter is the
 * header's ts, the end and the CUresult are not known */
#define TT_CALL_ENTRY (1u << 0)

/* The language runtimes whose own synchronization is told apart. */
enum tt_rt_kind {
	TT_RT_CPYTHON = 1, /* _PyRuntime: the GIL (3.8-3.13), runtime locks */
	TT_RT_GO = 2, /* a Go program: every futex word is its runtime's */
};

/* A runtime's own synchronization in the header's tgid, found by the
 * recorder in the process's memory map: futex words in [lo, hi) are the
 * runtime's (an interpreter lock), never the application's hand-offs. */
struct tt_rtlock {
	__u64 lo, hi;
	__u32 kind; /* enum tt_rt_kind */
	__u32 pad;
};

/* Go's goroutine states (runtime/runtime2.go, stable since Go 1.0). */
enum tt_go_state {
	TT_GO_IDLE = 0,
	TT_GO_RUNNABLE = 1,
	TT_GO_RUNNING = 2,
	TT_GO_SYSCALL = 3,
	TT_GO_WAITING = 4,
	TT_GO_DEAD = 6,
	TT_GO_COPYSTACK = 8,
	TT_GO_PREEMPTED = 9,
};

/*
 * Goroutine g changed state from -> to on the header's thread (an M), at
 * the entry of the Go scheduler's function that makes the change (or of
 * runtime.casgstatus). Running <-> syscall changes are left out: the
 * goroutine keeps its thread through a syscall.
 */
struct tt_go {
	__u64 g; /* the goroutine's struct g: its identity while it lives */
	__u32 from, to; /* enum tt_go_state */
};

/* tt_go_chan.op, also the uprobe cookie of the channel functions */
enum tt_go_chan_op {
	TT_GO_CHAN_SEND = 1, /* runtime.chansend: the element queued or handed */
	TT_GO_CHAN_RECV = 2, /* runtime.chanrecv with elements in the buffer */
};

/*
 * A channel operation on the header's thread (an M), at the entry of
 * runtime.chansend or runtime.chanrecv, with the channel's buffered count
 * then: a receive that finds qcount elements takes the one the qcount-th
 * latest send queued, a hand-off that wakes nobody (docs/design.md §4.10).
 * Receives from an empty buffer are left out: they block, and the sender's
 * readying of the receiver is the hand-off.
 */
struct tt_go_chan {
	__u64 ch; /* the channel's struct hchan */
	__u32 op; /* enum tt_go_chan_op */
	__u32 qcount; /* hchan.qcount (its first word) at the entry */
};

/* The uprobe cookie of a scheduler function: the change it makes. */
#define TT_GO_COOKIE(from, to) ((__u64)(from) | (__u64)(to) << 8)
#define TT_GO_COOKIE_FROM(c) ((__u32)((c) & 0xff))
#define TT_GO_COOKIE_TO(c) ((__u32)(((c) >> 8) & 0xff))

/* What an application marker says of the request (docs/design.md §4.9). */
enum tt_mark_kind {
	TT_MARK_ENQUEUE = 1, /* handed on to be computed: the queue starts */
	TT_MARK_DISPATCH = 2, /* taken up for compute: the queue ends */
	TT_MARK_TOKEN = 3, /* its first token is handed toward the writer */
};

/* tt_mark.flags */
#define TT_MARK_F_KEY (1u << 0) /* key is an argument's value */
/* a Python marker's key: the same in every process (an int, a str) */
#define TT_MARK_F_VALUE (1u << 1)
/* a key was named but could not be read (no such argument, an unknown
 * object layout): the marker names no request */
#define TT_MARK_F_UNREAD (1u << 2)
/* the spec's high half is the request's peer port (peer=argM) */
#define TT_MARK_F_PEER (1u << 3)
/* a peer was named but could not be read (not an int, over 65535): the
 * marker is bound as one without */
#define TT_MARK_F_PEER_UNREAD (1u << 4)
/* a peer port's largest value */
#define TT_MARK_PEER_MAX 0xffff

/* tt_mark.spec: which --mark (its index) and, with TT_MARK_F_PEER, the
 * port of the request's client (the old u32 index: the format unchanged) */
#define TT_MARK_SPEC(index, peer) ((__u32)(index) | (__u32)(peer) << 16)
#define TT_MARK_SPEC_INDEX(s) ((__u16)(s))
#define TT_MARK_SPEC_PEER(s) ((__u16)((s) >> 16))

/*
 * The uprobe cookie of a marker: its kind, the argument holding its key
 * and the one holding its peer port (1-based, 0: none), its index among
 * the --mark options, and a Python marker's interpreter layout.
 */
#define TT_MARK_COOKIE(kind, arg, spec, peer, layout)              \
	((__u64)(kind) | (__u64)(arg) << 8 | (__u64)(spec) << 16 | \
	 (__u64)(layout) << 32 | (__u64)(peer) << 40)
#define TT_MARK_COOKIE_KIND(c) ((c) & 0xff)
#define TT_MARK_COOKIE_ARG(c) (((c) >> 8) & 0xff)
#define TT_MARK_COOKIE_SPEC(c) (((c) >> 16) & 0xffff)
#define TT_MARK_COOKIE_PY_LAYOUT(c) (((c) >> 32) & 0xff)
#define TT_MARK_COOKIE_PEER(c) (((c) >> 40) & 0xff)

/* The objects a Python marker's key is read from, by interpreter. */
enum tt_py_layout {
	TT_PY_LAYOUT_UNKNOWN = 0, /* int digits guessed, str by address */
	TT_PY_LAYOUT_311 = 1, /* 3.8-3.11: an int's digit count, str's wstr */
	TT_PY_LAYOUT_312 = 2, /* 3.12 on: an int's tag, no wstr */
};

/* --mark options a recording takes at most */
#define TT_MAX_MARKS 16
/* a Python marker's audit event name, its NUL included, at most */
#define TT_PY_EVENT_LEN 64

/* The audit event a Python marker (KIND=python:EVENT) waits for, by the
 * marker's index: sys.audit(EVENT, ...) fires CPython's python:audit probe. */
struct tt_py_event {
	char name[TT_PY_EVENT_LEN];
};

/* hdr: the thread that hit the marker, at the probed instruction */
struct tt_mark {
	__u64 key; /* the named argument's value (TT_MARK_F_KEY), else 0 */
	__u16 kind; /* enum tt_mark_kind */
	__u16 flags; /* TT_MARK_F_* */
	__u32 spec; /* TT_MARK_SPEC: which --mark (in the order given), peer */
};

/* What a TT_EV_ENERGY reading is (docs/design.md §9). */
enum tt_energy_kind {
	TT_ENERGY_COUNTER = 1, /* value: a cumulative counter in uJ */
	TT_ENERGY_POWER = 2, /* value: instantaneous power in uW */
	TT_ENERGY_UTIL = 3, /* value: a GPU's busy percentage, 0 to 100 */
};

/* Where a sensor is read. */
enum tt_energy_source {
	TT_ESRC_POWERCAP = 1, /* RAPL: /sys/class/powercap zones */
	TT_ESRC_HWMON = 2, /* /sys/class/hwmon energy and power inputs */
	TT_ESRC_NVML = 3, /* an NVIDIA GPU through libnvidia-ml */
};

#define TT_ENERGY_NAME_LEN 48

/* One reading of one sensor by the recorder (header tgid and tid 0): at
 * the start, every second and at the end of a recording. */
struct tt_energy {
	__u64 value; /* as kind says */
	/* a COUNTER wraps to 0 after this value (RAPL's max_energy_range_uj);
	 * 0: it does not wrap */
	__u64 max;
	__u16 kind; /* enum tt_energy_kind */
	__u16 source; /* enum tt_energy_source */
	__u16 domain; /* the sensor's index in this recording, 0, 1, ... */
	__u16 pad;
	char name[TT_ENERGY_NAME_LEN]; /* "package-0", "gpu0 NVIDIA H200" */
};

#define TT_LIB_PATH_LEN 240

struct tt_lib_open {
	char path[TT_LIB_PATH_LEN];
};

/*
 * TT_EV_TLS_PLAIN: an OpenSSL SSL_write of a traced thread returned
 * having made no send: its BIO is memory (asyncio's and uvloop's SSL,
 * Node's TLS), and the thread's next send carries its records. The
 * collector classifies that send from these bytes (docs/design.md §3.1,
 * "TLS"). As tt_send_raw: the first bytes, the last, the data: lines.
 */
/* A goroutine's TLS pieces are named by a key with this bit, which no
 * thread id has (docs/design.md §3.1, "TLS") */
#define TT_TLS_GO_KEY 0x80000000u

struct tt_tls_plain {
	__u32 len; /* plaintext bytes written */
	__u32 seq; /* the thread's count of them */
	__u16 nbytes;
	__u16 ntail;
	__u16 data_lines;
	__u16 pad;
	__u8 data[TT_SEND_CAPTURE];
	__u8 tail[TT_SEND_TAIL];
};

#endif /* __TTFTRACE_H */
