package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Environment variables the daemon reads (cmd/mcphost passes their values).
const (
	EnvReplicaID = "MCPHOST_REPLICA_ID"
	EnvAdvertise = "MCPHOST_ADVERTISE_URL"
	EnvSecret    = "MCPHOST_CLUSTER_SECRET"
)

// MaxIDLength is the longest replica id: one DNS label.
const MaxIDLength = 63

// minSecretLength is the shortest MCPHOST_CLUSTER_SECRET accepted.
const minSecretLength = 32

// ValidID reports whether id is a replica id: 1 to 63 of a-z, 0-9 and '-'
// (a DNS label's characters, so a pod name fits as it is).
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ResolveID returns the replica id: flag (the -replica-id of serve) when
// set, else env (MCPHOST_REPLICA_ID), else one made from hostname and a
// random suffix. A given id that is not [ValidID] is an error that says
// what is allowed; a generated one is always valid.
func ResolveID(flag, env, hostname string) (string, error) {
	for _, c := range []struct{ v, from string }{{flag, "-replica-id"}, {env, EnvReplicaID}} {
		if c.v == "" {
			continue
		}
		if !ValidID(c.v) {
			return "", fmt.Errorf("cluster: %s %q is not a replica id: use 1 to %d lowercase letters, digits or '-' (a DNS label, e.g. a pod name)", c.from, c.v, MaxIDLength)
		}
		return c.v, nil
	}
	return generatedID(hostname), nil
}

// generatedID is hostname made DNS-label-safe (lowercased, anything else
// turned into '-', cut to fit) plus '-' and 8 random base32 characters.
func generatedID(hostname string) string {
	suffix := strings.ToLower(rand.Text()[:8])
	var b strings.Builder
	for _, r := range strings.ToLower(hostname) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if max := MaxIDLength - len(suffix) - 1; len(name) > max {
		name = strings.TrimRight(name[:max], "-")
	}
	if name == "" {
		name = "mcphost"
	}
	return name + "-" + suffix
}

// CheckAdvertise checks the URL other replicas reach this one at: http or
// https with a host, and nothing after the authority but an optional "/".
// It returns the URL without a trailing slash.
func CheckAdvertise(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("cluster: advertise URL %q: want http://HOST:PORT or https://HOST:PORT, the address other replicas reach this one at", raw)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// ErrNoSecret is returned by [SharedSecret] when neither variable is set.
var ErrNoSecret = errors.New("cluster: no shared secret: set " + EnvSecret + " (32 characters or more, the same on every replica), or set MCPHOST_SECRET_KEY in the environment of every replica")

// SharedSecret returns the secret every replica shares: clusterSecret
// (MCPHOST_CLUSTER_SECRET) when set, else one derived from secretKey (the
// value of MCPHOST_SECRET_KEY in the environment: a key that comes from
// the environment is the same on every replica, unlike data_dir's
// secret.key file). The derivation is one-way, so the hop proofs and the
// gateway's sealing key never reveal the OAuth sealing key. Neither set:
// ErrNoSecret.
func SharedSecret(clusterSecret, secretKey string) ([]byte, error) {
	if s := strings.TrimSpace(clusterSecret); s != "" {
		if len(s) < minSecretLength {
			return nil, fmt.Errorf("cluster: %s is %d characters; use %d or more (e.g. openssl rand -hex 32)", EnvSecret, len(s), minSecretLength)
		}
		return []byte(s), nil
	}
	if s := strings.TrimSpace(secretKey); s != "" {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte("mcphost cluster secret v1"))
		return m.Sum(nil), nil
	}
	return nil, ErrNoSecret
}

// DeriveKey returns a 32-byte key for purpose derived from secret (HMAC-
// SHA256), so that one shared secret gives independent keys: the hop
// proofs, the gateway's requestState sealing key.
func DeriveKey(secret []byte, purpose string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("mcphost cluster key v1\x00" + purpose))
	return m.Sum(nil)
}
