package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

const (
	mcphostPkg     = "github.com/mcphost/mcphost/cmd/mcphost"
	wellbehavedPkg = "github.com/mcphost/mcphost/testdata/servers/wellbehaved"
)

// daemonBound bounds every wait of the daemon tests; it only keeps a broken
// test from hanging and is never a timing assertion.
const daemonBound = 2 * time.Minute

// urlLine is the line serve prints once its listener is up.
var urlLine = regexp.MustCompile(`(http://127\.0\.0\.1:(\d+))/#token=([0-9a-f]+)`)

// teamURLLine is the first line of a daemon whose config has principals
// (so no owner token).
var teamURLLine = regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/ \(sign in with a principal's token\)`)

// daemon is a running `mcphost serve` process.
type daemon struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	token  string
	stderr *syncBuffer
	exited chan struct{} // closed when cmd.Wait has returned
	err    error         // cmd.Wait's error, once exited is closed
}

// lineWriter is serve's stdout: it hands each complete line to a channel
// (dropping lines nobody waits for) and keeps everything for diagnostics.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	part  []byte
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		line := string(w.part[:i])
		w.part = w.part[i+1:]
		select {
		case w.lines <- line:
		default:
		}
	}
	return len(p), nil
}

// writeDaemonConfig writes a config with one stdio server running the
// wellbehaved fixture and returns its path.
func writeDaemonConfig(t *testing.T, dir, listen, dataDir, extra string) string {
	t.Helper()
	fixture := testbin.Build(t, wellbehavedPkg)
	cfg := filepath.Join(dir, "mcphost.hcl")
	src := fmt.Sprintf("listen = %q\ndata_dir = %q\n\nserver \"fx\" {\n  command = %q\n}\n%s", listen, dataDir, fixture, extra)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startDaemon runs `mcphost serve -config cfg [extra...]` in its own
// process group and returns once it has printed its URL line (after the
// listener is open). A config with principals leaves d.token empty.
func startDaemon(t *testing.T, bin, cfg string, extra ...string) *daemon {
	t.Helper()
	stdout := &lineWriter{lines: make(chan string, 16)}
	d := &daemon{stderr: &syncBuffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(bin, append([]string{"serve", "-config", cfg}, extra...)...)
	d.cmd.Stdout = stdout
	d.cmd.Stderr = d.stderr
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(func() {
		d.killGroup()
		<-d.exited
	})
	timeout := time.NewTimer(daemonBound)
	defer timeout.Stop()
	for {
		select {
		case line := <-stdout.lines:
			if m := urlLine.FindStringSubmatch(line); m != nil {
				d.base, d.token = m[1], m[3]
				return d
			}
			if m := teamURLLine.FindStringSubmatch(line); m != nil {
				d.base = m[1]
				return d
			}
		case <-d.exited:
			t.Fatalf("serve exited (%v) before printing its URL\nstderr:\n%s", d.err, d.stderr.String())
		case <-timeout.C:
			t.Fatalf("serve printed no URL line within %s\nstdout:\n%s\nstderr:\n%s", daemonBound, stdout.buf.String(), d.stderr.String())
		}
	}
}

// killGroup sends SIGKILL to the daemon's process group.
func (d *daemon) killGroup() {
	select {
	case <-d.exited:
	default:
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// stop sends sig to the daemon and waits, within daemonBound, for it to
// exit; an exit status other than 0 fails t, with the daemon's stderr.
func (d *daemon) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := d.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.exited:
	case <-time.After(daemonBound):
		t.Fatalf("the daemon did not stop within %s of %v\nstderr:\n%s", daemonBound, sig, d.stderr.String())
	}
	if d.err != nil {
		t.Errorf("daemon exit after %v: %v, want 0\nstderr:\n%s", sig, d.err, d.stderr.String())
	}
}

// request makes one API request as the daemon's owner.
func (d *daemon) request(ctx context.Context, client *http.Client, method, path, body string) (int, []byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, d.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (d *daemon) mustJSON(t *testing.T, client *http.Client, method, path, body string, want int, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daemonBound)
	defer cancel()
	status, b, err := d.request(ctx, client, method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v\nstderr:\n%s", method, path, err, d.stderr.String())
	}
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// events is a minimal reader of /api/v1/events.
type events struct {
	ch chan [2]string // event type, data
}

// subscribe opens the event stream and returns once it is live.
func (d *daemon) subscribe(t *testing.T, client *http.Client) *events {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", d.base+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		cancel()
		t.Fatalf("events: status %d", resp.StatusCode)
	}
	ev := &events{ch: make(chan [2]string, 4096)}
	ready := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ev.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var once sync.Once
		var typ, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				once.Do(func() { close(ready) })
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && typ != "":
				select {
				case ev.ch <- [2]string{typ, data}:
				case <-ctx.Done():
					return
				}
				typ, data = "", ""
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	select {
	case <-ready:
	case <-done:
		t.Fatal("the event stream ended before it opened")
	case <-time.After(daemonBound):
		t.Fatal("the event stream did not open")
	}
	return ev
}

// wait returns the data of the first event of type typ for which match is
// true.
func (e *events) wait(t *testing.T, typ string, match func(data map[string]any) bool) map[string]any {
	t.Helper()
	timeout := time.NewTimer(daemonBound)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				t.Fatalf("the event stream ended while waiting for %s", typ)
			}
			if ev[0] != typ {
				continue
			}
			var data map[string]any
			if err := json.Unmarshal([]byte(ev[1]), &data); err != nil {
				t.Fatalf("event %s: %v", typ, err)
			}
			if match(data) {
				return data
			}
		case <-timeout.C:
			t.Fatalf("no %s event within %s", typ, daemonBound)
		}
	}
}

type serverStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	PID    int    `json:"pid"`
}

// waitReady waits until server fx is ready: a server event after the
// subscription, or the status list if it was ready before.
func (d *daemon) waitReady(t *testing.T, client *http.Client, ev *events) serverStatus {
	t.Helper()
	var list struct {
		Servers []serverStatus `json:"servers"`
	}
	d.mustJSON(t, client, "GET", "/api/v1/servers", "", 200, &list)
	if len(list.Servers) != 1 {
		t.Fatalf("servers %+v", list.Servers)
	}
	if list.Servers[0].Status == "ready" {
		return list.Servers[0]
	}
	data := ev.wait(t, "server", func(s map[string]any) bool { return s["name"] == "fx" && s["status"] == "ready" })
	pid, _ := data["pid"].(float64)
	return serverStatus{Name: "fx", Status: "ready", PID: int(pid)}
}

type daemonEntry struct {
	ID     string `json:"id"`
	Seq    int64  `json:"seq"`
	Status string `json:"status"`
	CallID string `json:"callId"`
}

// TestDaemonDurability runs the real daemon, makes a burst of calls,
// SIGKILLs it with calls in flight, restarts it on the same data_dir, and
// checks that every acknowledged entry survived, with gapless seqs, and that
// the owner token was reused. It runs under both store sync modes: "normal"
// leaves the fsync to checkpoints, which costs nothing when only the process
// dies.
func TestDaemonDurability(t *testing.T) {
	tests := []struct {
		name  string
		block string // the config's store block
	}{
		{"full", ""}, // the default
		{"normal", "\nstore {\n  sync = \"normal\"\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testDaemonDurability(t, tt.name, tt.block) })
	}
}

func testDaemonDurability(t *testing.T, mode, storeBlock string) {
	bin := testbin.Build(t, mcphostPkg)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "state")
	cfg := writeDaemonConfig(t, dir, "127.0.0.1:0", dataDir, storeBlock)
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer client.CloseIdleConnections()

	d := startDaemon(t, bin, cfg)
	tokenFile := filepath.Join(dataDir, ownerTokenFile)
	checkTokenFile(t, tokenFile, d.token)

	ev := d.subscribe(t, client)
	fx := d.waitReady(t, client, ev)
	if fx.PID <= 0 {
		t.Fatalf("no pid for the fixture: %+v", fx)
	}
	var sess struct {
		ID string `json:"id"`
	}
	d.mustJSON(t, client, "POST", "/api/v1/sessions", `{"title":"burst"}`, 201, &sess)

	const (
		workers = 4
		enough  = 100
	)
	var (
		mu       sync.Mutex
		acked    = map[string]int64{} // entry id → seq
		failures atomic.Int64         // requests that got no 200 (the kill)
		inFlight atomic.Int64
		wg       sync.WaitGroup
	)
	reached := make(chan struct{})
	var reachedOnce sync.Once
	burstCtx, stopBurst := context.WithTimeout(context.Background(), daemonBound)
	defer stopBurst()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; burstCtx.Err() == nil; i++ {
				body := fmt.Sprintf(`{"server":"fx","tool":"echo","arguments":{"text":"w%d-%d"}}`, w, i)
				inFlight.Add(1)
				status, b, err := d.request(burstCtx, client, "POST", "/api/v1/sessions/"+sess.ID+"/calls", body)
				inFlight.Add(-1)
				if err != nil || status != 200 {
					// The daemon is gone: stop.
					failures.Add(1)
					return
				}
				var e daemonEntry
				if err := json.Unmarshal(b, &e); err != nil || e.ID == "" || e.Status != "ok" {
					failures.Add(1)
					return
				}
				mu.Lock()
				acked[e.ID] = e.Seq
				n := len(acked)
				mu.Unlock()
				if n >= enough {
					reachedOnce.Do(func() { close(reached) })
				}
			}
		}()
	}
	// One more call that is certainly running when the daemon dies.
	slowDone := make(chan error, 1)
	select {
	case <-reached:
	case <-time.After(daemonBound):
		stopBurst()
		wg.Wait()
		t.Fatalf("only %d calls acknowledged within %s\nstderr:\n%s", len(acked), daemonBound, d.stderr.String())
	}
	go func() {
		_, _, err := d.request(burstCtx, client, "POST", "/api/v1/sessions/"+sess.ID+"/calls",
			`{"server":"fx","tool":"slow","arguments":{"ms":600000},"callId":"in-flight"}`)
		slowDone <- err
	}()
	ev.wait(t, "call_started", func(s map[string]any) bool { return s["callId"] == "in-flight" })

	d.killGroup()
	// The fixture runs in its own process group; it would exit on stdin EOF,
	// but do not leave it to chance.
	_ = syscall.Kill(-fx.PID, syscall.SIGKILL)
	<-d.exited
	var exitErr *exec.ExitError
	if !errors.As(d.err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("daemon ended with %v, want killed by SIGKILL", d.err)
	}
	// The start-up line is the one place the daemon tells which mode it
	// opened the store with (its stderr is complete once it has exited).
	if want := "store_sync=" + mode; !strings.Contains(d.stderr.String(), want) {
		t.Errorf("the daemon's start-up log does not say %s:\n%s", want, d.stderr.String())
	}
	wg.Wait()
	if err := <-slowDone; err == nil {
		t.Error("the in-flight slow call got an answer from a killed daemon")
	}
	mu.Lock()
	ackedCopy := make(map[string]int64, len(acked))
	for id, seq := range acked {
		ackedCopy[id] = seq
	}
	mu.Unlock()
	t.Logf("%d calls acknowledged, %d requests cut off by the kill", len(ackedCopy), failures.Load())

	// A token file readable by others is tightened on the next start.
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	d2 := startDaemon(t, bin, cfg)
	if d2.token != d.token {
		t.Errorf("restart printed token %q, want the stored %q", d2.token, d.token)
	}
	checkTokenFile(t, tokenFile, d.token)

	// Walk the transcript with the default page size, following next.
	var got []daemonEntry
	after := int64(-1)
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("more than 100 pages")
		}
		path := "/api/v1/sessions/" + sess.ID + "/entries"
		if after >= 0 {
			path += fmt.Sprintf("?after=%d", after)
		}
		var p struct {
			Entries []daemonEntry `json:"entries"`
			Next    *int64        `json:"next"`
		}
		d2.mustJSON(t, client, "GET", path, "", 200, &p)
		got = append(got, p.Entries...)
		if p.Next == nil {
			break
		}
		after = *p.Next
	}
	stored := map[string]int64{}
	for i, e := range got {
		if e.Seq != int64(i+1) {
			t.Errorf("entry %d (%s) has seq %d: seqs are not gapless", i, e.ID, e.Seq)
		}
		stored[e.ID] = e.Seq
	}
	for id, seq := range ackedCopy {
		if s, ok := stored[id]; !ok {
			t.Errorf("acknowledged entry %s (seq %d) is missing after the restart", id, seq)
		} else if s != seq {
			t.Errorf("entry %s has seq %d after the restart, %d when acknowledged", id, s, seq)
		}
	}
	if len(got) < len(ackedCopy) {
		t.Errorf("%d entries stored, %d acknowledged", len(got), len(ackedCopy))
	}
	var sessions struct {
		Sessions []struct {
			ID      string `json:"id"`
			Entries int    `json:"entries"`
		} `json:"sessions"`
	}
	d2.mustJSON(t, client, "GET", "/api/v1/sessions", "", 200, &sessions)
	if len(sessions.Sessions) != 1 || sessions.Sessions[0].ID != sess.ID || sessions.Sessions[0].Entries != len(got) {
		t.Errorf("sessions %+v, want %s with %d entries", sessions.Sessions, sess.ID, len(got))
	}

	// The restarted daemon still works, and stops cleanly on SIGINT.
	ev2 := d2.subscribe(t, client)
	d2.waitReady(t, client, ev2)
	var e daemonEntry
	d2.mustJSON(t, client, "POST", "/api/v1/sessions/"+sess.ID+"/calls", `{"server":"fx","tool":"echo","arguments":{"text":"after"}}`, 200, &e)
	if e.Seq != int64(len(got)+1) {
		t.Errorf("the first entry after the restart has seq %d, want %d", e.Seq, len(got)+1)
	}
	d2.stop(t, os.Interrupt)
}

// checkTokenFile checks the owner token file holds token and is mode 0600.
func checkTokenFile(t *testing.T, path, token string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("%s has mode %#o, want 0600", path, perm)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != token {
		t.Errorf("%s holds %q, the daemon printed %q", path, got, token)
	}
	if len(token) < 32 {
		t.Errorf("owner token %q is short", token)
	}
}

// TestServeListenChecks: a non-loopback listen without a principal is
// refused before anything starts; with a principal it is served.
func TestServeListenChecks(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)

	t.Run("public without principal", func(t *testing.T) {
		dir := t.TempDir()
		dataDir := filepath.Join(dir, "state")
		cfg := writeDaemonConfig(t, dir, "0.0.0.0:0", dataDir, "")
		ctx, cancel := context.WithTimeout(context.Background(), daemonBound)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "serve", "-config", cfg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
			t.Fatalf("serve: %v, want exit status 2\nstderr:\n%s", err, stderr.String())
		}
		msg := stderr.String()
		for _, want := range []string{`listen "0.0.0.0:0"`, "not a loopback address", "principal"} {
			if !strings.Contains(msg, want) {
				t.Errorf("stderr lacks %q:\n%s", want, msg)
			}
		}
		if stdout.Len() != 0 {
			t.Errorf("stdout %q, want nothing", stdout.String())
		}
		if _, err := os.Stat(filepath.Join(dataDir, ownerTokenFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an owner token was created for a refused config: %v", err)
		}
	})

	t.Run("public with principal", func(t *testing.T) {
		dir := t.TempDir()
		const token = "carol-token-0123456789abcdef"
		cfg := writeDaemonConfig(t, dir, "0.0.0.0:0", filepath.Join(dir, "state"),
			fmt.Sprintf("\nprincipal \"carol\" {\n  token = %q\n}\n", token))
		stdout := &lineWriter{lines: make(chan string, 16)}
		stderr := &syncBuffer{}
		cmd := exec.Command(bin, "serve", "-config", cfg)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		defer func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}()
		re := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/ \(sign in`)
		var base string
		select {
		case line := <-stdout.lines:
			m := re.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("URL line %q", line)
			}
			if strings.Contains(line, "#token=") {
				t.Errorf("URL line %q shows a token", line)
			}
			base = m[1]
		case err := <-exited:
			t.Fatalf("serve exited: %v\nstderr:\n%s", err, stderr.String())
		case <-time.After(daemonBound):
			t.Fatal("no URL line")
		}
		d := &daemon{base: base, token: token, stderr: stderr}
		client := &http.Client{}
		var me map[string]any
		d.mustJSON(t, client, "GET", "/api/v1/me", "", 200, &me)
		if me["name"] != "carol" {
			t.Errorf("me %v", me)
		}
		if _, err := os.Stat(filepath.Join(dir, "state", ownerTokenFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("an owner token was created although the config has a principal: %v", err)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("exit after SIGINT: %v\nstderr:\n%s", err, stderr.String())
			}
		case <-time.After(daemonBound):
			t.Fatal("serve did not stop after SIGINT")
		}
	})
}
