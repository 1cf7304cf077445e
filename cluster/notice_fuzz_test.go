package cluster

import (
	"strings"
	"testing"
)

// FuzzParseNotice: a notification on the pokes' channel, from anyone who
// may connect to the database (it is parsed before anything is trusted),
// never panics the parser; a notice it accepts seals into exactly the
// input again, so no two spellings name one notice; and Open refuses
// whatever was not sealed with the secret.
func FuzzParseNotice(f *testing.F) {
	sealer := NewNotices([]byte("notice-secret-for-the-fuzz-target-0123"), nil)
	a := noticeAuth{at: 1767225600000}
	copy(a.nonce[:], "0123456789abcdef")
	a.mac = noticeMAC([]byte("k"), &a, `{"kind":"reload"}`)
	good := a.seal([]byte(`{"kind":"reload"}`))
	for _, s := range []string{
		good,
		strings.Replace(good, ".1767225600000.", ".01767225600000.", 1),
		strings.Replace(good, ".1767225600000.", ".0.", 1),
		strings.Replace(good, "n1.", "v2.", 1),
		strings.TrimSuffix(good, `{"kind":"reload"}`),
		`{"kind":"call_started","id":"c_fake","principal":"alice","origin":"zz"}`,
		`{"kind":"reload","origin":"zz"}`,
		"", "....", "n1....", "n1.1.AAAAAAAAAAAAAAAAAAAAAA.x.y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := sealer.Open(s); err == nil {
			t.Fatalf("Open(%q) accepted a notice the fuzzer made", s)
		}
		a, payload, err := parseNotice(s)
		if err != nil {
			return
		}
		if got := a.seal([]byte(payload)); got != s {
			t.Fatalf("parseNotice(%q) seals into %q", s, got)
		}
		if a.at < 0 {
			t.Fatalf("parseNotice(%q) accepted time %d", s, a.at)
		}
	})
}
