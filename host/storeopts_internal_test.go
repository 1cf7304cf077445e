package host

import (
	"slices"
	"testing"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
)

func parseStoreConfig(t *testing.T, block string) *config.Config {
	t.Helper()
	src := "data_dir = \"/var/lib/mcphost\"\n" + block
	cfg, diags := config.Parse([]byte(src), "store.hcl", config.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestStoreOptionsFor checks that the `store` block reaches the options the
// daemon opens its database with.
func TestStoreOptionsFor(t *testing.T) {
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
			cfg := parseStoreConfig(t, tt.block)
			if got := StoreOptionsFor(cfg).Sync; got != tt.want {
				t.Errorf("StoreOptionsFor(%q).Sync = %v, want %v", cfg.Store.Sync, got, tt.want)
			}
		})
	}
	if got := StoreOptionsFor(&config.Config{}).Sync; got != store.SyncFull {
		t.Errorf("StoreOptionsFor of a zero Config = %v, want full", got)
	}
}

// TestReloadStoreSyncIgnored checks that a reload reports a changed sync
// mode as a setting that waits for the next start: the store is opened
// once, before the host.
func TestReloadStoreSyncIgnored(t *testing.T) {
	none := parseStoreConfig(t, "")
	full := parseStoreConfig(t, "store {\n  sync = \"full\"\n}\n")
	normal := parseStoreConfig(t, "store {\n  sync = \"normal\"\n}\n")
	if got := restartOnly(none, full); len(got) != 0 {
		t.Errorf("restartOnly(no block, full) = %q, want nothing", got)
	}
	if got := restartOnly(full, normal); !slices.Equal(got, []string{"store.sync"}) {
		t.Errorf("restartOnly(full, normal) = %q, want [store.sync]", got)
	}
}
