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

// Serve serves handler (host/httpapi's) on ln until ctx ends, then shuts
// down: it stops accepting, ends event streams, lets running calls finish
// for shutdownGrace, cancels the rest and waits until their entries are
// recorded. It does not close the host; call Close after it.
//
// There is no write timeout: calls and event streams are long-lived, and
// every call has its own call_timeout.
func (h *Host) Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
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
