package gotool

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The test runs in internal/gotool, two levels below the root.
	if _, err := os.Stat(filepath.Join(root, "internal", "gotool", "gotool.go")); err != nil {
		t.Errorf("RepoRoot() = %s, which does not hold this package: %v", root, err)
	}
}

func TestGo(t *testing.T) {
	p, err := Go()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Error(err)
	}
}
