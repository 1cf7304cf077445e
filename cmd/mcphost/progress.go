package main

import (
	"fmt"
	"io"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// progressView shows a call's progress on stderr: on a terminal as one
// line that each notification rewrites (cleared before anything else is
// printed), elsewhere as a line per notification, so that a log keeps
// them all.
type progressView struct {
	w   io.Writer
	tty bool

	mu    sync.Mutex
	shown bool   // a line is on the terminal, not yet ended
	last  string // the last text shown
}

// newProgressView writes to w, a terminal when it is one.
func newProgressView(w io.Writer) *progressView {
	return &progressView{w: w, tty: isTerminal(w)}
}

// show shows p, unless it says what the last one said.
func (v *progressView) show(p host.Progress) {
	text := progressLine(p)
	v.mu.Lock()
	defer v.mu.Unlock()
	if text == v.last {
		return
	}
	v.last = text
	if !v.tty {
		fmt.Fprintln(v.w, text)
		return
	}
	// \r and erase-line: the terminal's line is rewritten in place.
	fmt.Fprint(v.w, "\r\x1b[K"+text)
	v.shown = true
}

// done clears the progress line from the terminal, so that what follows
// starts on a clean line.
func (v *progressView) done() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.shown {
		fmt.Fprint(v.w, "\r\x1b[K")
		v.shown = false
	}
}

// progressLine is the text of one progress notification, its message
// escaped.
func progressLine(p host.Progress) string {
	if p.Total > 0 {
		return fmt.Sprintf("progress: %g/%g %s", p.Progress, p.Total, termsafe.Line(p.Message))
	}
	return fmt.Sprintf("progress: %g %s", p.Progress, termsafe.Line(p.Message))
}
