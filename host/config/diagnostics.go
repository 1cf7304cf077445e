package config

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// SortDiagnostics sorts diags in place by the subject's file name, line and
// column. Diagnostics without a subject come last; equal positions keep their
// order.
func SortDiagnostics(diags hcl.Diagnostics) {
	slices.SortStableFunc(diags, func(a, b *hcl.Diagnostic) int {
		switch {
		case a.Subject == nil && b.Subject == nil:
			return 0
		case a.Subject == nil:
			return 1
		case b.Subject == nil:
			return -1
		}
		return cmp.Or(
			cmp.Compare(a.Subject.Filename, b.Subject.Filename),
			cmp.Compare(a.Subject.Start.Line, b.Subject.Start.Line),
			cmp.Compare(a.Subject.Start.Column, b.Subject.Start.Column),
		)
	})
}

// jsonDiagnostics is the document DiagnosticsJSON writes.
type jsonDiagnostics struct {
	Valid        bool             `json:"valid"`
	ErrorCount   int              `json:"error_count"`
	WarningCount int              `json:"warning_count"`
	Diagnostics  []jsonDiagnostic `json:"diagnostics"`
}

type jsonDiagnostic struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Range    *jsonRange `json:"range,omitempty"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// DiagnosticsJSON renders diags as one JSON document, the output of
// `mcphost validate -json`:
//
//	{"valid": false, "error_count": 1, "warning_count": 0, "diagnostics": [
//	  {"severity": "error", "summary": "Invalid duration", "detail": "...",
//	   "range": {"filename": "mcphost.hcl",
//	             "start": {"line": 3, "column": 23, "byte": 57},
//	             "end": {"line": 3, "column": 29, "byte": 63}}}]}
//
// "range" is left out for a diagnostic without a subject. valid is true when
// there are no errors. The result ends with a newline.
func DiagnosticsJSON(diags hcl.Diagnostics) []byte {
	doc := jsonDiagnostics{Diagnostics: make([]jsonDiagnostic, 0, len(diags))}
	for _, d := range diags {
		jd := jsonDiagnostic{Summary: d.Summary, Detail: d.Detail}
		switch d.Severity {
		case hcl.DiagError:
			jd.Severity = "error"
			doc.ErrorCount++
		case hcl.DiagWarning:
			jd.Severity = "warning"
			doc.WarningCount++
		default:
			jd.Severity = "invalid"
		}
		if r := d.Subject; r != nil {
			jd.Range = &jsonRange{
				Filename: r.Filename,
				Start:    jsonPos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:      jsonPos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte},
			}
		}
		doc.Diagnostics = append(doc.Diagnostics, jd)
	}
	doc.Valid = doc.ErrorCount == 0
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		// Only strings and ints: cannot fail.
		panic("config: marshal diagnostics: " + err.Error())
	}
	return append(out, '\n')
}
