package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An endpoint is one MCP server the gateway serves at a path.
type endpoint struct {
	g     *Gateway
	path  string
	sel   host.GatewayEndpoint
	codec codec

	server *mcp.Server
	impl   *mcp.Implementation // the gateway, as its results name it
	// implMeta is a result's _meta naming impl, encoded (recordedResult).
	implMeta []byte
	handler  http.Handler

	// table is the endpoint's catalog as of the last mirror.
	table atomic.Pointer[table]

	calls calls // running calls, for log messages

	mirrorMu sync.Mutex // one mirror at a time
	shadow   shadow     // what is registered on server, under mirrorMu
}

// table is an endpoint's catalog: its tools by served name, with the copies
// it lists (renamed, App links rewritten).
type table struct {
	cat        host.GatewayCatalog
	byName     map[string]host.GatewayTool
	advertised map[string]*mcp.Tool
	// bound are the tools whose input schema binds a parameter to an HTTP
	// header (x-mcp-header), which go-sdk checks on each call.
	bound map[string]bool
	views views // by caller

	disc   discovery   // how tools/list answers (discovery.go)
	search searchIndex // the tool search's index, built on first use
}

// shadow is the part of the catalog registered on the *mcp.Server, by name
// or URI, with the JSON it was registered with. Registering is how go-sdk
// sends list_changed; and tools/call, prompts/get and resources/read run
// through go-sdk's own handling of a registered entry (which marks a
// 2026-07-28 result complete or input_required), into handlers that ask
// the host. The lists are answered by the middleware, per caller.
type shadow struct {
	tools, prompts, resources, templates map[string][]byte
	// changes are the servers' list_changed counts as of the last mirror.
	changes map[string]host.ListChanges
}

func newEndpoint(g *Gateway, path string, sel host.GatewayEndpoint) *endpoint {
	e := &endpoint{g: g, path: path, sel: sel}
	if !sel.Prefix {
		e.codec = codec{server: sel.Servers[0]}
	}
	caps := &mcp.ServerCapabilities{
		Tools:       &mcp.ToolCapabilities{ListChanged: true},
		Prompts:     &mcp.PromptCapabilities{ListChanged: true},
		Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Completions: &mcp.CompletionCapabilities{},
		Logging:     &mcp.LoggingCapabilities{},
	}
	if g.h.GatewayAppsOn(sel) {
		// Set when the endpoint is made: go-sdk's capabilities are fixed
		// for the life of a server.
		caps.AddExtension(apps.Extension, map[string]any{"mimeTypes": []string{apps.MIMEType}})
	}
	var sessionID func() string // go-sdk's own random ids on a single node
	if g.opts.Cluster.Clustered() {
		// "<replica>.<random>": any replica can tell the owner.
		sessionID = g.opts.Cluster.SessionID
	}
	e.impl = &mcp.Implementation{Name: "mcphost", Title: "mcphost gateway", Version: g.opts.Version}
	e.implMeta, _ = json.Marshal(mcp.Meta{mcp.MetaKeyServerInfo: e.impl}) // nil on an error: not used
	e.server = mcp.NewServer(e.impl, &mcp.ServerOptions{
		Capabilities: caps,
		GetSessionID: sessionID,
		Logger:       g.log,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 0, "private" // lists depend on the principal
		},
		SubscribeHandler:   e.subscribe,
		UnsubscribeHandler: e.unsubscribe,
	})
	e.server.AddReceivingMiddleware(e.middleware)
	// Any URI may be read (a resource need not be listed, and a
	// template's matches are the upstream's to decide): one template that
	// matches every URI sends each read to readHandler. It is never listed:
	// the middleware answers resources/templates/list.
	e.server.AddResourceTemplate(&mcp.ResourceTemplate{Name: "any", URITemplate: "{+uri}"}, e.readHandler)
	e.shadow = shadow{tools: map[string][]byte{}, prompts: map[string][]byte{}, resources: map[string][]byte{}, templates: map[string][]byte{}}
	getServer := func(*http.Request) *mcp.Server { return e.server }
	bearer := auth.RequireBearerToken(tokenVerifier, nil)
	modern := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       g.log,
		MaxRequestBodyBytes:          maxBodyBytes,
		PropagateRequestCancellation: true,
	})
	legacy := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Logger:              g.log,
		MaxRequestBodyBytes: maxBodyBytes,
		// No SessionTimeout: the gateway keeps each session's idle time
		// (idle.go), since it answers some of its requests itself.
		// A legacy client whose SSE stream dropped resumes it with
		// Last-Event-ID (on this daemon: the store is in memory).
		EventStore: g.events,
	})
	e.handler = bearer(eraDispatch(modern, legacy))
	e.table.Store(&table{byName: map[string]host.GatewayTool{}, advertised: map[string]*mcp.Tool{}})
	return e
}

// serves reports whether the endpoint fronts server.
func (e *endpoint) serves(server string) bool {
	return slices.Contains(e.table.Load().cat.Servers, server)
}

// close ends the endpoint's legacy sessions (a removed endpoint's path
// answers 404 from then on, so they could not go on anyway).
func (e *endpoint) close() {
	for ss := range e.server.Sessions() {
		_ = e.g.closeSession(ss)
	}
}

// mirror rebuilds the endpoint's table from the host and diffs the
// registered catalog, so go-sdk notifies sessions of what changed only.
func (e *endpoint) mirror() {
	e.mirrorMu.Lock()
	defer e.mirrorMu.Unlock()
	cat := e.g.h.GatewayCatalog(e.sel)
	t := &table{cat: cat, byName: make(map[string]host.GatewayTool, len(cat.Tools)), advertised: make(map[string]*mcp.Tool, len(cat.Tools)),
		disc: e.discoveryOf(e.g.h.GatewayConfig())}
	for _, gt := range cat.Tools {
		if t.disc.mode != config.DiscoveryList && isMetaTool(gt.Name) {
			// The meta-tools own their names on this endpoint.
			e.g.log.Warn("gateway: a server's tool has the name of a discovery meta-tool; it is not served under it",
				"endpoint", e.path, "name", gt.Name, "server", gt.Server)
			continue
		}
		t.byName[gt.Name] = gt
		t.advertised[gt.Name] = e.advertise(gt)
		if schema, _ := t.advertised[gt.Name].InputSchema.(json.RawMessage); bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
			if t.bound == nil {
				t.bound = map[string]bool{}
			}
			t.bound[gt.Name] = true
		}
	}
	if len(t.byName) < len(cat.Tools) {
		cat.Tools = slices.DeleteFunc(slices.Clone(cat.Tools), func(gt host.GatewayTool) bool { _, ok := t.byName[gt.Name]; return !ok })
		t.cat = cat
	}
	prev := e.table.Swap(t)
	// A new mode or new pins change what tools/list answers, though what
	// is registered may be the same.
	discChanged := prev.disc.mode != t.disc.mode || !slices.Equal(prev.disc.pin, t.disc.pin)
	for server, cs := range cat.Collisions {
		for _, c := range cs {
			e.g.log.Warn("gateway: two tools have the same name; neither is served under it",
				"endpoint", e.path, "name", c.Name, "server", server, "tool", c.Tool, "withServer", c.WithServer, "withTool", c.WithTool)
		}
	}

	// A server's list_changed is passed on even when what the endpoint
	// serves came out the same: see touch.
	var told host.ListChanges // which lists a server announced since the last mirror
	for server, n := range cat.Changes {
		was := e.shadow.changes[server]
		told.Tools += since(n.Tools, was.Tools)
		told.Prompts += since(n.Prompts, was.Prompts)
		told.Resources += since(n.Resources, was.Resources)
	}
	e.shadow.changes = cat.Changes

	// Tools.
	want := make(map[string][]byte, len(t.advertised))
	for name, tool := range t.advertised {
		want[name] = mustJSON(tool)
	}
	// The meta-tools are registered in every mode, so that a request
	// whose URL asks for search (?discovery=search) can call them; in list
	// mode they answer as unknown (metaHandler). Only a passthrough
	// server's own tool of that name, in list mode, keeps it.
	for _, m := range metaTools() {
		if _, taken := want[m.Name]; !taken {
			want[m.Name] = mustJSON(m)
		}
	}
	addTool := func(name string) {
		if isMetaTool(name) && t.advertised[name] == nil {
			m := metaTool(name)
			e.register(func() { e.server.AddTool(m, e.metaHandler(name)) }, "tool", name)
			return
		}
		tool := t.advertised[name]
		e.register(func() { e.server.AddTool(tool, e.toolHandler) }, "tool", name)
	}
	if !diff(e.shadow.tools, want, addTool, func(names []string) { e.server.RemoveTools(names...) }) && (told.Tools > 0 || discChanged) {
		touch(e.shadow.tools, addTool)
	}

	// Prompts, resources and templates of the endpoint's servers.
	prompts := map[string]*mcp.Prompt{}
	resources := map[string]*mcp.Resource{}
	templates := map[string]*mcp.ResourceTemplate{}
	for _, server := range cat.Servers {
		ps, _ := e.g.h.Prompts(server)
		for _, p := range ps {
			if p != nil {
				cp := *p
				cp.Name = e.codec.promptName(server, p.Name)
				prompts[cp.Name] = &cp
			}
		}
		rs, ts, _ := e.g.h.Resources(server)
		for _, r := range rs {
			if r != nil {
				cp := *r
				cp.URI = e.codec.uri(server, r.URI)
				resources[cp.URI] = &cp
			}
		}
		for _, rt := range ts {
			if rt != nil {
				cp := *rt
				cp.URITemplate = e.codec.uri(server, rt.URITemplate)
				templates[cp.URITemplate] = &cp
			}
		}
	}
	addPrompt := func(name string) {
		p := prompts[name]
		e.register(func() { e.server.AddPrompt(p, e.promptHandler) }, "prompt", name)
	}
	if !diff(e.shadow.prompts, jsonOf(prompts), addPrompt, func(names []string) { e.server.RemovePrompts(names...) }) && told.Prompts > 0 {
		touch(e.shadow.prompts, addPrompt)
	}
	addResource := func(uri string) {
		r := resources[uri]
		e.register(func() { e.server.AddResource(r, e.readHandler) }, "resource", uri)
	}
	addTemplate := func(uri string) {
		rt := templates[uri]
		e.register(func() { e.server.AddResourceTemplate(rt, e.readHandler) }, "resource template", uri)
	}
	changed := diff(e.shadow.resources, jsonOf(resources), addResource, func(uris []string) { e.server.RemoveResources(uris...) })
	if diff(e.shadow.templates, jsonOf(templates), addTemplate, func(uris []string) { e.server.RemoveResourceTemplates(uris...) }) {
		changed = true
	}
	if !changed && told.Resources > 0 && !touch(e.shadow.resources, addResource) {
		touch(e.shadow.templates, addTemplate)
	}
}

// since is how many notifications came after was, of a count now at n (a
// reload that replaced the server's connection started it again at 0).
func since(n, was uint64) uint64 {
	if n < was {
		return n
	}
	return n - was
}

// touch registers one entry of have again as it is (the first by name),
// which makes go-sdk send that list's list_changed: the way a server's
// notification reaches the endpoint's clients when the list came out the
// same. It reports false when have is empty (nothing to send it with).
func touch(have map[string][]byte, add func(string)) bool {
	if len(have) == 0 {
		return false
	}
	add(slices.Min(slices.Collect(maps.Keys(have))))
	return true
}

// register runs one go-sdk registration, which panics on what it finds
// invalid (a tool without an object input schema, a malformed URI
// template): an upstream's bad entry is logged and left out of the
// notifications, never the daemon's end.
func (e *endpoint) register(add func(), kind, name string) {
	defer func() {
		if r := recover(); r != nil {
			e.g.log.Warn("gateway: go-sdk refused to register an upstream entry; clients are not notified of it", "endpoint", e.path, "kind", kind, "name", name, "reason", fmt.Sprint(r))
		}
	}()
	add()
}

// diff applies want to have: add is called for each new or changed key,
// remove once with every key that is gone. It reports whether anything
// changed.
func diff(have, want map[string][]byte, add func(string), remove func([]string)) bool {
	changed := false
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		remove(gone)
		for _, k := range gone {
			delete(have, k)
		}
		changed = true
	}
	for k, v := range want {
		if old, ok := have[k]; ok && bytes.Equal(old, v) {
			continue
		}
		add(k)
		have[k] = v
		changed = true
	}
	return changed
}

func jsonOf[T any](m map[string]T) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = mustJSON(v)
	}
	return out
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}

// advertise returns the tool as the endpoint lists it: its served name and,
// on an aggregate endpoint, its App's ui:// link rewritten to the
// endpoint's URI (both the _meta.ui.resourceUri form and the older flat
// ui/resourceUri key).
func (e *endpoint) advertise(gt host.GatewayTool) *mcp.Tool {
	cp := *gt.Tool
	cp.Name = gt.Name
	// The schemas are encoded once per table, not on every tools/list: a
	// decoded schema is a map that encoding/json walks by reflection.
	cp.InputSchema = rawSchema(cp.InputSchema)
	cp.OutputSchema = rawSchema(cp.OutputSchema)
	if gt.App == nil {
		// A tool whose App is off (or that links none) is listed without
		// its link, so a client does not render what the host would not.
		if hasUIMeta(cp.Meta) {
			cp.Meta = withoutUIMeta(cp.Meta)
		}
		return &cp
	}
	if e.codec.aggregate() {
		cp.Meta = rewriteUIMeta(cp.Meta, func(uri string) string { return e.codec.uri(gt.Server, uri) })
	}
	return &cp
}

// rawSchema returns a schema as JSON (nil stays nil; one that does not
// encode is kept as it is, for go-sdk to report).
func rawSchema(schema any) any {
	if schema == nil {
		return nil
	}
	b, ok := schema.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(schema); err != nil {
			return schema
		}
	}
	return json.RawMessage(b)
}

func hasUIMeta(m mcp.Meta) bool {
	_, a := m["ui"]
	_, b := m["ui/resourceUri"]
	return a || b
}

func withoutUIMeta(m mcp.Meta) mcp.Meta {
	out := maps.Clone(m)
	if ui, ok := out["ui"].(map[string]any); ok {
		ui = maps.Clone(ui)
		delete(ui, "resourceUri")
		out["ui"] = ui
	}
	delete(out, "ui/resourceUri")
	return out
}

func rewriteUIMeta(m mcp.Meta, enc func(string) string) mcp.Meta {
	out := maps.Clone(m)
	if ui, ok := out["ui"].(map[string]any); ok {
		ui = maps.Clone(ui)
		if u, ok := ui["resourceUri"].(string); ok {
			ui["resourceUri"] = enc(u)
		}
		out["ui"] = ui
	}
	if u, ok := out["ui/resourceUri"].(string); ok {
		out["ui/resourceUri"] = enc(u)
	}
	return out
}
