package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcphost/mcphost/host/store"
)

// decodeStore checks the `store` block; there may be one.
func (l *loader) decodeStore(cfg *Config, blocks []*storeBlock) {
	cfg.Store = StoreConfig{Sync: StoreSyncFull}
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate store block",
			Detail:   fmt.Sprintf("A store block is already defined at %s. Merge the two blocks into one.", fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	b := blocks[0]
	if v, st := l.evalString(b.Sync, "sync"); st == valid {
		switch v {
		case StoreSyncFull, StoreSyncNormal:
			cfg.Store.Sync = v
		default:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid store sync",
				Detail: fmt.Sprintf("The sync mode %s is not known. Use \"full\" (the default: every commit is fsynced, so an acknowledged entry survives a power loss) "+
					"or \"normal\" (fsync only at checkpoints: an acknowledged entry survives kill -9 of the daemon, but a power loss or an operating-system crash can lose the last ones).",
					quoted(b.Sync, v)),
				Subject: b.SyncRange.Ptr(),
			})
		}
	}
	l.decodeStorePostgres(cfg, b)
}

// decodeStorePostgres checks `postgres`: not empty, and a DSN pgx can
// parse. The value is never quoted whole: a literal one is shown with its
// password redacted, one from env() or file() not at all.
func (l *loader) decodeStorePostgres(cfg *Config, b *storeBlock) {
	v, st := l.evalString(b.Postgres, "postgres")
	if st != valid {
		return
	}
	if strings.TrimSpace(v) == "" {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty store.postgres",
			Detail: "store.postgres is empty: is DATABASE_URL set? Set it to the DSN of a PostgreSQL database, " +
				"such as postgres://mcphost:PASSWORD@db.example:5432/mcphost, or remove the attribute to use the SQLite file in data_dir.",
			Subject: b.PostgresRange.Ptr(),
		})
		return
	}
	if _, err := store.ParsePostgresDSN(v); err != nil {
		detail := fmt.Sprintf("The DSN %s does not parse", shown(b.Postgres, strconv.Quote(store.RedactDSN(v))))
		if sourcesPhrase(b.Postgres) == "" {
			detail += ": " + strings.TrimPrefix(err.Error(), "cannot parse the DSN: ")
		}
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid store.postgres",
			Detail: detail + ". Write a URL such as postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=require " +
				"or a key=value string such as \"host=HOST dbname=DATABASE user=USER\".",
			Subject: b.PostgresRange.Ptr(),
		})
		return
	}
	cfg.Store.Postgres = v
}
