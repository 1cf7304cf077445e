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
	// shutdownGrace is how long running calls may finish after a shutdown
	// signal before they are cancelled (and recorded as cancelled).
	shutdownGrace = 10 * time.Second
)

// setListenAddr records the address the daemon's listener is bound to, for
// the checks that must know the daemon's own port (appSourceValidator).
func (h *Host) setListenAddr(addr net.Addr) {
	a := addr.String()
	h.listenAddr.Store(&a)
}

// daemonPort returns the daemon's listen port: the bound one once Serve has
// started, else the configured one, or "" when neither is known (listen
// port 0 and nothing served).
func (h *Host) daemonPort() string {
	addr := ""
	if a := h.listenAddr.Load(); a != nil {
		addr = *a
	} else if cfg := h.gen().cfg; cfg != nil {
		addr = cfg.Listen
	}
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "0" {
		return port
	}
	return ""
}

// Serve serves handler (host/httpapi's) on ln until ctx ends, then shuts
// down: it stops accepting, ends event streams, lets running calls finish
// for shutdownGrace, cancels the rest and waits until their entries are
// recorded. It does not close the host; call Close after it.
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
	h.opts.Logger.Info("http server stopping", "grace", shutdownGrace)
	h.closing.Store(true)
	h.bus.closeAll()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		h.opts.Logger.Warn("calls still running after the grace period; cancelling them", "err", err)
		h.calls.cancelAll()
		cancelBase()
		_ = srv.Close()
	}
	// Every running call records its entry before we return, so the store
	// can be closed after this.
	h.calls.wg.Wait()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
