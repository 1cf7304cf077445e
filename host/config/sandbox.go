package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// ReservedEnvPrefix starts the names of mcphost's own environment variables
// (MCPHOST_SECRET_KEY, MCPHOST_CLUSTER_SECRET, MCPHOST_TOKEN, …). No stdio
// server ever gets one: listing one in `inherit_env` or setting one in a
// server's `env` is a configuration error, and the host drops any that
// reach it another way.
const ReservedEnvPrefix = "MCPHOST_"

// ReservedEnv reports whether name is one of mcphost's own variables
// (it starts with [ReservedEnvPrefix]).
func ReservedEnv(name string) bool { return strings.HasPrefix(name, ReservedEnvPrefix) }

// DefaultInheritEnv returns the variables of mcphost's environment that every
// stdio server gets, those of them that are set: the list the MCP SDKs
// (TypeScript, Python) pass to a stdio server on POSIX systems. `inherit_env`
// adds to it; nothing takes names away from it.
func DefaultInheritEnv() []string {
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}
}

// Sandbox is a `sandbox` block: what a stdio server gets of the machine
// mcphost runs on. So far it holds the environment only.
type Sandbox struct {
	// InheritEnv is `inherit_env`: names of variables of mcphost's
	// environment that a stdio server gets when they are set, besides
	// [DefaultInheritEnv]. In [Config.Sandbox] it is the top-level list; in
	// [Server.Sandbox] it is the top-level list followed by the server's
	// own additions, without duplicates. Never a name with
	// [ReservedEnvPrefix].
	InheritEnv []string
}

// InheritedEnv returns the names of the variables of mcphost's environment
// that the stdio server s gets when they are set: [DefaultInheritEnv], then
// s.Sandbox.InheritEnv, without duplicates or reserved names. Its `env`
// comes on top of them.
func (s *Server) InheritedEnv() []string {
	names := DefaultInheritEnv()
	for _, n := range s.Sandbox.InheritEnv {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return slices.DeleteFunc(names, ReservedEnv)
}

// sandboxBlock is a `sandbox` block, at the top level (defaults for every
// stdio server) or in a server block (that server's additions).
type sandboxBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// inherit_env: names of mcphost's environment variables passed to the
	// server besides HOME, LOGNAME, PATH, SHELL, TERM and USER. A server's
	// list adds to the top-level one. No MCPHOST_ name.
	InheritEnv      hcl.Expression `hcl:"inherit_env,optional"`
	InheritEnvRange hcl.Range      `hcl:"inherit_env,attr_value_range"`
}

// decodeTopSandbox checks the top-level `sandbox` block; there may be one.
func (l *loader) decodeTopSandbox(cfg *Config, blocks []*sandboxBlock) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate sandbox block",
			Detail:   fmt.Sprintf("A sandbox block is already defined at %s. Merge the two blocks into one.", fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	cfg.Sandbox.InheritEnv = l.decodeInheritEnv(blocks[0], "the top-level sandbox block")
}

// decodeServerEnvironment checks what a stdio server gets of mcphost's
// environment: no reserved or malformed name among the keys of its `env`,
// and its `sandbox` block, whose inherit_env adds to top's. A remote server
// runs no process, so a sandbox block in one is an error.
func (l *loader) decodeServerEnvironment(b *serverBlock, s *Server, top Sandbox) {
	if s.Transport == TransportStdio || s.Transport == "" {
		// (env on a remote server is an error of its own: stdioOnly.)
		l.checkEnvKeys(b, s.Env)
	}
	var own []string
	for i, sb := range b.Sandbox {
		if i > 0 {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate sandbox block",
				Detail:   fmt.Sprintf("Server %q already has a sandbox block at %s. Merge the two blocks into one.", b.Name, fileLine(b.Sandbox[0].DeclRange)),
				Subject:  sb.DeclRange.Ptr(),
			})
			continue
		}
		own = l.decodeInheritEnv(sb, fmt.Sprintf("the sandbox block of server %q", b.Name))
	}
	switch {
	case s.Transport == TransportStdio:
		s.Sandbox.InheritEnv = slices.Clone(top.InheritEnv)
		for _, n := range own {
			if !slices.Contains(s.Sandbox.InheritEnv, n) {
				s.Sandbox.InheritEnv = append(s.Sandbox.InheritEnv, n)
			}
		}
	case s.Transport != "" && len(b.Sandbox) > 0:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Block only for stdio servers",
			Detail:   fmt.Sprintf("Server %q connects to a url, and a sandbox block says what a local process started with command gets of the machine. Remove the sandbox block.", b.Name),
			Subject:  b.Sandbox[0].DeclRange.Ptr(),
		})
	}
}

// checkEnvKeys reports the keys of a server's env that no server may set:
// malformed names and mcphost's own (reserved) ones.
func (l *loader) checkEnvKeys(b *serverBlock, env map[string]string) {
	for _, k := range slices.Sorted(maps.Keys(env)) {
		key := l.keyExpr(b.Env, k)
		if problem := envNameProblem(k); problem != "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("The env of server %q sets %s, which %s. Write the variable's name, such as LOG_LEVEL.", b.Name, quoted(key, k), problem),
				Subject:  key.Range().Ptr(),
			})
		} else if ReservedEnv(k) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Reserved environment variable",
				Detail: fmt.Sprintf("The env of server %q sets %s. Names starting with %s belong to mcphost (its secrets among them: %sSECRET_KEY seals every OAuth token), and no server gets one. Use another name, or remove it.",
					b.Name, shown(key, k), ReservedEnvPrefix, ReservedEnvPrefix),
				Subject: key.Range().Ptr(),
			})
		}
	}
}

// decodeInheritEnv reads the inherit_env of a sandbox block: names of
// variables, none reserved. Duplicates, and names DefaultInheritEnv already
// has, are dropped silently.
func (l *loader) decodeInheritEnv(b *sandboxBlock, where string) []string {
	names, st := l.evalStringList(b.InheritEnv, "inherit_env")
	if st != valid {
		return nil
	}
	defaults := DefaultInheritEnv()
	var out []string
	elems, _ := hcl.ExprList(b.InheritEnv)
	for i, n := range names {
		el := b.InheritEnv // the element's own expression when the list is written out
		if i < len(elems) {
			el = elems[i]
		}
		subject := el.Range()
		problem := envNameProblem(n)
		if problem == "" && strings.ContainsAny(n, "*?") {
			problem = "has a wildcard: inherit_env lists variables by name, not by pattern"
		}
		if problem != "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid environment variable name",
				Detail:   fmt.Sprintf("The inherit_env of %s lists %s, which %s. Write each variable's name, such as \"LANG\".", where, quoted(el, n), problem),
				Subject:  subject.Ptr(),
			})
			continue
		}
		if ReservedEnv(n) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Reserved environment variable",
				Detail: fmt.Sprintf("The inherit_env of %s lists %s. Names starting with %s belong to mcphost (its secrets among them: %sSECRET_KEY seals every OAuth token), and no server gets one. Remove it.",
					where, shown(el, n), ReservedEnvPrefix, ReservedEnvPrefix),
				Subject: subject.Ptr(),
			})
			continue
		}
		if !slices.Contains(defaults, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// envNameProblem says what makes name unusable as the name of an
// environment variable, or "" when nothing does.
func envNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.Contains(name, "="):
		return `contains "="`
	case strings.Contains(name, "\x00"):
		return "contains a NUL character"
	}
	return ""
}

// keyExpr is the expression of the key named key in a map expression
// written as an object, else the whole map expression.
func (l *loader) keyExpr(expr hcl.Expression, key string) hcl.Expression {
	pairs, diags := hcl.ExprMap(expr)
	if !diags.HasErrors() {
		for _, p := range pairs {
			if v, d := p.Key.Value(l.ctx); !d.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type() == cty.String && v.AsString() == key {
				return p.Key
			}
		}
	}
	return expr
}
