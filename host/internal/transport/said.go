package transport

import (
	"regexp"
	"strings"
)

// What a failed server printed, told apart from its noise: the line of its
// stderr that says why it failed leads the error, and notices that say
// nothing of the failure (npm's "new version available", its log path)
// are left out of the tail an error quotes.

// SaidError is a server's failure led by the line of its stderr that says
// why (`npm error 404 Not Found - GET …`), so that the card and the log
// show the server's own reason before mcphost's ("calling initialize:
// EOF").
type SaidError struct {
	Said string // the server's line
	Err  error  // the failure as mcphost saw it, with the stderr tail
}

func (e *SaidError) Error() string { return e.Said + " — " + e.Err.Error() }
func (e *SaidError) Unwrap() error { return e.Err }

// tellingLine matches a line that reports a failure, in the words servers
// and their launchers (npm, pip, uv, node, python, Go) use.
var tellingLine = regexp.MustCompile(`(?i)(\berror\b|[a-z](error|exception)\b|\berr!|\bfatal\b|\bpanic\b|exception|traceback|not found|no such|permission denied|\bcannot\b|\bcan't\b|\bfailed\b|\bunable\b|\bmissing\b)`)

// noiseLine matches the lines a launcher prints that never say why a
// server failed: npm's notices and the path of its debug log (which holds
// a timestamp, so that no two failures would read alike), pip's notices.
var noiseLine = regexp.MustCompile(`(?i)^(npm notice\b|\[notice\]|npm (error|err!) a complete log of this run can be found|npm (warn|warning) exec\b)`)

// Meaningful returns the lines of tail that are not a launcher's noise.
func Meaningful(tail []string) []string {
	out := tail[:0:0]
	for _, l := range tail {
		if !noiseLine.MatchString(strings.TrimSpace(l)) {
			out = append(out, l)
		}
	}
	return out
}

// headerLine matches a line that announces a failure without saying what
// it is: npm's error code line, Python's traceback header.
var headerLine = regexp.MustCompile(`(?i)^(npm (error|err!) code\b|traceback \(most recent call last\))`)

// Said returns the line of tail that says why the server failed, or ""
// when none does. It looks at the last 20 meaningful lines only (an
// older line is about an earlier moment of the process): the first that
// reports a failure, or after a Python traceback the last one (the
// exception comes after the stack).
func Said(tail []string) string {
	lines := Meaningful(tail)
	lines = lines[max(0, len(lines)-20):]
	traceback := false
	said := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if headerLine.MatchString(l) {
			traceback = traceback || strings.HasPrefix(strings.ToLower(l), "traceback")
			continue
		}
		if tellingLine.MatchString(l) {
			if !traceback {
				return l
			}
			said = l
		}
	}
	return said
}
