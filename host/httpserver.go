package host

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Bounds of the HTTP server.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = time.Minute // request bodies are small (4 MiB cap)
	idleTimeout       = 2 * time.Minute
	// DefaultShutdownGrace is how long running calls may finish after a
	// shutdown signal before they are cancelled (and recorded as
	// cancelled), unless Options.ShutdownGrace says otherwise.
	DefaultShutdownGrace = 10 * time.Second
	// closeBound is how long Serve waits for the connections to go idle
	// after the drain, when the grace is spent.
	closeBound = time.Second
)

// setListenAddr records the address the daemon's listener is bound to, for
// the checks that must know the daemon's own port (appSourceValidator).
func (h *Host) setListenAddr(addr net.Addr) {
	a := addr.String()
	h.life.listenAddr.Store(&a)
}

// daemonPort returns the daemon's listen port: the bound one once Serve has
// started, else the configured one, or "" when neither is known (listen
// port 0 and nothing served).
func (h *Host) daemonPort() string {
	addr := ""
	if a := h.life.listenAddr.Load(); a != nil {
		addr = *a
	} else if cfg := h.gen().Cfg; cfg != nil {
		addr = cfg.Listen
	}
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
		return port
	}
	return ""
}

// Serve serves handler (host/httpapi's) on ln until ctx ends, then drains
// and shuts down (drain.go):
//
//  1. draining: /readyz answers 503 at once and new tool calls are refused
//     (DrainingError), while the listener stays open so that a load
//     balancer sees the change and running calls and their streams go on;
//  2. when the running calls have finished, or the grace period
//     (Options.ShutdownGrace) is over, event streams end, the gateway's
//     sessions end (Stopping), the listener closes and the connections are
//     given what is left of the grace (at least closeBound) to go idle;
//  3. calls still running then are cancelled, and Serve waits until their
//     entries are recorded.
//
// It does not close the host; call Close after it.
//
// There is no write timeout: calls and event streams are long-lived, and
// every call has its own call_timeout.
func (h *Host) Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
	h.setListenAddr(ln.Addr())
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(h.opts.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := h.shutdownGrace()
	deadline := time.Now().Add(grace)
	h.drain(grace)
	h.life.closing.Store(true)
	h.ev.bus.Close()
	h.life.stopOnce.Do(func() { close(h.life.stopping) })
	sctx, cancel := context.WithDeadline(context.Background(), later(deadline, time.Now().Add(closeBound)))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		h.opts.Logger.Warn("calls still running after the grace period; cancelling them", "err", err)
		h.pipe.calls.cancelAll()
		cancelBase()
		_ = srv.Close()
	}
	// Every running call records its entry before we return, so the store
	// can be closed after this.
	h.pipe.calls.wg.Wait()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
