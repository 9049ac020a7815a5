// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "procfs.h"

/* Reads the state and parent from /proc/PID/stat; the comm field may hold
 * spaces and parentheses, so parse from the last ')'. */
static int read_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", state, ppid) != 2)
		return -EINVAL;
	return 0;
}

bool tt_proc_alive(pid_t pid)
{
	pid_t ppid;
	char state;

	if (read_stat(pid, &state, &ppid))
		return false;
	return state != 'Z' && state != 'X';
}

/* The n-th number (from 0) of the "key:" line of /proc/PID/status. */
static long status_field(pid_t pid, const char *key, int nth)
{
	char path[64], line[256], *p, *end;
	size_t klen = strlen(key);
	long val = -ESRCH;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		p = line + klen + 1;
		for (int i = 0; i <= nth; i++, p = end) {
			val = strtol(p, &end, 10);
			if (end == p) {
				val = -EINVAL;
				break;
			}
		}
		break;
	}
	fclose(f);
	return val;
}

pid_t tt_proc_tgid(pid_t pid)
{
	return status_field(pid, "Tgid", 0);
}

long tt_proc_euid(pid_t pid)
{
	return status_field(pid, "Uid", 1);
}

int tt_proc_mappings(pid_t pid,
		     int (*fn)(void *ctx, const struct tt_mapping *m),
		     void *ctx)
{
	char maps[64], line[4096], range[64];
	unsigned long long start, end, offset;
	struct tt_mapping m;
	int ret = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		m.path = strchr(line, '/');
		if (!m.path ||
		    sscanf(line, "%llx-%llx %*s %llx", &start, &end,
			   &offset) != 3)
			continue;
		snprintf(range, sizeof(range), "%.*s",
			 (int)strcspn(line, " "), line);
		m.start = start;
		m.end = end;
		m.offset = offset;
		m.range = range;
		ret = fn(ctx, &m);
	}
	fclose(f);
	return ret;
}

int tt_proc_descendants(pid_t root, pid_t *out, int max)
{
	struct dirent *de;
	int n = 0, added;
	pid_t pid, ppid;
	char state;
	DIR *d;

	/* repeat until no new child: a parent may be listed after its child */
	do {
		added = 0;
		d = opendir("/proc");
		if (!d)
			return -errno;
		while ((de = readdir(d)) && n < max) {
			pid = atoi(de->d_name);
			if (pid <= 0 || read_stat(pid, &state, &ppid))
				continue;
			bool known = false, parent = ppid == root;

			for (int i = 0; i < n; i++) {
				known |= out[i] == pid;
				parent |= out[i] == ppid;
			}
			if (parent && !known && pid != root) {
				out[n++] = pid;
				added++;
			}
		}
		closedir(d);
	} while (added && n < max);
	return n;
}

/* Socket inodes held by pid, from the targets of /proc/PID/fd links. */
static int socket_inodes(pid_t pid, unsigned long *inodes, int max)
{
	char path[64], link[64];
	struct dirent *de;
	int n = 0;
	ssize_t len;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", pid,
			 de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%lu]", &inodes[n]) == 1)
			n++;
	}
	closedir(d);
	return n;
}

int tt_proc_listen_ports(pid_t pid, __u16 *ports, int max)
{
	static const char *const tables[] = { "tcp", "tcp6" };
	unsigned long inodes[4096], inode;
	unsigned int port, state;
	int ninodes, n = 0;
	char path[64], line[512];

	ninodes = socket_inodes(pid, inodes, 4096);
	if (ninodes < 0)
		return ninodes;
	for (int t = 0; t < 2; t++) {
		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, tables[t]);
		FILE *f = fopen(path, "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f) && n < max) {
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line,
				   " %*d: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*s %*s %*s %*s %*s %lu",
				   &port, &state, &inode) != 3 ||
			    state != 0x0A)
				continue;
			for (int i = 0; i < ninodes; i++) {
				if (inodes[i] == inode) {
					ports[n++] = port;
					break;
				}
			}
		}
		fclose(f);
	}
	return n;
}

int tt_proc_add_threads(pid_t tgid, struct tt_proc_info **procs,
			size_t *nprocs)
{
	char path[64], comm[TT_COMM_LEN + 2];
	struct tt_proc_info *grown, *p;
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", tgid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);
		FILE *f;

		if (tid <= 0)
			continue;
		grown = realloc(*procs, (*nprocs + 1) * sizeof(**procs));
		if (!grown) {
			err = -ENOMEM;
			goto cleanup;
		}
		*procs = grown;
		p = &grown[*nprocs];
		memset(p, 0, sizeof(*p));
		p->tgid = tgid;
		p->tid = tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", tgid,
			 tid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f)) {
				comm[strcspn(comm, "\n")] = '\0';
				snprintf(p->comm, sizeof(p->comm), "%.15s", comm);
			}
			fclose(f);
		}
		(*nprocs)++;
	}
cleanup:
	closedir(d);
	return err;
}
