package config

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

var hashForm = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// TestHash: the hash is of the files' names and bytes, so the same source
// under the same name hashes alike whatever it evaluates to, and any change
// of a byte or of the name gives another one.
func TestHash(t *testing.T) {
	const src = `log_level = env("LEVEL", "info")` + "\n"
	parse := func(src, name string, env ...string) *Config {
		t.Helper()
		cfg, diags := Parse([]byte(src), name, Options{LookupEnv: testEnv(env...)})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return cfg
	}
	base := parse(src, "a.hcl").Hash()
	if !hashForm.MatchString(base) {
		t.Fatalf("Hash() = %q, want sha256:HEX", base)
	}
	tests := []struct {
		name string
		cfg  *Config
		same bool
	}{
		{"same source", parse(src, "a.hcl"), true},
		{"another env() value", parse(src, "a.hcl", "LEVEL", "debug"), true},
		{"one byte more", parse(src+"\n", "a.hcl"), false},
		{"another name", parse(src, "b.hcl"), false},
		{"the embedded default", func() *Config { c, _ := Default(testOptions()); return c }(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.cfg.Hash()
			if !hashForm.MatchString(got) {
				t.Fatalf("Hash() = %q, want sha256:HEX", got)
			}
			if (got == base) != tt.same {
				t.Errorf("Hash() = %s, base %s: same = %v, want %v", got, base, got == base, tt.same)
			}
		})
	}

	// Two files cannot be rearranged into another pair with the same hash.
	ab := &Config{Files: map[string]*hcl.File{"a": {Bytes: []byte("bc")}}}
	abc := &Config{Files: map[string]*hcl.File{"ab": {Bytes: []byte("c")}}}
	if ab.Hash() == abc.Hash() {
		t.Error("file a with bc and file ab with c hash alike")
	}
	empty := sha256.Sum256(nil)
	if got := (&Config{}).Hash(); got != "sha256:"+hex.EncodeToString(empty[:]) {
		t.Errorf("a config without files: %s", got)
	}
}
