package upstream

import (
	"bytes"
	"errors"
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
