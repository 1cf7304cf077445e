package host_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/plugins"
)

// TestAppUnsafeEvalOnlyFromConfig: the display record says unsafeEval only
// when the server's config has app_csp_unsafe_eval; an App that asks for
// eval in its own _meta (a flag, a CSP source, a script list) gets neither
// the flag nor the source.
func TestAppUnsafeEvalOnlyFromConfig(t *testing.T) {
	hostile := map[string]any{
		"unsafeEval": true, "unsafe-eval": true, "allowEval": true,
		"csp": map[string]any{
			"resourceDomains": []any{"'unsafe-eval'", "https://cdn.example.com 'unsafe-eval'", "https://cdn.example.com"},
			"scriptDomains":   []any{"'unsafe-eval'"},
			"unsafeEval":      true,
		},
	}
	for _, tc := range []struct {
		name   string
		on     bool
		ui     map[string]any
		want   bool
		reason string
	}{
		{"switch off, hostile App", false, hostile, false, "the App's own _meta must not grant eval"},
		{"switch on, plain App", true, map[string]any{}, true, "the operator's switch grants it"},
		{"switch on, hostile App", true, hostile, true, "the switch, not the App, decides"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			s := remoteServer("app", config.TransportStreamableHTTP, appServerMeta(t, false, apps.MIMEType, "<!doctype html><p>app</p>", tc.ui))
			s.Apps, s.AppResourceMaxBytes, s.AppResourceTimeout = config.AppsAuto, apps.DefaultMaxBytes, 5e9
			s.AppCSPUnsafeEval = tc.on
			h := startHost(t, host.Options{Store: st}, s)
			e := callInSession(t, h, "app", "show", `{}`)
			var d apps.Display
			if err := json.Unmarshal(e.Display, &d); err != nil || d.HTML == "" {
				t.Fatalf("display %.300s (%v)", e.Display, err)
			}
			if d.UnsafeEval != tc.want {
				t.Errorf("unsafeEval = %v, want %v: %s", d.UnsafeEval, tc.want, tc.reason)
			}
			// Dropped names what was refused (for the log); the CSP the
			// sandbox gets has none of it.
			if raw, _ := json.Marshal(d.CSP); strings.Contains(string(raw), "eval") || strings.Contains(string(raw), "scriptDomains") {
				t.Errorf("the record's CSP carries the App's eval request: %s", raw)
			}
			if len(tc.ui) > 0 && len(d.Dropped) == 0 {
				t.Errorf("nothing dropped from %v", tc.ui)
			}
			if d.CSP == nil || len(d.CSP.ResourceDomains) != 1 || d.CSP.ResourceDomains[0] != "https://cdn.example.com" {
				if len(tc.ui) > 0 {
					t.Errorf("csp = %+v, want only https://cdn.example.com", d.CSP)
				}
			}
		})
	}
}

// TestAppEvalWithdrawn: turning app_csp_unsafe_eval off with a reload takes
// the grant back from the Apps already in the transcript, and turning it
// on again gives it back; the rest of the record is unchanged.
func TestAppEvalWithdrawn(t *testing.T) {
	st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := remoteServer("app", config.TransportStreamableHTTP, appServerMeta(t, false, apps.MIMEType, "<!doctype html><p>app & <b>eval</b></p>", nil))
	s.Apps, s.AppResourceMaxBytes, s.AppResourceTimeout = config.AppsAuto, apps.DefaultMaxBytes, 5e9
	s.AppCSPUnsafeEval = true
	h := startHost(t, host.Options{Store: st}, s)
	e := callInSession(t, h, "app", "show", `{}`)
	p := host.Principal{Name: "owner"}
	shown := func(when string) (apps.Display, bool) {
		t.Helper()
		entries, _, err := h.Entries(t.Context(), p, e.SessionID, 0, 10)
		if err != nil || len(entries) != 1 {
			t.Fatalf("%s: entries %d, %v", when, len(entries), err)
		}
		var d apps.Display
		if err := json.Unmarshal(entries[0].Display, &d); err != nil {
			t.Fatalf("%s: display %.300s (%v)", when, entries[0].Display, err)
		}
		return d, d.UnsafeEval
	}
	before, eval := shown("switch on")
	if !eval {
		t.Fatal("the switch on: no eval grant")
	}
	for _, tc := range []struct {
		on   bool
		want bool
	}{{false, false}, {true, true}} {
		next := s
		next.AppCSPUnsafeEval = tc.on
		if _, err := h.Reload(t.Context(), &config.Config{Servers: []config.Server{next}}); err != nil {
			t.Fatal(err)
		}
		d, eval := shown(fmt.Sprintf("reloaded with the switch %v", tc.on))
		if eval != tc.want {
			t.Errorf("the switch %v after a reload: the recorded App's eval grant is %v", tc.on, eval)
		}
		d.UnsafeEval = before.UnsafeEval
		if diff := cmp.Diff(before, d); diff != "" {
			t.Errorf("the switch %v: the record changed (-before +after):\n%s", tc.on, diff)
		}
	}
}

// TestLargeAppUpTo16MiB: an App of 5 MB (the PDF App is 4.3 MB) renders
// with app_resource_max_bytes at 16 MiB, in a call and through the
// gateway's resources/read, and is refused as too large at the default.
func TestLargeAppUpTo16MiB(t *testing.T) {
	html := "<!doctype html><p>" + strings.Repeat("x", 5_000_000) + "</p>"
	url := appServerMeta(t, true, apps.MIMEType, html, nil) // advertised: a refused App still has its record
	for _, tc := range []struct {
		max  int
		want bool
	}{{config.MaxAppResourceMaxBytes, true}, {config.DefaultAppResourceMaxBytes, false}} {
		st, err := store.Open(t.Context(), t.TempDir()+"/m.db", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s := remoteServer("app", config.TransportStreamableHTTP, url)
		s.Apps, s.AppResourceMaxBytes, s.AppResourceTimeout = config.AppsAuto, tc.max, 60e9 // 5 MB under -race
		h := startHost(t, host.Options{Store: st}, s)
		e := callInSession(t, h, "app", "show", `{}`)
		var d apps.Display
		if err := json.Unmarshal(e.Display, &d); err != nil {
			t.Fatalf("max %d: display %.300s (%v)", tc.max, e.Display, err)
		}
		if got := d.HTML == html; got != tc.want {
			t.Fatalf("max %d: rendered %v, want %v (warning %q)", tc.max, got, tc.want, d.Warning)
		}
		res, err := h.ReadResource(t.Context(), host.Caller{Principal: host.Principal{Name: "owner"}}, "", "app", "ui://app", nil)
		switch {
		case tc.want && (err != nil || len(res.Contents) != 1 || res.Contents[0].Text != html):
			t.Fatalf("max %d: gateway read: %v", tc.max, err)
		case !tc.want && (err == nil || !strings.Contains(err.Error(), "too large")):
			t.Fatalf("max %d: gateway read: %v, want too large", tc.max, err)
		}
	}
}

// TestDisplayPluginsTakeTheLargestApp: a display plugin may pass on every
// App the host serves, up to app_resource_max_bytes' own cap.
func TestDisplayPluginsTakeTheLargestApp(t *testing.T) {
	if plugins.MaxHTMLBytes < config.MaxAppResourceMaxBytes {
		t.Errorf("plugins.MaxHTMLBytes = %d, below the largest App (%d)", plugins.MaxHTMLBytes, config.MaxAppResourceMaxBytes)
	}
}
