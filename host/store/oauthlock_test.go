package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/oauth"
)

// A replica's OAuth manager over its own Store, the way host wires it.
type oauthReplica struct {
	m      *oauth.Manager
	client *http.Client // alice's upstream HTTP client, through the manager's transport
}

func newOAuthReplica(t *testing.T, st oauth.Store, srv *oauthtest.Server) *oauthReplica {
	t.Helper()
	sealer, err := oauth.NewSealer(bytes.Repeat([]byte{7}, 32)) // one key for every replica
	if err != nil {
		t.Fatal(err)
	}
	var base string
	m, err := oauth.NewManager(oauth.Options{BaseURL: func() string { return base }, Store: st, Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	daemon := httptest.NewServer(m.Handler())
	t.Cleanup(daemon.Close)
	base = daemon.URL
	m.SetServers([]oauth.ServerConfig{{Name: "srv", URL: srv.URL}})
	return &oauthReplica{m: m, client: &http.Client{Transport: m.Transport("srv", "alice", http.DefaultTransport), Timeout: 30 * time.Second}}
}

// signIn signs alice in through r's broker, as a browser that clicks
// "Allow" would.
func (r *oauthReplica) signIn(t *testing.T) {
	t.Helper()
	f, err := r.m.StartSignIn(t.Context(), "srv", oauth.Caller{Principal: "alice", Owner: true})
	if err != nil {
		t.Fatalf("StartSignIn: %v", err)
	}
	if _, err := oauthtest.OpenLaunch(t.Context(), oauthtest.NewBrowser(), f.LaunchURL); err != nil {
		t.Fatal(err)
	}
	if got, ok := r.m.FlowStatus(t.Context(), f.ID, "alice", 10*time.Second); !ok || got.State != oauth.FlowDone {
		t.Fatalf("sign-in flow %+v", got)
	}
}

// call makes one MCP request to the protected server through r.
func (r *oauthReplica) call(ctx context.Context, url string) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// refreshes counts the refresh grants the authorization server received.
func refreshes(as *oauthtest.AS) (n int) {
	for _, q := range as.Requests() {
		if q.Path == "/token" && q.Form.Get("grant_type") == "refresh_token" {
			n++
		}
	}
	return n
}

// expireStored signs alice in (through a replica of its own) and then
// makes the stored access token expired, so that the next use on any
// replica needs a refresh.
func expireStored(t *testing.T, st oauth.Store, srv *oauthtest.Server) *oauth.Record {
	t.Helper()
	newOAuthReplica(t, st, srv).signIn(t)
	rec, err := st.LoadCredential(t.Context(), "srv", "alice")
	if err != nil || rec == nil {
		t.Fatalf("stored credential: %v %v", rec, err)
	}
	rec.Expiry = time.Now().Add(-time.Minute)
	rec.Generation++
	if err := st.SaveCredential(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// twoReplicas opens two Stores on one database: one PostgreSQL database,
// or (SQLite is one node) one Store that both replicas share.
func twoReplicas(t *testing.T, backend string) (a, b *Store) {
	t.Helper()
	switch backend {
	case "postgres":
		dsn := pgtest.Shared(t).NewDatabase(t)
		return mustOpenPostgres(t, dsn, Options{}), mustOpenPostgres(t, dsn, Options{})
	default:
		s := mustOpen(t, filepath.Join(t.TempDir(), "mcphost.db"))
		return s, s
	}
}

// Two replicas need a refresh of the same rotating refresh token at once
// (issue 17): exactly one refresh reaches the authorization server and
// both use its result. The authorization server revokes the whole family
// when a refresh token is replayed, so a second refresh with the old token
// would also have broken the winner's.
func TestOAuthRefreshSingleFlightAcrossReplicas(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			as := oauthtest.NewAS(t)
			as.ReuseRevokesFamily = true
			srv := oauthtest.NewServer(t, as)
			sa, sb := twoReplicas(t, backend)
			expired := expireStored(t, sa, srv)
			before := refreshes(as)
			replicas := []*oauthReplica{newOAuthReplica(t, sa, srv), newOAuthReplica(t, sb, srv)}

			var wg sync.WaitGroup
			errs := make(chan error, 20)
			start := make(chan struct{})
			for i := range 20 {
				r := replicas[i%2]
				wg.Go(func() {
					<-start
					errs <- r.call(t.Context(), srv.URL)
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("a call failed: %v", err)
				}
			}
			if n := refreshes(as) - before; n != 1 {
				t.Fatalf("%d refreshes reached the authorization server for 20 concurrent calls on two replicas, want 1", n)
			}
			rec, err := sb.LoadCredential(t.Context(), "srv", "alice")
			if err != nil || rec == nil {
				t.Fatalf("stored after the refresh: %v %v", rec, err)
			}
			if rec.Generation != expired.Generation+1 {
				t.Errorf("stored generation %d, want %d (one refresh written)", rec.Generation, expired.Generation+1)
			}
			// Both replicas sent the one refreshed token (the expired one is
			// refreshed before use, never sent), and it is live.
			seen := srv.Seen()
			last := seen[len(seen)-1]
			if _, ok := as.Valid(last); !ok {
				t.Fatalf("the token in use is not live at the authorization server (family revoked by a replay?)")
			}
			for _, tok := range seen {
				if tok != last {
					t.Fatalf("the server was sent another token than the one refresh's")
				}
			}
		})
	}
}

// staleStore hands the first refresh a credential read before another
// replica's refresh (a replica whose lock did not keep the other out: an
// older mcphost during a rolling upgrade, another process on a SQLite
// file), so that it redeems a refresh token that was already rotated.
type staleStore struct {
	oauth.Store
	mu    sync.Mutex
	stale *oauth.Record
}

func (s *staleStore) RefreshCredential(ctx context.Context, server, principal string, fn func(cur *oauth.Record) (*oauth.Record, error)) (*oauth.Record, error) {
	s.mu.Lock()
	stale := s.stale
	s.stale = nil
	s.mu.Unlock()
	if stale == nil {
		return s.Store.RefreshCredential(ctx, server, principal, fn)
	}
	return s.Store.RefreshCredential(ctx, server, principal, func(*oauth.Record) (*oauth.Record, error) {
		next, err := fn(stale)
		if err == nil && next != nil && next != stale {
			return nil, errors.New("test: the stale refresh was not refused")
		}
		return next, err
	})
}

// A replica whose refresh is refused with invalid_grant because another
// replica already redeemed the same refresh token reads the credential
// again under the lock, finds the winner's, keeps it and uses it: it never
// deletes it.
func TestOAuthRefusedRefreshKeepsTheWinnersCredential(t *testing.T) {
	for _, backend := range []string{"postgres", "sqlite"} {
		t.Run(backend, func(t *testing.T) {
			as := oauthtest.NewAS(t) // plain rotation: a replay is invalid_grant, the family lives on
			srv := oauthtest.NewServer(t, as)
			sa, sb := twoReplicas(t, backend)
			expired := expireStored(t, sa, srv)
			a := newOAuthReplica(t, sa, srv)
			stale := &staleStore{Store: sb, stale: expired}
			b := newOAuthReplica(t, stale, srv)
			if !b.m.SignedIn(t.Context(), "srv", "alice") { // b holds the expired credential
				t.Fatal("replica b does not see the credential")
			}
			before := refreshes(as)
			if err := a.call(t.Context(), srv.URL); err != nil {
				t.Fatalf("replica a: %v", err)
			}
			winner, _ := sa.LoadCredential(t.Context(), "srv", "alice")
			if err := b.call(t.Context(), srv.URL); err != nil {
				t.Fatalf("replica b after its refused refresh: %v", err)
			}
			if n := refreshes(as) - before; n != 2 {
				t.Fatalf("%d refreshes, want 2 (a's, then b's replay of the rotated token)", n)
			}
			got, err := sb.LoadCredential(t.Context(), "srv", "alice")
			if err != nil || got == nil {
				t.Fatalf("the winner's credential was deleted after b's invalid_grant: %v %v", got, err)
			}
			if got.Generation != winner.Generation || !bytes.Equal(got.AccessToken, winner.AccessToken) {
				t.Errorf("stored generation %d, want the winner's %d untouched", got.Generation, winner.Generation)
			}
			seen := srv.Seen()
			if seen[len(seen)-1] != seen[len(seen)-2] {
				t.Errorf("b sent another token than a's refreshed one")
			}
			// And when the refused token is still the stored one, the
			// refusal does drop it.
			as.RejectAll = true
			as.Invalidate()
			if err := b.call(t.Context(), srv.URL); err == nil {
				t.Fatal("a call succeeded with every refresh refused")
			}
			if got, _ := sb.LoadCredential(t.Context(), "srv", "alice"); got != nil {
				t.Fatal("a credential whose stored refresh token was refused is still stored")
			}
		})
	}
}
