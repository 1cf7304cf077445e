package host_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

// The child process of TestDiskFullDataDir/rlimit: the data_dir it writes
// to, and the fixture server it calls (built by the parent: a go build in
// the child would itself hit the file size limit).
const (
	diskFullChildDir    = "MCPHOST_DISKFULL_DIR"
	diskFullChildServer = "MCPHOST_DISKFULL_SERVER"
	diskFullResult      = "DISKFULL-RESULT "
)

// diskFullOutcome is what a disk-full run reports: the session and the
// entries whose calls were acknowledged, in order.
type diskFullOutcome struct {
	SessionID string   `json:"sessionId"`
	Acked     []string `json:"acked"`
	FullErr   string   `json:"fullErr"`
}

// TestDiskFullDataDir runs the call pipeline against a data_dir that fills
// up: once the store can no longer write, every call fails with an error
// that says the transcript entry could not be recorded and why (the call
// itself happened upstream); nothing hangs; the transcript stays readable;
// when space comes back, calls are recorded again without a restart; and
// the database then opens cleanly, passes PRAGMA integrity_check and holds
// exactly the acknowledged entries, with gapless seqs.
//
// Two ways to fill the disk, both real writes through SQLite:
//
//   - tmpfs: a 4 MiB tmpfs mounted on the data_dir's parent, filled up by
//     another file (ENOSPC, "database or disk is full"); space comes back
//     when that file is removed. It needs root with CAP_SYS_ADMIN (CI runs
//     as root) and is skipped otherwise.
//   - rlimit: a child process (this test binary again) with RLIMIT_FSIZE
//     lowered just above the database's current size and SIGXFSZ ignored,
//     so writes beyond it fail with EFBIG ("disk I/O error"); space comes
//     back when the limit is raised again. It runs everywhere.
func TestDiskFullDataDir(t *testing.T) {
	bin := testbin.Build(t, wellbehavedPkg)

	t.Run("tmpfs", func(t *testing.T) {
		mnt := filepath.Join(t.TempDir(), "mnt")
		if err := os.Mkdir(mnt, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m,mode=0700"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("cannot mount a tmpfs (%v): CI runs as root and must run the ENOSPC case", err)
			}
			t.Skipf("cannot mount a tmpfs (%v): needs root with CAP_SYS_ADMIN; the rlimit case covers a full disk", err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", mnt, err)
			}
		})
		dataDir := filepath.Join(mnt, "state")
		filler := filepath.Join(mnt, "filler")
		fill := func(t *testing.T) {
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			chunk := make([]byte, 64<<10)
			for {
				if _, err := f.Write(chunk); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("filling the tmpfs: %v", err)
					}
					return
				}
			}
		}
		free := func(t *testing.T) {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		}
		out := diskFullScenario(t, dataDir, bin, fill, free)
		if !strings.Contains(out.FullErr, "database or disk is full") {
			t.Errorf("error on a full tmpfs %q does not say the disk is full", out.FullErr)
		}
		verifyDataDir(t, dataDir, out)
	})

	t.Run("rlimit", func(t *testing.T) {
		dataDir := filepath.Join(t.TempDir(), "state")
		ctx, cancel := context.WithTimeout(t.Context(), faultWait)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestDiskFullChildProcess$", "-test.v")
		cmd.Env = append(os.Environ(), diskFullChildDir+"="+dataDir, diskFullChildServer+"="+bin)
		cmd.WaitDelay = 10 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("child: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		var out diskFullOutcome
		sc := bufio.NewScanner(&stdout)
		sc.Buffer(nil, 1<<20)
		found := false
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), diskFullResult); ok {
				if err := json.Unmarshal([]byte(rest), &out); err != nil {
					t.Fatal(err)
				}
				found = true
			}
		}
		if !found {
			t.Fatalf("the child reported no result\nstdout:\n%s", stdout.String())
		}
		t.Logf("child: %d entries acknowledged; the full disk said: %s", len(out.Acked), out.FullErr)
		if !strings.Contains(out.FullErr, "disk I/O error") && !strings.Contains(out.FullErr, "file too large") {
			t.Errorf("error at the file size limit %q does not say the write failed", out.FullErr)
		}
		verifyDataDir(t, dataDir, out)
	})
}

// TestDiskFullChildProcess is the child of TestDiskFullDataDir/rlimit; it
// is skipped unless that test started it.
func TestDiskFullChildProcess(t *testing.T) {
	dataDir, bin := os.Getenv(diskFullChildDir), os.Getenv(diskFullChildServer)
	if dataDir == "" || bin == "" {
		t.Skip("the child process of TestDiskFullDataDir/rlimit")
	}
	// Without this, the first write past the limit kills the process.
	signal.Ignore(syscall.SIGXFSZ)
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &orig); err != nil {
		t.Fatal(err)
	}
	fill := func(t *testing.T) {
		var largest int64
		entries, err := os.ReadDir(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				largest = max(largest, info.Size())
			}
		}
		lim := orig
		lim.Cur = uint64(largest + 256<<10)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	free := func(t *testing.T) {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &orig); err != nil {
			t.Fatal(err)
		}
	}
	out := diskFullScenario(t, dataDir, bin, fill, free)
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s%s\n", diskFullResult, b)
}

// diskFullScenario makes calls with 16 KiB results in one session while
// fill has made the data_dir full, then after free, and checks what the
// caller sees. It returns the acknowledged entries.
func diskFullScenario(t *testing.T, dataDir, bin string, fill, free func(*testing.T)) diskFullOutcome {
	ctx, cancel := context.WithTimeout(t.Context(), faultWait)
	defer cancel()
	st, err := store.Open(ctx, filepath.Join(dataDir, "mcphost.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := host.New(&config.Config{Servers: []config.Server{stdioServer("fx", bin)}}, host.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	h.Start(ctx)
	if err := h.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	if s := mustStatus(t, h, "fx"); s.State != host.StateReady {
		t.Fatalf("fx: %s (%s)", s.State, s.LastError)
	}
	sess, err := h.CreateSession(ctx, alice, "disk full")
	if err != nil {
		t.Fatal(err)
	}
	out := diskFullOutcome{SessionID: sess.ID}
	call := func() (*store.Entry, error) {
		return h.Call(ctx, host.SessionCall{Principal: alice, SessionID: sess.ID, Server: "fx", Tool: "big",
			Arguments: json.RawMessage(`{"bytes":16384}`)})
	}
	clear := func(err error) {
		t.Helper()
		if msg := err.Error(); !strings.HasPrefix(msg, "host: recording the transcript entry: store: append entry to session") {
			t.Errorf("error %q does not say that the transcript entry could not be recorded", msg)
		}
	}
	for range 3 {
		e, err := call()
		if err != nil {
			t.Fatalf("call before the disk filled up: %v", err)
		}
		out.Acked = append(out.Acked, e.ID)
	}

	fill(t)
	const bound = 2000
	for i := 0; ; i++ {
		if i == bound {
			t.Fatalf("%d calls with 16 KiB results were all recorded on a full data_dir", bound)
		}
		e, err := call()
		if err != nil {
			clear(err)
			out.FullErr = err.Error()
			t.Logf("call %d on the full data_dir: %v", i, err)
			break
		}
		out.Acked = append(out.Acked, e.ID)
	}
	// The next calls end too (none hangs), each recorded or failing with
	// the same clear error.
	for range 3 {
		e, err := call()
		if err != nil {
			clear(err)
			continue
		}
		out.Acked = append(out.Acked, e.ID)
	}
	// Reading the transcript needs no space.
	if got := entryIDs(t, h, sess.ID); !cmp.Equal(got, out.Acked) {
		t.Errorf("transcript on the full data_dir (-acked +stored):\n%s", cmp.Diff(out.Acked, got))
	}

	free(t)
	e, err := call()
	if err != nil {
		t.Fatalf("call after space came back: %v", err)
	}
	out.Acked = append(out.Acked, e.ID)
	if got := entryIDs(t, h, sess.ID); !cmp.Equal(got, out.Acked) {
		t.Errorf("transcript after space came back (-acked +stored):\n%s", cmp.Diff(out.Acked, got))
	}
	return out
}

// entryIDs returns the ids of alice's session's entries in seq order.
func entryIDs(t *testing.T, h *host.Host, sessionID string) []string {
	t.Helper()
	var ids []string
	for after := int64(0); ; {
		page, next, err := h.Entries(t.Context(), alice, sessionID, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		if next == 0 {
			return ids
		}
		after = next
	}
}

// verifyDataDir opens the database a disk-full run left behind: it must
// pass PRAGMA integrity_check and hold exactly the acknowledged entries,
// with gapless seqs, and accept a new entry.
func verifyDataDir(t *testing.T, dataDir string, out diskFullOutcome) {
	t.Helper()
	path := filepath.Join(dataDir, "mcphost.db")
	st, err := store.Open(t.Context(), path, nil)
	if err != nil {
		t.Fatalf("the database does not open after the disk was full: %v", err)
	}
	defer st.Close()
	var ids []string
	for after := int64(0); ; {
		page, next, err := st.Entries(t.Context(), alice.Name, out.SessionID, after, 500)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			if e.Seq != int64(len(ids)+1) {
				t.Errorf("entry %s has seq %d, want %d: the sequence has a gap", e.ID, e.Seq, len(ids)+1)
			}
			ids = append(ids, e.ID)
		}
		if next == 0 {
			break
		}
		after = next
	}
	if diff := cmp.Diff(out.Acked, ids); diff != "" {
		t.Errorf("stored entries after reopening (-acked +stored):\n%s", diff)
	}
	if err := st.AppendEntry(t.Context(), &store.Entry{SessionID: out.SessionID, Principal: alice.Name, Status: store.StatusOK,
		Server: "fx", Tool: "echo", CallID: "after-reopen"}); err != nil {
		t.Errorf("appending after reopening: %v", err)
	}

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check []string
	rows, err := db.QueryContext(t.Context(), "PRAGMA integrity_check")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		check = append(check, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ok"}, check); diff != "" {
		t.Errorf("integrity_check (-want +got):\n%s", diff)
	}
	t.Logf("%d acknowledged entries stored; integrity_check ok", len(ids))
}
