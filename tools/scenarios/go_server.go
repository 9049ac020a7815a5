// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Scenario (iv): a Go server shaped as Ollama is (issue 14). net/http
// handlers read the body, "tokenize" (-tokenize-ms of busy work), and send
// each request on a channel to one scheduler goroutine that batches
// continuously (-batch); a step busy-spins prefill-ms per newly admitted
// request plus decode-ms for the running ones (a cgo engine is on CPU and
// never yields) and sends each token on the request's own channel; the
// handler writes it as an SSE event and flushes (chunked, keep-alive).
// -lock runs the scheduler under runtime.LockOSThread(), as a cgo engine
// effectively is. GOMAXPROCS is -procs (2).
//
// Ground truth (-log; CLOCK_MONOTONIC ns read by the clock_gettime system
// call: Go 1.19 does not expose its monotonic clock): port, t_read,
// t_enqueue, t_admit, t_first_token_emit / t_last_token_emit (before the
// write), tokens, io_ns (0), status.
//
// Standard library only: GO111MODULE=off go build -o OUT go_server.go goclock.go goengine.go
package main

import (
	tlspkg "crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strings"
)

var (
	lock = flag.Bool("lock", false, "runtime.LockOSThread() in the scheduler")
	jobs = make(chan *job, 1024)
)

func scheduler() {
	if *lock {
		runtime.LockOSThread()
	}
	var running []*job
	for {
		var fresh []*job
		if len(running) == 0 {
			fresh = append(fresh, <-jobs)
		}
	drain:
		for len(running)+len(fresh) < *batch {
			select {
			case j := <-jobs:
				fresh = append(fresh, j)
			default:
				break drain
			}
		}
		t := now()
		step := *prefillMs * float64(len(fresh))
		if len(running) > 0 {
			step += *decodeMs
		}
		for _, j := range fresh {
			j.tAdmit = t
		}
		spin(step)
		running = emit(append(running, fresh...))
	}
}

func completions(w http.ResponseWriter, r *http.Request) {
	serve(w, r, func(j *job) { jobs <- j })
}

func main() {
	port := flag.Int("p", 8000, "port")
	logPath := flag.String("log", "", "ground-truth CSV")
	procs := flag.Int("procs", 2, "GOMAXPROCS")
	tls := flag.String("tls", "", "CERT,KEY: HTTPS (crypto/tls), HTTP/1.1")
	flag.Parse()
	if *logPath == "" {
		fmt.Fprintln(os.Stderr, "go_server: -log FILE is needed")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*procs)
	openTruth("go_server", *logPath)
	go scheduler()
	http.HandleFunc("/v1/completions", completions)
	fmt.Fprintf(os.Stderr, "go_server: listening on %d (lock %v)\n", *port, *lock)
	addr := fmt.Sprintf("127.0.0.1:%d", *port)
	var err error
	if cert, key, ok := strings.Cut(*tls, ","); ok {
		// HTTP/1.1 only: a non-nil empty TLSNextProto offers no h2
		// (ALPN), whatever the client asks
		srv := &http.Server{Addr: addr,
			TLSNextProto: map[string]func(*http.Server, *tlspkg.Conn, http.Handler){}}
		err = srv.ListenAndServeTLS(cert, key)
	} else {
		err = http.ListenAndServe(addr, nil)
	}
	fmt.Fprintln(os.Stderr, "go_server:", err)
	os.Exit(1)
}
