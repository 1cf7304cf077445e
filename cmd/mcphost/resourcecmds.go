package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// `mcphost resources` and `mcphost prompts`: what a server offers besides
// tools, listed, read and got through the daemon (or locally with -local),
// as the principal of -as sees them.

// offerings is where resources and prompts come from: the daemon's API or
// a host in this process.
type offerings interface {
	servers(ctx context.Context) ([]string, error)
	resources(ctx context.Context, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error)
	read(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
	prompts(ctx context.Context, server string) ([]*mcp.Prompt, error)
	prompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
}

// openOfferings returns the daemon's or, without one, a local host's with
// the servers named (all for nil).
func (e *env) openOfferings(ctx context.Context, cf clientFlags, names []string) (offerings, int) {
	if d, code := e.daemonOf(ctx, cf); d != nil || code >= 0 {
		if d == nil {
			return nil, code
		}
		return daemonOfferings{d}, exitOK
	}
	h, _, code := e.openHost(ctx, cf, names)
	if h == nil {
		return nil, code
	}
	return localOfferings{h: h, c: host.Caller{Principal: e.principal, Origin: host.OriginUser}}, exitOK
}

type localOfferings struct {
	h *host.Host
	c host.Caller
}

func (l localOfferings) servers(context.Context) ([]string, error) {
	var names []string
	for _, s := range l.h.Servers() {
		if s.State == host.StateReady {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

func (l localOfferings) resources(ctx context.Context, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	return l.h.ResourcesFor(ctx, l.c, server)
}

func (l localOfferings) read(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	return l.h.ReadResource(ctx, l.c, "", server, uri, nil)
}

func (l localOfferings) prompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	return l.h.PromptsFor(ctx, l.c, server)
}

func (l localOfferings) prompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return l.h.GetPrompt(ctx, l.c, "", server, &mcp.GetPromptParams{Name: name, Arguments: args}, nil)
}

type daemonOfferings struct{ d *apiclient.Client }

func (o daemonOfferings) servers(ctx context.Context) ([]string, error) {
	statuses, err := daemonServers(ctx, o.d)
	var names []string
	for _, s := range statuses {
		if s.State == host.StateReady {
			names = append(names, s.Name)
		}
	}
	return names, err
}

func (o daemonOfferings) resources(ctx context.Context, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	return o.d.Resources(ctx, server)
}

func (o daemonOfferings) read(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	session, err := cliSession(ctx, o.d)
	if err != nil {
		return nil, err
	}
	return o.d.ReadResource(ctx, session, server, uri)
}

func (o daemonOfferings) prompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	return o.d.Prompts(ctx, server)
}

func (o daemonOfferings) prompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	session, err := cliSession(ctx, o.d)
	if err != nil {
		return nil, err
	}
	return o.d.GetPrompt(ctx, session, server, name, args)
}

// resources runs `mcphost resources [SERVER]` and `mcphost resources read
// SERVER URI`.
func (e *env) resources(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("resources", "[CLIENT FLAGS] [SERVER] | [CLIENT FLAGS] [-o FILE] read SERVER URI")
	outFile := fs.String("o", "", "read: write the (first) content's bytes to `FILE` instead of printing it")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.Arg(0) == "read" {
		// Flags may also follow "read".
		if code := parseFlags(fs, fs.Args()[1:]); code >= 0 {
			return code
		}
		if fs.NArg() != 2 {
			fs.Usage()
			return exitUsage
		}
		return e.readResource(ctx, cf, fs.Arg(0), fs.Arg(1), *outFile)
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	defer e.closeAll()
	o, servers, code := e.listedServers(ctx, cf, "resources", fs.Arg(0))
	if o == nil {
		return code
	}
	type listing struct {
		Server    string                  `json:"server"`
		Resources []*mcp.Resource         `json:"resources"`
		Templates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	}
	var all []listing
	code = exitOK
	for _, s := range servers {
		res, tpl, err := o.resources(ctx, s)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost resources: %s: %s\n", s, termsafe.Line(err.Error()))
			code = exitFailure
			continue
		}
		all = append(all, listing{Server: s, Resources: nonNil(res), Templates: nonNil(tpl)})
	}
	if *cf.json {
		writeJSON(e.stdout, all)
		return code
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, l := range all {
		for _, r := range l.Resources {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Server, termsafe.Line(r.URI), termsafe.Line(r.MIMEType), termsafe.Line(firstLine(titled(r.Title, r.Name, r.Description))))
		}
		for _, t := range l.Templates {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Server, termsafe.Line(t.URITemplate), termsafe.Line(t.MIMEType), termsafe.Line(firstLine("template: "+titled(t.Title, t.Name, t.Description))))
		}
	}
	tw.Flush()
	return code
}

// readResource runs `mcphost resources read SERVER URI`: text is printed,
// a blob is described, or written whole to -o FILE.
func (e *env) readResource(ctx context.Context, cf clientFlags, server, uri, outFile string) int {
	defer e.closeAll()
	o, code := e.openOfferings(ctx, cf, []string{server})
	if o == nil {
		return code
	}
	res, err := o.read(ctx, server, uri)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost resources read: %s\n", termsafe.Line(err.Error()))
		return exitCodeOf(err)
	}
	if outFile != "" {
		if len(res.Contents) == 0 {
			fmt.Fprintf(e.stderr, "mcphost resources read: %s has no contents\n", termsafe.Line(uri))
			return exitFailure
		}
		c := res.Contents[0]
		data := c.Blob
		if data == nil {
			data = []byte(c.Text)
		}
		if err := os.WriteFile(outFile, data, 0o644); err != nil {
			fmt.Fprintf(e.stderr, "mcphost resources read: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(e.stderr, "wrote %d bytes (%s) to %s\n", len(data), termsafe.Line(c.MIMEType), outFile)
		return exitOK
	}
	if *cf.json {
		writeJSON(e.stdout, res)
		return exitOK
	}
	for _, c := range res.Contents {
		switch {
		case c.Blob != nil:
			fmt.Fprintf(e.stdout, "[%s %s, %d bytes; -o FILE saves it]\n", termsafe.Line(c.URI), termsafe.Line(c.MIMEType), len(c.Blob))
		default:
			fmt.Fprintln(e.stdout, termsafe.Text(strings.TrimRight(c.Text, "\n")))
		}
	}
	return exitOK
}

// prompts runs `mcphost prompts [SERVER]` and `mcphost prompts get
// SERVER.PROMPT [KEY=VALUE...]`.
func (e *env) prompts(ctx context.Context, args []string) int {
	fs, cf := e.clientFlagSet("prompts", "[CLIENT FLAGS] [SERVER] | [CLIENT FLAGS] get SERVER.PROMPT [KEY=VALUE...]")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.Arg(0) == "get" {
		// Flags may also follow "get".
		if code := parseFlags(fs, fs.Args()[1:]); code >= 0 {
			return code
		}
		if fs.NArg() < 1 {
			fs.Usage()
			return exitUsage
		}
		return e.getPrompt(ctx, cf, fs.Args())
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	defer e.closeAll()
	o, servers, code := e.listedServers(ctx, cf, "prompts", fs.Arg(0))
	if o == nil {
		return code
	}
	type listing struct {
		Server  string        `json:"server"`
		Prompts []*mcp.Prompt `json:"prompts"`
	}
	var all []listing
	code = exitOK
	for _, s := range servers {
		ps, err := o.prompts(ctx, s)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost prompts: %s: %s\n", s, termsafe.Line(err.Error()))
			code = exitFailure
			continue
		}
		all = append(all, listing{Server: s, Prompts: nonNil(ps)})
	}
	if *cf.json {
		writeJSON(e.stdout, all)
		return code
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, l := range all {
		for _, p := range l.Prompts {
			var params []string
			for _, a := range p.Arguments {
				n := a.Name
				if a.Required {
					n += "*"
				}
				params = append(params, n)
			}
			args := ""
			if len(params) > 0 {
				args = "(" + strings.Join(params, ", ") + ")"
			}
			fmt.Fprintf(tw, "%s.%s\t%s\t%s\n", l.Server, termsafe.Line(p.Name), termsafe.Line(args), termsafe.Line(firstLine(titled(p.Title, "", p.Description))))
		}
	}
	tw.Flush()
	return code
}

// getPrompt runs `mcphost prompts get SERVER.PROMPT [KEY=VALUE...]` and
// prints the messages, one "role: text" each.
func (e *env) getPrompt(ctx context.Context, cf clientFlags, args []string) int {
	server, name, ok := strings.Cut(args[0], ".")
	if !ok || server == "" || name == "" {
		fmt.Fprintf(e.stderr, "mcphost prompts get: name the prompt as SERVER.PROMPT (got %q)\n", termsafe.Line(args[0]))
		return exitUsage
	}
	pargs := map[string]string{}
	for _, kv := range args[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			fmt.Fprintf(e.stderr, "mcphost prompts get: %q is not KEY=VALUE (prompt arguments are strings)\n", termsafe.Line(kv))
			return exitUsage
		}
		pargs[k] = v
	}
	defer e.closeAll()
	o, code := e.openOfferings(ctx, cf, []string{server})
	if o == nil {
		return code
	}
	res, err := o.prompt(ctx, server, name, pargs)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost prompts get: %s\n", termsafe.Line(err.Error()))
		return exitCodeOf(err)
	}
	if *cf.json {
		writeJSON(e.stdout, res)
		return exitOK
	}
	if res.Description != "" {
		fmt.Fprintf(e.stdout, "# %s\n", termsafe.Line(res.Description))
	}
	for _, m := range res.Messages {
		fmt.Fprintf(e.stdout, "%s: ", termsafe.Line(string(m.Role)))
		printContent(e.stdout, &mcp.CallToolResult{Content: []mcp.Content{m.Content}})
	}
	return exitOK
}

// listedServers opens the offerings for a listing command and returns
// them with the servers to list: the one named, or every ready one. A nil
// offerings means stop with code.
func (e *env) listedServers(ctx context.Context, cf clientFlags, what, server string) (offerings, []string, int) {
	o, code := e.openOfferings(ctx, cf, serverNames(server))
	if o == nil {
		return nil, nil, code
	}
	if server != "" {
		return o, []string{server}, exitOK
	}
	servers, err := o.servers(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost %s: %s\n", what, termsafe.Line(err.Error()))
		return nil, nil, exitFailure
	}
	return o, servers, exitOK
}

// serverNames is the servers a local host connects for server ("" all).
func serverNames(server string) []string {
	if server == "" {
		return nil
	}
	return []string{server}
}

// titled is how a listing describes an item: its title (or name) and
// description.
func titled(title, name, desc string) string {
	if title == "" {
		title = name
	}
	switch {
	case title != "" && desc != "":
		return title + " — " + desc
	case title != "":
		return title
	default:
		return desc
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// exitCodeOf is the exit status of a failed read or get: 2 for what the
// caller named wrong (an unknown server, resource or prompt), 1 otherwise.
func exitCodeOf(err error) int {
	if host.IsNotFound(err) {
		return exitUsage
	}
	var de *apiclient.Error
	if errors.As(err, &de) && (de.Status == http.StatusNotFound || de.Status == http.StatusBadRequest) {
		return exitUsage
	}
	return exitFailure
}
