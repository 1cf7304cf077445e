package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Target is the session a caller uses for a server: the caller's own for a
// per-principal OAuth server, the server's shared one otherwise.
type Target struct {
	Conn    *Conn
	Session *mcp.ClientSession
	Catalog *Catalog
}

// Target is the one way to a principal's session of the server: the
// principal's own child of a per-principal server (started now, and given
// until its first attempt has ended, bounded by ctx), its sign-in state,
// and its session and catalog when it is ready.
func (c *Conn) Target(ctx context.Context, principal string) (Target, error) {
	c = c.As(ctx, principal)
	if err := c.AuthReady(principal); err != nil {
		return Target{}, err
	}
	cs, cat, err := c.Current()
	if err != nil {
		return Target{}, err
	}
	return Target{Conn: c, Session: cs, Catalog: cat}, nil
}
