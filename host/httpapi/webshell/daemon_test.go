package webshell_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/httpapi/webshell"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

const (
	wellbehavedPkg = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
	revenuePkg     = "github.com/mcphost/mcphost/testdata/servers/revenue"

	// aliceToken is the one principal's token (≥ 16 characters, as the
	// config loader requires).
	aliceToken = "alice-token-0123456789abcdef"
)

// daemon is an mcphost daemon run in process, as `mcphost serve` runs it:
// host, store and HTTP API with the WebShell on a real listener. It can be
// stopped and started again on the same data directory.
type daemon struct {
	cfg    *config.Config
	dbPath string
	// postgres and replica, when set, put the daemon's store on that
	// PostgreSQL database as that replica of a cluster (dbPath unused).
	postgres, replica string
	// credKey derives the WebShell credentials; kept across restarts, as
	// the real daemon keeps data_dir/webshell.key.
	credKey []byte
	port    int    // of the last start
	base    string // http://127.0.0.1:PORT

	// Of the running instance; nil when stopped.
	h      *host.Host
	st     *store.Store
	cancel context.CancelFunc
	served chan error

	// requests records every request the daemon got (see seenRequest).
	mu       sync.Mutex
	requests []seenRequest
}

// seenRequest is one request the daemon got, as its request log would show
// it: method, path, Origin header and whether it carried a token.
type seenRequest struct {
	Method, Path, Origin string
	Authorized           bool
}

// seen returns the requests the daemon has got so far.
func (d *daemon) seen() []seenRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.requests)
}

// stdioServer returns a server block with the defaults the loader fills in.
func stdioServer(name, command string) config.Server {
	return config.Server{
		Name:               name,
		Transport:          config.TransportStdio,
		Command:            command,
		VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout:   20 * time.Second,
		CallTimeout:        2 * time.Minute,
		Enabled:            true,
	}
}

// newDaemon starts a daemon with the principal alice, the wellbehaved
// fixture as server "fx" and the revenue demo as server "revenue", a store in
// a temporary directory, and the API on 127.0.0.1:0. It waits until both
// servers are ready and stops everything at the end of the test. The daemon
// is only for browser tests, so it skips the test first when there is no
// browser (see requireBrowser).
func newDaemon(t *testing.T) *daemon {
	t.Helper()
	return newDaemonWith(t, nil)
}

// newDaemonWith is newDaemon with the config changed by edit (when not nil)
// before the daemon starts; revenueBin is the revenue demo's binary, for
// servers that run one of its variants.
func newDaemonWith(t *testing.T, edit func(cfg *config.Config, revenueBin string)) *daemon {
	t.Helper()
	return newReplicaDaemon(t, "", "", edit)
}

// newReplicaDaemon is newDaemonWith for the replica id of a cluster whose
// store is the PostgreSQL database postgres ("": SQLite, a single node).
func newReplicaDaemon(t *testing.T, postgres, id string, edit func(cfg *config.Config, revenueBin string)) *daemon {
	t.Helper()
	requireBrowser(t) // skip before building and starting anything
	revenueBin := testbin.Build(t, revenuePkg)
	cfg := &config.Config{
		Principals: []config.Principal{{Name: "alice", Token: aliceToken, Groups: []string{"analysts"}}},
		Admins:     []string{"alice"},
		Servers: []config.Server{
			stdioServer("fx", testbin.Build(t, wellbehavedPkg)),
			stdioServer("revenue", revenueBin),
		},
	}
	if edit != nil {
		edit(cfg, revenueBin)
	}
	d := &daemon{cfg: cfg, dbPath: filepath.Join(t.TempDir(), "mcphost.db"), credKey: []byte(t.Name() + " credential key"),
		postgres: postgres, replica: id}
	t.Cleanup(func() { d.stop(t) })
	if err := d.start(t, 0); err != nil {
		t.Fatal(err)
	}
	return d
}

// start starts the daemon on port (0: any free port). It fails only when
// the port cannot be bound; everything else is fatal.
func (d *daemon) start(t *testing.T, port int) error {
	t.Helper()
	if d.h != nil {
		t.Fatal("daemon already running")
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	var st *store.Store
	if d.postgres != "" {
		st, err = store.OpenPostgres(context.Background(), d.postgres, nil, store.Options{Replica: d.replica, Secret: []byte("cluster secret of the WebShell tests, 0123456789")})
	} else {
		st, err = store.Open(context.Background(), d.dbPath, nil)
	}
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	h, err := host.New(d.cfg, host.Options{Store: st, PluginCacheDir: testbin.PluginCacheDir(t), CredentialKey: d.credKey})
	if err != nil {
		ln.Close()
		st.Close()
		t.Fatal(err)
	}
	d.port = ln.Addr().(*net.TCPAddr).Port
	d.base = fmt.Sprintf("http://127.0.0.1:%d", d.port)
	api := httpapi.SandboxHostOnly(d.cfg.AppsSandboxURL, httpapi.New(h, httpapi.Options{
		Hosts:          []string{fmt.Sprintf("127.0.0.1:%d", d.port), fmt.Sprintf("localhost:%d", d.port)},
		PublicURLs:     d.cfg.PublicURLs,
		AppsSandboxURL: d.cfg.AppsSandboxURL,
		Assets:         webshell.Assets(),
		Version:        "test",
	}))
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.requests = append(d.requests, seenRequest{Method: r.Method, Path: r.URL.Path, Origin: r.Header.Get("Origin"),
			Authorized: r.Header.Get("Authorization") != ""})
		d.mu.Unlock()
		api.ServeHTTP(w, r)
	})
	h.Start(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	d.h, d.st, d.cancel, d.served = h, st, cancel, make(chan error, 1)
	go func() { d.served <- h.Serve(ctx, ln, handler) }()

	wctx, wcancel := context.WithTimeout(context.Background(), waitBound)
	defer wcancel()
	if err := h.WaitSettled(wctx); err != nil {
		t.Fatalf("servers did not settle: %v", err)
	}
	for _, s := range d.cfg.Servers {
		ss, err := h.Server(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if ss.State != host.StateReady && !(s.Auth != nil && ss.State == host.StateNeedsAuth) {
			t.Fatalf("server %s is %s, want ready (last error: %s)", s.Name, ss.State, ss.LastError)
		}
	}
	return nil
}

// stop stops serving (the listener closes, event streams end, running calls
// are recorded), then closes the host and the store. It does nothing when
// the daemon is not running.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.h == nil {
		return
	}
	d.cancel()
	if err := <-d.served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if err := d.h.Close(); err != nil {
		t.Errorf("host Close: %v", err)
	}
	if err := d.st.Close(); err != nil {
		t.Errorf("store Close: %v", err)
	}
	d.h, d.st, d.cancel, d.served = nil, nil, nil, nil
}

// restart stops the daemon and starts it again on the same data directory,
// on the same port when it can be bound again and on a new one otherwise.
// It reports whether the port (and so the WebShell's origin) changed.
func (d *daemon) restart(t *testing.T) (moved bool) {
	t.Helper()
	d.stop(t)
	old := d.port
	if err := d.start(t, old); err != nil {
		t.Logf("port %d cannot be bound again (%v); restarting on a new port", old, err)
		if err := d.start(t, 0); err != nil {
			t.Fatal(err)
		}
		return true
	}
	return false
}

// loginURL is the sign-in link `mcphost serve` prints.
func (d *daemon) loginURL(token string) string { return d.base + "/#token=" + token }

// apiJSON sends an authenticated request to the API as alice (body, when
// not nil, as JSON) and decodes the 200 answer into v.
func (d *daemon) apiJSON(t *testing.T, method, path string, body, v any) {
	t.Helper()
	if err := d.apiJSONErr(method, path, body, v); err != nil {
		t.Fatal(err)
	}
}

// apiJSONErr is apiJSON returning its error, for goroutines other than
// the test's.
func (d *daemon) apiJSONErr(method, path string, body, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+"/api/v1"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, got)
	}
	if err := json.Unmarshal(got, v); err != nil {
		return fmt.Errorf("%s %s: decoding %q: %v", method, path, got, err)
	}
	return nil
}

// apiSession is the part of the API's Session the tests look at.
type apiSession struct {
	ID      string `json:"id"`
	Entries int    `json:"entries"`
}

// apiEntry is the part of the API's Entry the tests look at.
type apiEntry struct {
	ID     string `json:"id"`
	Seq    int64  `json:"seq"`
	CallID string `json:"callId"`
	Status string `json:"status"`
	Tool   string `json:"tool"`
}

func (d *daemon) sessions(t *testing.T) []apiSession {
	t.Helper()
	var r struct {
		Sessions []apiSession `json:"sessions"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions", nil, &r)
	return r.Sessions
}

func (d *daemon) entries(t *testing.T, sessionID string) []apiEntry {
	t.Helper()
	var r struct {
		Entries []apiEntry `json:"entries"`
	}
	d.apiJSON(t, http.MethodGet, "/sessions/"+sessionID+"/entries?limit=500", nil, &r)
	return r.Entries
}

// callEcho calls fx.echo through the API, as a client other than the page.
func (d *daemon) callEcho(t *testing.T, sessionID, text string) apiEntry {
	t.Helper()
	var e apiEntry
	d.apiJSON(t, http.MethodPost, "/sessions/"+sessionID+"/calls",
		map[string]any{"server": "fx", "tool": "echo", "arguments": map[string]any{"text": text}}, &e)
	if e.Status != "ok" {
		t.Fatalf("fx.echo through the API: %+v", e)
	}
	return e
}
