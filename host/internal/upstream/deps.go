package upstream

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Deps is what a connection needs from the host that starts it: its
// settings, the shared parts (store, cluster node, OAuth manager) and the
// callbacks through which it reports. One Deps is shared by every
// connection of a host; a per-principal session gets a copy with its own
// OnStatus.
type Deps struct {
	// Logger receives the connection's logs (never nil).
	Logger *slog.Logger
	// Version is reported to servers as clientInfo.version.
	Version string
	// Restart reconnects a server that fails or exits, with capped
	// exponential backoff between BackoffMin and BackoffMax (0: defaults).
	Restart                bool
	BackoffMin, BackoffMax time.Duration
	// Store keeps the era verdicts and, when shared, the singleton locks;
	// nil for one-shot commands.
	Store *store.Store
	// Replica and Cluster place singleton servers (singleton.go).
	Replica string
	Cluster *cluster.Node
	// DataDir is the config's data_dir, which no sandboxed server sees;
	// SandboxDir holds each stdio server's own home and tmp; WasmCacheDir
	// the compiled code of WebAssembly servers ("" in memory).
	DataDir, SandboxDir, WasmCacheDir string
	// OAuth is the OAuth manager, once a server has an auth block.
	OAuth *OAuthRef

	// OnStatus is called after every change of a server's state; it must
	// not block. OnPrincipalStatus hears a per-principal session's.
	OnStatus          func(ServerStatus)
	OnPrincipalStatus func(principal string, st ServerStatus)
	// OnResourceUpdated hears a server's resources/updated.
	OnResourceUpdated func(ctx context.Context, server, uri string)
	// LogMessage hears each notifications/message no call owns, when the
	// server's log_messages is "all"; principal is that of a
	// per-principal session, "" for a shared one.
	LogMessage func(server, principal string, p *mcp.LoggingMessageParams)
	// Elicit answers a legacy session's elicitation/create for the call it
	// was attributed to.
	Elicit func(ctx context.Context, call *Call, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// OAuthRef holds the host's OAuth manager, set when a config first has
// an auth block and read by every connection.
type OAuthRef struct{ atomic.Pointer[oauth.Manager] }
