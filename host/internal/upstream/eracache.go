package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/negotiate"
)

// storeEraCache keeps negotiation verdicts in the daemon's database, so a
// restart skips the probe and its sibling process.
type storeEraCache struct{ st *store.Store }

var _ negotiate.EraCache = storeEraCache{}

func (c storeEraCache) Get(ctx context.Context, key string) (negotiate.Verdict, bool, error) {
	raw, ok, err := c.st.EraVerdict(ctx, key)
	if err != nil || !ok {
		return negotiate.Verdict{}, false, err
	}
	var v negotiate.Verdict
	if err := json.Unmarshal(raw, &v); err != nil {
		// An unreadable verdict is no verdict: probe again.
		return negotiate.Verdict{}, false, nil
	}
	return v, true, nil
}

func (c storeEraCache) Put(ctx context.Context, key string, v negotiate.Verdict) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.st.PutEraVerdict(ctx, key, raw)
}

func (c storeEraCache) Delete(ctx context.Context, key string) error {
	return c.st.DeleteEraVerdict(ctx, key)
}

// eraCacheKey identifies a server configuration for the era cache: what
// decides which program or endpoint answers (transport, command, args, env,
// working directory, or URL and header names). Header values are hashed,
// never stored, and the key itself is a digest.
func eraCacheKey(s *config.Server) string {
	var b strings.Builder
	fmt.Fprintf(&b, "transport=%s\n", s.Transport)
	if s.Transport == config.TransportStdio {
		fmt.Fprintf(&b, "command=%q\nargs=%q\ncwd=%q\n", s.Command, s.Args, s.Cwd)
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "env %q=%q\n", k, s.Env[k])
		}
	} else {
		fmt.Fprintf(&b, "url=%q\n", s.URL)
		keys := make([]string, 0, len(s.Headers))
		for k := range s.Headers {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "header %q=%q\n", strings.ToLower(k), s.Headers[k])
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return s.Name + ":" + hex.EncodeToString(sum[:16])
}
