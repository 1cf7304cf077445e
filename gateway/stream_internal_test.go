package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestIsNotification(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"progress event", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1}}\n\n", true},
		{"event with an id", "event: message\nid: s_0_3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"data: x\"}}\n\n", true},
		{"response", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", false},
		{"response with id null", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n\n", false},
		{"request to the client", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"elicitation/create\",\"params\":{}}\n\n", false},
		{"comment", ": ok\n\n", false},
		{"close event", "event: close\nretry: 1000\n\n", false},
		{"JSON body", "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}", false},
		{"data not at a line start", "event: x data: {\"method\":\"m\"}\n\n", false},
		{"not JSON", "event: message\ndata: {\"method\":\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isNotification([]byte(tc.in)); got != tc.want {
				t.Errorf("isNotification(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// gatedWriter is a connection whose client reads nothing until open is
// closed. It takes no write deadline.
type gatedWriter struct {
	h    http.Header
	open chan struct{}

	mu     sync.Mutex
	status int
	out    bytes.Buffer
}

func (w *gatedWriter) Header() http.Header { return w.h }
func (w *gatedWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status = code
}
func (w *gatedWriter) Write(b []byte) (int, error) {
	<-w.open
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(b)
}

// TestStreamQueue: writes to a stream whose client reads nothing return
// at once; past the queue's bound notifications are dropped and counted
// while a response is kept; what was queued reaches the client in order
// once it reads, before finish returns.
func TestStreamQueue(t *testing.T) {
	g := &Gateway{log: slog.New(slog.DiscardHandler), stall: time.Minute}
	w := &gatedWriter{h: http.Header{}, open: make(chan struct{})}
	s := g.newStream(w, func() {})
	s.Header().Set("Content-Type", "text/event-stream")
	s.WriteHeader(http.StatusOK)

	note := func(i int) []byte {
		return fmt.Appendf(nil, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d,\"message\":%q}}\n\n",
			i, strings.Repeat("x", 4096))
	}
	done := make(chan struct{})
	const sent = 1000 // about 4 MiB: four times the bound
	go func() {
		defer close(done)
		for i := range sent {
			if _, err := s.Write(note(i)); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			if err := s.FlushError(); err != nil {
				t.Errorf("flush %d: %v", i, err)
				return
			}
		}
		if _, err := s.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")); err != nil {
			t.Errorf("response: %v", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a write waited for the client")
	}
	dropped := g.dropped.Load()
	if dropped == 0 {
		t.Fatal("nothing was dropped past the queue's bound")
	}
	if s.Header().Get("Content-Type") != "" {
		t.Error("Header after the status is the connection's")
	}
	close(w.open)
	s.finish()
	if _, err := s.Write(note(0)); !errors.Is(err, errStreamEnded) {
		t.Errorf("a write after finish: %v, want errStreamEnded", err)
	}

	out := w.out.String()
	if w.status != http.StatusOK || w.h.Get("Content-Type") != "text/event-stream" {
		t.Errorf("status %d, Content-Type %q", w.status, w.h.Get("Content-Type"))
	}
	if n := strings.Count(out, "notifications/progress"); uint64(n)+dropped != sent {
		t.Errorf("%d notifications written and %d dropped, want %d in all", n, dropped, sent)
	}
	if !strings.HasSuffix(out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n") {
		t.Error("the response was not written last")
	}
	last := -1
	for ev := range strings.SplitSeq(out, "\n\n") {
		var i int
		if _, err := fmt.Sscanf(ev, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":%d", &i); err == nil {
			if i <= last {
				t.Fatalf("notification %d after %d", i, last)
			}
			last = i
		}
	}
}

// TestStreamHold: a held stream writes nothing to the connection, however
// often it is written to and flushed, until the handler returns; finish
// then writes it all, in order.
func TestStreamHold(t *testing.T) {
	g := &Gateway{log: slog.New(slog.DiscardHandler), stall: time.Minute}
	w := &gatedWriter{h: http.Header{}, open: make(chan struct{})}
	close(w.open)
	s := g.newStream(w, func() {})
	s.hold()
	s.Header().Set("Mcp-Session-Id", "s1")
	s.WriteHeader(http.StatusOK)
	events := []string{"event: prime\nid: a_0\ndata: \n\n", "event: message\nid: a_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n"}
	for _, ev := range events {
		if _, err := s.Write([]byte(ev)); err != nil {
			t.Fatal(err)
		}
		if err := s.FlushError(); err != nil {
			t.Fatal(err)
		}
	}
	w.mu.Lock()
	early := w.out.String()
	w.mu.Unlock()
	if early != "" {
		t.Fatalf("a held stream wrote %q before the handler returned", early)
	}
	s.finish()
	if got, want := w.out.String(), strings.Join(events, ""); got != want || w.status != http.StatusOK || w.h.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("after finish: %d, session id %q, %q; want 200, s1, %q", w.status, w.h.Get("Mcp-Session-Id"), got, want)
	}
}
