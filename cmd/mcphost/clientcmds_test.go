package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcphost/mcphost/host"
)

// TestProgressLine checks the stderr line of a progress notification: the
// server's message is escaped. (The script hostile_strings cannot rely on a
// progress notification arriving before the result it precedes.)
func TestProgressLine(t *testing.T) {
	tests := []struct {
		name string
		p    host.Progress
		want string
	}{
		{"with total", host.Progress{Progress: 1, Total: 2, Message: "step one"}, "progress: 1/2 step one"},
		{"without total", host.Progress{Progress: 3}, "progress: 3 "},
		{"hostile message", host.Progress{Progress: 1, Total: 2, Message: "step\x1b[2K\r\u202e\x07\n"}, `progress: 1/2 step\x1b[2K\r\u202e\x07\n`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := progressLine(tt.p); got != tt.want {
				t.Errorf("progressLine(%+v) = %q, want %q", tt.p, got, tt.want)
			}
		})
	}
}

// TestFirstLine checks that a long summary is cut on a rune boundary, so
// the cut never leaves a stray byte of invalid UTF-8 to print.
func TestFirstLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"short", "one line", "one line"},
		{"first of several", "  first\nsecond", "first"},
		{"long ASCII", strings.Repeat("a", 130), strings.Repeat("a", 117) + "..."},
		{"long multi-byte", strings.Repeat("é", 70), strings.Repeat("é", 58) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := firstLine(tt.in)
			if got != tt.want {
				t.Errorf("firstLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("firstLine(%q) = %q: invalid UTF-8", tt.in, got)
			}
		})
	}
}
