// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Runtime lock ranges on a real interpreter: Debian's python3 is started,
 * and the range tt_rt_find() gives for it must be its _PyRuntime object:
 * read through /proc/PID/mem, the runtime state's first fields say an
 * initialized interpreter (_initialized, core_initialized and initialized
 * are 1, in every CPython from 3.8 to 3.13).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "procfs.h"
#include "rtlocks.h"
#include "tt_test.h"

#define PYTHON "/usr/bin/python3"

static pid_t start_python(int *ready_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PYTHON, "python3", "-c",
		      "import sys, time; print('up', flush=True); time.sleep(30)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*ready_fd = fds[0];
	return pid;
}

static void test_cpython_runtime(void)
{
	struct tt_rt_range r[4];
	int ready = -1, n, fd = -1;
	char line[8], mem[64];
	int state[5];
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		printf("SKIP: test_cpython_runtime: no %s\n", PYTHON);
		return;
	}
	pid = start_python(&ready);
	if (!ASSERT_GT(pid, 0, "fork"))
		return;
	/* the interpreter is initialized once it has printed */
	ASSERT_GT(read(ready, line, sizeof(line)), 0, "python up");
	n = tt_rt_find(pid, r, 4);
	if (!ASSERT_EQ(n, 1, "ranges found"))
		goto cleanup;
	ASSERT_EQ(r[0].kind, TT_RT_CPYTHON, "kind");
	ASSERT_GT(r[0].hi - r[0].lo, 4096, "size of _PyRuntime");
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (!ASSERT_GE(fd, 0, "open mem"))
		goto cleanup;
	if (!ASSERT_EQ(pread(fd, state, sizeof(state), r[0].lo),
		       (ssize_t)sizeof(state), "read _PyRuntime"))
		goto cleanup;
	ASSERT_EQ(state[0], 1, "_PyRuntime._initialized");
	ASSERT_EQ(state[3], 1, "_PyRuntime.core_initialized");
	ASSERT_EQ(state[4], 1, "_PyRuntime.initialized");
cleanup:
	if (fd >= 0)
		close(fd);
	close(ready);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

struct emitted {
	pid_t tgid;
	__u32 kinds[8];
	int n;
};

static int note_range(void *ctx, pid_t tgid, const struct tt_rt_range *r)
{
	struct emitted *e = ctx;

	if (tgid == e->tgid && e->n < 8)
		e->kinds[e->n++] = r->kind;
	return 0;
}

/* The scanner finds python's range once; after python exec'd sleep(1), it
 * says the range is gone (kind 0), once. */
static void test_scan_after_exec(void)
{
	struct tt_rt_scanner *sc = tt_rt_scanner_new();
	struct emitted e = { 0 };
	char exe[64], path[256];
	int fds[2] = { -1, -1 }, tries;
	__u32 tgid;
	ssize_t len;
	pid_t pid;

	if (access(PYTHON, X_OK)) {
		printf("SKIP: test_scan_after_exec: no %s\n", PYTHON);
		goto cleanup;
	}
	if (!ASSERT_TRUE(sc != NULL, "scanner") ||
	    !ASSERT_EQ(pipe(fds), 0, "pipe"))
		goto cleanup;
	pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[1]);
		execl(PYTHON, "python3", "-c",
		      "import os, sys; sys.stdin.readline(); "
		      "os.execv('/bin/sleep', ['sleep', '30'])",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	fds[0] = -1;
	if (!ASSERT_GT(pid, 0, "fork"))
		goto cleanup;
	e.tgid = pid;
	tgid = pid;
	/* python is found once its executable is mapped */
	for (tries = 0; tries < 500 && !e.n; tries++) {
		ASSERT_EQ(tt_rt_scan(sc, &tgid, 1, false, note_range, &e), 0,
			  "scan python");
		if (!e.n)
			usleep(10000);
	}
	if (!ASSERT_EQ(e.n, 1, "python's range") ||
	    !ASSERT_EQ(e.kinds[0], TT_RT_CPYTHON, "CPython's"))
		goto kill;
	ASSERT_EQ(write(fds[1], "go\n", 3), 3, "tell python to exec");
	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	for (tries = 0; tries < 500; tries++) {
		len = readlink(exe, path, sizeof(path) - 1);
		path[len > 0 ? len : 0] = '\0';
		if (strstr(path, "sleep"))
			break;
		usleep(10000);
	}
	ASSERT_EQ(tt_rt_scan(sc, &tgid, 1, false, note_range, &e), 0,
		  "scan sleep");
	ASSERT_EQ(tt_rt_scan(sc, &tgid, 1, false, note_range, &e), 0,
		  "scan again");
	if (ASSERT_EQ(e.n, 2, "one more range, once"))
		ASSERT_EQ(e.kinds[1], 0, "python's gone");
kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
cleanup:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	tt_rt_scanner_free(sc);
}

/* A process without an interpreter has no range. */
static void test_no_runtime(void)
{
	struct tt_rt_range r[4];

	ASSERT_EQ(tt_rt_find(getpid(), r, 4), 0, "ranges in the test itself");
	ASSERT_LT(tt_rt_find(0x7ffffff0, r, 4), 0, "a pid that is not");
}

int main(void)
{
	TT_RUN(test_cpython_runtime);
	TT_RUN(test_scan_after_exec);
	TT_RUN(test_no_runtime);
	TT_EXIT();
}
