// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The collector: loads the BPF programs, drains the ring buffer into
 * events, probes CUDA libraries; it returns messages, never prints. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "classify.h"
#include "gpu.h"
#include "collector.h"
#include "elfsym.h"
#include "gofuncs.h"
#include "cudalib.h"
#include "env.h"
#include "hooks.h"
#include "marks.h"
#include "procfs.h"
#include "rtlocks.h"
#include "sysprobes.h"
#include "tlsplain.h"
#include "util.h"
#include "ttftrace.skel.h"

#define DEFAULT_RINGBUF (16u << 20)
#define MAX_CPUS 1024
/* traced tgids kept between scans of the map; more are scanned for */
#define TGIDS_CACHED 1024

struct tt_collector {
	struct ttftrace_bpf *skel;
	struct tt_tgid_word *tgids; /* traced_tgids, mapped */
	__u64 *ports; /* traced_ports, mapped: non-zero for a traced port */
	struct ring_buffer *rb;
	tt_event_fn fn;
	void *ctx;
	int ncpus;
	__u64 *lost_seen; /* per CPU, as last reported */
	__u64 lost_total;
	__u64 lost_check_ts;
	int cb_err;
	const char *gpu_probes;
	struct bpf_link **cuda_links; /* uprobes on CUDA driver libraries */
	size_t ncuda_links;
	struct tt_probed_files cuda_libs;
	int ncuda_fns;
	int ncuda_entry_only; /* of them, probed at their entry only */
	pthread_mutex_t cuda_lock; /* the five above: the prober attaches too */
	struct bpf_link **go_links; /* goroutine probes of Go programs */
	size_t ngo_links;
	struct tt_probed_files go_bins;
	struct tt_cudalib_prober *prober;
	int verbose;
	bool hops; /* tt_client_send loaded: hops can be told */
	struct tt_classifier cls; /* per connection: a keyword cut by a send */
	/* ZMQ's send functions in the system's libzmq (--msg-probes) */
	struct tt_sys_probes zmq;
	/* OpenSSL's SSL_write in the system's libssl and Node (--tls-probes) */
	struct tt_sys_probes tls;
	struct tt_tls_pending *tls_pending; /* their plaintext to memory BIOs */
	bool tls_go; /* and Go's crypto/tls in each Go program traced */
	struct bpf_link **mark_links; /* application markers (--mark) */
	size_t nmark_links;
	/* the traced tgids as last scanned, while neither BPF (tgids_gen)
	 * nor user space (tgids_user_gen) changed the map since */
	__u32 tgids_seen[TGIDS_CACHED];
	int ntgids_seen; /* -1: no scan kept */
	__u64 tgids_seen_gen;
	__u64 tgids_user_gen;
	__u64 xmits_held; /* XMITs that came inside their send's record */
	int rxstamp_fd; /* a socket asking for receive stamps; -1: none */
	__u64 rxstamp_tai_read; /* when the TAI offset was last read */
};

/* libbpf's print hook is global: so are its level and where it goes */
static int libbpf_verbosity;
static tt_collector_log_fn libbpf_log;

/* libbpf's messages go to the caller's log (or nowhere): a library does
 * not print */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	char msg[512];
	int n;

	if ((int)level > libbpf_verbosity || !libbpf_log)
		return 0;
	n = vsnprintf(msg, sizeof(msg), fmt, args);
	libbpf_log(msg);
	return n;
}

int tt_collector_probe_cuda_fd(struct tt_collector *c, int fd,
			       const char *name, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts);
	const struct tt_cuda_fn *fns;
	struct bpf_link **grown;
	char path[64];
	struct stat st;
	size_t nfns;
	int probed = 0;

	if (!strcmp(c->gpu_probes, "none"))
		return 0;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "CUDA library %s: %s", name,
			 strerror(errno));
		return -errno;
	}
	/* libbpf reads and the kernel resolves the very file fd holds */
	tt_cudalib_fd_path(fd, path, sizeof(path));
	pthread_mutex_lock(&c->cuda_lock);
	if (tt_probed_have(&c->cuda_libs, &st))
		goto cleanup;
	if (tt_probed_full(&c->cuda_libs)) {
		snprintf(err, errlen, "too many CUDA libraries; %s not probed",
			 name);
		probed = -ENOSPC;
		goto cleanup;
	}
	fns = tt_cuda_fns(&nfns);
	grown = realloc(c->cuda_links,
			(c->ncuda_links + 2 * nfns) * sizeof(*grown));
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		probed = -ENOMEM;
		goto cleanup;
	}
	c->cuda_links = grown;
	tt_probed_add(&c->cuda_libs, &st);
	for (size_t i = 0; i < nfns; i++) {
		struct bpf_link *entry, *ret = NULL;
		bool entry_only = tt_cuda_fn_entry_only(&fns[i]);

		if (!tt_cuda_fn_wanted(&fns[i], c->gpu_probes))
			continue;
		uopts.func_name = fns[i].name;
		uopts.bpf_cookie = i;
		uopts.retprobe = false;
		/* a library without this symbol is fine: others may have it */
		entry = bpf_program__attach_uprobe_opts(
			entry_only ? c->skel->progs.tt_cuda_entry_only :
				     c->skel->progs.tt_cuda_entry,
			-1, path, 0, &uopts);
		if (!entry)
			continue;
		if (!entry_only) {
			uopts.retprobe = true;
			ret = bpf_program__attach_uprobe_opts(
				c->skel->progs.tt_cuda_return, -1, path, 0,
				&uopts);
			if (!ret) {
				bpf_link__destroy(entry);
				continue;
			}
		}
		c->cuda_links[c->ncuda_links++] = entry;
		if (ret)
			c->cuda_links[c->ncuda_links++] = ret;
		c->ncuda_entry_only += entry_only;
		probed++;
	}
	c->ncuda_fns += probed;
cleanup:
	pthread_mutex_unlock(&c->cuda_lock);
	return probed;
}

/* The message-send probe on ZMQ's send functions in the system's libzmq:
 * a send hands a request on whether or not it wakes ZMQ's I/O thread
 * (docs/design.md §4.4). */
static int probe_zmq(struct tt_collector *c)
{
	return tt_sys_probe_zmq(&c->zmq, c->skel->progs.tt_msg_send);
}

/* OpenSSL's SSL_write, at its entry and return: the plaintext of a
 * server's encrypted sends (docs/design.md §3.1, "TLS"). */
static int probe_tls(struct tt_collector *c)
{
	return tt_sys_probe_tls(&c->tls, c->skel->progs.tt_tls_write,
				c->skel->progs.tt_tls_write_return);
}

int tt_collector_msg_stats(const struct tt_collector *c, int *libs)
{
	*libs = c->zmq.files.n;
	return c->zmq.fns;
}

int tt_collector_tls_stats(const struct tt_collector *c, int *libs)
{
	*libs = c->tls.files.n;
	return c->tls.fns;
}

/* The Go scheduler's functions that make one goroutine state change each,
 * with their first argument the goroutine (Go 1.17+, register ABI). */
static const struct {
	const char *fn;
	__u32 from, to;
} go_sched_fns[] = {
	{ "runtime.execute", TT_GO_RUNNABLE, TT_GO_RUNNING },
	{ "runtime.ready", TT_GO_WAITING, TT_GO_RUNNABLE },
	{ "runtime.park_m", TT_GO_RUNNING, TT_GO_WAITING },
	{ "runtime.goschedImpl", TT_GO_RUNNING, TT_GO_RUNNABLE },
	{ "runtime.goexit0", TT_GO_RUNNING, TT_GO_DEAD },
	{ "runtime.exitsyscall0", TT_GO_SYSCALL, TT_GO_RUNNABLE },
};

#define GO_SCHED_NFNS (sizeof(go_sched_fns) / sizeof(go_sched_fns[0]))

/* The channel functions every send and receive goes through (chansend1,
 * selectnbsend, chanrecv1/2, selectnbrecv; not a select of several cases),
 * their first argument the channel. */
static const struct {
	const char *fn;
	__u32 op;
} go_chan_fns[] = {
	{ "runtime.chansend", TT_GO_CHAN_SEND },
	{ "runtime.chanrecv", TT_GO_CHAN_RECV },
};

#define GO_CHAN_NFNS (sizeof(go_chan_fns) / sizeof(go_chan_fns[0]))

/* Every function a goroutine probe may go on: the scheduler's, the one
 * they all call, the channels' */
#define GO_NFNS (GO_SCHED_NFNS + 1 + GO_CHAN_NFNS)
#define GO_STATUS_FN GO_SCHED_NFNS
#define GO_CHAN_FN(i) (GO_SCHED_NFNS + 1 + (i))

/* Where the n functions names are in the Go program at path: their
 * offsets from its function table, which a stripped Go binary keeps (0
 * where it does not say: libbpf then looks the name up in the symbol
 * table). */
static void go_file_offsets(const char *path, const char **names, size_t n,
			    size_t *offs)
{
	char err[128];
	Elf *elf;
	int fd;

	memset(offs, 0, n * sizeof(*offs));
	elf = tt_elf_open(path, &fd, err, sizeof(err));
	if (!elf)
		return;
	tt_go_func_offsets(elf, names, n, offs);
	elf_end(elf);
	close(fd);
}

/* go_file_offsets() of every function a goroutine probe may go on */
static void go_offsets(const char *path, const char **names, size_t *offs)
{
	size_t i;

	for (i = 0; i < GO_SCHED_NFNS; i++)
		names[i] = go_sched_fns[i].fn;
	names[GO_STATUS_FN] = TT_GO_PROBE_SYMBOL;
	for (i = 0; i < GO_CHAN_NFNS; i++)
		names[GO_CHAN_FN(i)] = go_chan_fns[i].fn;
	go_file_offsets(path, names, GO_NFNS, offs);
}

int tt_collector_probe_go_tls_fd(struct tt_collector *c, int fd)
{
	const char *name = "crypto/tls.(*Conn).Write";
	char path[64];
	struct stat st;
	size_t off;
	int ret;

	/* --tls-probes=none or openssl, or this file's turn came already */
	if (!c->tls_go || fstat(fd, &st) ||
	    tt_probed_have(&c->tls.files, &st) || tt_probed_full(&c->tls.files))
		return 0;
	tt_probed_add(&c->tls.files, &st);
	tt_cudalib_fd_path(fd, path, sizeof(path));
	go_file_offsets(path, &name, 1, &off);
	ret = tt_uprobe_attach(&c->tls.links, &c->tls.nlinks,
			       c->skel->progs.tt_go_tls_write, path,
			       off ? NULL : name, off, 0, false);
	if (ret == -ENOMEM)
		return ret;
	/* no crypto/tls linked in: nothing of it to read */
	c->tls.fns += !ret;
	return !ret;
}

/* Attaches prog at function i of path (cookie), into c->go_links; 0 or
 * -errno. */
static int go_attach(struct tt_collector *c, struct bpf_program *prog,
		     const char *path, const char **names, const size_t *offs,
		     size_t i, __u64 cookie)
{
	return tt_uprobe_attach(&c->go_links, &c->ngo_links, prog, path,
				offs[i] ? NULL : names[i], offs[i], cookie,
				false);
}

int tt_collector_probe_go_fd(struct tt_collector *c, int fd,
			     const char *name, char *err, size_t errlen)
{
	const char *names[GO_NFNS];
	size_t first, i, offs[GO_NFNS];
	char path[64];
	struct stat st;
	int ret = 0;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "Go program %s: %s", name,
			 strerror(errno));
		return -errno;
	}
	if (tt_probed_have(&c->go_bins, &st))
		return 0;
	if (tt_probed_full(&c->go_bins)) {
		snprintf(err, errlen, "too many Go programs; %s not probed",
			 name);
		return -ENOSPC;
	}
	/* libbpf reads and the kernel resolves the very file fd holds */
	tt_cudalib_fd_path(fd, path, sizeof(path));
	go_offsets(path, names, offs);
	first = c->ngo_links;
	/* the scheduler's functions: no trap at every syscall */
	for (i = 0; i < GO_SCHED_NFNS && !ret; i++)
		ret = go_attach(
			c, c->skel->progs.tt_go_sched, path, names, offs, i,
			TT_GO_COOKIE(go_sched_fns[i].from, go_sched_fns[i].to));
	if (ret) {
		/* one is inlined or renamed in this Go: the one function
		 * every change goes through, syscalls too */
		while (c->ngo_links > first)
			bpf_link__destroy(c->go_links[--c->ngo_links]);
		ret = go_attach(c, c->skel->progs.tt_go_status, path, names,
				offs, GO_STATUS_FN, 0);
	}
	if (ret) {
		snprintf(err, errlen,
			 "Go program %s: cannot probe its scheduler: %s", name,
			 strerror(-ret));
		return ret;
	}
	/* channels: hand-offs that wake nobody; optional (an inlined or
	 * renamed function leaves those to the rules on threads) */
	for (i = 0; i < GO_CHAN_NFNS; i++)
		if (go_attach(c, c->skel->progs.tt_go_chan, path, names, offs,
			      GO_CHAN_FN(i), go_chan_fns[i].op) == -ENOMEM) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	tt_probed_add(&c->go_bins, &st);
	return 1;
}

int tt_collector_mark(struct tt_collector *c, const struct tt_mark_spec *m,
		      __u32 index, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts);
	LIBBPF_OPTS(bpf_usdt_opts, sopts);
	__u64 cookie = TT_MARK_COOKIE(m->kind, m->arg, index, m->peer_arg,
				      m->py_layout);
	struct bpf_link *link, **grown;
	int e;

	grown = realloc(c->mark_links,
			(c->nmark_links + 1) * sizeof(*grown));
	if (!grown) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->mark_links = grown;
	if (m->python) {
		struct tt_py_event ev = { 0 };

		/* parse_python() kept it under TT_PY_EVENT_LEN */
		memcpy(ev.name, m->symbol, sizeof(ev.name) - 1);
		if (bpf_map__update_elem(c->skel->maps.py_events, &index,
					 sizeof(index), &ev, sizeof(ev), 0)) {
			e = -errno;
			snprintf(err, errlen,
				 "cannot set the marker's event: %s",
				 strerror(-e));
			return e;
		}
		sopts.usdt_cookie = cookie;
		link = bpf_program__attach_usdt(c->skel->progs.tt_mark_python,
						-1, m->path, m->provider,
						"audit", &sopts);
	} else if (m->usdt) {
		sopts.usdt_cookie = cookie;
		link = bpf_program__attach_usdt(c->skel->progs.tt_mark_usdt,
						-1, m->path, m->provider,
						m->symbol, &sopts);
	} else {
		/* an entry probe only: never a return probe on user code */
		uopts.func_name = m->symbol;
		uopts.bpf_cookie = cookie;
		uopts.retprobe = false;
		link = bpf_program__attach_uprobe_opts(c->skel->progs.tt_mark,
						       -1, m->path, m->offset,
						       &uopts);
	}
	if (!link) {
		e = -errno;
		if (m->python)
			snprintf(
				err, errlen,
				"cannot attach to USDT probe python:audit in %s: %s",
				m->shown[0] ? m->shown : m->path, strerror(-e));
		else if (m->usdt)
			snprintf(err, errlen, "cannot attach to USDT probe %s:%s in %s: %s%s",
				 m->provider, m->symbol, m->path, strerror(-e),
				 e == -ENOENT ? " (no such probe in the file)" : "");
		else
			snprintf(err, errlen, "cannot attach to %s+%llu in %s: %s",
				 m->symbol, (unsigned long long)m->offset,
				 m->path, strerror(-e));
		return e;
	}
	c->mark_links[c->nmark_links++] = link;
	return 0;
}

__u64 tt_collector_go_hits(const struct tt_collector *c)
{
	int fd = bpf_map__fd(c->skel->maps.go_hits);
	__u64 values[MAX_CPUS], sum = 0;
	__u32 zero = 0;

	if (c->ncpus > MAX_CPUS || bpf_map_lookup_elem(fd, &zero, values))
		return 0;
	for (int i = 0; i < c->ncpus; i++)
		sum += values[i];
	return sum;
}

void tt_collector_unprobe_go(struct tt_collector *c)
{
	for (size_t i = 0; i < c->ngo_links; i++)
		bpf_link__destroy(c->go_links[i]);
	c->ngo_links = 0;
	/* the files stay known: a later scan does not probe them again */
}

static int attach_candidate(void *ctx, int fd, const char *name, char *err,
			    size_t errlen)
{
	return tt_collector_probe_cuda_fd(ctx, fd, name, err, errlen);
}

bool tt_collector_hops(const struct tt_collector *c)
{
	return c->hops;
}

int tt_collector_message(struct tt_collector *c, char *buf, size_t len)
{
	return c->prober ? tt_cudalib_prober_message(c->prober, buf, len) : 0;
}

void tt_collector_cuda_stats(struct tt_collector *c, int *libs, int *fns,
			     int *entry_only)
{
	pthread_mutex_lock(&c->cuda_lock);
	*libs = c->cuda_libs.n;
	*fns = c->ncuda_fns;
	*entry_only = c->ncuda_entry_only;
	pthread_mutex_unlock(&c->cuda_lock);
}

/* Tells the BPF side which device nodes are GPUs. */
static int load_gpu_devices(struct tt_collector *c,
			    const struct tt_dev_info *devs, size_t n)
{
	int rdevs_fd = bpf_map__fd(c->skel->maps.gpu_rdevs);
	int inodes_fd = bpf_map__fd(c->skel->maps.gpu_inodes);
	__u8 one = 1;

	for (size_t i = 0; i < n; i++) {
		struct {
			__u32 dev;
			__u32 pad;
			__u64 ino;
		} gi = { devs[i].dev, 0, devs[i].ino };

		if (devs[i].rdev &&
		    bpf_map_update_elem(rdevs_fd, &devs[i].rdev, &one, BPF_ANY))
			return -errno;
		if (bpf_map_update_elem(inodes_fd, &gi, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int handle_record(void *ctx, void *data, size_t size)
{
	struct tt_collector *c = ctx;
	const struct tt_hdr *h = data;
	const struct tt_tls_plain *pl = NULL;
	struct tt_event ev;
	size_t npl;
	int psize;

	if (size < sizeof(*h))
		return 0;
	if (h->type == TT_EV_TLS_PLAIN) {
		/* for the thread's send that carries its records */
		if (c->tls_pending && size >= sizeof(*h) + sizeof(*pl))
			tt_tls_pending_add(c->tls_pending, h->tid,
					   (const void *)(h + 1));
		return 0;
	}
	if (h->type == TT_EV_LIB_OPEN) {
		const struct tt_lib_open *lib = (const void *)(h + 1);

		/* checked and probed on the prober's thread, never here */
		if (c->prober && size >= sizeof(*h) + sizeof(*lib))
			tt_cudalib_prober_submit(c->prober, h->tgid, lib->path,
						 sizeof(lib->path));
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.h = *h;
	if (h->type == TT_EV_SEND_RAW) {
		const struct tt_send_raw *raw = (const void *)(h + 1);
		size_t nbytes;

		if (size < sizeof(*h) + sizeof(*raw))
			return 0;
		nbytes = raw->nbytes < TT_SEND_CAPTURE ? raw->nbytes :
							 TT_SEND_CAPTURE;
		if (raw->xmit_held) {
			/* the XMIT made inside this send, as its own record
			 * would have said it (docs/design.md §2.4) */
			ev.h.type = TT_EV_XMIT;
			ev.h.ts = raw->xmit_ts;
			ev.h.flags = 0;
			ev.xmit = raw->xmit;
			c->xmits_held++;
			c->cb_err = c->fn(c->ctx, &ev);
			if (c->cb_err)
				return c->cb_err;
			memset(&ev, 0, sizeof(ev));
			ev.h = *h;
		}
		ev.h.type = TT_EV_SEND;
		ev.send = raw->send;
		npl = raw->tls || !c->tls_pending ?
			      0 :
			      tt_tls_pending_take(c->tls_pending,
						  raw->tls_key ?: h->tid,
						  raw->tls_from, raw->tls_to,
						  &pl);
		if (npl) {
			tt_classifier_send_pieces(&c->cls, pl, npl, &ev.send);
		} else {
			tt_classifier_send_tls(
				&c->cls, raw->data, nbytes, raw->tail,
				raw->ntail < TT_SEND_TAIL ? raw->ntail :
							    TT_SEND_TAIL,
				raw->tls, raw->plain_len, &ev.send);
			tt_classify_data_lines(&ev.send, raw->data_lines);
		}
	} else {
		psize = tt_event_payload_size(h->type);
		if (psize < 0 || size < sizeof(*h) + (size_t)psize)
			return 0;
		memcpy(&ev.h + 1, h + 1, psize);
		/* a new connection on the socket, or the end of one */
		if (h->type == TT_EV_CONN_OPEN ||
		    (h->type == TT_EV_CONN_CLOSE &&
		     ev.sock.len != TT_TCP_CLOSE_WAIT))
			tt_classifier_forget(&c->cls, ev.sock.sk);
	}
	c->cb_err = c->fn(c->ctx, &ev);
	return c->cb_err;
}

#define TGIDS_BYTES (TT_PID_MAX_LIMIT / 8 * sizeof(struct tt_tgid_word))
#define PORTS_BYTES (65536 * sizeof(__u64))

/* The tgid and port filters are arrays the BPF programs read inline: user
 * space sets their bytes through a shared mapping, with plain stores, as
 * the programs do. */
static int map_filters(struct tt_collector *c)
{
	void *p;

	p = mmap(NULL, TGIDS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.traced_tgids), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->tgids = p;
	p = mmap(NULL, PORTS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(c->skel->maps.traced_ports), 0);
	if (p == MAP_FAILED)
		return -errno;
	c->ports = p;
	return 0;
}

#define TAI_REREAD_NS 1000000000ULL

/* Tells BPF the kernel's TAI offset (CLOCK_TAI - CLOCK_REALTIME, whole
 * seconds), through which it reads the receive stamps' clock: a leap second
 * changes it, so it is read again every second. */
static void rxstamp_offset_refresh(struct tt_collector *c)
{
	struct timex tx = { 0 };
	__u64 now;

	if (c->rxstamp_fd < 0)
		return;
	now = tt_clock_ns(CLOCK_MONOTONIC);
	if (c->rxstamp_tai_read && now - c->rxstamp_tai_read < TAI_REREAD_NS)
		return;
	c->rxstamp_tai_read = now;
	if (adjtimex(&tx) < 0)
		return;
	__atomic_store_n(&c->skel->bss->tai_minus_real,
			 (__s64)tx.tai * 1000000000LL, __ATOMIC_RELAXED);
	/* after the offset: BPF uses none before it is there */
	__atomic_store_n(&c->skel->bss->rx_stamps, true, __ATOMIC_RELEASE);
}

/*
 * The kernel stamps received packets only while some socket asks it to:
 * one that does, held open, makes it stamp them all, and a request's
 * arrival is then where the device handed its bytes over, not where the
 * socket took them after a backlog (TTFTRACE_RX_STAMPS=0: the latter).
 */
static void rxstamp_start(struct tt_collector *c)
{
	const char *env = getenv("TTFTRACE_RX_STAMPS");
	int one = 1;

	if (env && !strcmp(env, "0"))
		return;
	c->rxstamp_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->rxstamp_fd < 0)
		return;
	if (setsockopt(c->rxstamp_fd, SOL_SOCKET, SO_TIMESTAMPNS, &one,
		       sizeof(one))) {
		close(c->rxstamp_fd);
		c->rxstamp_fd = -1;
		return;
	}
	rxstamp_offset_refresh(c);
}

struct tt_collector *tt_collector_open(const struct tt_collector_opts *o,
				       char *err, size_t errlen)
{
	struct tt_collector *c;
	__u32 rb_bytes = o->ringbuf_bytes ? o->ringbuf_bytes : DEFAULT_RINGBUF;
	const char *hold;
	int e;

	libbpf_verbosity = o->verbose >= 2 ? LIBBPF_DEBUG :
			   o->verbose ? LIBBPF_WARN : -1;
	libbpf_log = o->log;
	libbpf_set_print(libbpf_print);
	if (!tt_have_bpf_privileges(err, errlen))
		return NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen,
			 "this kernel exposes no BTF (/sys/kernel/btf/vmlinux): ttftrace needs CONFIG_DEBUG_INFO_BTF=y");
		return NULL;
	}
	if (rb_bytes < 4096 || (rb_bytes & (rb_bytes - 1))) {
		snprintf(err, errlen,
			 "ring buffer size %u is not a power of two >= 4096",
			 rb_bytes);
		return NULL;
	}
	if (tt_ensure_tracefs(err, errlen))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->cuda_lock, NULL);
	c->ntgids_seen = -1;
	c->rxstamp_fd = -1;
	c->fn = o->fn;
	c->ctx = o->ctx;
	c->verbose = o->verbose;
	c->gpu_probes = o->gpu_probes ? o->gpu_probes : "sync";
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0 || c->ncpus > MAX_CPUS) {
		snprintf(err, errlen, "cannot count CPUs");
		goto cleanup;
	}
	c->lost_seen = calloc(c->ncpus, sizeof(__u64));
	c->skel = ttftrace_bpf__open();
	if (!c->lost_seen || !c->skel) {
		snprintf(err, errlen, "cannot open BPF object: %s",
			 strerror(errno));
		goto cleanup;
	}
	bpf_map__set_max_entries(c->skel->maps.events, rb_bytes);
	c->skel->rodata->wakeup_bytes = rb_bytes / 4;
	/* TTFTRACE_XMIT_HOLD=0: every XMIT in a record of its own (tests
	 * compare the two) */
	hold = getenv("TTFTRACE_XMIT_HOLD");
	c->skel->rodata->xmit_hold = !hold || strcmp(hold, "0");
	/* the events of a send past its capture, counted with bpf_loop
	 * (5.17); TTFTRACE_COUNT_LINES=0: not (tests compare the two) */
	hold = getenv("TTFTRACE_COUNT_LINES");
	c->skel->rodata->count_data_lines =
		(!hold || strcmp(hold, "0")) &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER,
					BPF_FUNC_loop, NULL) > 0;
	/* hops need tcp_sendmsg_locked (docs/design.md §4.11): without it
	 * (older kernels; TTFTRACE_HOPS=0 for the tests) none are told */
	hold = getenv("TTFTRACE_HOPS");
	c->hops = (!hold || strcmp(hold, "0")) &&
		  tt_tracepoint_exists("tcp", "tcp_sendmsg_locked");
	if (!c->hops)
		bpf_program__set_autoload(c->skel->progs.tt_client_send, false);
	tt_uring_hooks(c->skel);
	tt_poll_hooks(c->skel);
	e = ttftrace_bpf__load(c->skel);
	if (e) {
		snprintf(err, errlen,
			 "cannot load BPF programs: %s (run 'ttftrace check'; -v shows the verifier log)",
			 strerror(-e));
		goto cleanup;
	}
	e = map_filters(c);
	if (e) {
		snprintf(err, errlen, "cannot map the filter maps: %s",
			 strerror(-e));
		goto cleanup;
	}
	e = load_gpu_devices(c, o->devs, o->ndevs);
	if (e) {
		snprintf(err, errlen, "cannot register GPU devices: %s",
			 strerror(-e));
		goto cleanup;
	}
	e = tt_attach_programs(c->skel, err, errlen);
	if (e)
		goto cleanup;
	if (!o->msg_probes || strcmp(o->msg_probes, "none"))
		probe_zmq(c);
	if (!o->tls_probes || strcmp(o->tls_probes, "none")) {
		c->tls_pending = tt_tls_pending_new();
		if (!c->tls_pending) {
			snprintf(err, errlen, "out of memory");
			goto cleanup;
		}
		probe_tls(c);
		c->tls_go = !o->tls_probes || strcmp(o->tls_probes, "openssl");
	}
	rxstamp_start(c);
	if (strcmp(c->gpu_probes, "none")) {
		c->prober = tt_cudalib_prober_start(attach_candidate, c);
		if (!c->prober) {
			snprintf(err, errlen, "cannot start a thread: %s",
				 strerror(errno));
			goto cleanup;
		}
	}
	c->lost_check_ts = tt_clock_ns(CLOCK_MONOTONIC);
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events),
				 handle_record, c, NULL);
	if (!c->rb) {
		snprintf(err, errlen, "cannot open the ring buffer: %s",
			 strerror(errno));
		goto cleanup;
	}
	return c;
cleanup:
	tt_collector_close(c);
	return NULL;
}

/* Marks tgid traced (v 1) or not (0) in the map BPF shares, as BPF's
 * fork and exit do, and tells the next look at the map. */
static void tgid_mark(struct tt_collector *c, __u32 tgid, __u8 v)
{
	__atomic_store_n(&c->tgids[tgid / 8].b[tgid % 8], v, __ATOMIC_RELAXED);
	c->tgids_user_gen++;
}

int tt_collector_trace_pid(struct tt_collector *c, pid_t pid, char *err,
			   size_t errlen)
{
	pid_t tree[1024];
	__u16 ports[256];
	int n, nports;

	if (pid <= 0 || !tt_proc_alive(pid)) {
		snprintf(err, errlen, "no such process: %d", pid);
		return -ESRCH;
	}
	tree[0] = pid;
	n = tt_proc_descendants(pid, tree + 1, 1023);
	n = n < 0 ? 1 : n + 1;
	for (int i = 0; i < n; i++) {
		__u32 tgid = tree[i];

		if (tgid >= TT_PID_MAX_LIMIT) {
			snprintf(err, errlen, "cannot trace %u: pid too large",
				 tgid);
			return -EINVAL;
		}
		tgid_mark(c, tgid, 1);
		nports = tt_proc_listen_ports(tree[i], ports, 256);
		for (int j = 0; j < nports; j++)
			__atomic_store_n(&c->ports[ports[j]], 1,
					 __ATOMIC_RELAXED);
	}
	/* one that exited between the scan and its mark left BPF no exit to
	 * unmark it by: marked, record waited for it until -d or Ctrl-C (a
	 * launcher's short-lived children); BPF unmarks those that exit now */
	for (int i = 0; i < n; i++)
		if (!tt_proc_alive(tree[i]))
			tgid_mark(c, tree[i], 0);
	return 0;
}

int tt_collector_poll(struct tt_collector *c, int timeout_ms)
{
	int n = 0;

	rxstamp_offset_refresh(c);
	/* records are submitted without a wakeup until the buffer fills up:
	 * sleep until then or the timeout, then take whatever is there */
	if (timeout_ms)
		n = ring_buffer__poll(c->rb, timeout_ms);
	if (n >= 0 || n == -EINTR)
		n = ring_buffer__consume(c->rb);
	if (n < 0 && c->cb_err)
		return c->cb_err;
	return n == -EINTR ? 0 : n;
}

int tt_collector_check_lost(struct tt_collector *c)
{
	__u64 values[MAX_CPUS], now;
	__u32 zero = 0;
	int err;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.lost), &zero,
				values))
		return -errno;
	now = tt_clock_ns(CLOCK_MONOTONIC);
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		struct tt_event ev;

		if (values[cpu] == c->lost_seen[cpu])
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.h.type = TT_EV_LOST;
		ev.h.ts = now;
		ev.h.cpu = cpu;
		ev.lost.count = values[cpu] - c->lost_seen[cpu];
		ev.lost.since_ts = c->lost_check_ts;
		ev.lost.lost_cpu = cpu;
		c->lost_total += ev.lost.count;
		c->lost_seen[cpu] = values[cpu];
		err = c->fn(c->ctx, &ev);
		if (err)
			return err;
	}
	c->lost_check_ts = now;
	return 0;
}

__u64 tt_collector_lost_total(const struct tt_collector *c)
{
	return c->lost_total;
}

__u64 tt_collector_xmits_held(const struct tt_collector *c)
{
	return c->xmits_held;
}

/* The indexes of the first max non-zero bytes of n bytes at p, with how
 * many bytes each index stands for (stride): a scan by words, the maps
 * being mostly zeroes. */
static int set_indexes(const void *p, size_t n, size_t stride, void *out,
		       size_t out_size, int max)
{
	const __u64 *w = p;
	int k = 0;

	for (size_t i = 0; i < n / 8 && k < max; i++) {
		__u64 v = __atomic_load_n(&w[i], __ATOMIC_RELAXED);

		for (int j = 0; v && j < 8 && k < max; j++) {
			size_t idx = (i * 8 + j) / stride;

			if (!((v >> (8 * j)) & 0xff))
				continue;
			if (out_size == sizeof(__u32))
				((__u32 *)out)[k++] = idx;
			else
				((__u16 *)out)[k++] = idx;
			if (stride > 1)
				break; /* the word is one entry */
		}
	}
	return k;
}

/* Both generations of the tgid map: BPF's count of its changes, and
 * user space's own in the high bits. */
static __u64 tgids_gen(const struct tt_collector *c)
{
	return __atomic_load_n(&c->skel->bss->tgids_gen, __ATOMIC_ACQUIRE) +
	       (c->tgids_user_gen << 40);
}

int tt_collector_traced_tgids(struct tt_collector *c, __u32 *tgids, int max)
{
	__u64 gen = tgids_gen(c);
	int n;

	/* a scan reads 4 MiB: the recorder looks every 20 ms, processes
	 * come and go far more rarely */
	if (c->ntgids_seen < 0 || gen != c->tgids_seen_gen) {
		n = set_indexes(c->tgids, TGIDS_BYTES, 1, c->tgids_seen,
				sizeof(*c->tgids_seen), TGIDS_CACHED);
		/* a change during the scan moved the generation past gen:
		 * the next look scans again */
		c->ntgids_seen = n < TGIDS_CACHED ? n : -1;
		c->tgids_seen_gen = gen;
		if (n >= TGIDS_CACHED && max > TGIDS_CACHED)
			return set_indexes(c->tgids, TGIDS_BYTES, 1, tgids,
					   sizeof(*tgids), max);
	} else {
		n = c->ntgids_seen;
	}
	n = n < max ? n : max;
	memcpy(tgids, c->tgids_seen, n * sizeof(*tgids));
	return n;
}

int tt_collector_listen_ports(const struct tt_collector *c, __u16 *ports,
			      int max)
{
	return set_indexes(c->ports, PORTS_BYTES, sizeof(__u64), ports,
			   sizeof(*ports), max);
}

void tt_collector_close(struct tt_collector *c)
{
	if (!c)
		return;
	/* first: no attach may run while the links go */
	tt_cudalib_prober_stop(c->prober);
	ring_buffer__free(c->rb);
	for (size_t i = 0; i < c->ncuda_links; i++)
		bpf_link__destroy(c->cuda_links[i]);
	for (size_t i = 0; i < c->ngo_links; i++)
		bpf_link__destroy(c->go_links[i]);
	tt_sys_probes_free(&c->zmq);
	tt_sys_probes_free(&c->tls);
	tt_tls_pending_free(c->tls_pending);
	free(c->go_links);
	free(c->cuda_links);
	for (size_t i = 0; i < c->nmark_links; i++)
		bpf_link__destroy(c->mark_links[i]);
	free(c->mark_links);
	if (c->tgids)
		munmap(c->tgids, TGIDS_BYTES);
	if (c->ports)
		munmap(c->ports, PORTS_BYTES);
	if (c->rxstamp_fd >= 0)
		close(c->rxstamp_fd);
	ttftrace_bpf__destroy(c->skel);
	free(c->lost_seen);
	pthread_mutex_destroy(&c->cuda_lock);
	free(c);
}
