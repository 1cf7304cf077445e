package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/gotool"
)

// TBXark/mcp-proxy, built from the Go module proxy in a scratch module of
// its own, so that none of its code or requirements reaches this module.
const (
	tbxModule  = "github.com/TBXark/mcp-proxy"
	tbxVersion = "0.43.2"
)

// binaries are the programs a run starts.
type binaries struct {
	Self        string `json:"self"`        // this program, for the relay subcommand
	Wellbehaved string `json:"wellbehaved"` // the upstream
	Mcphost     string `json:"mcphost"`
	TBX         string `json:"tbx,omitempty"`
}

// runGo runs the go command with args in dir, with env added, bounded by
// limit, and returns its combined output in the error when it fails.
func runGo(ctx context.Context, dir string, env []string, limit time.Duration, logger *slog.Logger, args ...string) error {
	goCmd, err := gotool.Go()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, buf.Bytes())
	}
	logger.Info("built", "cmd", "go "+strings.Join(args, " "), "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// buildOwn compiles the upstream fixture and mcphost into dir:
//
//	go build -o DIR/ ./testdata/servers/wellbehaved ./cmd/mcphost
func buildOwn(ctx context.Context, dir string, logger *slog.Logger) (binaries, error) {
	root, err := gotool.RepoRoot()
	if err != nil {
		return binaries{}, err
	}
	logger.Info("building the upstream and mcphost", "dir", dir)
	if err := runGo(ctx, root, nil, 10*time.Minute, logger, "build", "-o", dir+string(filepath.Separator), "./testdata/servers/wellbehaved", "./cmd/mcphost"); err != nil {
		return binaries{}, err
	}
	return binaries{Wellbehaved: filepath.Join(dir, "wellbehaved"), Mcphost: filepath.Join(dir, "mcphost")}, nil
}

// prebuilt returns -bin-dir's wellbehaved and mcphost, checking that they
// exist.
func prebuilt(dir string) (binaries, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return binaries{}, err
	}
	b := binaries{Wellbehaved: filepath.Join(abs, "wellbehaved"), Mcphost: filepath.Join(abs, "mcphost")}
	for _, p := range []string{b.Wellbehaved, b.Mcphost} {
		if _, err := os.Stat(p); err != nil {
			return binaries{}, fmt.Errorf("-bin-dir: %w", err)
		}
	}
	return b, nil
}

// buildTBX builds TBXark/mcp-proxy at tbxVersion into dir/mcp-proxy, in a
// scratch module of its own (`go install …@latest` fails on this project's
// module proxy, `go get …@v0.43.2` works):
//
//	go mod init bakeoffpeer
//	go get github.com/TBXark/mcp-proxy@v0.43.2
//	go build -o DIR/mcp-proxy github.com/TBXark/mcp-proxy
//
// Its configuration format is its config.go (in $(go env
// GOMODCACHE)/github.com/!t!b!xark/mcp-proxy@v0.43.2 after the go get).
func buildTBX(ctx context.Context, dir string, logger *slog.Logger) (string, error) {
	scratch, err := os.MkdirTemp("", "bakeoffpeer-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	logger.Info("building TBXark/mcp-proxy from the Go module proxy", "version", "v"+tbxVersion, "scratch", scratch)
	env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
	bin := filepath.Join(dir, "mcp-proxy")
	for _, args := range [][]string{
		{"mod", "init", "bakeoffpeer"},
		{"get", tbxModule + "@v" + tbxVersion},
		{"build", "-o", bin, tbxModule},
	} {
		if err := runGo(ctx, scratch, env, 10*time.Minute, logger, args...); err != nil {
			return "", fmt.Errorf("build TBXark/mcp-proxy: %w", err)
		}
	}
	return bin, nil
}
