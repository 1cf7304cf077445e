package httpapi_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// TestServerLogsAndRestart: an admin reads a server's stderr tail and log
// messages and restarts it (a new process, ready again, and calls work);
// anyone else gets 403, an unknown server 404.
func TestServerLogsAndRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.do(t, "GET", "/api/v1/servers/fx/logs", aliceToken, "")
	wantStatus(t, r, http.StatusOK)
	logs := decode[host.ServerLogs](t, r)
	if logs.Server != "fx" || !slices.Contains(logs.Stderr, "fixture: started") || logs.Messages == nil {
		t.Fatalf("logs: %s", r.body)
	}
	wantError(t, e.do(t, "GET", "/api/v1/servers/fx/logs", bobToken, ""), http.StatusForbidden, "forbidden")
	wantError(t, e.do(t, "GET", "/api/v1/servers/nope/logs", aliceToken, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do(t, "POST", "/api/v1/servers/fx/restart", bobToken, ""), http.StatusForbidden, "forbidden")

	pid := func() (int, string) {
		var list struct {
			Servers []host.ServerStatus `json:"servers"`
		}
		list = decode[struct {
			Servers []host.ServerStatus `json:"servers"`
		}](t, e.do(t, "GET", "/api/v1/servers", aliceToken, ""))
		return list.Servers[0].PID, string(list.Servers[0].State)
	}
	old, _ := pid()
	wantStatus(t, e.do(t, "POST", "/api/v1/servers/fx/restart", aliceToken, ""), http.StatusAccepted)
	deadline := time.Now().Add(waitBound)
	for {
		now, state := pid()
		if now != 0 && now != old && state == string(host.StateReady) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart fx has pid %d (%s), was %d", now, state, old)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sid := e.createSession(t, aliceToken, "").ID
	if en := e.call(t, aliceToken, sid, callBody{Server: "fx", Tool: "echo", Arguments: map[string]any{"text": "again"}}); en.Status != "ok" {
		t.Errorf("a call after the restart: %+v", en)
	}
}
