package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestOneShotCommandsUseTheEraCache: with the daemon's database present in
// data_dir, `servers` in auto mode probes once (a sibling process plus the
// session) and later commands start the server once, from the cached
// verdict. Without the database nothing is created.
func TestOneShotCommandsUseTheEraCache(t *testing.T) {
	bin := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/wellbehaved")
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "state")
	shared := testbin.SandboxDir(t) // the fixture's sandbox may write here
	starts := filepath.Join(shared, "starts")
	cfg := filepath.Join(dir, "auto.hcl")
	src := fmt.Sprintf("data_dir = %q\n\nserver \"fx\" {\n  command             = %q\n  version_negotiation = \"auto\"\n  env                 = { FIXTURE_STARTS = %q }\n  sandbox { write = [%q] }\n}\n", dataDir, bin, starts, shared)
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	countStarts := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "\n")
	}
	servers := func() string {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), []string{"servers", "-config", cfg}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("servers exited %d: %s%s", code, out.String(), errOut.String())
		}
		return out.String()
	}

	// No database: every run probes, and no database appears.
	servers()
	if _, err := os.Stat(filepath.Join(dataDir, dbFile)); err == nil {
		t.Fatal("a one-shot command created the database")
	}
	if n := countStarts(); n != 2 {
		t.Fatalf("%d processes without a cache, want 2 (probe sibling and session)", n)
	}

	// With the daemon's database: one more probe fills the cache, then one
	// process per run.
	st, err := store.Open(t.Context(), filepath.Join(dataDir, dbFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	servers()
	if n := countStarts(); n != 4 {
		t.Fatalf("%d processes after the first cached run, want 4", n)
	}
	out := servers()
	if n := countStarts(); n != 5 {
		t.Fatalf("%d processes after a warm run, want 5", n)
	}
	if !strings.Contains(out, "modern: cached verdict") {
		t.Errorf("servers output lacks the cached evidence:\n%s", out)
	}
}
