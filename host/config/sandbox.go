package config

import (
	"fmt"
	"maps"
	"math"
	"math/big"
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
//
// A wasm server ([TransportWasm]) has one too: Read and Write are the
// module's preopened directories and AllowHosts the hosts it may reach
// (its environment is the server's Env); Network, Runtime and UID are
// empty for it, and of Limits only Memory and CPU can be set. A remote
// server's is zero.
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

	// DeclRange is the header of the sandbox block the settings come
	// from: the server's own, else the top-level one; zero when there is
	// neither. The host positions its own findings (a layer the machine
	// cannot enforce) there.
	DeclRange hcl.Range
}

// MinSandboxMemory is the smallest `limits { memory }`: below it Node.js
// and Python cannot map their heaps, and a server would fail at start.
const MinSandboxMemory = 64 << 20

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
// stdio server) or in a server block (that server's own settings, each
// over the top-level one). An attribute of one place only is an error in
// the other.
type sandboxBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// mode: "enforce" (default) | "off".
	Mode      hcl.Expression `hcl:"mode,optional"`
	ModeRange hcl.Range      `hcl:"mode,attr_value_range"`
	// on_unsupported: "refuse" (default) | "warn": what happens when the
	// machine cannot enforce a layer the server's block asks for.
	OnUnsupported      hcl.Expression `hcl:"on_unsupported,optional"`
	OnUnsupportedRange hcl.Range      `hcl:"on_unsupported,attr_value_range"`
	// network: "none" (default) | "proxy" | "host"; a server with
	// allow_hosts gets "proxy" unless its own block says otherwise.
	Network      hcl.Expression `hcl:"network,optional"`
	NetworkRange hcl.Range      `hcl:"network,attr_value_range"`
	NetworkAttr  hcl.Range      `hcl:"network,attr_range"`

	// inherit_env: names of mcphost's environment variables passed to the
	// server besides HOME, LOGNAME, PATH, SHELL, TERM and USER. A server's
	// list adds to the top-level one. No MCPHOST_ name.
	InheritEnv      hcl.Expression `hcl:"inherit_env,optional"`
	InheritEnvRange hcl.Range      `hcl:"inherit_env,attr_value_range"`

	// sandbox_uid (top level only): the uid a sandboxed server runs as
	// when mcphost runs as root; default 65534.
	SandboxUID      hcl.Expression `hcl:"sandbox_uid,optional"`
	SandboxUIDRange hcl.Range      `hcl:"sandbox_uid,attr_value_range"`
	SandboxUIDAttr  hcl.Range      `hcl:"sandbox_uid,attr_range"`

	// runtime (servers only): "node" | "python", a preset for npx or uvx.
	Runtime      hcl.Expression `hcl:"runtime,optional"`
	RuntimeRange hcl.Range      `hcl:"runtime,attr_value_range"`
	RuntimeAttr  hcl.Range      `hcl:"runtime,attr_range"`
	// read, write (servers only): files or directories the server may
	// read, or read and write; "~/" is the home directory, a relative
	// path is relative to the configuration file's directory.
	Read       hcl.Expression `hcl:"read,optional"`
	ReadRange  hcl.Range      `hcl:"read,attr_value_range"`
	ReadAttr   hcl.Range      `hcl:"read,attr_range"`
	Write      hcl.Expression `hcl:"write,optional"`
	WriteRange hcl.Range      `hcl:"write,attr_value_range"`
	WriteAttr  hcl.Range      `hcl:"write,attr_range"`
	// allow_hosts (servers only): "host:port" entries the egress proxy
	// lets through ("*.example.com:443" for the subdomains).
	AllowHosts      hcl.Expression `hcl:"allow_hosts,optional"`
	AllowHostsRange hcl.Range      `hcl:"allow_hosts,attr_value_range"`
	AllowHostsAttr  hcl.Range      `hcl:"allow_hosts,attr_range"`
	// limits (servers only, at most one): bounds on the server's process.
	Limits []*limitsBlock `hcl:"limits,block"`
}

// limitsBlock is the `limits` block of a server's sandbox block.
type limitsBlock struct {
	DeclRange hcl.Range `hcl:",def_range"`

	// open_files: RLIMIT_NOFILE, at least 1.
	OpenFiles      hcl.Expression `hcl:"open_files,optional"`
	OpenFilesRange hcl.Range      `hcl:"open_files,attr_value_range"`
	OpenFilesAttr  hcl.Range      `hcl:"open_files,attr_range"`
	// memory: a size ("512MiB", "1GiB", "2GB") or a number of bytes, at
	// least 64MiB.
	Memory      hcl.Expression `hcl:"memory,optional"`
	MemoryRange hcl.Range      `hcl:"memory,attr_value_range"`
	// pids: RLIMIT_NPROC, at least 1.
	Pids      hcl.Expression `hcl:"pids,optional"`
	PidsRange hcl.Range      `hcl:"pids,attr_value_range"`
	PidsAttr  hcl.Range      `hcl:"pids,attr_range"`
	// cpu: RLIMIT_CPU, whole seconds of CPU time, at least 1.
	CPU      hcl.Expression `hcl:"cpu,optional"`
	CPURange hcl.Range      `hcl:"cpu,attr_value_range"`
}

// written reports whether an attribute is in the file: its range is set.
func written(rng hcl.Range) bool { return rng != (hcl.Range{}) }

// decodeTopSandbox reads the top-level `sandbox` block (there may be one)
// into cfg.Sandbox, every default filled in.
func (l *loader) decodeTopSandbox(cfg *Config, blocks []*sandboxBlock) {
	cfg.Sandbox = Sandbox{Mode: SandboxEnforce, OnUnsupported: UnsupportedRefuse, Network: NetworkNone, UID: DefaultSandboxUID}
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
	b := blocks[0]
	cfg.Sandbox.DeclRange = b.DeclRange
	l.decodeSandboxModes(b, &cfg.Sandbox)
	if v, set := l.decodeNetwork(b); set {
		cfg.Sandbox.Network = v
	}
	cfg.Sandbox.InheritEnv = l.decodeInheritEnv(b, "the top-level sandbox block")
	if uid, ok := l.decodeSandboxUID(b); ok {
		cfg.Sandbox.UID = uid
	}
	for _, a := range []struct {
		name, example string
		rng           hcl.Range
	}{
		{"read", `read = ["/srv/reference"]`, b.ReadAttr},
		{"write", `write = ["~/notes"]`, b.WriteAttr},
		{"allow_hosts", `allow_hosts = ["api.github.com:443"]`, b.AllowHostsAttr},
		{"runtime", `runtime = "node"`, b.RuntimeAttr},
	} {
		if written(a.rng) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only in a server's sandbox block",
				Detail: fmt.Sprintf("The top-level sandbox block sets %s, which says what one server may reach, not every one. Move it into the sandbox block of the server that needs it: server \"NAME\" { sandbox { %s } }.",
					a.name, a.example),
				Subject: a.rng.Ptr(),
			})
		}
	}
	for _, lb := range b.Limits {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Block only in a server's sandbox block",
			Detail:   "The top-level sandbox block has a limits block, which bounds one server's process. Move it into the sandbox block of the server it bounds: server \"NAME\" { sandbox { limits { memory = \"1GiB\" } } }.",
			Subject:  lb.DeclRange.Ptr(),
		})
	}
}

// decodeSandboxModes reads mode and on_unsupported into sb, over what it
// holds.
func (l *loader) decodeSandboxModes(b *sandboxBlock, sb *Sandbox) {
	if v, st := l.evalString(b.Mode, "mode"); st == valid {
		switch v {
		case SandboxEnforce, SandboxOff:
			sb.Mode = v
		default:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid sandbox mode",
				Detail: fmt.Sprintf("The sandbox mode %s is not known. Use %q (the default: every layer the sandbox block asks for, or the server does not start) or %q (no sandbox but the environment allowlist; the server is shown as unsandboxed).",
					quoted(b.Mode, v), SandboxEnforce, SandboxOff),
				Subject: b.ModeRange.Ptr(),
			})
		}
	}
	if v, st := l.evalString(b.OnUnsupported, "on_unsupported"); st == valid {
		switch v {
		case UnsupportedRefuse, UnsupportedWarn:
			sb.OnUnsupported = v
		default:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid on_unsupported",
				Detail: fmt.Sprintf("The on_unsupported value %s is not known. Use %q (the default: a server whose sandbox the machine cannot enforce does not start, and its status names the missing layer) or %q (it starts with the layers there are, and its status names those dropped).",
					quoted(b.OnUnsupported, v), UnsupportedRefuse, UnsupportedWarn),
				Subject: b.OnUnsupportedRange.Ptr(),
			})
		}
	}
}

// decodeNetwork reads network; set is false when it is absent or wrong.
func (l *loader) decodeNetwork(b *sandboxBlock) (v string, set bool) {
	v, st := l.evalString(b.Network, "network")
	if st != valid {
		return "", false
	}
	switch v {
	case NetworkNone, NetworkProxy, NetworkHost:
		return v, true
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid network",
		Detail: fmt.Sprintf("The network %s is not known. Use %q (the default: no network at all, not even loopback), %q (only through mcphost's egress proxy, to the hosts in allow_hosts) or %q (the machine's network, unrestricted).",
			quoted(b.Network, v), NetworkNone, NetworkProxy, NetworkHost),
		Subject: b.NetworkRange.Ptr(),
	})
	return "", false
}

// decodeSandboxUID reads sandbox_uid: a uid from 1 to 2^31-1.
func (l *loader) decodeSandboxUID(b *sandboxBlock) (int, bool) {
	v, st := l.eval(b.SandboxUID, "sandbox_uid", cty.Number)
	if st != valid {
		return 0, false
	}
	n, whole := wholeNumber(v)
	detail := ""
	switch {
	case !whole:
		detail = fmt.Sprintf("The sandbox_uid %s is not a whole number.", shown(b.SandboxUID, numberText(v)))
	case n == 0:
		detail = "The sandbox_uid is 0, which is root, and keeping sandboxed servers from running as root is what sandbox_uid is for."
	case n < 1 || n > math.MaxInt32:
		detail = fmt.Sprintf("The sandbox_uid %s is outside 1 to %d.", shown(b.SandboxUID, numberText(v)), math.MaxInt32)
	default:
		return int(n), true
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid sandbox_uid",
		Detail:   detail + fmt.Sprintf(" It is the uid and gid a sandboxed server runs as when mcphost runs as root: give one that no user of the machine has, or remove sandbox_uid to use %d (nobody).", DefaultSandboxUID),
		Subject:  b.SandboxUIDRange.Ptr(),
	})
	return 0, false
}

// wholeNumber returns v (a known number) as an int64, and whether it is a
// whole number that fits one.
func wholeNumber(v cty.Value) (int64, bool) {
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	return n, bf.IsInt() && acc == big.Exact
}

// numberText prints a number value as it would be written.
func numberText(v cty.Value) string { return v.AsBigFloat().Text('g', 20) }

// decodeServerEnvironment checks what a local server gets of mcphost's
// machine: no reserved or malformed name among the keys of its `env`, and
// its `sandbox` block over top (see decodeServerSandbox). A remote server
// runs no process, so a sandbox block in one is an error; its Sandbox
// stays zero.
func (l *loader) decodeServerEnvironment(b *serverBlock, s *Server, top Sandbox, roots []hcl.Range) {
	// An unknown transport ("": a conflict or none) is checked as stdio.
	local := s.Transport == TransportStdio || s.Transport == TransportWasm || s.Transport == ""
	if local {
		// (env on a remote server is an error of its own: stdioOnly.)
		l.checkEnvKeys(b, s.Env)
	}
	for _, sb := range b.Sandbox[min(1, len(b.Sandbox)):] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate sandbox block",
			Detail:   fmt.Sprintf("Server %q already has a sandbox block at %s. Merge the two blocks into one.", b.Name, fileLine(b.Sandbox[0].DeclRange)),
			Subject:  sb.DeclRange.Ptr(),
		})
	}
	if !local {
		if len(b.Sandbox) > 0 {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Block only for stdio servers",
				Detail:   fmt.Sprintf("Server %q connects to a url, and a sandbox block says what a server mcphost runs itself (command = ... or wasm = ...) gets of the machine. Remove the sandbox block.", b.Name),
				Subject:  b.Sandbox[0].DeclRange.Ptr(),
			})
		}
		return
	}
	s.Sandbox = l.decodeServerSandbox(b, s, top, roots)
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
