// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Scenario (xxvi): LocalAI, a Go API server in front of a backend process
// it spawned and calls over gRPC on loopback TCP (HTTP/2), as LocalAI runs
// its Python backends (localai_backend.py: grpc.aio, vLLM V0's engine).
// written to judge the rules on a shape they were not written for
// (session 53). As LocalAI's pkg/grpc/client.go does, each call dials a
// new connection (grpc.Dial, closed when the call ends) and, unless
// -parallel (LOCALAI_PARALLEL_REQUESTS), holds the client's opMutex for
// the whole call: one request at a time reaches the backend. A net/http
// handler (LocalAI's is Fiber's; the shape is the same) reads the body,
// renders the prompt template (-prep-ms of busy work) and a goroutine
// calls PredictStream, sending each reply's text on a channel; the
// handler writes it as an SSE event and flushes.
//
// Ground truth (-log; CLOCK_MONOTONIC ns), README.md's columns: port,
// t_read (the front read the body), t_enqueue (the backend's put on its
// engine's queue), t_admit (the engine's step that took it), both sent
// back in the first reply, t_first_token_emit / t_last_token_emit (before
// the write to the client), tokens, io_ns (0), status; then t_call (the
// front's PredictStream, before the dial and the lock) and t_engine_first
// (the backend yielded the first reply).
//
// Built by run.sh: GO111MODULE=off with Debian's golang-google-grpc-dev.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
)

var (
	prepMs     = flag.Float64("prep-ms", 0.5, "prompt template rendering in the handler, ms")
	backendCmd = flag.String("backend", "", "the backend's command line (--addr is added)")
	parallel   = flag.Bool("parallel", true, "calls to the backend in parallel "+
		"(LOCALAI_PARALLEL_REQUESTS); false: one at a time behind a mutex")
	shared = flag.Bool("shared-conn", false, "every call on one connection, "+
		"its streams multiplexed (a grpc.ClientConn kept, as most Go clients do)")
	backendAddr string
	sharedConn  *grpc.ClientConn
	opMutex     sync.Mutex
	truth       *truthLog
)

// rawCodec: the messages are the bytes themselves (no protobuf here)
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "raw" }

var predictStream = &grpc.StreamDesc{StreamName: "PredictStream", ServerStreams: true}

// call: one unary or server-streaming call on a connection of its own, as
// LocalAI's client makes it; each reply goes to f
func call(ctx context.Context, method string, in []byte, f func([]byte)) error {
	if !*parallel {
		opMutex.Lock()
		defer opMutex.Unlock()
	}
	conn := sharedConn
	if conn == nil {
		c, err := grpc.Dial(backendAddr, grpc.WithInsecure())
		if err != nil {
			return err
		}
		defer c.Close()
		conn = c
	}
	stream, err := conn.NewStream(ctx, predictStream, "/backend.Backend/"+method,
		grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	if err := stream.SendMsg(&in); err != nil {
		return err
	}
	if err := stream.CloseSend(); err != nil {
		return err
	}
	for {
		var reply []byte
		err := stream.RecvMsg(&reply)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		f(reply)
	}
}

// predict: the backend's replies to one PredictStream, their texts onto
// out; the first one's stamps ("t_enqueue,t_admit,t_yield tok1") to
// *stamps
func predict(ctx context.Context, out chan<- piece, stamps *string) {
	defer close(out)
	err := call(ctx, "PredictStream", []byte(`{"tokens": 8}`), func(b []byte) {
		text := string(b)
		if sp := strings.IndexByte(text, ' '); sp > 0 {
			*stamps, text = text[:sp], text[sp+1:]
		}
		out <- piece{text: text}
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "localai_front:", err)
		out <- piece{err: err}
	}
}

func generate(w http.ResponseWriter, r *http.Request) {
	stamps := "0,0,0"
	rl, ok := relay(w, r, *prepMs, func(ctx context.Context, _ []byte, out chan<- piece) {
		predict(ctx, out, &stamps)
	})
	if !ok {
		return
	}
	st := strings.Split(stamps, ",")
	truth.row("%s,%d,%s,%s,%d,%d,%d,0,%s,%d,%s", rl.port, rl.tRead, st[0], st[1],
		rl.sse.tFirst, rl.sse.tLast, rl.sse.n, rl.status, rl.tCall, st[2])
}

// startBackend spawns the backend on a free port and waits for its Health
// to answer, as LocalAI waits for a backend it started
func startBackend() (*exec.Cmd, error) {
	bp, err := freePort()
	if err != nil {
		return nil, err
	}
	backendAddr = "127.0.0.1:" + strconv.Itoa(bp)
	argv := append(strings.Fields(*backendCmd), "--addr", backendAddr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	for i := 0; i < 300; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = call(ctx, "Health", nil, func([]byte) {})
		cancel()
		if err == nil && *shared {
			// the calls' one connection, dialed at the first
			sharedConn, err = grpc.Dial(backendAddr, grpc.WithInsecure())
		}
		if err == nil {
			return cmd, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill()
	return nil, fmt.Errorf("the backend did not answer on %s: %v", backendAddr, err)
}

func main() {
	port, logPath := frontFlags("localai_front", "-backend CMD and -log FILE are needed",
		func() bool { return *backendCmd != "" })
	truth = openLog("localai_front", logPath, "port,t_read,t_enqueue,t_admit,"+
		"t_first_token_emit,t_last_token_emit,tokens,io_ns,status,t_call,t_engine_first")
	serveFront("localai_front", port, startChild("localai_front", startBackend), generate)
}
