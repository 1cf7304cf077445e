package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/policies"
)

// acquire returns the current generation, held until its Release: a
// retired generation's plugins are closed and its replaced servers stopped
// only once every call holding it has released it.
func (h *Host) acquire() *generation.Gen { return generation.Acquire(&h.gens.cur) }

// gen returns the current generation.
func (h *Host) gen() *generation.Gen { return h.gens.cur.Load() }

// newGeneration builds the generation of cfg. Servers whose block is the
// same as in old keep old's connection (and process); the others get new,
// unstarted connections, returned in fresh. Plugins are loaded with the
// host's runtime, whose compilation cache makes an unchanged module cheap.
func (h *Host) newGeneration(ctx context.Context, cfg *config.Config, old *generation.Gen) (g *generation.Gen, fresh []*upstream.Conn, err error) {
	if err := h.checkServerFilter(cfg); err != nil {
		return nil, nil, err
	}
	g = generation.New(cfg)
	g.Principals = identity.NewTable(cfg, h.credKey, h.opts.OwnerToken)
	if ps := cfg.PolicySet; ps != nil && (ps.Rules() > 0 || ps.Default() != policies.EffectAllow) {
		g.Policies = ps
	}
	if len(cfg.Plugins) > 0 {
		if h.wasm.pluginRT == nil {
			dir := h.opts.PluginCacheDir
			if dir == "" && old != nil {
				dir = boot.PluginCacheDir(cfg, h.opts.Logger) // plugins added by a reload
			}
			rt, err := boot.NewPluginRuntime(dir, h.opts.Logger.With("component", "plugins"))
			if err != nil {
				return nil, nil, fmt.Errorf("host: plugin runtime: %w", err)
			}
			h.wasm.pluginRT = rt
		}
		g.PluginDigests = pluginDigests(cfg) // before loading: a module rebuilt meanwhile shows as changed next time
		set, diags := boot.LoadPlugins(ctx, h.wasm.pluginRT, cfg)
		if diags.HasErrors() {
			return nil, nil, &PluginLoadError{Diagnostics: diags}
		}
		g.Plugins = set
	}
	for _, s := range cfg.Servers {
		if h.opts.Servers != nil && !slices.Contains(h.opts.Servers, s.Name) {
			continue
		}
		var c *upstream.Conn
		if old != nil {
			if oc := old.ByName[s.Name]; oc != nil && sameServer(oc.Cfg, s) {
				c = oc
			}
		}
		if c == nil {
			c = upstream.NewConn(s, h.deps, h.cache)
			fresh = append(fresh, c)
		}
		g.Add(c)
	}
	return g, fresh, nil
}

// checkServerFilter fails when Options.Servers names a server cfg lacks.
func (h *Host) checkServerFilter(cfg *config.Config) error {
	for _, name := range h.opts.Servers {
		if cfg.Server(name) == nil {
			return &UnknownServerError{Server: name, Known: generation.ServerNames(cfg)}
		}
	}
	return nil
}

// sameServer reports whether two server blocks configure the same server:
// every setting equal, wherever the blocks sit in their files. Roots may
// differ while both blocks have some: the running session keeps its
// process, and the new roots reach the server as roots/list_changed
// (upstream.Conn.SetRoots). Adding the first root or removing the last
// changes the capabilities mcphost declares, so that reconnects.
func sameServer(a, b config.Server) bool {
	if (len(a.Roots) > 0) != (len(b.Roots) > 0) {
		return false
	}
	// A contained server's roots are its write grants, fixed when its
	// process starts: new roots need a new process.
	if a.Transport == config.TransportStdio && a.Sandbox.Mode != config.SandboxOff && !slices.Equal(a.Roots, b.Roots) {
		return false
	}
	a.Roots, b.Roots = nil, nil
	// Search hints are read from the generation's config by the index.
	a.SearchHint, b.SearchHint = nil, nil
	// The protected set is the machine's (data_dir, the config's files),
	// not the server's: Landlock denies it by default whatever it holds.
	a.Sandbox.Protected, b.Sandbox.Protected = nil, nil
	// Roots are already compared; the loader also lists them as writes.
	a.Sandbox.Write, b.Sandbox.Write = withoutRoots(a), withoutRoots(b)
	return sameIgnoringRanges(a, b)
}

// withoutRoots is a server's write grants without the paths of its roots
// (which the loader adds to them).
func withoutRoots(s config.Server) []string {
	var roots []string
	for _, r := range s.Roots {
		p := filepath.Clean(strings.TrimPrefix(r, "file://"))
		roots = append(roots, p)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			roots = append(roots, real)
		}
	}
	var out []string
	for _, w := range s.Sandbox.Write {
		if !slices.Contains(roots, w) {
			out = append(out, w)
		}
	}
	return out
}

// ReloadOptions are the conditions of [Host.ReloadWith].
type ReloadOptions struct {
	// DryRun plans the reload without applying it. The plan is checked as
	// far as it can be without starting anything: changed plugins are
	// loaded (and closed again), the server filter is checked.
	DryRun bool
	// IfMatch, when not empty, lists the config hashes the caller expects
	// to be running ([Host.ConfigHash]); under any other the reload is
	// refused with a *ConfigChangedError. It is checked under the reload
	// lock, so two clients that both saw the same config cannot both
	// reload it.
	IfMatch []string
	// Announce tells the other replicas sharing the store to reload too
	// (their Options.OnPeerReload), once this reload succeeded: the reload
	// API sets it. A reload heard from a peer leaves it unset, so that it
	// is not announced again.
	Announce bool
}

// ConfigChangedError refuses a reload whose ReloadOptions.IfMatch does not
// name the running config: someone reloaded it since the caller looked.
type ConfigChangedError struct {
	Current string // the running config's hash
}

func (e *ConfigChangedError) Error() string {
	return fmt.Sprintf("host: reload: the running config is %s, not the one expected", e.Current)
}

// ConfigError is a config that cannot be reloaded because it has errors:
// the loader's diagnostics, or a check of the daemon's (then without a
// subject). The host never builds one; the daemon hands it to the doors
// so they can show the diagnostics with their positions.
type ConfigError struct {
	Diagnostics hcl.Diagnostics
}

func (e *ConfigError) Error() string {
	var errs []string
	for _, d := range e.Diagnostics {
		switch {
		case d.Severity != hcl.DiagError:
		case d.Subject != nil:
			errs = append(errs, fmt.Sprintf("%s:%d:%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary))
		default:
			errs = append(errs, d.Summary)
		}
	}
	return "host: the config has errors: " + strings.Join(errs, "; ")
}

// ErrClosing is returned by a reload once the host is closing.
var ErrClosing = errors.New("host: reload: the host is closing")

// ConfigHash returns the hash of the config in force ([config.Config.Hash]),
// "sha256:HEX".
func (h *Host) ConfigHash() string { return h.gen().Hash }

// ConfigStatus describes the config in force.
type ConfigStatus struct {
	Hash     string    `json:"hash"`
	LoadedAt time.Time `json:"loaded_at"`
	// Plan is what the reload that put it in force did; nil for the
	// config the host started with.
	Plan *ReloadPlan `json:"plan,omitempty"`
}

// ConfigStatus returns the hash of the config in force, when it was put in
// force, and by which reload.
func (h *Host) ConfigStatus() ConfigStatus {
	g := h.gen()
	return ConfigStatus{Hash: g.Hash, LoadedAt: g.LoadedAt, Plan: g.Plan}
}

// Reload is ReloadWith without conditions.
func (h *Host) Reload(ctx context.Context, cfg *config.Config) (ReloadPlan, error) {
	return h.ReloadWith(ctx, cfg, ReloadOptions{})
}

// ReloadWith switches the host to cfg without stopping it, and returns the
// plan it carried out ([ReloadPlan]). It builds the whole new generation
// first: policies (already compiled by the loader), plugins (loaded and
// warmed up), and a connection for every server that is new or whose block
// changed, each started and given its discovery window to become ready.
// Only then is the new generation swapped in: calls from then on use it.
// Servers whose block did not change keep their connection and process.
// The old generation is retired in the background: once the calls that
// began under it have finished (at most drainBound), its replaced and
// removed servers are stopped and its plugins closed.
//
// If building fails (a plugin does not load, a server filter names a
// server the config lost, the host is closing: ErrClosing) or opts.IfMatch
// does not name the running config (a *ConfigChangedError), ReloadWith
// returns the error and the current generation keeps serving, untouched.
// With opts.DryRun it returns the plan, or the error building would meet
// first, and changes nothing.
func (h *Host) ReloadWith(ctx context.Context, cfg *config.Config, opts ReloadOptions) (ReloadPlan, error) {
	h.gens.reloadMu.Lock()
	defer h.gens.reloadMu.Unlock()
	if h.life.closing.Load() {
		return ReloadPlan{}, ErrClosing
	}
	old := h.gen()
	if len(opts.IfMatch) > 0 && !slices.Contains(opts.IfMatch, old.Hash) {
		return ReloadPlan{}, &ConfigChangedError{Current: old.Hash}
	}
	res := h.plan(old, cfg)
	if opts.DryRun {
		res.DryRun = true
		if err := h.checkServerFilter(cfg); err != nil {
			return ReloadPlan{}, fmt.Errorf("host: reload: %w", err)
		}
		if res.PluginsChanged && len(cfg.Plugins) > 0 {
			if diags := h.checkPlugins(ctx, cfg); diags.HasErrors() {
				return ReloadPlan{}, fmt.Errorf("host: reload: %w", &PluginLoadError{Diagnostics: diags})
			}
		}
		return res, nil
	}
	if err := h.setupOAuth(cfg); err != nil {
		return ReloadPlan{}, fmt.Errorf("host: reload: %w", err)
	}
	g, fresh, err := h.newGeneration(ctx, cfg, old)
	if err != nil {
		return ReloadPlan{}, fmt.Errorf("host: reload: %w", err)
	}
	g.Plan = &res
	var retired []*upstream.Conn
	for _, c := range old.Conns {
		if g.ByName[c.Cfg.Name] != c {
			retired = append(retired, c)
		}
	}

	// Make before break: the new connections come up while the old ones
	// still serve. A replaced server's cached lists belong to its old
	// block (another command or URL), so they are dropped first.
	if h.gens.rootCtx != nil {
		for _, c := range fresh {
			if old.ByName[c.Cfg.Name] != nil {
				h.cache.DropServer(c.Cfg.Name)
			}
			h.startConn(c)
		}
		for _, c := range fresh {
			select {
			case <-c.Settled():
			case <-ctx.Done():
				// Give up on waiting, not on the reload: the servers go
				// on connecting in the background, as at start-up.
			}
		}
	}
	h.gens.cur.Store(g)
	for _, s := range cfg.Servers {
		if c := g.ByName[s.Name]; c != nil && old.ByName[s.Name] == c {
			c.SetRoots(s.Roots) // a kept server whose roots changed hears of it
		}
	}
	if n := h.revoke(g); n > 0 {
		h.opts.Logger.Info("event streams ended: their credential no longer authenticates", "streams", n)
	}
	h.publish(Event{Type: eventConfig, Data: res.Public()})
	if opts.Announce {
		h.poke(store.Poke{Kind: pokeReload, ID: res.To}, nil)
	}
	h.opts.Logger.Info("config reloaded", "kept", len(res.Kept), "started", len(res.Started),
		"stopped", len(res.Stopped), "policies", res.Policies, "plugins", res.Plugins, "hash", res.To)
	if len(res.Ignored) > 0 {
		h.opts.Logger.Warn("some changed settings take effect only at the next start", "settings", res.Ignored)
	}
	h.retire(old, retired, g.Plugins)
	return res, nil
}

// checkPlugins loads cfg's plugins and closes them again, on the host's
// runtime when it has one (its compilation cache makes a module it has
// seen cheap).
func (h *Host) checkPlugins(ctx context.Context, cfg *config.Config) hcl.Diagnostics {
	if h.wasm.pluginRT == nil {
		return boot.CheckPlugins(ctx, cfg)
	}
	set, diags := boot.LoadPlugins(ctx, h.wasm.pluginRT, cfg)
	set.Close() // a no-op on nil
	return diags
}

// retire stops the old generation's replaced servers and closes its
// plugins once no call holds it any more, or after drainBound.
func (h *Host) retire(old *generation.Gen, conns []*upstream.Conn, next *plugins.Set) {
	bound := drainBound(old, h.approvalTimeout(old)+h.elicitTimeout(old))
	var started []*upstream.Conn // before Start, a connection never ran
	for _, c := range conns {
		if c.Started() {
			started = append(started, c)
		}
	}
	conns = started
	h.gens.retiring.Add(1)
	go func() {
		defer h.gens.retiring.Done()
		// The swap is done, so a call that holds old now began before it;
		// wait for the last of them to release it.
		old.MarkRetired()
		timer := time.NewTimer(bound)
		defer timer.Stop()
		select {
		case <-old.Idle():
		case <-h.life.closed:
		case <-timer.C:
			h.opts.Logger.Warn("retiring the old config with calls still running", "calls", old.ActiveCalls(), "after", bound)
		}
		for _, c := range conns {
			c.Retire()
		}
		if old.Plugins != nil && old.Plugins != next {
			old.Plugins.Close()
		}
		for _, c := range conns {
			<-c.Done()
			// A replaced server's last calls may have cached lists or
			// App resources under the name its successor now uses.
			if g := h.gen(); g.ByName[c.Cfg.Name] != nil {
				h.cache.DropServer(c.Cfg.Name)
			}
		}
	}()
}

// drainBound is how long a retired generation waits for its calls: the
// longest call_timeout of its servers plus the approval and elicitation
// timeouts (a call may wait for a person), and a margin.
func drainBound(g *generation.Gen, approval time.Duration) time.Duration {
	d := time.Duration(0)
	for _, s := range g.Cfg.Servers {
		d = max(d, s.CallTimeout)
	}
	return d + approval + 10*time.Second
}

// restartOnly lists the settings that differ between two configs but are
// read only at start-up.
func restartOnly(a, b *config.Config) []string {
	var out []string
	if a.Listen != b.Listen {
		out = append(out, "listen")
	}
	if a.DataDir != b.DataDir {
		out = append(out, "data_dir")
	}
	if !slices.Equal(a.PublicURLs, b.PublicURLs) {
		out = append(out, "public_urls") // the HTTP API's Host and Origin checks are set up once
	}
	if a.AppsSandboxURL != b.AppsSandboxURL {
		out = append(out, "apps_sandbox_url")
	}
	if a.AppCompactAfter != b.AppCompactAfter {
		out = append(out, "app_compact_after")
	}
	if a.AppCompactSessionBytes != b.AppCompactSessionBytes {
		out = append(out, "app_compact_session_bytes")
	}
	if a.Store.Sync != b.Store.Sync {
		out = append(out, "store.sync") // the store is opened once, before the host
	}
	if a.Telemetry.OTLPEndpoint != b.Telemetry.OTLPEndpoint || a.Telemetry.ServiceName != b.Telemetry.ServiceName {
		out = append(out, "telemetry") // the trace exporter is set up once, at start
	}
	return out
}
