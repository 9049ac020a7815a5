/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* demo-server options: --help and the table-driven command line. */
#include "demo-server.h"

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
"      --seed N                seed for random prefill times and KV offsets (default 1)\n"
"      --batch N               requests the engine runs together (default 8)\n"
"      --prefill-mode M        sleep|spin: how prefill spends its time (default sleep)\n"
"      --decode-mode M         sleep|spin: same for decode steps (default sleep)\n"
"      --tokenize-ns-per-byte N  CPU burn per prompt byte in the front-end (default 0)\n"
"      --engine-cpu N          pin the engine thread to CPU N\n"
"      --kv-file PATH          at prefill, read each new request's KV blocks from\n"
"                              PATH with O_DIRECT (PATH must be on a block device)\n"
"      --kv-read-bytes N       bytes read per request, a multiple of 4096, in\n"
"                              1 MiB preads from a random offset (--seed)\n"
"      --kv-uring              make those reads through an io_uring, one read\n"
"                              per io_uring_enter(2)\n"
"      --handoff H             cond|pipe: how tokens reach the front-end (default cond)\n"
"      --split                 run the engine in a process of its own (forked at\n"
"                              start): each front-end thread talks to it over its\n"
"                              own unix socket, requests one way, tokens back\n"
"      --proxy HOST:PORT       run no engine: relay each request to the demo-server\n"
"                              at HOST:PORT (its --framing sse) over a keep-alive\n"
"                              TCP link per front-end thread\n"
"      --gpu                   run prefill and decode as kernels on a CUDA driver\n"
"                              library (the stub GPU of tools/stubcuda: kernel\n"
"                              durations are simulated), dlopened by the engine\n"
"                              thread as it starts; STUBCUDA_DEVICE=PATH names\n"
"                              its device node. Each iteration launches N kernels\n"
"                              adding up to its prefill and decode time, then\n"
"                              waits in cuStreamSynchronize\n"
"      --gpu-sync M            spin|block: the sync spins on the CPU, or blocks on\n"
"                              the device fd (default spin)\n"
"      --gpu-lib PATH          the library (default libcuda.so.1 in the directory\n"
"                              of this program)\n"
"      --kernels-per-step N    kernels launched per iteration (default 8)\n"
"      --framing F             sse|chunked: plain SSE ended by [DONE], or each event\n"
"                              in an HTTP chunk (default sse)\n"
"      --headers-with-body     send the headers with the first token, one write\n"
"      --send-call C           write|writev|sendmsg: a token event in one buffer\n"
"                              (default), or as iovecs: the headers when they\n"
"                              travel with it, the chunk-size line or \"data: \",\n"
"                              the payload and the trailing CRLF or blank line\n"
"      --max-body-bytes N      largest request body accepted (default 67108864)\n"
"      --log FILE              ground-truth CSV, one row per request\n"
"  -q, --quiet                 print nothing but errors\n"
"  -h, --help                  this help\n"
"\n"
"Log columns (times CLOCK_MONOTONIC ns, durations ns):\n"
"  id, peer_port             request number, the client's port\n"
"  t_read_done_ns            the whole request was read\n"
"  t_enqueue_ns              handed to the engine (--split: the engine process\n"
"                            queued it; --proxy: sent to the engine instance)\n"
"  t_dispatch_ns             the engine took it up (admitted to the batch)\n"
"  t_prefill_start_ns, t_prefill_end_ns  its prefill step (KV reads included)\n"
"  t_first_token_write_ns, t_last_token_write_ns  token writes to the client\n"
"  tokens, prefill_ns, queue_ns (t_dispatch - t_enqueue), tokenize_ns,\n"
"  prompt_bytes, status (ok, client_gone, aborted, upstream_error)\n"
"  io_ns                     wall time in the KV preads of its prefill step\n"
"  io_wait_ns                the part of it blocked (less CPU and runqueue time)\n"
"  io_cpu_ns                 the engine's CPU time in them (copying, submitting)\n"
"  engine_cpu_ns             the engine thread's CPU time (CLOCK_THREAD_CPUTIME_ID)\n"
"                            from the start of the iteration that admitted it\n"
"                            (t_boundary_ns, else its dispatch) to its first\n"
"                            token: its prefill step (KV reads included) and\n"
"                            the decode step after\n"
"  engine_runnable_ns        wall minus CPU time over the compute steps among\n"
"                            those that spin: the engine's runqueue wait in them\n"
"  engine_sleep_ns           blocked time of the compute steps that sleep\n"
"  engine_run_delay_ns       the kernel's runqueue wait of the engine thread\n"
"                            (/proc schedstat) from the start of that iteration\n"
"                            (t_boundary_ns, else its wait for work: its wakeup\n"
"                            included) to its first token\n"
"  engine_wake_delay_ns      the part of it before the request was taken up\n"
"  t_first_byte_read_ns      the first read that returned bytes of the request\n"
"  t_token_ns                the engine handed its first token to the front-end\n"
"  upstream_port             --proxy: local port of the link to the engine\n"
"                            instance (its log's peer_port), else 0\n"
"  tokenize_cpu_ns           the front-end's CPU time in tokenize_ns\n"
"  fe_run_delay_ns           the kernel's runqueue wait of the front-end thread\n"
"                            from the start of the last read of the request\n"
"                            (earlier reads of a slow upload wait on the\n"
"                            network anyway) to its first token write\n"
"  fe_read_wake_ns           the part of it in that read: its wakeup once the\n"
"                            last bytes came\n"
"  gpu_ns                    --gpu: over the iteration that admitted the request\n"
"                            (its first token's): the simulated GPU time its sync\n"
"                            waited for, i.e. the kernels' time on the critical\n"
"                            path (what the launches did not overlap; for a\n"
"                            spinning sync, at most its CPU time: preempted, it\n"
"                            waits on the runqueue)\n"
"  kernel_ns                 the simulated time of all that iteration's kernels\n"
"  launch_cpu_ns             the engine thread's CPU time in its launches\n"
"  sync_wait_ns              wall time in its cuStreamSynchronize\n"
"  sync_cpu_ns               the engine thread's CPU time in it (all of it when\n"
"                            the sync spins: GPU time, not engine CPU work)\n"
"  t_boundary_ns             the iteration boundary the request waited for: the\n"
"                            engine's last token hand-off before it took the\n"
"                            request up (a front-end it wakes may preempt it\n"
"                            there); 0 when the engine was idle, woken for it\n"
"  t_submit_call_ns          just before engine_submit() was called, and\n"
"  t_admitted_ret_ns         just after engine_admitted() returned: with\n"
"                            t_enqueue_ns and t_dispatch_ns they bracket a\n"
"                            probe's hit on those functions\n"
"With --gpu, t_prefill_end_ns is the simulated end of the last prefill kernel.\n"
"Engine columns are 0 when the engine is another instance (--proxy); GPU\n"
"columns are 0 without --gpu.\n"
"\n"
"Plain SSE framing ends a response at [DONE] with no length: clients other\n"
"than loadgen should send 'Connection: close' or use --framing chunked.\n"
"\n"
"Examples:\n"
"  demo-server                                  # 127.0.0.1:8000, 5 ms prefill\n"
"  demo-server -p 0 --port-file /tmp/port --log /tmp/gt.csv\n"
"  demo-server -a :: --batch 2 --prefill-us exp:20000 --seed 7\n"
"  demo-server --framing chunked --headers-with-body -i 10000\n"
"  demo-server --engine-cpu 1 --prefill-mode spin   # and: cpuhog -c 1 -t 30\n"
"  demo-server --kv-file /var/tmp/kv --kv-read-bytes 8388608\n"
"  demo-server --split --batch 1\n"
"  STUBCUDA_DEVICE=/tmp/nvidia0 demo-server --gpu --gpu-sync block\n"
"  demo-server -p 8001 & demo-server --proxy 127.0.0.1:8001\n"
"  curl -N -H 'Connection: close' localhost:8000/v1/completions \\\n"
"       -d '{\"prompt\": \"hi\", \"max_tokens\": 4, \"stream\": true}'\n");
}

/* The index of s in names (NULL-terminated), or a usage error naming them
 * all ("want a, b or c"). */
static int parse_choice(const char *opt, const char *s,
			const char *const *names)
{
	char want[128];
	size_t len = 0;
	int i, n;

	for (n = 0; names[n]; n++)
		if (!strcmp(s, names[n]))
			return n;
	want[0] = '\0';
	for (i = 0; i < n && len < sizeof(want); i++)
		len += snprintf(want + len, sizeof(want) - len, "%s%s",
				!i ? "" : i == n - 1 ? " or " : ", ",
				names[i]);
	usage_error("invalid %s '%s' (want %s)", opt, s, want);
	return 0;
}

static uint64_t parse_num_opt(const char *opt, const char *s, uint64_t min,
			      uint64_t max)
{
	return demo_parse_num(prog, opt, s, min, max);
}

/* The options whose values need more than a range or a list of names. */
static void parse_interval(const char *s, struct server_opts *o)
{
	if (!parse_us(s, &o->token_interval_ns))
		usage_error("invalid --token-interval-us '%s'", s);
}

static void parse_prefill(const char *s, struct server_opts *o)
{
	if (!parse_delay_spec(s, &o->prefill))
		usage_error("invalid --prefill-us '%s' (want "
			    "N, uniform:MIN:MAX or exp:MEAN)",
			    s);
}

static void parse_kv_read_bytes(const char *s, struct server_opts *o)
{
	o->kv_read_bytes = parse_num_opt("--kv-read-bytes", s, KV_ALIGN,
					 1ULL << 36);
	if (o->kv_read_bytes % KV_ALIGN)
		usage_error("invalid --kv-read-bytes '%s' "
			    "(want a multiple of %d)",
			    s, KV_ALIGN);
}

static void parse_proxy(const char *s, struct server_opts *o)
{
	char host[256], port[16];

	if (!proxy_split(s, host, sizeof(host), port, sizeof(port)))
		usage_error("invalid --proxy '%s' (want "
			    "HOST:PORT, [IPV6]:PORT)",
			    s);
	o->proxy = s;
}

static void parse_gpu_lib(const char *s, struct server_opts *o)
{
	if (!*s)
		usage_error("empty --gpu-lib");
	o->gpu_lib = s;
}

/* what an option does with its value */
enum opt_kind {
	OPT_STR,	/* keeps the string */
	OPT_FLAG,	/* no value: sets a bool */
	OPT_NUM,	/* a number in [min, max] */
	OPT_CHOICE,	/* the index of one of choices */
	OPT_FN,		/* its own parser */
};

/* options that only go with others, checked once all are read */
enum {
	SEEN_HANDOFF = 1 << 0,
	SEEN_CPU_MODES = 1 << 1,
	SEEN_GPU = 1 << 2,
};

struct opt_spec {
	const char *name;	/* the long name, without "--" */
	int letter;		/* the short option, 0 for none */
	enum opt_kind kind;
	size_t off, size;	/* the field of struct server_opts it sets */
	uint64_t min, max;	/* OPT_NUM */
	const char *const *choices;	/* OPT_CHOICE, NULL-terminated */
	void (*parse)(const char *s, struct server_opts *o);	/* OPT_FN */
	unsigned int seen;	/* SEEN_* */
};

#define FIELD(f) offsetof(struct server_opts, f), sizeof(((struct server_opts *)0)->f)
#define STR(n, l, f) { n, l, OPT_STR, FIELD(f) }
#define FLAG(n, l, f) { n, l, OPT_FLAG, FIELD(f) }
#define NUM(n, l, f, lo, hi) { n, l, OPT_NUM, FIELD(f), lo, hi }
#define CHOICE(n, f, names, s) { n, 0, OPT_CHOICE, FIELD(f), .choices = names, .seen = s }
#define FN(n, l, fn, s) { n, l, OPT_FN, .parse = fn, .seen = s }

/* in the order of the enums they set (parse_choice returns the index) */
static const char *const framing_names[] = { "sse", "chunked", NULL };
static const char *const send_call_names[] = { "write", "writev", "sendmsg", NULL };
static const char *const wait_mode_names[] = { "sleep", "spin", NULL };
static const char *const handoff_names[] = { "cond", "pipe", NULL };
static const char *const gpu_sync_names[] = { "spin", "block", NULL };

/* every option but --help, in the order of getopt's table */
static const struct opt_spec opt_specs[] = {
	STR("addr", 'a', addr),
	NUM("port", 'p', port, 0, 65535),
	STR("port-file", 0, port_file),
	NUM("workers", 'w', workers, 1, MAX_WORKERS),
	NUM("tokens", 't', tokens, 1, MAX_TOKENS_LIMIT),
	FN("token-interval-us", 'i', parse_interval, 0),
	FN("prefill-us", 0, parse_prefill, 0),
	NUM("seed", 0, seed, 0, UINT64_MAX),
	NUM("batch", 0, batch, 1, MAX_BATCH),
	CHOICE("framing", framing, framing_names, 0),
	FLAG("headers-with-body", 0, headers_with_body),
	CHOICE("send-call", send_call, send_call_names, 0),
	STR("log", 0, log_path),
	NUM("tokenize-ns-per-byte", 0, tokenize_ns_per_byte, 0, 1000000),
	CHOICE("prefill-mode", prefill_mode, wait_mode_names, SEEN_CPU_MODES),
	CHOICE("decode-mode", decode_mode, wait_mode_names, SEEN_CPU_MODES),
	CHOICE("handoff", handoff, handoff_names, SEEN_HANDOFF),
	NUM("max-body-bytes", 0, max_body, 0, 1ULL << 32),
	NUM("engine-cpu", 0, engine_cpu, 0, CPU_SETSIZE - 1),
	STR("kv-file", 0, kv_path),
	FN("kv-read-bytes", 0, parse_kv_read_bytes, 0),
	FLAG("kv-uring", 0, kv_uring),
	FLAG("split", 0, split),
	FN("proxy", 0, parse_proxy, 0),
	FLAG("gpu", 0, gpu),
	CHOICE("gpu-sync", gpu_sync, gpu_sync_names, SEEN_GPU),
	FN("gpu-lib", 0, parse_gpu_lib, SEEN_GPU),
	{ "kernels-per-step", 0, OPT_NUM, FIELD(kernels_per_step), 1,
	  MAX_KERNELS_PER_STEP, .seen = SEEN_GPU },
	FLAG("quiet", 'q', quiet),
};

#define N_OPTS (sizeof(opt_specs) / sizeof(opt_specs[0]))
/* getopt's answer for an option without a short letter: past any char */
#define OPT_LONG_BASE 256

/* Stores v in the integer field of o that spec names (int, enum or u64). */
static void set_num(struct server_opts *o, const struct opt_spec *spec,
		    uint64_t v)
{
	char *p = (char *)o + spec->off;

	if (spec->size == sizeof(uint64_t))
		*(uint64_t *)p = v;
	else
		*(int *)p = (int)v;
}

/* Applies the value s of option spec to o; returns its SEEN_* bits. */
static unsigned int apply_opt(const struct opt_spec *spec, const char *s,
			      struct server_opts *o)
{
	char opt[64];

	snprintf(opt, sizeof(opt), "--%s", spec->name);
	switch (spec->kind) {
	case OPT_STR:
		*(const char **)((char *)o + spec->off) = s;
		break;
	case OPT_FLAG:
		*(bool *)((char *)o + spec->off) = true;
		break;
	case OPT_NUM:
		set_num(o, spec, parse_num_opt(opt, s, spec->min, spec->max));
		break;
	case OPT_CHOICE:
		set_num(o, spec, parse_choice(opt, s, spec->choices));
		break;
	case OPT_FN:
		spec->parse(s, o);
		break;
	}
	return spec->seen;
}

/* getopt's tables, made from opt_specs. */
static void getopt_tables(struct option *longopts, char *shortopts)
{
	const struct opt_spec *spec;
	size_t i;

	*shortopts++ = ':';
	for (i = 0; i < N_OPTS; i++) {
		spec = &opt_specs[i];
		longopts[i] = (struct option){
			.name = spec->name,
			.has_arg = spec->kind == OPT_FLAG ? no_argument :
							    required_argument,
			.val = spec->letter ?: OPT_LONG_BASE + (int)i,
		};
		if (!spec->letter)
			continue;
		*shortopts++ = spec->letter;
		if (spec->kind != OPT_FLAG)
			*shortopts++ = ':';
	}
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i] = (struct option){ 0 };
	strcpy(shortopts, "h");
}

/* The spec getopt's answer c stands for, or NULL (-h, ':', '?'). */
static const struct opt_spec *opt_spec_of(int c)
{
	size_t i;

	if (c >= OPT_LONG_BASE && c < OPT_LONG_BASE + (int)N_OPTS)
		return &opt_specs[c - OPT_LONG_BASE];
	for (i = 0; i < N_OPTS; i++)
		if (opt_specs[i].letter == c)
			return &opt_specs[i];
	return NULL;
}

void parse_args(int argc, char **argv, struct server_opts *o)
{
	struct option longopts[N_OPTS + 2];
	char shortopts[2 * N_OPTS + 3];
	const struct opt_spec *spec;
	unsigned int seen = 0;
	int c;

	*o = (struct server_opts) {
		.engine_cpu = -1,
		.addr = "127.0.0.1",
		.port = 8000,
		.workers = 4,
		.batch = 8,
		.tokens = 16,
		.token_interval_ns = 2000 * NSEC_PER_USEC,
		.prefill = { DELAY_FIXED, 5000 * NSEC_PER_USEC, 0 },
		.seed = 1,
		.max_body = DEFAULT_MAX_BODY,
		.kernels_per_step = 8,
	};
	getopt_tables(longopts, shortopts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		spec = opt_spec_of(c);
		if (!spec) /* -h, a missing value, an unknown option */
			demo_getopt_other(c, prog, argv, usage);
		seen |= apply_opt(spec, optarg, o);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->kv_path != !o->kv_read_bytes)
		usage_error("--kv-file and --kv-read-bytes go together");
	if (o->kv_uring && !o->kv_path)
		usage_error("--kv-uring needs --kv-file");
	if (o->split && o->proxy)
		usage_error("--split and --proxy do not go together");
	if (o->proxy && (o->kv_path || o->engine_cpu >= 0 || o->gpu))
		usage_error("--proxy runs no engine: --kv-file, --engine-cpu "
			    "and --gpu belong to the engine instance");
	if ((seen & SEEN_GPU) && !o->gpu)
		usage_error("--gpu-sync, --gpu-lib and --kernels-per-step go "
			    "with --gpu");
	if (o->gpu && (seen & SEEN_CPU_MODES))
		usage_error("--prefill-mode and --decode-mode are for the CPU "
			    "engine: with --gpu, --gpu-sync says how it waits");
	if ((seen & SEEN_HANDOFF) && (o->split || o->proxy))
		usage_error("--handoff is for the in-process engine: --split "
			    "hands tokens over its unix sockets");
}
