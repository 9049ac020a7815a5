// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

/*
 * Scenario: a Java server, written after the attribution rules to judge
 * them on a runtime they were not written for: the JVM's own threads (G1's
 * collector threads, the VM thread's safepoints, the JIT's compiler
 * threads) wake and stop the server's threads as the Go runtime's do, and
 * a request crosses four of the server's threads, as in DJL Serving's or
 * TorchServe's Java front end:
 * - the JDK's own HttpServer: its dispatcher thread selects (epoll) on the
 *   connections and hands each readable one to a pool of --http-threads
 *   handler threads (a ThreadPoolExecutor: a LinkedBlockingQueue, park and
 *   unpark, futexes under pthread condition variables), which read the
 *   request and write its response on the blocking socket;
 * - a handler reads the body, "tokenizes" (--tokenize-ms on CPU, and
 *   --garbage-kb of short-lived objects, so that the young generation
 *   fills and G1 collects now and then under load), puts a job on the
 *   engine's queue (a LinkedBlockingQueue, as DJL's job queue), sends the
 *   headers and takes its tokens from its own queue;
 * - one engine thread batches continuously (--batch): between steps it
 *   takes the waiting jobs (blocking only when nothing runs), a step spins
 *   --prefill-ms per newly admitted job plus --decode-ms for the running
 *   ones (a native kernel on CPU, never yielding), and puts each job's
 *   token on the job's queue;
 * - the handler writes each token as an SSE event (one HTTP chunk,
 *   flushed), then [DONE] and the chunked terminator, keep-alive.
 *
 * Ground truth (--log; System.nanoTime(), which is CLOCK_MONOTONIC on
 * Linux, as ttftrace's clock), tools/scenarios/README.md's columns: port,
 * t_read (body read), t_enqueue (the put), t_admit (the engine took it into
 * a step), t_first_token_emit / t_last_token_emit (before the handler's
 * write of that token), tokens, io_ns (0), status.
 *
 * JDK only: javac -d DIR java_server.java; java -cp DIR JavaServer ...
 */

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.FileWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

class JavaServer {
	static int batch = 8, tokens = 8, httpThreads = 16, garbageKb = 512;
	static double prefillMs = 10, decodeMs = 2, tokenizeMs = 1;
	static Writer log;
	static final BlockingQueue<Job> jobs = new LinkedBlockingQueue<>();
	static final Pattern MAX_TOKENS = Pattern.compile("\"max_tokens\"\\s*:\\s*(\\d+)");
	// what the garbage made: kept so that the JIT cannot drop it
	static volatile long sink;

	// one request as the engine sees it; its tokens go back on out
	static final class Job {
		final int want;
		int made;
		volatile long tAdmit;
		final BlockingQueue<Integer> out = new ArrayBlockingQueue<>(64);

		Job(int want)
		{
			this.want = want;
		}
	}

	// ms of CPU, as a native kernel that never yields
	static void spin(double ms)
	{
		long end = System.nanoTime() + (long)(ms * 1e6);
		while (System.nanoTime() < end)
			;
	}

	// short-lived objects, as a tokenizer's strings and arrays
	static void garbage(int kb)
	{
		long sum = 0;
		for (int i = 0; i < kb; i++) {
			byte[] b = new byte[1024];
			b[i % 1024] = (byte)i;
			sum += b.length + b[i % 1024];
		}
		sink += sum;
	}

	static void engine()
	{
		List<Job> running = new ArrayList<>();
		for (;;) {
			List<Job> fresh = new ArrayList<>();
			try {
				if (running.isEmpty())
					fresh.add(jobs.take());
			} catch (InterruptedException e) {
				return;
			}
			jobs.drainTo(fresh, batch - running.size() - fresh.size());
			long t = System.nanoTime();
			double step = prefillMs * fresh.size();
			if (!running.isEmpty())
				step += decodeMs;
			for (Job j : fresh)
				j.tAdmit = t;
			spin(step);
			running.addAll(fresh);
			List<Job> kept = new ArrayList<>();
			for (Job j : running) {
				j.made++;
				j.out.add(j.made);
				if (j.made < j.want)
					kept.add(j);
			}
			running = kept;
		}
	}

	static void write(OutputStream os, String s) throws IOException
	{
		os.write(s.getBytes(StandardCharsets.UTF_8));
		os.flush();
	}

	static void completions(HttpExchange ex) throws IOException
	{
		byte[] body = ex.getRequestBody().readAllBytes();
		long tRead = System.nanoTime();
		Matcher m = MAX_TOKENS.matcher(new String(body, StandardCharsets.UTF_8));
		int want = m.find() ? Integer.parseInt(m.group(1)) : 0;
		spin(tokenizeMs);
		garbage(garbageKb);
		Job j = new Job(want > 0 ? want : tokens);
		long tEnqueue = System.nanoTime();
		jobs.add(j);
		ex.getResponseHeaders().set("Content-Type", "text/event-stream");
		ex.sendResponseHeaders(200, 0);
		OutputStream os = ex.getResponseBody();
		long tFirst = 0, tLast = 0;
		int n = 0;
		try {
			for (;;) {
				int idx = j.out.take();
				tLast = System.nanoTime();
				if (tFirst == 0)
					tFirst = tLast;
				write(os, "data: {\"choices\":[{\"index\":0,\"text\":\"tok" + idx +
						  "\"}]}\n\n");
				n++;
				if (idx >= j.want)
					break;
			}
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
		write(os, "data: [DONE]\n\n");
		os.close();
		String row = ex.getRemoteAddress().getPort() + "," + tRead + "," + tEnqueue + "," +
			     j.tAdmit + "," + tFirst + "," + tLast + "," + n + ",0,ok\n";
		synchronized (log) {
			log.write(row);
			log.flush();
		}
	}

	static String arg(String[] a, int i)
	{
		if (i >= a.length) {
			System.err.println("java_server: " + a[i - 1] + " needs a value");
			System.exit(2);
		}
		return a[i];
	}

	public static void main(String[] a) throws IOException
	{
		int port = 8000;
		String logPath = null;
		for (int i = 0; i < a.length; i++) {
			switch (a[i]) {
			case "-p": port = Integer.parseInt(arg(a, ++i)); break;
			case "--log": logPath = arg(a, ++i); break;
			case "--batch": batch = Integer.parseInt(arg(a, ++i)); break;
			case "--tokens": tokens = Integer.parseInt(arg(a, ++i)); break;
			case "--http-threads": httpThreads = Integer.parseInt(arg(a, ++i)); break;
			case "--garbage-kb": garbageKb = Integer.parseInt(arg(a, ++i)); break;
			case "--prefill-ms": prefillMs = Double.parseDouble(arg(a, ++i)); break;
			case "--decode-ms": decodeMs = Double.parseDouble(arg(a, ++i)); break;
			case "--tokenize-ms": tokenizeMs = Double.parseDouble(arg(a, ++i)); break;
			default:
				System.err.println("java_server: unknown option " + a[i]);
				System.exit(2);
			}
		}
		if (logPath == null) {
			System.err.println("java_server: --log FILE is needed");
			System.exit(2);
		}
		log = new FileWriter(logPath);
		log.write("port,t_read,t_enqueue,t_admit,t_first_token_emit,t_last_token_emit,tokens," +
			  "io_ns,status\n");
		log.flush();
		Thread e = new Thread(JavaServer::engine, "engine");
		e.setDaemon(true);
		e.start();
		HttpServer srv = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 128);
		srv.createContext("/v1/completions", ex -> {
			try {
				completions(ex);
			} finally {
				ex.close();
			}
		});
		srv.setExecutor(Executors.newFixedThreadPool(httpThreads));
		srv.start();
		System.err.println("java_server: listening on " + port);
	}
}
