/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The collector: loads and attaches the BPF programs, keeps the in-kernel
 * filter (traced tgids, their listening ports) and turns ring buffer records
 * into the event stream, classifying sends on the way (their bytes go no
 * further than this module).
 */
#ifndef TT_COLLECTOR_H
#define TT_COLLECTOR_H

#include <stdbool.h>
#include <sys/types.h>
#include "env.h"
#include "event.h"

/* Returns 0 to go on, or a negative errno to stop polling. */
typedef int (*tt_event_fn)(void *ctx, const struct tt_event *ev);

/* Receives one message of the libraries under the collector. */
typedef void (*tt_collector_log_fn)(const char *msg);

struct tt_collector_opts {
	__u32 ringbuf_bytes; /* 0: the default (16 MiB); a power of two */
	tt_event_fn fn;
	void *ctx;
	int verbose; /* libbpf messages: 0 errors, 1 warnings, 2 debug */
	/* where those messages go (a line each, newline included); NULL:
	 * nowhere. The collector itself never prints. */
	tt_collector_log_fn log;
	const char *gpu_probes; /* "none", "sync" (NULL: sync) or "all" */
	const char *msg_probes; /* "zmq" (NULL: zmq) or "none" */
	const char *tls_probes; /* "all" (NULL: all), "openssl" or "none" */
	const struct tt_dev_info *devs; /* GPU device nodes to trace */
	size_t ndevs;
};

struct tt_collector;

struct tt_collector *tt_collector_open(const struct tt_collector_opts *o,
				       char *err, size_t errlen);
/* Traces pid, its threads, its descendants and their listening TCP ports. */
int tt_collector_trace_pid(struct tt_collector *c, pid_t pid, char *err,
			   size_t errlen);
/* Waits up to timeout_ms, hands every record to fn. Events or -errno. */
int tt_collector_poll(struct tt_collector *c, int timeout_ms);
/* Puts the CUDA uprobes on the library fd holds (an O_PATH fd from
 * cudalib.h's checks; once per file; name is for messages). Number of
 * functions probed, or -errno with a one-line reason in err. */
int tt_collector_probe_cuda_fd(struct tt_collector *c, int fd,
			       const char *name, char *err, size_t errlen);
/* Puts the goroutine probes (the Go scheduler's functions, else
 * runtime.casgstatus; entry only) on the Go program fd holds (O_PATH);
 * once per file. 1 when attached, 0 when it was already, or -errno with a
 * one-line reason in err. */
int tt_collector_probe_go_fd(struct tt_collector *c, int fd,
			     const char *name, char *err, size_t errlen);
/* Puts the TLS probe on the Go program fd holds (O_PATH), unless
 * --tls-probes says otherwise: its crypto/tls.(*Conn).Write, whose plaintext the
 * sends that follow carry (docs/design.md §3.1, "TLS"); once per file.
 * 1 when attached, 0 when not (already, none, no crypto/tls), -ENOMEM. */
int tt_collector_probe_go_tls_fd(struct tt_collector *c, int fd);
struct tt_mark_spec;
/* Puts application marker m (its index among the --mark options) on its
 * file, for every process (the BPF side keeps the traced ones): 0, or
 * -errno with a one-line reason in err. */
int tt_collector_mark(struct tt_collector *c, const struct tt_mark_spec *m,
		      __u32 index, char *err, size_t errlen);
/* The client ports of traced processes are marked (tcp_sendmsg_locked):
 * a gateway's calls to its runner are told as hops (docs/design.md §4.11). */
bool tt_collector_hops(const struct tt_collector *c);
/* Hits of the goroutine probe so far, all CPUs, traced or not. */
__u64 tt_collector_go_hits(const struct tt_collector *c);
/* Takes the goroutine probe off every Go program, for good. */
void tt_collector_unprobe_go(struct tt_collector *c);
/* The ZMQ send functions probed (--msg-probes), and in *libs the
 * libraries they are in. */
int tt_collector_msg_stats(const struct tt_collector *c, int *libs);
/* The same of OpenSSL's write functions (--tls-probes). */
int tt_collector_tls_stats(const struct tt_collector *c, int *libs);
/* Uprobe attach counts so far: libraries, functions and, of those, the
 * ones probed at their entry only (tt_cuda_fn_entry_only). */
void tt_collector_cuda_stats(struct tt_collector *c, int *libs, int *fns,
			     int *entry_only);
/* Takes the oldest message of the library prober (a library opened by a
 * traced process probed, or refused): 1, or 0 when none waits. */
int tt_collector_message(struct tt_collector *c, char *buf, size_t len);
/* Emits a TT_EV_LOST event per CPU whose refused-record count grew. */
int tt_collector_check_lost(struct tt_collector *c);
__u64 tt_collector_lost_total(const struct tt_collector *c);
/* XMITs that came inside their send's record (docs/design.md §2.4). */
__u64 tt_collector_xmits_held(const struct tt_collector *c);
/* The tgids still traced (in the kernel map: a process leaves it when its
 * last thread exits), for the process table and to know when to stop.
 * The map is scanned again only after it changed (docs/design.md §2.4). */
int tt_collector_traced_tgids(struct tt_collector *c, __u32 *tgids, int max);
/* The TCP ports the traced processes listen on (or listened on). */
int tt_collector_listen_ports(const struct tt_collector *c, __u16 *ports,
			      int max);
void tt_collector_close(struct tt_collector *c);


#endif /* TT_COLLECTOR_H */
