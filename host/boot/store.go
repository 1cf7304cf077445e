package boot

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

// StoreOptions returns the options the daemon's database is opened with
// under cfg (its `store` block): store.SyncNormal for `sync = "normal"`,
// otherwise store.SyncFull, the default.
func StoreOptions(cfg *config.Config) store.Options {
	if cfg.Store.Sync == config.StoreSyncNormal {
		return store.Options{Sync: store.SyncNormal}
	}
	return store.Options{Sync: store.SyncFull}
}

// StoreFile is the SQLite database's name in data_dir.
const StoreFile = "mcphost.db"

// OpenStore opens the daemon's store as cfg's `store` block says: the
// PostgreSQL database of `postgres` when it is set (store.OpenPostgres),
// else the SQLite file StoreFile in data_dir (store.OpenWith), with the
// options of StoreOptions. It logs which backend it opened, with the DSN's
// password redacted. Every command that opens the store goes through it.
func OpenStore(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*store.Store, error) {
	return OpenStoreAs(ctx, cfg, logger, "", nil)
}

// OpenStoreAs is OpenStore for the replica with id replica
// (store.Options.Replica): on PostgreSQL its events then reach the other
// replicas sharing the store and theirs reach it (fanin.go), sealed with
// secret, the secret the replicas share (store.Options.Secret; required
// there). "" is a single node; SQLite is one whatever the id.
func OpenStoreAs(ctx context.Context, cfg *config.Config, logger *slog.Logger, replica string, secret []byte) (*store.Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opts := StoreOptions(cfg)
	opts.Replica, opts.Secret = replica, secret
	if cfg.Store.Postgres != "" {
		st, err := store.OpenPostgres(ctx, cfg.Store.Postgres, logger, opts)
		if err != nil {
			return nil, err
		}
		logger.Info("store opened", "backend", "postgres", "dsn", store.RedactDSN(cfg.Store.Postgres), "store_sync", opts.Sync.String())
		return st, nil
	}
	path := filepath.Join(cfg.DataDir, StoreFile)
	st, err := store.OpenWith(ctx, path, logger, opts)
	if err != nil {
		return nil, err
	}
	logger.Debug("store opened", "backend", "sqlite", "path", path, "store_sync", opts.Sync.String())
	return st, nil
}
