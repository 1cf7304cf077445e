package cache

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

type fakePage struct {
	items []string
	next  string
	meta  Meta
}

// pager serves pages by cursor. hook, when set, sees every request and may
// answer it with an error instead.
func pager(pages map[string]fakePage, hook func(cursor string) error) func(context.Context, string) ([]string, string, Meta, error) {
	return func(_ context.Context, cursor string) ([]string, string, Meta, error) {
		if hook != nil {
			if err := hook(cursor); err != nil {
				return nil, "", Meta{}, err
			}
		}
		p, ok := pages[cursor]
		if !ok {
			return nil, "", Meta{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown cursor " + cursor}
		}
		return p.items, p.next, p.meta, nil
	}
}

// chain returns n pages, each with one item, linked by cursors c1, c2, ...
func chain(n int, m Meta) map[string]fakePage {
	pages := map[string]fakePage{}
	for i := range n {
		cursor := ""
		if i > 0 {
			cursor = fmt.Sprint("c", i)
		}
		next := ""
		if i < n-1 {
			next = fmt.Sprint("c", i+1)
		}
		pages[cursor] = fakePage{items: []string{fmt.Sprint("item", i)}, next: next, meta: m}
	}
	return pages
}

// TestWalkAggregate covers protocol.md §4.2 item 4: a three-page aggregate
// has the minimum TTL and is private if any page is.
func TestWalkAggregate(t *testing.T) {
	tests := []struct {
		name   string
		metas  [3]Meta
		want   Meta
		cursor string // the cursor of page 2, to check that "x" and odd cursors are fine
	}{
		{"min TTL, one private page", [3]Meta{pub(time.Minute), priv(10 * time.Second), pub(time.Hour)}, Meta{TTL: 10 * time.Second, Scope: ScopePrivate}, "p2"},
		{"all public", [3]Meta{pub(time.Minute), pub(time.Hour), pub(30 * time.Second)}, Meta{TTL: 30 * time.Second, Scope: ScopePublic}, "p2"},
		{"absent scope on the last page", [3]Meta{pub(time.Minute), pub(time.Minute), {TTL: time.Minute}}, Meta{TTL: time.Minute, Scope: ScopePrivate}, "p2"},
		{"one page TTL 0", [3]Meta{pub(time.Minute), pub(0), pub(time.Minute)}, Meta{Scope: ScopePublic}, "p2"},
		{"negative TTL clamps to 0", [3]Meta{pub(-time.Minute), pub(time.Minute), pub(time.Minute)}, Meta{Scope: ScopePublic}, "p2"},
		{"NoStore on one page", [3]Meta{pub(time.Minute), {TTL: time.Minute, Scope: ScopePublic, NoStore: true}, pub(time.Minute)}, Meta{TTL: time.Minute, Scope: ScopePublic, NoStore: true}, "p2"},
		{"TTL above the cache's cap is left to the cache", [3]Meta{pub(100 * time.Hour), pub(200 * time.Hour), pub(300 * time.Hour)}, Meta{TTL: 100 * time.Hour, Scope: ScopePublic}, " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pages := map[string]fakePage{
				"":        {items: []string{"a", "b"}, next: tt.cursor, meta: tt.metas[0]},
				tt.cursor: {items: []string{"c"}, next: "p3", meta: tt.metas[1]},
				"p3":      {items: []string{"d"}, meta: tt.metas[2]},
			}
			items, m, err := Walk(context.Background(), "tools/list", pager(pages, nil))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"a", "b", "c", "d"}, items); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, m); diff != "" {
				t.Errorf("Meta (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalkGuard covers protocol.md §4.2 item 5 and the other ways a walk
// fails: never a partial list.
func TestWalkGuard(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name      string
		pages     map[string]fakePage
		hook      func(cursor string) error
		wantErr   error
		wantCalls int
	}{
		{"self-pointing cursor", map[string]fakePage{
			"":  {next: "x"},
			"x": {next: "x"},
		}, nil, ErrRepeatedCursor, 2},
		{"cursor repeated two pages later", map[string]fakePage{
			"":  {next: "a"},
			"a": {next: "b"},
			"b": {next: "a"},
		}, nil, ErrRepeatedCursor, 3},
		{"65 pages", chain(65, pub(time.Minute)), nil, ErrTooManyPages, 64},
		{"too many items", map[string]fakePage{"": {items: make([]string, MaxItems+1)}}, nil, ErrTooManyItems, 1},
		{"error on page 3", chain(4, pub(time.Minute)), func(c string) error {
			if c == "c2" {
				return boom
			}
			return nil
		}, boom, 3},
		{"-32602 on the first page is not a cursor problem", chain(2, pub(time.Minute)), func(c string) error {
			if c == "" {
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}
			}
			return nil
		}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}, 1},
		{"-32602 on page 2 twice", chain(3, pub(time.Minute)), func(c string) error {
			if c == "c1" {
				return fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams})
			}
			return nil
		}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}, 4},
		{"-32601 on page 2 is not restarted", chain(3, pub(time.Minute)), func(c string) error {
			if c == "c1" {
				return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}
			}
			return nil
		}, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			hook := func(c string) error {
				calls++
				if tt.hook != nil {
					return tt.hook(c)
				}
				return nil
			}
			items, m, err := Walk(context.Background(), "tools/list", pager(tt.pages, hook))
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("error = %v, want %v", err, tt.wantErr)
			}
			if items != nil || m != (Meta{}) {
				t.Errorf("a failed walk returned %d items and %+v", len(items), m)
			}
			if calls != tt.wantCalls {
				t.Errorf("pages requested = %d, want %d", calls, tt.wantCalls)
			}
		})
	}
}

// Test64Pages: exactly MaxPages pages is fine.
func Test64Pages(t *testing.T) {
	items, _, err := Walk(context.Background(), "tools/list", pager(chain(MaxPages, pub(time.Minute)), nil))
	if err != nil || len(items) != MaxPages {
		t.Errorf("Walk = %d items, %v; want %d items", len(items), err, MaxPages)
	}
}

// TestWalkRestart covers protocol.md §4.2 item 6: -32602 on page 2
// discards what was fetched and restarts from page 1, once.
func TestWalkRestart(t *testing.T) {
	pages := chain(3, pub(time.Minute))
	var cursors []string
	failed := false
	hook := func(c string) error {
		cursors = append(cursors, c)
		if c == "c1" && !failed {
			failed = true
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cursor expired"}
		}
		return nil
	}
	items, m, err := Walk(context.Background(), "tools/list", pager(pages, hook))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"item0", "item1", "item2"}, items); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "c1", "", "c1", "c2"}, cursors); diff != "" {
		t.Errorf("cursors requested (-want +got):\n%s", diff)
	}
	if m != pub(time.Minute) {
		t.Errorf("Meta = %+v", m)
	}
}

// TestWalkRestartMeta: after a restart only the completed walk's pages
// shape the Meta.
func TestWalkRestartMeta(t *testing.T) {
	calls := 0
	page := func(_ context.Context, cursor string) ([]string, string, Meta, error) {
		calls++
		switch {
		case calls == 1:
			return []string{"a"}, "c1", priv(time.Second), nil
		case calls == 2:
			return nil, "", Meta{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}
		case cursor == "":
			return []string{"a"}, "c1", pub(time.Hour), nil
		default:
			return []string{"b"}, "", pub(time.Minute), nil
		}
	}
	items, m, err := Walk(context.Background(), "tools/list", page)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, items); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	if m != pub(time.Minute) {
		t.Errorf("Meta = %+v, want public, 1m", m)
	}
}

func TestWalkCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	page := func(context.Context, string) ([]string, string, Meta, error) {
		cancel()
		return []string{"a"}, "next", pub(time.Minute), nil
	}
	if _, _, err := Walk(ctx, "tools/list", page); !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}
