package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/egress"
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

// Sandbox modes (`mode`).
const (
	SandboxEnforce = "enforce" // the default: every layer the server's block asks for, or no start
	SandboxOff     = "off"     // no sandbox but the environment allowlist; shown as unsandboxed
)

// What happens when the machine cannot enforce a layer (`on_unsupported`).
const (
	UnsupportedRefuse = "refuse" // the default: the server does not start; its status names the layer
	UnsupportedWarn   = "warn"   // it starts with the layers there are; its status names those dropped
)

// Network modes of a sandboxed server (`network`).
const (
	NetworkNone  = "none"  // the default: no network at all, not even loopback
	NetworkProxy = "proxy" // only through mcphost's egress proxy, to allow_hosts
	NetworkHost  = "host"  // the machine's network, unrestricted
)

// Runtime presets (`runtime`): what a package runner needs, granted at once.
const (
	RuntimeNode   = "node"   // npx: a private npm cache, registry.npmjs.org:443
	RuntimePython = "python" // uvx: private uv caches, pypi.org:443 and files.pythonhosted.org:443
)

// DefaultSandboxUID is the uid a sandboxed server runs as when mcphost runs
// as root (`sandbox_uid`): nobody.
const DefaultSandboxUID = 65534

// Sandbox is a `sandbox` block: what a stdio server gets of the machine
// mcphost runs on. In [Config.Sandbox] it holds the top-level defaults; in
// [Server.Sandbox] the server's own block merged over them, field by field,
// every default filled in, so that the host reads one struct.
type Sandbox struct {
	// Mode is `mode`: SandboxEnforce (default) or SandboxOff.
	Mode string
	// OnUnsupported is `on_unsupported`: UnsupportedRefuse (default) or
	// UnsupportedWarn.
	OnUnsupported string
	// Network is `network`: NetworkNone (default), NetworkProxy or
	// NetworkHost. A server with allow_hosts or a runtime preset that
	// grants hosts gets NetworkProxy unless it says NetworkHost.
	Network string
	// Runtime is `runtime` (servers only): "", RuntimeNode or RuntimePython.
	Runtime string
	// Read and Write are `read` and `write` (servers only): absolute,
	// cleaned paths with symlinks resolved, each an existing file or
	// directory that the server may read (and execute), or read and write.
	// Write also holds the server's roots (file URIs as paths). None lies
	// inside, or contains, mcphost's own state (see Protected).
	Read, Write []string
	// AllowHosts is `allow_hosts` (servers only) with the runtime preset's
	// hosts added: what the egress proxy lets through.
	AllowHosts []egress.Rule
	// InheritEnv is `inherit_env`: names of variables of mcphost's
	// environment that a stdio server gets when they are set, besides
	// [DefaultInheritEnv]. In [Config.Sandbox] it is the top-level list; in
	// [Server.Sandbox] it is the top-level list followed by the server's
	// own additions, without duplicates. Never a name with
	// [ReservedEnvPrefix].
	InheritEnv []string
	// UID is `sandbox_uid` (top level only, copied into every server):
	// the uid and gid a sandboxed server runs as when mcphost runs as root.
	UID int
	// Limits is the `limits` block (servers only; zero means no limit).
	Limits SandboxLimits
	// Protected are the paths no grant may reach, computed at load: the
	// data directory, the config files, every file the config reads with
	// file(). The host hides them from a sandboxed server.
	Protected []string
}

// SandboxLimits is a server's `limits` block: bounds on its resources,
// enforced with rlimits on the server's process (and its children, each
// on its own).
type SandboxLimits struct {
	OpenFiles int   // open_files: RLIMIT_NOFILE
	Memory    int64 // memory ("1GiB"): RLIMIT_AS, in bytes
	Pids      int   // pids: RLIMIT_NPROC (counted per uid: meaningful with sandbox_uid)
	CPU       int   // cpu: RLIMIT_CPU, seconds of CPU time in all
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
