package host

import (
	"slices"
	"testing"

	"github.com/mcphost/mcphost/host/config"
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
