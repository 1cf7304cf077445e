package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// callStreamServer answers each POST with an event stream holding the
// answer to call 1, then waits for what finish(r) returns to be closed
// (or for the client to go) before it ends the stream. answer false: it
// answers nothing.
func callStreamServer(t *testing.T, answer bool, finish func(r *http.Request) <-chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if answer {
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		}
		w.(http.Flusher).Flush()
		select {
		case <-finish(r):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// postCall POSTs call 1 through check with ctx and returns the response
// and whether its connection was reused.
func postCall(t *testing.T, ctx context.Context, check AnswerCheck, url string) (*http.Response, bool) {
	t.Helper()
	var reused bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := check.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, reused
}

// readEvent reads one event of br (up to its blank line).
func readEvent(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v (so far %q)", err, ev.String())
		}
		if line == "\n" {
			return ev.String()
		}
		ev.WriteString(line)
	}
}

// TestAnswerCheckKeepsConnection: a call that ends (its context
// cancelled) right after its answer was read, as go-sdk's caller ends it,
// while the server has not yet ended the stream, leaves the connection
// to the next request: go-sdk's reader drains the stream to its end.
// Before heldStream, the call's end cut the stream and the next request
// dialled again.
func TestAnswerCheckKeepsConnection(t *testing.T) {
	finish := make(chan chan struct{}, 1)
	srv := callStreamServer(t, true, func(*http.Request) <-chan struct{} { return <-finish })
	check := AnswerCheck{Base: http.DefaultTransport.(*http.Transport).Clone()}
	for i := range 2 {
		done := make(chan struct{})
		finish <- done
		ctx, cancel := context.WithCancel(t.Context())
		resp, reused := postCall(t, ctx, check, srv.URL)
		if i == 1 && !reused {
			t.Fatal("the second call dialled a new connection: the first call's end cut its stream")
		}
		br := bufio.NewReader(resp.Body)
		if ev := readEvent(t, br); !strings.Contains(ev, `"id":1`) {
			t.Fatalf("event %q, want the answer", ev)
		}
		cancel()    // the call has its answer: its caller ends it
		close(done) // the server ends the stream
		if _, err := io.Copy(io.Discard, br); err != nil {
			t.Fatalf("draining the stream after the call's end: %v", err)
		}
		resp.Body.Close()
	}
}

// TestAnswerCheckCutsStream: before its answer, a call's end cuts its
// stream at once, as before; after it, a server that never ends the
// stream has it cut streamDrainMax later.
func TestAnswerCheckCutsStream(t *testing.T) {
	never := func(*http.Request) <-chan struct{} { return nil }
	check := AnswerCheck{Base: http.DefaultTransport.(*http.Transport).Clone()}

	defer func(d time.Duration) { streamDrainMax = d }(streamDrainMax)
	streamDrainMax = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	resp, _ := postCall(t, ctx, check, callStreamServer(t, false, never).URL)
	cancel()
	if _, err := io.Copy(io.Discard, resp.Body); err == nil {
		t.Fatal("a stream without an answer read to its end after the call ended")
	}
	resp.Body.Close()

	streamDrainMax = time.Millisecond
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	resp, _ = postCall(t, ctx, check, callStreamServer(t, true, never).URL)
	br := bufio.NewReader(resp.Body)
	readEvent(t, br)
	if _, err := io.Copy(io.Discard, br); err == nil {
		t.Fatal("a stream the server never ends read to its end")
	}
	resp.Body.Close()
}
