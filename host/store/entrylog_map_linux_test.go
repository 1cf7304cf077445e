package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEntryLogMapped checks the mapped log (Linux): the store's log is
// mapped; records copied into the mapping are in the file without a write
// (read back through a separate read, as the next open after a kill -9
// reads them); the mapping grows past its first length for a record that
// needs it; and emptying cuts the file back to zeros at its first length.
func TestEntryLogMapped(t *testing.T) {
	s := openLogged(t, filepath.Join(t.TempDir(), "mcphost.db"), nil)
	requireMapped(t, s)

	path := filepath.Join(t.TempDir(), "log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lw, err := newMappedWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	w := lw.(*mappedWriter)
	defer w.close()
	var want []string
	var off int64
	for i, size := range []int{10, 1 << 20, mapInitial, 100} { // the third needs the mapping grown
		e := sampleEntry("s_1", "alice", i)
		e.Result = []byte(`"` + strings.Repeat("x", size) + `"`)
		rec, err := appendRecord(nil, &appendReq{id: "e_" + itoa(int64(i)), kind: KindCall, e: e, logged: int64(i + 1)})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.write(off, rec); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		off += int64(len(rec))
		want = append(want, "e_"+itoa(int64(i)))
	}
	if len(w.m) <= mapInitial {
		t.Errorf("mapping of %d bytes for %d bytes of records; want it grown", len(w.m), off)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rest := data; ; {
		r, n, err := nextRecord(rest)
		if errors.Is(err, errLogEnd) {
			break
		}
		if err != nil {
			t.Fatalf("after %d records: %v", len(got), err)
		}
		got = append(got, r.id)
		rest = rest[n:]
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("records read back %v, want %v", got, want)
	}

	if emptied, err := w.reset(); !emptied || err != nil {
		t.Fatalf("reset: %v, %v", emptied, err)
	}
	data, _ = os.ReadFile(path)
	if len(w.m) != mapInitial || len(data) != mapInitial || !bytes.Equal(data, make([]byte, len(data))) {
		t.Errorf("after reset: %d mapped, a file of %d bytes; want %d of zeros", len(w.m), len(data), mapInitial)
	}
}

// TestEntryLogMappedCutShort: a log file cut short behind the store's
// back turns the next append's copy into a fault, which fails the append
// and every one after it with an error, without crashing the process.
func TestEntryLogMappedCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.db")
	s := openLogged(t, path, nil)
	requireMapped(t, s)
	sess := mustCreate(t, s, "alice", "cut")
	mustAppend(t, s, sampleEntry(sess.ID, "alice", 1))
	if err := os.Truncate(entryLogPath(path), 0); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 3; i++ {
		err := s.AppendEntry(t.Context(), sampleEntry(sess.ID, "alice", i))
		if err == nil || !strings.Contains(err.Error(), "entry log") {
			t.Fatalf("append %d into a log cut short: %v; want an error naming the entry log", i, err)
		}
		if i == 2 && !errors.Is(err, errLogBroken) {
			t.Errorf("the fault: %v; want errLogBroken", err)
		}
	}
}

// requireMapped skips a test of the mapped log where the file system
// cannot reserve blocks (the log is then written with write(2)), except
// in CI, whose file system can: there the mapped log must be in use.
func requireMapped(t *testing.T, s *Store) {
	t.Helper()
	if _, ok := s.elog.w.(*mappedWriter); ok {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("the entry log is written with %T, not mapped, in CI", s.elog.w)
	}
	t.Skipf("the entry log is written with %T here: its file system cannot reserve blocks", s.elog.w)
}

// TestNextRecordZeros: the zeros after a mapped log's last record end it,
// where a record of zeros with a CRC would be torn.
func TestNextRecordZeros(t *testing.T) {
	if _, _, err := nextRecord(make([]byte, 64)); !errors.Is(err, errLogEnd) {
		t.Errorf("zeros: %v, want the log's end", err)
	}
	torn := append([]byte{0, 0, 0, 0, 1, 0, 0, 0}, make([]byte, 8)...)
	if _, _, err := nextRecord(torn); !errors.Is(err, errTornRecord) {
		t.Errorf("an empty frame with a CRC: %v, want torn", err)
	}
	if _, _, err := nextRecord(bytes.Repeat([]byte{0}, frameHeader-1)); !errors.Is(err, errTornRecord) {
		t.Errorf("a header cut short: %v, want torn", err)
	}
}
