package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// valState says what evaluating an optional attribute gave.
type valState int

const (
	absent  valState = iota // not written, or null
	invalid                 // written, but a diagnostic was reported
	valid                   // written, and the value can be used
)

// eval evaluates expr and converts it to ty. A missing attribute decodes as
// a null expression, so null means absent. Errors are added to l.diags.
func (l *loader) eval(expr hcl.Expression, name string, ty cty.Type) (cty.Value, valState) {
	if expr == nil {
		return cty.NilVal, absent
	}
	l.returned = l.returned[:0]
	l.unsetNow = l.unsetNow[:0]
	v, diags := expr.Value(l.ctx)
	scrub(diags, expr, l.returned)
	rewriteFunctionDiags(diags)
	if sourcesPhrase(expr) != "" {
		// hcl.NewDiagnosticTextWriter prints the variables of a
		// diagnostic's EvalContext ("with x as ..."), and a for expression
		// over values from env() has them as variables.
		for _, d := range diags {
			d.Expression, d.EvalContext = nil, nil
		}
	}
	l.diags = append(l.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, invalid
	}
	if v.IsNull() {
		return cty.NilVal, absent
	}
	if !v.IsWhollyKnown() {
		// There are no variables: only env() of a variable that is not set
		// (with Options.UnsetEnvUnknown) or a function called after the
		// functions' budget ran out returns an unknown value, and the call
		// that ran it out was reported. Either way the value is not used,
		// as one with an error is not.
		if len(l.unsetNow) > 0 {
			l.noteUnset(expr, name)
		}
		return cty.NilVal, invalid
	}
	v, _ = v.UnmarkDeep()
	cv, err := convert.Convert(v, ty)
	if err != nil {
		// The error names the keys of a map, which may have been read with
		// env() or file() too.
		detail := fmt.Sprintf("Inappropriate value for attribute %q: %s.", name, err)
		if from := sourcesPhrase(expr); from != "" {
			detail = fmt.Sprintf("Inappropriate value for attribute %q: the value read from %s (not shown) cannot be converted to %s.", name, from, ty.FriendlyNameForConstraint())
		}
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   detail,
			Subject:  expr.Range().Ptr(),
		})
		return cty.NilVal, invalid
	}
	return cv, valid
}

func (l *loader) evalString(expr hcl.Expression, name string) (string, valState) {
	v, st := l.eval(expr, name, cty.String)
	if st != valid {
		return "", st
	}
	return v.AsString(), valid
}

func (l *loader) evalBool(expr hcl.Expression, name string) (bool, valState) {
	v, st := l.eval(expr, name, cty.Bool)
	if st != valid {
		return false, st
	}
	return v.True(), valid
}

func (l *loader) evalStringList(expr hcl.Expression, name string) ([]string, valState) {
	v, st := l.eval(expr, name, cty.List(cty.String))
	if st != valid {
		return nil, st
	}
	out := make([]string, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() {
			l.add(nullElement(expr, name))
			return nil, invalid
		}
		out = append(out, e.AsString())
	}
	return out, valid
}

func (l *loader) evalStringMap(expr hcl.Expression, name string) (map[string]string, valState) {
	v, st := l.eval(expr, name, cty.Map(cty.String))
	if st != valid {
		return nil, st
	}
	out := make(map[string]string, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		if e.IsNull() {
			l.add(nullElement(expr, name))
			return nil, invalid
		}
		out[k.AsString()] = e.AsString()
	}
	return out, valid
}

func nullElement(expr hcl.Expression, name string) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid null value",
		Detail:   fmt.Sprintf("The value of %q contains null. Every element must be a string; remove the null.", name),
		Subject:  expr.Range().Ptr(),
	}
}

// evalInt evaluates a whole number attribute.
func (l *loader) evalInt(expr hcl.Expression, name string, rng hcl.Range) (int, valState) {
	v, st := l.eval(expr, name, cty.Number)
	if st != valid {
		return 0, st
	}
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if !bf.IsInt() || acc != 0 || n < -1<<31 || n > 1<<31-1 {
		l.add(notWholeNumber(name, "", rng))
		return 0, invalid
	}
	return int(n), valid
}

// notWholeNumber is the error of the attribute name whose value at rng is
// not a whole number; or is what else it may be (", or …").
func notWholeNumber(name, or string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid number",
		Detail:   fmt.Sprintf("The %s must be a whole number%s%s.", name, intUnit(name), or),
		Subject:  rng.Ptr(),
	}
}

// intUnit says what a whole-number attribute counts, for its diagnostic.
func intUnit(name string) string {
	if strings.HasSuffix(name, "_bytes") {
		return " of bytes, such as 1048576"
	}
	return ", such as 4"
}

// evalDuration evaluates a duration string such as "1m30s".
func (l *loader) evalDuration(expr hcl.Expression, name string, rng hcl.Range) (time.Duration, valState) {
	v, st := l.evalString(expr, name)
	if st != valid {
		return 0, st
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid duration",
			Detail:   fmt.Sprintf("The %s %s is not a duration. Write a number followed by a unit, such as \"10s\", \"1m30s\" or \"250ms\".", name, quoted(expr, v)),
			Subject:  rng.Ptr(),
		})
		return 0, invalid
	}
	return d, valid
}

// durationText prints d like time.Duration.String without zero units:
// "5m" rather than "5m0s", "1h" rather than "1h0m0s".
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
