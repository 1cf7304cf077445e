package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcphost/mcphost/host/config"
)

// TestClientPoolShares: how the per-client sessions of a server with
// max_client_sessions = 3 and max_client_sessions_per_principal = 2 are
// shared out. A principal past its share takes the place of its own idle
// session, never another principal's; past the cap a client takes the
// least recently used idle one of anyone's; with none idle a call waits,
// wakes when one goes idle, and fails after clientSessionWait with an
// error naming the setting. It never gets no session and no error (which
// was: take the shared session, where its questions go unasked).
func TestClientPoolShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Conn{Cfg: config.Server{Name: "srv", MaxClientSessions: 3, MaxClientSessionsPerPrincipal: 2},
			logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		p := &c.clients
		type joined struct {
			u    *clientUpstream
			call *clientCall
		}
		// join makes a call of principal's client key; a new session is
		// opened at once (with no session: nothing here talks to it).
		join := func(key, principal string) (joined, error) {
			call := &clientCall{call: &Call{Principal: principal}}
			u, fresh, err := c.joinClientUpstream(t.Context(), key, principal, call)
			if err != nil {
				return joined{}, err
			}
			if fresh {
				close(u.ready)
			}
			return joined{u, call}, nil
		}
		mustJoin := func(key, principal string) joined {
			t.Helper()
			j, err := join(key, principal)
			if err != nil {
				t.Fatalf("%s of %s: %v", key, principal, err)
			}
			return j
		}
		leave := func(j joined) { p.leave(j.u, j.call) }
		keys := func() []string {
			p.mu.Lock()
			defer p.mu.Unlock()
			return slices.Sorted(maps.Keys(p.m))
		}
		wantBusy := func(key, principal, setting string) {
			t.Helper()
			_, err := join(key, principal)
			if err == nil || !strings.Contains(err.Error(), setting) || !strings.Contains(err.Error(), "none was free within") {
				t.Fatalf("%s of %s: %v, want a wait that fails naming %s", key, principal, err, setting)
			}
		}

		a1 := mustJoin("a1", "alice")
		mustJoin("a2", "alice")
		wantBusy("a3", "alice", fullShare) // alice's share is full, both busy
		b1 := mustJoin("b1", "bob")        // bob still has room
		wantBusy("c1", "carol", fullCap)   // the cap is full, all busy
		mustJoin("a2", "alice")            // a client with a session joins it, busy or not

		// carol waits until bob's session goes idle, then takes its place.
		type result struct {
			j   joined
			err error
		}
		carol := make(chan result, 1)
		go func() {
			j, err := join("c1", "carol")
			carol <- result{j, err}
		}()
		synctest.Wait()
		select {
		case r := <-carol:
			t.Fatalf("carol did not wait: %v", r.err)
		default:
		}
		leave(b1)
		c1 := <-carol
		if c1.err != nil {
			t.Fatal(c1.err)
		}
		if got := strings.Join(keys(), ","); got != "a1,a2,c1" {
			t.Fatalf("sessions %s, want bob's idle one closed for carol's", got)
		}

		// alice past her share takes the place of her own idle session,
		// never of carol's (idle too).
		leave(c1.j)
		leave(a1)
		mustJoin("a3", "alice")
		if got := strings.Join(keys(), ","); got != "a2,a3,c1" {
			t.Fatalf("sessions %s, want alice's idle a1 closed for a3", got)
		}
		wantBusy("a4", "alice", fullShare) // a2 and a3 are busy; carol's idle c1 is not alice's to take

		// The server's session ends while a call waits: it fails at once.
		waiting := make(chan error, 1)
		go func() {
			_, err := join("a4", "alice")
			waiting <- err
		}()
		synctest.Wait()
		p.closeAll(true)
		if err := <-waiting; err == nil || !strings.Contains(err.Error(), "its session ended") {
			t.Fatalf("a call waiting as the server's session ended: %v", err)
		}
		// And one whose caller gives up stops waiting.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p.closed = false
		mustJoin("x1", "xavier")
		mustJoin("x2", "xavier")
		if _, _, err := c.joinClientUpstream(ctx, "x3", "xavier", &clientCall{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait: %v", err)
		}
	})
}
