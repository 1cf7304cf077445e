package cluster

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The headers of a hop between replicas. A client's are refused (403), and
// a verified hop's are removed before the handler behind the front sees
// the request.
const (
	// HeaderHop names the replica that sent the request.
	HeaderHop = "Mcphost-Hop"
	// HeaderHopAuth proves it, for this one request: see [hopAuth].
	HeaderHopAuth = "Mcphost-Hop-Auth"
	// HeaderHopPrincipal names the principal a replica makes the request
	// for (a singleton relay's call); covered by HeaderHopAuth.
	HeaderHopPrincipal = "Mcphost-Hop-Principal"
	// headerSession is the legacy Streamable HTTP session header.
	headerSession = "Mcp-Session-Id"
)

// HopWindow is how long a hop's proof is valid: a proof signed more than
// HopWindow before (or after, a clock ahead) the receiver's clock is
// refused, and the receiver remembers the nonce of every proof it accepted
// for that long, so a proof opens one request, once.
const HopWindow = 30 * time.Second

// maxHopPrincipal bounds HeaderHopPrincipal.
const maxHopPrincipal = 256

// hopVersion starts every HeaderHopAuth value. Version 1 was a constant
// HMAC of the sender's id (a bearer secret, replayable for ever); a
// replica refuses it.
const hopVersion = "v2"

// hopAuth is the value of HeaderHopAuth, for one request:
//
//	v2.TO.MILLIS.NONCE.BODY.MAC
//
// TO is the replica the request is for, MILLIS the sender's clock in Unix
// milliseconds when it signed (decimal, no leading zero), NONCE 16 random
// bytes, BODY the SHA-256 of the request body, MAC the HMAC-SHA256 (under
// the hop key) of the sender, TO, the method, the request URI, MILLIS,
// NONCE, the principal and BODY; the three binary fields are unpadded
// base64url. The body's hash is in the header so that a forged proof is
// refused before a byte of the body is read.
type hopAuth struct {
	to    string
	at    int64 // Unix milliseconds
	nonce [16]byte
	body  [sha256.Size]byte
	mac   [sha256.Size]byte
}

var b64 = base64.RawURLEncoding.Strict()

func (a hopAuth) String() string {
	return strings.Join([]string{hopVersion, a.to, strconv.FormatInt(a.at, 10),
		b64.EncodeToString(a.nonce[:]), b64.EncodeToString(a.body[:]), b64.EncodeToString(a.mac[:])}, ".")
}

var errHopFormat = errors.New("cluster: malformed " + HeaderHopAuth)

// parseHopAuth parses a HeaderHopAuth value: exactly the form String
// writes, nothing else (a parsed value prints as the input).
func parseHopAuth(s string) (hopAuth, error) {
	var a hopAuth
	parts := strings.Split(s, ".")
	if len(parts) != 6 || parts[0] != hopVersion || !ValidID(parts[1]) {
		return a, errHopFormat
	}
	a.to = parts[1]
	var ok bool
	if a.at, ok = parseMillis(parts[2]); !ok {
		return a, errHopFormat
	}
	if !decodeFixed(a.nonce[:], parts[3]) || !decodeFixed(a.body[:], parts[4]) || !decodeFixed(a.mac[:], parts[5]) {
		return a, errHopFormat
	}
	return a, nil
}

// parseMillis parses the time of a proof: decimal Unix milliseconds, at
// most 15 digits (always an int64), no sign and no leading zero, so that
// one time has one spelling.
func parseMillis(ms string) (int64, bool) {
	if ms == "" || len(ms) > 15 || (ms[0] == '0' && ms != "0") {
		return 0, false
	}
	for i := 0; i < len(ms); i++ {
		if ms[i] < '0' || ms[i] > '9' {
			return 0, false
		}
	}
	at, _ := strconv.ParseInt(ms, 10, 64) // 15 digits always fit
	return at, true
}

// decodeFixed decodes s, unpadded base64url of exactly len(dst) bytes in
// its one canonical spelling, into dst.
func decodeFixed(dst []byte, s string) bool {
	if b64.EncodedLen(len(dst)) != len(s) {
		return false
	}
	n, err := b64.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}

// hopMAC is the MAC of a hop. Every field but the last three is free of
// NUL (replica ids, an HTTP method and request URI, a header value,
// decimal digits), so the NUL-separated input is unambiguous.
func hopMAC(key []byte, from, principal, method, uri string, a *hopAuth) [sha256.Size]byte {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{"mcphost hop " + hopVersion, from, a.to, method, uri, strconv.FormatInt(a.at, 10)} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	m.Write(a.nonce[:])
	m.Write([]byte{0})
	m.Write([]byte(principal))
	m.Write([]byte{0})
	m.Write(a.body[:])
	var out [sha256.Size]byte
	m.Sum(out[:0])
	return out
}

// signHop sets on h the hop headers of a request to replica to with
// method, uri (the request target, URL.RequestURI) and body, made for
// principal ("": for nobody in particular). A node without a secret sets
// nothing.
func (n *Node) signHop(h http.Header, to, method, uri, principal string, body []byte) {
	if n.hopKey == nil {
		return
	}
	a := hopAuth{to: to, at: n.opts.Now().UnixMilli(), body: sha256.Sum256(body)}
	_, _ = rand.Read(a.nonce[:])
	a.mac = hopMAC(n.hopKey, n.opts.ID, principal, method, uri, &a)
	h.Set(HeaderHop, n.opts.ID)
	h.Set(HeaderHopAuth, a.String())
	if principal != "" {
		h.Set(HeaderHopPrincipal, principal)
	} else {
		h.Del(HeaderHopPrincipal)
	}
}

// SignHop signs r, a request this replica makes to replica target (the
// singleton relay of the servers target runs), for principal ("" when it is
// made for nobody: a session's own traffic). The proof covers r's method,
// request URI and body, target and principal, and opens one request within
// [HopWindow]; sign every request anew, retries included. The body is
// read (r.GetBody when set) and put back. A node without a secret signs
// nothing. It fails only when the body cannot be read.
func (n *Node) SignHop(r *http.Request, target, principal string) error {
	if n.hopKey == nil {
		return nil
	}
	var body []byte
	switch {
	case r.Body == nil || r.Body == http.NoBody:
	case r.GetBody != nil:
		rc, err := r.GetBody()
		if err != nil {
			return errors.Join(errors.New("cluster: signing a hop: reading the body"), err)
		}
		body, err = io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return errors.Join(errors.New("cluster: signing a hop: reading the body"), err)
		}
	default:
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return errors.Join(errors.New("cluster: signing a hop: reading the body"), err)
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	n.signHop(r.Header, target, r.Method, r.URL.RequestURI(), principal, body)
	return nil
}

// Hop is what a verified hop says about its request.
type Hop struct {
	// From is the replica that sent it.
	From string
	// Principal is the principal it was made for ("": nobody's).
	Principal string
}

type hopKey struct{}

// HopOf returns what the hop headers of r proved, when r came through a
// node's front ([Node.Handler], [Node.HopOnly]) as a verified hop: a
// request another replica made (a forwarded one, or a singleton relay's).
// A client's request has none.
func HopOf(r *http.Request) (Hop, bool) {
	h, ok := r.Context().Value(hopKey{}).(Hop)
	return h, ok
}

// FromReplica returns the replica that sent r ([HopOf]).
func FromReplica(r *http.Request) (id string, ok bool) {
	h, ok := HopOf(r)
	return h.From, ok
}

// hopVerdict is why a hop was refused.
type hopVerdict int

const (
	hopOK        hopVerdict = iota
	hopForged               // malformed, or the MAC does not verify: 403
	hopElsewhere            // a valid proof for another replica: 404
	hopStale                // outside HopWindow: 403
	hopReplayed             // its nonce was seen: 403
	hopBody                 // the body is not the one signed: 403
	hopTooLarge             // the body is over maxForwardBody: 413
)

// admitHop checks the hop headers of r. A request without any is no hop
// (ok, hop false, r unchanged). A hop whose proof verifies (for this
// replica, in the window, its nonce unseen, its body the one signed) comes
// back with the headers removed, its body read (bounded by maxForwardBody)
// and put back, and [Hop] in its context. Anything else is answered here
// (ok false).
func (n *Node) admitHop(w http.ResponseWriter, r *http.Request) (_ *http.Request, hop, ok bool) {
	from, auth, principal := r.Header.Get(HeaderHop), r.Header.Get(HeaderHopAuth), r.Header.Get(HeaderHopPrincipal)
	if from == "" && auth == "" && principal == "" {
		return r, false, true
	}
	v, body := n.verifyHop(w, r, from, auth, principal)
	switch v {
	case hopOK:
	case hopElsewhere:
		// Another replica's directory sent it here (this replica took
		// over an address a gone one had): the session is not here.
		n.log.Warn("cluster: refused a hop meant for another replica (the sender's directory has an old address)", "from", from)
		sessionGone(w, "this is not the replica the request was for")
		return r, true, false
	case hopTooLarge:
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over the limit a replica forwards")
		return r, true, false
	default:
		msg := map[hopVerdict]string{
			hopForged:   "refused a request with a hop header that does not verify (a client's, or a replica with another secret)",
			hopStale:    "refused a hop outside its validity window (a replayed one, or replicas whose clocks disagree by more than the window)",
			hopReplayed: "refused a hop whose proof was used before (a replay)",
			hopBody:     "refused a hop whose body is not the one its proof signed",
		}[v]
		n.log.Warn("cluster: "+msg, "remote", r.RemoteAddr, "window", HopWindow.String())
		writeError(w, http.StatusForbidden, "forged_hop", "the "+HeaderHop+" headers are for mcphost replicas only, and each proof opens one request")
		return r, true, false
	}
	r.Header.Del(HeaderHop)
	r.Header.Del(HeaderHopAuth)
	r.Header.Del(HeaderHopPrincipal)
	if body != nil {
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	return r.WithContext(context.WithValue(r.Context(), hopKey{}, Hop{From: from, Principal: principal})), true, true
}

// verifyHop is admitHop's check, cheapest first: nothing of the body is
// read before the proof's MAC verified.
func (n *Node) verifyHop(w http.ResponseWriter, r *http.Request, from, auth, principal string) (hopVerdict, []byte) {
	if n.hopKey == nil || !ValidID(from) || len(principal) > maxHopPrincipal {
		return hopForged, nil
	}
	a, err := parseHopAuth(auth)
	if err != nil {
		return hopForged, nil
	}
	want := hopMAC(n.hopKey, from, principal, r.Method, r.URL.RequestURI(), &a)
	if !hmac.Equal(want[:], a.mac[:]) {
		return hopForged, nil
	}
	if a.to != n.opts.ID {
		return hopElsewhere, nil
	}
	now := n.opts.Now()
	at := time.UnixMilli(a.at)
	if d := now.Sub(at); d > HopWindow || d < -HopWindow {
		return hopStale, nil
	}
	if !n.nonces.add(from, a.nonce, at.Add(HopWindow), now) {
		return hopReplayed, nil
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxForwardBody))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return hopTooLarge, nil
			}
			return hopBody, nil
		}
		body = b
	}
	if sha256.Sum256(body) != a.body {
		return hopBody, nil
	}
	return hopOK, body
}

// nonces are the nonces of the hops a node accepted (or the notices
// [Notices] opened), each until its proof expires: a replayed proof finds
// its nonce. Only proofs whose MAC verified are remembered, so the set
// grows with the replicas' own traffic (a few dozen bytes a hop for
// HopWindow), never an attacker's.
type nonces struct {
	mu     sync.Mutex
	m      map[nonceKey]time.Time // → when the proof expires
	pruned time.Time
}

type nonceKey struct {
	from  string
	nonce [16]byte
}

// add remembers from's nonce until expires and reports whether it was new.
// Expired nonces are dropped every quarter window.
func (ns *nonces) add(from string, nonce [16]byte, expires, now time.Time) bool {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.m == nil {
		ns.m = map[nonceKey]time.Time{}
	}
	if now.Sub(ns.pruned) >= HopWindow/4 {
		for k, exp := range ns.m {
			if !now.Before(exp) {
				delete(ns.m, k)
			}
		}
		ns.pruned = now
	}
	k := nonceKey{from, nonce}
	if _, seen := ns.m[k]; seen {
		return false
	}
	ns.m[k] = expires
	return true
}

// HopOnly returns next behind a front that lets through only verified
// hops ([HopOf] tells next who sent each and for whom) and answers
// everything else 403: the singleton relay, which only replicas call, each
// request with a proof of its own. It never forwards. A node without a
// secret refuses every request.
func (n *Node) HopOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, hop, ok := n.admitHop(w, r)
		if !ok {
			return
		}
		if !hop {
			writeError(w, http.StatusForbidden, "not_a_replica", "this path is for mcphost replicas only")
			return
		}
		next.ServeHTTP(w, r)
	})
}
