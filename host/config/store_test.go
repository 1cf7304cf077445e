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

func TestStorePostgres(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string // cfg.Store.Postgres when there are no errors
		summary string // the one diagnostic, on line 2 at column 14
		absent  string // never in the diagnostic
	}{
		{name: "not set", src: "store {\n  sync = \"normal\"\n}\n"},
		{name: "a URL", src: "store {\n  postgres = \"postgres://u:pw@db:5432/mcphost\"\n}\n", want: "postgres://u:pw@db:5432/mcphost"},
		{name: "key=value", src: "store {\n  postgres = \"host=db dbname=mcphost\"\n}\n", want: "host=db dbname=mcphost"},
		{name: "from env()", src: "store {\n  postgres = env(\"DATABASE_URL\")\n}\n", want: "postgres://mcphost:s3cret@db/mcphost"},
		{name: "empty", src: "store {\n  postgres = \"\"\n}\n", summary: "Empty store.postgres"},
		{name: "empty env()", src: "store {\n  postgres = env(\"EMPTY_URL\")\n}\n", summary: "Empty store.postgres"},
		{name: "does not parse", src: "store {\n  postgres = \"postgres://u:hunter2@db:port/x\"\n}\n", summary: "Invalid store.postgres", absent: "hunter2"},
		{name: "does not parse from env()", src: "store {\n  postgres = env(\"BAD_URL\")\n}\n", summary: "Invalid store.postgres", absent: "hunter2"},
	}
	opts := Options{
		LookupEnv: testEnv("DATABASE_URL", "postgres://mcphost:s3cret@db/mcphost", "EMPTY_URL", "",
			"BAD_URL", "postgres://u:hunter2@db:port/x"),
		Executable: testExecutable,
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "store.hcl", opts)
			if tt.summary == "" {
				if diags.HasErrors() {
					t.Fatal(diagText(diags))
				}
				if cfg.Store.Postgres != tt.want {
					t.Errorf("Store.Postgres = %q, want %q", cfg.Store.Postgres, tt.want)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.summary || diags[0].Subject == nil ||
				diags[0].Subject.Start.Line != 2 || diags[0].Subject.Start.Column != 14 {
				t.Fatalf("diagnostics: %s, want one %q at 2:14", diagText(diags), tt.summary)
			}
			if tt.absent != "" && strings.Contains(diags[0].Error(), tt.absent) {
				t.Errorf("the diagnostic %q shows %q", diags[0].Error(), tt.absent)
			}
			if tt.summary == "Empty store.postgres" && !strings.Contains(diags[0].Detail, "is DATABASE_URL set?") {
				t.Errorf("detail %q does not ask about DATABASE_URL", diags[0].Detail)
			}
		})
	}
}
