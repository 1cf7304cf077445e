package policies

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxInputBytes bounds the input file of `mcphost policy eval`.
const MaxInputBytes = 4 << 20

// DecodeInput strictly decodes the JSON input of `mcphost policy eval`:
//
//	{
//	  "server": "files", "era": "modern", "origin": "user",
//	  "principal": {"name": "alice", "groups": ["eng"]},
//	  "tool": {"name": "write_file", "title": "Write file",
//	           "annotations": {"readOnlyHint": false, "destructiveHint": true,
//	                           "idempotentHint": false, "openWorldHint": false}},
//	  "op": "tools/call",
//	  "resource": {"uri": "file:///etc/hosts", "name": "hosts", "mimeType": "text/plain"},
//	  "prompt": {"name": "deploy", "title": "Deploy"},
//	  "args": {"path": "/srv/data/a.txt"},
//	  "result": {"isError": false, "text": "done", "structured": {"bytes": 12}},
//	  "app": {"resourceUri": "ui://files/view", "htmlSize": 5120,
//	          "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": [], "baseUriDomains": []},
//	          "permissions": ["camera"]}
//	}
//
// Every member is optional. Absent annotation hints take the MCP defaults,
// as the host does ([AnnotationsFromMCP]); era must be "modern" or "legacy"
// and origin "user", "app" or "api" when given; args must be an object and
// stays raw (decoded lazily by [Set.Decide], as for the host); op must be
// one of the operations of [Ops] (which op a phase takes is checked when
// the input is decided); result.text is the text as the host joins it
// ([ResultFromMCP]), and result.structured also gives
// result.structuredText, its JSON encoding. Unknown or
// duplicate members, wrong types, trailing data and inputs over
// [MaxInputBytes] are refused with an error naming the member.
func DecodeInput(data []byte) (*Input, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("policies: input: %d bytes, more than the limit of %d", len(data), MaxInputBytes)
	}
	in := &Input{Tool: Tool{Annotations: AnnotationsFromMCP(nil)}}
	err := decodeObject(data, "", fields{
		"server": func(r json.RawMessage, p string) error { return decodeString(r, p, &in.Server) },
		"era": func(r json.RawMessage, p string) error {
			return decodeEnum(r, p, &in.Era, "modern", "legacy")
		},
		"origin": func(r json.RawMessage, p string) error {
			return decodeEnum(r, p, &in.Origin, OriginUser, OriginApp, OriginAPI, OriginGateway)
		},
		"principal": func(r json.RawMessage, p string) error {
			return decodeObject(r, p, fields{
				"name":   func(r json.RawMessage, p string) error { return decodeString(r, p, &in.Principal.Name) },
				"groups": func(r json.RawMessage, p string) error { return decodeStrings(r, p, &in.Principal.Groups) },
			})
		},
		"client": func(r json.RawMessage, p string) error {
			return decodeObject(r, p, fields{
				"name":    func(r json.RawMessage, p string) error { return decodeString(r, p, &in.Client.Name) },
				"version": func(r json.RawMessage, p string) error { return decodeString(r, p, &in.Client.Version) },
			})
		},
		"op": func(r json.RawMessage, p string) error {
			return decodeEnum(r, p, &in.Op, OpListTools, OpListResources, OpListPrompts,
				OpCallTool, OpReadRes, OpGetPrompt, OpComplete, OpSubscribe, OpUnsubscribe)
		},
		"resource": func(r json.RawMessage, p string) error {
			res := &Resource{}
			in.Resource = res
			return decodeObject(r, p, fields{
				"uri":      func(r json.RawMessage, p string) error { return decodeString(r, p, &res.URI) },
				"name":     func(r json.RawMessage, p string) error { return decodeString(r, p, &res.Name) },
				"mimeType": func(r json.RawMessage, p string) error { return decodeString(r, p, &res.MIMEType) },
			})
		},
		"prompt": func(r json.RawMessage, p string) error {
			pr := &Prompt{}
			in.Prompt = pr
			return decodeObject(r, p, fields{
				"name":  func(r json.RawMessage, p string) error { return decodeString(r, p, &pr.Name) },
				"title": func(r json.RawMessage, p string) error { return decodeString(r, p, &pr.Title) },
			})
		},
		"tool": func(r json.RawMessage, p string) error {
			t := &in.Tool
			return decodeObject(r, p, fields{
				"name":  func(r json.RawMessage, p string) error { return decodeString(r, p, &t.Name) },
				"title": func(r json.RawMessage, p string) error { return decodeString(r, p, &t.Title) },
				"annotations": func(r json.RawMessage, p string) error {
					a := &t.Annotations
					return decodeObject(r, p, fields{
						"readOnlyHint":    func(r json.RawMessage, p string) error { return decodeBool(r, p, &a.ReadOnlyHint) },
						"destructiveHint": func(r json.RawMessage, p string) error { return decodeBool(r, p, &a.DestructiveHint) },
						"idempotentHint":  func(r json.RawMessage, p string) error { return decodeBool(r, p, &a.IdempotentHint) },
						"openWorldHint":   func(r json.RawMessage, p string) error { return decodeBool(r, p, &a.OpenWorldHint) },
					})
				},
			})
		},
		"args": func(r json.RawMessage, p string) error {
			switch first(r) {
			case 'n':
				return nil
			case '{':
				in.RawArgs = slices.Clone(r)
				return nil
			}
			return fmt.Errorf("policies: input: %s must be an object", p)
		},
		"result": func(r json.RawMessage, p string) error {
			if first(r) == 'n' {
				return nil
			}
			res := &Result{}
			in.Result = res
			return decodeObject(r, p, fields{
				"isError": func(r json.RawMessage, p string) error { return decodeBool(r, p, &res.IsError) },
				"text":    func(r json.RawMessage, p string) error { return decodeString(r, p, &res.Text) },
				"structured": func(r json.RawMessage, p string) error {
					if err := json.Unmarshal(r, &res.Structured); err != nil {
						return fmt.Errorf("policies: input: %s: %w", p, err)
					}
					res.StructuredText = structuredText(res.Structured)
					return nil
				},
			})
		},
		"app": func(r json.RawMessage, p string) error {
			if first(r) == 'n' {
				return nil
			}
			app := &App{}
			in.App = app
			return decodeObject(r, p, fields{
				"resourceUri": func(r json.RawMessage, p string) error { return decodeString(r, p, &app.ResourceURI) },
				"csp": func(r json.RawMessage, p string) error {
					c := &app.CSP
					return decodeObject(r, p, fields{
						"connectDomains":  func(r json.RawMessage, p string) error { return decodeStrings(r, p, &c.ConnectDomains) },
						"resourceDomains": func(r json.RawMessage, p string) error { return decodeStrings(r, p, &c.ResourceDomains) },
						"frameDomains":    func(r json.RawMessage, p string) error { return decodeStrings(r, p, &c.FrameDomains) },
						"baseUriDomains":  func(r json.RawMessage, p string) error { return decodeStrings(r, p, &c.BaseURIDomains) },
					})
				},
				"permissions": func(r json.RawMessage, p string) error { return decodeStrings(r, p, &app.Permissions) },
				"htmlSize": func(r json.RawMessage, p string) error {
					var n int64
					if err := json.Unmarshal(r, &n); err != nil || n < 0 || n > 1<<40 {
						return fmt.Errorf("policies: input: %s must be a non-negative integer", p)
					}
					app.HTMLSize = int(n)
					return nil
				},
			})
		},
	})
	if err != nil {
		return nil, err
	}
	return in, nil
}

type fields map[string]func(raw json.RawMessage, path string) error

// decodeObject reads one JSON object member by member, refusing unknown and
// duplicate names and trailing data, and hands each value to its field.
func decodeObject(data []byte, path string, fs fields) error {
	where := path
	if where == "" {
		where = "the input"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("policies: input: %s: %w", where, jsonErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("policies: input: %s must be an object", where)
	}
	seen := make(map[string]bool, len(fs))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("policies: input: %s: %w", where, jsonErr(err))
		}
		name, _ := tok.(string)
		member := name
		if path != "" {
			member = path + "." + name
		}
		f, ok := fs[name]
		if !ok {
			return fmt.Errorf("policies: input: unknown member %q; %s has %s", member, where, strings.Join(slices.Sorted(mapKeys(fs)), ", "))
		}
		if seen[name] {
			return fmt.Errorf("policies: input: duplicate member %q", member)
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("policies: input: %s: %w", member, jsonErr(err))
		}
		if err := f(raw, member); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("policies: input: %s: %w", where, jsonErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("policies: input: unexpected data after %s", where)
	}
	return nil
}

func mapKeys(fs fields) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range fs {
			if !yield(k) {
				return
			}
		}
	}
}

func jsonErr(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// first returns the first byte of a JSON value (the decoder trims space).
func first(r json.RawMessage) byte {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return 0
	}
	return r[0]
}

func decodeString(r json.RawMessage, path string, dst *string) error {
	if first(r) != '"' {
		return fmt.Errorf("policies: input: %s must be a string", path)
	}
	return json.Unmarshal(r, dst)
}

func decodeEnum(r json.RawMessage, path string, dst *string, values ...string) error {
	if err := decodeString(r, path, dst); err != nil {
		return err
	}
	if !slices.Contains(values, *dst) {
		return fmt.Errorf("policies: input: %s is %q, not one of %s", path, *dst, strings.Join(values, ", "))
	}
	return nil
}

func decodeBool(r json.RawMessage, path string, dst *bool) error {
	if c := first(r); c != 't' && c != 'f' {
		return fmt.Errorf("policies: input: %s must be true or false", path)
	}
	return json.Unmarshal(r, dst)
}

func decodeStrings(r json.RawMessage, path string, dst *[]string) error {
	switch first(r) {
	case 'n':
		*dst = nil
		return nil
	case '[':
		if err := json.Unmarshal(r, dst); err != nil {
			return fmt.Errorf("policies: input: %s must be a list of strings", path)
		}
		return nil
	}
	return fmt.Errorf("policies: input: %s must be a list of strings", path)
}
