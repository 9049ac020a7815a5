// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// What the Go scenario servers share, built into each of them (run.sh: go
// build NAME.go goclock.go): the clock, busy work, the ground-truth log,
// and the handler of the fronts in front of a runner (relay()).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"unsafe"
)

// now: CLOCK_MONOTONIC ns, as ttftrace's bpf_ktime_get_ns, read by the
// clock_gettime system call: Go 1.19 does not expose its monotonic clock
func now() int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// spin: ms of CPU, as a native kernel that never yields
func spin(ms float64) {
	end := now() + int64(ms*1e6)
	for now() < end {
	}
}

// truthLog: the ground-truth CSV, a row at a time from many handlers
type truthLog struct {
	mu sync.Mutex
	f  *os.File
}

// openLog: the ground-truth CSV at path with its header; exits on error
func openLog(prog, path, header string) *truthLog {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		os.Exit(1)
	}
	fmt.Fprintln(f, header)
	return &truthLog{f: f}
}

// row: one request's row, format's fields and a newline
func (l *truthLog) row(format string, a ...interface{}) {
	l.mu.Lock()
	fmt.Fprintf(l.f, format+"\n", a...)
	l.mu.Unlock()
}

// sseStream writes a completion's tokens as SSE events, each flushed, and
// keeps the truth's emit times: just before the first and the last write
type sseStream struct {
	w             http.ResponseWriter
	tFirst, tLast int64
	n             int
}

func newSSE(w http.ResponseWriter) *sseStream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	return &sseStream{w: w}
}

// token writes text (a JSON string) as one completion chunk
func (s *sseStream) token(text string) {
	s.tLast = now()
	if s.tFirst == 0 {
		s.tFirst = s.tLast
	}
	fmt.Fprintf(s.w, "data: {\"choices\":[{\"index\":0,\"text\":%s}]}\n\n", text)
	s.w.(http.Flusher).Flush()
	s.n++
}

func (s *sseStream) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
}

// freePort: a loopback port a child server can listen on, as Ollama and
// LocalAI pick one for their runners and backends
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serveFront serves handler on 127.0.0.1:port until SIGINT or SIGTERM, which
// it passes on to child (the runner or backend it started) before exiting
func serveFront(prog string, port int, child *exec.Cmd, handler http.HandlerFunc) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		child.Process.Signal(syscall.SIGTERM)
		child.Wait()
		os.Exit(0)
	}()
	http.HandleFunc("/v1/completions", handler)
	http.HandleFunc("/", handler)
	if err := http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", port), nil); err != nil {
		fmt.Fprintln(os.Stderr, prog+":", err)
		child.Process.Kill()
		os.Exit(1)
	}
}

// frontFlags parses the flags with -p and -log; a usage line and exit 2
// when -log or what given() says is missing
func frontFlags(prog, usage string, given func() bool) (int, string) {
	port := flag.Int("p", 8000, "port")
	logPath := flag.String("log", "", "ground-truth log")
	flag.Parse()
	if !given() || *logPath == "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, usage)
		os.Exit(2)
	}
	return *port, *logPath
}

// startChild runs start (the front's runner or backend), exiting on error
func startChild(prog string, start func() (*exec.Cmd, error)) *exec.Cmd {
	child, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, prog+":", err)
		os.Exit(1)
	}
	return child
}

// piece: a text a front's call to its runner sends the handler, or the
// call's error
type piece struct {
	text string
	err  error
}

// relayed: what a front's handler did with a request: when it read it,
// when it called the runner, its SSE stream, "ok" or "error" (the call
// failed), the client's port
type relayed struct {
	tRead, tCall int64
	sse          *sseStream
	status       string
	port         string
}

// relay: a front's handler (ollama_proxy, localai_front): reads the body,
// renders the prompt (prepMs of busy work), runs call on a goroutine of its
// own, which sends the runner's texts on out and closes it, and writes each
// as an SSE event; false when the body could not be read (answered 400)
func relay(w http.ResponseWriter, r *http.Request, prepMs float64,
	call func(ctx context.Context, body []byte, out chan<- piece)) (relayed, bool) {
	var rl relayed
	body, err := io.ReadAll(r.Body)
	rl.tRead = now()
	if err != nil {
		http.Error(w, "bad request", 400)
		return rl, false
	}
	spin(prepMs)
	out := make(chan piece, 64)
	rl.tCall = now()
	go call(r.Context(), body, out)
	rl.sse = newSSE(w)
	rl.status = "ok"
	for p := range out {
		if p.err != nil {
			rl.status = "error"
			break
		}
		rl.sse.token(strconv.Quote(p.text))
	}
	rl.sse.done()
	_, rl.port, _ = net.SplitHostPort(r.RemoteAddr)
	return rl, true
}
