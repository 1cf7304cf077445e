package cluster

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var noticeSecret = []byte("notice-secret-for-the-tests-0123456789")

// TestNotices: a notice sealed by one replica opens once at each of the
// others, with its payload as it was; anything another program writes on
// the channel, an altered notice, one sealed with another secret and a
// replay are refused, each with its reason.
func TestNotices(t *testing.T) {
	a, b, c := NewNotices(noticeSecret, nil), NewNotices(noticeSecret, nil), NewNotices(noticeSecret, nil)
	const payload = `{"kind":"call_started","id":"c_1","principal":"alice","origin":"a","data":{"tool":"read.me"}}`
	n := a.Seal([]byte(payload))
	if len(n) != noticeOverhead+len(payload) {
		t.Errorf("a sealed notice has %d bytes, want %d", len(n), noticeOverhead+len(payload))
	}
	for name, r := range map[string]*Notices{"b": b, "c": c} {
		got, err := r.Open(n)
		if err != nil || string(got) != payload {
			t.Fatalf("%s opens %q: %q, %v; want the payload", name, n, got, err)
		}
		if _, err := r.Open(n); !errors.Is(err, errNoticeReplayed) {
			t.Errorf("%s opens the same notice again: %v, want a replay", name, err)
		}
	}
	if n2 := a.Seal([]byte(payload)); n2 == n {
		t.Error("two notices of one payload are equal: no nonce")
	} else if _, err := b.Open(n2); err != nil {
		t.Errorf("a second notice of the same payload: %v", err)
	}

	fresh := a.Seal([]byte(payload))
	head, _, _ := strings.Cut(fresh, ".{")
	other := NewNotices([]byte("another-secret-for-the-tests-0123456789"), nil).Seal([]byte(payload))
	for _, tc := range []struct{ name, notice string }{
		{"plain pg_notify", payload},
		{"a reload from another program", `{"kind":"reload","origin":"zz"}`},
		{"another payload under the seal", head + `.{"kind":"reload","origin":"a"}`},
		{"one byte more", fresh + " "},
		{"another time", strings.Replace(fresh, ".1", ".2", 1)},
		{"another secret", other},
		{"the first version's prefix", "v1" + strings.TrimPrefix(fresh, noticeVersion)},
		{"empty", ""},
	} {
		if _, err := b.Open(tc.notice); !errors.Is(err, errNoticeForged) {
			t.Errorf("%s: %v, want it refused as forged", tc.name, err)
		}
	}
	if got, err := b.Open(fresh); err != nil || string(got) != payload {
		t.Errorf("the notice the forgeries were made of, after them: %q, %v", got, err)
	}
}

// TestNoticeWindow: a notice opens within HopWindow of the receiver's
// clock, late or early, and not beyond.
func TestNoticeWindow(t *testing.T) {
	var skew atomic.Int64
	recv := NewNotices(noticeSecret, func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	send := NewNotices(noticeSecret, nil)
	for _, tc := range []struct {
		name string
		skew time.Duration
		want error
	}{
		{"in time", 0, nil},
		{"nearly late", HopWindow - 2*time.Second, nil},
		{"nearly early", -HopWindow + 2*time.Second, nil},
		{"late", HopWindow + time.Second, errNoticeStale},
		{"from the future", -HopWindow - time.Second, errNoticeStale},
	} {
		skew.Store(int64(tc.skew))
		if _, err := recv.Open(send.Seal([]byte(`{}`))); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
