package cluster

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// FuzzParseHopAuth: a Mcphost-Hop-Auth value from anyone (it is read
// before anything is trusted) never panics the parser, and a value it
// accepts is exactly the one String writes for what it parsed, so no two
// spellings name one proof.
func FuzzParseHopAuth(f *testing.F) {
	a := hopAuth{to: "replica-b", at: 1767225600000}
	copy(a.nonce[:], "0123456789abcdef")
	a.body = sha256.Sum256([]byte("{}"))
	a.mac = sha256.Sum256([]byte("mac"))
	good := a.String()
	for _, s := range []string{
		good,
		strings.Replace(good, "v2.", "v1.", 1),
		strings.Replace(good, ".1767225600000.", ".01767225600000.", 1),
		strings.Replace(good, ".1767225600000.", ".0.", 1),
		good + "=",
		good + ".x",
		strings.Repeat("ab", 32), // a version-1 proof
		"", ".....", "v2.....", "v2.B.1.AAAAAAAAAAAAAAAAAAAAAA.x.y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := parseHopAuth(s)
		if err != nil {
			return
		}
		if got := a.String(); got != s {
			t.Fatalf("parseHopAuth(%q) prints as %q", s, got)
		}
		if !ValidID(a.to) || a.at < 0 {
			t.Fatalf("parseHopAuth(%q) accepted target %q at %d", s, a.to, a.at)
		}
	})
}
