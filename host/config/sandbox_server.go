package config

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/egress"
	"github.com/zclconf/go-cty/cty"
)

// runtimeHosts are the hosts each `runtime` preset adds to a server's
// allow_hosts: the package registries its runner downloads from (npx:
// the npm registry; uvx: PyPI's index and its file host). They are data,
// so that a registry that moves is a one-line change and `mcphost sandbox
// show` can print them; TestRuntimeHosts checks that each parses.
var runtimeHosts = map[string][]string{
	RuntimeNode:   {"registry.npmjs.org:443"},
	RuntimePython: {"pypi.org:443", "files.pythonhosted.org:443"},
}

// decodeServerSandbox merges the server's sandbox block (if any) over top:
// each setting from the server's block when it sets it, else top's (which
// holds the defaults). Read, Write and AllowHosts are the server's own,
// the roots are added to Write and the runtime's hosts to AllowHosts;
// Limits are the server's own; UID is top's. Every grant is checked
// against the protected set later, by protect.
func (l *loader) decodeServerSandbox(b *serverBlock, s *Server, top Sandbox, roots []hcl.Range) Sandbox {
	wasm := s.Transport == TransportWasm
	out := Sandbox{
		Mode:          top.Mode,
		OnUnsupported: top.OnUnsupported,
		Network:       top.Network,
		InheritEnv:    slices.Clone(top.InheritEnv),
		UID:           top.UID,
		DeclRange:     top.DeclRange,
	}
	var (
		netSet   bool
		explicit []egress.Rule // allow_hosts as written
		sb       *sandboxBlock
	)
	if len(b.Sandbox) > 0 {
		sb = b.Sandbox[0]
		out.DeclRange = sb.DeclRange
		l.decodeSandboxModes(sb, &out)
		for _, n := range l.decodeInheritEnv(sb, fmt.Sprintf("the sandbox block of server %q", b.Name)) {
			if !slices.Contains(out.InheritEnv, n) {
				out.InheritEnv = append(out.InheritEnv, n)
			}
		}
		if written(sb.SandboxUIDAttr) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Argument only in the top-level sandbox block",
				Detail:   fmt.Sprintf("The sandbox block of server %q sets sandbox_uid, which is the same for every server: the uid sandboxed servers run as when mcphost runs as root. Move it into the top-level sandbox block.", b.Name),
				Subject:  sb.SandboxUIDAttr.Ptr(),
			})
		}
		if wasm {
			l.rejectForWasm(b, sb)
		} else {
			var v string
			if v, netSet = l.decodeNetwork(sb); netSet {
				out.Network = v
			}
			out.Runtime = l.decodeRuntime(sb)
		}
		out.Read = l.decodeGrants(b.Name, sb.Read, "read", sb.ReadRange)
		out.Write = l.decodeGrants(b.Name, sb.Write, "write", sb.WriteRange)
		explicit = l.decodeAllowHosts(sb)
		out.AllowHosts = slices.Clone(explicit)
		out.Limits = l.decodeLimits(b.Name, sb, wasm)
	}
	for _, w := range l.rootGrants(b.Name, s.Roots, roots) {
		if !slices.Contains(out.Write, w) {
			out.Write = append(out.Write, w)
		}
	}
	if wasm {
		out.Network, out.UID = "", 0
		return out
	}
	for _, h := range runtimeHosts[out.Runtime] {
		if r, err := egress.ParseRule(h); err == nil && !slices.Contains(out.AllowHosts, r) {
			out.AllowHosts = append(out.AllowHosts, r)
		}
	}
	if sb != nil {
		l.settleNetwork(b.Name, sb, &out, netSet, len(explicit) > 0)
	} else if len(out.AllowHosts) > 0 {
		out.Network = NetworkProxy
	}
	return out
}

// settleNetwork applies what allow_hosts (and a runtime's hosts) imply for
// the network: "proxy" unless the server's own block sets network, and
// an error when what it sets contradicts them.
func (l *loader) settleNetwork(server string, sb *sandboxBlock, out *Sandbox, netSet, explicit bool) {
	hosts := len(out.AllowHosts) > 0
	switch {
	case !netSet:
		if hosts {
			out.Network = NetworkProxy
		}
	case out.Network == NetworkNone && hosts:
		granted := "allow_hosts lists hosts it may reach"
		remove := "allow_hosts"
		if !explicit {
			granted = fmt.Sprintf("runtime = %q grants %s", out.Runtime, strings.Join(runtimeHosts[out.Runtime], " and "))
			remove = "runtime"
		}
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Contradictory network",
			Detail: fmt.Sprintf("The sandbox block of server %q sets network = %q, which allows no connection at all, and %s. Remove network = %q (hosts make the network %q: only they are reached, through mcphost's proxy), or remove %s.",
				server, NetworkNone, granted, NetworkNone, NetworkProxy, remove),
			Subject: sb.NetworkAttr.Ptr(),
		})
	case out.Network == NetworkHost && explicit:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Contradictory network",
			Detail: fmt.Sprintf("The sandbox block of server %q sets network = %q, the machine's whole network, so its allow_hosts would restrict nothing. Remove network = %q to let the server reach only those hosts (through mcphost's proxy), or remove allow_hosts.",
				server, NetworkHost, NetworkHost),
			Subject: sb.NetworkAttr.Ptr(),
		})
	}
}

// decodeRuntime reads runtime: "" or a key of runtimeHosts.
func (l *loader) decodeRuntime(sb *sandboxBlock) string {
	v, st := l.evalString(sb.Runtime, "runtime")
	if st != valid {
		return ""
	}
	if _, ok := runtimeHosts[v]; ok {
		return v
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid runtime",
		Detail: fmt.Sprintf("The runtime %s is not known. Use %q (npx: a private npm cache, and %s) or %q (uvx: private uv caches, and %s), or remove runtime and grant what the server needs with read, write and allow_hosts.",
			quoted(sb.Runtime, v), RuntimeNode, strings.Join(runtimeHosts[RuntimeNode], " and "), RuntimePython, strings.Join(runtimeHosts[RuntimePython], " and ")),
		Subject: sb.RuntimeRange.Ptr(),
	})
	return ""
}

// decodeAllowHosts reads allow_hosts, each entry parsed by
// egress.ParseRule (the proxy's own parser), without duplicates.
func (l *loader) decodeAllowHosts(sb *sandboxBlock) []egress.Rule {
	entries, st := l.evalStringList(sb.AllowHosts, "allow_hosts")
	if st != valid {
		return nil
	}
	var out []egress.Rule
	for i, e := range entries {
		r, err := egress.ParseRule(e)
		if err != nil {
			el := l.element(sb.AllowHosts, i)
			detail := fmt.Sprintf("The allow_hosts entry %s is not a host the proxy can let through: %v.", quoted(el, e), err)
			if sourcesPhrase(el) != "" {
				detail = fmt.Sprintf("The allow_hosts entry %s is not a host the proxy can let through.", quoted(el, e))
			}
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid allow_hosts entry",
				Detail:   detail + ` Write host:port, such as "api.github.com:443", "*.example.com:443" for every subdomain (list the domain itself too, if the server needs it), or "203.0.113.7:8443".`,
				Subject:  l.elementRange(sb.AllowHosts, i, sb.AllowHostsRange).Ptr(),
			})
			continue
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// element is the expression of element i of a list written as a tuple,
// else the whole list's.
func (l *loader) element(expr hcl.Expression, i int) hcl.Expression {
	if exprs, diags := hcl.ExprList(expr); !diags.HasErrors() && i < len(exprs) {
		return exprs[i]
	}
	return expr
}

// rejectForWasm reports the settings of a wasm server's sandbox block
// that mean nothing for a module mcphost runs in-process.
func (l *loader) rejectForWasm(b *serverBlock, sb *sandboxBlock) {
	for _, a := range []struct {
		name, why string
		rng       hcl.Range
	}{
		{"network", "a WebAssembly module has no sockets: it reaches only the hosts in allow_hosts, through mcphost", sb.NetworkAttr},
		{"runtime", "a runtime preset sets up a package runner (npx, uvx) in a process, and a WebAssembly module runs none", sb.RuntimeAttr},
	} {
		if written(a.rng) {
			l.add(wasmNot(a.name, b.Name, a.why, a.rng))
		}
	}
}

// wasmNot is the error for an attribute a wasm server cannot use.
func wasmNot(attr, server, why string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Argument not for WebAssembly servers",
		Detail:   fmt.Sprintf("Server %q runs a WebAssembly module inside mcphost (wasm = ...), and %s. Remove %s.", server, why, attr),
		Subject:  rng.Ptr(),
	}
}

// decodeLimits reads the limits block of a server's sandbox block.
func (l *loader) decodeLimits(server string, sb *sandboxBlock, wasm bool) SandboxLimits {
	var lim SandboxLimits
	if len(sb.Limits) == 0 {
		return lim
	}
	for _, dup := range sb.Limits[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate limits block",
			Detail:   fmt.Sprintf("The sandbox block of server %q already has a limits block at %s. Merge the two blocks into one.", server, fileLine(sb.Limits[0].DeclRange)),
			Subject:  dup.DeclRange.Ptr(),
		})
	}
	lb := sb.Limits[0]
	if wasm {
		if written(lb.OpenFilesAttr) {
			l.add(wasmNot("open_files", server, "a WebAssembly module has no file descriptors of its own: it opens only what its read and write grants hold, through mcphost", lb.OpenFilesAttr))
		}
		if written(lb.PidsAttr) {
			l.add(wasmNot("pids", server, "a WebAssembly module starts no processes", lb.PidsAttr))
		}
	} else {
		lim.OpenFiles = l.limitCount(lb.OpenFiles, "open_files", lb.OpenFilesRange, "the most files the server's process may have open at once (RLIMIT_NOFILE), such as 1024")
		lim.Pids = l.limitCount(lb.Pids, "pids", lb.PidsRange, "the most processes the server's uid may have (RLIMIT_NPROC), such as 256")
	}
	lim.CPU = l.limitCount(lb.CPU, "cpu", lb.CPURange, "the seconds of CPU time the server may use in all (RLIMIT_CPU), such as 3600")
	lim.Memory = l.decodeMemory(lb)
	return lim
}

// limitCount reads a whole-number limit from 1 to 2^31-1; 0 when it is
// absent or wrong.
func (l *loader) limitCount(expr hcl.Expression, name string, rng hcl.Range, meaning string) int {
	v, st := l.eval(expr, name, cty.Number)
	if st != valid {
		return 0
	}
	n, whole := wholeNumber(v)
	if whole && n >= 1 && n <= math.MaxInt32 {
		return int(n)
	}
	problem := "is not a whole number"
	if whole {
		problem = fmt.Sprintf("is outside 1 to %d", math.MaxInt32)
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid " + name + " limit",
		Detail:   fmt.Sprintf("The %s limit %s %s. It is %s; remove it for no limit.", name, shown(expr, numberText(v)), problem, meaning),
		Subject:  rng.Ptr(),
	})
	return 0
}

// decodeMemory reads memory: a size with a unit or a number of bytes, at
// least MinSandboxMemory.
func (l *loader) decodeMemory(lb *limitsBlock) int64 {
	v, st := l.eval(lb.Memory, "memory", cty.DynamicPseudoType)
	if st != valid {
		return 0
	}
	var (
		n             uint64
		text, problem string // the value as a diagnostic shows it; what is wrong with it
	)
	switch v.Type() {
	case cty.Number:
		text = shown(lb.Memory, numberText(v))
		if i, whole := wholeNumber(v); !whole || i < 0 {
			problem = text + " is not a whole number of bytes"
		} else {
			n = uint64(i)
		}
	case cty.String:
		text = quoted(lb.Memory, v.AsString())
		var err error
		if n, err = parseBytes(v.AsString()); err != nil {
			problem = fmt.Sprintf("%s is not a size%s", text, because(lb.Memory, err))
		}
	default:
		problem = fmt.Sprintf("is %s, not a size", v.Type().FriendlyName())
	}
	switch {
	case problem != "":
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid memory limit",
			Detail:   fmt.Sprintf("The memory limit %s. Write a size with a unit, such as \"512MiB\", \"1GiB\" or \"2GB\", or a number of bytes.", problem),
			Subject:  lb.MemoryRange.Ptr(),
		})
		return 0
	case n < MinSandboxMemory:
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid memory limit",
			Detail:   fmt.Sprintf("The memory limit %s is below 64MiB (%d bytes), and no server starts in that little: Node.js and Python reserve more address space than that before they run any code. Give at least \"64MiB\"; \"512MiB\" or \"1GiB\" suits most servers.", text, MinSandboxMemory),
			Subject:  lb.MemoryRange.Ptr(),
		})
		return 0
	case n > math.MaxInt64:
		n = math.MaxInt64
	}
	return int64(n)
}
