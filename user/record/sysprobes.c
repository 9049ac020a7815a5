// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Uprobes on system libraries (sysprobes.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "sysprobes.h"
#include "ttftrace.h"

/* A function to probe in a system library: its name, its uprobe cookie */
struct sys_fn {
	const char *fn;
	__u64 cookie;
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ZMQ's send functions: where each is, the uprobe cookie (enum
 * tt_msg_fn); pyzmq sends with zmq_msg_send. */
static const struct sys_fn zmq_send_fns[] = {
	{ "zmq_msg_send", TT_MSG_ZMQ_MSG_SEND },
	{ "zmq_send", TT_MSG_ZMQ_SEND },
	{ "zmq_sendmsg", TT_MSG_ZMQ_SENDMSG },
};

/* OpenSSL's write functions: the plaintext of the sends they make
 * (docs/design.md §3.1, "TLS"). */
static const struct sys_fn tls_write_fns[] = {
	{ "SSL_write", 0 },
	{ "SSL_write_ex", 0 },
};

/* Where Debian and others keep system libraries (merged /usr: one file,
 * probed once). A copy a wheel or a static build bundles is not among them
 * (docs/design.md §3.1, §4.4). */
static const char *const sys_lib_dirs[] = {
	"/usr/lib/x86_64-linux-gnu",
	"/lib/x86_64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu",
	"/lib/aarch64-linux-gnu",
	"/usr/lib64",
	"/usr/lib",
	"/usr/local/lib",
};

/* Node links OpenSSL in and exports its functions */
static const char *const tls_bin_paths[] = {
	"/usr/bin/node",
	"/usr/local/bin/node",
};

bool tt_probed_have(const struct tt_probed_files *pf, const struct stat *st)
{
	for (int i = 0; i < pf->n; i++)
		if (pf->f[i].dev == st->st_dev && pf->f[i].ino == st->st_ino)
			return true;
	return false;
}

bool tt_probed_full(const struct tt_probed_files *pf)
{
	return pf->n == (int)(sizeof(pf->f) / sizeof(pf->f[0]));
}

void tt_probed_add(struct tt_probed_files *pf, const struct stat *st)
{
	pf->f[pf->n].dev = st->st_dev;
	pf->f[pf->n++].ino = st->st_ino;
}

void tt_sys_probes_free(struct tt_sys_probes *sp)
{
	for (size_t i = 0; i < sp->nlinks; i++)
		bpf_link__destroy(sp->links[i]);
	free(sp->links);
}

int tt_uprobe_attach(struct bpf_link ***links, size_t *n,
		     struct bpf_program *prog, const char *path,
		     const char *func, size_t off, __u64 cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .func_name = func,
		    .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link **grown, *link;

	grown = realloc(*links, (*n + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	*links = grown;
	link = bpf_program__attach_uprobe_opts(prog, -1, path, off, &uopts);
	if (!link)
		return -errno;
	(*links)[(*n)++] = link;
	return 0;
}

/* Attaches prog (a uretprobe if ret) at fn of path, into sp; 0 or -errno. */
static int sys_attach(struct tt_sys_probes *sp, struct bpf_program *prog,
		      const char *path, const struct sys_fn *fn, bool ret)
{
	return tt_uprobe_attach(&sp->links, &sp->nlinks, prog, path, fn->fn, 0,
				fn->cookie, ret);
}

/*
 * Puts entry (and ret, if not NULL) on fns in the system's file at path:
 * root's own, not writable by others, each file once, for every process
 * that maps it (the BPF side keeps the traced ones). The functions probed;
 * 0 with no such file.
 */
static int probe_sys_file(struct tt_sys_probes *sp, const char *path,
			  const struct sys_fn *fns, size_t nfns,
			  struct bpf_program *entry, struct bpf_program *ret)
{
	struct stat st;
	int probed = 0;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 0022) || tt_probed_have(&sp->files, &st) ||
	    tt_probed_full(&sp->files))
		return 0;
	tt_probed_add(&sp->files, &st);
	for (size_t j = 0; j < nfns; j++) {
		if (sys_attach(sp, entry, path, &fns[j], false))
			continue;
		/* an entry without its return would leave its state */
		if (ret && sys_attach(sp, ret, path, &fns[j], true)) {
			bpf_link__destroy(sp->links[--sp->nlinks]);
			continue;
		}
		probed++;
	}
	sp->fns += probed;
	return probed;
}

/* probe_sys_file() on the library named lib in each of sys_lib_dirs */
static int probe_sys_lib(struct tt_sys_probes *sp, const char *lib,
			 const struct sys_fn *fns, size_t nfns,
			 struct bpf_program *entry, struct bpf_program *ret)
{
	char path[PATH_MAX];
	int probed = 0;

	for (size_t i = 0; i < NELEMS(sys_lib_dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", sys_lib_dirs[i], lib);
		probed += probe_sys_file(sp, path, fns, nfns, entry, ret);
	}
	return probed;
}

int tt_sys_probe_zmq(struct tt_sys_probes *sp, struct bpf_program *send)
{
	return probe_sys_lib(sp, "libzmq.so.5", zmq_send_fns,
			     NELEMS(zmq_send_fns), send, NULL);
}

int tt_sys_probe_tls(struct tt_sys_probes *sp, struct bpf_program *entry,
		     struct bpf_program *ret)
{
	int probed = probe_sys_lib(sp, "libssl.so.3", tls_write_fns,
				   NELEMS(tls_write_fns), entry, ret);

	for (size_t i = 0; i < NELEMS(tls_bin_paths); i++)
		probed += probe_sys_file(sp, tls_bin_paths[i], tls_write_fns,
					 NELEMS(tls_write_fns), entry, ret);
	return probed;
}
