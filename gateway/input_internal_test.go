package gateway

import (
	"bytes"
	"testing"
	"time"
)

// TestSealer: a sealed requestState opens only with its binding, unaltered
// and before it expires; it never shows the state it carries.
func TestSealer(t *testing.T) {
	s, err := newSealer(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return now }
	bind := binding("alice", "/mcp/servers/fx", "tools/call", "echo")
	token := s.seal(bind, "round=2;name=Ada")
	if bytes.Contains([]byte(token), []byte("round=2")) || bytes.Contains([]byte(token), []byte("name=")) || token[:4] != sealPrefix {
		t.Fatalf("token %q shows the state or lacks the prefix", token)
	}
	if got, err := s.open(bind, token); err != nil || got != "round=2;name=Ada" {
		t.Fatalf("open = %q, %v", got, err)
	}
	if again := s.seal(bind, "round=2;name=Ada"); again == token {
		t.Fatal("two seals of one state are the same token (nonce reused)")
	}
	for _, tc := range []struct {
		name  string
		bind  []byte
		token string
		at    time.Time
	}{
		{"another principal", binding("bob", "/mcp/servers/fx", "tools/call", "echo"), token, now},
		{"another endpoint", binding("alice", "/mcp", "tools/call", "echo"), token, now},
		{"another method", binding("alice", "/mcp/servers/fx", "prompts/get", "echo"), token, now},
		{"another tool", binding("alice", "/mcp/servers/fx", "tools/call", "slow"), token, now},
		{"altered", bind, altered(token), now},
		{"appended", bind, token + "-TAMPERED", now},
		{"no prefix", bind, token[len(sealPrefix):], now},
		{"not base64", bind, sealPrefix + "!!!", now},
		{"empty", bind, sealPrefix, now},
		{"expired", bind, token, now.Add(requestStateTTL + time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.now = func() time.Time { return tc.at }
			defer func() { s.now = func() time.Time { return now } }()
			if got, err := s.open(tc.bind, tc.token); err == nil {
				t.Fatalf("opened as %q", got)
			}
		})
	}
}

// altered is token with its second-to-last character changed (the last
// may hold only padding bits of the base64): never token itself, as a
// fixed replacement would be for a token that happens to end in it.
func altered(token string) string {
	b := []byte(token)
	i := len(b) - 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
