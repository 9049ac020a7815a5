// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// What the Go scenario servers share, built into each of them (run.sh: go
// build NAME.go goclock.go): the clock, busy work, the ground-truth log.
package main

import (
	"fmt"
	"net/http"
	"os"
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

// openLog: the ground-truth CSV at path with its header; exits on error
func openLog(prog, path, header string) *os.File {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		os.Exit(1)
	}
	fmt.Fprintln(f, header)
	return f
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
