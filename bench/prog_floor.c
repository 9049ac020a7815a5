/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prog_floor OBJ: loads the calibration programs of bench/prog_floor.bpf.c
 * one at a time, makes N getppid() calls and prints each program's
 * run_time_ns / run_cnt. Needs root and kernel.bpf_stats_enabled=1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define CALLS 300000

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: prog_floor OBJ\n");
		return 2;
	}
	libbpf_set_print(silent);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "prog_floor: cannot load %s: %s\n", argv[1],
			strerror(errno));
		goto cleanup;
	}
	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct bpf_link *link = bpf_program__attach(prog);

		if (!link) {
			fprintf(stderr, "prog_floor: cannot attach %s: %s\n",
				bpf_program__name(prog), strerror(errno));
			goto cleanup;
		}
		for (int i = 0; i < CALLS; i++)
			getppid();
		bpf_link__destroy(link);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			goto cleanup;
		printf("%s %llu %llu\n", bpf_program__name(prog),
		       (unsigned long long)info.run_time_ns,
		       (unsigned long long)info.run_cnt);
	}
	ret = 0;
cleanup:
	bpf_object__close(obj);
	return ret;
}
