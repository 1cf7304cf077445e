// Command hostilecmd is a test fixture for package wasmserver: a WASI
// command whose misbehaviour is chosen by its first argument.
//
//	flood  writes the start of a JSON-RPC message, then "a" forever, with
//	       no newline, until stdout fails
//	crash  writes a line to stderr and exits with code 3 at start
//	write  writes "written" to the file named by its second argument, and
//	       exits with code 1 and the error on stderr if it cannot
//	spin   a minimal MCP server (hand-written JSON-RPC, no SDK, so the
//	       module stays small) whose tool "spin" never returns and whose
//	       tool "sleep" says "hostilecmd: sleeping" on stderr, then sleeps
//	       for an hour
//
// Build (from wasmserver/testdata/wasm; the tests do this):
//
//	GOOS=wasip1 GOARCH=wasm go build -o hostilecmd.wasm ./hostilecmd
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

var sink uint64 // keeps the busy loop from being optimised away

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "flood":
		flood()
	case "crash":
		fmt.Fprintln(os.Stderr, "hostilecmd: deliberate crash")
		os.Exit(3)
	case "spin":
		serve()
	case "write":
		if err := os.WriteFile(os.Args[2], []byte("written"), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "hostilecmd:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "hostilecmd: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

func flood() {
	os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for {
		if _, err := os.Stdout.Write(chunk); err != nil {
			fmt.Fprintln(os.Stderr, "hostilecmd: stdout:", err)
			os.Exit(1)
		}
	}
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
	} `json:"params"`
}

func serve() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.ID == nil {
			continue // a notification, or garbage
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{
				"protocolVersion": req.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "hostilecmd", "version": "0"},
			}
		case "tools/list":
			schema := map[string]any{"type": "object"}
			result = map[string]any{"tools": []any{
				map[string]any{"name": "spin", "inputSchema": schema},
				map[string]any{"name": "sleep", "inputSchema": schema},
			}}
		case "tools/call":
			if req.Params.Name == "sleep" {
				fmt.Fprintln(os.Stderr, "hostilecmd: sleeping")
				time.Sleep(time.Hour)
			}
			for {
				sink++
			}
		default:
			reply(req.ID, "error", map[string]any{"code": -32601, "message": "method not found"})
			continue
		}
		reply(req.ID, "result", result)
	}
}

func reply(id json.RawMessage, key string, v any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, key: v})
	os.Stdout.Write(append(b, '\n'))
}
