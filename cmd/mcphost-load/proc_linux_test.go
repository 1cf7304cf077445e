//go:build linux

package main

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		state byte
		ppid  int
		ok    bool
	}{
		{"plain", "1234 (wellbehaved) S 99 1234 1234 0 -1", 'S', 99, true},
		{"comm with spaces and parens", "77 (a (b) c) Z 5 77 77", 'Z', 5, true},
		{"no paren", "77 wellbehaved S 5", 0, 0, false},
		{"truncated", "77 (x)", 0, 0, false},
		{"bad ppid", "77 (x) S notanumber", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state, ppid, ok := parseStat([]byte(tc.in))
			if state != tc.state || ppid != tc.ppid || ok != tc.ok {
				t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tc.in, state, ppid, ok, tc.state, tc.ppid, tc.ok)
			}
		})
	}
}

// TestProcTable: one scan of /proc finds this process, its tree starts
// with it, its CPU time is counted, and a pid that is not there has no
// tree.
func TestProcTable(t *testing.T) {
	procs := scanProcs()
	self := os.Getpid()
	if _, ok := procs[self]; !ok {
		t.Fatalf("this process (%d) is not in the scan of /proc", self)
	}
	if tr := procs.tree(self); len(tr) == 0 || tr[0] != self {
		t.Errorf("tree(self) = %v, want this process first", tr)
	}
	if cpu := procs.treeCPU(self); cpu < 0 {
		t.Errorf("treeCPU(self) = %v", cpu)
	}
	if procs.tree(-1) != nil || procs.treeCPU(-1) != -1 {
		t.Error("a pid that does not exist has a tree")
	}
	if left := procs.running([]int{self, -1}); len(left) != 1 || left[0] != self {
		t.Errorf("running = %v, want only this process", left)
	}
}
