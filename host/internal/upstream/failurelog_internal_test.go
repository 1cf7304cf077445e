package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestFailureLog: repeated failures are logged as they come three times,
// then at each doubling of the count, and once more with the last count
// when the error changes; a new error is logged at once.
func TestFailureLog(t *testing.T) {
	var buf bytes.Buffer
	f := failureLog{logger: slog.New(slog.NewTextHandler(&buf, nil))}
	for range 10 {
		f.failed("server failed to start", errors.New("exit status 4"))
	}
	f.failed("server failed to start", errors.New("no such file"))
	f.flush()
	var times []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		i := strings.Index(line, "times=")
		switch {
		case strings.Contains(line, "no such file"):
			times = append(times, "new")
		case i < 0:
			times = append(times, "1")
		default:
			times = append(times, strings.Fields(line[i+len("times="):])[0])
		}
	}
	if got, want := strings.Join(times, ","), "1,2,3,4,8,10,new"; got != want {
		t.Fatalf("logged counts %s, want %s\n%s", got, want, buf.String())
	}
}

// TestFailureLogSameCause: failures that differ only in their numbers (npm
// names a timestamped log file each time) count as one cause, and after
// three of them the failures are "repeating".
func TestFailureLogSameCause(t *testing.T) {
	var buf bytes.Buffer
	f := failureLog{logger: slog.New(slog.NewTextHandler(&buf, nil))}
	for i := range 8 {
		if got, want := f.repeating(), i >= 3; got != want {
			t.Errorf("before failure %d, repeating = %v, want %v", i+1, got, want)
		}
		f.failed("server failed to start", fmt.Errorf("npm error 404 Not Found — connect: EOF (stderr: npm error A complete log of this run can be found in: /root/.npm/_logs/2026-12-03T21_14_%02d_%03dZ-debug-0.log)", i, i*7))
	}
	f.flush()
	if n := strings.Count(buf.String(), "level=WARN"); n != 5 {
		t.Errorf("logged %d lines for 8 failures of one cause, want 5 (1, 2, 3, 4, 8)\n%s", n, buf.String())
	}
	f.failed("server failed to start", errors.New("exec: \"npx\": executable file not found in $PATH"))
	if f.repeating() {
		t.Error("a new cause is repeating at once")
	}
}
