package negotiate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol versions and eras.
const (
	// ModernVersion is the modern version mcphost speaks and probes with.
	ModernVersion = "2026-07-28"
	// LegacyVersion is the version legacy sessions are pinned to.
	LegacyVersion = "2025-11-25"

	EraModern = "modern"
	EraLegacy = "legacy"
)

// MaxAnswerBytes bounds a probe answer: the stdio response frame carrying
// our id, or the HTTP body (JSON, SSE stream or error body). A longer answer
// is the Oversize outcome (legacy, row 3 of §3.6). stdio frames up to
// MaxFrameBytes are still read so that large foreign frames can be skipped.
const MaxAnswerBytes = 1 << 20

// MaxFrameBytes is the longest stdio frame the sibling probe reads (the
// go-sdk's DefaultMaxLineLength); a longer line ends the probe as Oversize.
const MaxFrameBytes = 16 << 20

// modernVersions are the modern versions mcphost speaks, newest first.
var modernVersions = []string{ModernVersion}

// isModern reports whether v names a modern-era version (2026-07-28 or
// later). Versions are ISO dates, so string order is date order.
func isModern(v string) bool { return v >= ModernVersion }

// OutcomeKind says which of the mutually exclusive probe outcomes an
// [Outcome] holds.
type OutcomeKind int

const (
	// OutcomeResult: a JSON-RPC result answered our probe id; Outcome.Result
	// holds its JSON.
	OutcomeResult OutcomeKind = iota + 1
	// OutcomeRPCError: a JSON-RPC error answered our probe id (stdio, or an
	// HTTP 2xx answer); Outcome.RPCError holds it.
	OutcomeRPCError
	// OutcomeHTTPFailure: an HTTP answer that is not a 2xx JSON-RPC answer to
	// our id: any non-2xx status (its body may hold a JSON-RPC error, which
	// Classify decodes), or a 2xx body that is neither JSON-RPC nor an SSE
	// stream carrying our answer. Outcome.HTTP holds status, content type and
	// the body (at most MaxAnswerBytes).
	OutcomeHTTPFailure
	// OutcomeOversize: our answer was longer than MaxAnswerBytes (or a stdio
	// frame longer than MaxFrameBytes). It is a result too large to keep,
	// which is why it has its own kind.
	OutcomeOversize
	// OutcomeNetworkError: the HTTP request failed below HTTP (DNS, refused,
	// TLS, reset); Outcome.Err holds the cause.
	OutcomeNetworkError
	// OutcomeClosed: the stdio server closed stdout or exited (or refused our
	// write) before answering; Outcome.Err may hold the cause.
	OutcomeClosed
	// OutcomeTimedOut: no answer before the probe deadline; Outcome.After is
	// the probe budget P.
	OutcomeTimedOut
)

func (k OutcomeKind) String() string {
	switch k {
	case OutcomeResult:
		return "result"
	case OutcomeRPCError:
		return "rpc-error"
	case OutcomeHTTPFailure:
		return "http-failure"
	case OutcomeOversize:
		return "oversize"
	case OutcomeNetworkError:
		return "network-error"
	case OutcomeClosed:
		return "closed"
	case OutcomeTimedOut:
		return "timed-out"
	}
	return fmt.Sprintf("OutcomeKind(%d)", int(k))
}

// Probe transports, for Outcome.Transport: the same outcome means different
// things on each (stdio silence is legacy evidence, HTTP silence is not).
const (
	ProbeStdio = "stdio"
	ProbeHTTP  = "http"
)

// Outcome is what one server/discover probe produced. Kind says which one of
// the fields is set; Transport is ProbeStdio or ProbeHTTP.
//
// Non-JSON stdio lines (banners), notifications, server requests and
// responses to foreign ids are not outcomes: the probe keeps reading past
// them (row 20 of §3.6).
type Outcome struct {
	Kind      OutcomeKind
	Transport string

	Result   json.RawMessage // OutcomeResult
	RPCError *RPCError       // OutcomeRPCError
	HTTP     *HTTPFailure    // OutcomeHTTPFailure
	Err      error           // OutcomeNetworkError, OutcomeClosed (optional)
	After    time.Duration   // OutcomeTimedOut: the probe budget that ran out
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// HTTPFailure is an HTTP answer that was not a 2xx JSON-RPC answer to our id.
type HTTPFailure struct {
	Status      int
	ContentType string // media type only, lower case, no parameters
	Body        []byte // at most MaxAnswerBytes
}

// Kind is the decision Classify takes.
type Kind int

const (
	// Modern: connect pinned to Decision.Version (the highest mutual modern
	// version).
	Modern Kind = iota + 1
	// Corrective: the server named a mutual modern version in -32022; probe
	// once more at Decision.Version. A second Corrective is a Fail.
	Corrective
	// Legacy: connect pinned to LegacyVersion.
	Legacy
	// Inconclusive: an HTTP probe timed out; what follows depends on
	// http_probe_timeout (§3.7). Decision.Err is a *ProbeTimeoutError.
	Inconclusive
	// Fail: surface Decision.Err (a *ProbeError) and store nothing.
	Fail
)

func (k Kind) String() string {
	switch k {
	case Modern:
		return "modern"
	case Corrective:
		return "corrective"
	case Legacy:
		return "legacy"
	case Inconclusive:
		return "inconclusive"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Decision is Classify's verdict on one Outcome.
type Decision struct {
	Kind Kind
	// Version: for Modern the version to pin, for Corrective the version to
	// probe again with, for Legacy LegacyVersion; empty otherwise.
	Version string
	// Label is the stable evidence label, e.g. "discover", "rpc:-32601",
	// "http:400:nonjson", "http:401", "stdio:timeout", "oversize".
	Label string
	// Evidence is the human-readable reason without the era prefix, e.g.
	// "server/discover offered 2026-07-28" or "probe answered -32601".
	Evidence string
	// Err is set for Fail (a *ProbeError) and Inconclusive (a
	// *ProbeTimeoutError).
	Err error
}

// ProbeError is a probe outcome that is no era evidence (authentication,
// transient HTTP statuses, network errors) or that says mcphost cannot talk
// to the server (-32020, -32021, incompatible -32022). Connect returns it
// unchanged and stores nothing.
type ProbeError struct {
	Label  string // the Decision label, e.g. "http:401", "net", "rpc:-32020"
	Status int    // the HTTP status, 0 when there was none
	Reason string // e.g. "authentication required (HTTP 401)"
	Err    error  // the underlying error, if any
}

func (e *ProbeError) Error() string {
	s := "server/discover probe: " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ProbeError) Unwrap() error { return e.Err }

// ProbeTimeoutError is an HTTP probe that got no answer within its budget
// (Inconclusive). With http_probe_timeout = "error" Connect returns it at
// once; with "fallback" it returns it when the legacy connect that followed
// failed too, ConnectErr saying why. errors.Is(err,
// context.DeadlineExceeded) holds.
type ProbeTimeoutError struct {
	After      time.Duration
	ConnectErr error
}

func (e *ProbeTimeoutError) Error() string {
	s := fmt.Sprintf("server/discover probe: no answer within %s", e.After)
	if e.ConnectErr != nil {
		s += "; the legacy connect that followed failed too: " + e.ConnectErr.Error()
	}
	return s
}

func (e *ProbeTimeoutError) Unwrap() []error {
	errs := []error{context.DeadlineExceeded}
	if e.ConnectErr != nil {
		errs = append(errs, e.ConnectErr)
	}
	return errs
}

// Classify is the pure decision table of protocol.md §3.6. Row numbers
// below refer to that table.
func Classify(o Outcome) Decision {
	switch o.Kind {
	case OutcomeResult:
		return classifyResult(o.Result)
	case OutcomeRPCError:
		if o.RPCError == nil {
			return legacy("invalid", "server/discover answered with an empty error")
		}
		return classifyRPC(*o.RPCError, 0, "rpc:", "probe answered ")
	case OutcomeHTTPFailure:
		if o.HTTP == nil {
			return legacy("invalid", "server/discover answered with an empty HTTP failure")
		}
		return classifyHTTP(*o.HTTP)
	case OutcomeOversize: // row 3
		return legacy("oversize", fmt.Sprintf("server/discover answer exceeds %d bytes", MaxAnswerBytes))
	case OutcomeNetworkError: // row 16
		return fail("net", 0, "network error", o.Err)
	case OutcomeClosed:
		if o.Transport == ProbeHTTP {
			return fail("net", 0, "connection closed", o.Err)
		}
		// row 19
		return legacy("stdio:closed", "server exited or closed stdout on server/discover")
	case OutcomeTimedOut:
		if o.Transport == ProbeHTTP { // row 17
			return Decision{Kind: Inconclusive, Label: "http:timeout",
				Evidence: fmt.Sprintf("no answer to server/discover within %s", o.After),
				Err:      &ProbeTimeoutError{After: o.After}}
		}
		// row 18
		return legacy("stdio:timeout", fmt.Sprintf("no answer to server/discover within %s", o.After))
	}
	return fail("invalid", 0, fmt.Sprintf("unknown probe outcome %v", o.Kind), nil)
}

func legacy(label, evidence string) Decision {
	return Decision{Kind: Legacy, Version: LegacyVersion, Label: label, Evidence: evidence}
}

func fail(label string, status int, reason string, err error) Decision {
	return Decision{Kind: Fail, Label: label, Evidence: reason,
		Err: &ProbeError{Label: label, Status: status, Reason: reason, Err: err}}
}

// discoverResult is what Classify requires of a DiscoverResult:
// supportedVersions (an array of strings) and capabilities (an object) are
// required; resultType, when present, must be "complete".
type discoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	ResultType        *string         `json:"resultType"`
}

// rows 1–3
func classifyResult(raw json.RawMessage) Decision {
	var r discoverResult
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &r) != nil ||
		r.SupportedVersions == nil || !isObject(r.Capabilities) ||
		(r.ResultType != nil && *r.ResultType != "complete") {
		return legacy("invalid", "server/discover answered with an invalid DiscoverResult")
	}
	if v := highestMutual(r.SupportedVersions); v != "" {
		return Decision{Kind: Modern, Version: v, Label: "discover", Evidence: "server/discover offered " + v}
	}
	return legacy("discover:legacy", "server/discover offered only "+listOrNone(r.SupportedVersions))
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func listOrNone(vs []string) string {
	if len(vs) == 0 {
		return "no versions"
	}
	return strings.Join(vs, ", ")
}

// highestMutual returns the newest modern version both sides speak, or "".
func highestMutual(supported []string) string {
	for _, v := range modernVersions {
		if slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// supportedList decodes data.supported as a string array, or returns false.
func supportedList(data json.RawMessage) ([]string, bool) {
	var d struct {
		Supported []string `json:"supported"`
	}
	if len(bytes.TrimSpace(data)) == 0 || json.Unmarshal(data, &d) != nil || len(d.Supported) == 0 {
		return nil, false
	}
	return d.Supported, true
}

// Codes of the version errors: -32022 (GA) and -32004 (pre-GA, row 8).
const (
	codeUnsupportedVersion      = mcp.CodeUnsupportedProtocolVersion // -32022
	codeUnsupportedVersionPreGA = -32004
	codeHeaderMismatch          = mcp.CodeHeaderMismatch                    // -32020
	codeMissingClientCapability = mcp.CodeMissingRequiredClientCapabilities // -32021
)

// rows 4–11, for a JSON-RPC error from stdio or an HTTP body (status is the
// HTTP status, 0 on stdio). The label and evidence prefixes say where it
// came from.
func classifyRPC(e RPCError, status int, labelPrefix, evidencePrefix string) Decision {
	label := fmt.Sprintf("%s%d", labelPrefix, e.Code)
	switch e.Code {
	case codeUnsupportedVersion, codeUnsupportedVersionPreGA:
		supported, ok := supportedList(e.Data)
		if !ok {
			// row 7 for -32022; -32004 without a list is just another code (row 11)
			return legacy(label, fmt.Sprintf("%s%d without a supported version list", evidencePrefix, e.Code))
		}
		if v := highestMutual(supported); v != "" { // row 4
			return Decision{Kind: Corrective, Version: v, Label: label,
				Evidence: fmt.Sprintf("%s%d naming %s", evidencePrefix, e.Code, v)}
		}
		if slices.ContainsFunc(supported, func(v string) bool { return !isModern(v) }) { // row 5
			return legacy(label, fmt.Sprintf("%s%d; the server supports %s", evidencePrefix, e.Code, strings.Join(supported, ", ")))
		}
		// row 6
		return fail(label, status, fmt.Sprintf("incompatible protocol versions: the server supports %s, mcphost speaks %s and %s",
			strings.Join(supported, ", "), strings.Join(modernVersions, ", "), LegacyVersion), nil)
	case codeHeaderMismatch: // row 9
		return fail(label, status, fmt.Sprintf("the server rejected the probe's headers (%d: %s)", e.Code, e.Message), nil)
	case codeMissingClientCapability: // row 9
		return fail(label, status, fmt.Sprintf("the server requires a client capability mcphost lacks (%d: %s)", e.Code, e.Message), nil)
	}
	// rows 10 and 11: never key the fallback on one code
	return legacy(label, fmt.Sprintf("%s%d", evidencePrefix, e.Code))
}

// rows 10 (HTTP 404 with -32601), 12–15
func classifyHTTP(h HTTPFailure) Decision {
	s := h.Status
	switch {
	case s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusProxyAuthRequired: // row 13
		return fail(fmt.Sprintf("http:%d", s), s, fmt.Sprintf("authentication failed (HTTP %d)", s), nil)
	case s >= 500 || s == http.StatusTooManyRequests || s == http.StatusRequestTimeout: // row 14
		return fail(fmt.Sprintf("http:%d", s), s, fmt.Sprintf("transient server failure (HTTP %d)", s), nil)
	}
	prefix := fmt.Sprintf("http:%d:", s)
	if h.ContentType == "text/event-stream" {
		return legacy(prefix+"noanswer", fmt.Sprintf("probe answered HTTP %d with an event stream lacking the answer", s))
	}
	body := bytes.TrimSpace(h.Body)
	if len(body) == 0 {
		return legacy(prefix+"empty", fmt.Sprintf("probe answered HTTP %d with an empty body", s))
	}
	var env struct {
		Error *RPCError `json:"error"`
	}
	if !json.Valid(body) {
		return legacy(prefix+"nonjson", fmt.Sprintf("probe answered HTTP %d with a non-JSON body", s))
	}
	if body[0] == '{' && json.Unmarshal(body, &env) == nil && env.Error != nil {
		// A recognised modern error in the body is modern evidence
		// (Corrective or Fail); any other code means legacy.
		return classifyRPC(*env.Error, s, prefix+"rpc:", fmt.Sprintf("probe answered HTTP %d with ", s))
	}
	return legacy(prefix+"nonmodern", fmt.Sprintf("probe answered HTTP %d with a non-modern body", s))
}

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	return strings.ToLower(strings.TrimSpace(strings.Split(ct, ";")[0]))
}
