// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// Go's net/http (tests/test_bpf_framing.sh): SSE by Write and Flush per
// token (chunked: the headers go out with the first chunk, each flush is
// one send of "<hex>\r\n<event>\r\n", the handler's return sends
// "0\r\n\r\n"), JSON with a Content-Length set by the handler (headers and
// body in one send). With -tls CERT,KEY: HTTPS by crypto/tls
// (tests/test_bpf_tls.sh), HTTP/1.1 only.
//
// Standard library only: GO111MODULE=off go build -o OUT go_server.go
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	port := flag.Int("p", 0, "port")
	pad := flag.Int("pad", 0, "bytes of padding in each event")
	noDone := flag.Bool("no-done", false, "end without data: [DONE]")
	gapMs := flag.Float64("gap-ms", 1, "time between tokens")
	tlsPair := flag.String("tls", "", "CERT,KEY: serve HTTPS")
	flag.Parse()
	http.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		want := struct {
			MaxTokens int   `json:"max_tokens"`
			Stream    *bool `json:"stream"`
		}{}
		json.Unmarshal(body, &want)
		n := want.MaxTokens
		if n <= 0 {
			n = 8
		}
		if want.Stream != nil && !*want.Stream {
			out := []byte(`{"id": "cmpl-1", "object": "text_completion", "choices": [{"index": 0, "text": "` +
				strings.Repeat(" tok", n) + `"}]}`)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
			w.Write(out)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := 0; i < n; i++ {
			if i > 0 {
				time.Sleep(time.Duration(*gapMs * float64(time.Millisecond)))
			}
			fmt.Fprintf(w, "data: {\"id\": \"cmpl-1\", \"object\": \"text_completion\", \"choices\": [{\"index\": 0, \"text\": \" tok%d\"}], \"pad\": \"%s\"}\n\n",
				i, strings.Repeat("x", *pad))
			fl.Flush()
		}
		if !*noDone {
			io.WriteString(w, "data: [DONE]\n\n")
			fl.Flush()
		}
	})
	srv := &http.Server{Addr: fmt.Sprintf("127.0.0.1:%d", *port),
		// no HTTP/2 offered (ALPN): the client speaks HTTP/1.1
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	var err error
	if cert, key, ok := strings.Cut(*tlsPair, ","); ok {
		err = srv.ListenAndServeTLS(cert, key)
	} else {
		err = srv.ListenAndServe()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
