package main

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/host"
)

// serve runs the daemon until ctx ends (SIGINT or SIGTERM in main): every
// enabled server is connected and supervised, failures are restarted with
// backoff, and on the way out every child process is stopped and reaped.
// The HTTP API and WebShell arrive with their own issue.
func (e *env) serve(ctx context.Context, args []string) int {
	fs := e.newFlagSet("serve", "[-config FILE] [-v]")
	cfgPath := fs.String("config", "", "config `FILE` (default: the embedded default config)")
	verbose := fs.Bool("v", false, "log at debug level whatever the config's log_level")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	cfg, ok := e.loadConfig(*cfgPath)
	if !ok {
		return exitUsage
	}
	level := cfg.LogLevel
	if *verbose {
		level = -4 // slog.LevelDebug
	}
	logger := e.newLogger(level, true)
	source := *cfgPath
	if source == "" {
		source = cfg.Filename
	}
	logger.Info("mcphost starting", "version", version(), "config", source, "servers", len(cfg.Servers))
	h, err := host.New(cfg, host.Options{
		Logger:  logger.With("component", "host"),
		Version: version(),
		Restart: true,
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	if err := h.Run(ctx); err != nil {
		logger.Error("shutdown incomplete", "err", err)
		return exitFailure
	}
	logger.Info("mcphost stopped")
	return exitOK
}
