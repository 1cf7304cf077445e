package egress

import (
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    string // the rule's String, or "" when an error is expected
		problem string // part of the error
	}{
		{in: "api.github.com:443", want: "api.github.com:443"},
		{in: "API.GitHub.com.:443", want: "api.github.com:443"},
		{in: "*.example.com:443", want: "*.example.com:443"},
		{in: "203.0.113.7:8443", want: "203.0.113.7:8443"},
		{in: "[2001:db8::1]:443", want: "[2001:db8::1]:443"},
		{in: "registry.npmjs.org", problem: "has no port"},
		{in: "example.com:0", problem: "a port is a number"},
		{in: "example.com:70000", problem: "a port is a number"},
		{in: "example.com:https", problem: "a port is a number"},
		{in: "*.com:443", problem: "top-level domain"},
		{in: "a.*.example.com:443", problem: "wildcard"},
		{in: "exa mple.com:443", problem: "character"},
		{in: ":443", problem: "is empty"},
		{in: "a..b:443", problem: "empty label"},
		{in: "[fe80::1%eth0]:443", problem: "zone"},
		{in: "203.0.113.7.:443", want: "203.0.113.7:443"},
		{in: "*.203.0.113.7:443", problem: "wildcard before an address"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRule(tt.in)
			if tt.want != "" {
				if err != nil || r.String() != tt.want {
					t.Fatalf("ParseRule(%q) = %v, %v; want %s", tt.in, r, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("ParseRule(%q) error = %v; want one saying %q", tt.in, err, tt.problem)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	rules := []Rule{}
	for _, s := range []string{"api.github.com:443", "*.example.com:443", "127.0.0.1:8080"} {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	tests := []struct {
		host string
		port uint16
		want bool
	}{
		{"api.github.com", 443, true},
		{"API.GITHUB.COM.", 443, true},
		{"api.github.com", 80, false},
		{"github.com", 443, false},
		{"evil-api.github.com", 443, false},
		{"www.example.com", 443, true},
		{"a.b.example.com", 443, true},
		{"example.com", 443, false},
		{"notexample.com", 443, false},
		{"127.0.0.1", 8080, true},
		{"[::ffff:127.0.0.1]", 8080, true},
		{"127.0.0.1", 8081, false},
		{"localhost", 8080, false},
	}
	for _, tt := range tests {
		if _, got := Allowed(rules, tt.host, tt.port); got != tt.want {
			t.Errorf("Allowed(%s:%d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"api.github.com:443", "*.example.com:443", "[::1]:80", "x", ":", "[", "*.:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		// What parses prints back as a rule that parses to itself.
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRule(%q) = %v, whose String %q parses to %v, %v", s, r, r.String(), again, err)
		}
	})
}
