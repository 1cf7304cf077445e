package host

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
)

// sessionReader reads App resources on a server's session through the host
// cache (apps.ResourceReader): a read is reused while its ttlMs allows, and
// input_required answers are never stored.
type sessionReader struct {
	c  *serverConn
	cs *mcp.ClientSession
}

var _ apps.ResourceReader = sessionReader{}

func (r sessionReader) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	v, _, err := r.c.lists.c.Do(ctx, cache.Key{Server: r.c.lists.server, Method: "resources/read", Params: uri}, r.c.lists.part(),
		func(ctx context.Context) (any, cache.Meta, error) {
			res, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				return nil, cache.Meta{}, err
			}
			m := cache.MetaOf(res)
			m.NoStore = m.NoStore || res.NeedsInput()
			return res, m, nil
		})
	if err != nil {
		return nil, err
	}
	return v.(*mcp.ReadResourceResult), nil
}

// resolveApp builds the display record of a successful call of a tool that
// links an MCP App (apps.md §5–6), or returns nil when no App applies. The
// model-visible result is never changed.
func (h *Host) resolveApp(ctx context.Context, c *serverConn, cs *mcp.ClientSession, cat *catalog, tool *mcp.Tool, args json.RawMessage, res *mcp.CallToolResult) *apps.Display {
	link, ok := apps.ToolLink(tool)
	if !ok {
		return nil
	}
	ctx, span := startStage(ctx, "app resolve", attribute.String("mcphost.app.uri", link.ResourceURI))
	defer span.End()
	var advertises bool
	if ir := cs.InitializeResult(); ir != nil {
		advertises = apps.ServerAdvertises(ir.Capabilities)
	}
	var listing map[string]any
	for _, r := range cat.resources {
		if r != nil && r.URI == link.ResourceURI && len(r.Meta) > 0 {
			listing = map[string]any(r.Meta)
			break
		}
	}
	d := apps.Resolve(ctx, sessionReader{c: c, cs: cs}, c.cfg.Name, link, args, res, apps.Options{
		Mode:             c.cfg.Apps,
		ServerAdvertises: advertises,
		MaxBytes:         c.cfg.AppResourceMaxBytes,
		Timeout:          c.cfg.AppResourceTimeout,
		ValidSource:      h.appSourceValidator(c.cfg),
		ListingMeta:      listing,
	})
	if d != nil {
		d.Tool = apps.ToolDefinition(tool)
	}
	return d
}

// encodeDisplay encodes a display record for the entry, logging why an App
// does not render when it does not.
func encodeDisplay(c *serverConn, tool *mcp.Tool, d *apps.Display) json.RawMessage {
	if d.Warning != "" {
		c.logger.Warn("MCP App not rendered", "tool", tool.Name, "resource", d.ResourceURI, "warning", d.Warning)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		c.logger.Warn("encoding a display record", "tool", tool.Name, "err", err)
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

// appSourceValidator returns the CSP source check for the Apps of server s
// (apps.md §8.2 and RATIONALE.md, "App CSP: no loopback sources"): the
// sandbox's allow-list, and then no source that names this machine
// (sandbox.LocalSource) unless s is a remote server whose own URL is on
// loopback. Even then a loopback source on the daemon's own listen port is
// dropped: no App has a reason to reach the daemon. That port is the one
// the listener is bound to (listen = "127.0.0.1:0" gets its port from the
// kernel), or the configured one when the host serves nothing (a one-shot
// command, while a daemon may be listening there).
func (h *Host) appSourceValidator(s config.Server) func(string) error {
	serverLocal := s.Transport != config.TransportStdio && loopbackURL(s.URL)
	daemonPort := h.daemonPort()
	return func(src string) error {
		if err := sandbox.ValidSource(src); err != nil {
			return err
		}
		if !sandbox.LocalSource(src) {
			return nil
		}
		if !serverLocal {
			return errLocalSource
		}
		if daemonPort != "" && sourcePort(src) == daemonPort {
			return errDaemonSource
		}
		return nil
	}
}

// loopbackURL reports whether an http(s) URL's host is localhost, a
// *.localhost name or a loopback IP address.
func loopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
