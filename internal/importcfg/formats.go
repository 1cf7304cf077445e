package importcfg

// The client config formats `mcphost import` reads. Their parsers are in
// json.go and codex.go.
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
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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
			"disabled": fieldDisabled, // written by Cline's schema, which many files share
		},
		parse: mcpServersLayout.parse,
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
			"disabled": fieldDisabled,
		},
		parse: claudeCodeLayout.parse,
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
			"disabled": fieldDisabled,
		},
		parse: mcpServersLayout.parse,
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
		parse: vscodeLayout.parse,
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
		parse: mcpServersLayout.parse,
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
