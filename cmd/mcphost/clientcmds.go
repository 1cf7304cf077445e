package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientFlags are the flags shared by the commands that connect to servers.
type clientFlags struct {
	config  *string
	json    *bool
	verbose *bool
	as      *string
}

func (e *env) clientFlagSet(name, synopsis string) (*flag.FlagSet, clientFlags) {
	fs := e.newFlagSet(name, synopsis)
	cf := clientFlags{
		config:  fs.String("config", "", "config `FILE` (default: the embedded default config)"),
		json:    fs.Bool("json", false, "print JSON on stdout"),
		verbose: fs.Bool("v", false, "log connection details and server stderr on stderr"),
		as:      fs.String("as", "owner", "the principal `NAME` the policies and plugins see: owner (no groups) or a principal of the config"),
	}
	return fs, cf
}

// openHost loads the config and connects the named servers (all when names
// is nil), waiting until each has finished its first attempt.
func (e *env) openHost(ctx context.Context, cf clientFlags, names []string) (*host.Host, *config.Config, int) {
	cfg, ok := e.loadConfig(*cf.config)
	if !ok {
		return nil, nil, exitUsage
	}
	logger := e.newLogger(slog.LevelDebug, *cf.verbose)
	st := eraCacheStore(ctx, cfg, names, logger)
	if _, err := principalFor(cfg, *cf.as); err != nil {
		fmt.Fprintf(e.stderr, "mcphost: %v\n", err)
		return nil, nil, exitUsage
	}
	h, err := host.New(cfg, host.Options{
		Logger:         logger,
		Version:        version(),
		Servers:        names,
		Store:          st,
		PluginCacheDir: host.PluginCacheDirFor(cfg, logger),
	})
	if err != nil {
		closeStore(st)
		e.printHostError(cfg, err)
		return nil, nil, exitUsage
	}
	e.closers = append(e.closers, func() { h.Close(); closeStore(st) })
	e.principal, _ = principalFor(cfg, *cf.as)
	h.Start(ctx)
	if err := h.WaitSettled(ctx); err != nil {
		fmt.Fprintf(e.stderr, "mcphost: interrupted while connecting\n")
		return nil, nil, exitFailure
	}
	return h, cfg, exitOK
}

// principalFor returns the principal named by -as: "owner" (no groups),
// or a principal block of cfg.
func principalFor(cfg *config.Config, name string) (host.Principal, error) {
	if name == "" || name == "owner" {
		return host.Principal{Name: "owner", Groups: []string{}}, nil
	}
	for _, p := range cfg.Principals {
		if p.Name == name {
			return host.Principal{Name: p.Name, Groups: append([]string{}, p.Groups...)}, nil
		}
	}
	return host.Principal{}, fmt.Errorf("-as %q: the config has no such principal", name)
}

// printHostError prints an error of host.New; plugin load errors come with
// their place in the config.
func (e *env) printHostError(cfg *config.Config, err error) {
	var pe *host.PluginLoadError
	if errors.As(err, &pe) {
		e.printDiagnostics(cfg.Files, pe.Diagnostics)
		return
	}
	fmt.Fprintf(e.stderr, "mcphost: %v\n", err)
}

// eraCacheStore opens the daemon's database when one already exists in
// data_dir and a server to connect negotiates (version_negotiation =
// "auto"), so one-shot commands reuse and refresh the era cache instead of
// probing every time. It never creates a database; a failure only costs the
// cache.
func eraCacheStore(ctx context.Context, cfg *config.Config, names []string, logger *slog.Logger) *store.Store {
	auto := false
	for _, s := range cfg.Servers {
		if s.VersionNegotiation == config.NegotiationAuto && (names == nil || slices.Contains(names, s.Name)) {
			auto = true
		}
	}
	path := filepath.Join(cfg.DataDir, dbFile)
	if !auto || cfg.DataDir == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	st, err := store.Open(ctx, path, logger)
	if err != nil {
		logger.Warn("era cache unavailable", "err", err)
		return nil
	}
	return st
}

func closeStore(st *store.Store) {
	if st != nil {
		st.Close()
	}
}

func (e *env) servers(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("servers", "[-config FILE] [-json] [-v]")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, nil)
	if h == nil {
		return code
	}
	statuses := h.Servers()
	if *cf.json {
		writeJSON(e.stdout, statuses)
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tSTATUS\tERA\tPROTOCOL\tTRANSPORT\tSERVER INFO\tOFFERS\tEVIDENCE")
		for _, s := range statuses {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, dash(s.Era), dash(s.ProtocolVersion),
				s.Transport, dash(serverInfo(s.ServerInfo)), dash(offers(s)), dash(s.Evidence))
		}
		tw.Flush()
		for _, s := range statuses {
			if s.LastError != "" {
				fmt.Fprintf(e.stdout, "\n%s: %s\n", s.Name, s.LastError)
			}
		}
	}
	for _, s := range statuses {
		if s.State == host.StateFailed {
			return exitFailure
		}
	}
	return exitOK
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func serverInfo(impl *mcp.Implementation) string {
	if impl == nil {
		return ""
	}
	if impl.Version == "" {
		return impl.Name
	}
	return impl.Name + " " + impl.Version
}

// offers summarises a ready server's capabilities with counts.
func offers(s host.ServerStatus) string {
	if s.Capabilities == nil {
		return ""
	}
	var parts []string
	c := s.Capabilities
	if c.Tools != nil {
		parts = append(parts, plural(s.Tools, "tool"))
	}
	if c.Prompts != nil {
		parts = append(parts, plural(s.Prompts, "prompt"))
	}
	if c.Resources != nil {
		parts = append(parts, plural(s.Resources, "resource"))
		if s.ResourceTemplates > 0 {
			parts = append(parts, plural(s.ResourceTemplates, "template"))
		}
	}
	if c.Logging != nil {
		parts = append(parts, "logging")
	}
	if c.Completions != nil {
		parts = append(parts, "completions")
	}
	for k := range c.Extensions {
		parts = append(parts, "ext:"+k)
	}
	return strings.Join(parts, ", ")
}

func (e *env) tools(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("tools", "[-config FILE] [-json] [-v] [SERVER]")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	server := fs.Arg(0)
	var names []string
	if server != "" {
		names = []string{server}
	}
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, names)
	if h == nil {
		return code
	}
	tools, err := h.ToolsFor(ctx, e.principal, host.OriginUser, server)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost tools: %v\n", err)
		return exitFailure
	}
	if *cf.json {
		out := make([]host.ToolView, 0, len(tools))
		for _, t := range tools {
			out = append(out, t.View())
		}
		writeJSON(e.stdout, out)
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\n", t.QualifiedName(), firstLine(toolSummary(t.Tool)))
		}
		tw.Flush()
	}
	code = exitOK
	for _, s := range h.Servers() {
		if s.State == host.StateFailed {
			fmt.Fprintf(e.stderr, "mcphost tools: %s: %s\n", s.Name, s.LastError)
			code = exitFailure
		}
	}
	return code
}

func toolSummary(t *mcp.Tool) string {
	switch {
	case t.Title != "" && t.Description != "":
		return t.Title + " — " + t.Description
	case t.Title != "":
		return t.Title
	default:
		return t.Description
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func (e *env) call(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("call", "[-config FILE] [-json] [-v] SERVER.TOOL [JSON-ARGUMENTS | -]")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return exitUsage
	}
	server, tool, ok := strings.Cut(fs.Arg(0), ".")
	if !ok || server == "" || tool == "" {
		fmt.Fprintf(e.stderr, "mcphost call: name the tool as SERVER.TOOL, for example revenue.show_revenue_dashboard (got %q)\n", fs.Arg(0))
		return exitUsage
	}
	var rawArgs []byte
	switch a := fs.Arg(1); a {
	case "":
	case "-":
		b, err := io.ReadAll(io.LimitReader(e.stdin, 64<<20))
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost call: reading arguments from stdin: %v\n", err)
			return exitFailure
		}
		rawArgs = b
	default:
		rawArgs = []byte(a)
	}
	if len(strings.TrimSpace(string(rawArgs))) > 0 && !json.Valid(rawArgs) {
		fmt.Fprintf(e.stderr, "mcphost call: the arguments are not valid JSON: %s\n", jsonError(rawArgs))
		return exitUsage
	}

	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, []string{server})
	if h == nil {
		return code
	}
	res, err := h.CallTool(ctx, host.CallToolRequest{
		Server:    server,
		Tool:      tool,
		Arguments: rawArgs,
		Principal: e.principal,
		Origin:    host.OriginUser,
		OnProgress: func(p host.Progress) {
			switch {
			case p.Total > 0:
				fmt.Fprintf(e.stderr, "progress: %g/%g %s\n", p.Progress, p.Total, p.Message)
			default:
				fmt.Fprintf(e.stderr, "progress: %g %s\n", p.Progress, p.Message)
			}
		},
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost call: %v\n", err)
		var argErr *host.ArgumentsError
		if host.IsNotFound(err) || errors.As(err, &argErr) {
			return exitUsage
		}
		var pe *host.PolicyError
		if errors.As(err, &pe) {
			return exitDenied
		}
		return exitFailure
	}
	if *cf.json {
		writeJSON(e.stdout, res)
	} else {
		printContent(e.stdout, res)
	}
	if res.IsError {
		fmt.Fprintf(e.stderr, "mcphost call: %s.%s returned an error result\n", server, tool)
		return exitFailure
	}
	return exitOK
}

// printContent prints a result for a person: text as is, other content as a
// one-line description, structured content only when there is no text.
func printContent(w io.Writer, res *mcp.CallToolResult) {
	hasText := false
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			hasText = true
			fmt.Fprintln(w, strings.TrimRight(c.Text, "\n"))
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "[resource link %s %s]\n", c.URI, c.Name)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				hasText = true
				fmt.Fprintln(w, strings.TrimRight(c.Resource.Text, "\n"))
			} else if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s %s, %d bytes]\n", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob))
			}
		default:
			fmt.Fprintf(w, "[%T content]\n", c)
		}
	}
	if !hasText && res.StructuredContent != nil {
		writeJSON(w, res.StructuredContent)
	}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// jsonError describes why b is not valid JSON.
func jsonError(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}
