package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestRespondAsync: with Prefer: respond-async a call that waits for an
// approval is answered 202 at once with the approval and the call's URL;
// the URL says it is pending, then (once approved) has the entry, which
// also arrives as an event; a denied one ends denied; a call without an
// ask is answered when it ends, as without the preference.
func TestRespondAsync(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
policy "approve-slow" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'slow'"
  message = "Run the slow tool?"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	e := newEnvConfig(t, cfg)
	sid := e.createSession(t, bobToken, "").ID
	async := withHeader("Prefer", "respond-async, wait=5")
	type accepted struct {
		Status   string        `json:"status"`
		CallID   string        `json:"callId"`
		Location string        `json:"location"`
		Approval host.Approval `json:"approval"`
	}

	// No ask: the entry, as without the preference.
	r := e.do(t, "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "now"}}), async)
	wantStatus(t, r, http.StatusOK)
	if en := decode[store.Entry](t, r); en.Status != store.StatusOK {
		t.Fatalf("a call without an ask: %s", r.body)
	}

	for _, tt := range []struct{ decision, status string }{{"approve", store.StatusOK}, {"deny", store.StatusDenied}} {
		t.Run(tt.decision, func(t *testing.T) {
			events := e.openEvents(t, bobToken)
			r := e.do(t, "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 1}}), async)
			wantStatus(t, r, http.StatusAccepted)
			acc := decode[accepted](t, r)
			loc := r.header.Get("Location")
			if acc.Status != "pending_approval" || acc.Approval.ID == "" || acc.Approval.Message != "Run the slow tool?" || acc.CallID == "" ||
				loc != acc.Location || !strings.HasSuffix(loc, "/calls/"+acc.CallID) || r.header.Get("Preference-Applied") != "respond-async" {
				t.Fatalf("202 answer %s, Location %q", r.body, loc)
			}
			st := e.do(t, "GET", loc, bobToken, "")
			wantStatus(t, st, http.StatusAccepted)
			if p := decode[accepted](t, st); p.Status != "pending_approval" || p.Approval.ID != acc.Approval.ID {
				t.Fatalf("GET %s while pending: %s", loc, st.body)
			}
			wantError(t, e.do(t, "GET", loc, aliceToken, ""), http.StatusNotFound, "not_found")

			wantStatus(t, e.do(t, "POST", "/api/v1/approvals/"+acc.Approval.ID, bobToken, `{"decision":"`+tt.decision+`"}`), http.StatusOK)
			ev := events.next(t, "the call's entry", func(ev sseEvent) bool {
				return ev.Type == "entry" && strings.Contains(string(ev.Data), acc.CallID)
			})
			if en := decode[store.Entry](t, response{body: ev.Data}); en.Status != tt.status {
				t.Errorf("the entry event says %q, want %q", en.Status, tt.status)
			}
			deadline := time.Now().Add(waitBound)
			for {
				st = e.do(t, "GET", loc, bobToken, "")
				if st.status == http.StatusOK || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			wantStatus(t, st, http.StatusOK)
			if en := decode[store.Entry](t, st); en.Status != tt.status || en.CallID != acc.CallID {
				t.Errorf("GET %s after %s: %s", loc, tt.decision, st.body)
			}
		})
	}
	wantError(t, e.do(t, "GET", "/api/v1/sessions/"+sid+"/calls/c_nope", bobToken, ""), http.StatusNotFound, "not_found")
}
