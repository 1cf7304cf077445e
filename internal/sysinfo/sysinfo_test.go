//go:build linux

package sysinfo

import (
	"strings"
	"testing"
)

// TestReadsProc checks that each figure is read on Linux (a CI runner has
// /proc), not what it is.
func TestReadsProc(t *testing.T) {
	if got := LoadAvg(); len(strings.Fields(got)) != 3 {
		t.Errorf("LoadAvg() = %q, want three fields", got)
	}
	if got := MemTotal(); got <= 0 {
		t.Errorf("MemTotal() = %d", got)
	}
	if got := Kernel(); got == "" {
		t.Error("Kernel() is empty")
	}
}
