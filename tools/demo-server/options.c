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

enum {
	OPT_PORT_FILE = 256,
	OPT_PREFILL_US,
	OPT_SEED,
	OPT_BATCH,
	OPT_FRAMING,
	OPT_HEADERS_WITH_BODY,
	OPT_SEND_CALL,
	OPT_LOG,
	OPT_TOKENIZE,
	OPT_PREFILL_MODE,
	OPT_DECODE_MODE,
	OPT_HANDOFF,
	OPT_MAX_BODY,
	OPT_ENGINE_CPU,
	OPT_KV_FILE,
	OPT_KV_READ_BYTES,
	OPT_SPLIT,
	OPT_PROXY,
	OPT_GPU,
	OPT_GPU_SYNC,
	OPT_GPU_LIB,
	OPT_KERNELS_PER_STEP,
};

/* The index of s in names (n of them), or a usage error naming them all
 * ("want a, b or c"). */
static int parse_choice(const char *opt, const char *s,
			const char *const *names, int n)
{
	char want[128];
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	want[0] = '\0';
	for (i = 0; i < n && len < sizeof(want); i++)
		len += snprintf(want + len, sizeof(want) - len, "%s%s",
				!i ? "" : i == n - 1 ? " or " : ", ",
				names[i]);
	usage_error("invalid %s '%s' (want %s)", opt, s, want);
	return 0;
}

#define PARSE_CHOICE(opt, s, ...)                                        \
	parse_choice(opt, s, (const char *const[]){ __VA_ARGS__ },       \
		     sizeof((const char *const[]){ __VA_ARGS__ }) /        \
			     sizeof(const char *))

static enum wait_mode parse_wait_mode(const char *opt, const char *s)
{
	return PARSE_CHOICE(opt, s, "sleep", "spin");
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

void parse_args(int argc, char **argv, struct server_opts *o)
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
		{ "send-call", required_argument, NULL, OPT_SEND_CALL },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "tokenize-ns-per-byte", required_argument, NULL,
		  OPT_TOKENIZE },
		{ "prefill-mode", required_argument, NULL, OPT_PREFILL_MODE },
		{ "decode-mode", required_argument, NULL, OPT_DECODE_MODE },
		{ "handoff", required_argument, NULL, OPT_HANDOFF },
		{ "max-body-bytes", required_argument, NULL, OPT_MAX_BODY },
		{ "engine-cpu", required_argument, NULL, OPT_ENGINE_CPU },
		{ "kv-file", required_argument, NULL, OPT_KV_FILE },
		{ "kv-read-bytes", required_argument, NULL,
		  OPT_KV_READ_BYTES },
		{ "split", no_argument, NULL, OPT_SPLIT },
		{ "proxy", required_argument, NULL, OPT_PROXY },
		{ "gpu", no_argument, NULL, OPT_GPU },
		{ "gpu-sync", required_argument, NULL, OPT_GPU_SYNC },
		{ "gpu-lib", required_argument, NULL, OPT_GPU_LIB },
		{ "kernels-per-step", required_argument, NULL,
		  OPT_KERNELS_PER_STEP },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char host[256], port[16];
	bool handoff_set = false, cpu_modes_set = false, gpu_opts_set = false;
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
			o->framing = PARSE_CHOICE("--framing", optarg, "sse",
						  "chunked");
			break;
		case OPT_HEADERS_WITH_BODY:
			o->headers_with_body = true;
			break;
		case OPT_SEND_CALL:
			o->send_call = PARSE_CHOICE("--send-call", optarg,
						    "write", "writev",
						    "sendmsg");
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
			cpu_modes_set = true;
			break;
		case OPT_DECODE_MODE:
			o->decode_mode = parse_wait_mode("--decode-mode",
							 optarg);
			cpu_modes_set = true;
			break;
		case OPT_HANDOFF:
			o->handoff = PARSE_CHOICE("--handoff", optarg, "cond",
						  "pipe");
			handoff_set = true;
			break;
		case OPT_MAX_BODY:
			o->max_body = parse_num_opt("--max-body-bytes", optarg,
						    0, 1ULL << 32);
			break;
		case OPT_ENGINE_CPU:
			o->engine_cpu = parse_num_opt("--engine-cpu", optarg, 0,
						      CPU_SETSIZE - 1);
			break;
		case OPT_KV_FILE:
			o->kv_path = optarg;
			break;
		case OPT_KV_READ_BYTES:
			o->kv_read_bytes = parse_num_opt("--kv-read-bytes",
							 optarg, KV_ALIGN,
							 1ULL << 36);
			if (o->kv_read_bytes % KV_ALIGN)
				usage_error("invalid --kv-read-bytes '%s' "
					    "(want a multiple of %d)", optarg,
					    KV_ALIGN);
			break;
		case OPT_SPLIT:
			o->split = true;
			break;
		case OPT_PROXY:
			if (!proxy_split(optarg, host, sizeof(host), port,
					 sizeof(port)))
				usage_error("invalid --proxy '%s' (want "
					    "HOST:PORT, [IPV6]:PORT)", optarg);
			o->proxy = optarg;
			break;
		case OPT_GPU:
			o->gpu = true;
			break;
		case OPT_GPU_SYNC:
			o->gpu_sync = PARSE_CHOICE("--gpu-sync", optarg, "spin",
						   "block");
			gpu_opts_set = true;
			break;
		case OPT_GPU_LIB:
			if (!*optarg)
				usage_error("empty --gpu-lib");
			o->gpu_lib = optarg;
			gpu_opts_set = true;
			break;
		case OPT_KERNELS_PER_STEP:
			o->kernels_per_step =
				parse_num_opt("--kernels-per-step", optarg, 1,
					      MAX_KERNELS_PER_STEP);
			gpu_opts_set = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		default: /* -h, a missing value, an unknown option */
			demo_getopt_other(c, prog, argv, usage);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->kv_path != !o->kv_read_bytes)
		usage_error("--kv-file and --kv-read-bytes go together");
	if (o->split && o->proxy)
		usage_error("--split and --proxy do not go together");
	if (o->proxy && (o->kv_path || o->engine_cpu >= 0 || o->gpu))
		usage_error("--proxy runs no engine: --kv-file, --engine-cpu "
			    "and --gpu belong to the engine instance");
	if (gpu_opts_set && !o->gpu)
		usage_error("--gpu-sync, --gpu-lib and --kernels-per-step go "
			    "with --gpu");
	if (o->gpu && cpu_modes_set)
		usage_error("--prefill-mode and --decode-mode are for the CPU "
			    "engine: with --gpu, --gpu-sync says how it waits");
	if (handoff_set && (o->split || o->proxy))
		usage_error("--handoff is for the in-process engine: --split "
			    "hands tokens over its unix sockets");
}

/*
 * The KV file must be read from a disk: a file system that refuses
 * O_DIRECT, or tmpfs (which accepts and ignores it), is an error.
 */
