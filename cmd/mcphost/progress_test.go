package main

import (
	"bytes"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestProgressView: on a terminal the progress is one line, rewritten in
// place and cleared at the end; elsewhere a line per change; a repeat of
// the same progress is not shown again.
func TestProgressView(t *testing.T) {
	steps := []host.Progress{{Progress: 1, Total: 4}, {Progress: 1, Total: 4}, {Progress: 2, Total: 4, Message: "half\x1b[31m"}}
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"a terminal", true, "\r\x1b[Kprogress: 1/4 \r\x1b[Kprogress: 2/4 half\\x1b[31m\r\x1b[K"},
		{"a file", false, "progress: 1/4 \nprogress: 2/4 half\\x1b[31m\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			v := &progressView{w: &b, tty: tt.tty}
			for _, p := range steps {
				v.show(p)
			}
			v.done()
			v.done() // twice: nothing more
			if got := b.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}
