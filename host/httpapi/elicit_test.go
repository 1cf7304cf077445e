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

const elicitPkg = "github.com/mcphost/mcphost/testdata/servers/elicit"

// TestElicitationRoutes: a server's question while a call runs is an
// event and a pending elicitation of the call's principal only; an answer
// that does not match the schema is 422 and the question stays open; the
// accepted answer reaches the server and the call finishes with it; a
// declined one too.
func TestElicitationRoutes(t *testing.T) {
	for _, negotiation := range []string{config.NegotiationLegacy, config.NegotiationAuto} {
		t.Run(negotiation, func(t *testing.T) {
			s := stdioServer("ask", testbin.Build(t, elicitPkg))
			s.VersionNegotiation = negotiation
			e := newEnvWith(t, s)
			sid := e.createSession(t, bobToken, "").ID
			events := e.openEvents(t, bobToken)
			type pending struct {
				Elicitations []host.Elicitation `json:"elicitations"`
			}
			for _, tc := range []struct {
				answer, want string
			}{
				{`{"action":"accept","content":{"name":"Grace","age":85}}`, "hello Grace, 85"},
				{`{"action":"decline"}`, "decline"},
			} {
				done := make(chan response, 1)
				go func() {
					r, _ := e.send(t.Context(), "POST", callPath(sid), bobToken, mustJSON(callBody{Server: "ask", Tool: "ask_name"}))
					done <- r
				}()
				ev := events.next(t, "an elicitation event", func(ev sseEvent) bool { return ev.Type == "elicitation" })
				q := decode[host.Elicitation](t, response{body: ev.Data})
				if q.Mode != "form" || q.Message != "Who are you?" || q.Server != "ask" || q.Tool != "ask_name" || q.SessionID != sid {
					t.Fatalf("question %+v", q)
				}
				if got := decode[pending](t, e.do(t, "GET", "/api/v1/elicitations", bobToken, "")).Elicitations; len(got) != 1 || got[0].ID != q.ID {
					t.Fatalf("bob's pending %+v", got)
				}
				if got := decode[pending](t, e.do(t, "GET", "/api/v1/elicitations", aliceToken, "")).Elicitations; len(got) != 0 {
					t.Fatalf("alice sees bob's questions: %+v", got)
				}
				path := "/api/v1/elicitations/" + q.ID
				wantError(t, e.do(t, "POST", path, aliceToken, `{"action":"decline"}`), http.StatusNotFound, "not_found")
				wantError(t, e.do(t, "POST", path, bobToken, `{"action":"accept","content":{"name":"Grace","age":900}}`), http.StatusUnprocessableEntity, "invalid_answer")
				wantError(t, e.do(t, "POST", path, bobToken, `{"action":"accept","content":{"age":"old"}}`), http.StatusUnprocessableEntity, "invalid_answer")
				wantError(t, e.do(t, "POST", path, bobToken, `{"action":"perhaps"}`), http.StatusUnprocessableEntity, "invalid_answer")
				wantStatus(t, e.do(t, "POST", path, bobToken, tc.answer), http.StatusOK)
				wantError(t, e.do(t, "POST", path, bobToken, `{"action":"decline"}`), http.StatusNotFound, "not_found")
				select {
				case r := <-done:
					wantStatus(t, r, http.StatusOK)
					en := decode[store.Entry](t, r)
					if en.Status != store.StatusOK || !strings.Contains(string(en.Result), tc.want) || !strings.Contains(string(en.Trail), `"kind":"elicitation"`) {
						t.Fatalf("entry %+v, want a result with %q and the question in the trail", en, tc.want)
					}
				case <-time.After(waitBound):
					t.Fatal("the call did not complete")
				}
				events.next(t, "the elicitation's end", func(ev sseEvent) bool { return ev.Type == "elicitation_done" })
			}
		})
	}
}
