package host

import (
	"context"
	"errors"

	"github.com/mcphost/mcphost/host/store"
)

// ErrSessionBusy is the answer to deleting a session with a call running:
// the call's entry must have its session when it ends.
var ErrSessionBusy = errors.New("a call is running in this session; cancel it or wait for it to end")

// RenameSession sets the title of principal's session.
func (h *Host) RenameSession(ctx context.Context, p Principal, sessionID, title string) (store.Session, error) {
	if h.store == nil {
		return store.Session{}, ErrNoStore
	}
	s, err := h.store.RenameSession(ctx, p.Name, sessionID, title)
	return s, mapStoreErr(err)
}

// Session returns principal's session sessionID (its title, when it was
// made and last used); ErrNotFound for one it does not have.
func (h *Host) Session(ctx context.Context, p Principal, sessionID string) (store.Session, error) {
	if h.store == nil {
		return store.Session{}, ErrNoStore
	}
	s, err := h.store.Session(ctx, p.Name, sessionID)
	return s, mapStoreErr(err)
}

// DeleteSession deletes principal's session with its entries (the audit
// log keeps its records); ErrSessionBusy while a call runs in it.
func (h *Host) DeleteSession(ctx context.Context, p Principal, sessionID string) (int, error) {
	if h.store == nil {
		return 0, ErrNoStore
	}
	h.pipe.calls.mu.Lock()
	for _, rc := range h.pipe.calls.running {
		if rc.principal == p.Name && rc.sessionID == sessionID {
			h.pipe.calls.mu.Unlock()
			return 0, ErrSessionBusy
		}
	}
	h.pipe.calls.mu.Unlock()
	n, err := h.store.DeleteSession(ctx, p.Name, sessionID)
	if err != nil {
		return 0, mapStoreErr(err)
	}
	h.pipe.owned.Delete(p.Name + "\x00" + sessionID)
	return n, nil
}

// SearchSessions returns principal's sessions whose title, or a call's
// server or tool, has every word of q.
func (h *Host) SearchSessions(ctx context.Context, p Principal, q string) ([]store.Session, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	return h.store.SearchSessions(ctx, p.Name, q)
}

// CreateSession starts a new transcript for principal.
func (h *Host) CreateSession(ctx context.Context, p Principal, title string) (store.Session, error) {
	if h.store == nil {
		return store.Session{}, ErrNoStore
	}
	return h.store.CreateSession(ctx, p.Name, title)
}

// Sessions lists principal's sessions, most recently updated first.
func (h *Host) Sessions(ctx context.Context, p Principal) ([]store.Session, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	return h.store.Sessions(ctx, p.Name)
}

// Entries returns a page of a session's transcript (see store.Entries).
func (h *Host) Entries(ctx context.Context, p Principal, sessionID string, after int64, limit int) ([]store.Entry, int64, error) {
	if h.store == nil {
		return nil, 0, ErrNoStore
	}
	if _, err := h.store.Session(ctx, p.Name, sessionID); err != nil {
		return nil, 0, mapStoreErr(err)
	}
	entries, next, err := h.store.Entries(ctx, p.Name, sessionID, after, limit)
	h.withdrawEval(entries)
	return entries, next, err
}

// checkSession fails with ErrNotFound unless the session exists and belongs
// to principal. Ownership never changes, so a confirmed pair is remembered
// and later calls in the session skip the database read.
func (h *Host) checkSession(ctx context.Context, principal, sessionID string) error {
	key := principal + "\x00" + sessionID
	if _, ok := h.pipe.owned.Load(key); ok {
		return nil
	}
	if _, err := h.store.Session(ctx, principal, sessionID); err != nil {
		return mapStoreErr(err)
	}
	h.pipe.owned.Store(key, struct{}{})
	return nil
}

func mapStoreErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}
