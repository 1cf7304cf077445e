package gotool

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// ModulePath is this repository's module.
const ModulePath = "github.com/mcphost/mcphost"

// RepoRoot finds the module root (the directory whose go.mod declares
// ModulePath) at or above the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module "+ModulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s at or above the working directory; run from the repository or pass -bin-dir", ModulePath)
		}
		dir = parent
	}
}

// Go returns the go command: the one on PATH, else $GOROOT/bin/go (which
// `go test` sets).
func Go() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	exe := "go"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", exe)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no go command on PATH or in %s", filepath.Dir(p))
	}
	return p, nil
}
