package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/store"
)

// TestSessionEdits: a principal reads, renames, searches and deletes its own
// sessions (never another's); a session with a call running is not
// deleted.
func TestSessionEdits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	q := e.createSession(t, aliceToken, "Quarter review")
	s := e.createSession(t, aliceToken, "scratch")
	bobs := e.createSession(t, bobToken, "Quarter review")
	e.call(t, aliceToken, s.ID, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})

	r := e.do(t, "PATCH", "/api/v1/sessions/"+s.ID, aliceToken, `{"title": "  Echo checks "}`)
	wantStatus(t, r, http.StatusOK)
	if got := decode[store.Session](t, r); got.Title != "Echo checks" || got.ID != s.ID {
		t.Fatalf("rename: %s", r.body)
	}
	wantError(t, e.do(t, "PATCH", "/api/v1/sessions/"+s.ID, bobToken, `{"title": "mine"}`), http.StatusNotFound, "not_found")

	// One session by its id: the caller's own only.
	r = e.do(t, "GET", "/api/v1/sessions/"+s.ID, aliceToken, "")
	wantStatus(t, r, http.StatusOK)
	if got := decode[store.Session](t, r); got.ID != s.ID || got.Title != "Echo checks" {
		t.Fatalf("get: %s", r.body)
	}
	wantError(t, e.do(t, "GET", "/api/v1/sessions/"+s.ID, bobToken, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do(t, "GET", "/api/v1/sessions/s_nosuch", aliceToken, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do(t, "PATCH", "/api/v1/sessions/"+s.ID, aliceToken, `{}`), http.StatusBadRequest, "bad_request")

	type list struct {
		Sessions []store.Session `json:"sessions"`
	}
	search := func(token, q string) []string {
		r := e.do(t, "GET", "/api/v1/sessions?q="+q, token, "")
		wantStatus(t, r, http.StatusOK)
		var ids []string
		for _, x := range decode[list](t, r).Sessions {
			ids = append(ids, x.ID)
		}
		return ids
	}
	if got := search(aliceToken, "quarter"); len(got) != 1 || got[0] != q.ID {
		t.Errorf("search quarter: %v, want alice's %s only", got, q.ID)
	}
	if got := search(aliceToken, "echo"); len(got) != 1 || got[0] != s.ID {
		t.Errorf("search echo (a tool of the session): %v, want %s", got, s.ID)
	}
	if got := search(bobToken, "quarter"); len(got) != 1 || got[0] != bobs.ID {
		t.Errorf("bob's search: %v", got)
	}

	// A call running in the session: 409, and the session stays.
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.send(t.Context(), "POST", callPath(s.ID), aliceToken, mustJSON(callBody{Server: "fx", Tool: "slow", Arguments: map[string]any{"ms": 1500}, CallID: "long"}))
	}()
	deadline := time.Now().Add(waitBound)
	for e.do(t, "GET", "/api/v1/sessions/"+s.ID+"/calls/long", aliceToken, "").status != http.StatusAccepted {
		if time.Now().After(deadline) {
			t.Fatal("the slow call did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantError(t, e.do(t, "DELETE", "/api/v1/sessions/"+s.ID, aliceToken, ""), http.StatusConflict, "conflict")
	<-done

	wantError(t, e.do(t, "DELETE", "/api/v1/sessions/"+s.ID, bobToken, ""), http.StatusNotFound, "not_found")
	r = e.do(t, "DELETE", "/api/v1/sessions/"+s.ID, aliceToken, "")
	wantStatus(t, r, http.StatusOK)
	if got := decode[struct {
		Deleted bool `json:"deleted"`
		Entries int  `json:"entries"`
	}](t, r); !got.Deleted || got.Entries != 2 {
		t.Errorf("delete: %s", r.body)
	}
	wantError(t, e.do(t, "GET", "/api/v1/sessions/"+s.ID+"/entries", aliceToken, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do(t, "POST", callPath(s.ID), aliceToken, mustJSON(callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "x"}})), http.StatusNotFound, "not_found")
	if got := search(aliceToken, ""); len(got) != 1 || got[0] != q.ID {
		t.Errorf("alice's sessions after the delete: %v", got)
	}
}
