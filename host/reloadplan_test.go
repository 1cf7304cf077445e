package host_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

const planConfigA = `
server "keep" {
  command = "true"
}
server "drop" {
  command = "true"
}
principal "alice" {
  token = "alice-token-0123456789"
}
`

const planConfigB = `
server "keep" {
  command = "true"
}
server "new" {
  command = "true"
}
principal "alice" {
  token = "alice-token-rotated-012"
}
log_level = "debug"
`

// TestReloadWith: a dry run returns the plan PlanReload gives and changes
// nothing; If-Match refuses a reload of a config that is no longer the
// running one, under the reload lock; a reload does what its plan says,
// records it in ConfigStatus, and tells subscribers without naming the
// principals.
func TestReloadWith(t *testing.T) {
	parse := func(src string) *config.Config {
		cfg, diags := config.Parse([]byte(src), "reload.hcl", config.Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return cfg
	}
	a, b := parse(planConfigA), parse(planConfigB)
	h, err := host.New(a, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.Start(t.Context()) // the servers exit at once: only the config matters here
	t.Cleanup(func() { h.Close() })
	hashA := h.ConfigHash()
	if hashA != a.Hash() {
		t.Fatalf("ConfigHash() = %s, want the config's %s", hashA, a.Hash())
	}
	if st := h.ConfigStatus(); st.Hash != hashA || st.Plan != nil || st.LoadedAt.IsZero() {
		t.Errorf("ConfigStatus() before a reload = %+v", st)
	}

	plan := h.PlanReload(b)
	if plan.From != hashA || plan.To != b.Hash() || plan.DryRun {
		t.Errorf("plan from %s to %s (dry run %v), want %s to %s", plan.From, plan.To, plan.DryRun, hashA, b.Hash())
	}
	want := plan
	want.DryRun = true
	dry, err := h.ReloadWith(t.Context(), b, host.ReloadOptions{DryRun: true, IfMatch: []string{hashA}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dry); diff != "" {
		t.Errorf("dry run (-PlanReload +dry run):\n%s", diff)
	}
	if h.ConfigHash() != hashA || serverNamesOf(h) != "keep drop" {
		t.Errorf("after a dry run: config %s, servers %s; want nothing changed", h.ConfigHash(), serverNamesOf(h))
	}

	// A dry run loads the plugins a reload would load.
	broken := parse(planConfigB + "plugin \"broken\" {\n  path   = \"" + t.TempDir() + "/missing.wasm\"\n  stages = [\"result\"]\n}\n")
	var pe *host.PluginLoadError
	if _, err := h.ReloadWith(t.Context(), broken, host.ReloadOptions{DryRun: true}); !errors.As(err, &pe) {
		t.Errorf("a dry run with a missing plugin: %v, want a PluginLoadError", err)
	}

	var ce *host.ConfigChangedError
	if _, err := h.ReloadWith(t.Context(), b, host.ReloadOptions{IfMatch: []string{b.Hash()}}); !errors.As(err, &ce) || ce.Current != hashA {
		t.Fatalf("reload if the config is already b: %v, want a ConfigChangedError naming %s", err, hashA)
	}
	if h.ConfigHash() != hashA {
		t.Error("a refused reload changed the config")
	}

	events, stop, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: "observer"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, err := h.ReloadWith(t.Context(), b, host.ReloadOptions{IfMatch: []string{"sha256:other", hashA}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plan, res); diff != "" {
		t.Errorf("reload (-plan +done):\n%s", diff)
	}
	if res.Principals.Rotated[0] != "alice" || res.Kept[0] != "keep" || res.Added[0] != "new" || res.Removed[0] != "drop" ||
		res.Settings[0] != "log_level" {
		t.Errorf("reload %+v", res)
	}
	if got := serverNamesOf(h); got != "keep new" {
		t.Errorf("servers after the reload: %s", got)
	}
	st := h.ConfigStatus()
	if st.Hash != b.Hash() || h.ConfigHash() != b.Hash() || st.Plan == nil || !cmp.Equal(*st.Plan, res) {
		t.Errorf("ConfigStatus() after the reload = %+v, want b's hash and the plan", st)
	}
	if _, err := h.ReloadWith(t.Context(), a, host.ReloadOptions{IfMatch: []string{hashA}}); !errors.As(err, &ce) || ce.Current != b.Hash() {
		t.Errorf("a second reload expecting a: %v, want a ConfigChangedError naming b", err)
	}

	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type != host.EventConfig {
				continue
			}
			r, ok := ev.Data.(host.ReloadPlan)
			if !ok || r.Principals.Any() || len(r.Started) != 1 || r.To != b.Hash() {
				t.Errorf("config event %#v, want the plan without its principals", ev.Data)
			}
			return
		case <-timeout:
			t.Fatal("no config event")
		}
	}
}
