package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/internal/testbin"
)

// reloadSource is a daemon config for the reload routes: alice (admin)
// and bob, and the fixture as fx; extra is appended.
func reloadSource(bin, extra string) string {
	return fmt.Sprintf(`
admins = ["alice"]
principal "alice" {
  token = %q
}
principal "bob" {
  token = %q
}
server "fx" {
  command = %q
}
%s`, aliceToken, bobToken, bin, extra)
}

// fileReloader stands for the daemon's config file: Reload parses its
// current source as serve would load the file, and refuses it with the
// diagnostics when it has errors.
type fileReloader struct {
	h   *host.Host
	mu  sync.Mutex
	src string
}

func (f *fileReloader) write(src string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.src = src
}

func (f *fileReloader) reload(ctx context.Context, by host.Principal, opts host.ReloadOptions) (host.ReloadPlan, error) {
	if by.Name != "alice" {
		return host.ReloadPlan{}, fmt.Errorf("reload asked by %q, not the admin alice", by.Name)
	}
	f.mu.Lock()
	src := f.src
	f.mu.Unlock()
	cfg, diags := config.Parse([]byte(src), "mcphost.hcl", config.Options{})
	if diags.HasErrors() {
		return host.ReloadPlan{}, &host.ConfigError{Diagnostics: diags}
	}
	return f.h.ReloadWith(ctx, cfg, opts)
}

type configDoc struct {
	Hash     string           `json:"hash"`
	File     string           `json:"file"`
	Embedded bool             `json:"embedded"`
	Plan     *host.ReloadPlan `json:"plan"`
}

type diagnosticsDoc struct {
	ErrorCount  int `json:"error_count"`
	Diagnostics []struct {
		Severity string `json:"severity"`
		Summary  string `json:"summary"`
		Detail   string `json:"detail"`
		Range    struct {
			Filename string `json:"filename"`
			Start    struct {
				Line   int `json:"line"`
				Column int `json:"column"`
			} `json:"start"`
		} `json:"range"`
	} `json:"diagnostics"`
}

// TestReloadRoutes: GET /api/v1/config and POST /api/v1/reload are for
// admins; a dry run plans and changes nothing; If-Match refuses a reload
// of a config that is not the one in force (412, with its hash); a config
// with errors is 422 with its diagnostics and changes nothing; a reload
// applies and is what GET /api/v1/config reports next.
func TestReloadRoutes(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, wellbehavedPkg)
	file := &fileReloader{src: reloadSource(bin, "")}
	cfg := parseConfig(t, file.src)
	e := newEnvOptions(t, cfg, func(h *host.Host, o *httpapi.Options) {
		file.h = h
		o.Reload = file.reload
		o.ConfigFile = "/etc/mcphost/mcphost.hcl"
	})
	running := e.h.ConfigHash()
	servers := func() string {
		var names []string
		for _, s := range e.h.Servers() {
			names = append(names, s.Name)
		}
		return strings.Join(names, " ")
	}

	// Admins only.
	for _, tok := range []string{bobToken, e.bobWS} {
		wantError(t, e.do(t, "GET", "/api/v1/config", tok, ""), http.StatusForbidden, "forbidden")
		wantError(t, e.do(t, "POST", "/api/v1/reload", tok, ""), http.StatusForbidden, "forbidden")
		wantError(t, e.do(t, "POST", "/api/v1/reload?dry_run=true", tok, ""), http.StatusForbidden, "forbidden")
	}
	wantError(t, e.do(t, "POST", "/api/v1/reload", "", ""), http.StatusUnauthorized, "unauthorized")

	r := e.do(t, "GET", "/api/v1/config", aliceToken, "")
	wantStatus(t, r, http.StatusOK)
	doc := decode[configDoc](t, r)
	if doc.Hash != running || doc.File != "/etc/mcphost/mcphost.hcl" || doc.Embedded || doc.Plan != nil {
		t.Errorf("GET /api/v1/config = %+v, want hash %s and no plan yet", doc, running)
	}
	if et := r.header.Get("ETag"); et != `"`+running+`"` {
		t.Errorf("ETag %q, want the quoted hash", et)
	}
	wantStatus(t, e.do(t, "GET", "/api/v1/config", aliceToken, "", withHeader("If-None-Match", `"`+running+`"`)), http.StatusNotModified)

	// A dry run of a new server and a policy: the plan, and nothing changes.
	file.write(reloadSource(bin, `
server "fx2" {
  command = "`+bin+`"
}
policy "no-add" {
  phase  = "call"
  effect = "deny"
  when   = "tool.name == 'add'"
}
`))
	r = e.do(t, "POST", "/api/v1/reload?dry_run=true", aliceToken, "", withHeader("If-Match", `"`+running+`"`))
	wantStatus(t, r, http.StatusOK)
	plan := decode[host.ReloadPlan](t, r)
	if !plan.DryRun || plan.From != running || fmt.Sprint(plan.Added) != "[fx2]" || fmt.Sprint(plan.Kept) != "[fx]" ||
		!plan.PoliciesChanged || plan.Policies != 1 {
		t.Errorf("dry run plan %+v, want fx kept, fx2 added, one policy", plan)
	}
	if e.h.ConfigHash() != running || servers() != "fx" {
		t.Errorf("after a dry run: config %s, servers %q; want nothing changed", e.h.ConfigHash(), servers())
	}

	// If-Match naming another config: 412 with the running one's hash.
	r = e.do(t, "POST", "/api/v1/reload", aliceToken, "", withHeader("If-Match", `"sha256:0123"`))
	wantError(t, r, http.StatusPreconditionFailed, "precondition_failed")
	if got := decode[configDoc](t, r).Hash; got != running || r.header.Get("ETag") != `"`+running+`"` {
		t.Errorf("412 names hash %s (ETag %s), want %s", got, r.header.Get("ETag"), running)
	}
	if servers() != "fx" {
		t.Errorf("a refused reload changed the servers: %s", servers())
	}

	// A config with errors: 422 with the diagnostics, nothing changes.
	good := file.src
	file.write(good + "\nserver \"bad\" {\n  command = 42x\n}\n")
	r = e.do(t, "POST", "/api/v1/reload", aliceToken, "")
	wantError(t, r, http.StatusUnprocessableEntity, "invalid_config")
	diags := decode[diagnosticsDoc](t, r)
	if diags.ErrorCount == 0 || len(diags.Diagnostics) == 0 {
		t.Fatalf("422 without diagnostics: %s", r.body)
	}
	d := diags.Diagnostics[0]
	wantLine := strings.Count(good, "\n") + 3 // the command line of server "bad"
	if d.Severity != "error" || d.Summary == "" || d.Detail == "" || d.Range.Filename != "mcphost.hcl" || d.Range.Start.Line != wantLine || d.Range.Start.Column == 0 {
		t.Errorf("diagnostic %+v, want an error at mcphost.hcl:%d", d, wantLine)
	}
	wantError(t, e.do(t, "POST", "/api/v1/reload?dry_run=true", aliceToken, ""), http.StatusUnprocessableEntity, "invalid_config")
	if e.h.ConfigHash() != running || servers() != "fx" {
		t.Errorf("after a config with errors: config %s, servers %q; want nothing changed", e.h.ConfigHash(), servers())
	}

	// The good config, conditional on the running one: applied.
	file.write(good)
	r = e.do(t, "POST", "/api/v1/reload", aliceToken, "", withHeader("If-Match", `"sha256:other", "`+running+`"`))
	wantStatus(t, r, http.StatusOK)
	done := decode[host.ReloadPlan](t, r)
	if done.DryRun || done.From != running || done.To == running || fmt.Sprint(done.Added) != "[fx2]" || fmt.Sprint(done.Started) != "[fx2]" {
		t.Errorf("reload %+v, want fx2 added and started", done)
	}
	if servers() != "fx fx2" || e.h.ConfigHash() != done.To || r.header.Get("ETag") != `"`+done.To+`"` {
		t.Errorf("after the reload: servers %q, config %s (ETag %s), want fx fx2 and %s", servers(), e.h.ConfigHash(), r.header.Get("ETag"), done.To)
	}
	sid := e.createSession(t, aliceToken, "reloaded").ID
	wantError(t, e.do(t, "POST", callPath(sid), aliceToken, mustJSON(callBody{Server: "fx", Tool: "add", Arguments: map[string]any{"a": 1, "b": 2}})),
		http.StatusForbidden, "denied_by_policy")

	doc = decode[configDoc](t, e.do(t, "GET", "/api/v1/config", aliceToken, ""))
	if doc.Hash != done.To || doc.Plan == nil || fmt.Sprint(doc.Plan.Added) != "[fx2]" {
		t.Errorf("GET /api/v1/config after the reload = %+v, want its hash and plan", doc)
	}

	// The client that saw the first config is refused now.
	wantError(t, e.do(t, "POST", "/api/v1/reload", aliceToken, "", withHeader("If-Match", `"`+running+`"`)),
		http.StatusPreconditionFailed, "precondition_failed")
	wantError(t, e.do(t, "POST", "/api/v1/reload?dry_run=maybe", aliceToken, ""), http.StatusBadRequest, "bad_request")
	// Without a condition, the same file again: nothing to change.
	again := decode[host.ReloadPlan](t, e.do(t, "POST", "/api/v1/reload", aliceToken, ""))
	if again.Changes() || again.From != again.To {
		t.Errorf("reloading the same file: %+v, want no change", again)
	}
}

// TestReloadEmbeddedDefault: a daemon without a config file (the embedded
// default) has nothing to reload: 409, and GET /api/v1/config says so.
func TestReloadEmbeddedDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wantError(t, e.do(t, "POST", "/api/v1/reload", aliceToken, ""), http.StatusConflict, "no_config_file")
	wantError(t, e.do(t, "POST", "/api/v1/reload?dry_run=true", aliceToken, ""), http.StatusConflict, "no_config_file")
	doc := decode[configDoc](t, e.do(t, "GET", "/api/v1/config", aliceToken, ""))
	if !doc.Embedded || doc.File != config.DefaultFilename || doc.Hash != e.h.ConfigHash() {
		t.Errorf("GET /api/v1/config = %+v, want the embedded default", doc)
	}
	wantError(t, e.do(t, "POST", "/api/v1/reload", bobToken, ""), http.StatusForbidden, "forbidden")
}
