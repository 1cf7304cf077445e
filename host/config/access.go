package config

import (
	"fmt"
	"math"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Bounds of the rate_limit attributes.
const (
	MaxCallsPerSecond  = 100000
	MaxBurst           = 1000000
	MaxConcurrentCalls = 100000
)

// decodeRateLimits decodes the `rate_limit` blocks of one scope (the top
// level or a principal): at most one. ok is false when there is none (or
// it is broken), so the caller falls back to the next scope.
func (l *loader) decodeRateLimits(blocks []*rateLimitBlock, where string) (r RateLimit, ok bool) {
	if len(blocks) == 0 {
		return RateLimit{}, false
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate rate_limit block",
			Detail:   fmt.Sprintf("%s already has a rate_limit block at %s. Merge the two into one.", where, fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	b := blocks[0]
	good := true
	if v, st := l.eval(b.CallsPerSecond, "calls_per_second", cty.Number); st == valid {
		f, _ := v.AsBigFloat().Float64()
		if f < 0 || f > MaxCallsPerSecond || math.IsNaN(f) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid calls_per_second",
				Detail:   fmt.Sprintf("calls_per_second must be from 0 (no rate bound) to %d, such as 5 or 0.5.", MaxCallsPerSecond),
				Subject:  b.CallsPerSecondRange.Ptr(),
			})
			good = false
		} else {
			r.CallsPerSecond = f
		}
	} else if st == invalid {
		good = false
	}
	burst, burstSet := l.boundedInt(b.Burst, "burst", b.BurstRange, 1, MaxBurst, &good,
		"Invalid burst", fmt.Sprintf("burst is how many calls may come at once above the rate: a whole number from 1 to %d.", MaxBurst))
	r.Burst = burst
	r.ConcurrentCalls, _ = l.boundedInt(b.ConcurrentCalls, "concurrent_calls", b.ConcurrentCallsRange, 0, MaxConcurrentCalls, &good,
		"Invalid concurrent_calls", fmt.Sprintf("concurrent_calls must be a whole number from 0 (no bound) to %d.", MaxConcurrentCalls))
	if burstSet && r.CallsPerSecond == 0 {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "burst without a rate",
			Detail:   "burst bounds calls above calls_per_second, which is 0 (no rate bound) here, so burst has no effect. Set calls_per_second, or remove burst.",
			Subject:  b.BurstRange.Ptr(),
		})
	}
	if !burstSet && r.CallsPerSecond > 0 {
		r.Burst = max(1, int(math.Ceil(2*r.CallsPerSecond)))
	}
	return r, good
}

// boundedInt evaluates a whole-number attribute that must lie in
// [lo, hi]. It reports summary and detail at rng otherwise, and clears
// *good when the attribute is present but unusable. set is whether a usable
// value was written.
func (l *loader) boundedInt(expr hcl.Expression, name string, rng hcl.Range, lo, hi int, good *bool, summary, detail string) (n int, set bool) {
	n, st := l.evalInt(expr, name, rng)
	switch {
	case st == invalid:
		*good = false
		return 0, false
	case st == absent:
		return 0, false
	case n < lo || n > hi:
		l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
		*good = false
		return 0, false
	}
	return n, true
}

// decodeAdmins checks `admins`: each name must be a principal or a group
// of one (a warning otherwise: a typo would silently make nobody an admin).
func (l *loader) decodeAdmins(cfg *Config, f *fileSchema) {
	names, st := l.evalStringList(f.Admins, "admins")
	if st != valid {
		return
	}
	known := func(n string) bool {
		for _, p := range cfg.Principals {
			if p.Name == n || slices.Contains(p.Groups, n) {
				return true
			}
		}
		return false
	}
	for _, n := range names {
		if !known(n) {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Unknown admin",
				Detail:   fmt.Sprintf("admins names %q, which is neither a principal nor a group of one, so it makes nobody an admin. Check the spelling, or add the principal.", n),
				Subject:  f.AdminsRange.Ptr(),
			})
		}
	}
	cfg.Admins = names
}
