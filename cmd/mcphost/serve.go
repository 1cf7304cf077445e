package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/httpapi/webshell"
	"github.com/mcphost/mcphost/host/store"
)

// dbFile is the daemon's database in data_dir.
const dbFile = "mcphost.db"

// ownerTokenFile is the file in data_dir that holds the generated owner
// token when the config declares no principal.
const ownerTokenFile = "owner.token"

// credentialKeyFile holds the key WebShell credentials are derived with.
const credentialKeyFile = "webshell.key"

// serve runs the daemon until ctx ends (SIGINT or SIGTERM in main): every
// enabled server is connected and supervised, the API and WebShell are
// served on `listen`, and on the way out calls get a grace period, every
// child process is stopped and reaped, and the store is closed.
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
	level := new(slog.LevelVar) // a reload may change it (not under -v)
	level.Set(cfg.LogLevel)
	if *verbose {
		level.Set(slog.LevelDebug)
	}
	logger := e.newLogger(level, true)
	source := *cfgPath
	if source == "" {
		source = cfg.Filename
	}

	if err := checkListen(cfg); err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: data_dir: %v\n", err)
		return exitFailure
	}
	var ownerToken string
	if len(cfg.Principals) == 0 {
		t, err := loadOrCreateToken(filepath.Join(cfg.DataDir, ownerTokenFile))
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
			return exitFailure
		}
		ownerToken = t
	}
	// The key of the WebShell credentials, kept so that a signed-in
	// WebShell stays signed in across restarts.
	credKey, err := loadOrCreateSecret(filepath.Join(cfg.DataDir, credentialKeyFile), "the WebShell credential key")
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	storeOpts := host.StoreOptionsFor(cfg)
	st, err := store.OpenWith(ctx, filepath.Join(cfg.DataDir, dbFile), logger, storeOpts)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	defer st.Close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: listen on %s: %v\n", cfg.Listen, err)
		return exitFailure
	}
	port := ln.Addr().(*net.TCPAddr).Port
	logger.Info("mcphost starting", "version", version(), "config", source, "servers", len(cfg.Servers), "addr", ln.Addr().String(),
		"store_sync", storeOpts.Sync.String())

	h, err := host.New(cfg, host.Options{
		Logger:         logger.With("component", "host"),
		Version:        version(),
		Restart:        true,
		Store:          st,
		OwnerToken:     ownerToken,
		CredentialKey:  []byte(credKey),
		PluginCacheDir: host.PluginCacheDirFor(cfg, logger),
		AppCompaction:  host.AppCompaction{After: cfg.AppCompactAfter, SessionBytes: cfg.AppCompactSessionBytes},
	})
	if err != nil {
		ln.Close()
		e.printHostError(cfg, err)
		return exitUsage
	}
	api := httpapi.New(h, httpapi.Options{
		Logger:  logger.With("component", "http"),
		Hosts:   allowedHosts(cfg.Listen, port),
		Assets:  webshell.Assets(),
		Version: version(),
	})
	gw := gateway.New(h, gateway.Options{Logger: logger, Version: version()})
	defer gw.Close()
	handler := gateway.Mount(gw, api)
	// The servers outlive the signal: calls still running when SIGINT or
	// SIGTERM arrives get Serve's grace period on live sessions, and Close
	// stops the servers after it.
	h.Start(context.WithoutCancel(ctx))
	if e.reload != nil {
		go e.reloadOnSignal(ctx, h, *cfgPath, ownerToken != "", logger, level, *verbose)
	}
	base := "http://" + net.JoinHostPort(urlHost(cfg.Listen), strconv.Itoa(port)) + "/"
	if ownerToken != "" {
		fmt.Fprintf(e.stdout, "mcphost is serving the WebShell at %s#token=%s\n", base, ownerToken)
		if cfg.Gateway.Enabled {
			fmt.Fprintf(e.stdout, "MCP clients: %smcp with the header \"Authorization: Bearer <the token>\" (mcphost gateway config claude|cursor|vscode)\n", base)
		}
	} else {
		fmt.Fprintf(e.stdout, "mcphost is serving the WebShell at %s (sign in with a principal's token)\n", base)
	}
	serveErr := h.Serve(ctx, ln, handler)
	closeErr := h.Close()
	if serveErr != nil {
		logger.Error("http server failed", "err", serveErr)
		return exitFailure
	}
	if closeErr != nil {
		logger.Error("shutdown incomplete", "err", closeErr)
		return exitFailure
	}
	logger.Info("mcphost stopped")
	return exitOK
}

// reloadOnSignal reloads the config file on every SIGHUP until ctx ends.
// A config that does not load, or that the host refuses, is reported and
// the running config stays in force.
func (e *env) reloadOnSignal(ctx context.Context, h *host.Host, path string, ownerToken bool, logger *slog.Logger, level *slog.LevelVar, verbose bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.reload:
		}
		if path == "" {
			logger.Warn("SIGHUP: nothing to reload: the daemon runs the embedded default config (start it with -config FILE)")
			continue
		}
		logger.Info("SIGHUP: reloading the config", "config", path)
		cfg, err := e.reloadConfig(ctx, h, path, ownerToken)
		if err != nil {
			logger.Error("config reload failed; the running config stays in force", "config", path, "err", err)
			continue
		}
		if !verbose && level.Level() != cfg.LogLevel {
			level.Set(cfg.LogLevel)
			logger.Warn("log level changed", "log_level", cfg.LogLevel.String())
		}
	}
}

// reloadConfig loads path and hands it to the host. Diagnostics go to
// stderr with their snippets, as at start-up.
func (e *env) reloadConfig(ctx context.Context, h *host.Host, path string, ownerToken bool) (*config.Config, error) {
	cfg, ok := e.loadConfig(path)
	if !ok {
		return nil, errors.New("the config has errors, printed above")
	}
	if err := checkListen(cfg); err != nil {
		return nil, err
	}
	if len(cfg.Principals) == 0 && !ownerToken {
		return nil, errors.New("the new config declares no principal, and the generated owner token is made only when the daemon starts without principals: restart mcphost to switch to it")
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := h.Reload(rctx, cfg); err != nil { // the host logs what changed
		var pe *host.PluginLoadError
		if errors.As(err, &pe) {
			e.printDiagnostics(cfg.Files, pe.Diagnostics)
		}
		return nil, err
	}
	return cfg, nil
}

// checkListen refuses to expose the API beyond loopback without a
// configured principal: the generated owner token is meant for one person
// on one machine.
func checkListen(cfg *config.Config) error {
	hostPart, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %q: %v", cfg.Listen, err)
	}
	if len(cfg.Principals) > 0 || isLoopback(hostPart) {
		return nil
	}
	return fmt.Errorf("listen %q is not a loopback address and the config declares no principal; add principal blocks with tokens, or listen on 127.0.0.1", cfg.Listen)
}

func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// urlHost is the host to print in the WebShell URL.
func urlHost(listen string) string {
	h, _, _ := net.SplitHostPort(listen)
	if h == "" || h == "0.0.0.0" || h == "::" {
		return "127.0.0.1"
	}
	return h
}

// allowedHosts are the Host header values the daemon answers to: the
// loopback names with the real port, and the listen host.
func allowedHosts(listen string, port int) []string {
	p := strconv.Itoa(port)
	hosts := []string{"127.0.0.1:" + p, "localhost:" + p, "[::1]:" + p}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && h != "0.0.0.0" && h != "::" {
		hosts = append(hosts, net.JoinHostPort(h, p))
	}
	return hosts
}

// loadOrCreateToken returns the owner token stored at path, creating it
// (32 random bytes, hex, mode 0600) on first start so the URL stays valid
// across restarts.
func loadOrCreateToken(path string) (string, error) {
	return loadOrCreateSecret(path, "the owner token")
}

// loadOrCreateSecret returns the secret stored at path (what names it in
// errors), creating it as loadOrCreateToken does.
func loadOrCreateSecret(path, what string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		t := strings.TrimSpace(string(b))
		if len(t) >= config.MinTokenLength {
			if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o077 != 0 {
				if err := os.Chmod(path, 0o600); err != nil {
					return "", fmt.Errorf("%s %s is readable by others and chmod failed: %v", what, path, err)
				}
			}
			return t, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading %s: %v", what, err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b)
	if err := writeFileAtomic(path, []byte(t+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("storing %s: %v", what, err)
	}
	return t, nil
}
