// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "cudalib.h"
#include "gpu.h"
#include "procfs.h"

#define FUSE_SUPER_MAGIC 0x65735546
#define CANDIDATE_PATH_LEN 256
/* a workload can open names faster than they are checked: what does not
 * fit is counted and said, never waited for */
#define QUEUE_LEN 64
#define SEEN_MAX 4096
#define MESSAGES 32
#define MESSAGE_LEN 320
#define STOP_WAIT_NS 1000000000L

/* A regular ELF file whose reads no user-space server answers: anything
 * else is refused before a byte of it is read by libbpf. */
static int check_candidate(int fd, const char *name, char *err, size_t errlen)
{
	unsigned char magic[SELFMAG];
	char self[64];
	struct statfs sfs;
	struct stat st;
	int rfd = -1, ret = 0;
	ssize_t n;

	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "CUDA library %s: %s", name,
			 strerror(-ret));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen,
			 "CUDA library %s: not a regular file (%s)", name,
			 S_ISDIR(st.st_mode)  ? "a directory" :
			 S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISCHR(st.st_mode)  ? "a character device" :
			 S_ISBLK(st.st_mode)  ? "a block device" :
			 S_ISSOCK(st.st_mode) ? "a socket" :
						"not a file");
		goto cleanup;
	}
	/* a FUSE server could hold root's reads for as long as it likes */
	if (!fstatfs(fd, &sfs) && sfs.f_type == FUSE_SUPER_MAGIC) {
		ret = -EPERM;
		snprintf(err, errlen,
			 "CUDA library %s: on a FUSE filesystem; not probed",
			 name);
		goto cleanup;
	}
	tt_cudalib_fd_path(fd, self, sizeof(self));
	rfd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0) {
		ret = -errno;
		snprintf(err, errlen, "CUDA library %s: %s", name,
			 strerror(-ret));
		goto cleanup;
	}
	n = pread(rfd, magic, sizeof(magic), 0);
	if (n != SELFMAG || memcmp(magic, ELFMAG, SELFMAG)) {
		ret = -ENOEXEC;
		snprintf(err, errlen, "CUDA library %s: not an ELF file", name);
	}
cleanup:
	if (rfd >= 0)
		close(rfd);
	return ret;
}

/* Takes fd (an O_PATH fd or -errno from opening it) and returns it checked,
 * or closes it and returns -errno. */
static int checked(int fd, const char *name, char *err, size_t errlen)
{
	int ret;

	if (fd < 0) {
		snprintf(err, errlen, "CUDA library %s: %s", name,
			 strerror(-fd));
		return fd;
	}
	ret = check_candidate(fd, name, err, errlen);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

void tt_cudalib_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int tt_cudalib_open(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_PATH | O_CLOEXEC);

	return checked(fd < 0 ? -errno : fd, path, err, errlen);
}

/* Root looks only at what the workload could read itself: a file for all
 * to read (as a real libcuda is), or one of the workload's own user. */
static bool readable_by(int fd, pid_t pid)
{
	struct stat st;
	long euid;

	if (fstat(fd, &st))
		return false;
	if (st.st_mode & S_IROTH)
		return true;
	euid = tt_proc_euid(pid);
	return euid >= 0 && st.st_uid == (uid_t)euid && (st.st_mode & S_IRUSR);
}

int tt_cudalib_open_in(pid_t pid, const char *path, char *err, size_t errlen)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char base[64];
	int dirfd, fd;

	/* a relative name starts at the process's working directory, which
	 * then stands for its root: safe, if wrong for absolute links */
	snprintf(base, sizeof(base), "/proc/%d/%s", (int)pid,
		 path[0] == '/' ? "root" : "cwd");
	dirfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fd = -errno;
		snprintf(err, errlen, "CUDA library %s of pid %d: %s", path,
			 (int)pid, strerror(errno));
		return fd;
	}
	fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	if (fd < 0)
		fd = -errno;
	close(dirfd);
	fd = checked(fd, path, err, errlen);
	if (fd >= 0 && !readable_by(fd, pid)) {
		snprintf(err, errlen,
			 "CUDA library %s: not readable by pid %d's user; not probed",
			 path, (int)pid);
		close(fd);
		fd = -EACCES;
	}
	return fd;
}

int tt_cudalib_open_mapping(pid_t pid, const struct tt_mapping *m, char *err,
			    size_t errlen)
{
	char file[128];
	int fd;

	snprintf(file, sizeof(file), "/proc/%d/map_files/%s", (int)pid,
		 m->range);
	fd = open(file, O_PATH | O_CLOEXEC);
	/* map_files needs CAP_SYS_ADMIN; without it, the name */
	if (fd < 0)
		return tt_cudalib_open_in(pid, m->path, err, errlen);
	return checked(fd, m->path, err, errlen);
}

struct mapped_libs {
	pid_t pid;
	int **fds;
	size_t *nfds;
	int added;
};

static int add_mapped_lib(void *ctx, const struct tt_mapping *m)
{
	struct mapped_libs *ml = ctx;
	char err[256];
	int fd, *grown;

	if (!tt_is_libcuda(m->path))
		return 0;
	fd = tt_cudalib_open_mapping(ml->pid, m, err, sizeof(err));
	if (fd < 0)
		return 0;
	grown = realloc(*ml->fds, (*ml->nfds + 1) * sizeof(*grown));
	if (!grown) {
		close(fd);
		return -ENOMEM;
	}
	*ml->fds = grown;
	(*ml->fds)[(*ml->nfds)++] = fd;
	ml->added++;
	return 0;
}

int tt_cudalib_open_mapped(pid_t pid, int **fds, size_t *nfds)
{
	struct mapped_libs ml = { pid, fds, nfds, 0 };
	int err = tt_proc_mappings(pid, add_mapped_lib, &ml);

	return err ? err : ml.added;
}

struct candidate {
	pid_t tgid;
	char path[CANDIDATE_PATH_LEN];
};

struct tt_cudalib_prober {
	pthread_mutex_t lock; /* everything below but attach_lock's own */
	pthread_cond_t wake;
	/* held around fn and while stopping: once stopping is set under it,
	 * fn is never called again */
	pthread_mutex_t attach_lock;
	pthread_t thread;
	tt_cudalib_attach_fn fn;
	void *ctx;
	bool stopping;
	int refs; /* the owner's and the thread's: the last one frees */
	struct candidate queue[QUEUE_LEN];
	int head, count, busy;
	uint64_t dropped;
	uint64_t seen[SEEN_MAX]; /* hashes of (tgid, path) already queued */
	int nseen;
	char messages[MESSAGES][MESSAGE_LEN];
	int msg_head, nmsgs;
};

static uint64_t candidate_hash(pid_t tgid, const char *path, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ (uint32_t)tgid;

	for (size_t i = 0; i < len && path[i]; i++)
		h = (h ^ (unsigned char)path[i]) * 1099511628211ULL;
	return h;
}

/* Caller holds p->lock. */
static void add_message(struct tt_cudalib_prober *p, const char *msg)
{
	int slot = (p->msg_head + p->nmsgs) % MESSAGES;

	if (p->nmsgs == MESSAGES)
		return;
	snprintf(p->messages[slot], MESSAGE_LEN, "%s", msg);
	p->nmsgs++;
}

static void prober_unref(struct tt_cudalib_prober *p)
{
	bool last;

	pthread_mutex_lock(&p->lock);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->lock);
	if (!last)
		return;
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->attach_lock);
	pthread_cond_destroy(&p->wake);
	free(p);
}

static void probe_candidate(struct tt_cudalib_prober *p,
			    const struct candidate *cand)
{
	char err[256], msg[MESSAGE_LEN];
	int fd, n = 0;

	fd = tt_cudalib_open_in(cand->tgid, cand->path, err, sizeof(err));
	/* the loader tries every directory of its path: most names are not
	 * there, which is not worth a word */
	if (fd == -ENOENT || fd == -ENOTDIR)
		return;
	if (fd >= 0) {
		pthread_mutex_lock(&p->attach_lock);
		if (!p->stopping)
			n = p->fn(p->ctx, fd, cand->path, err, sizeof(err));
		pthread_mutex_unlock(&p->attach_lock);
		close(fd);
	}
	if (fd < 0 || n < 0)
		snprintf(msg, sizeof(msg), "warning: pid %d opened %s",
			 cand->tgid, err);
	else if (n > 0)
		snprintf(msg, sizeof(msg),
			 "probing %d CUDA functions in %s (pid %d)", n,
			 cand->path, cand->tgid);
	else
		return;
	pthread_mutex_lock(&p->lock);
	add_message(p, msg);
	pthread_mutex_unlock(&p->lock);
}

static void *prober_main(void *arg)
{
	struct tt_cudalib_prober *p = arg;
	struct candidate cand;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping) {
		if (!p->count) {
			pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		cand = p->queue[p->head];
		p->head = (p->head + 1) % QUEUE_LEN;
		p->count--;
		p->busy = 1;
		pthread_mutex_unlock(&p->lock);
		probe_candidate(p, &cand);
		pthread_mutex_lock(&p->lock);
		p->busy = 0;
	}
	pthread_mutex_unlock(&p->lock);
	prober_unref(p);
	return NULL;
}

struct tt_cudalib_prober *tt_cudalib_prober_start(tt_cudalib_attach_fn fn,
						  void *ctx)
{
	struct tt_cudalib_prober *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	p->fn = fn;
	p->ctx = ctx;
	p->refs = 2;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->attach_lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	err = pthread_create(&p->thread, NULL, prober_main, p);
	if (err) {
		pthread_mutex_destroy(&p->lock);
		pthread_mutex_destroy(&p->attach_lock);
		pthread_cond_destroy(&p->wake);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

void tt_cudalib_prober_submit(struct tt_cudalib_prober *p, pid_t tgid,
			      const char *path, size_t len)
{
	uint64_t h = candidate_hash(tgid, path, len);
	struct candidate *cand;
	char msg[MESSAGE_LEN];

	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < p->nseen; i++)
		if (p->seen[i] == h)
			goto cleanup;
	if (p->count == QUEUE_LEN) {
		if (!p->dropped++) {
			snprintf(
				msg, sizeof(msg),
				"warning: pid %d opens libcuda names faster than they can be checked; some are not probed",
				tgid);
			add_message(p, msg);
		}
		goto cleanup;
	}
	if (p->nseen < SEEN_MAX)
		p->seen[p->nseen++] = h;
	cand = &p->queue[(p->head + p->count) % QUEUE_LEN];
	cand->tgid = tgid;
	len = len < CANDIDATE_PATH_LEN - 1 ? len : CANDIDATE_PATH_LEN - 1;
	memcpy(cand->path, path, len);
	cand->path[len] = '\0';
	p->count++;
	pthread_cond_signal(&p->wake);
cleanup:
	pthread_mutex_unlock(&p->lock);
}

int tt_cudalib_prober_message(struct tt_cudalib_prober *p, char *buf,
			      size_t len)
{
	int got = 0;

	pthread_mutex_lock(&p->lock);
	if (p->nmsgs) {
		snprintf(buf, len, "%s", p->messages[p->msg_head]);
		p->msg_head = (p->msg_head + 1) % MESSAGES;
		p->nmsgs--;
		got = 1;
	}
	pthread_mutex_unlock(&p->lock);
	return got;
}

int tt_cudalib_prober_pending(struct tt_cudalib_prober *p)
{
	int n;

	pthread_mutex_lock(&p->lock);
	n = p->count + p->busy;
	pthread_mutex_unlock(&p->lock);
	return n;
}

void tt_cudalib_prober_stop(struct tt_cudalib_prober *p)
{
	struct timespec deadline;

	if (!p)
		return;
	pthread_mutex_lock(&p->attach_lock);
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_unlock(&p->attach_lock);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += STOP_WAIT_NS % 1000000000L;
	deadline.tv_sec +=
		STOP_WAIT_NS / 1000000000L + deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;
	/* a thread stuck in a workload's file is left behind: it only
	 * touches p, which it frees when it is the last */
	if (pthread_timedjoin_np(p->thread, NULL, &deadline))
		pthread_detach(p->thread);
	prober_unref(p);
}
