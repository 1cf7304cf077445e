package generation

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/policies"
)

// Gen is everything the host derives from one config: the servers,
// the principals, the compiled policies and the loaded plugins. The host
// holds the current one in an atomic pointer; a reload builds a whole new
// one, swaps it in, and retires the old one once the calls that began under
// it have finished. A call holds one generation from start to end, so it
// never mixes the policies of one config with the plugins of another.
type Gen struct {
	Cfg        *config.Config
	Conns      []*upstream.Conn
	ByName     map[string]*upstream.Conn
	Principals *identity.Table
	Policies   *policies.Set // nil: no policies
	Plugins    *plugins.Set  // nil: no plugins

	Hash          string            // cfg.Hash()
	PluginDigests map[string]string // of the plugins' modules as loaded (pluginDigests)
	LoadedAt      time.Time
	Plan          *ReloadPlan // the reload that made it; nil for the first generation

	// active counts the calls holding this generation (see acquire). Once
	// the generation is retired, the release that brings it to zero closes
	// idle.
	active   atomic.Int64
	retired  atomic.Bool
	idle     chan struct{}
	idleOnce sync.Once
}

func (g *Gen) Release() {
	if g.active.Add(-1) == 0 && g.retired.Load() {
		g.signalIdle()
	}
}

// MarkRetired says no new call will hold g; idle closes when the last
// one that does releases it (at once when none does).
func (g *Gen) MarkRetired() {
	g.retired.Store(true)
	if g.active.Load() == 0 {
		g.signalIdle()
	}
}

func (g *Gen) signalIdle() { g.idleOnce.Do(func() { close(g.idle) }) }

// Conn returns the generation's server called name.
func (g *Gen) Conn(name string) (*upstream.Conn, error) {
	c, ok := g.ByName[name]
	if !ok {
		var known []string
		for _, c := range g.Conns {
			known = append(known, c.Cfg.Name)
		}
		return nil, &UnknownServerError{Server: name, Known: known}
	}
	return c, nil
}

// RateLimitOf returns the call limits of the principal named name in g
// (none for a principal the generation does not know: an in-process caller).
func (g *Gen) RateLimitOf(name string) config.RateLimit { return g.Principals.RateLimitOf(name) }

// Acquire returns the generation cur points to, held until Release: a
// retired generation's plugins are closed and its replaced servers
// stopped only once every call holding it has released it.
func Acquire(cur *atomic.Pointer[Gen]) *Gen {
	for {
		g := cur.Load()
		g.active.Add(1)
		if cur.Load() == g {
			return g
		}
		g.active.Add(-1) // swapped meanwhile: hold the new one instead
	}
}

// New returns the empty generation of cfg, for the host to fill.
func New(cfg *config.Config) *Gen {
	return &Gen{Cfg: cfg, ByName: map[string]*upstream.Conn{}, idle: make(chan struct{}), Hash: cfg.Hash(), LoadedAt: time.Now()}
}

// Add adds the connection of one of cfg's servers, in config order.
func (g *Gen) Add(c *upstream.Conn) {
	g.Conns = append(g.Conns, c)
	g.ByName[c.Cfg.Name] = c
}

// Idle is closed once a retired generation is held by no call.
func (g *Gen) Idle() <-chan struct{} { return g.idle }

// ActiveCalls is how many calls hold the generation.
func (g *Gen) ActiveCalls() int64 { return g.active.Load() }
