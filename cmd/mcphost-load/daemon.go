package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/gateway"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/httpapi"
	"github.com/mcphost/mcphost/host/httpapi/webshell"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/benchpair"
)

// daemon is the mcphost daemon assembled in this process exactly as
// `mcphost serve` assembles it (cmd/mcphost/serve.go): store.OpenWith, host.New
// with restarts on, the plugin cache in data_dir and the config's app
// compaction, httpapi.New with the WebShell's assets, Host.Start,
// Host.Serve on a loopback listener.
type daemon struct {
	h       *host.Host
	gw      *gateway.Gateway
	st      *store.Store
	addr    string // 127.0.0.1:PORT
	stop    context.CancelFunc
	served  chan error
	logFile *os.File
}

// startup is how long one daemon start took.
type startup struct {
	Label string `json:"label"` // "cold" (empty era cache) or "warm"
	// TotalMs is from before store.OpenWith until the last server was ready.
	TotalMs     float64 `json:"totalMs"`
	StoreOpenMs float64 `json:"storeOpenMs"`
	// HostNewMs is host.New: planning, and compiling and warming the
	// plugin (from the on-disk cache once it is warm).
	HostNewMs float64 `json:"hostNewMs"`
	// ConnectMs is from Host.Start until every server was ready.
	ConnectMs float64 `json:"connectMs"`
	// Per server, from Host.Start to ready.
	ServerP50Ms float64                `json:"serverP50Ms"`
	ServerMaxMs float64                `json:"serverMaxMs"`
	ByKind      map[string]kindStartup `json:"byKind"`
	Ready       int                    `json:"ready"`
	Servers     int                    `json:"servers"`
	Eras        map[string]int         `json:"eras"`
	Problems    []string               `json:"problems,omitempty"`
}

// kindStartup is the per-kind part of a start-up.
type kindStartup struct {
	Servers int     `json:"servers"`
	P50Ms   float64 `json:"p50Ms"`
	MaxMs   float64 `json:"maxMs"`
}

// startDaemon assembles and starts the daemon for cfg and waits until every
// server has settled (at most settle). It returns the daemon even when some
// servers failed; su.Problems says which.
func startDaemon(ctx context.Context, cfg *config.Config, label, logPath string, plan []serverPlan, settle time.Duration) (*daemon, startup, error) {
	su := startup{Label: label, Servers: len(cfg.Servers), ByKind: map[string]kindStartup{}, Eras: map[string]int{}}
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, su, err
	}
	logger := slog.New(slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: cfg.LogLevel}))

	var (
		mu      sync.Mutex
		started time.Time
		readyAt = map[string]time.Duration{}
	)
	onStatus := func(st host.ServerStatus) {
		mu.Lock()
		defer mu.Unlock()
		if st.State == host.StateReady && !started.IsZero() {
			if _, ok := readyAt[st.Name]; !ok {
				readyAt[st.Name] = time.Since(started)
			}
		}
	}

	t0 := time.Now()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		lf.Close()
		return nil, su, err
	}
	st, err := boot.OpenStore(ctx, cfg, logger)
	if err != nil {
		lf.Close()
		return nil, su, err
	}
	su.StoreOpenMs = ms(time.Since(t0))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		lf.Close()
		return nil, su, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	tNew := time.Now()
	h, err := host.New(cfg, host.Options{
		Logger:         logger.With("component", "host"),
		Version:        "mcphost-load",
		Restart:        true,
		Store:          st,
		PluginCacheDir: boot.PluginCacheDir(cfg, logger),
		AppCompaction:  host.AppCompaction{After: cfg.AppCompactAfter, SessionBytes: cfg.AppCompactSessionBytes},
		OnStatus:       onStatus,
		// serve's OwnerToken is set only for a config without principals;
		// the generated one always has them.
	})
	if err != nil {
		ln.Close()
		st.Close()
		lf.Close()
		return nil, su, fmt.Errorf("host.New: %w", err)
	}
	su.HostNewMs = ms(time.Since(tNew))
	p := strconv.Itoa(port)
	// The gateway at /mcp, as serve mounts it (no cluster: one daemon).
	gw := gateway.New(h, gateway.Options{Logger: logger.With("component", "gateway"), Version: "mcphost-load"})
	api := httpapi.New(h, httpapi.Options{
		Logger:  logger.With("component", "http"),
		Hosts:   []string{"127.0.0.1:" + p, "localhost:" + p},
		Assets:  webshell.Assets(),
		Version: "mcphost-load",
		Metrics: gw.WriteMetrics,
	})
	handler := gateway.Mount(gw, api)

	// The daemon outlives no caller: it stops with d.close, or when ctx
	// ends (SIGINT).
	dctx, stop := context.WithCancel(ctx)
	d := &daemon{h: h, gw: gw, st: st, addr: ln.Addr().String(), stop: stop, served: make(chan error, 1), logFile: lf}
	mu.Lock()
	started = time.Now()
	mu.Unlock()
	h.Start(dctx)
	go func() { d.served <- h.Serve(dctx, ln, handler) }()

	wctx, cancel := context.WithTimeout(ctx, settle)
	defer cancel()
	if err := h.WaitSettled(wctx); err != nil {
		su.Problems = append(su.Problems, fmt.Sprintf("servers not settled within %s: %v", settle, err))
	}
	settled := time.Since(started)

	mu.Lock()
	defer mu.Unlock()
	var all []time.Duration
	byKind := map[string][]time.Duration{}
	last := time.Duration(0)
	for _, s := range plan {
		status, err := h.Server(s.Name)
		if err != nil {
			su.Problems = append(su.Problems, err.Error())
			continue
		}
		k := kinds[s.Kind]
		if status.State != host.StateReady {
			su.Problems = append(su.Problems, fmt.Sprintf("%s is %s: %s", s.Name, status.State, status.LastError))
			continue
		}
		su.Ready++
		su.Eras[status.Era]++
		if status.Era != k.Era {
			su.Problems = append(su.Problems, fmt.Sprintf("%s (%s) connected in the %s era, want %s (%s)", s.Name, k.Name, status.Era, k.Era, status.Evidence))
		}
		at, ok := readyAt[s.Name]
		if !ok {
			at = settled
		}
		all = append(all, at)
		byKind[k.Name] = append(byKind[k.Name], at)
		last = max(last, at)
	}
	su.ConnectMs = ms(last)
	su.TotalMs = ms(started.Sub(t0) + last)
	su.ServerP50Ms, _ = msPercentiles(all)
	if len(all) > 0 {
		su.ServerMaxMs = ms(slices.Max(all))
	}
	for name, ds := range byKind {
		p50, _ := msPercentiles(ds)
		su.ByKind[name] = kindStartup{Servers: len(ds), P50Ms: p50, MaxMs: ms(slices.Max(ds))}
	}
	return d, su, nil
}

// msPercentiles is benchpair.Percentiles in milliseconds: the median and the
// 99th percentile of ds, or zeros for no durations.
func msPercentiles(ds []time.Duration) (p50, p99 float64) {
	a, b := benchpair.Percentiles(ds)
	return ms(a), ms(b)
}

// close shuts the daemon down as `mcphost serve` does on SIGTERM: the HTTP
// server stops (running calls get their grace), then the host closes every
// server and reaps its processes, then the store closes.
func (d *daemon) close() error {
	d.stop()
	serveErr := <-d.served
	closeErr := d.h.Close()
	d.gw.Close() // as serve does, after the host
	storeErr := d.st.Close()
	d.logFile.Close()
	return errors.Join(serveErr, closeErr, storeErr)
}
