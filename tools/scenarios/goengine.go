// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// What the Go engine servers share (go_server.go, tgi_router.go; run.sh
// builds each with goclock.go and this): a request as their scheduler
// sees it, the handler that reads, tokenizes, hands it on and writes its
// tokens as SSE, and the ground-truth log.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
)

type token struct {
	idx  int
	last bool
}

// job: one request, its tokens made and its admission stamped by the
// scheduler
type job struct {
	want, n int
	tAdmit  int64
	out     chan token
}

var (
	batch      = flag.Int("batch", 8, "running requests at most")
	prefillMs  = flag.Float64("prefill-ms", 10, "prefill per request, ms")
	decodeMs   = flag.Float64("decode-ms", 2, "decode step, ms")
	tokenizeMs = flag.Float64("tokenize-ms", 1, "tokenization in the handler, ms")
	tokens     = flag.Int("tokens", 8, "tokens when the request names none")
	truth      *truthLog
)

// openTruth: the ground-truth log, README.md's columns
func openTruth(prog, path string) {
	truth = openLog(prog, path, "port,t_read,t_enqueue,t_admit,"+
		"t_first_token_emit,t_last_token_emit,tokens,io_ns,status")
}

// serve: one completion; hand queues its job for the scheduler
func serve(w http.ResponseWriter, r *http.Request, hand func(*job)) {
	body, err := io.ReadAll(r.Body)
	tRead := now()
	var req struct {
		MaxTokens int `json:"max_tokens"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		http.Error(w, "bad request", 400)
		return
	}
	spin(*tokenizeMs)
	j := &job{want: req.MaxTokens, out: make(chan token, 64)}
	if j.want <= 0 {
		j.want = *tokens
	}
	tEnqueue := now()
	hand(j)
	sse := newSSE(w)
	for t := range j.out {
		sse.token(fmt.Sprintf("\"tok%d\"", t.idx))
		if t.last {
			break
		}
	}
	sse.done()
	_, port, _ := net.SplitHostPort(r.RemoteAddr)
	truth.row("%s,%d,%d,%d,%d,%d,%d,0,ok", port, tRead, tEnqueue, j.tAdmit,
		sse.tFirst, sse.tLast, sse.n)
}

// emit: one token to each job of js; the ones still running back
func emit(js []*job) []*job {
	kept := js[:0]
	for _, j := range js {
		j.n++
		j.out <- token{j.n, j.n >= j.want}
		if j.n < j.want {
			kept = append(kept, j)
		}
	}
	return kept
}
