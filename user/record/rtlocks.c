// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "containers.h"
#include "cudalib.h"
#include "elfsym.h"
#include "gofuncs.h"
#include "procfs.h"
#include "rtlocks.h"

#define PAGE_MASK_4K (~0xfffULL)

struct rt_search {
	char exe[PATH_MAX]; /* the executable's path, as the maps name it */
	pid_t pid;
	struct tt_rt_range *out;
	int max, n;
	bool exe_only; /* the executable alone: the loader has not run yet */
};

/* The executable or shared library of a CPython interpreter. */
static bool is_cpython(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10);
}

/* The address where the object's first PT_LOAD segment is mapped,
 * subtracted from a symbol's value for a position-independent object. */
static bool first_load_vaddr(Elf *elf, __u64 *vaddr)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
			*vaddr = (ph.p_vaddr - ph.p_offset) & PAGE_MASK_4K;
			return true;
		}
	}
	return false;
}

/* A Go program: the runtime's function in its symbol table, or Go's note
 * (a stripped one: the collector finds the runtime's functions in its
 * function table, or warns that it cannot) */
static bool is_go(Elf *elf)
{
	GElf_Sym sym;

	return tt_elf_symbol(elf, TT_GO_PROBE_SYMBOL, &sym) ||
	       tt_go_binary(elf);
}

/*
 * The runtime in the file of mapping m (its first, offset 0): CPython's
 * _PyRuntime range, or, in the executable, a Go program (the symbol of
 * its goroutine probe; the O_PATH fd is kept in r->fd for the probe).
 */
static int runtime_in(pid_t pid, const struct tt_mapping *m, bool exe,
		      struct tt_rt_range *r)
{
	char self[64], err[256];
	int pfd, fd = -1, ret = -ENOENT;
	__u64 base, load;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	GElf_Sym sym;

	/* the workload names the file: opened as a CUDA library would be */
	pfd = tt_cudalib_open_mapping(pid, m, err, sizeof(err));
	if (pfd < 0)
		return pfd;
	tt_cudalib_fd_path(pfd, self, sizeof(self));
	elf = tt_elf_open(self, &fd, err, sizeof(err));
	if (!elf) {
		ret = fd;
		goto cleanup;
	}
	if (!gelf_getehdr(elf, &eh) || !first_load_vaddr(elf, &load))
		goto cleanup;
	r->fd = -1;
	if (is_cpython(m->path) && tt_elf_symbol(elf, "_PyRuntime", &sym)) {
		/* an executable is mapped where it says; a shared object
		 * is moved */
		base = eh.e_type == ET_DYN ? m->start - m->offset - load : 0;
		r->lo = base + sym.st_value;
		r->hi = r->lo + sym.st_size;
		r->kind = TT_RT_CPYTHON;
		ret = 0;
	} else if (exe && is_go(elf)) {
		/* Go's own code takes no futex: every word is the runtime's */
		r->lo = 0;
		r->hi = UINT64_MAX;
		r->kind = TT_RT_GO;
		r->fd = pfd;
		pfd = -1;
		ret = 0;
	}
cleanup:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	return ret;
}

static int add_range(void *ctx, const struct tt_mapping *m)
{
	struct rt_search *rs = ctx;
	bool exe = !strcmp(m->path, rs->exe);

	if (m->offset || rs->n == rs->max ||
	    (!exe && (rs->exe_only || !is_cpython(m->path))))
		return 0;
	if (!runtime_in(rs->pid, m, exe, &rs->out[rs->n]))
		rs->n++;
	/* the executable's mappings after the first: looked at */
	if (exe)
		rs->exe[0] = '\0';
	return 0;
}

static int rt_find(pid_t pid, struct tt_rt_range *out, int max, bool exe_only)
{
	struct rt_search rs = { .pid = pid, .out = out, .max = max,
				.exe_only = exe_only };
	char link[64];
	ssize_t len;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	len = readlink(link, rs.exe, sizeof(rs.exe) - 1);
	rs.exe[len > 0 ? len : 0] = '\0';
	err = tt_proc_mappings(pid, add_range, &rs);
	return err ? err : rs.n;
}

int tt_rt_find(pid_t pid, struct tt_rt_range *out, int max)
{
	return rt_find(pid, out, max, false);
}

struct tt_rt_scanner {
	/* (executable's inode, tgid) -> its device: looked at already */
	struct tt_hmap seen;
	/* tgid -> the executable (inode) runtimes were found in */
	struct tt_hmap found;
};

struct tt_rt_scanner *tt_rt_scanner_new(void)
{
	return calloc(1, sizeof(struct tt_rt_scanner));
}

void tt_rt_scanner_free(struct tt_rt_scanner *s)
{
	if (!s)
		return;
	tt_hmap_free(&s->seen);
	tt_hmap_free(&s->found);
	free(s);
}

int tt_rt_scan(struct tt_rt_scanner *s, const __u32 *tgids, int n,
	       bool just_exec, tt_rt_emit_fn emit, void *ctx)
{
	const struct tt_rt_range gone = { .fd = -1 };
	struct tt_rt_range r[4];
	const struct tt_hmap_ent *e;
	char exe[64];
	struct stat st;
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		int found;

		snprintf(exe, sizeof(exe), "/proc/%u/exe", tgids[i]);
		if (stat(exe, &st))
			continue; /* gone, or a kernel thread */
		/* it exec'd since runtimes were found in it: they are gone (a
		 * Go program's fork looked at before it exec'd Python) */
		e = tt_hmap_find(&s->found, tgids[i], 0);
		if (e && e->val != st.st_ino) {
			tt_hmap_del(&s->found, tgids[i], 0);
			err = emit(ctx, tgids[i], &gone);
			if (err)
				break;
		}
		/* a process is new to it, or has exec'd, by its executable */
		e = tt_hmap_find(&s->seen, st.st_ino, tgids[i]);
		if (e && e->val == st.st_dev)
			continue;
		found = rt_find(tgids[i], r, 4, just_exec);
		/* found nothing yet: its libraries are looked at later */
		if (just_exec && found <= 0)
			continue;
		if (tt_hmap_put(&s->seen, st.st_ino, tgids[i], st.st_dev) ||
		    (found > 0 &&
		     tt_hmap_put(&s->found, tgids[i], 0, st.st_ino))) {
			for (int j = 0; j < found; j++)
				if (r[j].fd >= 0)
					close(r[j].fd);
			return -ENOMEM;
		}
		for (int j = 0; j < found; j++) {
			if (!err)
				err = emit(ctx, tgids[i], &r[j]);
			if (r[j].fd >= 0)
				close(r[j].fd);
		}
	}
	return err;
}
