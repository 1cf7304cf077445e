package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestExampleTokensAreKnown: every token the shipped examples and the
// README give a principal as env()'s default (or as a literal) is one
// IsExampleToken knows, so that serve refuses each of them.
func TestExampleTokensAreKnown(t *testing.T) {
	files, err := filepath.Glob("../../examples/hcl/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md")
	docs, _ := filepath.Glob("../../docs/*.md")
	files = append(files, docs...)
	re := regexp.MustCompile(`token\s*=\s*(?:env\("[A-Z_]+",\s*"([^"]+)"\)|"([^"$]{16,})")`)
	found := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			tok := m[1] + m[2]
			found++
			if !IsExampleToken(tok) {
				t.Errorf("%s gives a principal the token %q, which IsExampleToken does not know: add it to exampleTokens", f, tok)
			}
		}
	}
	if found == 0 {
		t.Fatal("no example token found: the pattern no longer matches the examples")
	}
}

// TestExampleTokenWarns: a principal with an example's placeholder token
// loads with a warning on its token attribute that says serve refuses it;
// a token of its own does not.
func TestExampleTokenWarns(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		warn        bool
	}{
		{"placeholder", "placeholder-alice-token-replace-me", true},
		{"its own", "alice-0123456789abcdef", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "principal \"alice\" {\n  token = \"" + tc.token + "\"\n}\n"
			cfg, diags := Parse([]byte(src), "team.hcl", Options{})
			if diags.HasErrors() {
				t.Fatal(diagText(diags))
			}
			var got *hcl.Diagnostic
			for _, d := range diags {
				if d.Summary == "Example token" {
					got = d
				}
			}
			if (got != nil) != tc.warn {
				t.Fatalf("warning %v, want %v:%s", got != nil, tc.warn, diagText(diags))
			}
			if got == nil {
				return
			}
			if got.Severity != hcl.DiagWarning || got.Subject == nil || got.Subject.Start.Line != 2 || !strings.Contains(got.Detail, "`mcphost serve` refuses it") {
				t.Fatalf("diagnostic %+v", got)
			}
			if len(cfg.Principals) != 1 || !IsExampleToken(cfg.Principals[0].Token) {
				t.Fatalf("principals %+v", cfg.Principals)
			}
		})
	}
}
