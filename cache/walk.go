package cache

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds on walking a paginated list (protocol.md §1.10): nothing stops a
// buggy server from repeating a cursor, and go-sdk's iterators have no guard.
const (
	MaxPages = 64
	MaxItems = 10000
)

// Errors [Walk] wraps when a server's pagination is broken.
var (
	ErrRepeatedCursor = errors.New("the server repeated a pagination cursor")
	ErrTooManyPages   = fmt.Errorf("more than %d pages", MaxPages)
	ErrTooManyItems   = fmt.Errorf("more than %d items", MaxItems)
)

// Walk fetches every page of a list, starting with cursor "", and returns the
// items in order with the pages' [Meta] folded into one. method is used only
// in error messages.
//
// The walk ends on a page without a next cursor. An empty next cursor counts
// as absent: go-sdk's typed results cannot tell "" from a missing
// nextCursor, even though the spec allows "" as a cursor. Walk stops with an
// error, and never a partial list, when a page fails, when the server repeats
// a cursor ([ErrRepeatedCursor]), when a 65th page would be needed
// ([ErrTooManyPages]) or when the list passes [MaxItems] items
// ([ErrTooManyItems]). When a page after the first answers -32602 (invalid
// params: the cursor expired), Walk discards what it has and restarts from
// the first page, once; -32602 on the first page is an ordinary error.
//
// The aggregate Meta has the smallest TTL of all pages (never below 0; the
// [Cache] applies its MaxTTL when it judges freshness), is private unless
// every page said public, and has NoStore if any page had it. After a
// restart only the pages of the completed walk count.
func Walk[T any](ctx context.Context, method string, page func(ctx context.Context, cursor string) (items []T, next string, m Meta, err error)) ([]T, Meta, error) {
	items, m, err := walkOnce(ctx, method, page)
	var restart *restartError
	if errors.As(err, &restart) {
		items, m, err = walkOnce(ctx, method, page)
		if errors.As(err, &restart) {
			err = fmt.Errorf("%s page %d after a restart: %w", method, restart.page, restart.err)
		}
	}
	if err != nil {
		return nil, Meta{}, err
	}
	return items, m, nil
}

// restartError reports -32602 on a page after the first.
type restartError struct {
	page int
	err  error
}

func (e *restartError) Error() string { return fmt.Sprintf("page %d: %v", e.page, e.err) }
func (e *restartError) Unwrap() error { return e.err }

func walkOnce[T any](ctx context.Context, method string, page func(ctx context.Context, cursor string) ([]T, string, Meta, error)) ([]T, Meta, error) {
	var all []T
	agg := Meta{TTL: -1, Scope: ScopePublic}
	seen := map[string]bool{}
	cursor := ""
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, Meta{}, err
		}
		items, next, m, err := page(ctx, cursor)
		if err != nil {
			if n == 1 {
				return nil, Meta{}, fmt.Errorf("%s: %w", method, err)
			}
			if isInvalidCursor(err) {
				return nil, Meta{}, &restartError{page: n, err: err}
			}
			return nil, Meta{}, fmt.Errorf("%s page %d: %w", method, n, err)
		}
		all = append(all, items...)
		if len(all) > MaxItems {
			return nil, Meta{}, fmt.Errorf("%s: %w; mcphost stops there", method, ErrTooManyItems)
		}
		ttl := max(m.TTL, 0)
		if agg.TTL < 0 || ttl < agg.TTL {
			agg.TTL = ttl
		}
		if m.Scope != ScopePublic {
			agg.Scope = ScopePrivate
		}
		agg.NoStore = agg.NoStore || m.NoStore
		if next == "" {
			return all, agg, nil
		}
		if seen[next] {
			return nil, Meta{}, fmt.Errorf("%s: %w (%q on page %d); its pagination is broken", method, ErrRepeatedCursor, next, n)
		}
		if n == MaxPages {
			return nil, Meta{}, fmt.Errorf("%s: %w; mcphost stops there", method, ErrTooManyPages)
		}
		seen[next] = true
		cursor = next
	}
}

// isInvalidCursor reports whether err is a JSON-RPC -32602 (invalid params),
// which a list method answers to an unknown or expired cursor.
func isInvalidCursor(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams
}
