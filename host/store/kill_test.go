package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/internal/pgtest"
)

// childEnv names the database a re-executed test binary writes to, and
// childSyncEnv the sync mode it opens it with ([Sync.String]); see TestMain
// and TestKill9KeepsAcknowledgedEntries.
const (
	childEnv     = "MCPHOST_STORE_CHILD"
	childSyncEnv = "MCPHOST_STORE_CHILD_SYNC"
)

// syncModes are the modes every durability test runs under.
var syncModes = []Sync{SyncFull, SyncNormal}

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(runChild(path, os.Getenv(childSyncEnv)))
	}
	os.Exit(pgtest.Main(m))
}

// runChild is the writer process of the kill -9 test. It opens path with
// the sync mode named mode, prints "synchronous N" (the pragma its writer
// connection runs with), creates a session, prints "session ID", then
// appends entries until it is killed, printing "SEQ ID" for each one only
// after AppendEntry has returned. Its context bounds an orphaned child; a
// parent that went away also ends it, through SIGPIPE on stdout.
func runChild(path, mode string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	i := slices.IndexFunc(syncModes, func(m Sync) bool { return m.String() == mode })
	if i < 0 {
		fmt.Fprintf(os.Stderr, "unknown sync mode %q\n", mode)
		return 1
	}
	s, err := OpenWith(ctx, path, nil, Options{Sync: syncModes[i]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var synchronous int
	if err := s.w.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&synchronous); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := fmt.Printf("synchronous %d\n", synchronous); err != nil {
		return 1
	}
	sess, err := s.CreateSession(ctx, "child", "kill -9")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := fmt.Printf("session %s\n", sess.ID); err != nil {
		return 1
	}
	for seq := int64(1); ctx.Err() == nil; seq++ {
		e := childEntry(sess.ID, seq)
		if err := s.AppendEntry(ctx, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if e.Seq != seq {
			fmt.Fprintf(os.Stderr, "entry %d got Seq %d\n", seq, e.Seq)
			return 1
		}
		if _, err := fmt.Printf("%d %s\n", e.Seq, e.ID); err != nil {
			return 1
		}
	}
	return 1
}

// childEntry is the seq'th entry the child appends; the parent rebuilds it
// to check what survived.
func childEntry(sessionID string, seq int64) *Entry {
	return &Entry{
		SessionID:  sessionID,
		CallID:     fmt.Sprintf("c_%d", seq),
		Principal:  "child",
		Origin:     "api",
		Server:     "revenue",
		Tool:       "show_revenue_dashboard",
		Arguments:  json.RawMessage(fmt.Sprintf(`{"seq":%d}`, seq)),
		Status:     StatusOK,
		Result:     realisticResult(fmt.Sprint(seq)),
		StartedAt:  epoch.Add(time.Duration(seq) * time.Millisecond),
		DurationMs: float64(seq),
	}
}

// TestKill9KeepsAcknowledgedEntries kills a writer process with SIGKILL in
// the middle of a burst of appends, under each sync mode: the WAL is written
// before an append is acknowledged, so even SyncNormal, which leaves the
// fsync to checkpoints, keeps every acknowledged entry when only the process
// dies.
func TestKill9KeepsAcknowledgedEntries(t *testing.T) {
	for _, mode := range syncModes {
		t.Run(mode.String(), func(t *testing.T) { testKill9(t, mode) })
	}
}

func testKill9(t *testing.T, mode Sync) {
	const wantAcks = 200
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "mcphost.db")

	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childSyncEnv+"="+mode.String())
	cmd.WaitDelay = 10 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	sc := bufio.NewScanner(stdout)
	var sessionID, synchronous string
	acked := map[int64]string{} // seq → entry ID
	for len(acked) < wantAcks && sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "synchronous "); ok && synchronous == "" {
			synchronous = n
			continue
		}
		if id, ok := strings.CutPrefix(line, "session "); ok && sessionID == "" {
			sessionID = id
			continue
		}
		var seq int64
		var id string
		if _, err := fmt.Sscanf(line, "%d %s", &seq, &id); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child printed %q: %v", line, err)
		}
		acked[seq] = id
	}
	// SIGKILL while the child is, most likely, inside its next transaction.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitErr := cmd.Wait()
	if len(acked) < wantAcks || sessionID == "" {
		t.Fatalf("child acknowledged %d entries of session %q, want %d (wait: %v); stderr:\n%s",
			len(acked), sessionID, wantAcks, waitErr, stderr.String())
	}
	if waitErr == nil || cmd.ProcessState.Exited() {
		t.Fatalf("child was not killed by the signal: %v; stderr:\n%s", waitErr, stderr.String())
	}
	if want := fmt.Sprint(synchronousPragma[mode]); synchronous != want {
		t.Errorf("the child wrote with PRAGMA synchronous = %q, want %s (%v)", synchronous, want, mode)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("no WAL left behind by the killed writer (%v); the test did not exercise recovery", err)
	}

	s := mustOpenWith(t, path, Options{Sync: mode})
	entries := mustEntries(t, s, "child", sessionID)
	if len(entries) < wantAcks {
		t.Fatalf("%d entries survived, want at least the %d acknowledged", len(entries), wantAcks)
	}
	for i, e := range entries {
		if e.Seq != int64(i+1) {
			t.Fatalf("entry %d has Seq %d: the sequence has a gap", i, e.Seq)
		}
	}
	for seq, id := range acked {
		want := childEntry(sessionID, seq)
		want.ID, want.Seq = id, seq
		if diff := cmp.Diff(stored(*want), entries[seq-1]); diff != "" {
			t.Errorf("acknowledged entry %d (-want +got):\n%s", seq, diff)
		}
	}
	sess, err := s.Session(t.Context(), "child", sessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Entries != len(entries) {
		t.Errorf("session counts %d entries, %d stored", sess.Entries, len(entries))
	}

	var result []string
	rows, err := s.w.QueryContext(t.Context(), "PRAGMA integrity_check")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		result = append(result, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok"}, result); diff != "" {
		t.Errorf("integrity_check (-want +got):\n%s", diff)
	}

	// The store goes on where the child stopped.
	if e := mustAppend(t, s, childEntry(sessionID, 0)); e.Seq != int64(len(entries)+1) {
		t.Errorf("next Seq = %d, want %d", e.Seq, len(entries)+1)
	}
	t.Logf("child acknowledged %d entries, %d survived the kill", len(acked), len(entries))
}
