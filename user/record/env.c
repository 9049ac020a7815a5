// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Environment checks for recording (env.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <bpf/btf.h>
#include "env.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_MAGIC 0x74726163

bool tt_have_bpf_privileges(char *err, size_t errlen)
{
	unsigned long long cap = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "CapEff: %llx", &cap) == 1)
				break;
		fclose(f);
	}
	/* CAP_SYS_ADMIN (21) or CAP_PERFMON (38) + CAP_BPF (39), and
	 * CAP_DAC_READ_SEARCH (2): tracefs, where the syscall tracepoints'
	 * ids are read, is mode 0700 */
	if (((cap & (1ULL << 21)) || ((cap >> 38) & 3) == 3) &&
	    (cap & (1ULL << 2)))
		return true;
	snprintf(
		err, errlen,
		"permission denied: tracing needs root, or CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH (try sudo)");
	return false;
}

bool tt_tracepoint_exists(const char *group, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/%s", group, name);
	if (!access(path, F_OK))
		return true;
	snprintf(path, sizeof(path), "/sys/kernel/debug/tracing/events/%s/%s",
		 group, name);
	return !access(path, F_OK);
}

/* type id, past typedefs and qualifiers */
static const struct btf_type *btf_skip(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

bool tt_tp_arg_is_ptr(const struct btf *btf, const char *tp, int idx,
		      const char *sname)
{
	const struct btf_type *t, *pt;
	const struct btf_param *p;
	char name[128];
	int id;

	if (!btf)
		return false;
	/* typedef void (*btf_trace_TP)(void *, ARGS...) */
	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return false;
	t = btf_skip(btf, id);
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf_skip(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) <= idx + 1)
		return false;
	p = btf_params(t) + idx + 1;
	pt = btf_skip(btf, p->type);
	if (!pt || !btf_is_ptr(pt))
		return false;
	if (!sname)
		return true;
	pt = btf_skip(btf, pt->type);
	return pt && btf_is_struct(pt) &&
	       !strcmp(btf__name_by_offset(btf, pt->name_off), sname);
}

int tt_ensure_tracefs(char *err, size_t errlen)
{
	struct statfs st;

	if (!statfs(TRACEFS, &st) && st.f_type == TRACEFS_MAGIC)
		return 0;
	if (!access("/sys/kernel/debug/tracing/events", F_OK))
		return 0;
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		int e = errno;

		snprintf(err, errlen, "cannot mount tracefs on %s: %s", TRACEFS,
			 strerror(e));
		return -e;
	}
	return 0;
}
