package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// doctor prints what this machine can enforce of the sandbox of stdio
// servers. It fails (exit 1) when a default layer is missing: servers
// would then refuse to start unless their blocks say otherwise.
func (e *env) doctor(args []string) int {
	fs := e.newFlagSet("doctor", "")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	p := confine.Detect()
	fmt.Fprintln(e.stdout, "What this machine can enforce for stdio servers (the sandbox's layers):")
	for _, l := range p.Lines() {
		fmt.Fprintln(e.stdout, "  "+l)
	}
	if p.Ready() {
		fmt.Fprintln(e.stdout, "\nEvery default layer is available: stdio servers run contained.")
		return exitOK
	}
	fmt.Fprintln(e.stdout, "\nSome layers are missing: a stdio server refuses to start (its status names the layer) unless its\n"+
		"sandbox block says on_unsupported = \"warn\" (start with the layers there are) or mode = \"off\".")
	return exitFailure
}

// sandboxCmd is `mcphost sandbox check SERVER`: start one server contained,
// list its tools, and print its layers and what it was refused.
func (e *env) sandboxCmd(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(e.stderr, "usage: mcphost sandbox check [-config FILE] [-v] SERVER")
		return exitUsage
	}
	fs, cf := e.clientFlagSet("sandbox check", "[-config FILE] [-v] SERVER")
	if code := parseFlags(fs, args[1:]); code >= 0 {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	*cf.local = true // the check starts its own copy, never the daemon's
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, []string{name})
	if h == nil {
		return code
	}
	var st host.ServerStatus
	for _, s := range h.Servers() {
		if s.Name == name {
			st = s
		}
	}
	if st.Sandbox == nil {
		fmt.Fprintf(e.stdout, "%s connects to a url: it runs no process here, so it has no sandbox.\n", name)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", name, st.State)
	if st.State == host.StateReady {
		fmt.Fprintf(e.stdout, "  answered initialize and tools/list: %s\n", plural(st.Tools, "tool"))
	}
	fmt.Fprintf(e.stdout, "sandbox: %s\n", st.Sandbox.Summary)
	for _, l := range st.Sandbox.Layers {
		fmt.Fprintf(e.stdout, "  %s\n", l)
	}
	net := st.Sandbox.Network
	if len(st.Sandbox.AllowHosts) > 0 {
		net += " (allow_hosts: " + strings.Join(st.Sandbox.AllowHosts, ", ") + ")"
	}
	fmt.Fprintf(e.stdout, "network: %s\n", net)
	for _, d := range st.Sandbox.Denials {
		fmt.Fprintf(e.stdout, "denied: %s:%d (%s)\n", termsafe.Line(d.Host), d.Port, d.Reason)
	}
	for _, hint := range st.Sandbox.Hints {
		fmt.Fprintf(e.stdout, "hint: %s\n", termsafe.Line(hint))
	}
	if st.LastError != "" {
		fmt.Fprintf(e.stdout, "error: %s\n", termsafe.Line(st.LastError))
	}
	if st.State != host.StateReady {
		return exitFailure
	}
	return exitOK
}

// sandboxCell is the SANDBOX column of `mcphost servers`.
func sandboxCell(s host.ServerStatus) string {
	if s.Sandbox == nil {
		return "-"
	}
	dropped := s.Sandbox.Dropped()
	switch {
	case strings.HasPrefix(s.Sandbox.Summary, "webassembly"):
		return "webassembly"
	case s.Sandbox.Summary == "unsandboxed":
		return "UNSANDBOXED"
	case len(s.Sandbox.Layers) == 0:
		return "-"
	case len(dropped) > 0:
		return "partial (no " + strings.Join(dropped, ", ") + ")"
	case s.Sandbox.Network == "proxy":
		return "contained, proxy"
	case s.Sandbox.Network == "host":
		return "contained, host network"
	}
	return "contained"
}
