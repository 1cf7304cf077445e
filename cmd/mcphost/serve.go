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
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/httpapi/webshell"
	"github.com/mcphost/mcphost/telemetry"
)

// dbFile is the daemon's database in data_dir.
const dbFile = boot.StoreFile

// ownerTokenFile is the file in data_dir that holds the generated owner
// token when the config declares no principal.
const ownerTokenFile = "owner.token"

// credentialKeyFile holds the key WebShell credentials are derived with
// on a single node ([credentialKey]).
const credentialKeyFile = "webshell.key"

// serve runs the daemon until ctx ends (SIGINT or SIGTERM in main): every
// enabled server is connected and supervised, the API and WebShell are
// served on `listen`, and on the way out calls get a grace period, every
// child process is stopped and reaped, and the store is closed.
func (e *env) serve(ctx context.Context, args []string) int {
	fs := e.newFlagSet("serve", "[-config FILE] [-listen ADDR] [-v] [-replica-id ID] [-advertise URL] [-ready-file FILE] [-shutdown-grace DURATION]")
	cfgPath := fs.String("config", "", "config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	listenFlag := fs.String("listen", "", "serve the API and WebShell on `ADDR` (host:port) instead of the config's listen (also "+listenEnv+")")
	verbose := fs.Bool("v", false, "log at debug level whatever the config's log_level")
	rf := addReplicaFlags(fs)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	// First, before anything reads a secret: no process of the same user
	// may read the daemon's environment or memory through /proc.
	if err := markNonDumpable(); err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	lo, err := parseListen(*listenFlag, os.Getenv(listenEnv))
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	cfg, ok := e.loadConfig(*cfgPath)
	if !ok {
		return exitUsage
	}
	lo.apply(cfg)
	if *cfgPath == "" && cfg.Filename != config.DefaultFilename {
		*cfgPath = cfg.Filename // found: reloads read it too
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
	if err := checkExampleTokens(cfg); err != nil {
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
	stopTraces, err := telemetry.Setup(ctx, telemetry.Config{
		Endpoint: cfg.Telemetry.OTLPEndpoint, ServiceName: cfg.Telemetry.ServiceName, ServiceVersion: version(),
		Logger: logger.With("component", "telemetry"),
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	defer func() {
		if err := stopTraces(context.Background()); err != nil {
			logger.Warn("telemetry: the last traces were not sent", "err", err)
		}
	}()
	storeOpts := boot.StoreOptions(cfg)
	id, err := replicaID(rf)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	secret, err := clusterSecret(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	// On PostgreSQL the store carries this replica's events to the others
	// and theirs to it, sealed with the secret; on SQLite the id changes
	// nothing.
	st, err := boot.OpenStoreAs(ctx, cfg, logger, id, secret)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	defer st.Close()

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost serve: %s\n", lo.bindError(cfg, source, err))
		return exitFailure
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *rf.grace <= 0 {
		ln.Close()
		fmt.Fprintf(e.stderr, "mcphost serve: -shutdown-grace %s: want a positive duration such as 30s\n", *rf.grace)
		return exitUsage
	}
	node, sealKey, err := newReplica(rf, id, ln, replicaDirectory(st), secret, logger)
	if err != nil {
		ln.Close()
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitUsage
	}
	credKey, err := credentialKey(cfg.DataDir, node, secret)
	if err != nil {
		ln.Close()
		fmt.Fprintf(e.stderr, "mcphost serve: %v\n", err)
		return exitFailure
	}
	logger.Info("mcphost starting", "version", version(), "config", source, "config_from", e.configFrom, "servers", len(cfg.Servers), "addr", ln.Addr().String(),
		"store_sync", storeOpts.Sync.String(), "replica", node.ID(), "advertise", node.Addr(), "clustered", node.Clustered(),
		"shutdown_grace", rf.grace.String())

	var rl *reloader // set once the host exists; a peer's reload needs it
	var onPeerReload func(context.Context)
	if *cfgPath != "" {
		onPeerReload = func(context.Context) {
			// The daemon's context, as for SIGHUP.
			if _, err := rl.reload(ctx, "peer", "", host.ReloadOptions{}); err != nil {
				logger.Warn("another replica reloaded its config; this one's reload failed", "err", err)
			}
		}
	}
	h, err := host.New(cfg, host.Options{
		OnPeerReload:   onPeerReload,
		Logger:         logger.With("component", "host"),
		Version:        version(),
		Restart:        true,
		Store:          st,
		OwnerToken:     ownerToken,
		CredentialKey:  credKey,
		PluginCacheDir: boot.PluginCacheDir(cfg, logger),
		AppCompaction:  host.AppCompaction{After: cfg.AppCompactAfter, SessionBytes: cfg.AppCompactSessionBytes},
		Replica:        node.ID(),
		Cluster:        node,
		ShutdownGrace:  *rf.grace,
	})
	if err != nil {
		ln.Close()
		e.printHostError(cfg, err)
		return exitUsage
	}
	rl = &reloader{e: e, h: h, path: *cfgPath, listen: lo, ownerToken: ownerToken != "", logger: logger, level: level, verbose: *verbose}
	rl.watch.Store(cfg.WatchConfig)
	apiOpts := httpapi.Options{
		Logger:         logger.With("component", "http"),
		Hosts:          allowedHosts(cfg.Listen, port),
		PublicURLs:     cfg.PublicURLs,
		AppsSandboxURL: cfg.AppsSandboxURL,
		Assets:         webshell.Assets(),
		Version:        version(),
	}
	if *cfgPath != "" {
		apiOpts.ConfigFile = *cfgPath
		if abs, err := filepath.Abs(*cfgPath); err == nil {
			apiOpts.ConfigFile = abs
		}
		// The daemon's context, not the request's: a client that goes
		// away does not cut a reload short, as nothing cuts SIGHUP's.
		apiOpts.Reload = func(_ context.Context, by host.Principal, opts host.ReloadOptions) (host.ReloadPlan, error) {
			// A reload through the API reaches the other replicas (they
			// reload their own copy of the file); SIGHUP and the file
			// watcher are per process, and a reload heard from a peer is
			// never announced again.
			opts.Announce = !opts.DryRun
			return rl.reload(ctx, "API", by.Name, opts)
		}
	}
	gw := gateway.New(h, gateway.Options{Logger: logger, Version: version(), Cluster: node, SealKey: sealKey})
	defer gw.Close()
	apiOpts.Metrics = gw.WriteMetrics
	api := httpapi.New(h, apiOpts)
	handler := httpapi.SandboxHostOnly(cfg.AppsSandboxURL, mountRelay(node, h, gateway.Mount(gw, api)))
	// The servers outlive the signal: calls still running when SIGINT or
	// SIGTERM arrives get Serve's grace period on live sessions, and Close
	// stops the servers after it.
	h.Start(context.WithoutCancel(ctx))
	if e.reload != nil {
		go rl.onSignal(ctx, e.reload)
	}
	if *cfgPath != "" {
		go rl.watchFile(ctx, watchInterval, watchQuiet)
	}
	base := "http://" + net.JoinHostPort(urlHost(cfg.Listen), strconv.Itoa(port)) + "/"
	removeReadyFile, err := writeReadyFile(*rf.readyFile, strings.TrimSuffix(base, "/"))
	if err != nil {
		logger.Error("mcphost serve: the ready file was not written", "err", err)
		h.Close()
		return exitFailure
	}
	defer removeReadyFile()
	if ownerToken != "" {
		fmt.Fprintf(e.stdout, "mcphost is serving the WebShell at %s#token=%s\n", base, ownerToken)
		if cfg.Gateway.Enabled {
			fmt.Fprintf(e.stdout, "MCP clients: %smcp with the header \"Authorization: Bearer <the token>\" (mcphost gateway config CLIENT)\n", base)
		}
	} else {
		fmt.Fprintf(e.stdout, "mcphost is serving the WebShell at %s (sign in with a principal's token)\n", base)
		if cfg.Gateway.Enabled {
			fmt.Fprintf(e.stdout, "MCP clients: %smcp with a principal's token (mcphost gateway config CLIENT -as NAME)\n", base)
		}
	}
	// The client commands find this daemon through data_dir.
	removeDaemonFile, err := writeDaemonFile(cfg.DataDir, strings.TrimSuffix(base, "/"))
	if err != nil {
		logger.Warn("the CLI will not find this daemon on its own (it runs commands locally unless given -daemon URL)", "err", err)
	}
	defer removeDaemonFile()
	stopReplica := runReplica(ctx, node, logger)
	serveErr := h.Serve(ctx, ln, handler)
	stopReplica()
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

// reloader reloads the daemon's config file. SIGHUP, the file watcher
// (watch_config) and POST /api/v1/reload all call reload, one at a time,
// so they load, check, apply and log alike.
type reloader struct {
	e          *env
	h          *host.Host
	path       string         // the -config file; "" for the embedded default
	listen     listenOverride // -listen or MCPHOST_LISTEN, kept across reloads
	ownerToken bool           // the daemon started without principals and made the owner token
	logger     *slog.Logger
	level      *slog.LevelVar
	verbose    bool        // -v: log_level is not applied
	watch      atomic.Bool // watch_config of the config in force

	mu sync.Mutex // one reload at a time, log level included
}

// onSignal reloads the config file on every signal from sig (SIGHUP)
// until ctx ends. A config that does not load, or that the host refuses,
// is reported and the running config stays in force.
func (r *reloader) onSignal(ctx context.Context, sig <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		}
		if r.path == "" {
			r.logger.Warn("SIGHUP: nothing to reload: the daemon runs the embedded default config (start it with -config FILE)")
			continue
		}
		_, _ = r.reload(ctx, "SIGHUP", "", host.ReloadOptions{})
	}
}

// reload loads the config file again and hands it to the host with opts;
// trigger and by (a principal, or "") say who asked, for the log. On
// success it applies log_level (unless -v) and watch_config. Failures are
// logged; the running config stays in force.
func (r *reloader) reload(ctx context.Context, trigger, by string, opts host.ReloadOptions) (host.ReloadPlan, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	args := []any{"config", r.path}
	if by != "" {
		args = append(args, "principal", by)
	}
	if opts.DryRun {
		r.logger.Info(trigger+": planning a reload of the config (dry run)", args...)
	} else {
		r.logger.Info(trigger+": reloading the config", args...)
	}
	cfg, plan, err := r.e.reloadConfig(ctx, r.h, r.path, r.listen, r.ownerToken, opts)
	switch {
	case err != nil && opts.DryRun:
		r.logger.Info("the config would not reload", append(args, "err", err)...)
		return plan, err
	case err != nil:
		r.logger.Error("config reload failed; the running config stays in force", append(args, "err", err)...)
		return plan, err
	case opts.DryRun:
		return plan, nil
	}
	if !r.verbose && r.level.Level() != cfg.LogLevel {
		r.level.Set(cfg.LogLevel)
		r.logger.Warn("log level changed", "log_level", cfg.LogLevel.String())
	}
	if r.watch.Swap(cfg.WatchConfig) != cfg.WatchConfig {
		r.logger.Info("watch_config changed", "watch_config", cfg.WatchConfig)
	}
	return plan, nil
}

// reloadConfig loads path and hands it to the host with opts. A config
// with errors is a *host.ConfigError with its diagnostics, which go to
// stderr with their snippets too, as at start-up (not for a dry run: its
// caller shows them). A dry run plans without the variables env() reads
// that are not set (the plan names them); a reload refuses them.
func (e *env) reloadConfig(ctx context.Context, h *host.Host, path string, lo listenOverride, ownerToken bool, opts host.ReloadOptions) (*config.Config, host.ReloadPlan, error) {
	cfg, diags := config.LoadFile(path, config.Options{Executable: selfExecutable(), UnsetEnvUnknown: opts.DryRun})
	if !opts.DryRun {
		e.printDiagnostics(cfg.Files, diags)
	}
	if diags.HasErrors() {
		return nil, host.ReloadPlan{}, &host.ConfigError{Diagnostics: diags}
	}
	lo.apply(cfg)
	if err := checkListen(cfg); err != nil {
		return nil, host.ReloadPlan{}, daemonRefusal("Listen address needs principals", err.Error())
	}
	if err := checkExampleTokens(cfg); err != nil {
		return nil, host.ReloadPlan{}, daemonRefusal("Example token", err.Error())
	}
	if len(cfg.Principals) == 0 && !ownerToken {
		return nil, host.ReloadPlan{}, daemonRefusal("No principal",
			"The new config declares no principal, and the generated owner token is made only when the daemon starts without principals: restart mcphost to switch to it, or keep a principal block.")
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	plan, err := h.ReloadWith(rctx, cfg, opts) // the host logs what changed
	if err != nil {
		var pe *host.PluginLoadError
		if errors.As(err, &pe) && !opts.DryRun {
			e.printDiagnostics(cfg.Files, pe.Diagnostics)
		}
		return nil, host.ReloadPlan{}, err
	}
	for _, u := range cfg.Unset {
		plan.Unset = append(plan.Unset, u.String())
	}
	return cfg, plan, nil
}

// daemonRefusal is a config the daemon refuses to reload although it
// loads, as a diagnostic without a position.
func daemonRefusal(summary, detail string) *host.ConfigError {
	if detail != "" {
		detail = strings.ToUpper(detail[:1]) + detail[1:]
		if !strings.HasSuffix(detail, ".") {
			detail += "."
		}
	}
	return &host.ConfigError{Diagnostics: hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail}}}
}

// checkExampleTokens refuses a principal whose token is a placeholder of
// mcphost's shipped examples: anyone can read it, so a daemon that took it
// would let anyone act as that principal.
func checkExampleTokens(cfg *config.Config) error {
	for _, p := range cfg.Principals {
		if config.IsExampleToken(p.Token) {
			return fmt.Errorf("principal %q (%s) has a placeholder token from mcphost's examples, which anyone can read; give it a token of its own (set the environment variable the config reads, for example to the output of `openssl rand -hex 32`)", p.Name, fmt.Sprintf("%s:%d", p.DeclRange.Filename, p.DeclRange.Start.Line))
		}
	}
	return nil
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
