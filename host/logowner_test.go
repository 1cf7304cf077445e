package host_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heardLogs keeps the log messages a call's door heard.
type heardLogs struct {
	mu    sync.Mutex
	texts []string
	more  chan struct{}
}

func newHeardLogs() *heardLogs { return &heardLogs{more: make(chan struct{}, 1)} }

func (l *heardLogs) hear(p *mcp.LoggingMessageParams) {
	s, _ := p.Data.(string)
	l.mu.Lock()
	l.texts = append(l.texts, s)
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

func (l *heardLogs) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.texts)
}

// TestSingletonLogMessages: a log message the singleton server sends
// during a call relayed from replica b belongs to that call: the holder
// passes it back on the relay's stream of the call, and it reaches b's
// caller before the call returns. One sent while a call on the holder
// runs too belongs to no call: neither caller hears it (log_messages =
// "own"), in particular not the caller on the other replica.
func TestSingletonLogMessages(t *testing.T) {
	a, b := startSingletonPair(t, config.NegotiationLegacy)
	for _, r := range []singletonReplica{a, b} {
		if err := r.h.GatewaySetLogLevel(t.Context(), host.Caller{Principal: alice}, "ask", "info"); err != nil {
			t.Fatal(err)
		}
	}
	call := func(r singletonReplica, tool, args string, heard *heardLogs) {
		t.Helper()
		sess, err := r.h.CreateSession(t.Context(), alice, "")
		if err != nil {
			t.Fatal(err)
		}
		req := host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "ask", Tool: tool, Arguments: json.RawMessage(args), Origin: host.OriginUser}
		if heard != nil {
			req.OnLog = heard.hear
		}
		if _, err := r.h.Call(t.Context(), req); err != nil {
			t.Errorf("%s on %s: %v", tool, r.id, err)
		}
	}

	onB := newHeardLogs()
	call(b, "say", `{"text":"relayed"}`, onB)
	if got := onB.list(); !slices.Equal(got, []string{"relayed"}) {
		t.Fatalf("b's caller heard %q when its call returned, want its own message", got)
	}

	onA := newHeardLogs()
	held := make(chan struct{})
	go func() {
		defer close(held)
		call(a, "hold", `{"id":"x"}`, onA)
	}()
	for deadline := time.After(time.Minute); !slices.Contains(onA.list(), "held x"); {
		select {
		case <-onA.more:
		case <-deadline:
			t.Fatal("a's held call never logged")
		}
	}
	call(b, "say", `{"text":"while a's call runs"}`, onB)
	call(a, "release", `{"id":"x"}`, nil)
	<-held
	call(b, "say", `{"text":"done"}`, onB)
	if got, want := onB.list(), []string{"relayed", "done"}; !slices.Equal(got, want) {
		t.Errorf("b's caller heard %q, want %q", got, want)
	}
	if got, want := onA.list(), []string{"held x"}; !slices.Equal(got, want) {
		t.Errorf("a's caller heard %q, want %q", got, want)
	}
}

// TestLogMessageBeforeTheAnswer: a log message a server sends just before
// it answers reaches the call's door before the call returns, every time,
// in both eras: it is routed as it is read, while its call is in flight,
// not when go-sdk gets round to handling it (by then the call may have
// ended, and another be the only one in flight).
func TestLogMessageBeforeTheAnswer(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := startHost(t, host.Options{}, elicitServer(t, era.negotiation))
			if err := h.GatewaySetLogLevel(t.Context(), host.Caller{Principal: alice}, "ask", "info"); err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				heard := newHeardLogs()
				text := fmt.Sprintf("message %d", i)
				args, _ := json.Marshal(map[string]string{"text": text})
				out, err := h.GatewayCall(t.Context(), host.SessionCall{Principal: alice, Server: "ask", Tool: "say", Arguments: args, OnLog: heard.hear}, nil, nil)
				if err != nil || out.Upstream != nil {
					t.Fatalf("call %d: %v %+v", i, err, out)
				}
				if got := heard.list(); !slices.Equal(got, []string{text}) {
					t.Fatalf("call %d returned having heard %q, want %q", i, got, text)
				}
			}
		})
	}
}
