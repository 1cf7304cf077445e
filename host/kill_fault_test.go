package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

// faultWait bounds every wait of the fault tests; it only keeps a broken
// test from hanging and is never a timing assertion.
const faultWait = 2 * time.Minute

// TestKillStdioServerMidCalls extends TestRestartWithBackoff (a server that
// exits on its own, with no call running) and httpapi's TestServerDiesMidCall
// (one call, no restart): a stdio server is killed with SIGKILL while several
// session calls run on it and another server answers a steady stream of
// calls. Every in-flight call ends with an error entry that names the call
// and the ended session; the killed server is restarted with backoff (a new
// process) and serves again; the other server answers every call
// throughout; the transcript holds every call, nothing more.
func TestKillStdioServerMidCalls(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "mcphost.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the host's Close (registered later)

	victimStatus := make(chan host.ServerStatus, 1024)
	opts := host.Options{
		Store:      st,
		Restart:    true,
		BackoffMin: 50 * time.Millisecond,
		BackoffMax: 200 * time.Millisecond,
		OnStatus: func(s host.ServerStatus) {
			if s.Name == "victim" {
				select {
				case victimStatus <- s:
				default: // OnStatus must not block
				}
			}
		},
	}
	h := startHost(t, opts, stdioServer("victim", bin), stdioServer("bystander", bin))
	before := mustStatus(t, h, "victim")
	if before.State != host.StateReady || before.PID == 0 {
		t.Fatalf("victim: %s pid %d (%s)", before.State, before.PID, before.LastError)
	}
	if st := mustStatus(t, h, "bystander"); st.State != host.StateReady {
		t.Fatalf("bystander: %s (%s)", st.State, st.LastError)
	}

	victimSess, err := h.CreateSession(t.Context(), alice, "victim")
	if err != nil {
		t.Fatal(err)
	}
	bystanderSess, err := h.CreateSession(t.Context(), bob, "bystander")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), faultWait)
	defer cancel()

	// alice's events say when each slow call is running on the server: its
	// first progress notification. The reader drains the channel so that
	// the bus never drops the subscription.
	events, unsubscribe, err := h.Subscribe(host.Caller{Principal: host.Principal{Name: alice.Name}})
	if err != nil {
		t.Fatal(err)
	}
	defer unsubscribe()
	const inFlight = 4
	running := make(chan string, inFlight)
	go func() {
		seen := map[string]bool{}
		for ev := range events {
			if p, ok := ev.Data.(host.CallProgress); ok && ev.Type == host.EventProgress && !seen[p.CallID] {
				seen[p.CallID] = true
				running <- p.CallID
			}
		}
	}()

	// The bystander's steady stream of calls, as bob, until stopped.
	var (
		bystanderMu    sync.Mutex
		bystanderOK    int
		bystanderErrs  []string
		bystanderIDs   []string
		stopBystanders = make(chan struct{})
		bystanders     sync.WaitGroup
	)
	for w := range 2 {
		bystanders.Add(1)
		go func() {
			defer bystanders.Done()
			for i := 0; ; i++ {
				select {
				case <-stopBystanders:
					return
				default:
				}
				text := fmt.Sprintf("w%d-%d", w, i)
				e, err := h.Call(ctx, host.SessionCall{Principal: bob, SessionID: bystanderSess.ID, Server: "bystander", Tool: "echo",
					Arguments: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))})
				bystanderMu.Lock()
				switch {
				case err != nil:
					bystanderErrs = append(bystanderErrs, err.Error())
				case e.Status != store.StatusOK || !strings.Contains(string(e.Result), text):
					bystanderErrs = append(bystanderErrs, fmt.Sprintf("entry %s: status %s error %q result %s", e.ID, e.Status, e.Error, e.Result))
				default:
					bystanderOK++
					bystanderIDs = append(bystanderIDs, e.ID)
				}
				bystanderMu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}

	type outcome struct {
		callID string
		entry  *store.Entry
		err    error
	}
	results := make(chan outcome, inFlight)
	for i := range inFlight {
		callID := fmt.Sprintf("doomed-%d", i)
		go func() {
			e, err := h.Call(ctx, host.SessionCall{Principal: alice, SessionID: victimSess.ID, Server: "victim", Tool: "slow",
				Arguments: json.RawMessage(`{"ms":600000}`), CallID: callID})
			results <- outcome{callID, e, err}
		}()
	}
	for range inFlight {
		select {
		case <-running:
		case <-ctx.Done():
			t.Fatal("the slow calls did not all start")
		}
	}
	// Drop the statuses seen so far: from here on, the first failed one is
	// the kill's.
drain:
	for {
		select {
		case <-victimStatus:
		default:
			break drain
		}
	}

	if err := syscall.Kill(before.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	doomed := map[string]*store.Entry{}
	for range inFlight {
		var o outcome
		select {
		case o = <-results:
		case <-ctx.Done():
			t.Fatalf("in-flight calls did not return within %s of the kill", faultWait)
		}
		// Once the call was made, the outcome is an entry, not an error.
		if o.err != nil {
			t.Errorf("%s: %v, want an error entry", o.callID, o.err)
			continue
		}
		doomed[o.callID] = o.entry
		if o.entry.Status != store.StatusError || o.entry.Result != nil {
			t.Errorf("%s: status %s result %s, want error and no result", o.callID, o.entry.Status, o.entry.Result)
		}
		// A clear error: which call, and that the server's session ended.
		if !strings.Contains(o.entry.Error, "call victim.slow") || !strings.Contains(o.entry.Error, "the server's connection ended before it answered") {
			t.Errorf("%s: error %q does not name the call and say that the server's connection ended", o.callID, o.entry.Error)
		}
		t.Logf("%s: %s", o.callID, o.entry.Error)
	}

	// The supervisor sees the death, says how the process ended, and
	// restarts it: a new process that answers.
	var failed, restarted host.ServerStatus
	for restarted.State != host.StateReady {
		select {
		case s := <-victimStatus:
			switch {
			case s.State == host.StateFailed && failed.State == "":
				failed = s
			case s.State == host.StateReady && failed.State != "":
				restarted = s
			}
		case <-ctx.Done():
			t.Fatalf("victim was not restarted within %s (now %+v)", faultWait, mustStatus(t, h, "victim"))
		}
	}
	if !strings.Contains(failed.LastError, "signal: killed") {
		t.Errorf("failed status says %q, want the process's end (signal: killed)", failed.LastError)
	}
	if restarted.Restarts < 1 || restarted.PID == 0 || restarted.PID == before.PID {
		t.Errorf("restarted: restarts %d pid %d (was %d), want a new process", restarted.Restarts, restarted.PID, before.PID)
	}
	assertGone(t, before.PID)
	e, err := h.Call(ctx, host.SessionCall{Principal: alice, SessionID: victimSess.ID, Server: "victim", Tool: "echo",
		Arguments: json.RawMessage(`{"text":"back"}`)})
	if err != nil || e.Status != store.StatusOK || !strings.Contains(string(e.Result), "back") {
		t.Fatalf("call after the restart: %v %+v", err, e)
	}

	close(stopBystanders)
	bystanders.Wait()
	bystanderMu.Lock()
	defer bystanderMu.Unlock()
	if len(bystanderErrs) > 0 {
		t.Errorf("%d bystander calls failed while the victim died; first: %s", len(bystanderErrs), bystanderErrs[0])
	}
	if bystanderOK == 0 {
		t.Error("no bystander call completed")
	}
	t.Logf("%d bystander calls answered across the kill and restart", bystanderOK)

	// The transcripts hold every call and nothing else.
	victimEntries, _, err := h.Entries(t.Context(), alice, victimSess.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(victimEntries) != inFlight+1 {
		t.Errorf("victim session has %d entries, want %d", len(victimEntries), inFlight+1)
	}
	for _, ve := range victimEntries {
		if d, ok := doomed[ve.CallID]; ok && (ve.ID != d.ID || ve.Status != store.StatusError) {
			t.Errorf("stored %s: id %s status %s, returned id %s", ve.CallID, ve.ID, ve.Status, d.ID)
		}
	}
	stored := map[string]bool{}
	for after := int64(0); ; {
		page, next, err := h.Entries(t.Context(), bob, bystanderSess.ID, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, be := range page {
			stored[be.ID] = true
		}
		if next == 0 {
			break
		}
		after = next
	}
	for _, id := range bystanderIDs {
		if !stored[id] {
			t.Errorf("acknowledged bystander entry %s is not stored", id)
		}
	}
}
