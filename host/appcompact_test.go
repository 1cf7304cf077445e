package host_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

// compactFixture is a store file with App records: session one holds three
// App entries, session two one; each record's HTML is pageBytes long.
type compactFixture struct {
	path     string
	server   config.Server
	one, two string // session ids
}

const pageBytes = 4096

func newCompactFixture(t *testing.T) compactFixture {
	t.Helper()
	page := "<!doctype html><p>" + strings.Repeat("x", pageBytes-len("<!doctype html><p>")) // exactly pageBytes
	s := remoteServer("app", config.TransportStreamableHTTP, appServer(t, true, apps.MIMEType, page))
	s.Apps, s.AppResourceMaxBytes, s.AppResourceTimeout = config.AppsAuto, apps.DefaultMaxBytes, 5*time.Second
	f := compactFixture{path: filepath.Join(t.TempDir(), "mcphost.db"), server: s}
	st, err := store.Open(t.Context(), f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := startHost(t, host.Options{Store: st, AppCompaction: host.AppCompaction{After: -1, SessionBytes: -1}}, s)
	p := host.Principal{Name: "owner"}
	for i, n := range []int{3, 1} {
		sess, err := h.CreateSession(t.Context(), p, "compaction")
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			e, err := h.Call(t.Context(), host.SessionCall{Principal: p, SessionID: sess.ID, Server: "app", Tool: "show"})
			if err != nil || e.Status != store.StatusOK || !strings.Contains(string(e.Display), "doctype") {
				t.Fatalf("call: %v %+v", err, e)
			}
		}
		if i == 0 {
			f.one = sess.ID
		} else {
			f.two = sess.ID
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// htmlSizes returns, per entry of a session, the length of its record's
// html, and checks that every record keeps its type and fallback text.
func htmlSizes(t *testing.T, st *store.Store, sessionID string) []int {
	t.Helper()
	entries, _, err := st.Entries(t.Context(), "owner", sessionID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		var d apps.Display
		if err := json.Unmarshal(e.Display, &d); err != nil {
			t.Fatal(err)
		}
		if d.Type != "mcp_app" || d.FallbackText != "the model-visible text" || d.ResourceURI != "ui://app" {
			t.Errorf("record %+v lost its type, resource or fallback text", d)
		}
		out = append(out, len(d.HTML))
	}
	return out
}

// TestCompactAppsBounds runs single passes on a real SQLite file: the size
// bound compacts a session's oldest records until the rest fit, the age
// bound every record older than it; the result survives reopening.
func TestCompactAppsBounds(t *testing.T) {
	f := newCompactFixture(t)
	st, err := store.Open(t.Context(), f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	pass := func(o host.AppCompaction) int {
		t.Helper()
		h, err := host.New(&config.Config{Servers: []config.Server{f.server}}, host.Options{Store: st, AppCompaction: o})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close() // the store stays open; the host's temporary sandbox directory goes
		n, err := h.CompactApps(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// The defaults (7 days, 16 MiB) leave fresh, small records alone.
	if n := pass(host.AppCompaction{}); n != 0 {
		t.Errorf("default pass compacted %d, want 0", n)
	}
	// Size: session one holds 3 pages, the bound is 2 pages: its oldest goes.
	if n := pass(host.AppCompaction{After: -1, SessionBytes: 2 * pageBytes}); n != 1 {
		t.Errorf("size pass compacted %d, want 1", n)
	}
	if got := htmlSizes(t, st, f.one); !slices.Equal(got, []int{0, pageBytes, pageBytes}) {
		t.Errorf("session one after the size pass: html sizes %v, want the oldest compacted", got)
	}
	if got := htmlSizes(t, st, f.two); !slices.Equal(got, []int{pageBytes}) {
		t.Errorf("session two after the size pass: %v, want untouched", got)
	}
	// A bound below one page leaves no record with HTML: session one's two
	// and session two's one are compacted.
	if n := pass(host.AppCompaction{After: -1, SessionBytes: pageBytes - 1}); n != 3 {
		t.Errorf("tight size pass compacted %d, want 3", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Age, on a fresh fixture: everything that started before now - 1ns.
	f = newCompactFixture(t)
	st, err = store.Open(t.Context(), f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := pass(host.AppCompaction{After: time.Nanosecond, SessionBytes: -1}); n != 4 {
		t.Errorf("age pass compacted %d, want 4", n)
	}
	if n := pass(host.AppCompaction{After: time.Nanosecond}); n != 0 {
		t.Errorf("a second pass compacted %d, want 0", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(t.Context(), f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, sid := range []string{f.one, f.two} {
		for _, n := range htmlSizes(t, st, sid) {
			if n != 0 {
				t.Errorf("session %s still holds App HTML after reopening", sid)
			}
		}
	}
}

// TestAppCompactionInBackground starts a daemon host over a store file with
// old App records: its background pass compacts them without a request.
func TestAppCompactionInBackground(t *testing.T) {
	f := newCompactFixture(t)
	st, err := store.Open(t.Context(), f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := startHost(t, host.Options{Store: st, AppCompaction: host.AppCompaction{After: time.Nanosecond, Interval: time.Hour}}, f.server)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	for {
		left, err := st.AppHTMLOfSession(ctx, f.one)
		if err != nil {
			t.Fatal(err)
		}
		more, err := st.AppHTMLOfSession(ctx, f.two)
		if err != nil {
			t.Fatal(err)
		}
		if len(left)+len(more) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the background pass left %d records with HTML", len(left)+len(more))
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if got := htmlSizes(t, st, f.one); !slices.Equal(got, []int{0, 0, 0}) {
		t.Errorf("html sizes %v after the background pass", got)
	}
}
