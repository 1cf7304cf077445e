package importcfg

// The client config formats `mcphost import` reads, and their parsers.
//
// Each parser turns one file into importEntry values: the entry's fields as
// the client wrote them, with ${...} references still in place. Translating
// them into mcphost's HCL (convert.go) is the same for every format,
// with the format's dialect of references as an input.
//
// Sources for each format are listed in the final report of issue 15 and in
// the table below; a field that is not in a format's table is reported as
// unknown, never guessed at.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// importDialect is how a client writes references inside string values.
type importDialect int

const (
	// dialectLiteral: the client expands nothing (Claude Desktop, Codex).
	dialectLiteral importDialect = iota
	// dialectShell: ${VAR} and ${VAR:-default} (Claude Code's .mcp.json
	// and ~/.claude.json).
	dialectShell
	// dialectEditor: ${env:NAME} and the editor variables the format
	// allows in Format.vars (Cursor, VS Code, Windsurf).
	dialectEditor
)

// fieldKind says what one field of a server entry means.
type fieldKind int

const (
	fieldCommand fieldKind = iota
	fieldArgs
	fieldEnv
	fieldEnvFile
	fieldCwd
	fieldURL
	fieldServerURL // Windsurf's name for url
	fieldType
	fieldHeaders
	fieldEnvHeaders // Codex env_http_headers: header → variable name
	fieldBearerEnv  // Codex bearer_token_env_var
	fieldEnvVars    // Codex env_vars: variables passed through
	fieldDisabled   // Windsurf: disabled = true
	fieldEnabled    // Codex: enabled = false
	fieldToolTimeout
	fieldNotCarried // known to the client, no mcphost equivalent
)

// Format is one client's config format.
type Format struct {
	Name    string // what `mcphost import -from` takes: "vscode"
	Title   string // for people: "VS Code"
	dialect importDialect
	// vars are the ${NAME} or ${NAME:...} editor variables the client
	// expands, besides env: ("input", "userHome", "workspaceFolder", ...).
	vars   []string
	fields map[string]fieldKind
	parse  func(f *importFile, data []byte) error
}

// importFormats is every format, in the order discovery reports them.
var importFormats = []*Format{
	{
		// modelcontextprotocol.io quickstart (user): mcpServers with
		// command, args, env. type, url and headers are accepted as Claude
		// Code writes them, since the files are often shared.
		Name: "claude", Title: "Claude Desktop", dialect: dialectLiteral,
		fields: map[string]fieldKind{
			"command": fieldCommand, "args": fieldArgs, "env": fieldEnv,
			"type": fieldType, "url": fieldURL, "headers": fieldHeaders,
		},
		parse: parseMCPServers,
	},
	{
		// code.claude.com/docs/en/mcp: .mcp.json (project scope) and
		// ~/.claude.json (user scope at the top, local scope under
		// projects[PATH]); type stdio|http|sse; ${VAR} and ${VAR:-default}
		// in command, args, env, url and headers.
		Name: "claude-code", Title: "Claude Code", dialect: dialectShell,
		fields: map[string]fieldKind{
			"type": fieldType, "command": fieldCommand, "args": fieldArgs, "env": fieldEnv,
			"url": fieldURL, "headers": fieldHeaders, "headersHelper": fieldNotCarried,
		},
		parse: parseClaudeCode,
	},
	{
		// cursor.com/docs/mcp: .cursor/mcp.json and ~/.cursor/mcp.json,
		// mcpServers with command, args, env, envFile or url, headers;
		// ${env:NAME}, ${userHome}, ${workspaceFolder},
		// ${workspaceFolderBasename}, ${pathSeparator} and ${/}.
		Name: "cursor", Title: "Cursor", dialect: dialectEditor,
		vars: []string{"userHome", "workspaceFolder", "workspaceFolderBasename", "pathSeparator", "/"},
		fields: map[string]fieldKind{
			"type": fieldType, "command": fieldCommand, "args": fieldArgs, "env": fieldEnv,
			"envFile": fieldEnvFile, "url": fieldURL, "headers": fieldHeaders, "auth": fieldNotCarried,
		},
		parse: parseMCPServers,
	},
	{
		// code.visualstudio.com/docs/copilot/reference/mcp-configuration:
		// servers with type stdio|http|sse, command, args, env, envFile,
		// url, headers, dev, sandboxEnabled, sandbox; inputs for
		// ${input:ID}; predefined variables such as ${workspaceFolder}.
		Name: "vscode", Title: "VS Code", dialect: dialectEditor,
		vars: []string{"input", "userHome", "workspaceFolder", "workspaceFolderBasename", "pathSeparator", "/"},
		fields: map[string]fieldKind{
			"type": fieldType, "command": fieldCommand, "args": fieldArgs, "env": fieldEnv,
			"envFile": fieldEnvFile, "url": fieldURL, "headers": fieldHeaders,
			"dev": fieldNotCarried, "sandboxEnabled": fieldNotCarried, "sandbox": fieldNotCarried,
		},
		parse: parseVSCode,
	},
	{
		// docs.windsurf.com/windsurf/cascade/mcp: mcpServers in
		// ~/.codeium/windsurf/mcp_config.json, Claude Desktop's schema plus
		// serverUrl (or url) and headers for remote servers; ${env:NAME}
		// in command, args, env, serverUrl, url and headers.
		Name: "windsurf", Title: "Windsurf", dialect: dialectEditor,
		fields: map[string]fieldKind{
			"command": fieldCommand, "args": fieldArgs, "env": fieldEnv,
			"serverUrl": fieldServerURL, "url": fieldURL, "headers": fieldHeaders,
			"disabled": fieldDisabled, "disabledTools": fieldNotCarried,
		},
		parse: parseMCPServers,
	},
	{
		// github.com/openai/codex docs/config.md, "MCP integration":
		// [mcp_servers.NAME] with command, args, env, env_vars, cwd, or url,
		// bearer_token_env_var, http_headers, env_http_headers; and
		// startup_timeout_sec, tool_timeout_sec, enabled, enabled_tools,
		// disabled_tools.
		Name: "codex", Title: "Codex", dialect: dialectLiteral,
		fields: map[string]fieldKind{
			"command": fieldCommand, "args": fieldArgs, "env": fieldEnv, "env_vars": fieldEnvVars,
			"cwd": fieldCwd, "url": fieldURL, "bearer_token_env_var": fieldBearerEnv,
			"http_headers": fieldHeaders, "env_http_headers": fieldEnvHeaders,
			"enabled": fieldEnabled, "tool_timeout_sec": fieldToolTimeout,
			"startup_timeout_sec": fieldNotCarried, "startup_timeout_ms": fieldNotCarried,
			"enabled_tools": fieldNotCarried, "disabled_tools": fieldNotCarried,
		},
		parse: parseCodex,
	},
}

// FormatNamed returns the format called name, or nil.
func FormatNamed(name string) *Format {
	for _, f := range importFormats {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FormatNames returns the name of every format, in the order Discover
// reports them.
func FormatNames() []string {
	var names []string
	for _, f := range importFormats {
		names = append(names, f.Name)
	}
	return names
}

// allows reports whether the format expands the editor variable name.
func (f *Format) allows(name string) bool { return slices.Contains(f.vars, name) }

// maxImportFileSize bounds what import reads: ~/.claude.json holds Claude
// Code's whole state and grows, but not to this.
const maxImportFileSize = 32 << 20

// importFile is one client config file being imported.
type importFile struct {
	Source                         // Format is never nil once parsed
	Inputs  map[string]vscodeInput // VS Code's inputs, by id
	Entries []*importEntry

	src   []byte        // the file, for line:column
	notes *importReport // where warnings go
	last  struct {      // the last position computed: reports go forward
		off       int64
		line, col int
	}
}

// vscodeInput is one entry of VS Code's top-level inputs.
type vscodeInput struct {
	Type, Description string
	Password          bool
}

// importKV is one member of a string map (env, headers), in file order.
type importKV struct {
	Key   string
	Value string
	Str   bool // the value was a JSON or TOML string
	Pos   string
}

// importEntry is one server entry as the client wrote it.
type importEntry struct {
	File  *importFile
	Where string // the entry's place in the file: mcpServers.github
	Name  string // the entry's name there
	Pos   string // "LINE:COL" of the entry, "" when unknown (TOML)

	Type        string
	Command     string
	HasCommand  bool
	URL         string
	HasURL      bool
	Args        []string
	Env         []importKV
	EnvFile     string
	Cwd         string
	Headers     []importKV
	HeaderEnv   []importKV // header → environment variable holding its value
	BearerEnv   string
	EnvVars     []string // passed through from the client's environment
	Disabled    bool
	CallTimeout time.Duration
}

// importPosError is an unreadable file: bad JSON or TOML, or a document
// of the wrong shape, at a line and column.
type importPosError struct {
	File      string
	Line, Col int // 0 when unknown
	Msg       string
}

func (e *importPosError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// lineCol converts a byte offset of src to a 1-based line and column
// (counted in characters).
func lineCol(src []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(src)))
	before := src[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	col = utf8.RuneCount(before[lineStart:]) + 1
	return line, col
}

// pos is the "LINE:COL" of a file offset, "" for a negative one. It
// counts on from the last position asked for, so that a file with many
// reports is not read again for each.
func (f *importFile) pos(off int64) string {
	if off < 0 {
		return ""
	}
	off = min(off, int64(len(f.src)))
	var l, c int
	if f.last.line > 0 && off >= f.last.off {
		seg := f.src[f.last.off:off]
		if nl := bytes.LastIndexByte(seg, '\n'); nl >= 0 {
			l, c = f.last.line+bytes.Count(seg, []byte("\n")), utf8.RuneCount(seg[nl+1:])+1
		} else {
			l, c = f.last.line, f.last.col+utf8.RuneCount(seg)
		}
	} else {
		l, c = lineCol(f.src, off)
	}
	f.last.off, f.last.line, f.last.col = off, l, c
	return fmt.Sprintf("%d:%d", l, c)
}

// posIn is the position of a member of entry e, or e's own when the
// member's is unknown (TOML).
func (f *importFile) posIn(e *importEntry, off int64) string {
	if off < 0 {
		return e.Pos
	}
	return f.pos(off)
}

func (f *importFile) errorAt(off int64, format string, args ...any) error {
	l, c := lineCol(f.src, off)
	return &importPosError{File: f.Display, Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// warn reports a problem with an entry (or the file, for a nil entry)
// that does not stop the import.
func (f *importFile) warn(e *importEntry, pos string, format string, args ...any) {
	where := f.Display
	if pos != "" {
		where += ":" + pos
	}
	if e != nil {
		where += ": " + e.Where
	}
	f.notes.add(f, pos, where+": "+fmt.Sprintf(format, args...))
}

// parseImportFile reads data as a file of format f.Format and fills
// f.Entries. The error is an *importPosError.
func parseImportFile(f *importFile, data []byte) error {
	if len(data) > maxImportFileSize {
		return &importPosError{File: f.Display, Msg: fmt.Sprintf("the file has %d bytes; import reads at most %d", len(data), maxImportFileSize)}
	}
	f.src = data
	return f.Format.parse(f, data)
}

// --- JSON ---

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

// parseMCPServers reads the mcpServers object of Claude Desktop, Cursor
// and Windsurf files.
func parseMCPServers(f *importFile, data []byte) error {
	top, err := decodeJSONFile(f, data)
	if err != nil {
		return err
	}
	found := false
	for _, m := range top {
		if m.Key != "mcpServers" {
			continue
		}
		found = true
		if err := f.jsonServers("mcpServers", m); err != nil {
			return err
		}
	}
	if !found {
		f.warn(nil, "", "no mcpServers object, so no servers")
	}
	return nil
}

// parseClaudeCode reads .mcp.json (mcpServers) and ~/.claude.json
// (mcpServers, and projects[PATH].mcpServers; every other key of that file
// is Claude Code's own state and is not looked at).
func parseClaudeCode(f *importFile, data []byte) error {
	top, err := decodeJSONFile(f, data)
	if err != nil {
		return err
	}
	found := false
	for _, m := range top {
		switch m.Key {
		case "mcpServers":
			found = true
			if err := f.jsonServers("mcpServers", m); err != nil {
				return err
			}
		case "projects":
			projects, ok := jsonMembers(m.Value, m.Off)
			if !ok {
				return f.errorAt(m.Off, "projects is %s, not an object", jsonKindName(m.Value))
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
							return err
						}
					}
				}
			}
		}
	}
	if !found {
		f.warn(nil, "", "no mcpServers object, so no servers")
	}
	return nil
}

// parseVSCode reads VS Code's mcp.json: servers and inputs.
func parseVSCode(f *importFile, data []byte) error {
	top, err := decodeJSONFile(f, data)
	if err != nil {
		return err
	}
	f.Inputs = map[string]vscodeInput{}
	var servers []jsonMember
	for _, m := range top {
		switch m.Key {
		case "servers":
			servers = append(servers, m)
		case "inputs":
			if err := f.vscodeInputs(m); err != nil {
				return err
			}
		default:
			f.warn(nil, f.pos(m.KeyOff), "unknown top-level field %q ignored", m.Key)
		}
	}
	if len(servers) == 0 {
		f.warn(nil, "", "no servers object, so no servers")
	}
	for _, m := range servers {
		if err := f.jsonServers("servers", m); err != nil {
			return err
		}
	}
	return nil
}

func (f *importFile) vscodeInputs(m jsonMember) error {
	if jsonKind(m.Value) != '[' {
		return f.errorAt(m.Off, "inputs is %s, not a list", jsonKindName(m.Value))
	}
	var list []json.RawMessage
	if err := json.Unmarshal(m.Value, &list); err != nil {
		return f.errorAt(m.Off, "inputs: %v", err)
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
	return nil
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
	ok = true
	bad := func(m jsonMember, want string) {
		f.warn(e, f.posIn(e, m.KeyOff), "%s is %s, not %s; the entry is skipped", m.Key, jsonKindName(m.Value), want)
		ok = false
	}
	str := func(m jsonMember) (string, bool) {
		s, isStr, good := jsonScalar(m.Value)
		if !good {
			bad(m, "a string")
			return "", false
		}
		if !isStr {
			f.warn(e, f.posIn(e, m.KeyOff), "%s is %s; written as the string %q", m.Key, jsonKindName(m.Value), s)
		}
		return s, true
	}
	for _, m := range fields {
		kind, known := f.Format.fields[m.Key]
		if !known {
			f.warn(e, f.posIn(e, m.KeyOff), "unknown field %q ignored", m.Key)
			continue
		}
		switch kind {
		case fieldCommand:
			e.Command, e.HasCommand = str(m)
		case fieldURL, fieldServerURL:
			u, good := str(m)
			if !good {
				continue
			}
			if e.HasURL {
				// Both url and serverUrl (Windsurf): serverUrl wins.
				f.warn(e, f.posIn(e, m.KeyOff), "url is ignored: serverUrl is set too")
				if kind == fieldServerURL {
					e.URL = u
				}
				continue
			}
			e.URL, e.HasURL = u, true
		case fieldType:
			e.Type, _ = str(m)
		case fieldEnvFile:
			e.EnvFile, _ = str(m)
		case fieldCwd:
			e.Cwd, _ = str(m)
		case fieldBearerEnv:
			e.BearerEnv, _ = str(m)
		case fieldArgs, fieldEnvVars:
			list, good := f.stringList(e, m)
			if !good {
				bad(m, "a list of strings")
				continue
			}
			if kind == fieldArgs {
				e.Args = list
			} else {
				e.EnvVars = list
			}
		case fieldEnv, fieldHeaders, fieldEnvHeaders:
			kvs, good := jsonMembers(m.Value, m.Off)
			if !good {
				bad(m, "an object")
				continue
			}
			var out []importKV
			for _, kv := range kvs {
				s, isStr, scalar := jsonScalar(kv.Value)
				if !scalar && kind != fieldEnv {
					f.warn(e, f.posIn(e, kv.KeyOff), "%s[%q] is %s, not a string; left out", m.Key, kv.Key, jsonKindName(kv.Value))
					continue
				}
				out = append(out, importKV{Key: kv.Key, Value: s, Str: isStr, Pos: f.posIn(e, kv.KeyOff)})
			}
			switch kind {
			case fieldEnv:
				e.Env = out
			case fieldHeaders:
				e.Headers = out
			case fieldEnvHeaders:
				e.HeaderEnv = out
			}
		case fieldDisabled, fieldEnabled:
			var b bool
			if err := json.Unmarshal(m.Value, &b); err != nil || jsonKind(m.Value) != 'b' {
				bad(m, "a boolean")
				continue
			}
			if kind == fieldDisabled {
				e.Disabled = b
			} else {
				e.Disabled = !b
			}
		case fieldToolTimeout:
			var secs float64
			if jsonKind(m.Value) != '0' || json.Unmarshal(m.Value, &secs) != nil || secs <= 0 || secs > 1e6 {
				f.warn(e, f.posIn(e, m.KeyOff), "%s is not a positive number of seconds; left out", m.Key)
				continue
			}
			e.CallTimeout = time.Duration(secs * float64(time.Second)).Round(time.Millisecond)
		case fieldNotCarried:
			f.warn(e, f.posIn(e, m.KeyOff), "%s has no mcphost equivalent; not carried over", m.Key)
		}
	}
	return ok
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

// --- TOML (Codex) ---

// parseCodex reads the [mcp_servers.NAME] tables of Codex's config.toml;
// the rest of the file is Codex's own configuration.
func parseCodex(f *importFile, data []byte) error {
	var doc struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return &importPosError{File: f.Display, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "invalid TOML: " + pe.Message}
		}
		return &importPosError{File: f.Display, Msg: "invalid TOML: " + err.Error()}
	}
	if !md.IsDefined("mcp_servers") {
		f.warn(nil, "", "no [mcp_servers] tables, so no servers")
		return nil
	}
	// The order of the file, from the keys as they were defined.
	var names []string
	fieldOrder := map[string][]string{}
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "mcp_servers" {
			continue
		}
		if !slices.Contains(names, k[1]) {
			names = append(names, k[1])
		}
		if len(k) == 3 && !slices.Contains(fieldOrder[k[1]], k[2]) {
			fieldOrder[k[1]] = append(fieldOrder[k[1]], k[2])
		}
	}
	for name := range doc.MCPServers {
		if !slices.Contains(names, name) {
			names = append(names, name) // not reached: every key is in md.Keys
		}
	}
	for _, name := range names {
		raw, present := doc.MCPServers[name]
		if !present {
			continue
		}
		e := &importEntry{File: f, Where: entryWhere("mcp_servers", name), Name: name, Pos: codexTablePos(data, name)}
		table, ok := raw.(map[string]any)
		if !ok {
			f.warn(e, "", "the entry is not a table; skipped")
			continue
		}
		order := fieldOrder[name]
		for k := range table {
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
		var fields []jsonMember
		for _, k := range order {
			v, present := table[k]
			if !present {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				f.warn(e, "", "%s cannot be read: %v; left out", k, err)
				continue
			}
			fields = append(fields, jsonMember{Key: k, Value: b, Off: -1, KeyOff: -1})
		}
		if f.entryFields(e, fields) {
			f.Entries = append(f.Entries, e)
		}
	}
	return nil
}

// codexTablePos finds the [mcp_servers.NAME] header of a server, for
// reports: "LINE:1", or "" when the table is written some other way.
func codexTablePos(data []byte, name string) string {
	q := regexp.QuoteMeta(name)
	re, err := regexp.Compile(`(?m)^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:` + q + `|"` + q + `"|'` + q + `')[ \t]*\]`)
	if err != nil {
		return ""
	}
	loc := re.FindIndex(data)
	if loc == nil {
		return ""
	}
	return fmt.Sprintf("%d:1", bytes.Count(data[:loc[0]], []byte("\n"))+1)
}

// --- format detection ---

// detectImportFormat picks the format of a file named on the command line
// from its name, and from its contents when the name says nothing. guessed
// is true when only the contents decided.
func detectImportFormat(path string, data []byte) (format *Format, guessed bool, err error) {
	base := filepath.Base(path)
	parent := filepath.Base(filepath.Dir(path))
	switch {
	case base == "claude_desktop_config.json":
		return FormatNamed("claude"), false, nil
	case base == ".claude.json" || base == ".mcp.json":
		return FormatNamed("claude-code"), false, nil
	case base == "mcp_config.json":
		return FormatNamed("windsurf"), false, nil
	case strings.HasSuffix(base, ".toml"):
		return FormatNamed("codex"), false, nil
	case base == "mcp.json" && parent == ".vscode":
		return FormatNamed("vscode"), false, nil
	case base == "mcp.json" && parent == ".cursor":
		return FormatNamed("cursor"), false, nil
	}
	// By contents: the top-level keys, and serverUrl for Windsurf.
	var top map[string]json.RawMessage
	if json.Unmarshal(stripJSONC(data), &top) != nil {
		return nil, false, errors.New("the format cannot be told from the file's name, and it is not a JSON object; name the format with -from")
	}
	if _, ok := top["servers"]; ok {
		return FormatNamed("vscode"), true, nil
	}
	if _, ok := top["projects"]; ok {
		return FormatNamed("claude-code"), true, nil
	}
	if raw, ok := top["mcpServers"]; ok {
		var servers map[string]map[string]json.RawMessage
		_ = json.Unmarshal(raw, &servers)
		for _, s := range servers {
			if _, ok := s["serverUrl"]; ok {
				return FormatNamed("windsurf"), true, nil
			}
		}
		return FormatNamed("claude"), true, nil
	}
	return nil, false, errors.New("the file has neither mcpServers nor servers; name the format with -from")
}
