package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestPprof: Go's profiles are served to admins only while the running
// config's telemetry block has pprof = true; off (the default), the routes
// answer 404 naming the setting, and a reload turns them on and off.
func TestPprof(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{}
	e := newEnvConfig(t, cfg)
	off := wantError(t, e.do(t, "GET", "/debug/pprof/", aliceToken, ""), http.StatusNotFound, "not_found")
	if !strings.Contains(off.Error.Message, "pprof = true") {
		t.Errorf("off: %q does not name the setting", off.Error.Message)
	}

	on := *cfg
	on.Telemetry.Pprof = true
	if _, err := e.h.Reload(t.Context(), &on); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/debug/pprof/", "goroutine"},
		{"/debug/pprof/heap?debug=1", "heap profile"},
		{"/debug/pprof/goroutine?debug=1", "goroutine profile"},
		{"/debug/pprof/cmdline", "httpapi.test"},
		{"/debug/pprof/profile?seconds=1", ""},
	} {
		r := e.do(t, "GET", tc.path, aliceToken, "")
		if r.status != http.StatusOK || len(r.body) == 0 || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %d, %.200s; want 200 with %q", tc.path, r.status, r.body, tc.want)
		}
	}
	wantError(t, e.do(t, "GET", "/debug/pprof/heap", bobToken, ""), http.StatusForbidden, "forbidden")
	wantStatus(t, e.do(t, "GET", "/debug/pprof/heap", "", ""), http.StatusUnauthorized)

	if _, err := e.h.Reload(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	wantError(t, e.do(t, "GET", "/debug/pprof/heap", aliceToken, ""), http.StatusNotFound, "not_found")
}
