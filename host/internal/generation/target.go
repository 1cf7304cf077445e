package generation

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/upstream"
)

// Target is the one way to a principal's session of server: the
// connection, the principal's own child of a per-principal server (started
// now, and given until its first attempt has ended, bounded by ctx), its
// sign-in state, and its session and catalog when it is ready.
func (g *Gen) Target(ctx context.Context, principal, server string) (upstream.Target, error) {
	conn, err := g.Conn(server)
	if err != nil {
		return upstream.Target{}, err
	}
	return conn.Target(ctx, principal)
}

// VisibleTarget is upstream.Target for a server c may see; a hidden server is an
// unknown one.
func (g *Gen) VisibleTarget(ctx context.Context, c identity.Caller, server string) (upstream.Target, error) {
	conn, err := g.VisibleConn(ctx, c, server)
	if err != nil {
		return upstream.Target{}, err
	}
	return conn.Target(ctx, c.Name)
}

// StartSessions starts principal's own sessions of the per-principal
// servers it has none of yet, so that a stored credential connects (and
// one without shows its sign-in) as soon as the principal looks, and waits
// (bounded by ctx) until each has made its first attempt.
func (g *Gen) StartSessions(ctx context.Context, principal string) {
	if principal == "" {
		return
	}
	for _, c := range g.Conns {
		c.As(ctx, principal)
	}
}
