package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Bounds of a server's `search_hint`.
const (
	MaxSearchHints   = 64  // keywords per server
	MaxSearchHintLen = 200 // characters per keyword
)

// decodeSearchHint reads a server's `search_hint`: keywords the gateway's
// tool search indexes with the server's tools, never shown.
func (l *loader) decodeSearchHint(b *serverBlock) []string {
	hints, st := l.evalStringList(b.SearchHint, "search_hint")
	if st != valid {
		return nil
	}
	if len(hints) > MaxSearchHints {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Too many search hints",
			Detail:   fmt.Sprintf("search_hint has %d keywords; give at most %d, the words an agent would use for what the server does.", len(hints), MaxSearchHints),
			Subject:  b.SearchHintRange.Ptr(),
		})
		return nil
	}
	out := make([]string, 0, len(hints))
	for _, h := range hints {
		h = strings.TrimSpace(h)
		if h == "" || len(h) > MaxSearchHintLen {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid search hint",
				Detail:   fmt.Sprintf("Each search_hint keyword must be a non-empty string of at most %d characters; %s is not.", MaxSearchHintLen, clipQuote(h)),
				Subject:  b.SearchHintRange.Ptr(),
			})
			return nil
		}
		out = append(out, h)
	}
	return out
}

// evalSize reads a size attribute (evalBytes) from 1 to most bytes.
// example is a size to suggest.
func (l *loader) evalSize(expr hcl.Expression, name string, rng hcl.Range, most int64, example string) (int, valState) {
	n, text, st := l.evalBytes(expr, name, rng, example)
	if st != valid {
		return 0, st
	}
	if n < 1 || n > most {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Size out of range",
			Detail:   fmt.Sprintf("The %s %s must be from 1 byte to %d bytes; for example %s.", name, shown(expr, text), most, example),
			Subject:  rng.Ptr(),
		})
		return 0, invalid
	}
	return int(n), valid
}

// evalBytes reads a size as written: a whole number of bytes or a size
// string such as example ("48KiB"), with the text to show of it in a
// diagnostic. Another type, a fraction or a bad size string is an error at
// rng; the range is the caller's to check.
func (l *loader) evalBytes(expr hcl.Expression, name string, rng hcl.Range, example string) (n int64, text string, st valState) {
	v, st := l.eval(expr, name, cty.DynamicPseudoType)
	if st != valid {
		return 0, "", st
	}
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if !bf.IsInt() {
			l.add(notWholeNumber(name, `, or a size such as `+example, rng))
			return 0, "", invalid
		}
		i, acc := bf.Int64()
		if acc != 0 {
			i = math.MaxInt64 // far too large either way
			if bf.Sign() < 0 {
				i = math.MinInt64
			}
		}
		return i, bf.Text('f', 0), valid
	case cty.String:
		u, err := parseBytes(v.AsString())
		if err != nil {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid size",
				Detail: fmt.Sprintf("The %s %s is not a size%s. Write a number of bytes or a number with a unit, such as %s.",
					name, quoted(expr, v.AsString()), because(expr, err), example),
				Subject: rng.Ptr(),
			})
			return 0, "", invalid
		}
		return int64(min(u, math.MaxInt64)), strconv.Quote(v.AsString()), valid
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Incorrect attribute value type",
		Detail:   fmt.Sprintf("Inappropriate value for attribute %q: a number of bytes or a size string such as %s is required.", name, example),
		Subject:  rng.Ptr(),
	})
	return 0, "", invalid
}
