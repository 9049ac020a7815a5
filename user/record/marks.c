// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cudalib.h"
#include "elfsym.h"
#include "event.h"
#include "marks.h"
#include "procfs.h"
#include "tt_arch.h"

/* USDT arguments libbpf can fetch (BPF_USDT_MAX_ARG_CNT) */
#define USDT_MAX_ARGS 12
/* CPython's probe of sys.audit(), since 3.8: (event name, args tuple) */
#define PY_PROVIDER "python"
#define PY_PROBE "audit"
/* PY_VERSION_HEX of the first interpreter of TT_PY_LAYOUT_312 */
#define PY_VERSION_3_12 0x030c0000

static int copy_part(char *dst, size_t len, const char *s, size_t n)
{
	if (!n || n >= len)
		return -EINVAL;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* "argN" (1 to max) into *n, or -EINVAL with one line in err. */
static int parse_arg(const char *opt, const char *text, __u32 max, __u32 *n,
		     const char *what, char *err, size_t errlen)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strncmp(text, "arg", 3) ? 0 : strtoul(text + 3, &end, 10);
	if (!v || errno || *end || v > max ||
	    !isdigit((unsigned char)text[3])) {
		snprintf(err, errlen, "bad %s '%s': arg1 to arg%u, %s", opt,
			 text, max, what);
		return -EINVAL;
	}
	*n = v;
	return 0;
}

/* ",key=argN" and ",peer=argM" at the end of rest, if there: the
 * arguments, cut off rest. */
static int parse_key(char *rest, __u32 max, struct tt_mark_spec *m, char *err,
		     size_t errlen)
{
	/* options follow the symbol or event: a path may hold ",key=" */
	char *tail = strrchr(rest, ':') ?: rest;
	char *k = strstr(tail, ",key="), *p = strstr(tail, ",peer="), *opt;
	int ret = 0;

	m->arg = m->peer_arg = 0;
	if (!k || (p && p < k))
		k = p;
	if (!k)
		return 0;
	*k++ = '\0';
	while (!ret && (opt = strsep(&k, ","))) {
		if (!strncmp(opt, "key=", 4) && !m->arg) {
			ret = parse_arg(
				"key", opt + 4, max, &m->arg,
				"the argument that identifies the request", err,
				errlen);
		} else if (!strncmp(opt, "peer=", 5) && !m->peer_arg) {
			ret = parse_arg(
				"peer", opt + 5, max, &m->peer_arg,
				"the argument that holds the client's port",
				err, errlen);
		} else {
			snprintf(
				err, errlen,
				"bad option '%s': key=argN or peer=argM, once each",
				opt);
			ret = -EINVAL;
		}
	}
	return ret;
}

/* PATH is an ELF file the recorder can read. */
static int check_file(const char *path, char *err, size_t errlen)
{
	unsigned char magic[SELFMAG];
	struct stat st;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
	} else if (pread(fd, magic, SELFMAG, 0) != SELFMAG ||
		   memcmp(magic, ELFMAG, SELFMAG)) {
		ret = -ENOEXEC;
		snprintf(err, errlen, "%s: not an ELF file", path);
	}
	close(fd);
	return ret;
}

/* The symbol is in the file and the offset inside it. */
static int check_symbol(const struct tt_mark_spec *m, char *err, size_t errlen)
{
	int fd, ret = -ENOENT;
	GElf_Sym sym;
	Elf *elf;

	elf = tt_elf_open(m->path, &fd, err, errlen);
	if (!elf)
		return fd;
	if (!tt_elf_symbol(elf, m->symbol, &sym)) {
		snprintf(err, errlen, "no symbol '%s' in %s", m->symbol,
			 m->path);
		goto cleanup;
	}
	if (m->offset >= sym.st_size) {
		ret = -ERANGE;
		snprintf(err, errlen,
			 "offset %llu is past the end of %s (%llu bytes)",
			 (unsigned long long)m->offset, m->symbol,
			 (unsigned long long)sym.st_size);
		goto cleanup;
	}
	ret = 0;
cleanup:
	elf_end(elf);
	close(fd);
	return ret;
}

/* "PATH:SYMBOL[+OFF]" */
static int parse_uprobe(char *rest, struct tt_mark_spec *m, char *err,
			size_t errlen)
{
	char *colon = strrchr(rest, ':'), *plus, *end;

	if (!colon || copy_part(m->path, sizeof(m->path), rest, colon - rest)) {
		snprintf(err, errlen, "expected PATH:SYMBOL[+OFF]");
		return -EINVAL;
	}
	plus = strchr(colon + 1, '+');
	if (plus) {
		errno = 0;
		m->offset = strtoull(plus + 1, &end, 0);
		if (errno || end == plus + 1 || *end || plus[1] == '-') {
			snprintf(
				err, errlen,
				"bad offset '%s': bytes past the symbol, decimal or 0x hex",
				plus + 1);
			return -EINVAL;
		}
		*plus = '\0';
	}
	if (copy_part(m->symbol, sizeof(m->symbol), colon + 1,
		      strlen(colon + 1))) {
		snprintf(err, errlen, "expected PATH:SYMBOL[+OFF]");
		return -EINVAL;
	}
	return 0;
}

/* "PATH:PROVIDER:NAME" after "usdt:" */
static int parse_usdt(char *rest, struct tt_mark_spec *m, char *err,
		      size_t errlen)
{
	char *name = strrchr(rest, ':'), *prov;

	if (name) {
		*name++ = '\0';
		prov = strrchr(rest, ':');
		if (prov &&
		    !copy_part(m->path, sizeof(m->path), rest, prov - rest) &&
		    !copy_part(m->provider, sizeof(m->provider), prov + 1,
			       strlen(prov + 1)) &&
		    !copy_part(m->symbol, sizeof(m->symbol), name,
			       strlen(name)))
			return 0;
	}
	snprintf(err, errlen, "expected usdt:PATH:PROVIDER:NAME");
	return -EINVAL;
}

/* The interpreter's object layout (enum tt_py_layout): 3.11 on exports
 * its version as Py_Version (PY_VERSION_HEX); 3.8-3.10, which have the
 * probe too, do not. */
static __u32 py_layout(Elf *elf)
{
	__u64 version = 0;
	GElf_Sym sym;

	if (!tt_elf_symbol(elf, "Py_Version", &sym))
		return TT_PY_LAYOUT_311;
	if (sym.st_size < sizeof(__u32) ||
	    !tt_elf_read(elf, sym.st_value, &version,
			 sym.st_size < sizeof(version) ? sym.st_size :
							 sizeof(version)))
		return TT_PY_LAYOUT_UNKNOWN;
	return version >= PY_VERSION_3_12 ? TT_PY_LAYOUT_312 : TT_PY_LAYOUT_311;
}

/* m's file has CPython's python:audit probe (built --with-dtrace); sets
 * m->py_layout. */
static int check_python(struct tt_mark_spec *m, char *err, size_t errlen)
{
	int fd, ret = 0;
	Elf *elf;

	elf = tt_elf_open(m->path, &fd, err, errlen);
	if (!elf)
		return fd;
	if (tt_elf_usdt(elf, PY_PROVIDER, PY_PROBE)) {
		m->py_layout = py_layout(elf);
	} else {
		ret = -ENOENT;
		snprintf(
			err, errlen,
			"%s has no USDT probe python:audit (a CPython built without --with-dtrace?)",
			m->path);
	}
	elf_end(elf);
	close(fd);
	return ret;
}

/* "[PATH:]EVENT" after "python:": EVENT is sys.audit's first argument */
static int parse_python(char *rest, struct tt_mark_spec *m, char *err,
			size_t errlen)
{
	char *event = strrchr(rest, ':');
	size_t n;

	if (event)
		*event++ = '\0';
	else
		event = rest;
	if (event != rest &&
	    copy_part(m->path, sizeof(m->path), rest, strlen(rest))) {
		snprintf(err, errlen, "expected python:[PATH:]EVENT");
		return -EINVAL;
	}
	n = strlen(event);
	/* a ',' here is a misspelt option (",keys=arg1") */
	for (const char *c = event; *c; c++)
		if (!isgraph((unsigned char)*c) || *c == ',')
			n = 0;
	if (copy_part(m->symbol, TT_PY_EVENT_LEN, event, n)) {
		snprintf(
			err, errlen,
			"bad event '%s': sys.audit's event name, 1 to %d printable characters, no ','",
			event, TT_PY_EVENT_LEN - 1);
		return -EINVAL;
	}
	strcpy(m->provider, PY_PROVIDER);
	return 0;
}

int tt_mark_parse(const char *text, struct tt_mark_spec *m, char *err,
		  size_t errlen)
{
	static const char *const kinds[] = { [TT_MARK_ENQUEUE] = "enqueue",
					     [TT_MARK_DISPATCH] = "dispatch",
					     [TT_MARK_TOKEN] = "token" };
	const char *eq = strchr(text, '=');
	char *rest = NULL;
	int ret = -EINVAL;

	memset(m, 0, sizeof(*m));
	for (__u32 k = TT_MARK_ENQUEUE; eq && k <= TT_MARK_TOKEN; k++)
		if (strlen(kinds[k]) == (size_t)(eq - text) &&
		    !strncmp(text, kinds[k], eq - text))
			m->kind = k;
	if (!m->kind) {
		snprintf(
			err, errlen,
			"unknown marker kind: expected enqueue=, dispatch= or token=");
		goto cleanup;
	}
	rest = strdup(eq + 1);
	if (!rest) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	m->usdt = !strncmp(rest, "usdt:", 5);
	m->python = !strncmp(rest, "python:", 7);
	ret = parse_key(rest,
			m->usdt || m->python ? USDT_MAX_ARGS : TT_ARCH_REG_ARGS,
			m, err, errlen);
	if (ret)
		goto cleanup;
	if (m->python) {
		ret = parse_python(rest + 7, m, err, errlen);
		if (!ret && m->path[0])
			ret = check_file(m->path, err, errlen) ?:
				      check_python(m, err, errlen);
		goto cleanup;
	}
	ret = m->usdt ? parse_usdt(rest + 5, m, err, errlen) :
			parse_uprobe(rest, m, err, errlen);
	if (!ret)
		ret = check_file(m->path, err, errlen);
	if (!ret && !m->usdt)
		ret = check_symbol(m, err, errlen);
cleanup:
	free(rest);
	return ret;
}

/* processes of one -p looked in for an interpreter: it and its children */
#define PY_FIND_PROCS 64

struct python_find {
	pid_t pid;
	struct tt_mark_spec *m;
	char without[PATH_MAX]; /* an interpreter seen without the probe */
};

/* A mapping of the program or of libpython*: the one with the probe. */
static int python_mapping(void *ctx, const struct tt_mapping *map)
{
	struct python_find *pf = ctx;
	const char *base = strrchr(map->path, '/');
	char err[256];
	int fd;

	base = base ? base + 1 : map->path;
	if (strncmp(base, "python", 6) && strncmp(base, "libpython", 9))
		return 0;
	/* the workload names the file: opened and checked as a CUDA library
	 * candidate is, never by its path in root's view */
	fd = tt_cudalib_open_mapping(pf->pid, map, err, sizeof(err));
	if (fd < 0)
		return 0;
	tt_cudalib_fd_path(fd, pf->m->path, sizeof(pf->m->path));
	if (!check_python(pf->m, err, sizeof(err))) {
		snprintf(pf->m->shown, sizeof(pf->m->shown), "%s", map->path);
		return 1; /* fd stays open: the path names it until exit */
	}
	close(fd);
	pf->m->path[0] = '\0';
	snprintf(pf->without, sizeof(pf->without), "%s", map->path);
	return 0;
}

int tt_mark_find_python(struct tt_mark_spec *m, const pid_t *pids, int npids,
			char *err, size_t errlen)
{
	struct python_find pf = { .m = m };
	pid_t procs[PY_FIND_PROCS];
	int n;

	for (int i = 0; i < npids && !m->path[0]; i++) {
		procs[0] = pids[i];
		n = tt_proc_descendants(pids[i], procs + 1, PY_FIND_PROCS - 1);
		n = n < 0 ? 1 : n + 1;
		for (int k = 0; k < n && !m->path[0]; k++) {
			pf.pid = procs[k];
			tt_proc_mappings(procs[k], python_mapping, &pf);
		}
	}
	if (m->path[0])
		return 0;
	if (pf.without[0])
		snprintf(
			err, errlen,
			"the traced processes run %s, a CPython without its USDT probe python:audit (built without --with-dtrace); name one with it: python:PATH:%s",
			pf.without, m->symbol);
	else
		snprintf(
			err, errlen,
			npids ? "no traced process runs CPython; name the interpreter: python:PATH:%s" :
				"with no -p to look in, name the interpreter: python:PATH:%s",
			m->symbol);
	return -ENOENT;
}
