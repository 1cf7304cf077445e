package shellquote

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestJoinRoundTrips: sh reads the joined line back as the same words.
func TestJoinRoundTrips(t *testing.T) {
	words := []string{"plain", "with space", "it's", "", "$HOME", "a\"b", "tab\there", "/Library/Application Support/x.token", "-url=http://h:1/mcp"}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh: %v", err)
	}
	line := Join(words...)
	got, err := exec.Command(sh, "-c", `eval "set -- $0"; for w in "$@"; do printf '%s\0' "$w"; done`, line).Output()
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	back := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
	if !slices.Equal(back, words) {
		t.Fatalf("%s\nread back as %q, want %q", line, back, words)
	}
	if q := Quote("plain-word_1.2:3/4"); q != "plain-word_1.2:3/4" {
		t.Errorf("Quote of a plain word = %s", q)
	}
}
