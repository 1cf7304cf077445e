package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
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
}
