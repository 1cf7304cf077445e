package main

import (
	"bytes"
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
	"unicode/utf8"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientFlags are the flags shared by the commands that connect to servers.
type clientFlags struct {
	config  *string
	json    *bool
	verbose *bool
	as      *string
	daemon  *string
	local   *bool
}

func (e *env) clientFlagSet(name, synopsis string) (*flag.FlagSet, clientFlags) {
	fs := e.newFlagSet(name, synopsis)
	cf := clientFlags{
		config:  fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)"),
		json:    fs.Bool("json", false, "print JSON on stdout"),
		verbose: fs.Bool("v", false, "log connection details and server stderr on stderr"),
		as:      fs.String("as", "owner", "the principal `NAME` the policies and plugins see: owner (no groups) or a principal of the config"),
		daemon:  fs.String("daemon", "", "go through the daemon at `URL` (default: the one serving the config's data_dir, if any)"),
		local:   fs.Bool("local", false, "run in-process, one-shot, even when a daemon serves the config's data_dir"),
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
	e.sayConfig(cf, cfg)
	st := eraCacheStore(ctx, cfg, names, logger)
	if _, err := principalFor(cfg, *cf.as); err != nil {
		fmt.Fprintf(e.stderr, "mcphost: %s\n", termsafe.Line(err.Error()))
		return nil, nil, exitUsage
	}
	h, err := host.New(cfg, host.Options{
		Logger:         logger,
		Version:        version(),
		Servers:        names,
		Store:          st,
		PluginCacheDir: boot.PluginCacheDir(cfg, logger),
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
	fmt.Fprintf(e.stderr, "mcphost: %s\n", termsafe.Line(err.Error()))
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
	if !auto {
		return nil
	}
	if cfg.Store.Postgres == "" {
		if cfg.DataDir == "" {
			return nil
		}
		if _, err := os.Stat(filepath.Join(cfg.DataDir, dbFile)); err != nil {
			return nil
		}
	}
	st, err := boot.OpenStore(ctx, cfg, logger)
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
	if d, code := e.daemonOf(ctx, cf); d != nil || code >= 0 {
		if d == nil {
			return code
		}
		statuses, err := daemonServers(ctx, d)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost servers: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		return e.printServers(statuses, *cf.json)
	}
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, nil)
	if h == nil {
		return code
	}
	return e.printServers(h.Servers(), *cf.json)
}

// printServers prints the server table (or JSON) and the details of what
// went wrong; it fails when a server failed.
func (e *env) printServers(statuses []host.ServerStatus, asJSON bool) int {
	if asJSON {
		writeJSON(e.stdout, statuses)
	} else {
		// Server names and transports come from the config; every other
		// field may hold what a server said, escaped by cell.
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tSTATUS\tERA\tPROTOCOL\tTRANSPORT\tSANDBOX\tSERVER INFO\tOFFERS\tEVIDENCE")
		for _, s := range statuses {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.State, cell(s.Era), cell(s.ProtocolVersion),
				s.Transport, sandboxCell(s), cell(serverInfo(s.ServerInfo)), cell(offers(s)), cell(s.Evidence))
		}
		tw.Flush()
		for _, s := range statuses {
			if s.Placement == config.PlacementSingleton {
				on := "no replica yet (waiting for the one that holds its lock)"
				if s.RunsOn != "" {
					on = "replica " + termsafe.Line(s.RunsOn)
				}
				fmt.Fprintf(e.stdout, "\n%s: placement = \"singleton\", runs on %s\n", s.Name, on)
			}
			if s.LastError != "" {
				fmt.Fprintf(e.stdout, "\n%s: %s\n", s.Name, termsafe.Line(s.LastError))
			}
			if len(s.RejectedTools) > 0 {
				fmt.Fprintf(e.stdout, "\n%s: %s left out (their names break the MCP spec's tool-name rule or repeat a name):\n",
					s.Name, plural(len(s.RejectedTools), "tool"))
				for _, r := range s.RejectedTools {
					fmt.Fprintf(e.stdout, "  \"%s\": %s\n", termsafe.Line(r.Name), termsafe.Line(r.Reason))
				}
			}
			if len(s.NameCollisions) > 0 {
				fmt.Fprintf(e.stdout, "\n%s: %s not served on the gateway's /mcp (another tool has the same name there; /mcp/servers/%s serves them):\n",
					s.Name, plural(len(s.NameCollisions), "tool"), s.Name)
				for _, c := range s.NameCollisions {
					fmt.Fprintf(e.stdout, "  %s: %s is also %s.%s\n", termsafe.Line(c.Tool), termsafe.Line(c.Name), c.WithServer, termsafe.Line(c.WithTool))
				}
			}
			if len(s.UncheckedTools) > 0 {
				fmt.Fprintf(e.stdout, "\n%s: %s whose input schema does not compile (their arguments go to the server unchecked):\n",
					s.Name, plural(len(s.UncheckedTools), "tool"))
				for _, u := range s.UncheckedTools {
					fmt.Fprintf(e.stdout, "  %s: %s\n", termsafe.Line(u.Name), termsafe.Line(u.Reason))
				}
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

// cell returns s escaped for one cell of a table (termsafe.Line, which
// also escapes the tabs and newlines that would break the table), or "-"
// when s is empty.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return termsafe.Line(s)
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
		p := plural(s.Tools, "tool")
		if n := len(s.RejectedTools); n > 0 {
			p += fmt.Sprintf(" (%d left out)", n)
		}
		parts = append(parts, p)
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

// searchLimit is how many tools `tools -search` prints: the API's default.
const searchLimit = 20

func (e *env) tools(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("tools", "[-config FILE] [-json] [-v] [-search QUERY] [SERVER | SERVER.TOOL]")
	search := fs.String("search", "", "print the tools that best match `QUERY` (words saying what you want to do), best first")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	// Server names have no dot, so SERVER.TOOL names one tool.
	server, one, _ := strings.Cut(fs.Arg(0), ".")
	var names []string
	if server != "" {
		names = []string{server}
	}
	searching := false
	fs.Visit(func(f *flag.Flag) { searching = searching || f.Name == "search" })
	if searching {
		switch {
		case one != "":
			fmt.Fprintf(e.stderr, "mcphost tools: -search looks among the tools of every server, or of one SERVER; %q names a tool\n", termsafe.Line(fs.Arg(0)))
			return exitUsage
		case strings.TrimSpace(*search) == "":
			fmt.Fprintln(e.stderr, "mcphost tools: -search is empty: give the words to look for")
			return exitUsage
		}
		return e.searchTools(ctx, cf, *search, server, names)
	}
	if d, code := e.daemonOf(ctx, cf); d != nil || code >= 0 {
		if d == nil {
			return code
		}
		views, err := daemonTools(ctx, d, server)
		if err == nil && server != "" && len(views) == 0 {
			err = e.knownServer(ctx, d, server)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost tools: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		statuses, err := daemonServers(ctx, d)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost tools: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		tools := make([]host.Tool, 0, len(views))
		for _, v := range views {
			tools = append(tools, toolOfView(v))
		}
		return e.printTools(tools, views, statuses, server, one, *cf.json)
	}
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, names)
	if h == nil {
		return code
	}
	tools, err := h.ToolsFor(ctx, e.principal, host.OriginUser, server)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost tools: %s\n", termsafe.Line(err.Error()))
		return exitFailure
	}
	views := make([]host.ToolView, 0, len(tools))
	for _, t := range tools {
		views = append(views, t.View())
	}
	return e.printTools(tools, views, h.Servers(), server, one, *cf.json)
}

// searchTools is `tools -search QUERY [SERVER]`: the tools the principal
// may see, of server ("" all), ranked against query by the host's ranker
// (through the daemon's API, or in-process), printed as `tools` prints
// them, best first.
func (e *env) searchTools(ctx context.Context, cf clientFlags, query, server string, names []string) int {
	var (
		tools    []host.Tool
		views    []host.ToolView
		statuses []host.ServerStatus
		total    int
	)
	if d, code := e.daemonOf(ctx, cf); d != nil || code >= 0 {
		if d == nil {
			return code
		}
		var raw []json.RawMessage
		n, err := d.SearchTools(ctx, query, names, searchLimit, &raw)
		if err == nil {
			views, err = toolViews(raw)
		}
		if err == nil {
			statuses, err = daemonServers(ctx, d)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost tools: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		total = n
		for _, v := range views {
			tools = append(tools, toolOfView(v))
		}
	} else {
		defer e.closeAll()
		h, _, code := e.openHost(ctx, cf, names)
		if h == nil {
			return code
		}
		found, n, err := h.SearchTools(ctx, host.Caller{Principal: e.principal, Origin: host.OriginUser}, query, names, searchLimit)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost tools: %s\n", termsafe.Line(err.Error()))
			return exitFailure
		}
		tools, total, statuses = found, n, h.Servers()
		for _, t := range tools {
			views = append(views, t.View())
		}
	}
	if views == nil {
		views = []host.ToolView{}
	}
	code := e.printTools(tools, views, statuses, server, "", *cf.json)
	switch {
	case total == 0:
		fmt.Fprintf(e.stderr, "mcphost tools: no tool matches %q\n", termsafe.Line(query))
	case total > len(tools):
		fmt.Fprintf(e.stderr, "mcphost tools: the best %d of %d matches\n", len(tools), total)
	}
	return code
}

// printTools prints the tools (views: the same as JSON), or the one
// named, and what the statuses say went wrong.
func (e *env) printTools(tools []host.Tool, views []host.ToolView, statuses []host.ServerStatus, server, one string, asJSON bool) int {
	switch {
	case one != "":
		i := slices.IndexFunc(tools, func(t host.Tool) bool { return t.Tool.Name == one })
		if i < 0 {
			names := make([]string, 0, len(tools))
			for _, t := range tools {
				names = append(names, t.Tool.Name)
			}
			fmt.Fprintf(e.stderr, "mcphost tools: server %q has no tool %q (it has: %s)\n", server, termsafe.Line(one), termsafe.Line(strings.Join(names, ", ")))
			return exitUsage
		}
		if asJSON {
			writeJSON(e.stdout, views[i])
		} else {
			e.printTool(tools[i])
		}
	case asJSON:
		writeJSON(e.stdout, views)
	default:
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, t := range tools {
			params := toolParams(t.Tool.InputSchema)
			if params != "" {
				params = "(" + params + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(t.QualifiedName()), termsafe.Line(params), termsafe.Line(firstLine(toolSummary(t.Tool))))
		}
		tw.Flush()
	}
	code := exitOK
	for _, s := range statuses {
		if server != "" && s.Name != server {
			continue
		}
		if s.State == host.StateFailed {
			fmt.Fprintf(e.stderr, "mcphost tools: %s: %s\n", s.Name, termsafe.Line(s.LastError))
			code = exitFailure
		}
		if n := len(s.RejectedTools); n > 0 {
			fmt.Fprintf(e.stderr, "mcphost tools: %s: %s left out (names outside the MCP spec's tool-name rule, or repeated); mcphost servers lists them\n",
				s.Name, plural(n, "tool"))
		}
	}
	return code
}

// printTool prints one tool whole: its name, title, description,
// parameters and input (and output) schema.
func (e *env) printTool(t host.Tool) {
	fmt.Fprintf(e.stdout, "%s\n", termsafe.Line(t.QualifiedName()))
	if t.Tool.Title != "" {
		fmt.Fprintf(e.stdout, "  title: %s\n", termsafe.Line(t.Tool.Title))
	}
	if t.Tool.Description != "" {
		for _, line := range strings.Split(strings.TrimSpace(t.Tool.Description), "\n") {
			fmt.Fprintf(e.stdout, "  %s\n", termsafe.Line(line))
		}
	}
	if p := toolParams(t.Tool.InputSchema); p != "" {
		fmt.Fprintf(e.stdout, "  parameters (* required): %s\n", termsafe.Line(p))
	}
	fmt.Fprintln(e.stdout, "input schema:")
	writeJSON(e.stdout, t.Tool.InputSchema)
	if t.Tool.OutputSchema != nil {
		fmt.Fprintln(e.stdout, "output schema:")
		writeJSON(e.stdout, t.Tool.OutputSchema)
	}
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

// firstLine returns the first line of s, cut to at most 120 bytes on a rune
// boundary (a cut rune would print as an invalid byte).
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		cut := 117
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func (e *env) call(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("call", "[-config FILE] [-json] [-v] SERVER.TOOL [JSON-ARGUMENTS | - | KEY=VALUE... | KEY:=JSON...]")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return exitUsage
	}
	// key=value pairs, typed by the tool's input schema once it is known.
	var pairs []string
	if fs.NArg() >= 2 && isKeyValue(fs.Arg(1)) {
		pairs = fs.Args()[1:]
		for _, a := range pairs {
			if !isKeyValue(a) {
				fmt.Fprintf(e.stderr, "mcphost call: %q is not KEY=VALUE or KEY:=JSON; give the arguments either as pairs or as one JSON object\n", a)
				return exitUsage
			}
		}
	} else if fs.NArg() > 2 {
		fs.Usage()
		return exitUsage
	}
	server, tool, ok := strings.Cut(fs.Arg(0), ".")
	if !ok || server == "" || tool == "" {
		fmt.Fprintf(e.stderr, "mcphost call: name the tool as SERVER.TOOL, for example revenue.show_revenue_dashboard (got %q)\n", fs.Arg(0))
		return exitUsage
	}
	var rawArgs []byte
	switch a := fs.Arg(1); {
	case pairs != nil, a == "":
	case a == "-":
		b, err := io.ReadAll(io.LimitReader(e.stdin, 64<<20))
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost call: reading arguments from stdin: %v\n", err)
			return exitFailure
		}
		rawArgs = b
	default:
		rawArgs = []byte(a)
	}
	if t := strings.TrimSpace(string(rawArgs)); t != "" && !json.Valid(rawArgs) {
		if !strings.HasPrefix(t, "{") {
			fmt.Fprintf(e.stderr, "mcphost call: %q is neither a JSON object nor KEY=VALUE: give the arguments as {\"quarter\": \"Q3\"}, as quarter=Q3 (typed by the tool's schema), or as quarter:='\"Q3\"' (raw JSON)\n", termsafe.Line(t))
		} else {
			fmt.Fprintf(e.stderr, "mcphost call: the arguments are not valid JSON: %s\n", jsonError(rawArgs))
		}
		return exitUsage
	}

	if d, code := e.daemonOf(ctx, cf); d != nil || code >= 0 {
		if d == nil {
			return code
		}
		return e.callViaDaemon(ctx, d, server, tool, rawArgs, pairs, *cf.json, fs.Arg(1) == "-")
	}
	defer e.closeAll()
	h, _, code := e.openHost(ctx, cf, []string{server})
	if h == nil {
		return code
	}
	if pairs != nil {
		tools, err := h.Tools(server)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost call: %s\n", termsafe.Line(err.Error()))
			if host.IsNotFound(err) {
				return exitUsage
			}
			return exitFailure
		}
		i := slices.IndexFunc(tools, func(t host.Tool) bool { return t.Tool.Name == tool })
		if i < 0 {
			// The pipeline names the tools the server has.
			rawArgs = []byte("{}")
		} else if rawArgs, err = kvArguments(tools[i].Tool.InputSchema, pairs); err != nil {
			fmt.Fprintf(e.stderr, "mcphost call: %s.%s: %s\n", server, termsafe.Line(tool), termsafe.Line(err.Error()))
			return exitUsage
		}
	}
	progress := newProgressView(e.stderr)
	req := host.CallToolRequest{
		Server:     server,
		Tool:       tool,
		Arguments:  rawArgs,
		Principal:  e.principal,
		Origin:     host.OriginUser,
		OnProgress: progress.show,
		// A server's question is asked at the terminal, or declined.
		Elicit: e.elicitFunc(fs.Arg(1) == "-"),
	}
	res, err := h.CallTool(ctx, req)
	progress.done()
	// A -32042 asks the person to visit URLs first: on a terminal the
	// call is retried once they have.
	for try := 0; err != nil; try++ {
		els, ok := urlElicitationsOf(rpcErrorOf(err))
		if !ok {
			break
		}
		if try == maxURLRetries || !e.visitURLs(server+"."+termsafe.Line(tool), els, fs.Arg(1) == "-") {
			return exitFailure
		}
		res, err = h.CallTool(ctx, req)
		progress.done()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost call: %s\n", termsafe.Line(err.Error()))
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
	var app *callApp
	if tools, err := h.Tools(server); err == nil && !res.IsError {
		if i := slices.IndexFunc(tools, func(t host.Tool) bool { return t.Tool.Name == tool }); i >= 0 {
			app = localApp(server, tools[i].App)
		}
	}
	return e.printResult(res, app, server, tool, *cf.json)
}

// printResult prints a call's result, and the App the tool links (nil:
// none); an error result fails.
func (e *env) printResult(res *mcp.CallToolResult, app *callApp, server, tool string, asJSON bool) int {
	if asJSON {
		writeJSON(e.stdout, resultWithApp(res, app))
	} else {
		printContent(e.stdout, res)
	}
	if app != nil && !asJSON {
		e.printApp(app)
	}
	if res.IsError {
		fmt.Fprintf(e.stderr, "mcphost call: %s.%s returned an error result\n", server, termsafe.Line(tool))
		return exitFailure
	}
	return exitOK
}

// printContent prints a result for a person: text with its newlines and
// tabs (termsafe.Text), other content as a one-line description
// (termsafe.Line), structured content only when there is no text.
func printContent(w io.Writer, res *mcp.CallToolResult) {
	hasText := false
	l := termsafe.Line
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			hasText = true
			fmt.Fprintln(w, termsafe.Text(strings.TrimRight(c.Text, "\n")))
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", l(c.MIMEType), len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", l(c.MIMEType), len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "[resource link %s %s]\n", l(c.URI), l(c.Name))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				hasText = true
				fmt.Fprintln(w, termsafe.Text(strings.TrimRight(c.Resource.Text, "\n")))
			} else if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s %s, %d bytes]\n", l(c.Resource.URI), l(c.Resource.MIMEType), len(c.Resource.Blob))
			}
		default:
			fmt.Fprintf(w, "[%T content]\n", c)
		}
	}
	if !hasText && res.StructuredContent != nil {
		writeJSON(w, res.StructuredContent)
	}
}

// writeJSON prints v as indented JSON. encoding/json escapes C0 controls;
// termsafe.JSON escapes the DEL, C1 and bidi and other format characters it
// leaves raw, so the document decodes to the same values and prints inert.
func writeJSON(w io.Writer, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	_, _ = w.Write(termsafe.JSON(buf.Bytes()))
}

// jsonError describes why b is not valid JSON.
func jsonError(b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err.Error()
	}
	return "invalid JSON"
}
