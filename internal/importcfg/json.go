package importcfg

// Reading the JSON formats: every client but Codex.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
)

// jsonMember is one member of a JSON object, in file order.
type jsonMember struct {
	Key    string
	Value  json.RawMessage
	Off    int64 // of the value in the file; -1 when unknown
	KeyOff int64 // of the key in the file, for reports; -1 when unknown
}

// decodeJSONFile checks data as JSON (with the comments and trailing
// commas VS Code and Cursor accept) and returns the members of its
// top-level object.
func decodeJSONFile(f *importFile, data []byte) ([]jsonMember, error) {
	clean := stripJSONC(data)
	var top json.RawMessage
	if err := json.Unmarshal(clean, &top); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			// Offset counts the bytes read, the bad one included.
			return nil, f.errorAt(syn.Offset-1, "invalid JSON: %s", syn.Error())
		}
		return nil, &importPosError{File: f.Display, Msg: "invalid JSON: " + err.Error()}
	}
	base := int64(len(clean) - len(bytes.TrimLeft(clean, " \t\r\n")))
	ms, ok := jsonMembers(top, base)
	if !ok {
		return nil, f.errorAt(base, "the file is not a JSON object")
	}
	return ms, nil
}

// jsonMembers decodes raw, at offset base of the file, as an object.
// ok is false when raw is not an object.
func jsonMembers(raw json.RawMessage, base int64) (ms []jsonMember, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		before := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		off, keyOff := int64(-1), int64(-1)
		if base >= 0 {
			off = base + dec.InputOffset() - int64(len(v))
			// The key's quote is the first one after the previous token.
			keyOff = base + before + int64(bytes.IndexByte(raw[before:], '"'))
		}
		ms = append(ms, jsonMember{Key: key, Value: v, Off: off, KeyOff: keyOff})
	}
	return ms, true
}

// jsonKind is the kind of a JSON value by its first byte: '{', '[', '"',
// 'b' (boolean), 'n' (null) or '0' (number).
func jsonKind(v json.RawMessage) byte {
	if len(v) == 0 {
		return 'n'
	}
	switch v[0] {
	case '{', '[', '"', 'n':
		return v[0]
	case 't', 'f':
		return 'b'
	}
	return '0'
}

func jsonKindName(v json.RawMessage) string {
	switch jsonKind(v) {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 'b':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonScalar returns a string, number or boolean as text; str says it
// was a string.
func jsonScalar(v json.RawMessage) (s string, str, ok bool) {
	switch jsonKind(v) {
	case '"':
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false, false
		}
		return s, true, true
	case '0', 'b':
		return string(v), false, true
	}
	return "", false, false
}

// stripJSONC blanks out // and /* */ comments and trailing commas with
// spaces, keeping every other byte (and so every offset) where it was.
func stripJSONC(src []byte) []byte {
	out := bytes.Clone(src)
	if bytes.HasPrefix(out, []byte("\xef\xbb\xbf")) {
		copy(out, "   ")
	}
	inStr, esc := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return out // left for the JSON parser to report
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		}
	}
	// Trailing commas, now that comments are spaces.
	inStr, esc = false, false
	for i, c := range out {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\r' || out[j] == '\n') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out
}

// entryWhere names an entry inside its container: servers.github, or
// servers["my server"] when the name is not a plain identifier.
func entryWhere(container, name string) string {
	plain := name != ""
	for _, r := range name {
		if !(r == '_' || r == '-' || r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')) {
			plain = false
			break
		}
	}
	if plain {
		return container + "." + name
	}
	return container + "[" + strconv.Quote(name) + "]"
}

// jsonLayout is where a JSON format keeps its servers, and what else its
// top level holds that import reads.
type jsonLayout struct {
	servers string // the key of the object of servers: "mcpServers"
	// others reads the other keys import looks at; found says the key
	// held servers.
	others map[string]func(f *importFile, m jsonMember) (found bool, err error)
	// strict reports every other key: the whole file is the client's MCP
	// configuration, so an unknown key is a mistake, not another tool's.
	strict bool
	// serversLast reads the servers after everything else (VS Code's
	// inputs may follow the servers that use them).
	serversLast bool
}

var (
	// mcpServersLayout is Claude Desktop's, Cursor's and Windsurf's.
	mcpServersLayout = jsonLayout{servers: "mcpServers"}
	// claudeCodeLayout: .mcp.json (mcpServers) and ~/.claude.json
	// (mcpServers, and projects[PATH].mcpServers; every other key of that
	// file is Claude Code's own state and is not looked at).
	claudeCodeLayout = jsonLayout{servers: "mcpServers", others: map[string]func(*importFile, jsonMember) (bool, error){
		"projects": (*importFile).claudeProjects,
	}}
	// vscodeLayout is VS Code's mcp.json: servers and inputs.
	vscodeLayout = jsonLayout{servers: "servers", strict: true, serversLast: true, others: map[string]func(*importFile, jsonMember) (bool, error){
		"inputs": (*importFile).vscodeInputs,
	}}
)

// parse reads a JSON file laid out as l says.
func (l jsonLayout) parse(f *importFile, data []byte) error {
	top, err := decodeJSONFile(f, data)
	if err != nil {
		return err
	}
	found := false
	var later []jsonMember
	for _, m := range top {
		read, known := l.others[m.Key]
		switch {
		case m.Key == l.servers && l.serversLast:
			found = true
			later = append(later, m)
		case m.Key == l.servers:
			found = true
			if err := f.jsonServers(l.servers, m); err != nil {
				return err
			}
		case known:
			got, err := read(f, m)
			if err != nil {
				return err
			}
			found = found || got
		case l.strict:
			f.warn(nil, f.pos(m.KeyOff), "unknown top-level field %q ignored", m.Key)
		}
	}
	if !found {
		f.warn(nil, "", "no %s object, so no servers", l.servers)
	}
	for _, m := range later {
		if err := f.jsonServers(l.servers, m); err != nil {
			return err
		}
	}
	return nil
}

// claudeProjects reads the mcpServers of each project in ~/.claude.json.
func (f *importFile) claudeProjects(m jsonMember) (found bool, err error) {
	projects, ok := jsonMembers(m.Value, m.Off)
	if !ok {
		return false, f.errorAt(m.Off, "projects is %s, not an object", jsonKindName(m.Value))
	}
	for _, p := range projects {
		fields, ok := jsonMembers(p.Value, p.Off)
		if !ok {
			continue // not ours to judge: Claude Code's state
		}
		for _, pm := range fields {
			if pm.Key == "mcpServers" {
				found = true
				if err := f.jsonServers("projects["+strconv.Quote(p.Key)+"].mcpServers", pm); err != nil {
					return found, err
				}
			}
		}
	}
	return found, nil
}

// vscodeInputs reads VS Code's inputs, which ${input:ID} refers to.
func (f *importFile) vscodeInputs(m jsonMember) (found bool, err error) {
	if jsonKind(m.Value) != '[' {
		return false, f.errorAt(m.Off, "inputs is %s, not a list", jsonKindName(m.Value))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(m.Value, &list); err != nil {
		return false, f.errorAt(m.Off, "inputs: %v", err)
	}
	if f.Inputs == nil {
		f.Inputs = map[string]vscodeInput{}
	}
	for i, raw := range list {
		var in struct {
			Type        string `json:"type"`
			ID          string `json:"id"`
			Description string `json:"description"`
			Password    bool   `json:"password"`
		}
		if err := json.Unmarshal(raw, &in); err != nil || in.ID == "" {
			f.warn(nil, f.pos(m.Off), "inputs[%d] has no id; ignored", i)
			continue
		}
		f.Inputs[in.ID] = vscodeInput{Type: in.Type, Description: in.Description, Password: in.Password}
	}
	return false, nil
}

// jsonServers reads one object of server entries.
func (f *importFile) jsonServers(container string, m jsonMember) error {
	entries, ok := jsonMembers(m.Value, m.Off)
	if !ok {
		return f.errorAt(m.Off, "%s is %s, not an object of servers", container, jsonKindName(m.Value))
	}
	for _, s := range entries {
		e := &importEntry{File: f, Where: entryWhere(container, s.Key), Name: s.Key, Pos: f.pos(s.KeyOff)}
		fields, ok := jsonMembers(s.Value, s.Off)
		if !ok {
			f.warn(e, e.Pos, "the entry is %s, not an object; skipped", jsonKindName(s.Value))
			continue
		}
		if f.entryFields(e, fields) {
			f.Entries = append(f.Entries, e)
		}
	}
	return nil
}

// entryFields fills e from its fields. ok is false when the entry cannot
// be imported (a field of the wrong type); the reason is reported.
func (f *importFile) entryFields(e *importEntry, fields []jsonMember) (ok bool) {
	r := &entryReader{f: f, e: e, ok: true}
	for _, m := range fields {
		kind, known := f.Format.fields[m.Key]
		if !known {
			r.warn(m.KeyOff, "unknown field %q ignored", m.Key)
			continue
		}
		fieldReaders[kind](r, m)
	}
	return r.ok
}

// entryReader reads the fields of one entry into it.
type entryReader struct {
	f  *importFile
	e  *importEntry
	ok bool // false once a field makes the entry unusable
}

// fieldReaders reads each kind of field into the entry; each format's
// table in formats.go says which of its fields is of which kind.
var fieldReaders = [...]func(r *entryReader, m jsonMember){
	fieldCommand:     func(r *entryReader, m jsonMember) { r.e.Command, r.e.HasCommand = r.str(m) },
	fieldArgs:        func(r *entryReader, m jsonMember) { r.list(m, &r.e.Args) },
	fieldEnv:         func(r *entryReader, m jsonMember) { r.kvs(m, &r.e.Env, true) },
	fieldEnvFile:     func(r *entryReader, m jsonMember) { r.e.EnvFile, _ = r.str(m) },
	fieldCwd:         func(r *entryReader, m jsonMember) { r.e.Cwd, _ = r.str(m) },
	fieldURL:         func(r *entryReader, m jsonMember) { r.url(m, false) },
	fieldServerURL:   func(r *entryReader, m jsonMember) { r.url(m, true) },
	fieldType:        func(r *entryReader, m jsonMember) { r.e.Type, _ = r.str(m) },
	fieldHeaders:     func(r *entryReader, m jsonMember) { r.kvs(m, &r.e.Headers, false) },
	fieldEnvHeaders:  func(r *entryReader, m jsonMember) { r.kvs(m, &r.e.HeaderEnv, false) },
	fieldBearerEnv:   func(r *entryReader, m jsonMember) { r.e.BearerEnv, _ = r.str(m) },
	fieldEnvVars:     func(r *entryReader, m jsonMember) { r.list(m, &r.e.EnvVars) },
	fieldDisabled:    func(r *entryReader, m jsonMember) { r.boolean(m, &r.e.Disabled, false) },
	fieldEnabled:     func(r *entryReader, m jsonMember) { r.boolean(m, &r.e.Disabled, true) },
	fieldToolTimeout: (*entryReader).toolTimeout,
	fieldNotCarried: func(r *entryReader, m jsonMember) {
		r.warn(m.KeyOff, "%s has no mcphost equivalent; not carried over", m.Key)
	},
}

// warn reports a problem with the member at off (the entry's own
// position when that is unknown).
func (r *entryReader) warn(off int64, format string, args ...any) {
	r.f.warn(r.e, r.f.posIn(r.e, off), format, args...)
}

// bad reports a field of the wrong type, which skips the entry.
func (r *entryReader) bad(m jsonMember, want string) {
	r.warn(m.KeyOff, "%s is %s, not %s; the entry is skipped", m.Key, jsonKindName(m.Value), want)
	r.ok = false
}

// str reads a string; a number or boolean is taken as its text, with a
// warning.
func (r *entryReader) str(m jsonMember) (string, bool) {
	s, isStr, good := jsonScalar(m.Value)
	if !good {
		r.bad(m, "a string")
		return "", false
	}
	if !isStr {
		r.warn(m.KeyOff, "%s is %s; written as the string %q", m.Key, jsonKindName(m.Value), s)
	}
	return s, true
}

// url reads url or, with serverURL, Windsurf's serverUrl, which wins
// when both are given.
func (r *entryReader) url(m jsonMember, serverURL bool) {
	u, good := r.str(m)
	if !good {
		return
	}
	if r.e.HasURL {
		r.warn(m.KeyOff, "url is ignored: serverUrl is set too")
		if serverURL {
			r.e.URL = u
		}
		return
	}
	r.e.URL, r.e.HasURL = u, true
}

func (r *entryReader) list(m jsonMember, into *[]string) {
	list, good := r.f.stringList(r.e, m)
	if !good {
		r.bad(m, "a list of strings")
		return
	}
	*into = list
}

// kvs reads an object of strings (env, headers). A member that is not a
// string, number or boolean is left out, except in env (anyValue), whose
// values are never copied anyway.
func (r *entryReader) kvs(m jsonMember, into *[]importKV, anyValue bool) {
	kvs, good := jsonMembers(m.Value, m.Off)
	if !good {
		r.bad(m, "an object")
		return
	}
	var out []importKV
	for _, kv := range kvs {
		s, isStr, scalar := jsonScalar(kv.Value)
		if !scalar && !anyValue {
			r.warn(kv.KeyOff, "%s[%q] is %s, not a string; left out", m.Key, kv.Key, jsonKindName(kv.Value))
			continue
		}
		out = append(out, importKV{Key: kv.Key, Value: s, Str: isStr, Pos: r.f.posIn(r.e, kv.KeyOff)})
	}
	*into = out
}

// boolean reads a boolean into *into, negated for enabled = false.
func (r *entryReader) boolean(m jsonMember, into *bool, negate bool) {
	var b bool
	if err := json.Unmarshal(m.Value, &b); err != nil || jsonKind(m.Value) != 'b' {
		r.bad(m, "a boolean")
		return
	}
	*into = b != negate
}

// toolTimeout reads Codex's tool_timeout_sec as the call timeout.
func (r *entryReader) toolTimeout(m jsonMember) {
	var secs float64
	if jsonKind(m.Value) != '0' || json.Unmarshal(m.Value, &secs) != nil || secs <= 0 || secs > 1e6 {
		r.warn(m.KeyOff, "%s is not a positive number of seconds; left out", m.Key)
		return
	}
	r.e.CallTimeout = time.Duration(secs * float64(time.Second)).Round(time.Millisecond)
}

// stringList decodes a list of strings; numbers and booleans are taken as
// their text, with a warning.
func (f *importFile) stringList(e *importEntry, m jsonMember) ([]string, bool) {
	if jsonKind(m.Value) != '[' {
		return nil, false
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(m.Value, &raws); err != nil {
		return nil, false
	}
	list := make([]string, 0, len(raws))
	for i, raw := range raws {
		s, isStr, ok := jsonScalar(raw)
		if !ok {
			return nil, false
		}
		if !isStr {
			f.warn(e, f.posIn(e, m.KeyOff), "%s[%d] is %s; written as the string %q", m.Key, i, jsonKindName(raw), s)
		}
		list = append(list, s)
	}
	return list, true
}
