package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Notices are what replicas broadcast to one another through their shared
// PostgreSQL store (the store's pokes: NOTIFY on one channel). Any role
// that may connect to the database may NOTIFY and LISTEN on that channel,
// so a notice proves its sender as a hop does ([hopAuth]): an HMAC under a
// key derived from the shared secret, over a time and a nonce, accepted
// within [HopWindow] of the receiver's clock and once.
//
//	n1.MILLIS.NONCE.MAC.PAYLOAD
//
// MILLIS is the sender's clock in Unix milliseconds when it sealed
// (decimal, no leading zero), NONCE 16 random bytes, MAC the HMAC-SHA256
// (under the notice key) of MILLIS, NONCE and PAYLOAD; the binary fields
// are unpadded base64url. PAYLOAD, everything after the fourth '.', is the
// sender's text as it is (the store's JSON), readable by anyone who may
// LISTEN: the seal proves, it does not hide.
const noticeVersion = "n1"

// noticeOverhead is how many bytes [Notices.Seal] adds to a payload
// (MILLIS has 13 digits from 2001 to 2286).
const noticeOverhead = len(noticeVersion) + 1 + 13 + 1 + 22 + 1 + 43 + 1

// noticeAuth is the header of a sealed notice.
type noticeAuth struct {
	at    int64 // Unix milliseconds
	nonce [16]byte
	mac   [sha256.Size]byte
}

// seal returns the notice of a and payload.
func (a noticeAuth) seal(payload []byte) string {
	var b strings.Builder
	b.Grow(noticeOverhead + len(payload))
	for _, f := range []string{noticeVersion, strconv.FormatInt(a.at, 10), b64.EncodeToString(a.nonce[:]), b64.EncodeToString(a.mac[:])} {
		b.WriteString(f)
		b.WriteByte('.')
	}
	b.Write(payload)
	return b.String()
}

var (
	errNoticeForged   = errors.New("cluster: a notice that is not sealed with the cluster secret (another program's, or a replica with another secret or of an earlier version)")
	errNoticeStale    = errors.New("cluster: a notice sealed outside the validity window (a replayed one, or replicas whose clocks disagree by more than the window)")
	errNoticeReplayed = errors.New("cluster: a notice heard before (a replay)")
)

// parseNotice splits a notice into its header and payload: exactly the
// form seal writes, nothing else (a parsed header seals its payload into
// the input again).
func parseNotice(s string) (noticeAuth, string, error) {
	var a noticeAuth
	parts := strings.SplitN(s, ".", 5)
	if len(parts) != 5 || parts[0] != noticeVersion {
		return a, "", errNoticeForged
	}
	var ok bool
	if a.at, ok = parseMillis(parts[1]); !ok {
		return a, "", errNoticeForged
	}
	if !decodeFixed(a.nonce[:], parts[2]) || !decodeFixed(a.mac[:], parts[3]) {
		return a, "", errNoticeForged
	}
	return a, parts[4], nil
}

// noticeMAC is the MAC of a notice. MILLIS is decimal digits, the nonce
// has a fixed length, and the payload comes last, so the input is
// unambiguous.
func noticeMAC(key []byte, a *noticeAuth, payload string) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mcphost notice " + noticeVersion + "\x00" + strconv.FormatInt(a.at, 10) + "\x00"))
	m.Write(a.nonce[:])
	m.Write([]byte(payload))
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

// Notices seals the notices this replica broadcasts and opens the ones it
// hears. Its methods are safe for concurrent use.
type Notices struct {
	key    []byte
	now    func() time.Time
	nonces nonces // of the notices opened within HopWindow
}

// NewNotices returns the sealer and opener of the notices of the replicas
// that share secret ([SharedSecret]); now is its clock (nil: time.Now).
func NewNotices(secret []byte, now func() time.Time) *Notices {
	if now == nil {
		now = time.Now
	}
	return &Notices{key: DeriveKey(secret, "notice"), now: now}
}

// Seal returns payload sealed for the other replicas (about 90 bytes
// longer), which each of them opens once within [HopWindow].
func (n *Notices) Seal(payload []byte) string {
	a := noticeAuth{at: n.now().UnixMilli()}
	_, _ = rand.Read(a.nonce[:])
	a.mac = noticeMAC(n.key, &a, string(payload))
	return a.seal(payload)
}

// Open returns the payload of notice, sealed by a replica with the same
// secret. It refuses, with an error that says why, a notice that is
// malformed or whose MAC does not verify, one sealed more than HopWindow
// from n's clock, and one it has opened before.
func (n *Notices) Open(notice string) ([]byte, error) {
	a, payload, err := parseNotice(notice)
	if err != nil {
		return nil, err
	}
	want := noticeMAC(n.key, &a, payload)
	if !hmac.Equal(want[:], a.mac[:]) {
		return nil, errNoticeForged
	}
	now := n.now()
	at := time.UnixMilli(a.at)
	if d := now.Sub(at); d > HopWindow || d < -HopWindow {
		return nil, errNoticeStale
	}
	if !n.nonces.add("", a.nonce, at.Add(HopWindow), now) {
		return nil, errNoticeReplayed
	}
	return []byte(payload), nil
}
