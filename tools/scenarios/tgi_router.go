// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Scenario: a router and its model shard, as Hugging Face's TGI is built
// (written after the rules, to judge them: session 42). TGI's router (Rust,
// tokio) queues each request and one batching task drives a Python shard
// process over a unix socket (gRPC there): a Prefill call for the requests
// it takes from the queue, then Decode calls for the whole running batch;
// each call returns one token per request, which the task sends to each
// request's stream. Here: net/http handlers read and "tokenize" (-tokenize-ms
// of busy work) and append the request to the queue (a mutex, a slice and a
// notify channel); the batching goroutine takes up to -batch, sends the shard
// a prefill call for the new ones (its forward: -prefill-ms per request) and,
// when others are running, a decode call (-decode-ms), one line each way over
// a unix socket (tgi_shard.py, spawned by the router); each call's tokens go
// to the requests' channels, and their handlers write them as SSE events.
//
// Ground truth (-log; CLOCK_MONOTONIC ns): port, t_read, t_enqueue (the
// append), t_admit (the prefill call that took it was sent),
// t_first_token_emit / t_last_token_emit (before the write), tokens, io_ns
// (0), status.
//
// Standard library only: GO111MODULE=off go build -o OUT tgi_router.go goclock.go goengine.go
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// queue: the router's queue of waiting requests (TGI's Queue: a mutex and
// a notify)
type queue struct {
	mu      sync.Mutex
	waiting []*job
	notify  chan struct{}
}

func (q *queue) append(r *job) {
	q.mu.Lock()
	q.waiting = append(q.waiting, r)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// take: up to n waiting requests, waiting for one when block is set
func (q *queue) take(n int, block bool) []*job {
	for {
		q.mu.Lock()
		k := len(q.waiting)
		if k > n {
			k = n
		}
		got := append([]*job(nil), q.waiting[:k]...)
		q.waiting = q.waiting[k:]
		q.mu.Unlock()
		if len(got) > 0 || !block {
			return got
		}
		<-q.notify
	}
}

var waiting = &queue{notify: make(chan struct{}, 1)}

// shard: one call to the model shard and its answer, a line each way
type shard struct {
	conn net.Conn
	in   *bufio.Reader
}

func (s *shard) call(kind string, n int) {
	fmt.Fprintf(s.conn, "%s %d\n", kind, n)
	if _, err := s.in.ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "tgi_router: the shard:", err)
		os.Exit(1)
	}
}

// batching: TGI's batching task
func batching(s *shard) {
	var running []*job
	for {
		fresh := waiting.take(*batch-len(running), len(running) == 0)
		if len(fresh) > 0 {
			t := now()
			for _, r := range fresh {
				r.tAdmit = t
			}
			s.call("prefill", len(fresh))
			fresh = emit(fresh)
		}
		if len(running) > 0 {
			s.call("decode", len(running))
			running = emit(running)
		}
		running = append(running, fresh...)
	}
}

func completions(w http.ResponseWriter, r *http.Request) {
	serve(w, r, waiting.append)
}

// startShard: the shard process, connected back to a unix socket of ours
func startShard(path string) *shard {
	sock := filepath.Join(os.TempDir(), fmt.Sprintf("ttft-tgi-%d.sock", os.Getpid()))
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tgi_router:", err)
		os.Exit(1)
	}
	defer os.Remove(sock)
	defer l.Close()
	cmd := exec.Command("/usr/bin/python3", path, "--socket", sock,
		"--prefill-ms", fmt.Sprint(*prefillMs), "--decode-ms", fmt.Sprint(*decodeMs))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tgi_router: the shard:", err)
		os.Exit(1)
	}
	conn, err := l.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tgi_router: the shard did not connect:", err)
		os.Exit(1)
	}
	return &shard{conn: conn, in: bufio.NewReader(conn)}
}

func main() {
	port := flag.Int("p", 8000, "port")
	logPath := flag.String("log", "", "ground-truth CSV")
	shardPath := flag.String("shard", "", "tgi_shard.py")
	flag.Parse()
	if *logPath == "" || *shardPath == "" {
		fmt.Fprintln(os.Stderr, "tgi_router: -log FILE and -shard tgi_shard.py are needed")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(2)
	openTruth("tgi_router", *logPath)
	go batching(startShard(*shardPath))
	http.HandleFunc("/v1/completions", completions)
	fmt.Fprintf(os.Stderr, "tgi_router: listening on %d\n", *port)
	err := http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", *port), nil)
	fmt.Fprintln(os.Stderr, "tgi_router:", err)
	os.Exit(1)
}
