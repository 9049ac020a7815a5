// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ttftrace: time-to-first-token tracer. Subcommands:
 *   record  trace processes into a .ttft recording
 *   report  analyse a recording
 *   check   tell what this kernel supports
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmds.h"
#include "collector.h"
#include "procfs.h"
#include "ttfile.h"
#include "util.h"

#define MAX_TARGETS 64
#define FLUSH_INTERVAL_NS 1000000000ULL

const char *argp_program_version = "ttftrace 0.1";

struct record_args {
	pid_t pids[MAX_TARGETS];
	int npids;
	const char *command;
	__u64 duration_ns;
	const char *output;
	__u64 ringbuf_bytes;
	int verbose;
	bool quiet;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static const char record_doc[] =
	"Record the traced processes' socket, thread and process events into a .ttft file.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace record -p 1234 -d 30s          # trace PID 1234 for 30 s\n"
	"  ttftrace record -p 1234 -p 1240 -o a.ttft\n"
	"  ttftrace record -c './server --port 8000' -d 1m\n"
	"  ttftrace report ttftrace.ttft           # then analyse it";

static const struct argp_option record_options[] = {
	{ "pid", 'p', "PID", 0, "Trace this process and its children (repeatable)", 0 },
	{ "command", 'c', "CMD", 0, "Start CMD (with /bin/sh -c) and trace it", 0 },
	{ "duration", 'd', "DURATION", 0, "Stop after DURATION (e.g. 10, 10s, 500ms, 2m)", 0 },
	{ "output", 'o', "FILE", 0, "Write to FILE (default ttftrace.ttft; an existing one becomes FILE.old)", 0 },
	{ "ringbuf-size", 'b', "SIZE", 0, "Ring buffer size, a power of two (default 16M)", 0 },
	{ "verbose", 'v', NULL, 0, "More messages (twice: libbpf debug)", 0 },
	{ "quiet", 'q', NULL, 0, "Only errors", 0 },
	{},
};

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_args *a = state->input;
	long pid;

	switch (key) {
	case 'p':
		if (tt_parse_long(arg, 1, 4194304, &pid))
			argp_error(state, "invalid PID: '%s'", arg);
		if (a->npids == MAX_TARGETS)
			argp_error(state, "at most %d PIDs", MAX_TARGETS);
		a->pids[a->npids++] = pid;
		break;
	case 'c':
		a->command = arg;
		break;
	case 'd':
		if (tt_parse_duration(arg, &a->duration_ns))
			argp_error(state, "invalid duration: '%s'", arg);
		break;
	case 'o':
		if (!*arg)
			argp_error(state, "empty output path");
		a->output = arg;
		break;
	case 'b':
		if (tt_parse_size(arg, &a->ringbuf_bytes) ||
		    a->ringbuf_bytes < 4096 || a->ringbuf_bytes > (1u << 30) ||
		    (a->ringbuf_bytes & (a->ringbuf_bytes - 1)))
			argp_error(state,
				   "invalid ring buffer size '%s': a power of two from 4K to 1G",
				   arg);
		break;
	case 'v':
		a->verbose++;
		break;
	case 'q':
		a->quiet = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!a->npids && !a->command)
			argp_error(state, "nothing to trace: give -p PID or -c CMD");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct record_state {
	struct tt_writer *writer;
	__u64 events;
	int write_err;
};

static int record_event(void *ctx, const struct tt_event *ev)
{
	struct record_state *rs = ctx;
	int err = tt_writer_add(rs->writer, ev);

	if (err) {
		rs->write_err = err;
		return err;
	}
	rs->events++;
	return 0;
}

/* Moves an existing recording aside as perf does, then checks that the
 * path is writable before any tracing starts. */
static int prepare_output(const char *path)
{
	char old[4096];
	int fd;

	if (!access(path, F_OK)) {
		snprintf(old, sizeof(old), "%s.old", path);
		if (rename(path, old)) {
			fprintf(stderr, "ttftrace: cannot move %s to %s: %s\n",
				path, old, strerror(errno));
			return -1;
		}
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "ttftrace: cannot create %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	close(fd);
	unlink(path);
	return 0;
}

/* Forks CMD stopped on a pipe, so that it is traced from its first
 * instruction: the caller adds it to the filter, then releases it. */
static pid_t spawn_command(const char *cmd, int *release_fd)
{
	int fds[2];
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[1]);
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		fprintf(stderr, "ttftrace: cannot run /bin/sh: %s\n",
			strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	*release_fd = fds[1];
	return pid;
}

static void fill_meta(struct tt_file_meta *meta, int argc, char **argv)
{
	struct utsname u;
	size_t off = 0;

	memset(meta, 0, sizeof(*meta));
	gethostname(meta->hostname, sizeof(meta->hostname) - 1);
	if (!uname(&u))
		snprintf(meta->kernel, sizeof(meta->kernel), "%.40s %.64s %.16s",
			 u.release, u.version, u.machine);
	meta->mono_ns = tt_clock_ns(CLOCK_MONOTONIC);
	meta->real_ns = tt_clock_ns(CLOCK_REALTIME);
	for (int i = 0; i < argc && off < sizeof(meta->options) - 1; i++)
		off += snprintf(meta->options + off,
				sizeof(meta->options) - off, "%s%s",
				i ? " " : "", argv[i]);
}

static bool targets_alive(const struct record_args *a, pid_t child)
{
	int status;

	if (child > 0 && waitpid(child, &status, WNOHANG) == child)
		return false;
	for (int i = 0; i < a->npids; i++)
		if (tt_proc_alive(a->pids[i]))
			return true;
	return child > 0;
}

static int cmd_record(int argc, char **argv)
{
	struct record_args a = { .output = "ttftrace.ttft" };
	struct argp argp = { record_options, record_parse, NULL, record_doc };
	struct tt_collector_opts copts = {};
	struct record_state rs = {};
	struct tt_collector *c = NULL;
	struct tt_write_stats ws = {};
	struct tt_file_meta meta;
	struct sigaction sa = {};
	__u64 start, last_flush;
	int release_fd = -1, err = 1, n;
	pid_t child = -1;
	char msg[512];
	const char *why = NULL;

	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	fill_meta(&meta, argc, argv);
	if (!tt_have_bpf_privileges(msg, sizeof(msg))) {
		fprintf(stderr, "ttftrace: %s\n", msg);
		return 1;
	}
	for (int i = 0; i < a.npids; i++) {
		if (!tt_proc_alive(a.pids[i])) {
			fprintf(stderr, "ttftrace: no such process: %d\n",
				a.pids[i]);
			return 1;
		}
	}
	if (prepare_output(a.output))
		return 1;
	copts.ringbuf_bytes = a.ringbuf_bytes;
	copts.fn = record_event;
	copts.ctx = &rs;
	copts.verbose = a.verbose;
	c = tt_collector_open(&copts, msg, sizeof(msg));
	if (!c) {
		fprintf(stderr, "ttftrace: %s\n", msg);
		return 1;
	}
	if (a.command) {
		child = spawn_command(a.command, &release_fd);
		if (child < 0) {
			fprintf(stderr, "ttftrace: cannot start '%s': %s\n",
				a.command, strerror(errno));
			goto cleanup;
		}
	}
	for (int i = 0; i < a.npids; i++) {
		if (tt_collector_trace_pid(c, a.pids[i], msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			goto cleanup;
		}
		tt_proc_add_threads(a.pids[i], &meta.procs, &meta.nprocs);
	}
	if (child > 0) {
		if (tt_collector_trace_pid(c, child, msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			goto cleanup;
		}
		tt_proc_add_threads(child, &meta.procs, &meta.nprocs);
	}
	rs.writer = tt_writer_open(a.output, &meta);
	if (!rs.writer) {
		fprintf(stderr, "ttftrace: cannot write %s: %s\n", a.output,
			strerror(errno));
		goto cleanup;
	}
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (release_fd >= 0) {
		if (write(release_fd, "g", 1) != 1)
			why = "the command could not be started";
		close(release_fd);
		release_fd = -1;
	}
	if (!a.quiet)
		fprintf(stderr, "ttftrace: recording to %s%s\n", a.output,
			a.duration_ns ? "" : " (Ctrl-C to stop)");
	start = last_flush = tt_clock_ns(CLOCK_MONOTONIC);
	while (!why) {
		__u64 now;

		n = tt_collector_poll(c, 100);
		if (n < 0) {
			why = "write error";
			break;
		}
		now = tt_clock_ns(CLOCK_MONOTONIC);
		if (tt_collector_check_lost(c) && rs.write_err)
			why = "write error";
		if (now - last_flush >= FLUSH_INTERVAL_NS) {
			if (tt_writer_flush(rs.writer))
				why = "write error";
			last_flush = now;
		}
		if (stop_signal)
			why = "interrupted";
		else if (a.duration_ns && now - start >= a.duration_ns)
			why = "duration reached";
		else if (!targets_alive(&a, child))
			why = "traced processes exited";
	}
	/* what is still in the ring buffer belongs to the recording */
	tt_collector_poll(c, 0);
	tt_collector_check_lost(c);
	if (rs.write_err) {
		fprintf(stderr, "ttftrace: writing %s failed: %s; the blocks written so far are readable\n",
			a.output, strerror(-rs.write_err));
		tt_writer_close(rs.writer, &ws);
		rs.writer = NULL;
		goto cleanup;
	}
	if (tt_writer_close(rs.writer, &ws)) {
		fprintf(stderr, "ttftrace: closing %s failed: %s\n", a.output,
			strerror(errno));
		rs.writer = NULL;
		goto cleanup;
	}
	rs.writer = NULL;
	if (!a.quiet)
		fprintf(stderr,
			"ttftrace: %s; %llu events, %llu bytes (%.1f bytes/event) written to %s, %llu lost\n",
			why, (unsigned long long)ws.events,
			(unsigned long long)ws.bytes,
			ws.events ? (double)ws.bytes / ws.events : 0.0,
			a.output,
			(unsigned long long)tt_collector_lost_total(c));
	err = 0;
cleanup:
	if (release_fd >= 0)
		close(release_fd);
	if (rs.writer)
		tt_writer_close(rs.writer, NULL);
	if (child > 0 && waitpid(child, NULL, WNOHANG) == 0) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
	}
	tt_collector_close(c);
	free(meta.procs);
	return err;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: ttftrace COMMAND [OPTION...]\n"
		"Trace an LLM inference server's requests and explain their time to first token.\n"
		"\n"
		"Commands:\n"
		"  record   trace processes into a .ttft recording\n"
		"  report   analyse a recording\n"
		"  check    tell what this kernel supports\n"
		"\n"
		"'ttftrace COMMAND --help' describes each.\n");
}

int main(int argc, char **argv)
{
	argp_err_exit_status = 2;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return tt_cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return tt_cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s\n", argp_program_version);
		return 0;
	}
	fprintf(stderr, "ttftrace: unknown command '%s' (record, report, check)\n",
		argv[1]);
	return 2;
}
