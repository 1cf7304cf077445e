package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
)

// resolveApp builds the display record of a successful call of a tool that
// links an MCP App (apps.md §5–6), or returns nil when no App applies. The
// model-visible result is never changed.
func (h *Host) resolveApp(ctx context.Context, c *upstream.Conn, cs *mcp.ClientSession, cat *upstream.Catalog, tool *mcp.Tool, args json.RawMessage, res *mcp.CallToolResult) *apps.Display {
	link, ok := apps.ToolLink(tool)
	if !ok {
		return nil
	}
	ctx, span := pipeline.StartStage(ctx, "app resolve", attribute.String("mcphost.app.uri", link.ResourceURI))
	defer span.End()
	var advertises bool
	if ir := cs.InitializeResult(); ir != nil {
		advertises = apps.ServerAdvertises(ir.Capabilities)
	}
	var listing map[string]any
	for _, r := range cat.Resources {
		if r != nil && r.URI == link.ResourceURI && len(r.Meta) > 0 {
			listing = map[string]any(r.Meta)
			break
		}
	}
	d := apps.Resolve(ctx, upstream.SessionReader{Conn: c, Session: cs}, c.Cfg.Name, link, args, res, apps.Options{
		Mode:             c.Cfg.Apps,
		ServerAdvertises: advertises,
		MaxBytes:         c.Cfg.AppResourceMaxBytes,
		Timeout:          c.Cfg.AppResourceTimeout,
		ValidSource:      h.appSourceValidator(c.Cfg),
		ListingMeta:      listing,
	})
	if d != nil {
		d.Tool = apps.ToolDefinition(tool)
		// Only the operator's switch grants eval, never the App's _meta
		// (Resolve leaves UnsafeEval false), and only to an App that shows.
		d.UnsafeEval = c.Cfg.AppCSPUnsafeEval && d.HTML != ""
	}
	return d
}

// encodeDisplay encodes a display record for the entry, logging why an App
// does not render when it does not, and which CSP sources were dropped and
// why (apps.md §5.8).
func encodeDisplay(c *upstream.Conn, tool *mcp.Tool, d *apps.Display) json.RawMessage {
	if d.Warning != "" {
		c.Logger().Warn("MCP App not rendered", "tool", tool.Name, "resource", d.ResourceURI, "warning", d.Warning)
	}
	if len(d.Dropped) > 0 {
		c.Logger().Info("MCP App CSP entries dropped", "tool", tool.Name, "resource", d.ResourceURI, "dropped", d.Dropped)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		c.Logger().Warn("encoding a display record", "tool", tool.Name, "err", err)
		return nil
	}
	return raw
}

// CompactSession empties the HTML of every App display record in one of
// principal's sessions, keeping type and fallbackText (apps.md §7); the
// WebShell then shows the text and mounts no sandbox. It returns how many
// records it compacted.
func (h *Host) CompactSession(ctx context.Context, p Principal, sessionID string) (int, error) {
	if h.store == nil {
		return 0, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return 0, err
	}
	n := 0
	var after int64
	for {
		entries, next, err := h.store.Entries(ctx, p.Name, sessionID, after, 500)
		if err != nil {
			return n, err
		}
		for _, e := range entries {
			done, err := h.compactRecord(ctx, e)
			if err != nil {
				return n, err
			}
			if done {
				n++
			}
		}
		if next == 0 {
			return n, nil
		}
		after = next
	}
}

// errLocalSource is why a loopback source is dropped from an App's CSP.
var errLocalSource = errors.New("names this machine (loopback), and the App's server is not on loopback")

// errDaemonSource is why a source naming the daemon's own port is dropped.
var errDaemonSource = errors.New("names the mcphost daemon itself")

// networkSourceError is why a source on a private or link-local network, a
// cloud metadata address or a numeric host that is no address is dropped
// from an App's CSP. Its text is the reason the display record's Dropped
// entry gives.
type networkSourceError struct{ net sandbox.Network }

func (e *networkSourceError) Error() string {
	switch e.net.Kind {
	case sandbox.Metadata:
		return "names the " + e.net.String() + ", which no App may reach"
	case sandbox.NotAddress:
		return "names " + e.net.String() + ", which no browser can reach"
	}
	return "names an address on the " + e.net.String() + ", and the App's server is not on that network"
}

// appSourceValidator returns the CSP source check for the Apps of server s
// (apps.md §8.2 and RATIONALE.md, "App CSP: no loopback, private or
// link-local sources"): the sandbox's allow-list, and then no source whose
// host is on a network the server is not on (sandbox.HostNetwork).
//
//   - A loopback source is kept only when s is a remote server whose own URL
//     is on loopback. Even then a loopback source on the daemon's own listen
//     port is dropped: no App has a reason to reach the daemon. That port is
//     the one the listener is bound to (listen = "127.0.0.1:0" gets its port
//     from the kernel), or the configured one when the host serves nothing
//     (a one-shot command, while a daemon may be listening there).
//   - A private or link-local source is kept only when s is a remote server
//     whose URL's host is an IP address in the same block (10.0.0.0/8,
//     172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7,
//     169.254.0.0/16, fe80::/10).
//   - A cloud metadata address and a numeric host that is no address are
//     always dropped.
//
// A stdio or WebAssembly server is on no network. Host names are not resolved: a server
// whose URL names its host by DNS name is on no private network, and a
// source's DNS name is public whatever it resolves to.
func (h *Host) appSourceValidator(s config.Server) func(string) error {
	var server sandbox.Network // public: on no network of its own
	if s.URL != "" {
		server = sandbox.HostNetwork(s.URL)
	}
	daemonPort := h.daemonPort()
	return func(src string) error {
		if err := sandbox.ValidSource(src); err != nil {
			return err
		}
		switch n := sandbox.HostNetwork(src); n.Kind {
		case sandbox.Public:
			return nil
		case sandbox.Loopback:
			if server.Kind != sandbox.Loopback {
				return errLocalSource
			}
			if daemonPort != "" && sourcePort(src) == daemonPort {
				return errDaemonSource
			}
			return nil
		case sandbox.Private, sandbox.LinkLocal:
			if server.Kind == n.Kind && server.Block == n.Block {
				return nil
			}
			return &networkSourceError{net: n}
		default:
			return &networkSourceError{net: n}
		}
	}
}

// sourcePort is the port of a valid CSP source, or the scheme's default.
func sourcePort(src string) string {
	scheme, rest, _ := strings.Cut(src, "://")
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[i+1:]
	}
	switch strings.ToLower(scheme) {
	case "https", "wss":
		return "443"
	}
	return "80"
}

// withdrawEval takes the eval grant back from the recorded Apps of servers
// that no longer have app_csp_unsafe_eval (or no longer exist): the grant
// is the operator's, and turning the switch off must reach the Apps already
// in transcripts, not only new calls. The stored entries keep it, so
// turning the switch on again gives it back.
func (h *Host) withdrawEval(entries []store.Entry) {
	g := h.gen()
	for i := range entries {
		e := &entries[i]
		if len(e.Display) == 0 || !bytes.Contains(e.Display, []byte(`"unsafeEval":true`)) {
			continue
		}
		if c, err := g.Conn(e.Server); err == nil && c.Cfg.AppCSPUnsafeEval {
			continue
		}
		e.Display = withoutEval(e.Display)
	}
}

// withoutEval is a display record without its unsafeEval; nil when it does
// not decode (the WebShell could not render it either).
func withoutEval(display json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(display, &m) != nil {
		return nil
	}
	delete(m, "unsafeEval")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(m) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
