package gateway

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
)

// TestHolderKey: a holder's key is the token's digest with the caller's
// name, admin flag and groups, as it was written with fmt, so that two
// credentials or two callers never share one.
func TestHolderKey(t *testing.T) {
	for _, c := range []host.Caller{
		{},
		{Principal: host.Principal{Name: "alice", Groups: []string{"eng"}}},
		{Principal: host.Principal{Name: "alice", Groups: []string{"eng", "ops"}}, Admin: true},
		{Principal: host.Principal{Name: "a\x00b", Groups: []string{"", "x"}}},
	} {
		for _, token := range []string{"", "tok", "another token"} {
			want := fmt.Sprintf("%x\x00%s\x00%t\x00%s", sha256.Sum256([]byte(token)), c.Name, c.Admin, strings.Join(c.Groups, "\x01"))
			if got := newHolder(token, c).key; got != want {
				t.Errorf("%q %+v: key %q, want %q", token, c, got, want)
			}
		}
	}
}
