package gateway

import (
	"context"
	"errors"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxClientSessions bounds the transcript sessions the gateway remembers;
// past it the least recently used is forgotten (its transcript stays, a
// later call of that client starts a new one).
const maxClientSessions = 4096

// clientSessions maps client connections to transcript sessions: one per
// legacy MCP session, and one per principal and client (name and version)
// for 2026-07-28 clients, which have no connection of their own.
type clientSessions struct {
	h  *host.Host
	mu sync.Mutex
	m  map[string]*clientSession
	// tick orders uses for eviction.
	tick uint64
}

type clientSession struct {
	id   string
	used uint64
	once chan struct{} // closed once id is set (or err)
	err  error
}

// sessionFor returns the transcript session of the client connection a
// request came on, creating it on the connection's first call. A host
// without a store has none ("").
func (s *clientSessions) sessionFor(ctx context.Context, c host.Caller, ss *mcp.ServerSession) (string, error) {
	key := "c\x00" + c.Name + "\x00" + c.Client.Name + "\x00" + c.Client.Version
	if ss != nil && ss.ID() != "" {
		key = "s\x00" + c.Name + "\x00" + ss.ID()
	}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]*clientSession{}
	}
	s.tick++
	cs, ok := s.m[key]
	if ok {
		cs.used = s.tick
		s.mu.Unlock()
		<-cs.once
		return cs.id, cs.err
	}
	cs = &clientSession{used: s.tick, once: make(chan struct{})}
	s.m[key] = cs
	if len(s.m) > maxClientSessions {
		s.evictLocked()
	}
	s.mu.Unlock()

	title := "Gateway: " + c.Client.Name
	if c.Client.Name == "" {
		title = "Gateway: an MCP client"
	}
	if c.Client.Version != "" {
		title += " " + c.Client.Version
	}
	sess, err := s.h.CreateSession(context.WithoutCancel(ctx), c.Principal, title)
	if errors.Is(err, host.ErrNoStore) {
		err = nil
	}
	cs.id, cs.err = sess.ID, err
	close(cs.once)
	if err != nil {
		s.mu.Lock()
		if s.m[key] == cs {
			delete(s.m, key)
		}
		s.mu.Unlock()
	}
	return cs.id, err
}

// evictLocked forgets the least recently used session.
func (s *clientSessions) evictLocked() {
	var oldest string
	var min uint64
	for k, cs := range s.m {
		if oldest == "" || cs.used < min {
			oldest, min = k, cs.used
		}
	}
	delete(s.m, oldest)
}
