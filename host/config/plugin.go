package config

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// decodePlugins checks every `plugin` block.
func (l *loader) decodePlugins(cfg *Config, blocks []*pluginBlock) {
	names := map[string]hcl.Range{}
	for _, b := range blocks {
		p := l.decodePlugin(b)
		if first, dup := names[p.Name]; dup {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate plugin name",
				Detail: fmt.Sprintf("A plugin named %q is already defined at %s. Plugin names must be unique; rename or remove one of the blocks.",
					p.Name, fileLine(first)),
				Subject: b.NameRange.Ptr(),
			})
		} else {
			names[p.Name] = b.NameRange
		}
		cfg.Plugins = append(cfg.Plugins, p)
	}
}

// decodePlugin checks one plugin block and fills in defaults: one decoder
// per group of attributes, in the order pluginBlock lists them.
func (l *loader) decodePlugin(b *pluginBlock) Plugin {
	p := Plugin{
		Name:        b.Name,
		NameRange:   b.NameRange,
		DeclRange:   b.DeclRange,
		PathRange:   b.PathRange,
		StagesRange: b.StagesRange,
		Servers:     []string{"*"},
		Tools:       []string{"*"},
		Config:      map[string]string{},
		Timeout:     DefaultPluginTimeout,
		MemoryLimit: DefaultPluginMemoryLimit,
		PoolSize:    DefaultPluginPoolSize,
		OnError:     PluginOnErrorFail,
	}
	if p.PathRange == (hcl.Range{}) {
		p.PathRange = b.DeclRange
	}
	if p.StagesRange == (hcl.Range{}) {
		p.StagesRange = b.DeclRange
	}
	l.checkRuleName("plugin", b.Name, b.NameRange)
	l.decodePluginPath(b, &p)
	l.decodePluginStages(b, &p)
	p.Servers = l.globs(b.Servers, "servers", b.ServersRange, p.Servers)
	p.Tools = l.globs(b.Tools, "tools", b.ToolsRange, p.Tools)
	if cfg, st := l.pluginConfig(b.Config, b.ConfigRange); st == valid {
		p.Config = cfg
	}
	l.decodePluginLimits(b, &p)
	l.decodePluginOnError(b, &p)
	return p
}

// checkRuleName reports a policy or plugin name (kind) that does not
// match policyNameRE, and says whether it does.
func (l *loader) checkRuleName(kind, name string, rng hcl.Range) bool {
	if policyNameRE.MatchString(name) {
		return true
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + kind + " name",
		Detail:   fmt.Sprintf("The %s name %q is not valid. A name starts with a letter and has at most 64 letters, digits, '_', '.' or '-'.", kind, name),
		Subject:  rng.Ptr(),
	})
	return false
}

// decodePluginPath reads the required `path` of the .wasm file.
func (l *loader) decodePluginPath(b *pluginBlock, p *Plugin) {
	switch v, st := l.evalString(b.Path, "path"); st {
	case absent:
		l.add(missingAttr("path", "plugin", b.Name, b.DeclRange, `path = "plugins/redact.wasm" (relative to this file)`))
	case valid:
		if v == "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Empty path",
				Detail:   "The plugin path is empty. Give the .wasm file, relative to this configuration file.",
				Subject:  b.PathRange.Ptr(),
			})
		} else {
			p.Path = l.resolvePath(v, "path", b.PathRange)
		}
	}
}

// decodePluginStages reads the required `stages`: a non-empty list of
// known stages, each once.
func (l *loader) decodePluginStages(b *pluginBlock, p *Plugin) {
	v, st := l.evalStringList(b.Stages, "stages")
	switch st {
	case absent:
		l.add(missingAttr("stages", "plugin", b.Name, b.DeclRange, `stages = ["result"] (or "display")`))
		return
	case invalid:
		return
	}
	seen := map[string]bool{}
	for _, s := range v {
		switch {
		case s != PluginStageResult && s != PluginStageDisplay:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid plugin stage",
				Detail:   fmt.Sprintf("The stage %s is not known. Use \"result\" (the export on_result rewrites tool results) or \"display\" (the export on_display rewrites App display records).", quoted(b.Stages, s)),
				Subject:  b.StagesRange.Ptr(),
			})
		case seen[s]:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate plugin stage",
				Detail:   fmt.Sprintf("The stage %s is listed twice. List each stage once.", quoted(b.Stages, s)),
				Subject:  b.StagesRange.Ptr(),
			})
		default:
			seen[s] = true
			p.Stages = append(p.Stages, s)
		}
	}
	if len(v) == 0 {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No plugin stage",
			Detail:   "The stages list is empty, so the plugin would never run. Write stages = [\"result\"], [\"display\"] or both.",
			Subject:  b.StagesRange.Ptr(),
		})
	}
}

// decodePluginLimits reads what one call may use: timeout, memory_limit
// and pool_size.
func (l *loader) decodePluginLimits(b *pluginBlock, p *Plugin) {
	if d, st := l.evalDuration(b.Timeout, "timeout", b.TimeoutRange); st == valid {
		if d <= 0 || d > MaxPluginTimeout {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid plugin timeout",
				Detail:   fmt.Sprintf("The timeout %s is out of range. A plugin call needs a deadline above zero and at most %s; the default is %s.", shown(b.Timeout, durationText(d)), durationText(MaxPluginTimeout), durationText(DefaultPluginTimeout)),
				Subject:  b.TimeoutRange.Ptr(),
			})
		} else {
			p.Timeout = d
		}
	}
	l.decodePluginMemory(b, p)
	if n, st := l.evalInt(b.PoolSize, "pool_size", b.PoolSizeRange); st == valid {
		if n < 1 || n > MaxPluginPoolSize {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid pool size",
				Detail:   fmt.Sprintf("The pool_size %s is out of range. Use 1 to %d warm instances; each costs the plugin's memory. The default is %d.", shown(b.PoolSize, strconv.Itoa(n)), MaxPluginPoolSize, DefaultPluginPoolSize),
				Subject:  b.PoolSizeRange.Ptr(),
			})
		} else {
			p.PoolSize = n
		}
	}
}

// decodePluginMemory reads `memory_limit`: a size from 1MiB to 4GiB.
func (l *loader) decodePluginMemory(b *pluginBlock, p *Plugin) {
	v, st := l.evalString(b.MemoryLimit, "memory_limit")
	if st != valid {
		return
	}
	n, err := parseBytes(v)
	switch {
	case err != nil:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid memory limit",
			Detail:   fmt.Sprintf("The memory_limit %s is not a size%s. Write a number with a unit, such as \"64MiB\" or \"512KiB\".", quoted(b.MemoryLimit, v), because(b.MemoryLimit, err)),
			Subject:  b.MemoryLimitRange.Ptr(),
		})
	case n < MinPluginMemoryLimit || n > MaxPluginMemoryLimit:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid memory limit",
			Detail:   fmt.Sprintf("The memory_limit %s is out of range. It must be between 1MiB and 4GiB (WebAssembly memory is at most 4GiB); the default is 64MiB.", quoted(b.MemoryLimit, v)),
			Subject:  b.MemoryLimitRange.Ptr(),
		})
	default:
		p.MemoryLimit = n
	}
}

// decodePluginOnError reads what a failing plugin call does.
func (l *loader) decodePluginOnError(b *pluginBlock, p *Plugin) {
	if v, st := l.evalString(b.OnError, "on_error"); st == valid {
		if v != PluginOnErrorFail && v != PluginOnErrorSkip {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid on_error",
				Detail:   fmt.Sprintf("The on_error value %s is not known. Use \"fail\" (the call fails with the plugin's error; the unprocessed result is never shown) or \"skip\" (the input passes unchanged).", quoted(b.OnError, v)),
				Subject:  b.OnErrorRange.Ptr(),
			})
		} else {
			p.OnError = v
		}
	}
}

// globs evaluates a list of glob patterns (path.Match syntax).
func (l *loader) globs(expr hcl.Expression, name string, rng hcl.Range, def []string) []string {
	v, st := l.evalStringList(expr, name)
	if st != valid {
		return def
	}
	if len(v) == 0 {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty pattern list",
			Detail:   fmt.Sprintf("The %s list is empty, so the plugin would never run. Remove %s to match everything, or list patterns such as \"*\" or \"read_*\".", name, name),
			Subject:  rng.Ptr(),
		})
		return def
	}
	for _, g := range v {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid pattern",
				Detail:   fmt.Sprintf("The pattern %s in %s is not a valid glob. Use * for any run of characters, ? for one, and [a-z] for a class.", quoted(expr, g), name),
				Subject:  rng.Ptr(),
			})
			return def
		}
	}
	return v
}

// pluginConfig evaluates `config`: an object whose string values pass as
// they are and whose other values are JSON-encoded.
func (l *loader) pluginConfig(expr hcl.Expression, rng hcl.Range) (map[string]string, valState) {
	v, st := l.eval(expr, "config", cty.DynamicPseudoType)
	if st != valid {
		return nil, st
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid plugin config",
			Detail:   fmt.Sprintf("The config must be an object, such as { pattern = \"sk-[A-Za-z0-9]{20,}\" }; it is %s.", v.Type().FriendlyName()),
			Subject:  rng.Ptr(),
		})
		return nil, invalid
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		key := k.AsString()
		if e.Type() == cty.String && !e.IsNull() {
			out[key] = e.AsString()
			continue
		}
		raw, err := ctyjson.Marshal(e, e.Type())
		if err != nil {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid plugin config",
				Detail:   fmt.Sprintf("The config value %s cannot be encoded as JSON%s.", quoted(expr, key), because(expr, err)),
				Subject:  rng.Ptr(),
			})
			return nil, invalid
		}
		out[key] = string(raw)
	}
	return out, valid
}

// parseBytes parses a size such as "64MiB", "512KiB", "1GiB", "1048576".
func parseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	t := strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			mult = u.mult
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", t)
	}
	if n > (1<<63)/mult {
		return 0, fmt.Errorf("too large")
	}
	return n * mult, nil
}
