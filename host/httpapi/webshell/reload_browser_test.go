package webshell_test

import (
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

// TestConfigReloadUpdatesLists reloads the daemon's config under an open
// WebShell: a server added by the reload appears with its tools, and one
// the reload removed leaves the server list and the tool list (its last
// state is never published; the page learns it from the config event).
func TestConfigReloadUpdatesLists(t *testing.T) {
	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.waitVisible(tid("tool-revenue.show_revenue_dashboard"))

	fx := d.cfg.Servers[0]
	fx2 := fx
	fx2.Name = "fx2"
	next := &config.Config{Principals: d.cfg.Principals, Servers: []config.Server{fx, fx2}}
	if _, err := d.h.Reload(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	tb.waitServerReady("fx2")
	tb.waitVisible(tid("tool-fx2.add"))
	tb.waitFor("the removed server to leave the server list",
		`!document.querySelector('[data-testid=server-list] `+tid("server-revenue")+`')`)
	tb.waitFor("the removed server's tools to leave the tool list",
		`!document.querySelector('[data-testid^="tool-revenue."]')`)
	tb.waitServerReady("fx") // the unchanged server is still there
}
