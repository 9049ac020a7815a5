/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Uprobes on system libraries, for every process that maps them (the BPF
 * side keeps the traced ones): ZMQ's sends (docs/design.md §4.4) and
 * OpenSSL's SSL_write (§3.1, "TLS"). Only root's own files, not writable
 * by others, each file once.
 */
#ifndef TT_SYSPROBES_H
#define TT_SYSPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <linux/types.h>

struct bpf_link;
struct bpf_program;

/* Files already probed, by device and inode: each is probed once. */
struct tt_probed_files {
	struct {
		dev_t dev;
		ino_t ino;
	} f[32];
	int n;
};

bool tt_probed_have(const struct tt_probed_files *pf, const struct stat *st);
bool tt_probed_full(const struct tt_probed_files *pf);
void tt_probed_add(struct tt_probed_files *pf, const struct stat *st);

/* Probes on system libraries: their links, and the files probed. */
struct tt_sys_probes {
	struct bpf_link **links;
	size_t nlinks;
	struct tt_probed_files files;
	int fns; /* functions probed */
};

void tt_sys_probes_free(struct tt_sys_probes *sp);
/* Attaches prog at func of path, or at file offset off where func is
 * NULL (its cookie; a uretprobe if ret) for every process, its link
 * appended to *links (*n of them); 0 or -errno. */
int tt_uprobe_attach(struct bpf_link ***links, size_t *n,
		     struct bpf_program *prog, const char *path,
		     const char *func, size_t off, __u64 cookie, bool ret);
/* send on ZMQ's send functions in the system's libzmq; the functions
 * probed (0 without libzmq) */
int tt_sys_probe_zmq(struct tt_sys_probes *sp, struct bpf_program *send);
/* entry and ret on OpenSSL's SSL_write and SSL_write_ex in the system's
 * libssl.so.3 and Node; the functions probed */
int tt_sys_probe_tls(struct tt_sys_probes *sp, struct bpf_program *entry,
		     struct bpf_program *ret);

#endif /* TT_SYSPROBES_H */
