package upstream

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/host/config"
)

// launchers are the package runners that fetch a server's package before
// they start it, on its first start (or when their cache is cold).
var launchers = map[string]bool{"npx": true, "uvx": true, "bunx": true, "pnpx": true, "pipx": true}

// launcherOf returns the package runner a stdio server's command is (npx,
// uvx, …; `pnpm dlx` and `yarn dlx` are named so), or "".
func launcherOf(s *config.Server) string {
	if s.Transport != config.TransportStdio || s.Command == "" {
		return ""
	}
	base := strings.TrimSuffix(filepath.Base(s.Command), ".cmd")
	switch {
	case launchers[base]:
		return base
	case (base == "pnpm" || base == "yarn") && len(s.Args) > 0 && s.Args[0] == "dlx":
		return base + " dlx"
	}
	return ""
}

// hintLauncher adds to a connect that ran out of discovery_timeout, for a
// server started by a package runner, that the runner was probably still
// downloading the package.
func hintLauncher(dctx, ctx context.Context, err error, s *config.Server) error {
	l := launcherOf(s)
	if err == nil || l == "" || dctx.Err() != context.DeadlineExceeded || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w; %s may still have been downloading the package (a first start, or a cold cache): raise discovery_timeout (now %s), or run the command once by hand", err, l, s.DiscoveryTimeout)
}
