//go:build wasip1

// Command v1plugin is a test fixture for package wasmserver: an Extism
// plugin with hyper-mcp's v1 ABI. describe lists one tool, "echo"; call
// returns its input (the {"params": ...} object) as the text of its result.
//
// Build (from wasmserver/testdata/wasm; the tests do this with
// internal/testbin):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o v1plugin.wasm ./v1plugin
package main

import (
	"encoding/json"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport describe
func describe() int32 {
	pdk.OutputString(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`)
	return 0
}

//go:wasmexport call
func call() int32 {
	out, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(pdk.Input())}}})
	pdk.Output(out)
	return 0
}
