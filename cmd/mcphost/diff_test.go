package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(n int, change map[int]string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s)
			} else {
				b.WriteString("l" + string(rune('a'+i%26)))
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"equal", "x\ny\n", "x\ny\n", ""},
		{"one line changed", "x\ny\nz\n", "x\nY\nz\n", "--- a\n+++ b\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n"},
		{"added to an empty file", "", "x\n", "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"},
		{"all removed", "x\ny\n", "", "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n"},
		{"two hunks far apart", lines(20, nil), lines(20, map[int]string{2: "two", 18: "eighteen"}),
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n lb\n-lc\n+two\n ld\n le\n lf\n@@ -15,6 +15,6 @@\n lp\n lq\n lr\n-ls\n+eighteen\n lt\n lu\n"},
		{"close changes share a hunk", lines(10, nil), lines(10, map[int]string{3: "three", 7: "seven"}),
			"--- a\n+++ b\n@@ -1,10 +1,10 @@\n lb\n lc\n-ld\n+three\n le\n lf\n lg\n-lh\n+seven\n li\n lj\n lk\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unifiedDiff("a", "b", tc.a, tc.b); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestFmtStdinBounds: fmt - reads at most a config's size from standard
// input; a larger (or endless) input is a usage error that says so, never
// read whole into memory.
func TestFmtStdinBounds(t *testing.T) {
	var stdout, stderr strings.Builder
	huge := io.LimitReader(spaces{}, config.MaxConfigSize+1)
	if code := run(context.Background(), []string{"fmt", "-"}, huge, &stdout, &stderr); code != exitUsage {
		t.Fatalf("fmt - of %d bytes: exit %d, want %d", config.MaxConfigSize+1, code, exitUsage)
	}
	if want := fmt.Sprintf("mcphost fmt: standard input: more than %d bytes\n", config.MaxConfigSize); stderr.String() != want || stdout.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q, want %q", stdout.String(), stderr.String(), want)
	}
	// An endless input stops at the bound too.
	stderr.Reset()
	if code := run(context.Background(), []string{"fmt", "-check", "-"}, spaces{}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("fmt -check - of an endless input: exit %d", code)
	}
}

// spaces is an endless reader of spaces: valid text, with no end.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
