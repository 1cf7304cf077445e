package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyEnv is the environment variable that may hold the sealing key: 32
// bytes, base64 (standard or URL alphabet, padded or not).
const KeyEnv = "MCPHOST_SECRET_KEY"

// KeyFile is the name of the key file in data_dir, used when KeyEnv is not
// set; it is created (0600) on first use.
const KeyFile = "secret.key"

// sealVersion is the first byte of every sealed value: the format (nonce,
// then AES-256-GCM ciphertext and tag).
const sealVersion = 1

// ErrUnsealed is wrapped by every failure to open a sealed value: a
// tampered or swapped row, or a different key.
var ErrUnsealed = errors.New("sealed value does not open (tampered, moved to another row, or sealed with a different key)")

// Sealer seals secrets at rest with AES-256-GCM. The additional data of
// each value binds it to where it belongs (see [aad]), so a sealed value
// copied into another row does not open.
//
// What it protects: a copied database file or backup without the key. What
// it does not: anyone who can read the key (the key file sits next to the
// database unless MCPHOST_SECRET_KEY comes from elsewhere), or the running
// daemon's memory.
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns a sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("oauth: secret key is %d bytes, want 32 (AES-256)", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("oauth: secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("oauth: secret key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// LoadKey returns the sealing key: from $MCPHOST_SECRET_KEY when set (env
// is os.Getenv in the daemon), otherwise from dataDir/secret.key, created
// with 32 random bytes and mode 0600 when missing. A key file that its
// group or others may read is refused.
func LoadKey(dataDir string, env func(string) string) ([]byte, error) {
	if v := strings.TrimSpace(env(KeyEnv)); v != "" {
		key, err := decodeKey(v)
		if err != nil {
			return nil, fmt.Errorf("oauth: %s: %w", KeyEnv, err)
		}
		return key, nil
	}
	if dataDir == "" {
		return nil, fmt.Errorf("oauth: no secret key: set %s or a data_dir for %s", KeyEnv, KeyFile)
	}
	path := filepath.Join(dataDir, KeyFile)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("oauth: creating %s: %w", path, err)
		}
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("oauth: creating %s: %w", path, err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("oauth: creating %s: %w", path, err)
		}
		_, werr := f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = syncDir(dataDir)
		}
		if werr != nil {
			return nil, fmt.Errorf("oauth: writing %s: %w", path, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: secret key file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("oauth: secret key file %s has mode %04o: its group or others may read it; run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oauth: secret key file: %w", err)
	}
	key, err := decodeKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("oauth: secret key file %s: %w", path, err)
	}
	return key, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func decodeKey(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil {
			if len(key) != 32 {
				return nil, fmt.Errorf("the key is %d bytes, want 32 (base64 of 32 random bytes, e.g. `openssl rand -base64 32`)", len(key))
			}
			return key, nil
		}
	}
	return nil, errors.New("not base64 (want 32 random bytes in base64, e.g. `openssl rand -base64 32`)")
}

// aad is the additional data that binds a sealed value to its row.
func aad(table, server, principal, issuer string) []byte {
	return []byte("mcphost/oauth/v1|" + table + "|" + server + "|" + principal + "|" + issuer)
}

// Seal seals plaintext for the row (table, server, principal, issuer). An
// empty plaintext seals to nil (nothing stored).
func (s *Sealer) Seal(plaintext, table, server, principal, issuer string) ([]byte, error) {
	if plaintext == "" {
		return nil, nil
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("oauth: seal: %w", err)
	}
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, []byte(plaintext), aad(table, server, principal, issuer)), nil
}

// Open opens a value sealed for the row (table, server, principal,
// issuer); nil opens to "". Any other failure wraps ErrUnsealed.
func (s *Sealer) Open(sealed []byte, table, server, principal, issuer string) (string, error) {
	if len(sealed) == 0 {
		return "", nil
	}
	n := s.aead.NonceSize()
	if sealed[0] != sealVersion || len(sealed) < 1+n+s.aead.Overhead() {
		return "", fmt.Errorf("oauth: %s row of server %q: %w", table, server, ErrUnsealed)
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad(table, server, principal, issuer))
	if err != nil {
		return "", fmt.Errorf("oauth: %s row of server %q: %w", table, server, ErrUnsealed)
	}
	return string(plain), nil
}
