// Command misbehave is a raw newline-delimited JSON-RPC "MCP server" on
// stdin/stdout, written without the SDK so that it can break the protocol on
// purpose. Tests use it to check that a client survives servers that exit,
// hang, lie or loop.
//
// Build (from the module root):
//
//	go build -o misbehave ./testdata/servers/misbehave
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/misbehave")
//
// Modes (-mode):
//
//	ok               minimal correct server: initialize (protocolVersion
//	                 "2025-11-25"; tools, prompts and resources
//	                 capabilities), ping, tools/list in three pages (cursors
//	                 "p2", "p3", then none; tools hello, two, three),
//	                 tools/call hello → text "hello from raw", empty
//	                 prompts/list, resources/list and resources/templates/list;
//	                 other requests → -32601, notifications are ignored
//	exit             writes "fixture: exiting" to stderr and exits 3 at once
//	npm-404          writes what npx prints for a package the registry does
//	                 not have (with a log path that names the current time,
//	                 and npm's update notice after it) and exits 1 at once
//	garbage          answers every input line with a non-JSON line
//	silent           reads stdin and never answers
//	slow-init        answers initialize only after -delay, then behaves like ok
//	repeat-cursor    like ok, but every tools/list page holds the tool "loop"
//	                 and nextCursor "same", forever
//	crash-after-init like ok, but exits 4 200ms after answering initialize
//	hostile          like ok, but every string it supplies is hostile to a
//	                 terminal or a web page (see hostileTools): a serverInfo
//	                 version and instructions with escape sequences, one
//	                 tools/list page whose admissible tools (greet,
//	                 dotted.name-1_A) have titles and descriptions with
//	                 ESC, BEL, NUL, CR, U+202E and HTML, and whose other
//	                 tools break the MCP spec's tool-name rule or repeat a
//	                 name; tools/call greet → a text with escape sequences
//	                 and a resource link with hostile name and URI,
//	                 dotted.name-1_A → a JSON-RPC error whose message has
//	                 them, and any other listed name answers as well (the
//	                 host must not let it through)
//	log-flood        like ok, but tools/list is one page (hello, flood);
//	                 tools/call flood {"n": N, "huge": B} first sends one
//	                 notifications/message whose data is a string of B bytes,
//	                 then N small ones, then a ping request (id
//	                 "fixture-ping"), and answers the call only after the
//	                 client has answered the ping (so every notification was
//	                 handled before the call returns)
//	stray-id         like ok, but tools/list is one page (hello, wrong-id,
//	                 string-id, null-id, hold); tools/call wrong-id is
//	                 answered with id 987654321 (a number never sent),
//	                 string-id with id "abc", null-id with an error whose id
//	                 is null; hold sends one notifications/progress (when the
//	                 call has a progress token) and is never answered
//	bad-schema       like ok, but tools/list is one page: hello, and
//	                 remote-ref, whose input schema has a $ref to a remote
//	                 URL (it does not compile without fetching it)
//
// Other flags:
//
//	-delay D          the slow-init delay (default 2s)
//	-stderr-lines N   first write N lines of about 100 bytes to stderr
//	-stderr-hostile   first write one stderr line with ESC, BEL, U+202E and
//	                  a byte of invalid UTF-8 (with -mode exit: in the tail
//	                  the client reports)
//	-hold             keep running after stdin closes, until killed
//	-ignore-sigterm   ignore SIGTERM (with -hold, only SIGKILL ends it)
//
// Without -hold the process exits 0 when stdin closes.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// Exit codes a test can expect.
const (
	exitCodeExit  = 3 // -mode exit
	exitCodeCrash = 4 // -mode crash-after-init
)

const crashDelay = 200 * time.Millisecond

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	mode          string
	delay         time.Duration
	stderrLines   int
	stderrHostile bool
	hold          bool
	ignoreSigterm bool
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("misbehave", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.mode, "mode", "ok", "`behaviour`: ok, exit, npm-404, garbage, silent, slow-init, repeat-cursor, crash-after-init, hostile, log-flood, stray-id or bad-schema")
	fs.DurationVar(&o.delay, "delay", 2*time.Second, "how long slow-init waits before answering initialize")
	fs.IntVar(&o.stderrLines, "stderr-lines", 0, "write `n` lines of about 100 bytes to stderr at start")
	fs.BoolVar(&o.stderrHostile, "stderr-hostile", false, "write one stderr line with escape sequences at start")
	fs.BoolVar(&o.hold, "hold", false, "keep running after stdin closes, until killed")
	fs.BoolVar(&o.ignoreSigterm, "ignore-sigterm", false, "ignore SIGTERM")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch o.mode {
	case "ok", "exit", "npm-404", "garbage", "silent", "slow-init", "repeat-cursor", "crash-after-init", "hostile", "log-flood", "stray-id", "bad-schema":
	default:
		fmt.Fprintf(stderr, "misbehave: unknown -mode %q\n", o.mode)
		return 2
	}
	if o.ignoreSigterm {
		signal.Ignore(syscall.SIGTERM)
	}

	// Unbuffered: each line goes straight to the pipe, in order.
	for i := 1; i <= o.stderrLines; i++ {
		line := fmt.Sprintf("fixture: stderr line %06d ", i)
		fmt.Fprintln(stderr, line+strings.Repeat("x", 99-len(line)))
	}
	if o.stderrHostile {
		fmt.Fprintln(stderr, hostileStderr)
	}

	if o.mode == "exit" {
		fmt.Fprintln(stderr, "fixture: exiting")
		return exitCodeExit
	}
	if o.mode == "npm-404" {
		stamp := time.Now().UTC().Format("2006-01-02T15_04_05.000Z")
		fmt.Fprintln(stderr, "npm error code E404")
		fmt.Fprintln(stderr, "npm error 404 Not Found - GET http://127.0.0.1:9/@fixture%2fnope - Not found")
		fmt.Fprintln(stderr, "npm error 404  '@fixture/nope@*' is not in this registry.")
		fmt.Fprintf(stderr, "npm error A complete log of this run can be found in: /root/.npm/_logs/%s-debug-0.log\n", stamp)
		fmt.Fprintln(stderr, "npm notice New minor version of npm available! 10.8.2 -> 10.9.0")
		fmt.Fprintln(stderr, "npm notice To update run: npm install -g npm@10.9.0")
		return 1
	}

	lines := make(chan []byte)
	go readLines(stdin, lines)
	s := &server{opts: o, out: bufio.NewWriter(stdout), lines: lines}

	var crash <-chan time.Time
	for {
		select {
		case <-crash:
			fmt.Fprintln(stderr, "fixture: crashing after init")
			return exitCodeCrash
		case line, ok := <-lines:
			if !ok {
				if o.hold {
					select {} // until a signal ends the process
				}
				return 0
			}
			if s.handleLine(line) && o.mode == "crash-after-init" && crash == nil {
				crash = time.After(crashDelay)
			}
			if err := s.out.Flush(); err != nil {
				return 1 // the client went away
			}
		}
	}
}

// readLines sends each non-empty line of r, then closes lines at EOF.
func readLines(r io.Reader, lines chan<- []byte) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			lines <- line
		}
		if err != nil {
			close(lines)
			return
		}
	}
}

type server struct {
	opts  options
	out   *bufio.Writer
	lines <-chan []byte // the client's lines, for a tool that waits for an answer
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// handleLine handles one inbound line and reports whether it was an
// initialize request that got answered.
func (s *server) handleLine(line []byte) (initialized bool) {
	switch s.opts.mode {
	case "silent":
		return false
	case "garbage":
		fmt.Fprintln(s.out, "this is not JSON {{{ <garbage> ]]]")
		return false
	}

	var msg message
	if err := json.Unmarshal(line, &msg); err != nil || msg.JSONRPC != "2.0" {
		s.send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error"}})
		return false
	}
	isRequest := len(msg.ID) > 0 && string(msg.ID) != "null"
	if msg.Method == "" || !isRequest {
		return false // a response or a notification: nothing to say
	}

	if answer, ok := s.strayAnswer(msg); ok {
		if answer != nil {
			s.send(answer)
		}
		return false
	}
	result, rerr := s.handle(msg)
	if rerr != nil {
		s.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": rerr})
		return false
	}
	s.send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	return msg.Method == "initialize"
}

func (s *server) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own values are marshalled
	}
	s.out.Write(b)
	s.out.WriteByte('\n')
}

type tool struct {
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

// The hostile strings of -mode hostile and -stderr-hostile. json.Marshal
// sends C0 controls as \u escapes and U+202E raw; the client decodes both
// back to the raw characters.
const (
	hostileStderr      = "fixture: \x1b[31mred stderr\x07 \u202eesrever \xff end"
	hostileVersion     = "1.0.0\x1b[5m"
	hostileInstruction = "Read me.\x1b]0;owned\x07"
	hostileTitle       = "<img src=x onerror=alert(1)>\u202eevil"
	hostileDesc        = "Says hi.\x1b[2J\x07\x00\rEVIL"
	hostileText        = "hello\x1b]0;pwned\x07\r\n\tindented \u202eend"
	hostileError       = "boom\x1b[31m \u202edeen"
)

// hostileTools is the tools/list page of -mode hostile: two tools the host
// admits (greet, dotted.name-1_A), then a repeat of greet and names that
// break the MCP spec's tool-name rule.
func hostileTools() []tool {
	schema := map[string]any{"type": "object"}
	return []tool{
		{Name: "greet", Title: hostileTitle, Description: hostileDesc, InputSchema: schema},
		{Name: "dotted.name-1_A", Title: "Fails \u202eloudly", Description: "Returns an error.", InputSchema: schema},
		{Name: "greet", Title: "the second greet", Description: "A repeat.", InputSchema: schema},
		{Name: "esc\x1b[31mname", Description: "ESC in the name.", InputSchema: schema},
		{Name: "rlo\u202etxt.exe", Description: "U+202E in the name.", InputSchema: schema},
		{Name: "nul\x00cr\rbel\x07", Description: "NUL, CR and BEL in the name.", InputSchema: schema},
		{Name: "has space", Description: "A space in the name.", InputSchema: schema},
		{Name: "<b>html</b>", Description: "HTML in the name.", InputSchema: schema},
		{Name: "", Description: "No name.", InputSchema: schema},
		{Name: strings.Repeat("x", 129), Description: "A name of 129 characters.", InputSchema: schema},
	}
}

func newTool(name string) tool {
	return tool{Name: name, Description: "The raw fixture's " + name + " tool.", InputSchema: map[string]any{"type": "object"}}
}

// pages are the tools/list pages of -mode ok, keyed by cursor.
var pages = map[string]struct {
	tool, next string
}{
	"":   {"hello", "p2"},
	"p2": {"two", "p3"},
	"p3": {"three", ""},
}

func (s *server) handle(msg message) (any, *rpcError) {
	var params struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Cursor          string         `json:"cursor"`
		Name            string         `json:"name"`
		Arguments       map[string]any `json:"arguments"`
		Meta            struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &params); err != nil {
			return nil, &rpcError{-32602, "invalid params: " + err.Error()}
		}
	}

	switch msg.Method {
	case "initialize":
		if s.opts.mode == "slow-init" {
			time.Sleep(s.opts.delay)
		}
		version := "2025-11-25"
		if params.ProtocolVersion == version {
			version = params.ProtocolVersion
		}
		res := map[string]any{
			"protocolVersion": version,
			"capabilities": map[string]any{
				"tools":     map[string]any{},
				"prompts":   map[string]any{},
				"resources": map[string]any{},
			},
			"serverInfo": map[string]any{"name": "misbehave", "version": "1.0.0"},
		}
		if s.opts.mode == "hostile" {
			res["serverInfo"] = map[string]any{"name": "misbehave", "version": hostileVersion}
			res["instructions"] = hostileInstruction
		}
		return res, nil

	case "ping":
		return map[string]any{}, nil

	case "tools/list":
		switch s.opts.mode {
		case "repeat-cursor":
			return map[string]any{"tools": []tool{newTool("loop")}, "nextCursor": "same"}, nil
		case "log-flood":
			return map[string]any{"tools": []tool{newTool("hello"), newTool("flood")}}, nil
		case "stray-id":
			return map[string]any{"tools": []tool{newTool("hello"), newTool("wrong-id"), newTool("string-id"), newTool("null-id"), newTool("hold")}}, nil
		case "bad-schema":
			remote := newTool("remote-ref")
			remote.InputSchema = map[string]any{"type": "object", "properties": map[string]any{
				"a": map[string]any{"$ref": "https://schemas.example.com/a.json"}}}
			return map[string]any{"tools": []tool{newTool("hello"), remote}}, nil
		}
		if s.opts.mode == "hostile" {
			return map[string]any{"tools": hostileTools()}, nil
		}
		p, ok := pages[params.Cursor]
		if !ok {
			return nil, &rpcError{-32602, fmt.Sprintf("invalid cursor %q", params.Cursor)}
		}
		res := map[string]any{"tools": []tool{newTool(p.tool)}}
		if p.next != "" {
			res["nextCursor"] = p.next
		}
		return res, nil

	case "tools/call":
		if s.opts.mode == "hostile" {
			return s.hostileCall(params.Name, params.Meta.ProgressToken)
		}
		switch params.Name {
		case "hello", "two", "three", "loop", "remote-ref":
			return map[string]any{
				"content": []map[string]any{{"type": "text", "text": params.Name + " from raw"}},
			}, nil
		case "flood":
			if s.opts.mode == "log-flood" {
				return s.flood(intArg(params.Arguments, "n"), intArg(params.Arguments, "huge"))
			}
		}
		return nil, &rpcError{-32602, fmt.Sprintf("unknown tool %q", params.Name)}

	case "prompts/list":
		return map[string]any{"prompts": []any{}}, nil
	case "resources/list":
		return map[string]any{"resources": []any{}}, nil
	case "resources/templates/list":
		return map[string]any{"resourceTemplates": []any{}}, nil
	}
	return nil, &rpcError{-32601, "method not found: " + msg.Method}
}

// hostileCall answers tools/call in -mode hostile. With a progress token it
// first sends one progress notification with a hostile message.
func (s *server) hostileCall(name string, progressToken any) (any, *rpcError) {
	if progressToken != nil {
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
			"progressToken": progressToken, "progress": 1, "total": 2, "message": "step\x1b[2K\u202e",
		}})
	}
	switch name {
	case "dotted.name-1_A":
		return nil, &rpcError{-32603, hostileError}
	case "greet":
		return map[string]any{"content": []map[string]any{
			{"type": "text", "text": hostileText},
			{"type": "resource_link", "uri": "file:///tmp/\u202exyz", "name": "link\x1b[1m"},
		}}, nil
	}
	// A tool the host should have refused to call: answer so that a test
	// sees the call got through.
	return map[string]any{"content": []map[string]any{{"type": "text", "text": "called " + name}}}, nil
}

// strayAnswer handles the tools/call requests of -mode stray-id: it
// reports whether msg is one of them and returns the answer to send, whose
// id is never the request's; nil means no answer (hold).
func (s *server) strayAnswer(msg message) (answer map[string]any, ok bool) {
	if s.opts.mode != "stray-id" || msg.Method != "tools/call" {
		return nil, false
	}
	var params struct {
		Name string `json:"name"`
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(msg.Params, &params) != nil {
		return nil, false
	}
	result := func(id any) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"content": []map[string]any{{"type": "text", "text": params.Name + " from raw"}},
		}}
	}
	switch params.Name {
	case "wrong-id":
		return result(987654321), true
	case "string-id":
		return result("abc"), true
	case "null-id":
		return map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32603, "fixture: an answer with a null id"}}, true
	case "hold":
		if params.Meta.ProgressToken != nil {
			s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
				"params": map[string]any{"progressToken": params.Meta.ProgressToken, "progress": 0, "message": "holding"}})
		}
		return nil, true
	}
	return nil, false
}

// flood sends one log message of huge bytes and n small ones, then pings
// the client and waits for its answer before returning the result: the
// client handles its incoming messages in order, so by then it has handled
// every log message.
func (s *server) flood(n, huge int) (any, *rpcError) {
	logMsg := func(data string) {
		s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "logger": "fixture", "data": data}})
	}
	if huge > 0 {
		logMsg(strings.Repeat("h", huge))
	}
	for i := 1; i <= n; i++ {
		logMsg(fmt.Sprintf("fixture: log message %06d", i))
	}
	s.send(map[string]any{"jsonrpc": "2.0", "id": "fixture-ping", "method": "ping"})
	if err := s.out.Flush(); err != nil {
		return nil, &rpcError{-32603, "flush: " + err.Error()}
	}
	for line := range s.lines {
		var m message
		if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == `"fixture-ping"` {
			return map[string]any{
				"content": []map[string]any{{"type": "text", "text": fmt.Sprintf("sent %d log messages", n+min(huge, 1))}},
			}, nil
		}
	}
	return nil, &rpcError{-32603, "the client went away before answering the ping"}
}

// intArg reads a whole-number argument (0 when absent or not a number).
func intArg(args map[string]any, name string) int {
	f, _ := args[name].(float64)
	return int(f)
}
