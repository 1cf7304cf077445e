// Package logrec is a log/slog handler for tests that keeps every record's
// message and attributes, so a test can read what was logged.
package logrec

import (
	"context"
	"log/slog"
	"sync"
)

// Record is one logged record.
type Record struct {
	Msg   string
	Attrs map[string]slog.Value
}

// Handler keeps every record; it is safe for concurrent use.
type Handler struct {
	mu   sync.Mutex
	recs []Record
}

func (h *Handler) Enabled(context.Context, slog.Level) bool { return true }

func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Msg: r.Message, Attrs: map[string]slog.Value{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Resolve()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *Handler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *Handler) WithGroup(string) slog.Handler      { return h }

// Records returns the records whose message is msg, in the order logged.
func (h *Handler) Records(msg string) []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Record
	for _, r := range h.recs {
		if r.Msg == msg {
			out = append(out, r)
		}
	}
	return out
}
