package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

func TestStoreSync(t *testing.T) {
	type diag struct {
		Summary string
		Line    int
		Column  int // of the subject's start
	}
	tests := []struct {
		name     string
		src      string
		want     string // cfg.Store.Sync when there are no errors
		diags    []diag
		contains []string // in the first diagnostic's detail
	}{
		{name: "no block", src: "", want: StoreSyncFull},
		{name: "empty block", src: "store {}\n", want: StoreSyncFull},
		{name: "null", src: "store {\n  sync = null\n}\n", want: StoreSyncFull},
		{name: "full", src: "store {\n  sync = \"full\"\n}\n", want: StoreSyncFull},
		{name: "normal", src: "store {\n  sync = \"normal\"\n}\n", want: StoreSyncNormal},
		{name: "from env()", src: "store {\n  sync = env(\"MCPHOST_SYNC\")\n}\n", want: StoreSyncNormal},
		{name: "env() default", src: "store {\n  sync = env(\"MCPHOST_UNSET\", \"normal\")\n}\n", want: StoreSyncNormal},
		{
			name:     "unknown",
			src:      "store {\n  sync = \"fsync\"\n}\n",
			diags:    []diag{{"Invalid store sync", 2, 10}},
			contains: []string{`"fsync"`, `"full"`, `"normal"`},
		},
		{name: "upper case", src: "store {\n  sync = \"FULL\"\n}\n", diags: []diag{{"Invalid store sync", 2, 10}}},
		{name: "empty string", src: "store {\n  sync = \"\"\n}\n", diags: []diag{{"Invalid store sync", 2, 10}}},
		{name: "SQLite's name", src: "store {\n  sync = \"off\"\n}\n", diags: []diag{{"Invalid store sync", 2, 10}}},
		{name: "a number", src: "store {\n  sync = 2\n}\n", diags: []diag{{"Invalid store sync", 2, 10}}},
		{name: "a list", src: "store {\n  sync = [\"full\"]\n}\n", diags: []diag{{"Incorrect attribute value type", 2, 10}}},
		{
			name:     "unknown from env()",
			src:      "store {\n  sync = env(\"MCPHOST_BAD_SYNC\")\n}\n",
			diags:    []diag{{"Invalid store sync", 2, 10}},
			contains: []string{`env("MCPHOST_BAD_SYNC") (not shown)`, `"full"`, `"normal"`},
		},
		{
			name:     "two blocks",
			src:      "store {\n  sync = \"normal\"\n}\n\nstore {\n  sync = \"full\"\n}\n",
			diags:    []diag{{"Duplicate store block", 5, 1}},
			contains: []string{"store.hcl:1"},
		},
		{
			name:  "both wrong",
			src:   "store {\n  sync = \"fast\"\n}\nstore {}\n",
			diags: []diag{{"Invalid store sync", 2, 10}, {"Duplicate store block", 4, 1}},
		},
		{name: "unknown attribute", src: "store {\n  mode = \"normal\"\n}\n", diags: []diag{{"Unsupported argument", 2, 3}}},
		{name: "a label", src: "store \"db\" {}\n", diags: []diag{{"Extraneous label for store", 1, 7}}},
		{name: "an attribute", src: "store = \"normal\"\n", diags: []diag{{"Unsupported argument", 1, 1}}},
	}
	opts := Options{
		LookupEnv:  testEnv("MCPHOST_SYNC", "normal", "MCPHOST_BAD_SYNC", "sometimes"),
		Executable: testExecutable,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "store.hcl", opts)
			var got []diag
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic without subject: %s", d.Error())
					continue
				}
				if d.Severity != hcl.DiagError {
					t.Errorf("not an error: %s", d.Error()) // a daemon must not start with another durability than the file asked for
				}
				got = append(got, diag{d.Summary, d.Subject.Start.Line, d.Subject.Start.Column})
			}
			if diff := cmp.Diff(tt.diags, got); diff != "" {
				t.Fatalf("diagnostics (-want +got):\n%s\nall:%s", diff, diagText(diags))
			}
			for _, s := range tt.contains {
				if !strings.Contains(diags[0].Detail, s) {
					t.Errorf("detail %q does not contain %q", diags[0].Detail, s)
				}
			}
			if diags.HasErrors() {
				return
			}
			if cfg.Store.Sync != tt.want {
				t.Errorf("Store.Sync = %q, want %q", cfg.Store.Sync, tt.want)
			}
		})
	}
}
