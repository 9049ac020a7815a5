// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* ttftrace check: which hooks this kernel allows, one line each, and
 * whether ttftrace can run here. Every answer comes from a real load and
 * attach, not from reading configs. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "cmds.h"
#include "env.h"
#include "hooks.h"
#include "probe.skel.h"
#include "ttftrace.skel.h"

struct feature {
	const char *name;
	const char *prog; /* in probe.bpf.c */
	bool required;
};

static const struct feature features[] = {
	{ "tracepoints", "probe_tracepoint", true },
	{ "tp_btf (BTF tracepoints)", "probe_tp_btf", true },
	{ "raw tracepoints", "probe_raw_tp", false },
	{ "bpf_task_pt_regs", "probe_task_pt_regs", false },
	{ "uprobes", "probe_uprobe", false },
	{ "kprobes", "probe_kprobe", false },
	{ "fentry/fexit", "probe_fentry", false },
};

/* The uprobe probe's target: a function of our own binary. */
__attribute__((noinline)) int tt_check_uprobe_target(int x)
{
	asm volatile("" : "+r"(x));
	return x + 1;
}

static int silent_print(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	return 0;
}

/* Hits counted by the probe object's uprobe program (its .bss). */
static __u64 uprobe_hits(struct bpf_object *obj)
{
	struct bpf_map *map;
	__u64 hits = 0;
	__u32 zero = 0;

	bpf_object__for_each_map(map, obj)
		if (strstr(bpf_map__name(map), ".bss"))
			bpf_map_lookup_elem(bpf_map__fd(map), &zero, &hits);
	return hits;
}

/* Loads and attaches just one program of a BPF object (given as the ELF
 * bytes a skeleton embeds); a uprobe goes on a function of our own. */
static int try_program(const void *elf, size_t elf_size,
		       const char *prog_name, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .func_name = "tt_check_uprobe_target");
	struct bpf_object *obj = bpf_object__open_mem(elf, elf_size, NULL);
	struct bpf_program *prog, *target = NULL;
	struct bpf_link *link = NULL;
	bool uprobe;
	int err;

	if (!obj) {
		snprintf(why, whylen, "cannot open BPF object");
		return -ENOMEM;
	}
	bpf_object__for_each_program(prog, obj) {
		bool me = !strcmp(bpf_program__name(prog), prog_name);

		bpf_program__set_autoload(prog, me);
		if (me)
			target = prog;
	}
	err = bpf_object__load(obj);
	if (err) {
		snprintf(why, whylen, "load refused: %s", strerror(-err));
		goto cleanup;
	}
	uprobe = !strcmp(bpf_program__section_name(target), "uprobe");
	if (uprobe)
		link = bpf_program__attach_uprobe_opts(target, 0,
						       "/proc/self/exe", 0,
						       &uopts);
	else
		link = bpf_program__attach(target);
	if (!link) {
		err = -errno;
		snprintf(why, whylen, "attach refused: %s", strerror(-err));
		goto cleanup;
	}
	if (uprobe) {
		tt_check_uprobe_target(1);
		if (!uprobe_hits(obj)) {
			err = -ENOENT;
			snprintf(why, whylen, "attached but never fired");
		}
	}
cleanup:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return err;
}

/* The kernel's BTF has struct sname with a member mname. */
static bool btf_has_member(const struct btf *btf, const char *sname,
			   const char *mname)
{
	const struct btf_member *m;
	const struct btf_type *t;
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), mname))
			return true;
	return false;
}

/* What sched_switch reads a CPU's steal clock through (docs/design.md
 * §4.7): optional, a kernel without it records no steal. */
static void check_steal(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool yes = btf && btf_has_member(btf, "cfs_rq", "rq") &&
		   btf_has_member(btf, "rq", "prev_steal_time_rq");

	printf("%-28s %s\n", "VM steal (per CPU)",
	       yes ? "yes" :
		     "no: needs CONFIG_PARAVIRT_TIME_ACCOUNTING and CONFIG_FAIR_GROUP_SCHED (optional)");
	btf__free(btf);
}

static const char check_doc[] =
	"Tell which BPF hooks this kernel allows and whether ttftrace can run here.\n"
	"\n"
	"EXAMPLE:\n"
	"  sudo ttftrace check";

int tt_cmd_check(int argc, char **argv)
{
	struct argp argp = { NULL, NULL, NULL, check_doc };
	struct ttftrace_bpf *skel = NULL;
	struct bpf_program *prog;
	size_t probe_size, tt_size;
	const void *probe_elf = probe_bpf__elf_bytes(&probe_size);
	const void *tt_elf = ttftrace_bpf__elf_bytes(&tt_size);
	bool ok = true, btf;
	const char *optional;
	char why[256], note[64];
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	libbpf_set_print(silent_print);
	btf = !access("/sys/kernel/btf/vmlinux", R_OK);
	printf("%-28s %s\n", "BTF (/sys/kernel/btf/vmlinux)",
	       btf ? "yes" : "no: needs CONFIG_DEBUG_INFO_BTF=y");
	ok &= btf;
	if (!tt_have_bpf_privileges(why, sizeof(why))) {
		printf("%-28s no: %s\n", "privileges", why);
		printf("ttftrace can run here: no (privileges)\n");
		return 1;
	}
	printf("%-28s yes\n", "privileges");
	/* the syscall tracepoints' ids are read there */
	if (tt_ensure_tracefs(why, sizeof(why))) {
		printf("%-28s no: %s\n", "tracefs", why);
		ok = false;
	} else {
		printf("%-28s yes\n", "tracefs");
	}
	if (btf)
		check_steal();
	err = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	printf("%-28s %s\n", "ring buffer", err == 1 ? "yes" : "no");
	ok &= err == 1;
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		err = try_program(probe_elf, probe_size, features[i].prog, why,
				  sizeof(why));
		printf("%-28s %s%s%s\n", features[i].name, err ? "no: " : "yes",
		       err ? why : "",
		       err && !features[i].required ? " (optional)" : "");
		if (features[i].required && err)
			ok = false;
	}
	/* every hook ttftrace uses, on its own */
	skel = ttftrace_bpf__open();
	if (!skel) {
		printf("ttftrace can run here: no (cannot open its BPF object)\n");
		return 1;
	}
	bpf_object__for_each_program(prog, skel->obj) {
		const char *sec = bpf_program__section_name(prog);

		/* the CUDA uprobes attach per library: "uprobes" above */
		if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
			continue;
		err = try_program(tt_elf, tt_size, bpf_program__name(prog), why,
				  sizeof(why));
		optional = tt_hook_optional(bpf_program__name(prog));
		note[0] = '\0';
		if (err && optional)
			snprintf(note, sizeof(note), " (optional: %s)",
				 optional);
		printf("  hook %-34s %s%s%s\n", sec, err ? "no: " : "yes",
		       err ? why : "", note);
		ok &= !err || optional;
	}
	ttftrace_bpf__destroy(skel);
	printf("ttftrace can run here: %s\n", ok ? "yes" : "no");
	return ok ? 0 : 1;
}
