package boot

import (
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

// TestStoreOptions checks that the `store` block reaches the options the
// daemon opens its database with.
func TestStoreOptions(t *testing.T) {
	noEnv := config.Options{LookupEnv: func(string) (string, bool) { return "", false }}
	tests := []struct {
		name  string
		block string
		want  store.Sync
	}{
		{"no block", "", store.SyncFull},
		{"full", "store {\n  sync = \"full\"\n}\n", store.SyncFull},
		{"normal", "store {\n  sync = \"normal\"\n}\n", store.SyncNormal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := config.Parse([]byte("data_dir = \"/var/lib/mcphost\"\n"+tt.block), "store.hcl", noEnv)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if got := StoreOptions(cfg).Sync; got != tt.want {
				t.Errorf("StoreOptions(%q).Sync = %v, want %v", cfg.Store.Sync, got, tt.want)
			}
		})
	}
	if got := StoreOptions(&config.Config{}).Sync; got != store.SyncFull {
		t.Errorf("StoreOptions of a zero Config = %v, want full", got)
	}
}
