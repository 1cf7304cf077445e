//go:build wasip1

// Command extism-echo is an MCP server for mcphost's `wasm` servers written
// as an Extism plugin with hyper-mcp's v2 ABI: it exports list_tools and
// call_tool, each taking and returning JSON. Its tools:
//
//	echo {text}          returns text, after the config key "prefix" if set
//	                     (the server block's env = { prefix = "..." })
//	read_file {path}     returns the file's content; only the directories the
//	                     server block grants are visible, at the same path
//	fetch_status {url}   GETs url through the host and returns the HTTP
//	                     status; the host refuses every host the block's
//	                     allow_hosts does not name
//
// Build (from examples/wasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o echo-plugin.wasm ./extism-echo
//
// -buildmode=c-shared makes a WASI reactor, which is what Extism loads. The
// build constraint keeps this wasm-only package out of a native
// `go vet ./...` of the module.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/extism/go-pdk"
)

func main() {}

// tools is list_tools's answer: an MCP ListToolsResult.
const tools = `{"tools":[
{"name":"echo","description":"Returns its text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
{"name":"read_file","description":"Returns a file's content.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},
{"name":"fetch_status","description":"Fetches a URL and returns the HTTP status.","inputSchema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}
]}`

// callInput is call_tool's input: {"request": CallToolParams, "context": {...}}.
type callInput struct {
	Request struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	} `json:"request"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type result struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(tools)
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	var in callInput
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		pdk.SetError(fmt.Errorf("call_tool input: %w", err))
		return 1
	}
	args := in.Request.Arguments
	var out result
	switch in.Request.Name {
	case "echo":
		prefix, _ := pdk.GetConfig("prefix")
		out = text(prefix + args["text"])
	case "read_file":
		b, err := os.ReadFile(args["path"])
		if err != nil {
			out = failure(err)
		} else {
			out = text(string(b))
		}
	case "fetch_status":
		// A refused host traps the call: the host reports it as an error
		// result.
		res := pdk.NewHTTPRequest(pdk.MethodGet, args["url"]).Send()
		out = text(strconv.Itoa(int(res.Status())))
	default:
		pdk.SetError(errors.New("unknown tool " + strconv.Quote(in.Request.Name)))
		return 1
	}
	if err := pdk.OutputJSON(out); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

func text(s string) result { return result{Content: []content{{Type: "text", Text: s}}} }

func failure(err error) result {
	return result{Content: []content{{Type: "text", Text: err.Error()}}, IsError: true}
}
