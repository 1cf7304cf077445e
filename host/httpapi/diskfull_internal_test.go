package httpapi

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// TestDiskFull pins which store failures the API answers 507 disk_full
// (host's TestDiskFullDataDir produces the real SQLite error).
func TestDiskFull(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("host: recording the transcript entry: store: append entry to session %q: database or disk is full (13)", "s_1"), true},
		{fmt.Errorf("append: %w", &fs.PathError{Op: "write", Path: "mcphost.db-wal", Err: syscall.ENOSPC}), true},
		{fmt.Errorf("append: %w", syscall.EFBIG), true},
		{errors.New("store: append entry: database is locked (5) (SQLITE_BUSY)"), false},
		{errors.New("something else"), false},
	}
	for _, tt := range tests {
		if got := diskFull(tt.err); got != tt.want {
			t.Errorf("diskFull(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
