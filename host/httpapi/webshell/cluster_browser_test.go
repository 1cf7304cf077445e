package webshell_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// TestWebShellAcrossReplicas: two replicas on one PostgreSQL database. A
// WebShell on replica B shows, as they happen, a call made through
// replica A's API into its session, and the approval a call on A waits
// for; approving it in B's WebShell lets the call on A run.
func TestWebShellAcrossReplicas(t *testing.T) {
	requireBrowser(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	policy := withHCL(t, `
policy "approve-echo" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'echo'"
  message = "Echo this text?"
}
`)
	a := newReplicaDaemon(t, dsn, "a", policy)
	b := newReplicaDaemon(t, dsn, "b", policy)
	tb := newTab(t)
	tb.login(b)

	// A call made on B starts the tab's session.
	tb.selectTool("fx.add")
	tb.fill("a", "2")
	tb.fill("b", "3")
	tb.call(1)
	sid := eval[string](tb, `sessionStorage.getItem('mcphost.session') ?? ''`)

	// A call made through A's API into that session appears on B.
	var made struct {
		ID string `json:"id"`
	}
	a.apiJSON(t, http.MethodPost, "/sessions/"+sid+"/calls", map[string]any{
		"server": "fx", "tool": "add", "arguments": map[string]any{"a": 40, "b": 2}}, &made)
	tb.waitFor("the entry made on replica a", fmt.Sprintf(`document.querySelectorAll('%s').length >= 2`, entrySel))
	if e := tb.readEntries()[1]; e.ID != made.ID || e.Name != "fx.add" || e.Result != "42" {
		t.Errorf("the entry made on replica a shows as %+v, want %s: fx.add = 42", e, made.ID)
	}

	// A call on A waits for approval; B's WebShell asks, and approving it
	// there lets the call on A run.
	done := make(chan error, 1)
	go func() {
		var entry struct {
			Status string `json:"status"`
		}
		err := a.apiJSONErr(http.MethodPost, "/sessions/"+sid+"/calls", map[string]any{
			"server": "fx", "tool": "echo", "arguments": map[string]any{"text": "across replicas"}}, &entry)
		if err == nil && entry.Status != "ok" {
			err = fmt.Errorf("the approved call on replica a ended %q", entry.Status)
		}
		done <- err
	}()
	tb.waitVisible(tid("approval"))
	if msg := eval[string](tb, `document.querySelector('[data-testid=approval-message]').textContent`); msg != "Echo this text?" {
		t.Errorf("the prompt on replica b says %q", msg)
	}
	tb.click(tid("approval") + " " + tid("approve-button"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tb.waitFor("the approved entry", fmt.Sprintf(`document.querySelectorAll('%s').length >= 3`, entrySel))
	if e := tb.readEntries()[2]; e.Status != "ok" || e.Result != "across replicas" {
		t.Errorf("the approved call shows as %+v", e)
	}
	tb.waitFor("the prompt to go", `!document.querySelector('[data-testid=approval]')`)
}
