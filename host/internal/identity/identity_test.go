package identity

import (
	"errors"
	"testing"

	"github.com/mcphost/mcphost/host/config"
)

func TestTable(t *testing.T) {
	cfg := &config.Config{
		Principals: []config.Principal{
			{Name: "alice", Token: "alice-token-0123456789", Groups: []string{"ops"}, RateLimit: config.RateLimit{CallsPerSecond: 5}},
			{Name: "bob", Token: "bob-token-0123456789ab", APIOnly: true},
		},
		Admins: []string{"ops"},
	}
	key := NewKey(nil)
	tab := NewTable(cfg, key, "owner-token-unused-here")
	tests := []struct {
		name, token string
		ok          bool
		who, origin string
		admin       bool
	}{
		{"a principal's token", "alice-token-0123456789", true, "alice", OriginAPI, true},
		{"another's", "bob-token-0123456789ab", true, "bob", OriginAPI, false},
		{"an unknown token", "mallory-token-000000000", false, "", "", false},
		{"no token", "", false, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := tab.Authenticate(tt.token)
			if ok != tt.ok || c.Name != tt.who || c.Origin != tt.origin || c.Admin != tt.admin {
				t.Errorf("Authenticate = %+v %v", c, ok)
			}
		})
	}

	cred, c, err := tab.SignIn("alice-token-0123456789")
	if err != nil || c.Origin != OriginUser || !IsWebShellCredential(cred) {
		t.Fatalf("SignIn = %q %+v %v", cred, c, err)
	}
	if ws, ok := tab.Authenticate(cred); !ok || ws.Origin != OriginUser || ws.Name != "alice" {
		t.Errorf("the WebShell credential authenticates as %+v %v", ws, ok)
	}
	if _, _, err := tab.SignIn(cred); !errors.Is(err, ErrNotAToken) {
		t.Errorf("signing in with a WebShell credential: %v", err)
	}
	if _, _, err := tab.SignIn("bob-token-0123456789ab"); !errors.Is(err, ErrNoWebShell) {
		t.Errorf("an API-only principal signing in: %v", err)
	}

	// A reload that rotates alice's token revokes both her credentials; a
	// caller built in-process stays valid.
	rotated := *cfg
	rotated.Principals = []config.Principal{{Name: "alice", Token: "alice-token-rotated-000", Groups: []string{"ops"}}}
	next := NewTable(&rotated, key, "")
	if next.StillValid(c) || !tab.StillValid(c) {
		t.Errorf("StillValid of alice's WebShell caller: %v before the rotation, %v after", tab.StillValid(c), next.StillValid(c))
	}
	if !next.StillValid(Caller{Principal: Principal{Name: "carol"}}) {
		t.Error("an in-process caller was revoked")
	}
	if got := tab.RateLimitOf("alice"); got.CallsPerSecond != 5 {
		t.Errorf("RateLimitOf(alice) = %+v", got)
	}
	if got := tab.RateLimitOf("nobody"); !got.Off() {
		t.Errorf("RateLimitOf(nobody) = %+v", got)
	}
	if owner := NewTable(&config.Config{}, key, "owner-token-0123456789"); owner.Len() != 1 {
		t.Errorf("without principals the owner has %d credentials", owner.Len())
	}
}
