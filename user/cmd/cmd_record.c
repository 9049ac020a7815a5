// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ttftrace record: traces processes into a .ttft recording. The one place
 * where the collector (record/) and the writer (format/) meet.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cmds.h"
#include "cudaprobe.h"
#include "live.h"
#include "metrics.h"
#include "record.h"
#include "output.h"
#include "collector.h"
#include "cudalib.h"
#include "flight.h"
#include "gpu.h"
#include "gpudev.h"
#include "marks.h"
#include "procfs.h"
#include "rtlocks.h"
#include "sensors.h"
#include "tt_arch.h"
#include "ttfile.h"
#include "util.h"
#include "version.h"

#define MAX_TARGETS 64
#define MAX_CUDA_LIBS 16
#define MAX_GPU_DEVICES 16
#define MAX_MARKS TT_MAX_MARKS
/* one line from the collector, the prober or a check */
#define MSG_LEN 512
#define MAX_TRACED_TGIDS 1024
#define FLUSH_INTERVAL_NS 1000000000ULL
/* reading /proc/PID/stat walks every thread of the process: not per poll */
#define ALIVE_INTERVAL_NS 200000000ULL
/* A Go server answers within ms of its exec: its goroutines are followed
 * from the first scan that sees it (docs/design.md §4.10) */
#define RUNTIME_SCAN_NS 20000000ULL
/* energy sensors are read at start, at the end and this often between */
#define ENERGY_INTERVAL_NS 1000000000ULL
/* how long the command has to exit on SIGTERM before SIGKILL */
#define COMMAND_GRACE_NS 3000000000ULL

struct record_args {
	pid_t pids[MAX_TARGETS];
	int npids;
	const char *command;
	__u64 duration_ns;
	const char *output;
	__u64 ringbuf_bytes;
	int verbose;
	bool quiet;
	const char *gpu_probes;
	const char *msg_probes; /* "zmq" (NULL: zmq) or "none" */
	const char *tls_probes; /* "all" (NULL: all), "openssl" or "none" */
	const char *gpu_devices[MAX_GPU_DEVICES];
	int ngpu_devices;
	const char *cuda_libs[MAX_CUDA_LIBS];
	int ncuda_libs;
	enum go_mode { GO_AUTO, GO_ON, GO_OFF } goroutines;
	const char *marks[MAX_MARKS]; /* --mark, checked after parsing */
	int nmarks;
	const char *energy_root; /* --energy-root, else $TTFTRACE_SYSFS */
	struct tt_flight_opts flight; /* --ring, --trigger, --otlp (flight.h) */
	const char *metrics; /* --metrics ADDR:PORT */
};

enum {
	OPT_ENERGY_ROOT = 256,
	OPT_GOROUTINES,
	OPT_METRICS,
	OPT_MSG_PROBES,
	OPT_TLS_PROBES,
};

static volatile sig_atomic_t stop_signal, stop_signals;

static void on_signal(int sig)
{
	stop_signal = sig;
	stop_signals++;
}

static const char record_doc[] =
	"Record the traced processes' socket, thread and process events into a .ttft file.\n"
	"\n"
	"EXAMPLES:\n"
	"  ttftrace record -p 1234 -d 30s          # trace PID 1234 for 30 s\n"
	"  ttftrace record -p 1234 -p 1240 -o a.ttft\n"
	"  ttftrace record -c './server --port 8000' -d 1m\n"
	"  ttftrace report ttftrace.ttft           # then analyse it";

/* clang-format off */
static const struct argp_option record_options[] = {
	{ "pid", 'p', "PID", 0, "Trace this process and its children (repeatable)", 0 },
	{ "command", 'c', "CMD", 0, "Start CMD (with /bin/sh -c) and trace it", 0 },
	{ "duration", 'd', "DURATION", 0, "Stop after DURATION (e.g. 10, 10s, 500ms, 2m)", 0 },
	{ "output", 'o', "FILE", 0, "Write to FILE (default ttftrace.ttft; an existing one becomes FILE.old)", 0 },
	{ "ringbuf-size", 'b', "SIZE", 0, "Ring buffer size, a power of two (default 16M)", 0 },
	{ "gpu-device", 'G', "PATH", 0, "Also treat PATH as a GPU device node (repeatable)", 0 },
	{ "gpu-probes", 'P', "MODE", 0, "CUDA uprobes: none, sync (waits and graph launches; default) or all (every kernel launch too, at its entry only)", 0 },
	{ "cuda-lib", 'L', "PATH", 0, "Probe this CUDA driver library (repeatable; default: what the traced processes load)", 0 },
	{ "msg-probes", OPT_MSG_PROBES, "MODE", 0, "Messaging library uprobes: zmq (default: ZMQ's sends in the system's libzmq, how Python servers hand requests between processes) or none", 0 },
	{ "tls-probes", OPT_TLS_PROBES, "MODE", 0, "TLS library uprobes, for the plaintext of a server's encrypted responses: all (default: OpenSSL's SSL_write in the system's libssl and Node, and Go programs' crypto/tls), openssl (OpenSSL's only) or none", 0 },
	{ "goroutines", OPT_GOROUTINES, "auto|on|off", 0, "Follow goroutines in Go programs (a uprobe on runtime.casgstatus); auto (default): taken off when its traps would cost more than 5% of a CPU", 0 },
	{ "mark", 'M', "KIND=PATH:SYMBOL[+OFF][,key=argN][,peer=argM]", 0, "Application marker: KIND (enqueue, dispatch or token) happens when a traced process enters SYMBOL of PATH (or KIND=usdt:PATH:PROVIDER:NAME, a USDT probe; or KIND=python:[PATH:]EVENT, a Python program's sys.audit(EVENT, ...)); key=argN names the argument that identifies the request, peer=argM the one holding its client's port (repeatable)", 0 },
	{ "energy-root", OPT_ENERGY_ROOT, "DIR", 0, "Read energy sensors (class/powercap, class/hwmon) under DIR instead of /sys (also $TTFTRACE_SYSFS; $TTFTRACE_NVML names the NVML library)", 0 },
	{ "metrics", OPT_METRICS, "[ADDR:]PORT", 0, "Serve Prometheus metrics at http://ADDR:PORT/metrics (ADDR: 127.0.0.1 when only a port is given)", 0 },
	{ "verbose", 'v', NULL, 0, "More messages (twice: libbpf debug)", 0 },
	{ "quiet", 'q', NULL, 0, "Only errors", 0 },
	{},
};
/* clang-format on */

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_args *a = state->input;
	long pid;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->flight;
		break;
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
	case 'G':
		if (a->ngpu_devices == MAX_GPU_DEVICES)
			argp_error(state, "at most %d --gpu-device",
				   MAX_GPU_DEVICES);
		a->gpu_devices[a->ngpu_devices++] = arg;
		break;
	case 'P':
		if (strcmp(arg, "none") && strcmp(arg, "sync") &&
		    strcmp(arg, "all"))
			argp_error(state, "invalid --gpu-probes '%s': none, sync or all",
				   arg);
		a->gpu_probes = arg;
		break;
	case OPT_MSG_PROBES:
		if (strcmp(arg, "zmq") && strcmp(arg, "none"))
			argp_error(state, "invalid --msg-probes '%s': zmq or none",
				   arg);
		a->msg_probes = arg;
		break;
	case OPT_TLS_PROBES:
		if (strcmp(arg, "all") && strcmp(arg, "openssl") &&
		    strcmp(arg, "none"))
			argp_error(
				state,
				"invalid --tls-probes '%s': all, openssl or none",
				arg);
		a->tls_probes = arg;
		break;
	case 'L':
		if (a->ncuda_libs == MAX_CUDA_LIBS)
			argp_error(state, "at most %d --cuda-lib",
				   MAX_CUDA_LIBS);
		a->cuda_libs[a->ncuda_libs++] = arg;
		break;
	case OPT_GOROUTINES:
		if (!strcmp(arg, "auto"))
			a->goroutines = GO_AUTO;
		else if (!strcmp(arg, "on"))
			a->goroutines = GO_ON;
		else if (!strcmp(arg, "off"))
			a->goroutines = GO_OFF;
		else
			argp_error(state,
				   "invalid --goroutines '%s': auto, on or off",
				   arg);
		break;
	case 'M':
		if (a->nmarks == MAX_MARKS)
			argp_error(state, "at most %d --mark", MAX_MARKS);
		a->marks[a->nmarks++] = arg;
		break;
	case 'v':
		a->verbose++;
		break;
	case 'q':
		a->quiet = true;
		break;
	case OPT_METRICS: {
		struct sockaddr_storage ss;
		char why[MSG_LEN];

		if (tt_metrics_parse(arg, &ss, why, sizeof(why)))
			argp_error(state, "--metrics '%s': %s", arg, why);
		a->metrics = arg;
		break;
	}
	case OPT_ENERGY_ROOT:
		if (!*arg)
			argp_error(state, "empty --energy-root");
		a->energy_root = arg;
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
	struct tt_rt_scanner *runtimes; /* which processes were looked at */
	bool exec_seen; /* a traced process exec'd: look at it now */
	struct tt_collector *coll; /* puts probes on the runtimes found */
	enum go_mode go_mode;
	bool goroutines; /* probe Go programs' goroutines (until taken off) */
	__u32 go_tgids[64]; /* the processes whose goroutines are followed */
	int ngo_tgids;
	__u64 go_hits, go_check_ts; /* the probe's hits at the last check */
	bool quiet;
	struct tt_sensors *sensors; /* energy sensors, read every second */
	struct tt_flight *flight; /* the ring and OTLP export, if asked */
	struct tt_live *live; /* the live core, when a view needs it */
	const struct tt_record_hooks *hooks;
};

static int record_event(void *ctx, const struct tt_event *ev)
{
	struct record_state *rs = ctx;
	int err = rs->flight ? tt_flight_add(rs->flight, ev) : 0;

	/* --ring writes only what a trigger asks for */
	if (!err && rs->writer && !tt_flight_ring_only(rs->flight))
		err = tt_writer_add(rs->writer, ev);
	if (!err && rs->live)
		err = tt_live_add(rs->live, ev);
	if (err) {
		rs->write_err = err;
		return err;
	}
	rs->events++;
	/* an exec (or a rename) of a process's main thread: a Go server is
	 * probed before its first request, not up to a scan period later */
	if (ev->h.type == TT_EV_COMM && ev->h.tid == ev->h.tgid)
		rs->exec_seen = true;
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
	if (pid > 0)
		setpgid(pid, pid); /* also here: no race with the kill below */
	if (pid == 0) {
		/* its own process group: stopping it stops all it started */
		setpgid(0, 0);
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
	snprintf(meta->recorder, sizeof(meta->recorder), "%s", TT_VERSION);
	meta->mono_ns = tt_clock_ns(CLOCK_MONOTONIC);
	meta->real_ns = tt_clock_ns(CLOCK_REALTIME);
	for (int i = 0; i < argc && off < sizeof(meta->options) - 1; i++)
		off += snprintf(meta->options + off,
				sizeof(meta->options) - off, "%s%s",
				i ? " " : "", argv[i]);
}

/* The command of -c: its shell's pid is also its process group's id. */
struct command {
	pid_t pgid;
	bool reaped; /* its shell's status is in status */
	bool stopped_by_us; /* reaped after our SIGTERM or SIGKILL */
	int status;
};

static void command_reap(struct command *cmd, int flags)
{
	if (cmd->pgid > 0 && !cmd->reaped &&
	    waitpid(cmd->pgid, &cmd->status, flags) == cmd->pgid)
		cmd->reaped = true;
}

/* Whether anything traced is left: the kernel's map of traced processes
 * (descendants included, each leaving it when its last thread exits), or a
 * command not reaped yet. A launcher that exits leaves its server traced. */
static bool targets_alive(struct tt_collector *c, struct command *cmd)
{
	__u32 tgid;

	command_reap(cmd, WNOHANG);
	if (tt_collector_traced_tgids(c, &tgid, 1) > 0)
		return true;
	return cmd->pgid > 0 && !cmd->reaped;
}

/* Whether any process of the command's group is left. */
static bool command_group_alive(const struct command *cmd)
{
	return !kill(-cmd->pgid, 0) || errno != ESRCH;
}

/* Ends the command's whole group (sh -c may have forked the real server):
 * SIGTERM, a grace period, then SIGKILL, saying so; a second Ctrl-C cuts
 * the grace short. */
static void command_stop(struct command *cmd, bool quiet)
{
	__u64 deadline = tt_clock_ns(CLOCK_MONOTONIC) + COMMAND_GRACE_NS;
	int signals = stop_signals;

	if (cmd->pgid <= 0)
		return;
	command_reap(cmd, WNOHANG);
	if (!cmd->reaped)
		cmd->stopped_by_us = true;
	if (!command_group_alive(cmd))
		goto cleanup;
	kill(-cmd->pgid, SIGTERM);
	while (tt_clock_ns(CLOCK_MONOTONIC) < deadline &&
	       stop_signals == signals) {
		command_reap(cmd, WNOHANG);
		if (cmd->reaped && !command_group_alive(cmd))
			goto cleanup;
		usleep(20000);
	}
	if (!quiet)
		fprintf(stderr,
			"ttftrace: the command's processes did not exit %s SIGTERM: sending SIGKILL to its process group\n",
			stop_signals == signals ? "within 3 s of" : "on");
	kill(-cmd->pgid, SIGKILL);
cleanup:
	command_reap(cmd, 0);
}

/* Checks every --mark against its file: one line for the first bad one. */
static struct tt_mark_spec *parse_marks(const struct record_args *a)
{
	struct tt_mark_spec *specs = calloc(a->nmarks ? a->nmarks : 1,
					    sizeof(*specs));
	char msg[MSG_LEN];

	if (!specs) {
		fprintf(stderr, "ttftrace: out of memory\n");
		return NULL;
	}
	for (int i = 0; i < a->nmarks; i++) {
		if (tt_mark_parse(a->marks[i], &specs[i], msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: --mark '%s': %s\n",
				a->marks[i], msg);
			free(specs);
			return NULL;
		}
	}
	return specs;
}

/* libbpf's messages, at the level -v asked for: the collector never prints */
static void print_libbpf(const char *msg)
{
	fputs(msg, stderr);
}

/* What the library prober has to say: warnings always, the rest with -v. */
static void print_collector_messages(struct tt_collector *c,
				     const struct record_args *a)
{
	char msg[MSG_LEN];

	while (tt_collector_message(c, msg, sizeof(msg)))
		if (!a->quiet && (a->verbose || !strncmp(msg, "warning", 7)))
			fprintf(stderr, "ttftrace: %s\n", msg);
}

/* A runtime's record: CPython's lock range; for Go, that its goroutines
 * are followed (the whole address space: every futex word is the
 * runtime's), or no longer (an empty range, docs/design.md §4.10). */
static int record_rtlock(struct record_state *rs, pid_t tgid, __u64 lo,
			 __u64 hi, __u32 kind)
{
	struct tt_event ev = {
		.h = { .ts = tt_clock_ns(CLOCK_MONOTONIC), .tgid = tgid,
		       .tid = tgid, .type = TT_EV_RTLOCK },
		.rtlock = { .lo = lo, .hi = hi, .kind = kind },
	};

	return record_event(rs, &ev);
}

/* A runtime found in a traced process: CPython's lock range into the
 * recording; a Go program's goroutine probe, and its record once on. */
static int record_runtime(void *ctx, pid_t tgid, const struct tt_rt_range *r)
{
	struct record_state *rs = ctx;
	char err[320], name[32];
	int ret;

	if (!r->kind) { /* it exec'd: what runtime it ran is gone */
		ret = record_rtlock(rs, tgid, 0, 0, TT_RT_GO);
		return ret ? ret : record_rtlock(rs, tgid, 0, 0, TT_RT_CPYTHON);
	}
	if (r->kind != TT_RT_GO)
		return record_rtlock(rs, tgid, r->lo, r->hi, r->kind);
	if (r->fd < 0)
		return 0;
	/* its crypto/tls: the plaintext of its encrypted answers */
	if (tt_collector_probe_go_tls_fd(rs->coll, r->fd) < 0 && !rs->quiet)
		fprintf(stderr,
			"ttftrace: warning: pid %d: out of memory for its TLS probe\n",
			(int)tgid);
	if (!rs->goroutines)
		return 0;
	snprintf(name, sizeof(name), "pid %d", (int)tgid);
	ret = tt_collector_probe_go_fd(rs->coll, r->fd, name, err, sizeof(err));
	if (ret < 0) {
		if (!rs->quiet)
			fprintf(stderr,
				"ttftrace: warning: %s; its goroutines are not followed\n",
				err);
		return 0;
	}
	if (rs->ngo_tgids == (int)(sizeof(rs->go_tgids) / sizeof(rs->go_tgids[0])))
		return 0; /* followed at the thread level: no record */
	rs->go_tgids[rs->ngo_tgids++] = tgid;
	return record_rtlock(rs, tgid, r->lo, r->hi, r->kind);
}

/* What one hit of the goroutine probe costs: the uprobe's trap, measured
 * on this project's VM (bench/mark_cost.sh: 12.5 us a hit) */
#define GO_TRAP_NS 12000ULL
/* --goroutines=auto keeps the probe while its traps cost less than this
 * share of one CPU (issue 9's 5%) */
#define GO_BUDGET_PPM 50000ULL

/* --goroutines=auto: the probe comes off when its traps, over the last
 * second, cost more than the budget; the Go programs are then followed
 * at the thread level, and the recording says from when. */
static int check_go_budget(struct tt_collector *c, struct record_state *rs,
			   __u64 now)
{
	__u64 hits, dt = now - rs->go_check_ts;
	int err = 0;

	if (!rs->goroutines || rs->go_mode != GO_AUTO || !rs->ngo_tgids ||
	    dt < 1000000000ULL)
		return 0;
	hits = tt_collector_go_hits(c);
	if ((hits - rs->go_hits) * GO_TRAP_NS * 1000000ULL >
	    GO_BUDGET_PPM * dt) {
		tt_collector_unprobe_go(c);
		rs->goroutines = false;
		for (int i = 0; i < rs->ngo_tgids && !err; i++)
			err = record_rtlock(rs, rs->go_tgids[i], 0, 0,
					    TT_RT_GO);
		if (!rs->quiet)
			fprintf(stderr,
				"ttftrace: warning: goroutine probe taken off: %.0f goroutine state changes/s would cost about %.2f CPU in uprobe traps; Go programs are followed at the thread level from here (--goroutines=on keeps the probe)\n",
				(hits - rs->go_hits) * 1e9 / dt,
				(hits - rs->go_hits) * GO_TRAP_NS / (double)dt);
	}
	rs->go_hits = hits;
	rs->go_check_ts = now;
	return err;
}

/* Looks for language runtimes in the traced processes not looked at yet
 * (new ones, or exec'd since): CPython's lock range. */
static int scan_runtimes(struct tt_collector *c, struct record_state *rs,
			 bool just_exec)
{
	__u32 tgids[MAX_TRACED_TGIDS];
	int n = tt_collector_traced_tgids(c, tgids, MAX_TRACED_TGIDS);

	return tt_rt_scan(rs->runtimes, tgids, n, just_exec, record_runtime,
			  rs);
}

/* Drains the collector into the writer until a reason to stop, which it
 * returns; a write error is left in rs->write_err. */
static const char *record_loop(struct tt_collector *c,
			       struct record_state *rs,
			       const struct record_args *a,
			       struct command *cmd)
{
	__u64 start, last_flush, last_alive, last_scan, last_energy;
	const char *why = NULL;
	int n;

	start = last_flush = last_alive = last_energy =
		tt_clock_ns(CLOCK_MONOTONIC);
	last_scan = start - RUNTIME_SCAN_NS; /* -p's processes: at once */
	while (!why) {
		__u64 now;

		n = tt_collector_poll(c, 100);
		now = tt_clock_ns(CLOCK_MONOTONIC);
		print_collector_messages(c, a);
		if (n >= 0)
			tt_collector_check_lost(c);
		if (!rs->write_err && now - last_energy >= ENERGY_INTERVAL_NS) {
			rs->write_err = tt_sensors_sample(rs->sensors,
							  record_event, rs);
			last_energy = now;
		}
		if (rs->live)
			tt_live_publish(rs->live);
		if (rs->hooks->tick && !why)
			why = rs->hooks->tick(rs->hooks->ctx, now);
		if (!rs->write_err && rs->writer &&
		    now - last_flush >= FLUSH_INTERVAL_NS) {
			rs->write_err = tt_writer_flush(rs->writer);
			last_flush = now;
		}
		if (!rs->write_err)
			rs->write_err = tt_flight_tick(rs->flight, now);
		if (rs->write_err || n < 0) {
			why = "write error";
			if (!rs->write_err)
				rs->write_err = n;
			break;
		}
		if (why)
			break;
		if (stop_signal)
			why = "interrupted";
		else if (a->duration_ns && now - start >= a->duration_ns)
			why = "duration reached";
		else if (now - last_alive >= ALIVE_INTERVAL_NS &&
			 !targets_alive(c, cmd))
			why = "traced processes exited";
		if (now - last_alive >= ALIVE_INTERVAL_NS)
			last_alive = now;
		if (!why && (rs->exec_seen || now - last_scan >= RUNTIME_SCAN_NS)) {
			bool just_exec = now - last_scan < RUNTIME_SCAN_NS;

			rs->exec_seen = false;
			if (!just_exec)
				last_scan = now;
			if (scan_runtimes(c, rs, just_exec) == -ENOMEM)
				why = "out of memory";
			else if (check_go_budget(c, rs, now))
				why = "write error";
		}
	}
	return why;
}

/* Every -p names a live process: a thread's process is traced in its
 * place. 0, or 1 (said why). */
static int resolve_targets(struct record_args *a)
{
	for (int i = 0; i < a->npids; i++) {
		pid_t tgid = tt_proc_tgid(a->pids[i]);

		if (!tt_proc_alive(a->pids[i]) || tgid <= 0) {
			fprintf(stderr, "ttftrace: no such process: %d\n",
				a->pids[i]);
			return 1;
		}
		/* requests live on a process's sockets: trace the whole one */
		if (tgid != a->pids[i]) {
			if (!a->quiet)
				fprintf(stderr,
					"ttftrace: %d is a thread of process %d: tracing process %d\n",
					a->pids[i], tgid, tgid);
			a->pids[i] = tgid;
		}
	}
	return 0;
}

/* The recording's device table: GPU nodes under /dev and the -G ones.
 * 0, or 1 (said why). */
static int gather_devices(const struct record_args *a,
			  struct tt_file_meta *meta)
{
	char msg[MSG_LEN];

	if (tt_gpu_discover("/dev", &meta->devs, &meta->ndevs)) {
		fprintf(stderr, "ttftrace: cannot list GPU devices in /dev: %s\n",
			strerror(errno));
		return 1;
	}
	for (int i = 0; i < a->ngpu_devices; i++) {
		if (tt_gpu_add_device(a->gpu_devices[i], &meta->devs,
				      &meta->ndevs, msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			free(meta->devs);
			return 1;
		}
	}
	return 0;
}

/* The one line record ends with, and what the run showed. */
static void print_summary(struct tt_collector *c, const struct record_args *a,
			  const struct tt_file_meta *meta,
			  const struct tt_write_stats *ws, const char *why,
			  const char *dest)
{
	int cuda_libs, cuda_fns, cuda_entry, zmq_libs, zmq_fns, tls_libs,
		tls_fns;
	__u16 port;

	tt_collector_cuda_stats(c, &cuda_libs, &cuda_fns, &cuda_entry);
	if (a->verbose)
		fprintf(stderr,
			"ttftrace: %llu transmits came inside their sends' records\n",
			(unsigned long long)tt_collector_xmits_held(c));
	zmq_fns = tt_collector_msg_stats(c, &zmq_libs);
	if (zmq_fns && a->verbose)
		fprintf(stderr,
			"ttftrace: %d ZMQ send function(s) probed in %d librar%s (--msg-probes=zmq)\n",
			zmq_fns, zmq_libs, zmq_libs == 1 ? "y" : "ies");
	tls_fns = tt_collector_tls_stats(c, &tls_libs);
	if (tls_fns && a->verbose)
		fprintf(stderr,
			"ttftrace: %d TLS write function(s) probed in %d file%s (--tls-probes)\n",
			tls_fns, tls_libs, tls_libs == 1 ? "" : "s");
	if (cuda_libs)
		fprintf(stderr,
			"ttftrace: %d CUDA driver function(s) probed in %d librar%s (--gpu-probes=%s), %d at entry only; %zu GPU device node(s)\n",
			cuda_fns, cuda_libs, cuda_libs == 1 ? "y" : "ies",
			a->gpu_probes ? a->gpu_probes : "sync", cuda_entry,
			meta->ndevs);
	fprintf(stderr,
		"ttftrace: %s; %llu events, %llu bytes (%.1f bytes/event) written to %s, %llu lost\n",
		why, (unsigned long long)ws->events,
		(unsigned long long)ws->bytes,
		ws->events ? (double)ws->bytes / ws->events : 0.0, dest,
		(unsigned long long)tt_collector_lost_total(c));
	if (!tt_collector_listen_ports(c, &port, 1))
		fprintf(stderr,
			"ttftrace: warning: the traced processes never listened on a TCP port: ttftrace follows HTTP over TCP (requests over UNIX-domain sockets are not seen)\n");
}

int tt_cmd_record(int argc, char **argv)
{
	static const struct tt_record_hooks none;

	return tt_record_with(argc, argv, &none);
}

/* The live core and the metrics server, when --metrics or a view asks. */
static int start_live(struct record_state *rs, const struct record_args *a,
		      const struct tt_file_meta *meta,
		      struct tt_metrics **server)
{
	struct tt_window_opts wo = {
		.procs = meta->procs, .nprocs = meta->nprocs,
		.devs = meta->devs, .ndevs = meta->ndevs,
		.span_ns = rs->hooks->span_ns,
	};
	char msg[MSG_LEN];

	if (!rs->hooks->want_live && !a->metrics)
		return 0;
	rs->live = tt_live_start(&wo, rs->hooks->interval_ns ?
					      rs->hooks->interval_ns :
					      1000000000ULL);
	if (!rs->live) {
		fprintf(stderr, "ttftrace: cannot start the live analysis: %s\n",
			strerror(errno));
		return 1;
	}
	if (rs->hooks->live_out)
		*rs->hooks->live_out = rs->live;
	if (!a->metrics)
		return 0;
	*server = tt_metrics_start(a->metrics, rs->live, msg, sizeof(msg));
	if (!*server) {
		fprintf(stderr, "ttftrace: --metrics %s: %s\n", a->metrics, msg);
		return 1;
	}
	if (!a->quiet)
		fprintf(stderr, "ttftrace: serving metrics at %s\n", msg);
	return 0;
}

int tt_record_with(int argc, char **argv, const struct tt_record_hooks *hooks)
{
	struct record_args a = { .output = "ttftrace.ttft" };
	static const struct argp_child children[] = {
		{ &tt_flight_argp, 0, NULL, 0 }, {}
	};
	struct tt_metrics *server = NULL;
	struct argp argp = { record_options, record_parse, NULL, record_doc,
			     children, NULL, NULL };
	struct tt_collector_opts copts = {};
	struct record_state rs = { .hooks = hooks };
	struct tt_collector *c = NULL;
	struct tt_write_stats ws = {};
	struct tt_file_meta meta;
	struct sigaction sa = {};
	int release_fd = -1, out_fd = -1, err = 1, n;
	struct stat out_st;
	int lib_fds[MAX_CUDA_LIBS];
	__u32 tgids[MAX_TRACED_TGIDS];
	struct command cmd = { .pgid = -1 };
	struct tt_mark_spec *marks = NULL;
	char msg[MSG_LEN];
	const char *why = NULL;

	for (int i = 0; i < MAX_CUDA_LIBS; i++)
		lib_fds[i] = -1;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	marks = parse_marks(&a);
	if (!marks)
		return 2;
	fill_meta(&meta, argc, argv);
	if (!tt_have_bpf_privileges(msg, sizeof(msg))) {
		fprintf(stderr, "ttftrace: %s\n", msg);
		goto cleanup;
	}
	if (resolve_targets(&a) || gather_devices(&a, &meta))
		goto cleanup;
	for (int i = 0; i < a.ncuda_libs; i++) {
		lib_fds[i] = tt_cudalib_open(a.cuda_libs[i], msg, sizeof(msg));
		if (lib_fds[i] < 0) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			goto cleanup;
		}
	}
	rs.flight = tt_flight_open(&a.flight, a.output, &meta, a.quiet, &n);
	if (n)
		goto cleanup;
	if (!hooks->no_file) {
		/* --ring: the writer's header goes nowhere, the dumps are its
		 * files */
		if (tt_flight_ring_only(rs.flight))
			out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		else
			out_fd = tt_output_create(a.output, "-o", &out_st);
		if (out_fd < 0)
			goto cleanup;
	}
	copts.gpu_probes = a.gpu_probes;
	copts.msg_probes = a.msg_probes;
	copts.tls_probes = a.tls_probes;
	copts.devs = meta.devs;
	copts.ndevs = meta.ndevs;
	copts.ringbuf_bytes = a.ringbuf_bytes;
	copts.fn = record_event;
	copts.ctx = &rs;
	copts.verbose = a.verbose;
	copts.log = print_libbpf;
	c = tt_collector_open(&copts, msg, sizeof(msg));
	if (!c) {
		fprintf(stderr, "ttftrace: %s\n", msg);
		goto cleanup;
	}
	if (!tt_collector_hops(c) && !a.quiet)
		fprintf(stderr,
			"ttftrace: warning: no tcp_sendmsg_locked tracepoint: a traced gateway's calls to its runner count as requests of their own\n");
	for (int i = 0; i < a.nmarks; i++) {
		if ((marks[i].python && !marks[i].path[0] &&
		     tt_mark_find_python(&marks[i], a.pids, a.npids, msg,
					 sizeof(msg))) ||
		    tt_collector_mark(c, &marks[i], i, msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: --mark '%s': %s\n",
				a.marks[i], msg);
			goto cleanup;
		}
	}
	if (a.command) {
		cmd.pgid = spawn_command(a.command, &release_fd);
		if (cmd.pgid < 0) {
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
	}
	if (cmd.pgid > 0) {
		if (tt_collector_trace_pid(c, cmd.pgid, msg, sizeof(msg))) {
			fprintf(stderr, "ttftrace: %s\n", msg);
			goto cleanup;
		}
	}
	/* the process table names every traced thread: the targets', and
	 * those of the descendants they had already started */
	n = tt_collector_traced_tgids(c, tgids, MAX_TRACED_TGIDS);
	for (int i = 0; i < n; i++)
		tt_proc_add_threads(tgids[i], &meta.procs, &meta.nprocs);
	if (tt_record_probe_cuda(c, a.cuda_libs, a.ncuda_libs, lib_fds,
				 a.gpu_probes))
		goto cleanup;
	rs.coll = c;
	rs.go_mode = a.goroutines;
	rs.goroutines = a.goroutines != GO_OFF;
	rs.go_check_ts = tt_clock_ns(CLOCK_MONOTONIC);
	rs.quiet = a.quiet;
	rs.runtimes = tt_rt_scanner_new();
	if (!rs.runtimes) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	if (!a.energy_root)
		a.energy_root = getenv("TTFTRACE_SYSFS");
	rs.sensors = tt_sensors_open(a.energy_root, getenv("TTFTRACE_NVML"));
	if (!rs.sensors) {
		fprintf(stderr, "ttftrace: out of memory\n");
		goto cleanup;
	}
	if (a.verbose || (a.energy_root && !a.quiet)) {
		tt_sensors_describe(rs.sensors, msg, sizeof(msg));
		fprintf(stderr, "ttftrace: %s\n", msg);
	}
	if (start_live(&rs, &a, &meta, &server))
		goto cleanup;
	rs.writer = hooks->no_file ? NULL : tt_writer_open_fd(out_fd, &meta);
	out_fd = -1;
	if (!rs.writer && !hooks->no_file) {
		fprintf(stderr, "ttftrace: cannot write %s: %s\n", a.output,
			strerror(errno));
		tt_output_discard(a.output, &out_st);
		goto cleanup;
	}
	rs.write_err = tt_sensors_sample(rs.sensors, record_event, &rs);
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
	if (!a.quiet && !hooks->no_file)
		fprintf(stderr, "ttftrace: recording to %s%s%s\n",
			tt_flight_ring_only(rs.flight) ? "memory, dumps beside " : "",
			a.output, a.duration_ns ? "" : " (Ctrl-C to stop)");
	if (!why)
		why = record_loop(c, &rs, &a, &cmd);
	/* what is still in the ring buffer belongs to the recording */
	tt_collector_poll(c, 0);
	if (!rs.write_err)
		rs.write_err = tt_sensors_sample(rs.sensors, record_event, &rs);
	tt_collector_check_lost(c);
	print_collector_messages(c, &a);
	tt_flight_close(rs.flight);
	rs.flight = NULL;
	/* the last scrape sees every request; then the last frame */
	tt_metrics_stop(server);
	server = NULL;
	if (rs.live) {
		__u64 cpu, nref, max;

		tt_live_publish(rs.live);
		tt_live_cost(rs.live, &cpu, &nref, &max);
		if (a.verbose)
			fprintf(stderr,
				"ttftrace: live analysis: %llu refreshes, %.1f ms of CPU each on average, %.1f ms at most\n",
				(unsigned long long)nref,
				nref ? (double)cpu / nref / 1e6 : 0.0,
				(double)max / 1e6);
	}
	if (hooks->done)
		hooks->done(hooks->ctx, why);
	if (hooks->no_file) {
		if (rs.write_err)
			fprintf(stderr, "ttftrace: live analysis failed: %s\n",
				strerror(-rs.write_err));
		err = !!rs.write_err;
		goto stop_command;
	}
	if (rs.write_err) {
		fprintf(stderr, "ttftrace: writing %s failed: %s; the blocks written so far are readable\n",
			a.output, strerror(-rs.write_err));
		tt_writer_close(rs.writer, &ws);
		rs.writer = NULL;
		goto cleanup;
	}
	n = tt_writer_close(rs.writer, &ws);
	rs.writer = NULL;
	if (n) {
		fprintf(stderr, "ttftrace: closing %s failed: %s\n", a.output,
			strerror(-n));
		goto cleanup;
	}
	if (!a.quiet)
		print_summary(c, &a, &meta, &ws, why,
			      a.flight.ring_ns ? "no file" : a.output);
	err = 0;
stop_command:
	command_stop(&cmd, a.quiet);
	/* the recording stands; the status says the command failed by itself */
	if (cmd.reaped && !cmd.stopped_by_us &&
	    !(WIFEXITED(cmd.status) && WEXITSTATUS(cmd.status) == 0)) {
		if (WIFEXITED(cmd.status))
			fprintf(stderr, "ttftrace: the command exited with status %d\n",
				WEXITSTATUS(cmd.status));
		else
			fprintf(stderr, "ttftrace: the command was killed by signal %d\n",
				WTERMSIG(cmd.status));
		err = 1;
	}
cleanup:
	if (release_fd >= 0)
		close(release_fd);
	if (out_fd >= 0) {
		close(out_fd);
		tt_output_discard(a.output, &out_st);
	}
	if (rs.writer)
		tt_writer_close(rs.writer, NULL);
	tt_metrics_stop(server);
	if (hooks->live_out)
		*hooks->live_out = NULL;
	tt_live_stop(rs.live);
	command_stop(&cmd, a.quiet);
	tt_flight_close(rs.flight);
	tt_collector_close(c);
	tt_rt_scanner_free(rs.runtimes);
	tt_sensors_close(rs.sensors);
	for (int i = 0; i < a.ncuda_libs; i++)
		if (lib_fds[i] >= 0)
			close(lib_fds[i]);
	free(meta.procs);
	free(meta.devs);
	free(marks);
	return err;
}
