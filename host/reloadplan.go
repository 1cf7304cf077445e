package host

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
)

// What a reload does to one server ([serverPlan].Action).
const (
	planKept      = "kept"      // the block is unchanged: same connection, same process
	planRestarted = "restarted" // the block changed: a new connection replaces the old one
	planAdded     = "added"     // a new block
	planRemoved   = "removed"   // the block is gone: the server stops
)

// planReload says what Reload(cfg) would do now, changing nothing. The
// plugins' modules are read to tell a rebuilt one; they are not compiled
// (a dry run through ReloadWith also checks that they load).
func (h *Host) planReload(cfg *config.Config) ReloadPlan {
	return h.plan(h.gen(), cfg)
}

// plan compares old's config with cfg. It decides kept and restarted with
// sameServer, as newGeneration does.
func (h *Host) plan(old *generation.Gen, cfg *config.Config) ReloadPlan {
	p := ReloadPlan{
		From: old.Hash, To: cfg.Hash(),
		Servers: []generation.ServerPlan{}, Kept: []string{}, Restarted: []string{}, Added: []string{}, Removed: []string{},
		Started: []string{}, Stopped: []string{},
		Principals: PrincipalPlan{Added: []string{}, Removed: []string{}, Rotated: []string{}, Changed: []string{}},
		Settings:   []string{}, Ignored: restartOnly(old.Cfg, cfg),
	}
	if p.Ignored == nil {
		p.Ignored = []string{}
	}
	served := func(name string) bool { return h.opts.Servers == nil || slices.Contains(h.opts.Servers, name) }

	next := map[string]bool{}
	for _, s := range cfg.Servers {
		if !served(s.Name) {
			continue
		}
		next[s.Name] = true
		sp := generation.ServerPlan{Name: s.Name, Action: planAdded}
		if o := old.Cfg.Server(s.Name); o != nil {
			sp.Action = planKept
			if !sameServer(*o, s) {
				sp.Action, sp.Changed = planRestarted, serverChanges(*o, s)
			} else if !slices.Equal(o.Roots, s.Roots) {
				sp.Changed = []string{"roots"} // sent to the running session
			}
		}
		switch sp.Action {
		case planKept:
			p.Kept = append(p.Kept, s.Name)
		case planRestarted:
			p.Restarted = append(p.Restarted, s.Name)
			p.Started = append(p.Started, s.Name)
		case planAdded:
			p.Added = append(p.Added, s.Name)
			p.Started = append(p.Started, s.Name)
		}
		if sp.Action != planKept {
			sp.Warning = s.CommandProblem("the daemon's PATH")
		}
		p.Servers = append(p.Servers, sp)
	}
	for _, s := range old.Cfg.Servers {
		switch {
		case !served(s.Name):
		case !next[s.Name]:
			p.Removed = append(p.Removed, s.Name)
			p.Stopped = append(p.Stopped, s.Name)
			p.Servers = append(p.Servers, generation.ServerPlan{Name: s.Name, Action: planRemoved})
		case slices.Contains(p.Restarted, s.Name):
			p.Stopped = append(p.Stopped, s.Name)
		}
	}

	if cfg.PolicySet != nil {
		p.Policies = cfg.PolicySet.Rules()
	}
	p.PoliciesChanged = old.Cfg.PolicyDefault != cfg.PolicyDefault || !sameIgnoringRanges(old.Cfg.Policies, cfg.Policies)
	p.Plugins = len(cfg.Plugins)
	p.PluginsChanged = !sameIgnoringRanges(old.Cfg.Plugins, cfg.Plugins) || !maps.Equal(old.PluginDigests, pluginDigests(cfg))

	h.planPrincipals(&p, old.Cfg, cfg)
	p.AdminsChanged = !slices.Equal(sortedSet(old.Cfg.Admins), sortedSet(cfg.Admins))
	p.GatewayChanged = !sameIgnoringRanges(old.Cfg.Gateway, cfg.Gateway)
	if old.Cfg.LogLevel != cfg.LogLevel {
		p.Settings = append(p.Settings, "log_level")
	}
	if old.Cfg.WatchConfig != cfg.WatchConfig {
		p.Settings = append(p.Settings, "watch_config")
	}
	if old.Cfg.ElicitationTimeout != cfg.ElicitationTimeout {
		p.Settings = append(p.Settings, "elicitation_timeout")
	}
	if old.Cfg.ApprovalTimeout != cfg.ApprovalTimeout {
		p.Settings = append(p.Settings, "approval_timeout")
	}
	return p
}

// planPrincipals fills p.Principals and p.RateLimitsChanged. The owner
// counts as a principal while a config declares none, as in
// principalTokens.
func (h *Host) planPrincipals(p *ReloadPlan, oldCfg, cfg *config.Config) {
	principals := func(c *config.Config) []config.Principal {
		if len(c.Principals) == 0 && h.opts.OwnerToken != "" {
			return []config.Principal{{Name: OwnerName, Token: h.opts.OwnerToken, Groups: []string{}, RateLimit: c.OwnerRateLimit}}
		}
		return c.Principals
	}
	before, after := principals(oldCfg), principals(cfg)
	find := func(ps []config.Principal, name string) *config.Principal {
		for i := range ps {
			if ps[i].Name == name {
				return &ps[i]
			}
		}
		return nil
	}
	for _, n := range after {
		o := find(before, n.Name)
		switch {
		case o == nil:
			p.Principals.Added = append(p.Principals.Added, n.Name)
			continue
		case o.Token != n.Token:
			p.Principals.Rotated = append(p.Principals.Rotated, n.Name)
		}
		if !slices.Equal(sortedSet(o.Groups), sortedSet(n.Groups)) || o.APIOnly != n.APIOnly {
			p.Principals.Changed = append(p.Principals.Changed, n.Name)
		}
		if o.RateLimit != n.RateLimit {
			p.RateLimitsChanged = true
		}
	}
	for _, o := range before {
		if find(after, o.Name) == nil {
			p.Principals.Removed = append(p.Principals.Removed, o.Name)
		}
	}
	if oldCfg.OwnerRateLimit != cfg.OwnerRateLimit {
		p.RateLimitsChanged = true
	}
}

// pluginDigests returns the SHA-256 of each plugin's module, by plugin
// name; "" for a module that cannot be read (loading it reports why).
func pluginDigests(cfg *config.Config) map[string]string {
	if len(cfg.Plugins) == 0 {
		return nil
	}
	out := make(map[string]string, len(cfg.Plugins))
	for _, p := range cfg.Plugins {
		if b, err := os.ReadFile(p.Path); err == nil {
			d := sha256.Sum256(b)
			out[p.Name] = hex.EncodeToString(d[:])
		} else {
			out[p.Name] = ""
		}
	}
	return out
}

// sortedSet returns the distinct strings of s, sorted.
func sortedSet(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}

// serverAttrs maps the fields of config.Server whose attribute name is not
// the field's name in snake case.
var serverAttrs = map[string]string{
	"URL":              "url",
	"HTTPProbeTimeout": "http_probe_timeout",
	"AppCSPUnsafeEval": "app_csp_unsafe_eval",
}

// serverChanges names the attributes that differ between two blocks of
// one server.
func serverChanges(a, b config.Server) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if f.Type == rangeType || sameValue(va.Field(i), vb.Field(i)) {
			continue
		}
		name, ok := serverAttrs[f.Name]
		if !ok {
			name = snakeCase(f.Name)
		}
		out = append(out, name)
	}
	return out
}

// snakeCase turns a Go field name into an attribute name: CallTimeout →
// call_timeout.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

var rangeType = reflect.TypeFor[hcl.Range]()

// sameIgnoringRanges reports whether a and b hold the same settings,
// wherever they were written: source ranges are not compared, and neither
// are functions (a policy's position mapping). A nil and an empty slice or
// map are the same.
func sameIgnoringRanges(a, b any) bool {
	return sameValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func sameValue(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == rangeType {
		return true
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			w := b.MapIndex(it.Key())
			if !w.IsValid() || !sameValue(it.Value(), w) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	}
	return false
}
