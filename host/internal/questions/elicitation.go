package questions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation modes.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// Elicitation actions (MCP's): what the user did with the request.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// Bounds on what a server may ask and what an answer may carry.
const (
	// maxElicitSchemaBytes bounds the encoded requested schema.
	maxElicitSchemaBytes = 32 << 10
	// maxElicitSchemaDepth bounds its JSON nesting (a flat object of
	// primitive properties with a oneOf enum needs 5).
	maxElicitSchemaDepth = 6
	// maxElicitProperties bounds its properties.
	maxElicitProperties = 64
	// maxElicitAnswerBytes bounds the encoded content of an answer.
	maxElicitAnswerBytes = 64 << 10
	// maxElicitMessageBytes bounds the message shown to the user.
	maxElicitMessageBytes = 8 << 10
	// maxElicitURLBytes bounds a URL-mode request's URL.
	maxElicitURLBytes = 4 << 10
	// MaxElicitationsPerCall is how many questions one call may ask; a
	// server asking more is declined without asking the user.
	MaxElicitationsPerCall = 8
	// maxPendingElicitations bounds one principal's open questions, across
	// every replica of a cluster.
	MaxPendingElicitations = 32
)

// redacted replaces the value of a secret field (format "password" or
// writeOnly) in the trail.
const Redacted = "[redacted]"

// Elicitation is a server's question to the principal of a running call.
type Elicitation struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId,omitempty"`
	CallID    string `json:"callId"`
	Server    string `json:"server"`
	Tool      string `json:"tool"`
	// Mode is ElicitForm or ElicitURL.
	Mode    string `json:"mode"`
	Message string `json:"message"`
	// RequestedSchema is the form's schema (form mode): a flat object of
	// primitive properties.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is what the user is asked to open (url mode): http or https.
	URL     string    `json:"url,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// ElicitationAnswer is the principal's answer: an action and, with
// accept in form mode, the content.
type ElicitationAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// ElicitationDone says how a pending elicitation ended: "accept",
// "decline", "cancel", "expired" or "cancelled" (the call ended first).
type ElicitationDone struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId,omitempty"`
	CallID    string `json:"callId"`
	Outcome   string `json:"outcome"`
}

// Outcomes of an elicitation beyond the three actions.
const (
	ElicitExpired   = "expired"
	ElicitCancelled = "cancelled"
	ElicitRefused   = "refused" // mcphost refused the request without asking
)

// ElicitationAnswerError is an answer that does not fit the question (the
// API answers 422): content that does not match the requested schema, an
// unknown action, content that is too large.
type ElicitationAnswerError struct{ Reason string }

func (e *ElicitationAnswerError) Error() string {
	return "the answer does not fit the question: " + e.Reason
}

// CheckElicitation checks a server's request and returns it as the user
// is to see it, with the compiled schema (form mode). The error says what
// is wrong, for the server.
func CheckElicitation(p *mcp.ElicitParams) (Elicitation, *jsonschema.Resolved, error) {
	if p == nil {
		return Elicitation{}, nil, errors.New("the request has no params")
	}
	e := Elicitation{Mode: p.Mode, Message: p.Message}
	if e.Mode == "" {
		e.Mode = ElicitForm
		if p.URL != "" {
			e.Mode = ElicitURL
		}
	}
	if len(p.Message) > maxElicitMessageBytes {
		return e, nil, fmt.Errorf("the message has %d bytes; at most %d are shown", len(p.Message), maxElicitMessageBytes)
	}
	switch e.Mode {
	case ElicitForm:
		if p.URL != "" {
			return e, nil, errors.New("a form-mode request cannot have a url")
		}
		raw, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return e, nil, fmt.Errorf("encoding the requested schema: %v", err)
		}
		if p.RequestedSchema == nil || string(raw) == "null" {
			raw = []byte(`{"type":"object","properties":{}}`)
		}
		rs, err := CheckElicitSchema(raw)
		if err != nil {
			return e, nil, err
		}
		e.RequestedSchema = raw
		return e, rs, nil
	case ElicitURL:
		if p.RequestedSchema != nil {
			return e, nil, errors.New("a url-mode request cannot have a requestedSchema")
		}
		if err := checkElicitURL(p.URL); err != nil {
			return e, nil, &URLError{err}
		}
		e.URL = p.URL
		return e, nil, nil
	default:
		return e, nil, fmt.Errorf("unknown mode %q (mcphost answers \"form\" and \"url\")", Truncate(e.Mode, 32))
	}
}

// CheckElicitSchema enforces MCP's restriction of elicitation schemas (a
// flat object of primitive properties: string, number, integer, boolean,
// or an array of enum strings) and mcphost's bounds, and compiles the
// schema.
func CheckElicitSchema(raw []byte) (*jsonschema.Resolved, error) {
	if len(raw) > maxElicitSchemaBytes {
		return nil, fmt.Errorf("the requested schema has %d bytes; mcphost accepts at most %d", len(raw), maxElicitSchemaBytes)
	}
	if d := jsonDepth(raw); d > maxElicitSchemaDepth {
		return nil, fmt.Errorf("the requested schema nests %d levels deep; mcphost accepts at most %d (elicitation schemas are flat objects of primitive properties)", d, maxElicitSchemaDepth)
	}
	var top struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %v", err)
	}
	if top.Type != nil && top.Type != "object" {
		return nil, fmt.Errorf("the requested schema has type %v; it must be \"object\"", top.Type)
	}
	if len(top.Properties) > maxElicitProperties {
		return nil, fmt.Errorf("the requested schema has %d properties; mcphost accepts at most %d", len(top.Properties), maxElicitProperties)
	}
	for _, name := range sortedKeys(top.Properties) {
		var prop struct {
			Type       any             `json:"type"`
			Format     string          `json:"format"`
			Properties json.RawMessage `json:"properties"`
			Items      *struct {
				Type  any   `json:"type"`
				Enum  []any `json:"enum"`
				AnyOf []any `json:"anyOf"`
				OneOf []any `json:"oneOf"`
			} `json:"items"`
		}
		if err := json.Unmarshal(top.Properties[name], &prop); err != nil {
			return nil, fmt.Errorf("property %q of the requested schema is not a JSON object", Truncate(name, 64))
		}
		if len(prop.Properties) > 0 {
			return nil, fmt.Errorf("property %q has nested properties; elicitation schemas are flat objects of primitive properties", Truncate(name, 64))
		}
		switch prop.Type {
		case "string":
			switch prop.Format {
			case "", "email", "uri", "date", "date-time", "password":
			default:
				return nil, fmt.Errorf("property %q has the format %q; mcphost accepts email, uri, date, date-time and password", Truncate(name, 64), Truncate(prop.Format, 32))
			}
		case "number", "integer", "boolean":
		case "array":
			if prop.Items == nil || (prop.Items.Type != nil && prop.Items.Type != "string") ||
				(len(prop.Items.Enum) == 0 && len(prop.Items.AnyOf) == 0 && len(prop.Items.OneOf) == 0) {
				return nil, fmt.Errorf("property %q is an array that is not a multiple choice of strings (items with enum, anyOf or oneOf)", Truncate(name, 64))
			}
		case nil:
			return nil, fmt.Errorf("property %q has no type; it must be string, number, integer, boolean or an array of enum strings", Truncate(name, 64))
		default:
			return nil, fmt.Errorf("property %q has type %v; it must be string, number, integer, boolean or an array of enum strings", Truncate(name, 64), prop.Type)
		}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON Schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("the requested schema does not compile: %v", err)
	}
	return rs, nil
}

// URLError is a URL-mode request whose URL mcphost will not show: it is
// declined rather than refused.
type URLError struct{ error }

func (e *URLError) Unwrap() error { return e.error }

// checkElicitURL accepts an absolute http or https URL with a host.
func checkElicitURL(raw string) error {
	if raw == "" {
		return errors.New("a url-mode request needs a url")
	}
	if len(raw) > maxElicitURLBytes {
		return fmt.Errorf("the url has %d bytes; mcphost accepts at most %d", len(raw), maxElicitURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the url does not parse: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("the url's scheme %q is not http or https; mcphost opens no other", Truncate(u.Scheme, 32))
	}
	if u.Host == "" {
		return errors.New("the url has no host")
	}
	return nil
}

// TrailURL is a URL as the trail records it: without its user info,
// query and fragment, which may carry one-time codes or tokens.
func TrailURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return ""
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// CheckAnswer checks an answer's action and, for accept, its content
// against the requested schema.
func CheckAnswer(ans ElicitationAnswer, schema *jsonschema.Resolved) error {
	switch ans.Action {
	case ElicitAccept:
	case ElicitDecline, ElicitCancel:
		if len(ans.Content) > 0 {
			return &ElicitationAnswerError{Reason: "content goes only with accept"}
		}
		return nil
	default:
		return &ElicitationAnswerError{Reason: `"action" is "accept", "decline" or "cancel"`}
	}
	raw, err := json.Marshal(ans.Content)
	if err != nil {
		return &ElicitationAnswerError{Reason: err.Error()}
	}
	if len(raw) > maxElicitAnswerBytes {
		return &ElicitationAnswerError{Reason: fmt.Sprintf("the content has %d bytes; at most %d are sent", len(raw), maxElicitAnswerBytes)}
	}
	if schema == nil {
		return nil
	}
	var v any = map[string]any{}
	if ans.Content != nil {
		// Validate the content as it will be encoded (numbers as
		// float64), not as the caller's Go values.
		if err := json.Unmarshal(raw, &v); err != nil {
			return &ElicitationAnswerError{Reason: err.Error()}
		}
	}
	if err := schema.Validate(v); err != nil {
		return &ElicitationAnswerError{Reason: err.Error()}
	}
	return nil
}

// jsonDepth is the nesting depth of a JSON document (0 for a scalar); a
// document that does not parse counts as 0, and its parse fails later.
func jsonDepth(raw []byte) int {
	dec := json.NewDecoder(bytes.NewReader(raw))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
				deepest = max(deepest, depth)
			default:
				depth--
			}
		}
	}
}

// SchemaFields lists the property names of a requested schema.
func SchemaFields(raw json.RawMessage) []string {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	return sortedKeys(top.Properties)
}

// secretFields are the properties whose values never reach the trail:
// format "password", or writeOnly.
func secretFields(raw json.RawMessage) map[string]bool {
	var top struct {
		Properties map[string]struct {
			Format    string `json:"format"`
			WriteOnly bool   `json:"writeOnly"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	out := map[string]bool{}
	for k, p := range top.Properties {
		if p.Format == "password" || p.WriteOnly {
			out[k] = true
		}
	}
	return out
}

// RedactSecrets returns content with the values of secret fields replaced.
func RedactSecrets(content map[string]any, schema json.RawMessage) map[string]any {
	secret := secretFields(schema)
	out := make(map[string]any, len(content))
	for k, v := range content {
		if secret[k] {
			v = Redacted
		}
		out[k] = v
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Check reports whether ans fits the question e: a known action, and for
// an accepted form, content that matches the requested schema within
// maxElicitAnswerBytes (an *ElicitationAnswerError otherwise). A door that
// asks the user itself (the CLI) uses it to ask again.
func (e Elicitation) Check(ans ElicitationAnswer) error {
	var schema *jsonschema.Resolved
	if e.Mode == ElicitForm && len(e.RequestedSchema) > 0 {
		rs, err := CheckElicitSchema(e.RequestedSchema)
		if err != nil {
			return &ElicitationAnswerError{Reason: err.Error()}
		}
		schema = rs
	}
	return CheckAnswer(ans, schema)
}

// SecretField reports whether the form's property name is secret (format
// "password" or writeOnly): shown masked, never recorded in clear.
func (e Elicitation) SecretField(name string) bool { return secretFields(e.RequestedSchema)[name] }
