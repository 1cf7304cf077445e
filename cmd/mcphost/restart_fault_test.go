package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestDaemonRestartDuringCalls restarts the real daemon the way a service
// manager does (SIGTERM, then start again on the same data_dir) while a
// burst of quick calls runs and three long calls are in progress (a restart
// is one way to apply a new config; SIGHUP reloads it in place, see
// TestDaemonReloadSIGHUP). The daemon
// stops within its shutdown grace, exits 0 and reaps its server; the long
// calls are recorded as cancelled, with the reason; every acknowledged
// entry is there after the restart, with gapless seqs and nothing else;
// and the restarted daemon serves calls in the same session.
// TestDaemonDurability covers kill -9 instead of a clean stop.
func TestDaemonRestartDuringCalls(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", filepath.Join(dir, "state"), "")
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()

	d := startDaemon(t, bin, cfg)
	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)
	var sess struct {
		ID string `json:"id"`
	}
	d.mustJSON(t, client, "POST", "/api/v1/sessions", `{"title":"restart"}`, 201, &sess)
	callPath := "/api/v1/sessions/" + sess.ID + "/calls"

	ctx, cancel := context.WithTimeout(context.Background(), daemonBound)
	defer cancel()

	// The burst: quick calls until the daemon stops answering.
	var (
		mu     sync.Mutex
		acked  = map[string]int64{} // entry id → seq
		burst  sync.WaitGroup
		enough = make(chan struct{})
		once   sync.Once
	)
	for w := range 2 {
		burst.Add(1)
		go func() {
			defer burst.Done()
			for i := 0; ctx.Err() == nil; i++ {
				status, b, err := d.request(ctx, client, "POST", callPath,
					fmt.Sprintf(`{"server":"fx","tool":"echo","arguments":{"text":"w%d-%d"}}`, w, i))
				if err != nil || status != http.StatusOK {
					return // the daemon is stopping
				}
				var e daemonEntry
				if err := json.Unmarshal(b, &e); err != nil || e.Status != "ok" {
					return
				}
				mu.Lock()
				acked[e.ID] = e.Seq
				if len(acked) >= 20 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatalf("the burst got no 20 answers\nstderr:\n%s", d.stderr.String())
	}

	// The long calls, each surely running before the stop.
	const long = 3
	type answer struct {
		callID string
		status int
		body   []byte
		err    error
	}
	answers := make(chan answer, long)
	for i := range long {
		callID := fmt.Sprintf("running-%d", i)
		go func() {
			status, b, err := d.request(ctx, client, "POST", callPath,
				fmt.Sprintf(`{"server":"fx","tool":"slow","arguments":{"ms":600000},"callId":%q}`, callID))
			answers <- answer{callID, status, b, err}
		}()
		ev.wait(t, "progress", func(s map[string]any) bool { return s["callId"] == callID })
	}

	d.stop(t, syscall.SIGTERM)
	if err := syscall.Kill(fx.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still exists after the daemon stopped (kill 0: %v)", fx.PID, err)
	}
	burst.Wait()
	// A long call's client gets its cancelled entry, or loses the
	// connection when the server closes it at the end of the grace period;
	// the entry is recorded either way (checked below).
	for range long {
		a := <-answers
		switch {
		case a.err != nil:
			t.Logf("%s: no answer: %v", a.callID, a.err)
		case a.status != http.StatusOK:
			t.Errorf("%s: status %d: %s", a.callID, a.status, a.body)
		default:
			var e daemonEntry
			if err := json.Unmarshal(a.body, &e); err != nil || e.Status != "cancelled" {
				t.Errorf("%s: answer %s, want a cancelled entry", a.callID, a.body)
			}
			t.Logf("%s: answered with its cancelled entry", a.callID)
		}
	}

	d2 := startDaemon(t, bin, cfg)
	if d2.token != d.token {
		t.Errorf("restart printed token %q, want the stored %q", d2.token, d.token)
	}
	var page struct {
		Entries []struct {
			daemonEntry
			Error string `json:"error"`
		} `json:"entries"`
		Next *int64 `json:"next"`
	}
	d2.mustJSON(t, client, "GET", "/api/v1/sessions/"+sess.ID+"/entries?limit=500", "", 200, &page)
	if page.Next != nil {
		t.Fatalf("more than 500 entries")
	}
	stored := map[string]int64{}
	cancelled := map[string]int{}
	for i, e := range page.Entries {
		if e.Seq != int64(i+1) {
			t.Errorf("entry %d (%s) has seq %d: seqs are not gapless", i, e.ID, e.Seq)
		}
		stored[e.ID] = e.Seq
		switch {
		case strings.HasPrefix(e.CallID, "running-"):
			cancelled[e.CallID]++
			if e.Status != "cancelled" || !strings.Contains(e.Error, "cancelled") {
				t.Errorf("%s: status %s error %q, want cancelled with the reason", e.CallID, e.Status, e.Error)
			}
		case e.Status != "ok":
			t.Errorf("burst entry %s: status %s (%s)", e.ID, e.Status, e.Error)
		}
	}
	for i := range long {
		if id := fmt.Sprintf("running-%d", i); cancelled[id] != 1 {
			t.Errorf("%s is recorded %d times, want once", id, cancelled[id])
		}
	}
	mu.Lock()
	for id, seq := range acked {
		if s, ok := stored[id]; !ok || s != seq {
			t.Errorf("acknowledged entry %s (seq %d) after the restart: seq %d, stored %v", id, seq, s, ok)
		}
	}
	t.Logf("%d burst calls acknowledged, %d entries stored", len(acked), len(page.Entries))
	mu.Unlock()

	// The restarted daemon serves the same session.
	ev2 := d2.subscribe(t, client)
	d2.waitReady(t, client, ev2)
	var e daemonEntry
	d2.mustJSON(t, client, "POST", callPath, `{"server":"fx","tool":"echo","arguments":{"text":"after"}}`, 200, &e)
	if e.Status != "ok" || e.Seq != int64(len(page.Entries)+1) {
		t.Errorf("first call after the restart: status %s seq %d, want ok and %d", e.Status, e.Seq, len(page.Entries)+1)
	}
	d2.stop(t, syscall.SIGTERM)
}
