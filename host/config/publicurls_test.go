package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
)

func TestPublicURLs(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		want   []string
		diag   string // the first diagnostic's summary; "" for none
		detail string // in its detail
		line   int    // of its subject
	}{
		{name: "unset", src: ""},
		{name: "empty list", src: "public_urls = []\n"},
		{name: "one", src: `public_urls = ["https://mcphost.example.com"]` + "\n", want: []string{"https://mcphost.example.com"}},
		{name: "normalised", src: `public_urls = ["HTTP://LocalHost:8080/", "http://localhost:8080"]` + "\n", want: []string{"http://localhost:8080"}},
		{name: "from env()", src: `public_urls = [env("MCPHOST_UNSET", "http://127.0.0.1:8080")]` + "\n", want: []string{"http://127.0.0.1:8080"}},
		{name: "a path", src: "\npublic_urls = [\"https://example.com/mcphost\"]\n", diag: "Invalid public_urls entry", detail: "origin only", line: 2},
		{name: "ftp", src: `public_urls = ["ftp://example.com"]` + "\n", diag: "Invalid public_urls entry", detail: "http or https", line: 1},
		{name: "no host", src: `public_urls = ["https://"]` + "\n", diag: "Invalid public_urls entry", detail: "host is missing", line: 1},
		{name: "credentials", src: `public_urls = ["https://u:p@example.com"]` + "\n", diag: "Invalid public_urls entry", detail: "password", line: 1},
		{name: "bad port", src: `public_urls = ["https://example.com:0"]` + "\n", diag: "Invalid public_urls entry", detail: "port", line: 1},
		{name: "a query", src: `public_urls = ["https://example.com?x=1"]` + "\n", diag: "Invalid public_urls entry", detail: "origin only", line: 1},
		{name: "not a list", src: `public_urls = "https://example.com"` + "\n", diag: "Incorrect attribute value type", line: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "inline.hcl", testOptions())
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatalf("diagnostics:%s", diagText(diags))
				}
				if diff := cmp.Diff(tt.want, cfg.PublicURLs, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("PublicURLs (-want +got):\n%s", diff)
				}
				return
			}
			wantFirstDiag(t, diags, tt.diag, tt.detail, tt.line)
		})
	}
}

func TestAppsSandboxURL(t *testing.T) {
	const pub = `public_urls = ["https://mcphost.example.com", "http://localhost:8080"]` + "\n"
	tests := []struct {
		name   string
		src    string
		want   string
		diag   string
		detail string
		line   int
	}{
		{name: "unset", src: pub},
		{name: "set", src: pub + `apps_sandbox_url = "HTTPS://Apps.Example.com/"` + "\n", want: "https://apps.example.com"},
		{name: "empty", src: pub + `apps_sandbox_url = ""` + "\n"},
		{name: "from env()", src: pub + `apps_sandbox_url = env("MCPHOST_UNSET", "https://apps.example.com")` + "\n", want: "https://apps.example.com"},
		{name: "a public URL", src: pub + `apps_sandbox_url = "https://mcphost.example.com"` + "\n", diag: "Invalid apps_sandbox_url", detail: "origin of its own", line: 2},
		{name: "loopback", src: pub + `apps_sandbox_url = "https://localhost:8443"` + "\n", diag: "Invalid apps_sandbox_url", detail: "loopback name", line: 2},
		{name: "no public URLs", src: `apps_sandbox_url = "https://apps.example.com"` + "\n", diag: "Invalid apps_sandbox_url", detail: "public_urls is empty", line: 1},
		{name: "http under https", src: pub + "\napps_sandbox_url = \"http://apps.example.com\"\n", diag: "Invalid apps_sandbox_url", detail: "blocks an http frame", line: 3},
		{name: "a path", src: pub + `apps_sandbox_url = "https://apps.example.com/sandbox"` + "\n", diag: "Invalid apps_sandbox_url", detail: "origin only", line: 2},
		{name: "not a string", src: pub + `apps_sandbox_url = ["https://apps.example.com"]` + "\n", diag: "Incorrect attribute value type", line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "inline.hcl", testOptions())
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatalf("diagnostics:%s", diagText(diags))
				}
				if cfg.AppsSandboxURL != tt.want {
					t.Errorf("AppsSandboxURL = %q, want %q", cfg.AppsSandboxURL, tt.want)
				}
				return
			}
			wantFirstDiag(t, diags, tt.diag, tt.detail, tt.line)
		})
	}
}

// wantFirstDiag checks the first of diags: its summary, a part of its
// detail and the line of its subject.
func wantFirstDiag(t *testing.T, diags hcl.Diagnostics, summary, detail string, line int) {
	t.Helper()
	if len(diags) == 0 {
		t.Fatalf("no diagnostics, want %q", summary)
	}
	d := diags[0]
	if d.Summary != summary || !strings.Contains(d.Detail, detail) {
		t.Errorf("diagnostic %q: %q, want %q containing %q", d.Summary, d.Detail, summary, detail)
	}
	if d.Subject == nil || d.Subject.Start.Line != line {
		t.Errorf("subject %v, want line %d", d.Subject, line)
	}
}
