package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on walking a paginated list. go-sdk's iterators have no loop guard
// (trap T7), so mcphost walks pages itself.
const (
	maxListPages = 64
	maxListItems = 10000
)

// undeclaredListTimeout bounds asking a legacy server for a list it did not
// declare; silence there costs at most this much of the discovery window.
const undeclaredListTimeout = 2 * time.Second

// modernVersion is the first protocol version of the modern era.
const modernVersion = "2026-07-28"

// catalog is everything a server offers, fetched whole after each connect and
// after a list_changed notification. Its lists are immutable once built; only the schema cache fills in.
type catalog struct {
	schemaMu sync.Mutex
	schemas  map[string]*jsonschema.Resolved // compiled input schemas, filled lazily

	tools     []*mcp.Tool
	toolIndex map[string]*mcp.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// pageFunc fetches one page of a list: its items and the next cursor ("" on
// the last page).
type pageFunc[T any] func(ctx context.Context, cursor string) ([]T, string, error)

// walkPages fetches every page of a list. It stops with an error when the
// server repeats a cursor, returns more than maxListPages pages or more than
// maxListItems items; it never returns a partial list.
func walkPages[T any](ctx context.Context, method string, page pageFunc[T]) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			if n == 1 {
				return nil, fmt.Errorf("%s: %w", method, err)
			}
			return nil, fmt.Errorf("%s page %d: %w", method, n, err)
		}
		all = append(all, items...)
		if len(all) > maxListItems {
			return nil, fmt.Errorf("%s: more than %d items; mcphost stops there", method, maxListItems)
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: the server repeated the pagination cursor %q on page %d; its pagination is broken", method, next, n)
		}
		if n == maxListPages {
			return nil, fmt.Errorf("%s: more than %d pages; mcphost stops there", method, maxListPages)
		}
		seen[next] = true
		cursor = next
	}
}

// isMethodNotFound reports whether err is a JSON-RPC "method not found"
// error: a server that lists a capability but not its method has none.
func isMethodNotFound(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeMethodNotFound
}

// fetchCatalog lists tools, prompts, resources and resource templates, each
// only when the server declares the capability.
func fetchCatalog(ctx context.Context, cs *mcp.ClientSession) (*catalog, error) {
	caps := &mcp.ServerCapabilities{}
	if ir := cs.InitializeResult(); ir != nil && ir.Capabilities != nil {
		caps = ir.Capabilities
	}
	cat := &catalog{toolIndex: map[string]*mcp.Tool{}}
	var err error
	if caps.Tools != nil {
		cat.tools, err = walkPages(ctx, "tools/list", func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Tools, r.NextCursor, nil
		})
		if err != nil && !isMethodNotFound(err) {
			return nil, err
		}
		for _, t := range cat.tools {
			if t == nil {
				continue
			}
			cat.toolIndex[t.Name] = t
		}
	}
	// A legacy server may serve prompts and resources without declaring
	// them (go-sdk gates nothing client-side), so legacy sessions ask
	// anyway, briefly, and take any failure as "none". Modern servers
	// declare what they have.
	legacy := cs.InitializeResult() != nil && cs.InitializeResult().ProtocolVersion < modernVersion
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
		cat.prompts, err = walkPages(lctx, "prompts/list", func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
		cancel()
		if err != nil && caps.Prompts != nil && !isMethodNotFound(err) {
			return nil, err
		}
	}
	if lctx, cancel, ok := undeclared(caps.Resources != nil); ok {
		cat.resources, err = walkPages(lctx, "resources/list", func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if err != nil && caps.Resources != nil && !isMethodNotFound(err) {
			cancel()
			return nil, err
		}
		cat.templates, err = walkPages(lctx, "resources/templates/list", func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
		cancel()
		if err != nil && caps.Resources != nil && !isMethodNotFound(err) {
			return nil, err
		}
	}
	return cat, nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
