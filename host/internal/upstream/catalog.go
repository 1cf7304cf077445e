package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/cache"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/mcphost/mcphost/negotiate"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// undeclaredListTimeout bounds asking a legacy server for a list it did not
// declare; silence there costs at most this much of the discovery window.
const undeclaredListTimeout = 2 * time.Second

// Catalog is everything a server offers, fetched whole after each connect and
// after a list_changed notification. Its lists are immutable once built; only the schema cache fills in.
type Catalog struct {
	schemaMu sync.Mutex
	schemas  map[string]*jsonschema.Resolved    // compiled input schemas, filled lazily
	outputs  map[string]*jsonschema.Resolved    // compiled output schemas, filled lazily
	flats    map[*jsonschema.Resolved]flatCheck // the input schemas' flat checks, filled lazily

	Tools     []*mcp.Tool
	ToolIndex map[string]*mcp.Tool
	Rejected  []RejectedTool // tools the server listed that tools and toolIndex leave out
	Unchecked []RejectedTool // tools whose input schema does not compile, with the reason
	Prompts   []*mcp.Prompt
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
}

// isMethodNotFound reports whether err is a JSON-RPC "method not found"
// error: a server that lists a capability but not its method has none.
func isMethodNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

// FetchCatalog lists tools, prompts, resources and resource templates, each
// only when the server declares the capability.
func FetchCatalog(ctx context.Context, cs *mcp.ClientSession, lc *listCache) (*Catalog, error) {
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	cat := &Catalog{ToolIndex: map[string]*mcp.Tool{}}
	if caps.Tools != nil {
		if err := cat.fetchTools(ctx, cs, lc); err != nil {
			return nil, err
		}
	}
	// A legacy server may serve prompts and resources without declaring
	// them (go-sdk gates nothing client-side), so legacy sessions ask
	// anyway, briefly, and take any failure as "none". Modern servers
	// declare what they have.
	legacy := cs.InitializeResult() != nil && cs.InitializeResult().ProtocolVersion < negotiate.ModernVersion
	undeclared := func(declared bool) (context.Context, context.CancelFunc, bool) {
		if declared {
			return ctx, func() {}, true
		}
		if !legacy {
			return nil, nil, false
		}
		c, cancel := context.WithTimeout(ctx, undeclaredListTimeout)
		return c, cancel, true
	}
	if lctx, cancel, ok := undeclared(caps.Prompts != nil); ok {
		err := cat.fetchPrompts(lctx, cs, lc, caps.Prompts != nil)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if lctx, cancel, ok := undeclared(caps.Resources != nil); ok {
		err := cat.fetchResources(lctx, cs, lc, caps.Resources != nil)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// fetchTools lists the server's tools (a -32601 is none) and admits them
// into cat: as the memo has them when the list is the one admitted last,
// else checking their names and compiling their schemas, with a warning
// for each tool left out or left unchecked.
func (cat *Catalog) fetchTools(ctx context.Context, cs *mcp.ClientSession, lc *listCache) error {
	listed, err := cachedList(ctx, lc, "tools/list", func(ctx context.Context, cursor string) ([]*mcp.Tool, string, cache.Meta, error) {
		r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", cache.Meta{}, err
		}
		return r.Tools, r.NextCursor, cache.MetaOf(r), nil
	})
	if err != nil && !isMethodNotFound(err) {
		return err
	}
	if m := lc.toolsFrom(listed); m != nil {
		cat.Tools, cat.ToolIndex, cat.Rejected, cat.Unchecked, cat.schemas = m.tools, m.toolIndex, m.rejected, m.unchecked, m.schemas
		return nil
	}
	keepSchemaOrder(listed)
	cat.Tools, cat.Rejected = admitTools(listed)
	for _, t := range cat.Tools {
		cat.ToolIndex[t.Name] = t
	}
	for _, r := range cat.Rejected {
		lc.log().Warn("tool left out of the catalog", "tool", r.Name, "reason", r.Reason)
	}
	cat.CompileSchemas()
	for _, u := range cat.Unchecked {
		lc.log().Warn("tool input schema does not compile; its arguments are not checked", "tool", u.Name, "reason", u.Reason)
	}
	lc.remember(listed, cat)
	return nil
}

// keepSchemaOrder puts back each tool's input schema as its server wrote
// it, when the transport noted it (transport.OrderedSchema): go-sdk decodes
// it into a map, which loses the order of its properties.
func keepSchemaOrder(tools []*mcp.Tool) {
	for _, t := range tools {
		if raw := transport.OrderedSchema(t.InputSchema); raw != nil {
			t.InputSchema = raw
		}
	}
}

// fetchPrompts lists the server's prompts into cat. The error is one to
// fail the catalog with: none when the server did not declare prompts
// (a legacy session asked anyway) or answered -32601.
func (cat *Catalog) fetchPrompts(ctx context.Context, cs *mcp.ClientSession, lc *listCache, declared bool) error {
	var err error
	cat.Prompts, err = cachedList(ctx, lc, "prompts/list", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, cache.Meta, error) {
		r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", cache.Meta{}, err
		}
		return r.Prompts, r.NextCursor, cache.MetaOf(r), nil
	})
	if err != nil && declared && !isMethodNotFound(err) {
		return err
	}
	return nil
}

// fetchResources lists the server's resources, then its resource
// templates, into cat. The error is one to fail the catalog with, as in
// fetchPrompts.
func (cat *Catalog) fetchResources(ctx context.Context, cs *mcp.ClientSession, lc *listCache, declared bool) error {
	var err error
	cat.Resources, err = cachedList(ctx, lc, "resources/list", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, cache.Meta, error) {
		r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", cache.Meta{}, err
		}
		return r.Resources, r.NextCursor, cache.MetaOf(r), nil
	})
	if err != nil && declared && !isMethodNotFound(err) {
		return err
	}
	cat.Templates, err = cachedList(ctx, lc, "resources/templates/list", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, cache.Meta, error) {
		r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", cache.Meta{}, err
		}
		return r.ResourceTemplates, r.NextCursor, cache.MetaOf(r), nil
	})
	if err != nil && declared && !isMethodNotFound(err) {
		return err
	}
	return nil
}

// maxToolNameLen is the longest tool name the catalog admits.
const maxToolNameLen = 128

// toolNameProblem says why name breaks the tool-name rule of the MCP spec,
// or returns "" when it keeps it. The rule (specification 2025-11-25,
// server/tools, "Tool Names"):
//
//	Tool names SHOULD be between 1 and 128 characters in length (inclusive).
//	Tool names SHOULD be considered case-sensitive.
//	The following SHOULD be the only allowed characters: uppercase and
//	lowercase ASCII letters (A-Z, a-z), digits (0-9), underscore (_),
//	hyphen (-), and dot (.)
//
// The spec says SHOULD; the host makes it a MUST for what it admits, since
// a name is shown to people and models and used as a key (SERVER.TOOL), and
// a control or bidi character in it can hide what is being called.
func toolNameProblem(name string) string {
	if name == "" {
		return "the name is empty; the MCP spec asks for 1 to 128 characters"
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' {
			continue
		}
		what := fmt.Sprintf("the byte 0x%02x (not UTF-8)", c)
		if r, size := utf8.DecodeRuneInString(name[i:]); r != utf8.RuneError || size > 1 {
			what = fmt.Sprintf("%U", r)
		}
		return fmt.Sprintf("the name contains %s at byte %d; the MCP spec allows only A-Z, a-z, 0-9, _, - and .", what, i)
	}
	if len(name) > maxToolNameLen {
		return fmt.Sprintf("the name has %d characters; the MCP spec allows at most %d", len(name), maxToolNameLen)
	}
	return ""
}

// admitTools returns the tools of a list whose names keep the MCP spec's
// tool-name rule, in the server's order, and a RejectedTool for each of the
// others. Of two tools with the same name the first is kept: the spec asks
// for names unique within a server, and which one a call reaches must not
// depend on the order of a map. Null entries are dropped without a report.
// The list itself is not changed (it may be shared through the cache).
func admitTools(tools []*mcp.Tool) (admitted []*mcp.Tool, rejected []RejectedTool) {
	admitted = make([]*mcp.Tool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		reason := toolNameProblem(t.Name)
		if reason == "" && seen[t.Name] {
			reason = "the server listed a tool of this name before; the first one is kept"
		}
		if reason != "" {
			rejected = append(rejected, RejectedTool{Name: termsafe.Line(t.Name), Reason: reason})
			continue
		}
		seen[t.Name] = true
		admitted = append(admitted, t)
	}
	return admitted, rejected
}

// listCache is a server's view of the host cache: whole lists are kept
// under (server, method) in the public partition when the server marks them
// public, else in the partition of the host's own session with this server
// (one session per server serves every principal today).
type listCache struct {
	c      *cache.Cache
	server string // the cache key's server: the name, or name NUL principal for a per-principal session
	// partition is the private partition: sessionPartition for the host's
	// shared session, the principal for its own session (oauth.go).
	partition string
	logger    *slog.Logger // the server's logger, for what a fetch finds wrong; nil discards

	// memo is the tool part of the last catalog built from a tools list.
	// A refresh that the cache answers gets the very same list back and
	// reuses it, instead of admitting the tools and compiling their input
	// schemas again (most of a cached refresh's cost otherwise).
	memoMu sync.Mutex
	memo   *toolsMemo
}

// toolsMemo is what a catalog built from the tools list src: all of it is
// read only once built, so catalogs may share it.
type toolsMemo struct {
	src       []*mcp.Tool
	tools     []*mcp.Tool
	toolIndex map[string]*mcp.Tool
	rejected  []RejectedTool
	unchecked []RejectedTool
	schemas   map[string]*jsonschema.Resolved
}

// toolsFrom returns the memo built from listed, nil when listed is another
// list (or empty: nothing to save).
func (lc *listCache) toolsFrom(listed []*mcp.Tool) *toolsMemo {
	if lc == nil || len(listed) == 0 {
		return nil
	}
	lc.memoMu.Lock()
	defer lc.memoMu.Unlock()
	if m := lc.memo; m != nil && len(m.src) == len(listed) && &m.src[0] == &listed[0] {
		return m
	}
	return nil
}

// remember keeps the tool part of cat, built from listed.
func (lc *listCache) remember(listed []*mcp.Tool, cat *Catalog) {
	if lc == nil || len(listed) == 0 {
		return
	}
	m := &toolsMemo{src: listed, tools: cat.Tools, toolIndex: cat.ToolIndex, rejected: cat.Rejected, unchecked: cat.Unchecked, schemas: cat.schemas}
	lc.memoMu.Lock()
	lc.memo = m
	lc.memoMu.Unlock()
}

// log returns the server's logger, a discarding one when there is none.
func (lc *listCache) log() *slog.Logger {
	if lc == nil || lc.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return lc.logger
}

// sessionPartition is the cache partition of the host's shared session.
const sessionPartition = "mcphost-session"

// part is the list cache's private partition.
func (lc *listCache) part() string {
	if lc.partition == "" {
		return sessionPartition
	}
	return lc.partition
}

// cachedList returns a whole list from the cache when the server's ttlMs
// says it is still fresh, else walks its pages (cache.Walk: loop guard, no
// partial lists, one restart on an invalid cursor) and stores the result
// with the aggregate ttlMs and cacheScope. With lc nil it only walks.
func cachedList[T any](ctx context.Context, lc *listCache, method string, page func(ctx context.Context, cursor string) ([]T, string, cache.Meta, error)) ([]T, error) {
	walk := func(ctx context.Context) (any, cache.Meta, error) {
		items, m, err := cache.Walk(ctx, method, page)
		return items, m, err
	}
	if lc == nil || lc.c == nil {
		v, _, err := walk(ctx)
		if err != nil {
			return nil, err
		}
		return v.([]T), nil
	}
	v, _, err := lc.c.Do(ctx, cache.Key{Server: lc.server, Method: method}, lc.part(), walk)
	if err != nil {
		return nil, err
	}
	return v.([]T), nil
}

func SortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// OutputValidator returns a check of structuredContent against the tool's
// output schema, for the result plugins' output; nil when the tool has no
// output schema or it cannot be compiled.
func (cat *Catalog) OutputValidator(tool *mcp.Tool) func(any) error {
	if tool.OutputSchema == nil {
		return nil
	}
	cat.schemaMu.Lock()
	rs, ok := cat.outputs[tool.Name]
	if !ok {
		if cat.outputs == nil {
			cat.outputs = map[string]*jsonschema.Resolved{}
		}
		if raw, err := json.Marshal(tool.OutputSchema); err == nil {
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err == nil {
				rs, _ = s.Resolve(nil)
			}
		}
		cat.outputs[tool.Name] = rs
	}
	cat.schemaMu.Unlock()
	if rs == nil {
		return nil
	}
	return func(v any) error {
		// The schema validates decoded JSON values: round-trip v so that
		// typed values are seen as JSON.
		raw, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var j any
		if err := json.Unmarshal(raw, &j); err != nil {
			return err
		}
		if err := rs.Validate(j); err != nil {
			return fmt.Errorf("structuredContent does not match the output schema of %s: %w", tool.Name, err)
		}
		return nil
	}
}
