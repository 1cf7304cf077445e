package host_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

func searchNames(t *testing.T, h *host.Host, c host.Caller, query string, servers []string, limit int) ([]string, int) {
	t.Helper()
	tools, total, err := h.SearchTools(t.Context(), c, query, servers, limit)
	if err != nil {
		t.Fatalf("SearchTools(%q): %v", query, err)
	}
	var out []string
	for _, tl := range tools {
		out = append(out, tl.Server+"."+tl.Tool.Name)
	}
	return out, total
}

// TestSearchToolsView: a tool a list rule hides from a caller is never
// among its results; a server's search_hint finds its tools.
func TestSearchToolsView(t *testing.T) {
	h, _ := policyHost(t, policySet, host.Options{}, func(s *config.Server) {
		s.SearchHint = []string{"filesystem", "disk"}
	})
	asAlice := host.Caller{Principal: alice, Origin: host.OriginAPI}
	asBob := host.Caller{Principal: bob, Origin: host.OriginAPI}

	got, total := searchNames(t, h, asAlice, "write a path", nil, 20)
	if !slices.Contains(got, "files.write") || total != len(got) {
		t.Errorf("alice finds %v (total %d), want files.write among them", got, total)
	}
	got, _ = searchNames(t, h, asBob, "write a path", nil, 20)
	if slices.Contains(got, "files.write") {
		t.Errorf("bob finds %v: a tool a list rule hides from him", got)
	}
	got, _ = searchNames(t, h, asBob, "write", nil, 20)
	if slices.Contains(got, "files.write") {
		t.Errorf("bob finds %v searching its exact name", got)
	}
	// The hints are indexed: every tool of the server matches them.
	got, total = searchNames(t, h, asAlice, "disk", nil, 2)
	if len(got) != 2 || total < 5 {
		t.Errorf("search by hint: %v of %d, want 2 of every tool", got, total)
	}
	if got, total = searchNames(t, h, asAlice, "disk", nil, 0); len(got) != 0 || total < 5 {
		t.Errorf("limit 0: %v of %d", got, total)
	}
	if got, total = searchNames(t, h, asAlice, "", nil, 5); len(got) != 0 || total != 0 {
		t.Errorf("empty query: %v of %d", got, total)
	}
	huge := strings.Repeat("write ", 100_000)
	if got, _ = searchNames(t, h, asAlice, huge, nil, 5); !slices.Contains(got, "files.write") {
		t.Errorf("a huge query: %v", got)
	}
	var us *host.UnknownServerError
	if _, _, err := h.SearchTools(t.Context(), asAlice, "write", []string{"nope"}, 5); !errors.As(err, &us) {
		t.Errorf("an unknown server: %v, want UnknownServerError", err)
	}
}

// TestSearchToolsServersAndRebuild: the servers filter, and a catalog
// change (a server's tools/list_changed) reaching the index.
func TestSearchToolsServersAndRebuild(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	h := startHost(t, host.Options{}, stdioServer("fx", bin), stdioServer("fy", bin))
	c := host.Caller{Principal: host.Principal{Name: "owner"}, Origin: host.OriginAPI}

	got, total := searchNames(t, h, c, "echo text", nil, 10)
	if !slices.Contains(got, "fx.echo") || !slices.Contains(got, "fy.echo") || total != len(got) {
		t.Errorf("both servers: %v of %d", got, total)
	}
	got, _ = searchNames(t, h, c, "echo text", []string{"fy"}, 10)
	if len(got) == 0 || slices.ContainsFunc(got, func(n string) bool { return !strings.HasPrefix(n, "fy.") }) {
		t.Errorf("servers fy: %v", got)
	}
	if got, _ := searchNames(t, h, c, "zebrafinch", nil, 10); len(got) != 0 {
		t.Fatalf("zebrafinch before it exists: %v", got)
	}
	if got := textOf(call(t, h, "fx", "grow", `{"name":"zebrafinch"}`)); got != "added zebrafinch" {
		t.Fatalf("grow = %q", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		got, _ := searchNames(t, h, c, "zebrafinch", nil, 10)
		if slices.Equal(got, []string{"fx.zebrafinch"}) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("after tools/list_changed the search finds %v", got)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
