package upstream

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/mcphost/mcphost/negotiate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relaySpec points spec at the relay of the replica on, which runs the
// server: a 2025-11-25 Streamable HTTP session, pinned, through the
// node's signed client. It fails when that replica is gone from the
// directory or cannot be read.
func (c *Conn) relaySpec(ctx context.Context, spec *negotiate.Spec, on string) error {
	node := c.deps.Cluster
	rep, ok, err := node.Lookup(ctx, on)
	switch {
	case err != nil:
		return fmt.Errorf("cannot read the directory of replicas to reach replica %s, which runs this singleton server: %w", on, err)
	case !ok:
		return fmt.Errorf("replica %s, which holds this singleton server's lock, is gone from the directory of replicas; waiting for the lock to move", on)
	}
	spec.Mode = negotiate.ModeLegacy
	spec.Transport = config.TransportStreamableHTTP
	spec.URL = strings.TrimSuffix(rep.Addr, "/") + RelayPath + url.PathEscape(c.Cfg.Name)
	spec.HTTPClient = c.relayClient(on)
	spec.Cache, spec.CacheKey = nil, ""
	spec.WrapTransport = nil // the relay is a replica's go-sdk server
	return nil
}

// relayClient is the HTTP client of a relay session to replica on: no
// overall timeout (event streams), each request signed for on, and the
// answers checked and progress counted as for any remote server. The
// clients of every holder share one transport (relayc's).
func (c *Conn) relayClient(on string) *http.Client {
	c.relayOnce.Do(func() {
		base := http.DefaultTransport.(*http.Transport).Clone()
		base.MaxIdleConnsPerHost = base.MaxIdleConns // see httpClient
		base.Proxy = nil                             // replicas talk directly
		c.relayc = &http.Client{Transport: transport.AnswerCheck{Base: base, OnMessage: c.readRelayMessage}}
	})
	return &http.Client{Transport: hopSigner{base: c.relayc.Transport, node: c.deps.Cluster, to: on}}
}

// hopSigner signs every request of a relay session for the holder to,
// each with a proof of its own (cluster.Node.SignHop), naming the
// principal the request is made for (relayPrincipal of its context).
type hopSigner struct {
	base http.RoundTripper
	node *cluster.Node
	to   string
}

func (s hopSigner) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if err := s.node.SignHop(r, s.to, relayPrincipal(r.Context())); err != nil {
		return nil, err
	}
	return s.base.RoundTrip(r)
}

type relayPrincipalKey struct{}

// RelayAs returns ctx for requests made for principal: on a relay session
// they carry it to the holder, signed. The pipeline's calls carry theirs
// already (RelayCallKey); the gateway's reads, prompts and completions,
// and an App's reads, name it with RelayAs.
func RelayAs(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, relayPrincipalKey{}, principal)
}

// relayPrincipal is the principal a request made with ctx is for: its
// call's, else the one RelayAs named, else none.
func relayPrincipal(ctx context.Context) string {
	if call, ok := ctx.Value(RelayCallKey{}).(*Call); ok {
		return call.Principal
	}
	p, _ := ctx.Value(relayPrincipalKey{}).(string)
	return p
}

// RelayCallKey carries a call's inflight record down to the requests made
// for it: CallTool names it on a relayed tools/call (MetaRelayCall), and a
// log message on the event stream of its POST is the call's (callOf,
// serverlog.go).
type RelayCallKey struct{}

// relayMeta adds to a tools/call's _meta what the holder needs of a
// relayed call (its call), when cs is a relay session.
func (c *Conn) relayMeta(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta) mcp.Meta {
	if c.place == nil {
		return meta
	}
	c.mu.Lock()
	relayed := c.session == cs && !c.sessionRole.holder
	c.mu.Unlock()
	call, ok := ctx.Value(RelayCallKey{}).(*Call)
	if !relayed || !ok {
		return meta
	}
	out := maps.Clone(meta)
	if out == nil {
		out = mcp.Meta{}
	}
	out[MetaRelayCall] = strconv.FormatUint(call.seq, 10)
	return out
}

// relayedCall returns the call a relayed elicitation names (MetaRelayCall)
// on a replica that relays this server; nil when it names none.
func (c *Conn) relayedCall(p *mcp.ElicitParams) *Call {
	if c.place == nil || p == nil {
		return nil
	}
	s, _ := p.Meta[MetaRelayCall].(string)
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil
	}
	return c.inflight.get(seq)
}

// relayStatus fills in the status of a session on the relay: the era of
// the holder's own session and where the server runs.
func relayStatus(s *ServerStatus, ir *mcp.InitializeResult, on string) {
	if era, _ := ir.Meta[MetaRelayEra].(string); era != "" {
		s.Era = era
	}
	s.Evidence = "relayed: the singleton server runs on replica " + on
	s.RunsOn = on
}
