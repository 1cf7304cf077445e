package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/fixture"
	"github.com/mcphost/mcphost/internal/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Faults faultyHandler injects.
const (
	faultNone  = ""
	faultStall = "stall" // hold the request open without answering
	faultReset = "reset" // hijack the connection and close it with an RST
	fault500   = "500"   // answer 500 Internal Server Error
)

// faultyHandler serves an MCP server that can be switched, mid-session, to
// fail every request in one way. Leaving faultStall releases the requests
// it holds.
type faultyHandler struct {
	next http.Handler

	mu      sync.Mutex
	fault   string
	release chan struct{} // closed when faultStall ends
	faulted int           // requests that got the fault
}

func newFaultyHandler(next http.Handler) *faultyHandler {
	return &faultyHandler{next: next, release: make(chan struct{})}
}

func (f *faultyHandler) set(fault string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fault == faultStall && fault != faultStall {
		close(f.release)
		f.release = make(chan struct{})
	}
	f.fault = fault
}

func (f *faultyHandler) faultedRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.faulted
}

func (f *faultyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fault, release := f.fault, f.release
	if fault != faultNone {
		f.faulted++
	}
	f.mu.Unlock()
	switch fault {
	case faultStall:
		select {
		case <-r.Context().Done():
		case <-release:
		}
	case faultReset:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // close sends RST, not FIN
		}
		conn.Close()
	case fault500:
		http.Error(w, "injected failure", http.StatusInternalServerError)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// TestRemoteFaultsMidSession switches a Streamable HTTP server that the host
// has a ready session with to stalling, resetting connections or answering
// 500, then back. During the fault every call ends (none hangs) with an
// error that says what happened; once the fault ends, calls succeed again,
// on the same session or on a new one after a restart with backoff.
// TestRemoteHostile covers the same faults at connect time and
// TestRemoteServerDies a server that goes away for good.
func TestRemoteFaultsMidSession(t *testing.T) {
	// A reset request fails the call; a reset event stream can end the
	// whole session while a call waits.
	resetErrs := []string{"connection reset by peer", "the server's connection ended before it answered"}
	cases := []struct {
		fault string
		// cut also closes the connections open when the fault starts
		// (the event stream), so the fault reaches the whole session.
		cut bool
		// untilFailed keeps the fault on until the host has given the
		// session up (state failed), so recovery needs a reconnect.
		untilFailed bool
		wantErr     []string // the call's error contains one of these
	}{
		{faultStall, false, false, []string{"no result within the server's call_timeout of 1s"}},
		{faultReset, true, false, resetErrs},
		{fault500, false, false, []string{"Internal Server Error"}},
		{faultReset, true, true, resetErrs},
	}
	for _, tc := range cases {
		name := tc.fault
		if tc.untilFailed {
			name += "-until-failed"
		}
		t.Run(name, func(t *testing.T) {
			fh := newFaultyHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil))
			mux := http.NewServeMux()
			mux.Handle("/mcp", fh)
			srv := serveHTTP(t, mux)
			t.Cleanup(func() { fh.set(faultNone) }) // releases stalled requests before the server closes

			statuses := make(chan host.ServerStatus, 1024)
			s := remoteServer("fx", config.TransportStreamableHTTP, srv.URL+"/mcp")
			s.CallTimeout = time.Second
			s.DiscoveryTimeout = 5 * time.Second
			h := startHost(t, host.Options{
				Restart:    true,
				BackoffMin: 20 * time.Millisecond,
				BackoffMax: 200 * time.Millisecond,
				OnStatus: func(st host.ServerStatus) {
					select {
					case statuses <- st:
					default: // OnStatus must not block
					}
				},
			}, s)
			if st := mustStatus(t, h, "fx"); st.State != host.StateReady {
				t.Fatalf("state = %s (%s), want ready", st.State, st.LastError)
			}
			if got := textOf(mustCallWithin(t, h, "fx", "echo", `{"text":"before"}`)); got != "before" {
				t.Fatalf("echo before the fault = %q", got)
			}

			fh.set(tc.fault)
			if tc.cut {
				srv.CloseClientConnections()
			}
			// Each call during the fault ends with a clear error or, once
			// the host has noticed the session is broken, NotReadyError.
			for i := range 3 {
				_, err := callWithin(t, h, host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"during"}`)})
				if err == nil {
					t.Fatalf("call %d during the %s fault succeeded", i, tc.fault)
				}
				var nr *host.NotReadyError
				if errors.As(err, &nr) {
					t.Logf("call %d: server not ready: %v", i, err)
					continue
				}
				if !containsAny(err.Error(), tc.wantErr) {
					t.Errorf("call %d: error %q contains none of %q", i, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "call fx.echo") {
					t.Errorf("call %d: error %q does not name the call", i, err)
				}
				t.Logf("call %d: %v", i, err)
			}
			if fh.faultedRequests() == 0 {
				t.Fatal("no request met the fault")
			}
			ctx, cancel := context.WithTimeout(t.Context(), faultWait)
			defer cancel()
			if tc.untilFailed {
				for st := mustStatus(t, h, "fx"); st.State != host.StateFailed; {
					select {
					case st = <-statuses:
					case <-ctx.Done():
						t.Fatalf("the host did not give the broken session up within %s (status %+v)", faultWait, mustStatus(t, h, "fx"))
					}
				}
				t.Logf("failed: %s", mustStatus(t, h, "fx").LastError)
			}

			fh.set(faultNone)
			// Recovery: a call succeeds, on the old session or on a new
			// one. A NotReadyError waits for the next status change; any
			// other error is the old, broken session's, and the host must
			// notice it and reconnect.
			for attempt := 0; ; attempt++ {
				res, err := h.CallTool(ctx, host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"after"}`)})
				if err == nil {
					if got := textOf(res); got != "after" {
						t.Fatalf("echo after the fault = %q", got)
					}
					st := mustStatus(t, h, "fx")
					t.Logf("recovered after %d failed attempts; restarts %d", attempt, st.Restarts)
					if tc.untilFailed && st.Restarts == 0 {
						t.Error("recovered from a failed session without a restart")
					}
					break
				}
				if ctx.Err() != nil {
					t.Fatalf("no successful call within %s of the fault's end: %v (status %+v)", faultWait, err, mustStatus(t, h, "fx"))
				}
				t.Logf("attempt %d after the fault: %v", attempt, err)
				select {
				case <-statuses:
				case <-ctx.Done():
				}
			}
		})
	}
}

// TestRemoteResetCutsCallInFlight resets a Streamable HTTP server's
// connections while a long call is running on it (its progress has
// arrived): the call ends at once with an error naming it and the reset,
// instead of waiting out its call_timeout, and a stdio server next to it
// answers throughout.
func TestRemoteResetCutsCallInFlight(t *testing.T) {
	fh := newFaultyHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fixture.NewServer() }, nil))
	mux := http.NewServeMux()
	mux.Handle("/mcp", fh)
	srv := serveHTTP(t, mux)
	t.Cleanup(func() { fh.set(faultNone) })
	s := remoteServer("fx", config.TransportStreamableHTTP, srv.URL+"/mcp")
	s.CallTimeout = 10 * time.Minute // only the reset may end the call
	h := startHost(t, host.Options{}, s, stdioServer("bystander", testbin.Build(t, wellbehavedPkg)))

	progressed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "slow", Arguments: json.RawMessage(`{"ms":600000}`),
			OnProgress: func(host.Progress) {
				select {
				case progressed <- struct{}{}:
				default:
				}
			}})
		done <- err
	}()
	select {
	case <-progressed:
	case err := <-done:
		t.Fatalf("the slow call ended before the fault: %v", err)
	case <-time.After(faultWait):
		t.Fatal("no progress from the slow call")
	}

	fh.set(faultReset)
	srv.CloseClientConnections()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "call fx.slow") ||
			!containsAny(err.Error(), []string{"connection reset by peer", "the server's connection ended before it answered"}) {
			t.Errorf("the call cut by the reset: %v, want an error naming the call and the broken connection", err)
		}
	case <-time.After(faultWait):
		t.Fatal("the call in flight did not end when its connections were reset")
	}
	if got := textOf(mustCallWithin(t, h, "bystander", "echo", `{"text":"still here"}`)); got != "still here" {
		t.Errorf("bystander echo = %q", got)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
