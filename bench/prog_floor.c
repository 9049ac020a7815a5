/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * prog_floor OBJ: attaches the calibration programs of bench/prog_floor.bpf.c
 * one at a time, makes CALLS getppid() calls under each, ROUNDS times, and
 * prints per program "name run_time_ns run_cnt" of its least disturbed
 * round (a shared machine only ever adds). Needs root and
 * kernel.bpf_stats_enabled=1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define CALLS 200000
#define ROUNDS 3
#define MAX_PROGS 16

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

int main(int argc, char **argv)
{
	__u64 time_ns[MAX_PROGS], cnt[MAX_PROGS];
	__u64 total_ns[MAX_PROGS] = {}, total_cnt[MAX_PROGS] = {};
	__u64 best_ns[MAX_PROGS] = {}, best_cnt[MAX_PROGS] = {};
	struct bpf_object *obj;
	struct bpf_program *prog;
	int ret = 1, nprogs;

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
	for (int round = 0; round < ROUNDS; round++) {
		int i = 0;

		bpf_object__for_each_program(prog, obj) {
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);
			struct bpf_link *link;

			if (i == MAX_PROGS)
				break;
			link = bpf_program__attach(prog);
			if (!link) {
				fprintf(stderr, "prog_floor: cannot attach %s: %s\n",
					bpf_program__name(prog), strerror(errno));
				goto cleanup;
			}
			for (int k = 0; k < CALLS; k++)
				getppid();
			bpf_link__destroy(link);
			if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info,
						   &len))
				goto cleanup;
			/* the counters add up over rounds: this round's share */
			time_ns[i] = info.run_time_ns - total_ns[i];
			cnt[i] = info.run_cnt - total_cnt[i];
			total_ns[i] = info.run_time_ns;
			total_cnt[i] = info.run_cnt;
			if (cnt[i] && (!best_cnt[i] || time_ns[i] * best_cnt[i] <
							best_ns[i] * cnt[i])) {
				best_ns[i] = time_ns[i];
				best_cnt[i] = cnt[i];
			}
			i++;
		}
	}
	nprogs = 0;
	bpf_object__for_each_program(prog, obj) {
		if (nprogs == MAX_PROGS)
			break;
		printf("%s %llu %llu\n", bpf_program__name(prog),
		       (unsigned long long)best_ns[nprogs],
		       (unsigned long long)best_cnt[nprogs]);
		nprogs++;
	}
	ret = 0;
cleanup:
	bpf_object__close(obj);
	return ret;
}
