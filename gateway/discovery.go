package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/toolsearch"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progressive discovery: in search mode an endpoint lists three fixed
// meta-tools (and the pinned tools) instead of every tool of the caller's
// view. search_tools ranks the view, describe_tools returns whole
// definitions and call_tool is a tools/call of the named tool through the
// same path as a direct one. Nothing is kept per session: what is listed
// depends on the caller's view only, so it is the same before and after
// any search, and a 2026-07-28 client stays stateless.

// The meta-tools' names: without "__", so no SERVER__TOOL is ever one of
// them (and a server's own tool of that name is not served in search mode
// on a passthrough endpoint: see mirror).
const (
	metaSearch   = "search_tools"
	metaDescribe = "describe_tools"
	metaCall     = "call_tool"
)

// alwaysLoadKey marks a tool that a client which defers tools (Claude
// Code) should load at once rather than behind its own search.
const alwaysLoadKey = "anthropic/alwaysLoad"

// Bounds of the meta-tools' arguments and results.
const (
	maxQueryBytes   = 4096     // a longer query is refused
	defaultLimit    = 5        // search_tools' limit when not given
	maxLimit        = 20       // search_tools' largest limit
	maxDescribe     = 10       // describe_tools' most names
	searchBudget    = 8 << 10  // bytes of full entries in one search_tools result
	maxSelect       = maxLimit // names in one select:
	serversInSearch = 20       // servers named in search_tools' description
	wordsPerServer  = 5        // words of a server's tools in it
)

// selfDeferringClients are the clientInfo names of clients that defer
// tools on their own: in "auto" they get the full list.
var selfDeferringClients = []string{"claude-code"}

// discovery is how one endpoint's tools/list answers, from the config.
type discovery struct {
	mode      string // config.DiscoveryList, Search or Auto
	pin       []string
	threshold int    // bytes, for auto
	server    string // a passthrough endpoint's one server; "" on an aggregate
}

// discoveryOf returns the endpoint's discovery settings in cfg.
func (e *endpoint) discoveryOf(cfg config.Gateway) discovery {
	name, _ := strings.CutPrefix(e.path, pathEndpoints)
	if name == e.path {
		name = ""
	}
	mode, pin := cfg.DiscoveryOf(name)
	return discovery{mode: mode, pin: pin, threshold: cfg.DiscoveryThreshold, server: e.codec.server}
}

// pinned returns the view's tool a pin names: the tool of that served
// name or, on a passthrough endpoint (/mcp/servers/NAME, whose tools keep
// their plain names), the tool SERVER__TOOL names when SERVER is the
// endpoint's one server.
func (d discovery) pinned(v *view, pin string) *mcp.Tool {
	if t := v.names[pin]; t != nil || d.server == "" {
		return t
	}
	if plain, ok := strings.CutPrefix(pin, d.server+"__"); ok {
		return v.names[plain]
	}
	return nil
}

// The ?discovery= query parameter of an MCP URL overrides the endpoint's
// mode for the request, for a client that can set nothing but a URL.
const discoveryParam = "discovery"

// discoveryExtraKey carries, in a request's auth.TokenInfo, the mode its
// URL asked for (see tokenVerifier).
const discoveryExtraKey = "mcphost.discovery"

type discoveryKey struct{}

// discoveryOverride returns the mode the request's URL asks for ("" when
// it asks none), or an error that names the accepted values.
func discoveryOverride(r *http.Request) (string, error) {
	vals, ok := r.URL.Query()[discoveryParam]
	if !ok {
		return "", nil
	}
	if len(vals) == 1 {
		switch vals[0] {
		case config.DiscoveryList, config.DiscoverySearch, config.DiscoveryAuto:
			return vals[0], nil
		}
	}
	return "", fmt.Errorf("the %s query parameter is %q; it must be given once, as \"search\" (the search_tools, describe_tools and call_tool meta-tools are listed), \"list\" (every tool is listed) or \"auto\"",
		discoveryParam, clip(strings.Join(vals, ","), 100))
}

// refuseDiscovery answers a request whose ?discovery= is not a mode with
// HTTP 400 and a JSON-RPC error (the request has not been read, so its id
// is unknown).
func refuseDiscovery(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": codeInvalidParams, "message": err.Error()}})
}

// discoveryFor returns the discovery settings of req on the view's table:
// the endpoint's, with the mode its URL asked for.
func discoveryFor(v *view, req mcp.Request) discovery {
	d := v.t.disc
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if m, ok := extra.TokenInfo.Extra[discoveryExtraKey].(string); ok && m != "" {
			d.mode = m
		}
	}
	return d
}

func isMetaTool(name string) bool {
	return name == metaSearch || name == metaDescribe || name == metaCall
}

// searching reports whether c's tools/list gets the meta-tools.
func (d discovery) searching(v *view, c host.Caller) bool {
	switch d.mode {
	case config.DiscoverySearch:
		return true
	case config.DiscoveryAuto:
		if slices.Contains(selfDeferringClients, strings.ToLower(c.Client.Name)) {
			return false
		}
		v.prepare()
		return v.size > d.threshold
	}
	return false
}

// prepare computes what search mode lists for the view, and the size of
// its whole list.
func (v *view) prepare() {
	v.searchOnce.Do(func() {
		v.size = len(mustJSON(v.tools))
		search := metaTools()
		search[0] = withDescription(search[0], searchDescription(v))
		listed := map[*mcp.Tool]bool{}
		for _, name := range v.t.disc.pin {
			if tool := v.t.disc.pinned(v, name); tool != nil && !listed[tool] {
				listed[tool] = true
				cp := *tool
				cp.Meta = withAlwaysLoad(tool.Meta)
				search = append(search, &cp)
			}
		}
		v.searchList = search
	})
}

func withAlwaysLoad(m mcp.Meta) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out[alwaysLoadKey] = true
	return out
}

func withDescription(t *mcp.Tool, d string) *mcp.Tool {
	cp := *t
	cp.Description = d
	return &cp
}

// metaTools returns the three meta-tools as registered (search_tools'
// description is the generic one; each caller's list has its own).
func metaTools() []*mcp.Tool {
	return []*mcp.Tool{metaTool(metaSearch), metaTool(metaDescribe), metaTool(metaCall)}
}

func metaTool(name string) *mcp.Tool {
	yes, no := true, false
	switch name {
	case metaSearch:
		return &mcp.Tool{Name: metaSearch, Title: "Search tools",
			Description: "Search the tools behind this gateway by what they do, and get their names and input schemas. Call this before saying a capability is unavailable; then call call_tool with a returned name. An exact name (SERVER__TOOL) or \"select:a,b\" returns those tools.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","minLength":1,"description":"What the tool should do, in a few words (for example \"create a github issue\"), an exact tool name, or select:NAME1,NAME2"},` +
				`"servers":{"type":"array","items":{"type":"string"},"description":"Only tools of these servers"},` +
				`"limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"How many tools to return"},` +
				`"detail":{"type":"string","enum":["full","brief"],"default":"full","description":"full: with input schemas; brief: names and descriptions only"}},` +
				`"required":["query"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{Title: "Search tools", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
			Meta:        mcp.Meta{alwaysLoadKey: true}}
	case metaDescribe:
		return &mcp.Tool{Name: metaDescribe, Title: "Describe tools",
			Description: "Return the whole definitions (input and output schemas, annotations) of tools by name, as search_tools returned them.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"names":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":10,"description":"Tool names, as search_tools returned them"}},` +
				`"required":["names"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{Title: "Describe tools", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
			Meta:        mcp.Meta{alwaysLoadKey: true}}
	case metaCall:
		return &mcp.Tool{Name: metaCall, Title: "Call a tool",
			Description: "Call a tool found with search_tools: name is the tool's name, arguments its arguments, matching its input schema. The result is the tool's own.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"name":{"type":"string","minLength":1,"description":"The tool's name, as search_tools returned it"},` +
				`"arguments":{"type":"object","description":"The tool's arguments"}},` +
				`"required":["name"]}`),
			Annotations: &mcp.ToolAnnotations{Title: "Call a tool", DestructiveHint: &yes, OpenWorldHint: &yes},
			Meta:        mcp.Meta{alwaysLoadKey: true}}
	}
	return nil
}

// searchDescription is search_tools' description for a view: how many
// tools of which servers, with a few words of each server's tools.
func searchDescription(v *view) string {
	type server struct {
		name  string
		tools int
		words map[string]int
	}
	var servers []*server
	by := map[string]*server{}
	for _, t := range v.tools {
		gt, ok := v.t.byName[t.Name]
		if !ok {
			continue
		}
		s := by[gt.Server]
		if s == nil {
			s = &server{name: gt.Server, words: map[string]int{}}
			by[gt.Server] = s
			servers = append(servers, s)
		}
		s.tools++
		for _, w := range nameWords(gt.Tool.Name) {
			s.words[w]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Search the %d tools of %d servers you can use through this gateway, by what they do, and get their names and input schemas.", len(v.tools), len(servers))
	if len(servers) > 0 {
		b.WriteString(" Servers: ")
		for i, s := range servers {
			if i == serversInSearch {
				fmt.Fprintf(&b, "; and %d more", len(servers)-i)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s (%d tools", s.name, s.tools)
			if ws := topWords(s.words, wordsPerServer); len(ws) > 0 {
				b.WriteString(": " + strings.Join(ws, ", "))
			}
			b.WriteString(")")
		}
		b.WriteString(".")
	}
	b.WriteString(" Call this before saying a capability is unavailable. Then call call_tool with a returned name and its arguments (describe_tools gives a tool's whole definition). An exact name (SERVER__TOOL) or \"select:a,b\" returns those tools.")
	return b.String()
}

// nameWords splits a tool's name into lower-case words (snake_case,
// kebab-case, camelCase), leaving out the commonest verbs, which say
// little about a server.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 2 {
			w := strings.ToLower(string(cur))
			switch w {
			case "get", "list", "set", "create", "update", "delete", "add", "remove", "read", "write", "the", "and", "for", "with", "all", "new":
			default:
				words = append(words, w)
			}
		}
		cur = cur[:0]
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ' || r == '/':
			flush()
			prevLower = false
			continue
		case r >= 'A' && r <= 'Z' && prevLower:
			flush()
		}
		prevLower = r >= 'a' && r <= 'z'
		cur = append(cur, r)
	}
	flush()
	return words
}

func topWords(counts map[string]int, n int) []string {
	ws := make([]string, 0, len(counts))
	for w := range counts {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if counts[ws[i]] != counts[ws[j]] {
			return counts[ws[i]] > counts[ws[j]]
		}
		return ws[i] < ws[j]
	})
	return ws[:min(n, len(ws))]
}

// instruct adds to an initialize or server/discover result, in search
// mode, instructions that say how the caller reaches its tools: through
// the meta-tools, and which servers are behind them.
func (e *endpoint) instruct(ctx context.Context, c host.Caller, req mcp.Request, res mcp.Result) {
	v := e.view(ctx, c)
	if !discoveryFor(v, req).searching(v, c) {
		return
	}
	text := searchInstructions(v)
	switch r := res.(type) {
	case *mcp.InitializeResult:
		r.Instructions = joinInstructions(r.Instructions, text)
	case *mcp.DiscoverResult:
		r.Instructions = joinInstructions(r.Instructions, text)
	}
}

func joinInstructions(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

// searchInstructions is the short text of instruct for a view.
func searchInstructions(v *view) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This gateway lists its tools through three tools: search_tools finds the tools you need by what they do (with their input schemas), describe_tools returns whole definitions, and call_tool calls a found tool by name with its arguments. Search before saying a capability is unavailable. %d tools", len(v.tools))
	if n := len(v.servers); n > 0 {
		names := v.servers[:min(n, serversInSearch)]
		fmt.Fprintf(&b, " of these servers are behind them: %s", strings.Join(names, ", "))
		if n > len(names) {
			fmt.Fprintf(&b, " and %d more", n-len(names))
		}
	} else {
		b.WriteString(" are behind them")
	}
	b.WriteString(".")
	return b.String()
}

// listSearch is tools/list in search mode.
func (e *endpoint) listSearch(v *view) *mcp.ListToolsResult {
	v.prepare()
	return &mcp.ListToolsResult{Tools: v.searchList, Cacheable: private()}
}

// searchIndex is a table's tool search ranker: document i is
// cat.Tools[i].
type searchIndex struct {
	once sync.Once
	rank toolsearch.Ranker
}

// ranker builds the table's ranker on the first search (with the config's
// embeddings, when it has a search_embeddings block: host.SearchRanker).
func (t *table) ranker(ctx context.Context, h *host.Host) toolsearch.Ranker {
	t.search.once.Do(func() {
		docs := make([]toolsearch.Doc, 0, len(t.cat.Tools))
		for _, gt := range t.cat.Tools {
			docs = append(docs, toolsearch.ToolDoc(gt.Server, gt.Tool, t.cat.Hints[gt.Server]))
		}
		t.search.rank = h.SearchRanker(ctx, docs)
	})
	return t.search.rank
}

// metaHandler answers a call of one meta-tool.
func (e *endpoint) metaHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c, err := requestCaller(ctx, r)
		if err != nil {
			return nil, err
		}
		v := e.view(ctx, c)
		if discoveryFor(v, r).mode == config.DiscoveryList {
			return nil, unknownTool(name) // list mode, by the config or the URL
		}
		var raw json.RawMessage
		if r.Params != nil {
			raw = r.Params.Arguments
		}
		switch name {
		case metaSearch:
			return e.searchTools(ctx, v, raw)
		case metaDescribe:
			return describeTools(v, raw)
		}
		return e.callThrough(ctx, c, r)
	}
}

// toolError is a result the model reads: what was wrong with its call.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// structured is a result with structuredContent and the same JSON as text.
func structured(v any) *mcp.CallToolResult {
	b := mustJSON(v)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// foundTool is one entry of search_tools' result.
type foundTool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema any                  `json:"inputSchema,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

type searchResult struct {
	Tools    []foundTool `json:"tools"`
	Total    int         `json:"total"`
	More     bool        `json:"more"`
	NotFound []string    `json:"notFound,omitempty"`
	Hint     string      `json:"hint,omitempty"`
}

func (e *endpoint) searchTools(ctx context.Context, v *view, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Query   *string  `json:"query"`
		Servers []string `json:"servers"`
		Limit   *float64 `json:"limit"`
		Detail  string   `json:"detail"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return toolError("search_tools: %v; give {\"query\": \"what the tool should do\"}", err), nil
	}
	switch {
	case in.Query == nil || strings.TrimSpace(*in.Query) == "":
		return toolError("search_tools: query is required: a few words of what the tool should do, or an exact tool name"), nil
	case len(*in.Query) > maxQueryBytes:
		return toolError("search_tools: the query has %d bytes, more than %d; give a few words", len(*in.Query), maxQueryBytes), nil
	case in.Detail != "" && in.Detail != "full" && in.Detail != "brief":
		return toolError("search_tools: detail is %q; it must be \"full\" or \"brief\"", in.Detail), nil
	}
	limit := defaultLimit
	if in.Limit != nil {
		if *in.Limit != float64(int(*in.Limit)) || *in.Limit < 1 || *in.Limit > maxLimit {
			return toolError("search_tools: limit must be a whole number from 1 to %d", maxLimit), nil
		}
		limit = int(*in.Limit)
	}
	query := strings.TrimSpace(*in.Query)
	var (
		names    []string
		total    int
		notFound []string
	)
	if sel, ok := strings.CutPrefix(query, "select:"); ok || v.names[query] != nil {
		if !ok {
			sel = query
		}
		for _, n := range strings.Split(sel, ",") {
			n = strings.TrimSpace(n)
			if n == "" || slices.Contains(names, n) || slices.Contains(notFound, n) {
				continue
			}
			if len(names)+len(notFound) == maxSelect {
				return toolError("search_tools: select: names at most %d tools", maxSelect), nil
			}
			if v.names[n] != nil {
				names = append(names, n)
			} else {
				notFound = append(notFound, n) // hidden and missing alike
			}
		}
		total, limit = len(names), len(names)
	} else {
		rank := v.t.ranker(ctx, e.g.h)
		keep := func(doc int) bool {
			gt := v.t.cat.Tools[doc]
			if len(in.Servers) > 0 && !slices.Contains(in.Servers, gt.Server) {
				return false
			}
			return v.names[gt.Name] != nil
		}
		var hits []toolsearch.Hit
		hits, total = rank.Rank(ctx, query, limit, keep)
		for _, h := range hits {
			names = append(names, v.t.cat.Tools[h.Doc].Name)
		}
		e.g.log.Debug("gateway: search_tools", "endpoint", e.path, "query_bytes", len(query), "total", total)
	}
	out := searchResult{Tools: make([]foundTool, 0, len(names)), Total: total, More: total > len(names), NotFound: notFound}
	used, cut := 0, false
	for _, n := range names {
		t := v.names[n]
		f := foundTool{Name: t.Name, Title: t.Title, Description: t.Description, Annotations: t.Annotations}
		if in.Detail != "brief" && !cut {
			schema := mustJSON(t.InputSchema)
			if used+len(schema) <= searchBudget {
				f.InputSchema = json.RawMessage(schema)
				used += len(schema)
			} else {
				cut = true
			}
		}
		out.Tools = append(out.Tools, f)
	}
	switch {
	case cut:
		out.Hint = "Some entries are brief (no input schema) to keep this result small: call describe_tools with their names before calling them."
	case in.Detail == "brief" && len(names) > 0:
		out.Hint = "Call describe_tools for a tool's input schema."
	case len(names) == 0 && len(notFound) == 0:
		out.Hint = "No tool matched. Try other words (what the tool acts on, or the service's name)."
	}
	return structured(out), nil
}

type describeResult struct {
	Tools    []*mcp.Tool `json:"tools"`
	NotFound []string    `json:"notFound,omitempty"`
}

func describeTools(v *view, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Names []string `json:"names"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return toolError("describe_tools: %v; give {\"names\": [\"SERVER__TOOL\"]}", err), nil
	}
	if len(in.Names) < 1 || len(in.Names) > maxDescribe {
		return toolError("describe_tools: names must list 1 to %d tool names", maxDescribe), nil
	}
	out := describeResult{Tools: []*mcp.Tool{}}
	for _, n := range in.Names {
		if t := v.names[n]; t != nil {
			out.Tools = append(out.Tools, t)
		} else if !slices.Contains(out.NotFound, n) {
			out.NotFound = append(out.NotFound, n)
		}
	}
	return structured(out), nil
}

// decodeArgs decodes a meta-tool's arguments (none is an empty object).
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("the arguments are not an object of the expected form (%v)", err)
	}
	return nil
}

// callThrough answers call_tool: a tools/call of the named tool, through
// the same path as a direct one (callTool). It tolerates the common
// malformations: arguments sent as a JSON string, and name nested inside
// arguments.
func (e *endpoint) callThrough(ctx context.Context, c host.Caller, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if r.Params == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "tools/call needs params"}
	}
	name, args, err := callArgs(r.Params.Arguments)
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "call_tool: " + err.Error()}
	}
	if isMetaTool(name) {
		return nil, unknownTool(name) // call_tool calls server tools only
	}
	inner := *r
	p := *r.Params
	p.Name, p.Arguments = name, args
	inner.Params = &p
	return e.callTool(ctx, c, &inner)
}

// callArgs returns the tool name and arguments of call_tool's arguments.
func callArgs(raw json.RawMessage) (string, json.RawMessage, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeArgs(raw, &in); err != nil {
		return "", nil, err
	}
	args := in.Arguments
	var s string
	if len(args) > 0 && args[0] == '"' && json.Unmarshal(args, &s) == nil {
		args = json.RawMessage(s) // arguments sent as a JSON string
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "", nil, fmt.Errorf("arguments must be an object (or a JSON string of one)")
	}
	if in.Name == "" {
		// {"arguments": {"name": "x", "arguments": {...}}}, or the
		// name among the tool's own arguments.
		if err := json.Unmarshal(obj["name"], &in.Name); err != nil || in.Name == "" {
			return "", nil, fmt.Errorf("name is required: the tool's name, as search_tools returned it")
		}
		if inner, ok := obj["arguments"]; ok && len(obj) == 2 {
			return callArgs(mustJSON(map[string]json.RawMessage{"name": mustJSON(in.Name), "arguments": inner}))
		}
		delete(obj, "name")
		args = mustJSON(obj)
	}
	return in.Name, args, nil
}
