// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Scenario (xi): a front server that proxies each request to an inference
// runner it spawned, as Ollama's Go server does with its llama runner (and
// as any gateway in front of vLLM or llama.cpp does). The runner is
// llama_server.c, started as this process's child on a free loopback port.
// A net/http handler reads the body, renders the prompt (-prep-ms of busy
// work), and a goroutine POSTs it to the runner over a keep-alive
// http.Client connection, reads the runner's SSE stream line by line
// (bufio.Scanner, as Ollama's llm.Completion does) and sends each token on
// a channel; the handler writes it to the client as an SSE event and
// flushes (chunked, keep-alive).
//
// Ground truth (-log; CLOCK_MONOTONIC ns by the clock_gettime system call),
// one row per client request: port, t_read, upstream_port (the local port
// of the connection to the runner), t_forward (before the POST),
// t_first_token_emit / t_last_token_emit (before the write to the client),
// tokens, status. The runner logs its own rows (-runner-log), keyed by
// upstream_port; compare.py --hops joins them: the engine's queue and
// admission are the runner's.
//
// Standard library only: GO111MODULE=off go build -o OUT ollama_proxy.go goclock.go
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

var (
	prepMs    = flag.Float64("prep-ms", 0.5, "prompt rendering in the handler, ms")
	runnerBin = flag.String("runner", "", "the runner's binary (llama_server)")
	runnerLog = flag.String("runner-log", "", "the runner's ground-truth log")
	runnerArg = flag.String("runner-args", "", "more runner arguments, space-separated")
	// one per connection the client may open: the runner serves each
	// keep-alive connection on one HTTP thread until it closes
	runnerThr = flag.Int("runner-threads", 8, "the runner's HTTP threads")
	runnerURL string
	client    = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	truth     *truthLog
)

// completion streams the runner's events for body onto out; the local
// port of its connection to *port
func completion(ctx context.Context, body []byte, out chan<- piece, port *int) {
	defer close(out)
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		*port = i.Conn.LocalAddr().(*net.TCPAddr).Port
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), "POST",
		runnerURL+"/completion", bytes.NewReader(body))
	if err != nil {
		out <- piece{err: err}
		return
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		out <- piece{err: err}
		return
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") || line == "data: [DONE]" {
			continue
		}
		out <- piece{text: strings.TrimPrefix(line, "data: ")}
	}
	if err := sc.Err(); err != nil {
		out <- piece{err: err}
	}
}

func generate(w http.ResponseWriter, r *http.Request) {
	up := 0
	rl, ok := relay(w, r, *prepMs, func(ctx context.Context, body []byte, out chan<- piece) {
		completion(ctx, body, out, &up)
	})
	if ok {
		truth.row("%s,%d,%d,%d,%d,%d,%d,%s", rl.port, rl.tRead, up, rl.tCall,
			rl.sse.tFirst, rl.sse.tLast, rl.sse.n, rl.status)
	}
}

// startRunner spawns the runner and waits until it accepts connections
func startRunner() (*exec.Cmd, error) {
	rp, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"-p", strconv.Itoa(rp), "--http-threads", strconv.Itoa(*runnerThr)}
	if *runnerLog != "" {
		args = append(args, "--log", *runnerLog)
	}
	args = append(args, strings.Fields(*runnerArg)...)
	cmd := exec.Command(*runnerBin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	runnerURL = "http://127.0.0.1:" + strconv.Itoa(rp)
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", runnerURL[len("http://"):]); err == nil {
			c.Close()
			return cmd, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("runner did not listen on %d", rp)
}

func main() {
	port, logPath := frontFlags("ollama_proxy", "-runner BIN and -log FILE are needed",
		func() bool { return *runnerBin != "" })
	truth = openLog("ollama_proxy", logPath, "port,t_read,upstream_port,t_forward,"+
		"t_first_token_emit,t_last_token_emit,tokens,status")
	serveFront("ollama_proxy", port, startChild("ollama_proxy", startRunner), generate)
}
