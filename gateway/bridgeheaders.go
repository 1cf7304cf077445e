package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// A 2026-07-28 tools/call repeats the arguments a tool's input schema marks
// with x-mcp-header in Mcp-Param-NAME headers (SEP-2243), which the server
// checks against the body. A stdio client has no headers to send, so the
// bridge learns each tool's annotations from the tools/list answers it
// relays and adds the headers to the calls it posts.

// paramBinding is one annotated property: its path in the arguments and
// its header's name.
type paramBinding struct {
	path   []string
	header string
}

// bindingsOf reads the annotated properties of a tools/list result.
func bindingsOf(result json.RawMessage) map[string][]paramBinding {
	var res struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &res) != nil {
		return nil
	}
	out := map[string][]paramBinding{}
	for _, t := range res.Tools {
		if !bytes.Contains(t.InputSchema, []byte(`"x-mcp-header"`)) {
			continue
		}
		var schema schemaProps
		if json.Unmarshal(t.InputSchema, &schema) != nil {
			continue
		}
		if bs := schema.bindings(nil, nil); len(bs) > 0 {
			out[t.Name] = bs
		}
	}
	return out
}

// schemaProps is the part of a JSON schema the annotations live in.
type schemaProps struct {
	Header     string                 `json:"x-mcp-header"`
	Properties map[string]schemaProps `json:"properties"`
}

func (s schemaProps) bindings(prefix []string, out []paramBinding) []paramBinding {
	for name, p := range s.Properties {
		path := append(append([]string(nil), prefix...), name)
		if p.Header != "" {
			out = append(out, paramBinding{path: path, header: p.Header})
		}
		out = p.bindings(path, out)
	}
	return out
}

// paramHeaders returns the Mcp-Param-* headers of a call's arguments: a
// string as it is (base64 in the =?base64?…?= form when it is not plain
// printable ASCII without edge spaces, or looks like that form), a boolean
// or an integer as written; other values are not sent.
func paramHeaders(bindings []paramBinding, args json.RawMessage) map[string]string {
	if len(bindings) == 0 || len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var root any
	if dec.Decode(&root) != nil {
		return nil
	}
	out := map[string]string{}
	for _, b := range bindings {
		v := root
		for _, key := range b.path {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[key]
		}
		var text string
		switch x := v.(type) {
		case string:
			text = headerText(x)
		case bool:
			text = strconv.FormatBool(x)
		case json.Number:
			if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
				continue
			}
			text = string(x)
		default:
			continue
		}
		out["Mcp-Param-"+b.header] = text
	}
	return out
}

func headerText(s string) string {
	plain := s == "" || (s[0] != ' ' && s[0] != '\t' && s[len(s)-1] != ' ' && s[len(s)-1] != '\t')
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
