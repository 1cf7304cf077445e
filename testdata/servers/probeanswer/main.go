// Command probeanswer is a raw newline-delimited JSON-RPC MCP server on
// stdin/stdout that answers the server/discover probe with a canned,
// configurable response and otherwise behaves as a minimal legacy server.
// negotiate tests use it for the fallback, classification and reaping
// scenarios of protocol.md §4.1.
//
// Build (from the module root):
//
//	go build -o probeanswer ./testdata/servers/probeanswer
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/probeanswer")
//
// server/discover answers (-discover):
//
//	error          a JSON-RPC error with -code (default -32601), -message, and,
//	               when -supported is set, data {"supported": [...],
//	               "requested": <the probe's version>}
//	malformed      a result that is no DiscoverResult
//	               ({"supportedVersions": "2026-07-28"})
//	truncated      half a JSON line carrying the probe's id, then nothing
//	huge           a DiscoverResult offering 2026-07-28 whose instructions
//	               make the line about -huge-bytes (default 2 MiB)
//	legacy-result  a DiscoverResult offering only 2025-11-25 and 2025-06-18
//	exit           writes "probeanswer: exiting on server/discover" to stderr
//	               and exits 5 without answering
//	silent         no answer at all
//
// Legacy behaviour: initialize answers protocolVersion "2025-11-25" with the
// tools capability and serverInfo {probeanswer, 1.0.0}; ping; tools/list
// holds one tool, hello; tools/call hello answers the text
// "hello from probeanswer"; notifications are ignored; any other request
// gets -32601.
//
// Other flags:
//
//	-noise        before answering server/discover, write a banner line, a
//	              notification, a server request and a response to a foreign
//	              id (none of which is the answer)
//	-boot D       sleep D before reading stdin (a slow starter)
//	-record FILE  append one JSON line per received request or notification:
//	              {"pid": N, "method": "...", "call": true|false,
//	              "meta": <params._meta or null>}
//
// The process exits 0 when stdin closes.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

const exitCodeOnProbe = 5

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

type options struct {
	discover  string
	code      int
	message   string
	supported string
	hugeBytes int
	noise     bool
	boot      time.Duration
	record    string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("probeanswer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.discover, "discover", "error", "`answer` to server/discover: error, malformed, truncated, huge, legacy-result, exit or silent")
	fs.IntVar(&o.code, "code", -32601, "JSON-RPC error `code` of -discover error")
	fs.StringVar(&o.message, "message", "", "error message of -discover error (default: a text naming the code)")
	fs.StringVar(&o.supported, "supported", "", "comma-separated `versions` for the error's data.supported")
	fs.IntVar(&o.hugeBytes, "huge-bytes", 2<<20, "approximate size in `bytes` of the -discover huge answer")
	fs.BoolVar(&o.noise, "noise", false, "write a banner, a notification, a request and a foreign response before the answer")
	fs.DurationVar(&o.boot, "boot", 0, "sleep this long before reading stdin")
	fs.StringVar(&o.record, "record", "", "append received frames to `file`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch o.discover {
	case "error", "malformed", "truncated", "huge", "legacy-result", "exit", "silent":
	default:
		fmt.Fprintf(stderr, "probeanswer: unknown -discover %q\n", o.discover)
		return 2
	}
	var rec *os.File
	if o.record != "" {
		f, err := os.OpenFile(o.record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(stderr, "probeanswer: %v\n", err)
			return 1
		}
		defer f.Close()
		rec = f
	}
	if o.boot > 0 {
		time.Sleep(o.boot)
	}

	out := bufio.NewWriter(stdout)
	br := bufio.NewReader(stdin)
	for {
		line, err := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var msg message
			if json.Unmarshal(line, &msg) == nil {
				record(rec, msg)
				if msg.Method == "server/discover" && o.discover == "exit" {
					fmt.Fprintln(stderr, "probeanswer: exiting on server/discover")
					return exitCodeOnProbe
				}
				handle(out, o, msg)
			} else {
				send(out, map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{Code: -32700, Message: "parse error"}})
			}
			if out.Flush() != nil {
				return 1
			}
		}
		if err != nil {
			return 0
		}
	}
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
}

func (m message) isCall() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func record(f *os.File, msg message) {
	if f == nil || msg.Method == "" {
		return
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p)
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "method": msg.Method, "call": msg.isCall(), "meta": p.Meta})
	f.Write(append(b, '\n'))
}

func send(w *bufio.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Write(b)
	w.WriteByte('\n')
}

func handle(out *bufio.Writer, o options, msg message) {
	if !msg.isCall() {
		return // a notification or a response
	}
	reply := func(result any) {
		send(out, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	}
	replyErr := func(e rpcError) {
		send(out, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": e})
	}
	switch msg.Method {
	case "server/discover":
		discover(out, o, msg, reply, replyErr)
	case "initialize":
		reply(map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "probeanswer", "version": "1.0.0"},
		})
	case "ping":
		reply(map[string]any{})
	case "tools/list":
		reply(map[string]any{"tools": []any{map[string]any{
			"name": "hello", "description": "Says hello.", "inputSchema": map[string]any{"type": "object"},
		}}})
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		if p.Name != "hello" {
			replyErr(rpcError{Code: -32602, Message: "unknown tool " + strconv.Quote(p.Name)})
			return
		}
		reply(map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello from probeanswer"}}})
	default:
		replyErr(rpcError{Code: -32601, Message: "method not found: " + msg.Method})
	}
}

func discover(out *bufio.Writer, o options, msg message, reply func(any), replyErr func(rpcError)) {
	if o.noise {
		fmt.Fprintln(out, "probeanswer 1.0.0 starting (a banner on stdout)")
		send(out, map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": "booting"}})
		send(out, map[string]any{"jsonrpc": "2.0", "id": "server-1", "method": "roots/list"})
		send(out, map[string]any{"jsonrpc": "2.0", "id": "someone-else", "result": map[string]any{
			"supportedVersions": []string{"2026-07-28"}, "capabilities": map[string]any{}}})
	}
	switch o.discover {
	case "error":
		e := rpcError{Code: o.code, Message: o.message}
		if e.Message == "" {
			e.Message = fmt.Sprintf("probeanswer: error %d", o.code)
		}
		if o.supported != "" {
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			e.Data = map[string]any{
				"supported": strings.Split(o.supported, ","),
				"requested": p.Meta["io.modelcontextprotocol/protocolVersion"],
			}
		}
		replyErr(e)
	case "malformed":
		reply(map[string]any{"supportedVersions": "2026-07-28"})
	case "truncated":
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-`+"\n", msg.ID)
	case "huge":
		reply(map[string]any{
			"supportedVersions": []string{"2026-07-28", "2025-11-25"},
			"capabilities":      map[string]any{"tools": map[string]any{}},
			"instructions":      strings.Repeat("x", o.hugeBytes),
		})
	case "legacy-result":
		reply(map[string]any{
			"supportedVersions": []string{"2025-11-25", "2025-06-18"},
			"capabilities":      map[string]any{"tools": map[string]any{}},
		})
	case "silent":
	}
}
