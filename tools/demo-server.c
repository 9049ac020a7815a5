/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * demo-server: a small OpenAI-style streaming completion server shaped like
 * real inference engines, for ttftrace to trace and to compare against.
 *
 * Front-end threads (one connection each, HTTP/1.1 keep-alive) read and
 * "tokenize" a request, then hand it to ONE engine thread through a
 * mutex+condvar queue. The engine runs continuous batching: at each
 * iteration boundary it admits up to --batch waiting requests, runs prefill
 * for the new ones, then a decode step that yields one token for every
 * request in the batch. Each token goes back to the request's front-end
 * thread (condvar or pipe), which writes it to the socket as an SSE event.
 * Every stage's time is a knob and every request leaves a ground-truth row.
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <strings.h>
#include <sys/stat.h>

#include "demo_common.h"

#define MAX_HEADER_BYTES (64 * 1024)
#define DEFAULT_MAX_BODY (64ULL * 1024 * 1024)
#define MAX_TOKENS_LIMIT 1000000ULL
#define MAX_WORKERS 1024
#define MAX_BATCH 4096
#define EVENT_BUF 256

enum framing { FRAMING_SSE, FRAMING_CHUNKED };
enum wait_mode { WAIT_SLEEP, WAIT_SPIN };
enum handoff { HANDOFF_COND, HANDOFF_PIPE };
enum delay_kind { DELAY_FIXED, DELAY_UNIFORM, DELAY_EXP };

/* how long a step takes: fixed, uniform in [a, b] or exponential of mean a */
struct delay_spec {
	enum delay_kind kind;
	uint64_t a_ns, b_ns;
};

struct server_opts {
	const char *addr;
	const char *port_file;
	const char *log_path;
	int port;
	int workers;
	int batch;
	uint64_t tokens;
	uint64_t token_interval_ns;
	uint64_t tokenize_ns_per_byte;
	uint64_t seed;
	uint64_t max_body;
	struct delay_spec prefill;
	enum wait_mode prefill_mode, decode_mode;
	enum framing framing;
	enum handoff handoff;
	bool headers_with_body;
	bool quiet;
};

/*
 * One completion request. The front-end thread owns it; the engine holds a
 * pointer from enqueue until it sets done, and never touches it after.
 */
struct request {
	uint64_t id;
	int peer_port;
	size_t prompt_bytes;
	uint64_t max_tokens;
	bool stream;
	/* ground truth, CLOCK_MONOTONIC ns */
	uint64_t t_read_done, t_enqueue, t_dispatch;
	uint64_t t_prefill_start, t_prefill_end;
	uint64_t t_first_write, t_last_write;
	uint64_t tokenize_ns;
	uint64_t tokens_written;
	/* engine -> front-end hand-off, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int notify_fd;		/* pipe write end for --handoff pipe, else -1 */
	uint64_t produced;
	bool done;		/* engine released the request */
	bool aborted;		/* released because the server stops */
	bool cancelled;		/* front-end lost its client */
	struct request *next;	/* queue link, engine side */
};

struct server;

struct engine {
	struct server *srv;
	pthread_t thread;
	pthread_mutex_t lock;	/* the request queue */
	pthread_cond_t cond;
	struct request *head, *tail;
	bool stopping;
	/* engine-private */
	struct request **batch;
	struct request **admitted;
	int nbatch;
	uint64_t rng;
	uint64_t iterations;
};

struct worker {
	struct server *srv;
	pthread_t thread;
	int index;
	int cur_fd;		/* connection served, under srv->conn_lock */
	int pipe_rd, pipe_wr;	/* token notifications for --handoff pipe */
};

struct server {
	struct server_opts opts;
	int listen_fd;
	int log_fd;
	pthread_mutex_t conn_lock;
	bool stopping;		/* under conn_lock */
	struct engine engine;
	struct worker *workers;
	int nworkers_started;
	atomic_uint_fast64_t next_id;
	atomic_uint_fast64_t n_ok, n_failed, n_http_errors;
};

/* a parsed HTTP request; pointers into the connection buffer */
struct http_req {
	char method[16];
	char path[256];
	const char *body;
	size_t body_len;
	size_t total_len;
	bool keep_alive;
	uint64_t t_read_done;
};

struct conn {
	int fd;
	int peer_port;
	char *buf;
	size_t len, cap;
};

struct completion_args {
	size_t prompt_bytes;
	uint64_t max_tokens;
	bool has_max_tokens;
	bool stream;
};

static const char *prog = "demo-server";

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
	exit(2);
}

/* ---------------------------------------------------------------- delays */

static uint64_t rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in (0, 1] */
static double rng_unit(uint64_t *state)
{
	return ((double)(rng_next(state) >> 11) + 1.0) / 9007199254740992.0;
}

static uint64_t delay_sample(const struct delay_spec *d, uint64_t *rng)
{
	switch (d->kind) {
	case DELAY_UNIFORM:
		return d->a_ns + rng_next(rng) % (d->b_ns - d->a_ns + 1);
	case DELAY_EXP:
		return (uint64_t)(-(double)d->a_ns * log(rng_unit(rng)));
	case DELAY_FIXED:
	default:
		return d->a_ns;
	}
}

static bool parse_us(const char *s, uint64_t *ns)
{
	uint64_t us;

	if (!parse_u64_range(s, 0, 3600ULL * 1000000, &us))
		return false;
	*ns = us * NSEC_PER_USEC;
	return true;
}

/* "N", "uniform:MIN:MAX" or "exp:MEAN", all in microseconds */
static bool parse_delay_spec(const char *s, struct delay_spec *d)
{
	char buf[128], *colon;

	if (!strncmp(s, "uniform:", 8)) {
		if (strlen(s + 8) >= sizeof(buf))
			return false;
		strcpy(buf, s + 8);
		colon = strchr(buf, ':');
		if (!colon)
			return false;
		*colon = '\0';
		d->kind = DELAY_UNIFORM;
		return parse_us(buf, &d->a_ns) &&
		       parse_us(colon + 1, &d->b_ns) && d->a_ns <= d->b_ns;
	}
	if (!strncmp(s, "exp:", 4)) {
		d->kind = DELAY_EXP;
		return parse_us(s + 4, &d->a_ns);
	}
	d->kind = DELAY_FIXED;
	return parse_us(s, &d->a_ns);
}

/* one stretch of "device" work; the one place later compute backends hook */
static void engine_compute(uint64_t ns, enum wait_mode mode)
{
	uint64_t deadline;

	if (!ns)
		return;
	deadline = mono_ns() + ns;
	if (mode == WAIT_SPIN)
		spin_until_ns(deadline);
	else
		sleep_until_ns(deadline);
}

/* ------------------------------------------------------- engine hand-off */

static void request_init(struct request *req, int notify_fd)
{
	memset(req, 0, sizeof(*req));
	pthread_mutex_init(&req->lock, NULL);
	pthread_cond_init(&req->cond, NULL);
	req->notify_fd = notify_fd;
}

static void request_destroy(struct request *req)
{
	pthread_cond_destroy(&req->cond);
	pthread_mutex_destroy(&req->lock);
}

/* caller holds req->lock; wakes the front-end after a state change */
static void request_notify_locked(struct request *req)
{
	char byte = 't';

	if (req->notify_fd >= 0) {
		/* a full pipe already holds a pending wakeup */
		if (write(req->notify_fd, &byte, 1) < 0 && errno != EAGAIN)
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
	} else {
		pthread_cond_signal(&req->cond);
	}
}

/* engine side: final touch of a request */
static void request_release(struct request *req, bool aborted)
{
	pthread_mutex_lock(&req->lock);
	req->done = true;
	req->aborted = aborted;
	request_notify_locked(req);
	pthread_mutex_unlock(&req->lock);
}

/* front-end side: queue the request; false when the engine is stopping */
static bool engine_submit(struct engine *e, struct request *req)
{
	bool accepted;

	pthread_mutex_lock(&e->lock);
	req->t_enqueue = mono_ns();
	accepted = !e->stopping;
	if (accepted) {
		req->next = NULL;
		if (e->tail)
			e->tail->next = req;
		else
			e->head = req;
		e->tail = req;
		pthread_cond_signal(&e->cond);
	}
	pthread_mutex_unlock(&e->lock);
	return accepted;
}

/*
 * Iteration boundary: take waiting requests into the batch (blocking while
 * there is nothing to do). Returns how many were admitted, -1 on stop.
 */
static int engine_admit(struct engine *e, struct request **admitted)
{
	int max = e->srv->opts.batch;
	int n = 0;

	pthread_mutex_lock(&e->lock);
	while (!e->stopping && !e->nbatch && !e->head)
		pthread_cond_wait(&e->cond, &e->lock);
	if (e->stopping) {
		pthread_mutex_unlock(&e->lock);
		return -1;
	}
	while (e->head && e->nbatch < max) {
		struct request *req = e->head;

		e->head = req->next;
		if (!e->head)
			e->tail = NULL;
		req->next = NULL;
		req->t_dispatch = mono_ns();
		e->batch[e->nbatch++] = req;
		admitted[n++] = req;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

/* prefill of the newly admitted requests: one step, cost = sum of theirs */
static void engine_prefill(struct engine *e, struct request **admitted, int n)
{
	const struct server_opts *o = &e->srv->opts;
	uint64_t total = 0, start, end;
	int i;

	for (i = 0; i < n; i++)
		total += delay_sample(&o->prefill, &e->rng);
	start = mono_ns();
	engine_compute(total, o->prefill_mode);
	end = mono_ns();
	for (i = 0; i < n; i++) {
		admitted[i]->t_prefill_start = start;
		admitted[i]->t_prefill_end = end;
	}
}

static void engine_decode_step(struct engine *e)
{
	const struct server_opts *o = &e->srv->opts;

	engine_compute(o->token_interval_ns, o->decode_mode);
}

/* hands one token to every request in the batch; drops finished ones */
static void engine_emit_tokens(struct engine *e)
{
	int i, kept = 0;

	for (i = 0; i < e->nbatch; i++) {
		struct request *req = e->batch[i];
		bool finished;

		pthread_mutex_lock(&req->lock);
		if (!req->cancelled)
			req->produced++;
		finished = req->cancelled || req->produced >= req->max_tokens;
		if (finished)
			req->done = true;
		request_notify_locked(req);
		pthread_mutex_unlock(&req->lock);
		if (!finished)
			e->batch[kept++] = req;
	}
	e->nbatch = kept;
}

/* on stop: release everything running or waiting, as aborted */
static void engine_abort_all(struct engine *e)
{
	struct request *req, *next;
	int i;

	for (i = 0; i < e->nbatch; i++)
		request_release(e->batch[i], true);
	e->nbatch = 0;
	pthread_mutex_lock(&e->lock);
	req = e->head;
	e->head = e->tail = NULL;
	pthread_mutex_unlock(&e->lock);
	for (; req; req = next) {
		next = req->next;
		request_release(req, true);
	}
}

static void *engine_main(void *arg)
{
	struct engine *e = arg;
	int n;

	pthread_setname_np(pthread_self(), "demo-engine");
	for (;;) {
		n = engine_admit(e, e->admitted);
		if (n < 0)
			break;
		if (n)
			engine_prefill(e, e->admitted, n);
		engine_decode_step(e);
		engine_emit_tokens(e);
		e->iterations++;
	}
	engine_abort_all(e);
	return NULL;
}

static int engine_start(struct engine *e, struct server *srv)
{
	int err;

	e->srv = srv;
	e->rng = srv->opts.seed;
	e->batch = calloc(srv->opts.batch, sizeof(*e->batch));
	e->admitted = calloc(srv->opts.batch, sizeof(*e->admitted));
	if (!e->batch || !e->admitted) {
		err = ENOMEM;
		goto cleanup;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->cond, NULL);
	err = pthread_create(&e->thread, NULL, engine_main, e);
	if (!err)
		return 0;
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
cleanup:
	free(e->batch);
	free(e->admitted);
	e->batch = e->admitted = NULL;
	return -err;
}

static void engine_stop(struct engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->stopping = true;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void engine_join(struct engine *e)
{
	pthread_join(e->thread, NULL);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e->batch);
	free(e->admitted);
}

/* ------------------------------------------------------------------ JSON */

static const char *json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* a JSON string at p; sets *bytes to its decoded length in UTF-8 bytes */
static const char *json_string(const char *p, const char *end, size_t *bytes,
			       char *copy, size_t copy_size)
{
	size_t n = 0, add;

	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		char out = (char)c;

		if (c == '"') {
			if (copy && copy_size)
				copy[n < copy_size ? n : copy_size - 1] = '\0';
			if (bytes)
				*bytes = n;
			return p + 1;
		}
		if (c < 0x20)
			return NULL;
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			switch (*p) {
			case '"': case '\\': case '/':
				out = *p;
				break;
			case 'b': out = '\b'; break;
			case 'f': out = '\f'; break;
			case 'n': out = '\n'; break;
			case 'r': out = '\r'; break;
			case 't': out = '\t'; break;
			case 'u': {
				unsigned int cp = 0;
				int i;

				if (end - p < 5)
					return NULL;
				for (i = 1; i <= 4; i++) {
					char h = p[i];

					cp <<= 4;
					if (h >= '0' && h <= '9')
						cp |= h - '0';
					else if (h >= 'a' && h <= 'f')
						cp |= h - 'a' + 10;
					else if (h >= 'A' && h <= 'F')
						cp |= h - 'A' + 10;
					else
						return NULL;
				}
				p += 4;
				/* surrogates: 2 bytes each, 4 per pair */
				add = cp < 0x80 ? 1 : cp < 0x800 ? 2 :
				      (cp >= 0xd800 && cp < 0xe000) ? 2 : 3;
				for (; add; add--, n++)
					if (copy && n + 1 < copy_size)
						copy[n] = '?';
				continue;
			}
			default:
				return NULL;
			}
		}
		if (copy && n + 1 < copy_size)
			copy[n] = out;
		n++;
	}
	return NULL;
}

/* skips any JSON value; depth bounds nesting */
static const char *json_skip(const char *p, const char *end, int depth)
{
	char close;

	p = json_ws(p, end);
	if (p >= end || depth > 64)
		return NULL;
	if (*p == '"')
		return json_string(p, end, NULL, NULL, 0);
	if (*p == '{' || *p == '[') {
		close = *p == '{' ? '}' : ']';
		p = json_ws(p + 1, end);
		if (p < end && *p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = json_string(json_ws(p, end), end, NULL,
						NULL, 0);
				if (!p)
					return NULL;
				p = json_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p++;
			}
			p = json_skip(p, end, depth + 1);
			if (!p)
				return NULL;
			p = json_ws(p, end);
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == close)
				return p + 1;
			return NULL;
		}
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		while (p < end && strchr("+-.eE0123456789", *p))
			p++;
		return p;
	}
	if (end - p >= 4 && !memcmp(p, "true", 4))
		return p + 4;
	if (end - p >= 5 && !memcmp(p, "false", 5))
		return p + 5;
	if (end - p >= 4 && !memcmp(p, "null", 4))
		return p + 4;
	return NULL;
}

/* parses the completion body; on error *why says what is wrong */
static int parse_completion(const char *s, size_t len,
			    struct completion_args *args, const char **why)
{
	const char *p = s, *end = s + len;
	bool has_prompt = false;

	memset(args, 0, sizeof(*args));
	*why = "body is not a JSON object";
	p = json_ws(p, end);
	if (p >= end || *p != '{')
		return -1;
	p = json_ws(p + 1, end);
	if (p < end && *p == '}') {
		p++;
		goto tail;
	}
	for (;;) {
		char key[32];
		const char *v;

		p = json_string(json_ws(p, end), end, NULL, key, sizeof(key));
		if (!p)
			return -1;
		p = json_ws(p, end);
		if (p >= end || *p++ != ':')
			return -1;
		v = json_ws(p, end);
		if (!strcmp(key, "prompt")) {
			*why = "\"prompt\" must be a string";
			p = json_string(v, end, &args->prompt_bytes, NULL, 0);
			has_prompt = true;
		} else if (!strcmp(key, "max_tokens")) {
			char num[24];
			uint64_t n;

			*why = "\"max_tokens\" must be in 1..1000000";
			p = json_skip(v, end, 0);
			if (!p || p - v >= (ptrdiff_t)sizeof(num))
				return -1;
			memcpy(num, v, p - v);
			num[p - v] = '\0';
			if (!parse_u64_range(num, 1, MAX_TOKENS_LIMIT, &n))
				return -1;
			args->max_tokens = n;
			args->has_max_tokens = true;
		} else if (!strcmp(key, "stream")) {
			*why = "\"stream\" must be true or false";
			if (end - v >= 4 && !memcmp(v, "true", 4)) {
				args->stream = true;
				p = v + 4;
			} else if (end - v >= 5 && !memcmp(v, "false", 5)) {
				args->stream = false;
				p = v + 5;
			} else {
				return -1;
			}
		} else {
			p = json_skip(v, end, 0);
		}
		if (!p)
			return -1;
		*why = "body is not a JSON object";
		p = json_ws(p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		return -1;
	}
tail:
	if (json_ws(p, end) != end) {
		*why = "trailing bytes after the JSON object";
		return -1;
	}
	if (!has_prompt) {
		*why = "\"prompt\" is required";
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ HTTP */

static int conn_reserve(struct conn *c, size_t need)
{
	char *nb;
	size_t cap = c->cap ? c->cap : 16384;

	if (need <= c->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	nb = realloc(c->buf, cap);
	if (!nb)
		return -ENOMEM;
	c->buf = nb;
	c->cap = cap;
	return 0;
}

/* one read(2) into the buffer: >0 bytes, 0 on EOF, -errno on error */
static ssize_t conn_fill(struct conn *c)
{
	ssize_t n;

	if (c->len == c->cap && conn_reserve(c, c->cap + 1))
		return -ENOMEM;
	do {
		n = read(c->fd, c->buf + c->len, c->cap - c->len);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	c->len += (size_t)n;
	return n;
}

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Error";
	}
}

static int send_json(struct conn *c, int code, bool keep_alive,
		     const char *body)
{
	char buf[1024];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "HTTP/1.1 %d %s\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     code, status_text(code), strlen(body),
		     keep_alive ? "keep-alive" : "close", body);
	if (n < 0 || n >= (int)sizeof(buf))
		return -EINVAL;
	return write_all(c->fd, buf, n);
}

static int send_error(struct server *srv, struct conn *c, int code,
		      bool keep_alive, const char *msg)
{
	char body[512], esc[256];
	size_t i, n = 0;

	/* messages are ours, ASCII; only quotes need escaping */
	for (i = 0; msg[i] && n + 2 < sizeof(esc); i++) {
		if (msg[i] == '"' || msg[i] == '\\')
			esc[n++] = '\\';
		esc[n++] = msg[i];
	}
	esc[n] = '\0';
	atomic_fetch_add(&srv->n_http_errors, 1);
	snprintf(body, sizeof(body),
		 "{\"error\":{\"message\":\"%s\",\"code\":%d}}\n", esc, code);
	return send_json(c, code, keep_alive, body);
}

/* value of header `name` in the header block, copied; false when absent */
static bool header_value(const char *hdrs, const char *end, const char *name,
			 char *out, size_t size)
{
	size_t nlen = strlen(name);
	const char *line = hdrs;

	while (line < end) {
		const char *eol = memmem(line, end - line, "\r\n", 2);
		const char *v;
		size_t vlen;

		if (!eol)
			eol = end;
		if ((size_t)(eol - line) > nlen && line[nlen] == ':' &&
		    !strncasecmp(line, name, nlen)) {
			v = line + nlen + 1;
			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			vlen = eol - v;
			while (vlen && (v[vlen - 1] == ' ' ||
					v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= size)
				vlen = size - 1;
			memcpy(out, v, vlen);
			out[vlen] = '\0';
			return true;
		}
		line = eol + 2;
	}
	return false;
}

/*
 * Reads one request (headers, then Content-Length body bytes) from the
 * connection. Returns 1 with hr filled, 0 on a clean EOF between requests,
 * -1 when the connection must close (an error answer was sent if possible).
 */
static int read_request(struct server *srv, struct conn *c,
			struct http_req *hr)
{
	const char *hend, *eol, *sp1, *sp2;
	char value[64], version[16];
	uint64_t content_length = 0;
	size_t hdr_len;
	ssize_t n;

	memset(hr, 0, sizeof(*hr));
	hr->t_read_done = mono_ns();
	for (;;) {
		hend = c->len ? memmem(c->buf, c->len, "\r\n\r\n", 4) : NULL;
		if (hend)
			break;
		if (c->len >= MAX_HEADER_BYTES) {
			send_error(srv, c, 431, false, "header too large");
			return -1;
		}
		n = conn_fill(c);
		if (n <= 0)
			return n == 0 && c->len == 0 ? 0 : -1;
		hr->t_read_done = mono_ns();
	}
	hdr_len = hend - c->buf + 4;

	/* request line: METHOD SP TARGET SP HTTP/1.x */
	eol = memmem(c->buf, hdr_len, "\r\n", 2);
	sp1 = memchr(c->buf, ' ', eol - c->buf);
	sp2 = sp1 ? memchr(sp1 + 1, ' ', eol - sp1 - 1) : NULL;
	if (!sp1 || !sp2 || sp1 - c->buf >= (ptrdiff_t)sizeof(hr->method) ||
	    sp2 - sp1 - 1 >= (ptrdiff_t)sizeof(hr->path) ||
	    eol - sp2 - 1 >= (ptrdiff_t)sizeof(version) ||
	    strncmp(sp2 + 1, "HTTP/1.", 7)) {
		send_error(srv, c, 400, false, "malformed request line");
		return -1;
	}
	memcpy(hr->method, c->buf, sp1 - c->buf);
	memcpy(hr->path, sp1 + 1, sp2 - sp1 - 1);
	memcpy(version, sp2 + 1, eol - sp2 - 1);
	version[eol - sp2 - 1] = '\0';
	hr->path[strcspn(hr->path, "?")] = '\0';

	hr->keep_alive = !strcmp(version, "HTTP/1.1");
	if (header_value(eol + 2, hend + 2, "Connection", value,
			 sizeof(value))) {
		if (strcasestr(value, "close"))
			hr->keep_alive = false;
		else if (strcasestr(value, "keep-alive"))
			hr->keep_alive = true;
	}
	if (header_value(eol + 2, hend + 2, "Transfer-Encoding", value,
			 sizeof(value))) {
		send_error(srv, c, 411, false,
			   "request bodies need Content-Length");
		return -1;
	}
	if (header_value(eol + 2, hend + 2, "Content-Length", value,
			 sizeof(value)) &&
	    !parse_u64_range(value, 0, UINT64_MAX, &content_length)) {
		send_error(srv, c, 400, false, "bad Content-Length");
		return -1;
	}
	if (content_length > srv->opts.max_body) {
		send_error(srv, c, 413, false, "body too large");
		return -1;
	}
	if (c->len < hdr_len + content_length &&
	    header_value(eol + 2, hend + 2, "Expect", value, sizeof(value)) &&
	    !strcasecmp(value, "100-continue")) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		if (write_all(c->fd, cont, sizeof(cont) - 1))
			return -1;
	}

	/* the body, read in a loop: large prompts span many reads */
	if (conn_reserve(c, hdr_len + content_length + 1)) {
		send_error(srv, c, 413, false, "out of memory for body");
		return -1;
	}
	while (c->len < hdr_len + content_length) {
		n = conn_fill(c);
		if (n <= 0)
			return -1;
		hr->t_read_done = mono_ns();
	}
	hr->body = c->buf + hdr_len;
	hr->body_len = content_length;
	hr->total_len = hdr_len + content_length;
	return 1;
}

/* drops the request just handled, keeping pipelined bytes after it */
static void conn_consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

/* ------------------------------------------------------------ front-end */

/* the prompt is "tokenized": CPU work proportional to its size */
static uint64_t tokenize(const char *prompt, size_t len, uint64_t burn_ns)
{
	uint64_t t0 = mono_ns(), deadline, hash = 1469598103934665603ULL;
	size_t i;

	if (!burn_ns || !len)
		return 0;
	deadline = t0 + burn_ns;
	do {
		for (i = 0; i < len; i++) {
			hash = (hash ^ (unsigned char)prompt[i]) *
			       1099511628211ULL;
			if ((i & 4095) == 4095 && mono_ns() >= deadline)
				break;
		}
	} while (mono_ns() < deadline);
	/* keeps the hashing from being optimised away */
	__asm__ volatile("" : : "r"(hash) : "memory");
	return mono_ns() - t0;
}

static int format_event(const struct server_opts *o, char *buf, size_t size,
			const char *data)
{
	int n;

	if (o->framing == FRAMING_CHUNKED) {
		size_t dlen = strlen(data) + 8;	/* "data: " + "\n\n" */

		n = snprintf(buf, size, "%zx\r\ndata: %s\n\n\r\n", dlen, data);
	} else {
		n = snprintf(buf, size, "data: %s\n\n", data);
	}
	return n < 0 || n >= (int)size ? -1 : n;
}

static int format_token_event(const struct server_opts *o, char *buf,
			      size_t size, uint64_t id, uint64_t k)
{
	char data[160];

	snprintf(data, sizeof(data),
		 "{\"id\":\"cmpl-%llu\",\"choices\":[{\"text\":\"tok%llu\","
		 "\"index\":0}]}",
		 (unsigned long long)id, (unsigned long long)k);
	return format_event(o, buf, size, data);
}

static int format_stream_headers(const struct server_opts *o, char *buf,
				 size_t size, uint64_t id, bool keep_alive)
{
	int n;

	n = snprintf(buf, size,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: text/event-stream\r\n"
		     "cache-control: no-cache\r\n"
		     "x-request-id: cmpl-%llu\r\n"
		     "connection: %s\r\n"
		     "%s\r\n",
		     (unsigned long long)id,
		     keep_alive ? "keep-alive" : "close",
		     o->framing == FRAMING_CHUNKED ?
		     "transfer-encoding: chunked\r\n" : "");
	return n < 0 || n >= (int)size ? -1 : n;
}

/*
 * Waits for the engine to produce more tokens or release the request.
 * Returns the produced count; *done tells whether the engine released it.
 */
static uint64_t wait_tokens(struct worker *w, struct request *req,
			    uint64_t seen, bool *done)
{
	uint64_t produced;
	char drain[256];

	pthread_mutex_lock(&req->lock);
	while (!req->done && req->produced == seen) {
		if (req->notify_fd < 0) {
			pthread_cond_wait(&req->cond, &req->lock);
			continue;
		}
		pthread_mutex_unlock(&req->lock);
		if (read(w->pipe_rd, drain, sizeof(drain)) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "%s: notify pipe: %s\n", prog,
				strerror(errno));
			sleep_until_ns(mono_ns() + NSEC_PER_MSEC);
		}
		pthread_mutex_lock(&req->lock);
	}
	produced = req->produced;
	*done = req->done;
	pthread_mutex_unlock(&req->lock);
	return produced;
}

/* the client is gone: tell the engine, then wait until it lets go */
static void cancel_request(struct worker *w, struct request *req)
{
	bool done;
	uint64_t seen;

	pthread_mutex_lock(&req->lock);
	req->cancelled = true;
	seen = req->produced;
	pthread_mutex_unlock(&req->lock);
	do
		seen = wait_tokens(w, req, seen, &done);
	while (!done);
}

/*
 * Streams tokens as SSE events as the engine produces them, headers first;
 * 0 or -errno (-ECANCELED: the server stopped). The caller ends the stream.
 */
static int stream_tokens(struct worker *w, struct conn *c,
			   struct request *req, bool keep_alive)
{
	const struct server_opts *o = &w->srv->opts;
	char buf[EVENT_BUF * 2 + 512];
	uint64_t produced = 0;
	bool done = false;
	int hlen = 0, n, err;

	hlen = format_stream_headers(o, buf, sizeof(buf), req->id, keep_alive);
	if (hlen < 0)
		return -EINVAL;
	if (!o->headers_with_body) {
		/* status line and headers in a write of their own */
		err = write_all(c->fd, buf, hlen);
		if (err)
			return err;
		hlen = 0;
	}
	while (!done) {
		produced = wait_tokens(w, req, req->tokens_written, &done);
		while (req->tokens_written < produced) {
			n = format_token_event(o, buf + hlen,
					       sizeof(buf) - hlen, req->id,
					       req->tokens_written);
			if (n < 0)
				return -EINVAL;
			req->t_last_write = mono_ns();
			if (!req->tokens_written)
				req->t_first_write = req->t_last_write;
			err = write_all(c->fd, buf, hlen + n);
			if (err)
				return err;
			hlen = 0;
			req->tokens_written++;
		}
	}
	return req->aborted ? -ECANCELED : 0;
}

/* the end of a stream: [DONE], and the chunked terminator */
static int stream_finish(const struct server_opts *o, struct conn *c)
{
	char buf[64];
	int n;

	n = format_event(o, buf, sizeof(buf) - 5, "[DONE]");
	if (n < 0)
		return -EINVAL;
	if (o->framing == FRAMING_CHUNKED) {
		memcpy(buf + n, "0\r\n\r\n", 5);
		n += 5;
	}
	return write_all(c->fd, buf, n);
}

/* stream=false: one JSON body once every token is there */
static int whole_response(struct worker *w, struct conn *c,
			  struct request *req, bool keep_alive)
{
	uint64_t produced = 0, k;
	size_t cap, len = 0;
	bool done = false;
	char *body, *resp;
	int n, err = 0;

	while (!done)
		produced = wait_tokens(w, req, produced, &done);
	if (req->aborted)
		return -ECANCELED;
	cap = 256 + produced * 16;
	body = malloc(cap);
	resp = malloc(cap + 256);
	if (!body || !resp) {
		err = -ENOMEM;
		goto cleanup;
	}
	len = snprintf(body, cap,
		       "{\"id\":\"cmpl-%llu\",\"object\":\"text_completion\","
		       "\"choices\":[{\"text\":\"",
		       (unsigned long long)req->id);
	for (k = 0; k < produced; k++)
		len += snprintf(body + len, cap - len, "tok%llu",
				(unsigned long long)k);
	len += snprintf(body + len, cap - len,
			"\",\"index\":0,\"finish_reason\":\"length\"}]}\n");
	n = snprintf(resp, cap + 256,
		     "HTTP/1.1 200 OK\r\n"
		     "content-type: application/json\r\n"
		     "content-length: %zu\r\n"
		     "connection: %s\r\n\r\n%s",
		     len, keep_alive ? "keep-alive" : "close", body);
	req->t_first_write = req->t_last_write = mono_ns();
	err = write_all(c->fd, resp, n);
	if (!err)
		req->tokens_written = produced;
cleanup:
	free(body);
	free(resp);
	return err;
}

static void log_request(struct server *srv, const struct request *req,
			const char *status)
{
	char row[512];
	int n;

	if (srv->log_fd < 0)
		return;
	n = snprintf(row, sizeof(row),
		     "%llu,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		     "%llu,%llu,%zu,%s\n",
		     (unsigned long long)req->id, req->peer_port,
		     (unsigned long long)req->t_read_done,
		     (unsigned long long)req->t_enqueue,
		     (unsigned long long)req->t_dispatch,
		     (unsigned long long)req->t_prefill_start,
		     (unsigned long long)req->t_prefill_end,
		     (unsigned long long)req->t_first_write,
		     (unsigned long long)req->t_last_write,
		     (unsigned long long)req->tokens_written,
		     (unsigned long long)(req->t_prefill_end -
					  req->t_prefill_start),
		     (unsigned long long)(req->t_dispatch ?
					  req->t_dispatch - req->t_enqueue : 0),
		     (unsigned long long)req->tokenize_ns, req->prompt_bytes,
		     status);
	/* one O_APPEND write per row: rows stay whole, survive a kill */
	if (write_all(srv->log_fd, row, n))
		fprintf(stderr, "%s: log write: %s\n", prog, strerror(errno));
}

static bool server_stopping(struct server *srv)
{
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	pthread_mutex_unlock(&srv->conn_lock);
	return stopping;
}

/* POST /v1/completions; false when the connection must close */
static bool handle_completion(struct worker *w, struct conn *c,
			      struct http_req *hr)
{
	struct server *srv = w->srv;
	struct completion_args args;
	struct request req;
	const char *why, *status = "ok";
	int err;

	if (parse_completion(hr->body, hr->body_len, &args, &why)) {
		send_error(srv, c, 400, hr->keep_alive, why);
		return hr->keep_alive;
	}
	request_init(&req, srv->opts.handoff == HANDOFF_PIPE ? w->pipe_wr : -1);
	req.id = atomic_fetch_add(&srv->next_id, 1);
	req.peer_port = c->peer_port;
	req.prompt_bytes = args.prompt_bytes;
	req.max_tokens = args.has_max_tokens ? args.max_tokens :
					       srv->opts.tokens;
	req.stream = args.stream;
	req.t_read_done = hr->t_read_done;
	req.tokenize_ns = tokenize(hr->body, hr->body_len,
				   args.prompt_bytes *
				   srv->opts.tokenize_ns_per_byte);

	if (!engine_submit(&srv->engine, &req)) {
		send_error(srv, c, 503, false, "server is stopping");
		request_destroy(&req);
		return false;
	}
	if (req.stream)
		err = stream_tokens(w, c, &req, hr->keep_alive);
	else
		err = whole_response(w, c, &req, hr->keep_alive);
	if (err && err != -ECANCELED)
		cancel_request(w, &req);
	/* a stop shuts sockets down under streams: that is an abort too */
	if (err == -ECANCELED || (err && server_stopping(srv)))
		status = "aborted";
	else if (err)
		status = "client_gone";
	/* logged before [DONE]: a client that saw the end finds its row */
	log_request(srv, &req, status);
	if (!err && req.stream)
		err = stream_finish(&srv->opts, c);
	atomic_fetch_add(err ? &srv->n_failed : &srv->n_ok, 1);
	request_destroy(&req);
	return !err && hr->keep_alive;
}

/* one request: routes it; false when the connection must close */
static bool handle_request(struct worker *w, struct conn *c,
			   struct http_req *hr)
{
	struct server *srv = w->srv;

	if (!strcmp(hr->path, "/v1/completions")) {
		if (strcmp(hr->method, "POST")) {
			send_error(srv, c, 405, hr->keep_alive,
				   "use POST for /v1/completions");
			return hr->keep_alive;
		}
		return handle_completion(w, c, hr);
	}
	if (!strcmp(hr->path, "/health") && !strcmp(hr->method, "GET"))
		return !send_json(c, 200, hr->keep_alive,
				  "{\"status\":\"ok\"}\n") && hr->keep_alive;
	send_error(srv, c, 404, hr->keep_alive, "no such endpoint");
	return hr->keep_alive;
}

static void serve_connection(struct worker *w, int fd)
{
	struct conn c = { .fd = fd };
	struct http_req hr;
	int one = 1;

	/* token events are small writes; Nagle would hold them back */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c.peer_port = socket_port(fd, true);
	while (read_request(w->srv, &c, &hr) > 0) {
		if (!handle_request(w, &c, &hr))
			break;
		conn_consume(&c, hr.total_len);
	}
	free(c.buf);
}

/* publishes the connection being served so a stop can shut it down */
static bool worker_set_conn(struct worker *w, int fd)
{
	struct server *srv = w->srv;
	bool stopping;

	pthread_mutex_lock(&srv->conn_lock);
	stopping = srv->stopping;
	w->cur_fd = stopping ? -1 : fd;
	pthread_mutex_unlock(&srv->conn_lock);
	return !stopping;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct server *srv = w->srv;
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "demo-fe-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		fd = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE) {
				if (errno == EMFILE || errno == ENFILE)
					sleep_until_ns(mono_ns() +
						       10 * NSEC_PER_MSEC);
				continue;
			}
			break;	/* the listening socket was shut down */
		}
		if (!worker_set_conn(w, fd)) {
			close(fd);
			break;
		}
		serve_connection(w, fd);
		worker_set_conn(w, -1);
		close(fd);
	}
	return NULL;
}

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
		"prompt_bytes,status\n";
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

static void usage(FILE *f)
{
	fprintf(f,
"Usage: demo-server [OPTIONS]\n"
"OpenAI-style streaming completion server (HTTP/1.1 keep-alive, SSE) shaped\n"
"like an inference engine: front-end threads parse and tokenize, one engine\n"
"thread batches requests (continuous batching), runs prefill and decode\n"
"steps, and hands each token back to the front-end that writes it.\n"
"\n"
"  POST /v1/completions  {\"prompt\": \"...\", \"max_tokens\": N, \"stream\": true}\n"
"  GET  /health\n"
"\n"
"Options:\n"
"  -a, --addr ADDR             listen address, IPv4 or IPv6 (default 127.0.0.1)\n"
"  -p, --port PORT             listen port (default 8000; 0 picks a free one)\n"
"      --port-file FILE        write the bound port to FILE once listening\n"
"  -w, --workers N             front-end threads, one connection each (default 4)\n"
"  -t, --tokens N              tokens per response unless max_tokens says (default 16)\n"
"  -i, --token-interval-us N   decode step time in us (default 2000)\n"
"      --prefill-us SPEC       prefill time per request, in us: N, uniform:MIN:MAX\n"
"                              or exp:MEAN (default 5000)\n"
"      --seed N                seed for random prefill times (default 1)\n"
"      --batch N               requests the engine runs together (default 8)\n"
"      --prefill-mode M        sleep|spin: how prefill spends its time (default sleep)\n"
"      --decode-mode M         sleep|spin: same for decode steps (default sleep)\n"
"      --tokenize-ns-per-byte N  CPU burn per prompt byte in the front-end (default 0)\n"
"      --handoff H             cond|pipe: how tokens reach the front-end (default cond)\n"
"      --framing F             sse|chunked: plain SSE ended by [DONE], or each event\n"
"                              in an HTTP chunk (default sse)\n"
"      --headers-with-body     send the headers with the first token, one write\n"
"      --max-body-bytes N      largest request body accepted (default 67108864)\n"
"      --log FILE              ground-truth CSV, one row per request\n"
"  -q, --quiet                 print nothing but errors\n"
"  -h, --help                  this help\n"
"\n"
"Log columns (CLOCK_MONOTONIC ns): id,peer_port,t_read_done_ns,t_enqueue_ns,\n"
"t_dispatch_ns,t_prefill_start_ns,t_prefill_end_ns,t_first_token_write_ns,\n"
"t_last_token_write_ns,tokens,prefill_ns,queue_ns,tokenize_ns,prompt_bytes,status\n"
"\n"
"Plain SSE framing ends a response at [DONE] with no length: clients other\n"
"than loadgen should send 'Connection: close' or use --framing chunked.\n"
"\n"
"Examples:\n"
"  demo-server                                  # 127.0.0.1:8000, 5 ms prefill\n"
"  demo-server -p 0 --port-file /tmp/port --log /tmp/gt.csv\n"
"  demo-server -a :: --batch 2 --prefill-us exp:20000 --seed 7\n"
"  demo-server --framing chunked --headers-with-body -i 10000\n"
"  curl -N -H 'Connection: close' localhost:8000/v1/completions \\\n"
"       -d '{\"prompt\": \"hi\", \"max_tokens\": 4, \"stream\": true}'\n");
}

enum {
	OPT_PORT_FILE = 256,
	OPT_PREFILL_US,
	OPT_SEED,
	OPT_BATCH,
	OPT_FRAMING,
	OPT_HEADERS_WITH_BODY,
	OPT_LOG,
	OPT_TOKENIZE,
	OPT_PREFILL_MODE,
	OPT_DECODE_MODE,
	OPT_HANDOFF,
	OPT_MAX_BODY,
};

static enum wait_mode parse_wait_mode(const char *opt, const char *s)
{
	if (!strcmp(s, "sleep"))
		return WAIT_SLEEP;
	if (!strcmp(s, "spin"))
		return WAIT_SPIN;
	usage_error("invalid %s '%s' (want sleep or spin)", opt, s);
	return WAIT_SLEEP;
}

static uint64_t parse_num_opt(const char *opt, const char *s, uint64_t min,
			      uint64_t max)
{
	uint64_t v;

	if (!parse_u64_range(s, min, max, &v))
		usage_error("invalid %s '%s' (want %llu..%llu)", opt, s,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_args(int argc, char **argv, struct server_opts *o)
{
	static const struct option longopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, OPT_PORT_FILE },
		{ "workers", required_argument, NULL, 'w' },
		{ "tokens", required_argument, NULL, 't' },
		{ "token-interval-us", required_argument, NULL, 'i' },
		{ "prefill-us", required_argument, NULL, OPT_PREFILL_US },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "framing", required_argument, NULL, OPT_FRAMING },
		{ "headers-with-body", no_argument, NULL,
		  OPT_HEADERS_WITH_BODY },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "tokenize-ns-per-byte", required_argument, NULL,
		  OPT_TOKENIZE },
		{ "prefill-mode", required_argument, NULL, OPT_PREFILL_MODE },
		{ "decode-mode", required_argument, NULL, OPT_DECODE_MODE },
		{ "handoff", required_argument, NULL, OPT_HANDOFF },
		{ "max-body-bytes", required_argument, NULL, OPT_MAX_BODY },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*o = (struct server_opts) {
		.addr = "127.0.0.1",
		.port = 8000,
		.workers = 4,
		.batch = 8,
		.tokens = 16,
		.token_interval_ns = 2000 * NSEC_PER_USEC,
		.prefill = { DELAY_FIXED, 5000 * NSEC_PER_USEC, 0 },
		.seed = 1,
		.max_body = DEFAULT_MAX_BODY,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":a:p:w:t:i:qh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			o->port = parse_num_opt("--port", optarg, 0, 65535);
			break;
		case OPT_PORT_FILE:
			o->port_file = optarg;
			break;
		case 'w':
			o->workers = parse_num_opt("--workers", optarg, 1,
						   MAX_WORKERS);
			break;
		case 't':
			o->tokens = parse_num_opt("--tokens", optarg, 1,
						  MAX_TOKENS_LIMIT);
			break;
		case 'i':
			if (!parse_us(optarg, &o->token_interval_ns))
				usage_error("invalid --token-interval-us '%s'",
					    optarg);
			break;
		case OPT_PREFILL_US:
			if (!parse_delay_spec(optarg, &o->prefill))
				usage_error("invalid --prefill-us '%s' (want "
					    "N, uniform:MIN:MAX or exp:MEAN)",
					    optarg);
			break;
		case OPT_SEED:
			o->seed = parse_num_opt("--seed", optarg, 0,
						UINT64_MAX);
			break;
		case OPT_BATCH:
			o->batch = parse_num_opt("--batch", optarg, 1,
						 MAX_BATCH);
			break;
		case OPT_FRAMING:
			if (!strcmp(optarg, "sse"))
				o->framing = FRAMING_SSE;
			else if (!strcmp(optarg, "chunked"))
				o->framing = FRAMING_CHUNKED;
			else
				usage_error("invalid --framing '%s' (want sse "
					    "or chunked)", optarg);
			break;
		case OPT_HEADERS_WITH_BODY:
			o->headers_with_body = true;
			break;
		case OPT_LOG:
			o->log_path = optarg;
			break;
		case OPT_TOKENIZE:
			o->tokenize_ns_per_byte =
				parse_num_opt("--tokenize-ns-per-byte", optarg,
					      0, 1000000);
			break;
		case OPT_PREFILL_MODE:
			o->prefill_mode = parse_wait_mode("--prefill-mode",
							  optarg);
			break;
		case OPT_DECODE_MODE:
			o->decode_mode = parse_wait_mode("--decode-mode",
							 optarg);
			break;
		case OPT_HANDOFF:
			if (!strcmp(optarg, "cond"))
				o->handoff = HANDOFF_COND;
			else if (!strcmp(optarg, "pipe"))
				o->handoff = HANDOFF_PIPE;
			else
				usage_error("invalid --handoff '%s' (want cond "
					    "or pipe)", optarg);
			break;
		case OPT_MAX_BODY:
			o->max_body = parse_num_opt("--max-body-bytes", optarg,
						    0, 1ULL << 32);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
			break;
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
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
	for (i = 0; i < srv->opts.workers; i++)
		if (srv->workers[i].cur_fd >= 0)
			shutdown(srv->workers[i].cur_fd, SHUT_RDWR);
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

	err = engine_start(&srv.engine, &srv);
	if (err) {
		fprintf(stderr, "%s: cannot start engine: %s\n", prog,
			strerror(-err));
		goto cleanup;
	}
	engine_up = true;
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
		       "framing %s)\n", prog, srv.opts.addr, port,
		       srv.opts.workers, srv.opts.batch,
		       srv.opts.framing == FRAMING_CHUNKED ? "chunked" : "sse");
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
