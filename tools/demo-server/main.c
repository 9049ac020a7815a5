/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server: startup checks, the listening socket, start and stop. */
#include "demo-server.h"

const char *const prog = "demo-server";

/* -------------------------------------------------------------- startup */

static int listen_on(const char *addr, int port, int *out_fd)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res = NULL, *ai;
	char portstr[16], hostbuf[128];
	int fd = -1, one = 1, rc;

	snprintf(portstr, sizeof(portstr), "%d", port);
	addr = host_unbracket(addr, hostbuf, sizeof(hostbuf));
	rc = getaddrinfo(addr, portstr, &hints, &res);
	if (rc) {
		fprintf(stderr, "%s: bad address '%s': %s\n", prog, addr,
			gai_strerror(rc));
		return -EINVAL;
	}
	rc = -EADDRNOTAVAIL;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			rc = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 1024))
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot listen on %s port %d: %s\n", prog,
			addr, port, strerror(-rc));
		return rc;
	}
	*out_fd = fd;
	return 0;
}

/* written whole, then renamed: a reader never sees a partial port */
static int write_port_file(const char *path, int port)
{
	char tmp[4096], line[16];
	int fd, n, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%d\n", port);
	err = write_all(fd, line, n);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

static int open_log(const char *path)
{
	static const char header[] =
		"id,peer_port,t_read_done_ns,t_enqueue_ns,t_dispatch_ns,"
		"t_prefill_start_ns,t_prefill_end_ns,t_first_token_write_ns,"
		"t_last_token_write_ns,tokens,prefill_ns,queue_ns,tokenize_ns,"
		"prompt_bytes,status,io_ns,io_wait_ns,engine_cpu_ns,"
		"engine_runnable_ns,"
		"engine_sleep_ns,engine_run_delay_ns,engine_wake_delay_ns,"
		"t_first_byte_read_ns,t_token_ns,upstream_port,"
		"tokenize_cpu_ns,fe_run_delay_ns,fe_read_wake_ns,gpu_ns,"
		"kernel_ns,launch_cpu_ns,sync_wait_ns,sync_cpu_ns,t_boundary_ns,"
		"io_cpu_ns,t_submit_call_ns,t_admitted_ret_ns\n";
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, header, sizeof(header) - 1);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void kv_check(const struct server_opts *o)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	fd = open(o->kv_path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		fprintf(stderr, "%s: --kv-file %s: O_DIRECT refused by its "
			"file system (tmpfs?): put it on a block device\n",
			prog, o->kv_path);
		exit(2);
	}
	if (fd < 0) {
		fprintf(stderr, "%s: --kv-file %s: %s\n", prog, o->kv_path,
			strerror(errno));
		exit(2);
	}
	if (!fstatfs(fd, &sfs) && (sfs.f_type == TMPFS_MAGIC ||
				   sfs.f_type == RAMFS_MAGIC)) {
		fprintf(stderr, "%s: --kv-file %s: on tmpfs, O_DIRECT reads "
			"would not reach a disk: put it on a block device\n",
			prog, o->kv_path);
		exit(2);
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < o->kv_read_bytes) {
		fprintf(stderr, "%s: --kv-file %s: want a regular file of at "
			"least --kv-read-bytes (%llu)\n", prog, o->kv_path,
			(unsigned long long)o->kv_read_bytes);
		exit(2);
	}
	close(fd);
}

/* the engine thread may only be pinned where this process may run */
static void cpu_check(int cpu)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) ||
	    !CPU_ISSET(cpu, &allowed)) {
		fprintf(stderr, "%s: --engine-cpu %d: not a CPU this process "
			"may run on\n", prog, cpu);
		exit(2);
	}
}

static int workers_start(struct server *srv)
{
	int i, err, fds[2];

	srv->workers = calloc(srv->opts.workers, sizeof(*srv->workers));
	if (!srv->workers)
		return -ENOMEM;
	for (i = 0; i < srv->opts.workers; i++) {
		struct worker *w = &srv->workers[i];

		w->srv = srv;
		w->index = i;
		w->cur_fd = -1;
		w->pipe_rd = w->pipe_wr = -1;
		w->engine_fd = srv->engine_fds ? srv->engine_fds[i] : -1;
		w->up_fd = -1;
		w->sched_fd = -1;
		if (srv->opts.proxy) {
			w->up = calloc(1, sizeof(*w->up));
			if (!w->up)
				return -ENOMEM;
			w->up->fd = -1;
			w->up->sched_fd = -1;
		}
		if (srv->opts.handoff == HANDOFF_PIPE) {
			if (pipe2(fds, O_CLOEXEC))
				return -errno;
			w->pipe_rd = fds[0];
			w->pipe_wr = fds[1];
			fcntl(w->pipe_wr, F_SETFL, O_NONBLOCK);
		}
	}
	for (i = 0; i < srv->opts.workers; i++) {
		err = pthread_create(&srv->workers[i].thread, NULL,
				     worker_main, &srv->workers[i]);
		if (err)
			return -err;
		srv->nworkers_started++;
	}
	return 0;
}

/* unblocks every front-end thread: accept, idle reads, blocked writes */
static void workers_stop(struct server *srv)
{
	int i;

	pthread_mutex_lock(&srv->conn_lock);
	srv->stopping = true;
	shutdown(srv->listen_fd, SHUT_RDWR);
	for (i = 0; i < srv->opts.workers; i++) {
		struct worker *w = &srv->workers[i];

		if (w->cur_fd >= 0)
			shutdown(w->cur_fd, SHUT_RDWR);
		if (w->up_fd >= 0)
			shutdown(w->up_fd, SHUT_RDWR);
		/* the engine process sees it too, and stops */
		if (w->engine_fd >= 0)
			shutdown(w->engine_fd, SHUT_RDWR);
	}
	pthread_mutex_unlock(&srv->conn_lock);
}

static void workers_join(struct server *srv)
{
	int i;

	if (!srv->workers)
		return;
	for (i = 0; i < srv->opts.workers; i++) {
		if (i < srv->nworkers_started)
			pthread_join(srv->workers[i].thread, NULL);
		if (srv->workers[i].pipe_rd >= 0)
			close(srv->workers[i].pipe_rd);
		if (srv->workers[i].pipe_wr >= 0)
			close(srv->workers[i].pipe_wr);
		if (srv->workers[i].up) {
			if (srv->workers[i].up_fd >= 0)
				close(srv->workers[i].up_fd);
			free(srv->workers[i].up->buf);
			free(srv->workers[i].up);
		}
	}
	free(srv->workers);
	srv->workers = NULL;
}

int main(int argc, char **argv)
{
	struct server srv = { .listen_fd = -1, .log_fd = -1 };
	bool engine_up = false;
	sigset_t sigs;
	int err, sig, port, ret = 1;

	parse_args(argc, argv, &srv.opts);
	atomic_init(&srv.next_id, 1);
	pthread_mutex_init(&srv.conn_lock, NULL);

	/* threads inherit the mask; only main takes SIGINT/SIGTERM */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (srv.opts.kv_path)
		kv_check(&srv.opts);
	if (srv.opts.engine_cpu >= 0)
		cpu_check(srv.opts.engine_cpu);
	if (srv.opts.proxy && proxy_resolve(&srv))
		goto cleanup;
	/* before any thread or socket: the engine process gets none of them */
	if (srv.opts.split) {
		err = split_start(&srv);
		if (err) {
			fprintf(stderr, "%s: cannot start the engine process: "
				"%s\n", prog, strerror(-err));
			goto cleanup;
		}
	}
	if (srv.opts.log_path) {
		srv.log_fd = open_log(srv.opts.log_path);
		if (srv.log_fd < 0) {
			fprintf(stderr, "%s: cannot write log %s: %s\n", prog,
				srv.opts.log_path, strerror(-srv.log_fd));
			goto cleanup;
		}
	}
	if (listen_on(srv.opts.addr, srv.opts.port, &srv.listen_fd))
		goto cleanup;
	port = socket_port(srv.listen_fd, false);

	if (!srv.opts.split && !srv.opts.proxy) {
		err = engine_start(&srv.engine, &srv);
		if (err) {
			fprintf(stderr, "%s: cannot start engine: %s\n", prog,
				srv.engine.gpu.err[0] ? srv.engine.gpu.err :
							strerror(-err));
			goto cleanup;
		}
		engine_up = true;
	}
	err = workers_start(&srv);
	if (err) {
		fprintf(stderr, "%s: cannot start workers: %s\n", prog,
			strerror(-err));
		goto cleanup;
	}
	if (srv.opts.port_file) {
		err = write_port_file(srv.opts.port_file, port);
		if (err) {
			fprintf(stderr, "%s: cannot write %s: %s\n", prog,
				srv.opts.port_file, strerror(-err));
			goto cleanup;
		}
	}
	if (!srv.opts.quiet) {
		printf("%s: listening on %s port %d (workers %d, batch %d, "
		       "framing %s%s%s)\n", prog, srv.opts.addr, port,
		       srv.opts.workers, srv.opts.batch,
		       srv.opts.framing == FRAMING_CHUNKED ? "chunked" : "sse",
		       srv.opts.split ? ", engine process" :
		       srv.opts.proxy ? ", proxy to " : "",
		       srv.opts.proxy ? srv.opts.proxy : "");
		fflush(stdout);
	}
	while (sigwait(&sigs, &sig))
		;
	ret = 0;
cleanup:
	if (engine_up)
		engine_stop(&srv.engine);
	if (srv.listen_fd >= 0 && srv.workers)
		workers_stop(&srv);
	workers_join(&srv);
	if (engine_up)
		engine_join(&srv.engine);
	split_stop(&srv);
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	if (srv.log_fd >= 0 && fsync(srv.log_fd) && errno != EINVAL)
		fprintf(stderr, "%s: log sync: %s\n", prog, strerror(errno));
	if (srv.log_fd >= 0)
		close(srv.log_fd);
	if (!ret && !srv.opts.quiet)
		printf("%s: stopped: %llu requests ok, %llu failed, "
		       "%llu http errors\n", prog,
		       (unsigned long long)atomic_load(&srv.n_ok),
		       (unsigned long long)atomic_load(&srv.n_failed),
		       (unsigned long long)atomic_load(&srv.n_http_errors));
	pthread_mutex_destroy(&srv.conn_lock);
	return ret;
}
