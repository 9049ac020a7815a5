// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Which of the BPF object's programs a kernel gets, and their attachment
 * (hooks.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "env.h"
#include "hooks.h"
#include "ttftrace.skel.h"

/* Attaches the *_exit programs before the others: an interrupt-depth entry
 * hook attached before its exit hook would count an entry whose exit it
 * never sees, and every later wakeup on that CPU would look like an
 * interrupt's. */
int tt_attach_programs(struct ttftrace_bpf *skel, char *err, size_t errlen)
{
	const struct bpf_object_skeleton *s = skel->skeleton;
	size_t len;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < s->prog_cnt; i++) {
			struct bpf_program *prog = *s->progs[i].prog;
			const char *name = s->progs[i].name;

			len = strlen(name);
			if ((len > 5 && !strcmp(name + len - 5, "_exit")) !=
			    (pass == 0))
				continue;
			if (!bpf_program__autoload(prog))
				continue;
			/* attached per library by tt_collector_probe_cuda */
			if (bpf_program__type(prog) == BPF_PROG_TYPE_KPROBE)
				continue;
			*s->progs[i].link = bpf_program__attach(prog);
			if (!*s->progs[i].link) {
				int e = -errno;

				snprintf(
					err, errlen,
					"cannot attach %s (%s): %s%s",
					bpf_program__section_name(prog), name,
					strerror(-e),
					e == -ENOENT ?
						": this kernel lacks the tracepoint (ttftrace check lists them)" :
						"");
				return e;
			}
		}
	}
	return 0;
}

/*
 * io_uring's read requests on files (docs/design.md §4.3): the request is
 * io_uring_complete's second argument since 5.19 (its first is the ring)
 * and the only one of io_uring_submit_req (6.4) or io_uring_submit_sqe
 * (6.0-6.3). Each hook loads where the kernel has it so; with neither, or
 * without io_uring, none of the four (its waits stay other.unknown).
 */
void tt_uring_hooks(struct ttftrace_bpf *skel)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool done = tt_tp_arg_is_ptr(btf, "io_uring_complete", 1, NULL);
	bool sub = tt_tp_arg_is_ptr(btf, "io_uring_submit_req", 0, "io_kiocb");

	if (!sub && tt_tp_arg_is_ptr(btf, "io_uring_submit_sqe", 0, "io_kiocb"))
		sub = !bpf_program__set_attach_target(
			skel->progs.tt_uring_submit, 0, "io_uring_submit_sqe");
	btf__free(btf);
	if (!tt_tracepoint_exists("syscalls", "sys_enter_io_uring_enter"))
		done = sub = false;
	bpf_program__set_autoload(skel->progs.tt_uring_submit, sub);
	bpf_program__set_autoload(skel->progs.tt_uring_complete, done);
	bpf_program__set_autoload(skel->progs.tt_fileio_io_uring_enter_enter,
				  sub || done);
	bpf_program__set_autoload(skel->progs.tt_fileio_io_uring_enter_exit,
				  sub || done);
}

void tt_poll_hooks(struct ttftrace_bpf *skel)
{
	const char *off = getenv("TTFTRACE_POLLS");
	bool on = !off || strcmp(off, "0");

	bpf_program__set_autoload(
		skel->progs.tt_poll_epoll_wait_exit,
		on && tt_tracepoint_exists("syscalls", "sys_exit_epoll_wait"));
	bpf_program__set_autoload(
		skel->progs.tt_poll_epoll_pwait_exit,
		on && tt_tracepoint_exists("syscalls", "sys_exit_epoll_pwait"));
	bpf_program__set_autoload(
		skel->progs.tt_poll_epoll_pwait2_exit,
		on && tt_tracepoint_exists("syscalls",
					   "sys_exit_epoll_pwait2"));
}

const char *tt_hook_optional(const char *prog)
{
	/* without them, an event loop's batches are told by its CPU */
	if (!strncmp(prog, "tt_poll_", 8))
		return "event loops' polls";
	/* without it, a gateway's calls are requests */
	if (!strcmp(prog, "tt_client_send"))
		return "gateways' hops";
	/* without io_uring's, its waits stay unknown */
	if (!strncmp(prog, "tt_uring_", 9) ||
	    !strncmp(prog, "tt_fileio_io_uring_enter", 24))
		return "io_uring's file requests";
	return NULL;
}
