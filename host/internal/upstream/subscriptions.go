package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscribe counts one subscription of owner to uri; the first of the
// URI is made on the server's session cs.
func (c *Conn) Subscribe(ctx context.Context, cs *mcp.ClientSession, owner, uri string) error {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	if len(c.subs[uri]) == 0 {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return err
		}
	}
	if c.subs == nil {
		c.subs = map[string]map[string]int{}
	}
	if c.subs[uri] == nil {
		c.subs[uri] = map[string]int{}
	}
	c.subs[uri][owner]++
	return nil
}

// Unsubscribe ends one of owner's subscriptions to uri, none when owner
// has none (another's are not its to end); the last one of the URI is
// ended on the server's session cs too.
func (c *Conn) Unsubscribe(ctx context.Context, cs *mcp.ClientSession, owner, uri string) error {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	switch c.subs[uri][owner] {
	case 0:
		return nil
	case 1:
		delete(c.subs[uri], owner)
	default:
		c.subs[uri][owner]--
		return nil
	}
	if len(c.subs[uri]) > 0 {
		return nil
	}
	delete(c.subs, uri)
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// resubscribe makes the gateway's subscriptions on a new session of the
// server; one that fails is logged and dropped from the server (its
// clients then hear no updates for it).
func (c *Conn) resubscribe(ctx context.Context, cs *mcp.ClientSession) {
	c.subsMu.Lock()
	defer c.subsMu.Unlock()
	for uri := range c.subs {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			c.logger.Warn("subscribing again to a resource on the new session failed", "uri", uri, "err", err)
		}
	}
}
