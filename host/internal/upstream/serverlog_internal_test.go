package upstream

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logConn is a server connection that can route log messages, and no
// session: unowned messages reach watched (server and principal) when its
// log_messages says so.
func logConn(mode string, watched *[]string) *Conn {
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := &Deps{LogMessage: func(server, principal string, p *mcp.LoggingMessageParams) {
		*watched = append(*watched, server+"/"+principal+": "+p.Data.(string))
	}}
	return &Conn{Cfg: config.Server{Name: "srv", LogMessages: mode}, deps: opts, logger: discard,
		logLimit: transport.NewLogLimiter(discard, "suppressed", "messages")}
}

// TestLogMessageOwners: whose a log message is, by where it was read, and
// who hears it: its call only; a message no call owns goes to the
// watchers (every gateway client with a call running) only with
// log_messages = "all", with the principal of a per-principal session.
func TestLogMessageOwners(t *testing.T) {
	type heard struct {
		calls   map[string][]string // what each call heard
		watched []string
	}
	newCall := func(name string, h *heard) *Call {
		return &Call{Principal: name, Tool: "t", Log: func(p *mcp.LoggingMessageParams) {
			h.calls[name] = append(h.calls[name], p.Data.(string))
		}}
	}
	post := func(call *Call) *http.Request {
		ctx := context.Background()
		if call != nil {
			ctx = context.WithValue(ctx, RelayCallKey{}, call)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", nil)
		return req
	}
	get := func() *http.Request {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
		return req
	}
	const msg = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"m"}}`
	tests := []struct {
		name      string
		mode      string
		principal string   // of a per-principal session
		calls     []string // in flight; "*name" runs on a per-client session
		read      func(c *Conn, calls map[string]*Call)
		want      heard
	}{
		{name: "shared, one call", calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readNotification(methodLog, msgParams(msg), c.sharedLogOwner)
			},
			want: heard{calls: map[string][]string{"alice": {"m"}}}},
		{name: "shared, two calls", calls: []string{"alice", "carol"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readNotification(methodLog, msgParams(msg), c.sharedLogOwner)
			},
			want: heard{calls: map[string][]string{}}},
		{name: "shared, two calls, all", mode: config.LogMessagesAll, calls: []string{"alice", "carol"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readNotification(methodLog, msgParams(msg), c.sharedLogOwner)
			},
			want: heard{calls: map[string][]string{}, watched: []string{"srv/: m"}}},
		{name: "per-principal session, none, all", mode: config.LogMessagesAll, principal: "carol",
			read: func(c *Conn, _ map[string]*Call) {
				c.readNotification(methodLog, msgParams(msg), c.sharedLogOwner)
			},
			want: heard{calls: map[string][]string{}, watched: []string{"srv/carol: m"}}},
		{name: "shared, one call and one on a per-client session", calls: []string{"alice", "*carol"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readNotification(methodLog, msgParams(msg), c.sharedLogOwner)
			},
			want: heard{calls: map[string][]string{"alice": {"m"}}}},
		{name: "a call's own stream, with others in flight", calls: []string{"alice", "carol"},
			read: func(c *Conn, calls map[string]*Call) { c.readMessage(post(calls["carol"]), []byte(msg)) },
			want: heard{calls: map[string][]string{"carol": {"m"}}}},
		{name: "a GET stream, one call", calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) { c.readMessage(get(), []byte(msg)) },
			want: heard{calls: map[string][]string{"alice": {"m"}}}},
		{name: "a relayed call's stream", mode: config.LogMessagesAll, calls: []string{"alice", "carol"},
			read: func(c *Conn, calls map[string]*Call) {
				c.readRelayMessage(post(calls["alice"]), []byte(msg))
			},
			want: heard{calls: map[string][]string{"alice": {"m"}}}},
		{name: "a relay session's own stream, one call", calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) { c.readRelayMessage(get(), []byte(msg)) },
			want: heard{calls: map[string][]string{}}},
		{name: "a relay session's own stream, all", mode: config.LogMessagesAll, calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) { c.readRelayMessage(get(), []byte(msg)) },
			want: heard{calls: map[string][]string{}, watched: []string{"srv/: m"}}},
		{name: "not a log message", calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readMessage(get(), []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"notifications/message"}}`))
			},
			want: heard{calls: map[string][]string{}}},
		{name: "params that do not decode", calls: []string{"alice"},
			read: func(c *Conn, _ map[string]*Call) {
				c.readMessage(get(), []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7}}`))
			},
			want: heard{calls: map[string][]string{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := heard{calls: map[string][]string{}}
			c := logConn(tc.mode, &got.watched)
			c.principal = tc.principal
			calls := map[string]*Call{}
			for _, name := range tc.calls {
				perClient := name[0] == '*'
				if perClient {
					name = name[1:]
				}
				call := newCall(name, &got)
				call.perClient.Store(perClient)
				c.inflight.add(call)
				calls[name] = call
			}
			tc.read(c, calls)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(heard{})); diff != "" {
				t.Errorf("heard (-want +got):\n%s", diff)
			}
			if n := len(c.recent.list()); n != 1 && tc.name != "not a log message" && tc.name != "params that do not decode" {
				t.Errorf("the card kept %d messages, want 1", n)
			}
		})
	}
}

// msgParams returns the params of a JSON-RPC notification.
func msgParams(msg string) []byte {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal([]byte(msg), &m)
	return m.Params
}
