package negotiate

import (
	"context"
	"time"
)

// storeKey is the key a verdict for cacheKey is stored under: the
// configuration key plus the preferred modern version (§3.8), so that a
// mcphost speaking a newer version re-probes.
func storeKey(cacheKey string) string { return cacheKey + "|" + ModernVersion }

// Fresh reports whether a cached verdict may skip the probe at now: legacy
// verdicts expire LegacyVerdictTTL after ObservedAt, modern ones never by
// the clock. Provisional or malformed verdicts are never fresh.
func Fresh(v Verdict, now time.Time) bool {
	if v.Provisional {
		return false
	}
	switch v.Era {
	case EraModern:
		return true
	case EraLegacy:
		return !v.ObservedAt.IsZero() && now.Sub(v.ObservedAt) < LegacyVerdictTTL
	}
	return false
}

func (n *negotiator) caching() bool { return n.spec.Cache != nil && n.spec.CacheKey != "" }

// cached returns the fresh cached verdict, relabelled for this connect.
func (n *negotiator) cached(ctx context.Context) (Verdict, bool) {
	if !n.caching() {
		return Verdict{}, false
	}
	key := storeKey(n.spec.CacheKey)
	v, ok, err := n.spec.Cache.Get(ctx, key)
	if err != nil {
		n.log.Warn("negotiation: era cache lookup failed; probing", "err", err)
		return Verdict{}, false
	}
	if !ok {
		return Verdict{}, false
	}
	if !Fresh(v, n.now()) {
		n.log.Info("negotiation: cached verdict is stale; probing", "era", v.Era, "observed_at", v.ObservedAt, "evidence", v.Evidence)
		return Verdict{}, false
	}
	n.log.Info("negotiation: using the cached verdict", "era", v.Era, "observed_at", v.ObservedAt, "evidence", v.Evidence)
	return Verdict{
		Era:        v.Era,
		Evidence:   v.Era + ": cached verdict from " + v.ObservedAt.UTC().Format(time.RFC3339),
		Label:      "cache",
		ObservedAt: v.ObservedAt,
	}, true
}

// put stores a verdict unless it is one that is never stored. It outlives
// the window: the session is already connected.
func (n *negotiator) put(ctx context.Context, v Verdict) {
	if !n.caching() || v.Provisional || (v.Era != EraModern && v.Era != EraLegacy) {
		return
	}
	if err := n.spec.Cache.Put(context.WithoutCancel(ctx), storeKey(n.spec.CacheKey), v); err != nil {
		n.log.Warn("negotiation: storing the verdict failed", "err", err)
	}
}

// deleteCached drops the cached verdict after it proved wrong.
func (n *negotiator) deleteCached(ctx context.Context) {
	if !n.caching() {
		return
	}
	if err := n.spec.Cache.Delete(context.WithoutCancel(ctx), storeKey(n.spec.CacheKey)); err != nil {
		n.log.Warn("negotiation: dropping the cached verdict failed", "err", err)
	}
}
