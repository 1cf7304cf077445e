package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDepth bounds the nesting of a plugin's output; go-sdk allows 1000, a
// tool result needs a handful.
const maxDepth = 128

// ValidateResultOutput checks out, the output of a result-stage plugin whose
// input result was in, and returns the result the host keeps: in itself when
// out is empty ("unchanged"), otherwise the decoded output. changed reports
// whether the kept result encodes differently from in. validateStructured,
// when not nil, checks structuredContent against the tool's output schema.
//
// The rules: at most [MaxIOBytes], valid UTF-8, one JSON value without
// duplicate keys, nested at most 128 deep; an object whose only key is
// "result"; a CallToolResult with the keys _meta, content (required; a list
// or null), structuredContent and isError; content items of the types text,
// image, audio, resource_link and resource with their required fields and no
// unknown keys; isError never cleared; structuredContent not removed when in
// had it, and valid when validateStructured is given; the re-encoded result
// within [MaxIOBytes]. Errors never quote the output.
func ValidateResultOutput(out []byte, in *mcp.CallToolResult, validateStructured func(any) error) (res *mcp.CallToolResult, changed bool, err error) {
	inEnc, err := encodeResult(in)
	if err != nil {
		return nil, false, fmt.Errorf("input result: %w", err)
	}
	res, changed, _, err = validateResult(out, in, inEnc, validateStructured)
	return res, changed, err
}

// validateResult is ValidateResultOutput with in's encoding already known;
// it also returns the kept result's encoding.
func validateResult(out []byte, in *mcp.CallToolResult, inEnc []byte, validateStructured func(any) error) (*mcp.CallToolResult, bool, []byte, error) {
	if len(out) == 0 {
		return in, false, inEnc, nil
	}
	v, raw, err := decodeOutput(out, "result", MaxIOBytes)
	if err != nil {
		return nil, false, nil, err
	}
	if bytes.Equal(raw, inEnc) {
		return in, false, inEnc, nil // the input as it was sent
	}
	if err := checkResultTree(v); err != nil {
		return nil, false, nil, err
	}
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, false, nil, fmt.Errorf("result: %w", err)
	}
	if in != nil && in.IsError && !res.IsError {
		return nil, false, nil, errors.New("result: isError cleared (a plugin may set isError, never clear it)")
	}
	if in != nil && in.StructuredContent != nil && res.StructuredContent == nil {
		return nil, false, nil, errors.New("result: structuredContent removed")
	}
	if validateStructured != nil && res.StructuredContent != nil {
		if err := validateStructured(res.StructuredContent); err != nil {
			return nil, false, nil, fmt.Errorf("result: structuredContent does not match the output schema: %w", err)
		}
	}
	enc, err := encodeResult(res)
	if err != nil {
		return nil, false, nil, fmt.Errorf("result: %w", err)
	}
	if len(enc) > MaxIOBytes {
		return nil, false, nil, fmt.Errorf("result: %d bytes once re-encoded, over the %d-byte limit", len(enc), MaxIOBytes)
	}
	if bytes.Equal(enc, inEnc) {
		return in, false, inEnc, nil
	}
	return res, true, enc, nil
}

// encodeResult encodes r as plugins receive it; nil encodes as an empty result.
func encodeResult(r *mcp.CallToolResult) ([]byte, error) {
	if r == nil {
		r = &mcp.CallToolResult{Content: []mcp.Content{}}
	}
	return r.MarshalJSON() // json.Marshal would compact its output once more
}

// ValidateDisplayOutput checks out, the output of a display-stage plugin
// whose input record was in, and returns the record the host keeps: in when
// out is empty, otherwise the decoded output. validSource is the sandbox's
// CSP source validator (nil rejects every source).
//
// The rules, besides the size, UTF-8 and strict-JSON ones of
// [ValidateResultOutput]: an object whose only key is "display"; the record's
// keys among type, resourceUri, html, csp, permissions and fallbackText, with
// type and resourceUri unchanged; html at most [MaxHTMLBytes]; csp lists
// among connectDomains, resourceDomains, frameDomains and baseUriDomains,
// each source passing validSource and present in the same list of in (a
// plugin narrows a CSP, never widens it), no source twice; permissions a
// subset of in's, each with its value unchanged; the whole output within
// [MaxDisplayIOBytes] and the re-encoded record within its share of it.
func ValidateDisplayOutput(out []byte, in Display, validSource func(string) error) (d Display, changed bool, err error) {
	if len(out) == 0 {
		return in, false, nil
	}
	inEnc, err := encodeDisplay(in)
	if err != nil {
		return Display{}, false, fmt.Errorf("input display: %w", err)
	}
	d, changed, _, err = validateDisplay(out, in, inEnc, validSource)
	return d, changed, err
}

// validateDisplay is ValidateDisplayOutput with in's encoding (by
// encodeDisplay) already known; it also returns the kept record's encoding.
func validateDisplay(out []byte, in Display, inEnc []byte, validSource func(string) error) (Display, bool, []byte, error) {
	if len(out) == 0 {
		return in, false, inEnc, nil
	}
	v, raw, err := decodeOutput(out, "display", MaxDisplayIOBytes)
	if err != nil {
		return Display{}, false, nil, err
	}
	if bytes.Equal(raw, inEnc) {
		return in, false, inEnc, nil // the input as it was sent
	}
	d, err := checkDisplay(v, in, validSource)
	if err != nil {
		return Display{}, false, nil, err
	}
	enc, err := encodeDisplay(d)
	if err != nil {
		return Display{}, false, nil, fmt.Errorf("display: %w", err)
	}
	if len(enc) > MaxDisplayIOBytes-MaxIOBytes {
		return Display{}, false, nil, fmt.Errorf("display: %d bytes once re-encoded, over the %d-byte limit", len(enc), MaxDisplayIOBytes-MaxIOBytes)
	}
	if bytes.Equal(enc, inEnc) {
		return in, false, inEnc, nil
	}
	return d, true, enc, nil
}

// encodeDisplay encodes d as plugins receive it: CSP lists never null, as
// checkDisplay builds them, so that a record a plugin passes on as it came
// encodes the same; and without HTML escapes, which would make an App's
// html up to six times its size.
func encodeDisplay(d Display) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalCSP(d)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// normalCSP returns d with no nil CSP list, as checkDisplay builds them.
func normalCSP(d Display) Display {
	if d.CSP == nil {
		return d
	}
	c := *d.CSP
	for _, l := range []*[]string{&c.ConnectDomains, &c.ResourceDomains, &c.FrameDomains, &c.BaseURIDomains} {
		if *l == nil {
			*l = []string{}
		}
	}
	d.CSP = &c
	return d
}

// decodeOutput applies the rules shared by both stages and returns the value
// under the only top-level key, key, both decoded and as it was written.
// An output over limit bytes is refused before it is decoded.
func decodeOutput(out []byte, key string, limit int) (any, []byte, error) {
	if len(out) > limit {
		return nil, nil, fmt.Errorf("output is %d bytes, over the %d-byte limit", len(out), limit)
	}
	if !utf8.Valid(out) {
		return nil, nil, errors.New("output is not valid UTF-8")
	}
	notStrict := func(err error) error { return fmt.Errorf("output is not strict JSON: %w", err) }
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, notStrict(err)
	}
	if tok != json.Delim('{') {
		k := kind(tok)
		if d, ok := tok.(json.Delim); ok && d == '[' {
			k = kArray
		}
		return nil, nil, fmt.Errorf(`output must be a JSON object {"%s": ...}, not %s`, key, k)
	}
	var (
		val  any
		raw  []byte
		seen bool
	)
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, notStrict(err)
		}
		k, _ := kt.(string)
		if k != key {
			return nil, nil, fmt.Errorf("output has unknown key %s (only %q is allowed)", quoteKey(k), key)
		}
		if seen {
			return nil, nil, notStrict(fmt.Errorf("duplicate key %s", quoteKey(k)))
		}
		seen = true
		from := dec.InputOffset()
		if val, err = strictValue(dec, 1); err != nil {
			return nil, nil, notStrict(err)
		}
		// The value as written: after the key come blanks, ':' and blanks.
		raw = bytes.TrimLeft(bytes.TrimLeft(bytes.TrimLeft(out[from:dec.InputOffset()], " \t\r\n"), ":"), " \t\r\n")
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, notStrict(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, notStrict(errors.New("data after the JSON value"))
	}
	if !seen {
		return nil, nil, fmt.Errorf("output has no %q", key)
	}
	return val, raw, nil
}

func strictValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, errors.New("object key is not a string")
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("duplicate key %s", quoteKey(k))
			}
			v, err := strictValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return m, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := strictValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// JSON kinds for the shape checks.
const (
	kString = "string"
	kObject = "object"
	kArray  = "array"
	kNumber = "number"
	kBool   = "boolean"
)

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return kString
	case json.Number:
		return kNumber
	case bool:
		return kBool
	case []any:
		return kArray
	case map[string]any:
		return kObject
	}
	return fmt.Sprintf("%T", v)
}

// field describes one key of an object: its kind and whether it is required.
// An optional key may be null.
type field struct {
	kind     string
	required bool
}

var (
	resultFields = map[string]field{
		"_meta":             {kObject, false},
		"content":           {kArray, false}, // checked apart: required, may be null
		"structuredContent": {"any", false},
		"isError":           {kBool, false},
	}
	annotated = map[string]field{
		"type":        {kString, true},
		"annotations": {kObject, false},
		"_meta":       {kObject, false},
	}
	contentFields = map[string]map[string]field{
		"text": with(annotated, map[string]field{
			"text": {kString, true},
		}),
		"image": with(annotated, map[string]field{
			"data":     {kString, true},
			"mimeType": {kString, true},
		}),
		"audio": with(annotated, map[string]field{
			"data":     {kString, true},
			"mimeType": {kString, true},
		}),
		"resource_link": with(annotated, map[string]field{
			"uri":         {kString, true},
			"name":        {kString, true},
			"title":       {kString, false},
			"description": {kString, false},
			"mimeType":    {kString, false},
			"size":        {kNumber, false},
			"icons":       {kArray, false},
		}),
		"resource": with(annotated, map[string]field{
			"resource": {kObject, true},
		}),
	}
	resourceFields = map[string]field{
		"uri":      {kString, true},
		"mimeType": {kString, false},
		"text":     {kString, false},
		"blob":     {kString, false},
		"_meta":    {kObject, false},
	}
)

func with(a, b map[string]field) map[string]field {
	m := make(map[string]field, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// checkObject checks m's keys against fields; where names the object.
func checkObject(m map[string]any, fields map[string]field, where string) error {
	for k, v := range m {
		f, ok := fields[k]
		if !ok {
			return fmt.Errorf("%s: unknown key %s", where, quoteKey(k))
		}
		if v == nil && !f.required {
			continue
		}
		if f.kind != "any" && kind(v) != f.kind {
			return fmt.Errorf("%s: %s must be %s %s, not %s", where, k, article(f.kind), f.kind, kind(v))
		}
	}
	for k, f := range fields {
		if _, ok := m[k]; f.required && !ok {
			return fmt.Errorf("%s: %s is required", where, k)
		}
	}
	return nil
}

func article(kind string) string {
	if kind == kObject || kind == kArray {
		return "an"
	}
	return "a"
}

// checkResultTree checks the shape of a CallToolResult decoded by strictValue.
func checkResultTree(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("result must be an object, not %s", kind(v))
	}
	if err := checkObject(m, resultFields, "result"); err != nil {
		return err
	}
	c, ok := m["content"]
	if !ok {
		return errors.New("result: content is required")
	}
	items, _ := c.([]any)
	for i, it := range items {
		where := fmt.Sprintf("result: content[%d]", i)
		item, ok := it.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be an object, not %s", where, kind(it))
		}
		t, _ := item["type"].(string)
		fields, ok := contentFields[t]
		if !ok {
			if _, present := item["type"]; !present {
				return fmt.Errorf("%s: type is required", where)
			}
			return fmt.Errorf("%s: unknown content type %s (known: text, image, audio, resource_link, resource)", where, quoteKey(t))
		}
		if err := checkObject(item, fields, where); err != nil {
			return err
		}
		switch t {
		case "resource":
			if err := checkObject(item["resource"].(map[string]any), resourceFields, where+".resource"); err != nil {
				return err
			}
		case "resource_link":
			// go-sdk omits them when empty, so the re-encoded link would lack them.
			if item["uri"] == "" || item["name"] == "" {
				return fmt.Errorf("%s: uri and name must not be empty", where)
			}
		}
	}
	return nil
}

var (
	displayFields = map[string]field{
		"type":         {kString, true},
		"resourceUri":  {kString, true},
		"html":         {kString, false},
		"csp":          {kObject, false},
		"permissions":  {kObject, false},
		"fallbackText": {kString, false},
	}
	cspFields = map[string]field{
		"connectDomains":  {kArray, false},
		"resourceDomains": {kArray, false},
		"frameDomains":    {kArray, false},
		"baseUriDomains":  {kArray, false},
	}
)

// checkDisplay checks the display record v against in and builds the record
// the host keeps.
func checkDisplay(v any, in Display, validSource func(string) error) (Display, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Display{}, fmt.Errorf("display must be an object, not %s", kind(v))
	}
	if err := checkObject(m, displayFields, "display"); err != nil {
		return Display{}, err
	}
	var d Display
	d.Type, _ = m["type"].(string)
	d.ResourceURI, _ = m["resourceUri"].(string)
	d.HTML, _ = m["html"].(string)
	d.FallbackText, _ = m["fallbackText"].(string)
	if d.Type != in.Type {
		return Display{}, errors.New("display: type changed")
	}
	if d.ResourceURI != in.ResourceURI {
		return Display{}, errors.New("display: resourceUri changed")
	}
	if len(d.HTML) > MaxHTMLBytes {
		return Display{}, fmt.Errorf("display: html is %d bytes, over the %d-byte limit", len(d.HTML), MaxHTMLBytes)
	}
	if c, ok := m["csp"].(map[string]any); ok {
		if err := checkObject(c, cspFields, "display.csp"); err != nil {
			return Display{}, err
		}
		var was CSP
		if in.CSP != nil {
			was = *in.CSP
		}
		d.CSP = &CSP{}
		var err error
		if d.CSP.ConnectDomains, err = narrow(c, "connectDomains", was.ConnectDomains, validSource); err != nil {
			return Display{}, err
		}
		if d.CSP.ResourceDomains, err = narrow(c, "resourceDomains", was.ResourceDomains, validSource); err != nil {
			return Display{}, err
		}
		if d.CSP.FrameDomains, err = narrow(c, "frameDomains", was.FrameDomains, validSource); err != nil {
			return Display{}, err
		}
		if d.CSP.BaseURIDomains, err = narrow(c, "baseUriDomains", was.BaseURIDomains, validSource); err != nil {
			return Display{}, err
		}
	}
	if p, ok := m["permissions"].(map[string]any); ok {
		for k, v := range p {
			old, ok := in.Permissions[k]
			if !ok {
				return Display{}, fmt.Errorf("display: permission %s added (a plugin may only remove permissions)", quoteKey(k))
			}
			if !sameJSON(v, old) {
				return Display{}, fmt.Errorf("display: permission %s changed (a plugin may only remove permissions)", quoteKey(k))
			}
			if d.Permissions == nil {
				d.Permissions = make(map[string]any, len(p))
			}
			d.Permissions[k] = old
		}
	}
	return d, nil
}

// narrow checks the CSP list named name in c against was, the same list of
// the input. It never returns a nil list.
func narrow(c map[string]any, name string, was []string, validSource func(string) error) ([]string, error) {
	list, _ := c[name].([]any)
	out := make([]string, 0, len(list))
	for i, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("display.csp.%s[%d] must be a string, not %s", name, i, kind(v))
		}
		if validSource == nil {
			return nil, fmt.Errorf("display.csp.%s[%d]: no CSP source is allowed here", name, i)
		}
		if err := validSource(s); err != nil {
			return nil, fmt.Errorf("display.csp.%s[%d]: invalid source: %w", name, i, err)
		}
		found := false
		for _, w := range was {
			if w == s {
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("display.csp.%s[%d]: source not in the input (a plugin may narrow a CSP, never widen it)", name, i)
		}
		for _, o := range out {
			if o == s {
				return nil, fmt.Errorf("display.csp.%s[%d]: duplicate source", name, i)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// sameJSON reports whether a (from strictValue) and b (a Go value) encode
// as the same JSON value.
func sameJSON(a, b any) bool {
	ea, err1 := json.Marshal(a)
	eb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var va, vb any
	if json.Unmarshal(ea, &va) != nil || json.Unmarshal(eb, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// quoteKey quotes a key from a plugin's output for an error message,
// shortened so that an error never carries much of the output.
func quoteKey(k string) string {
	const max = 40
	if len(k) > max {
		n := max
		for n > 0 && !utf8.RuneStart(k[n]) {
			n--
		}
		return fmt.Sprintf("%q…", k[:n])
	}
	return fmt.Sprintf("%q", k)
}
