package upstream

import (
	"context"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/cache"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionReader reads App resources on a server's session through the host
// cache (apps.ResourceReader): a read is reused while its ttlMs allows, and
// input_required answers are never stored.
type SessionReader struct {
	Conn    *Conn
	Session *mcp.ClientSession
}

var _ apps.ResourceReader = SessionReader{}

func (r SessionReader) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	v, _, err := r.Conn.lists.c.Do(ctx, cache.Key{Server: r.Conn.lists.server, Method: "resources/read", Params: uri}, r.Conn.lists.part(),
		func(ctx context.Context) (any, cache.Meta, error) {
			res, err := r.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
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
