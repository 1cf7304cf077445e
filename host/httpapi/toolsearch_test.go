package httpapi_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestToolSearch pins GET /api/v1/tools?search=: the caller's own view
// ranked best first (a tool a list rule hides never appears), restricted to
// the servers named, bounded by limit, with the total; bad parameters are
// 400s that say what is wrong, and without search the answer is the list.
func TestToolSearch(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
policy "analysts-only-add" {
  phase  = "list"
  effect = "deny"
  when   = "tool.name == 'add' && !('analysts' in principal.groups)"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bin := testbin.Build(t, wellbehavedPkg)
	cfg.Servers = []config.Server{stdioServer("fx", bin), stdioServer("gx", bin)}
	e := newEnvConfig(t, cfg)

	type searchBody struct {
		Tools []host.ToolView `json:"tools"`
		Total *int            `json:"total"`
	}
	search := func(t *testing.T, token string, params url.Values) searchBody {
		t.Helper()
		r := e.do(t, "GET", "/api/v1/tools?"+params.Encode(), token, "")
		wantStatus(t, r, http.StatusOK)
		return decode[searchBody](t, r)
	}
	names := func(tools []host.ToolView) []string {
		out := []string{}
		for _, tl := range tools {
			out = append(out, tl.Server+"."+tl.Name)
		}
		return out
	}

	t.Run("ranked", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			token     string
			params    url.Values
			wantFirst []string // the first tools (equal scores: in either order)
			wantTotal int      // -1: at least as many as listed
			never     string   // a tool that must not appear
		}{
			{name: "add first for alice", token: aliceToken,
				params:    url.Values{"search": {"add two numbers"}, "server": {"fx"}},
				wantFirst: []string{"fx.add"}, wantTotal: -1},
			{name: "hidden from bob", token: bobToken,
				params: url.Values{"search": {"add two numbers"}}, wantTotal: -1, never: "add"},
			{name: "hidden from bob by name", token: bobToken,
				params: url.Values{"search": {"add"}}, wantTotal: -1, never: "add"},
			{name: "echo first", token: aliceToken,
				params:    url.Values{"search": {"echo my text back"}, "server": {"gx"}},
				wantFirst: []string{"gx.echo"}, wantTotal: -1},
			{name: "one server", token: aliceToken,
				params:    url.Values{"search": {"add"}, "server": {"gx"}},
				wantFirst: []string{"gx.add"}, wantTotal: -1, never: "fx."},
			{name: "both servers", token: aliceToken,
				params:    url.Values{"search": {"working directory"}, "server": {"fx", "gx"}},
				wantFirst: []string{"fx.cwd", "gx.cwd"}, wantTotal: -1},
			{name: "limit", token: aliceToken,
				params:    url.Values{"search": {"working directory"}, "limit": {"1"}},
				wantFirst: []string{"fx.cwd"}, wantTotal: -1},
			{name: "nothing matches", token: aliceToken,
				params: url.Values{"search": {"zyzzyva"}}, wantTotal: 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := search(t, tc.token, tc.params)
				if got.Total == nil {
					t.Fatal(`the answer has no "total"`)
				}
				list := names(got.Tools)
				if n := len(tc.wantFirst); len(list) < n || !cmp.Equal(list[:n], tc.wantFirst, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()) {
					t.Errorf("tools %v, want them to start with %v", list, tc.wantFirst)
				}
				if tc.wantTotal >= 0 && *got.Total != tc.wantTotal {
					t.Errorf("total %d, want %d", *got.Total, tc.wantTotal)
				}
				if *got.Total < len(list) {
					t.Errorf("total %d is below the %d tools returned", *got.Total, len(list))
				}
				if l := tc.params.Get("limit"); l != "" && len(list) > 1 {
					t.Errorf("limit %s returned %v", l, list)
				}
				for _, n := range list {
					if tc.never != "" && strings.Contains(n, tc.never) {
						t.Errorf("%s appears in %v", n, list)
					}
				}
			})
		}
	})

	t.Run("a WebShell credential sees the same", func(t *testing.T) {
		got := search(t, e.aliceWS, url.Values{"search": {"add two numbers"}, "server": {"fx"}, "origin": {"user"}})
		if list := names(got.Tools); len(list) == 0 || list[0] != "fx.add" {
			t.Errorf("tools %v, want fx.add first", list)
		}
	})

	t.Run("without search, the list", func(t *testing.T) {
		r := e.do(t, "GET", "/api/v1/tools?limit=1", aliceToken, "")
		wantStatus(t, r, http.StatusOK)
		got := decode[searchBody](t, r)
		if got.Total != nil {
			t.Errorf(`the list has "total" %d`, *got.Total)
		}
		if len(got.Tools) < 2 {
			t.Errorf("the list has %d tools, want every tool of fx and gx", len(got.Tools))
		}
	})

	t.Run("bad parameters", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			query  url.Values
			status int
			code   string
			says   string
		}{
			{"limit zero", url.Values{"search": {"add"}, "limit": {"0"}}, 400, "bad_request", `"limit"`},
			{"limit too big", url.Values{"search": {"add"}, "limit": {"101"}}, 400, "bad_request", "from 1 to 100"},
			{"limit not a number", url.Values{"search": {"add"}, "limit": {"ten"}}, 400, "bad_request", `"ten"`},
			{"query too long", url.Values{"search": {strings.Repeat("add ", 251)}}, 400, "bad_request", "at most 1000"},
			{"empty query", url.Values{"search": {"  "}}, 400, "bad_request", "empty"},
			{"unknown server", url.Values{"search": {"add"}, "server": {"nosuch"}}, 404, "not_found", "nosuch"},
			{"bad origin", url.Values{"search": {"add"}, "origin": {"robot"}}, 400, "bad_request", "origin"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := wantError(t, e.do(t, "GET", "/api/v1/tools?"+tc.query.Encode(), aliceToken, ""), tc.status, tc.code)
				if !strings.Contains(got.Error.Message, tc.says) {
					t.Errorf("the message %q does not say %q", got.Error.Message, tc.says)
				}
			})
		}
	})
}
