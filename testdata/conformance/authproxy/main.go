// Command authproxy puts a bearer token on every request for the server
// scenarios of the official MCP conformance suite (see ../server.sh and
// ../README.md).
//
// The suite's `server --url` command sends no Authorization header, and
// mcphost's gateway serves no MCP without a token (by design: there is no
// unauthenticated mode). authproxy listens on a free loopback port, prints
// "listening on http://ADDR" on stdout once it accepts, and forwards every
// request to -target with "Authorization: Bearer $MCPHOST_CONFORMANCE_TOKEN"
// added. Everything else passes through as it came: the method, path,
// body, every header (Host and Origin too, so the suite's DNS-rebinding
// scenario reaches mcphost's own check) and the response, streamed (SSE
// events are flushed as they arrive).
//
// Given -target more than once (the cluster run of ../server.sh: two
// replicas), it is a plain round-robin load balancer: each request goes to
// the next target in turn, with no stickiness of any kind, so a legacy
// session's requests land on every replica and only the replicas' own
// forwarding keeps them on the session's owner.
//
// It runs until SIGINT or SIGTERM.
//
//	go build -o /tmp/authproxy ./testdata/conformance/authproxy
//	MCPHOST_CONFORMANCE_TOKEN=… /tmp/authproxy -target http://127.0.0.1:PORT [-target http://127.0.0.1:PORT2]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// maxBody is more than the gateway accepts (4 MiB), so that the gateway
// answers an oversized body itself.
const maxBody = 8 << 20

func main() {
	os.Exit(run())
}

func run() int {
	var targets []*url.URL
	flag.Func("target", "base `URL` of an mcphost daemon (http://127.0.0.1:PORT); more than one: round robin", func(v string) error {
		u, err := url.Parse(v)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("want http://HOST:PORT")
		}
		targets = append(targets, u)
		return nil
	})
	flag.Parse()
	token := os.Getenv("MCPHOST_CONFORMANCE_TOKEN")
	if len(targets) == 0 || token == "" {
		fmt.Fprintln(os.Stderr, "usage: MCPHOST_CONFORMANCE_TOKEN=TOKEN authproxy -target http://HOST:PORT [-target …]")
		return 2
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
			r.Out.Host = r.In.Host // the client's Host, not the target's
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1,
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request body is read whole before it is forwarded. Streamed,
		// it races the response: once the proxy has flushed the first
		// event of an SSE answer, net/http fails further reads of the
		// incoming body, the outgoing transport takes that for a failed
		// request and closes the connection under the answer it is still
		// copying (the client then sees a cut-off stream).
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "authproxy: reading the request body: "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "authproxy:", err)
		return 1
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = srv.Close()
	}()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "authproxy:", err)
		return 1
	}
	return 0
}
