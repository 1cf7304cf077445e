// Command app-guard is an mcphost display plugin: it narrows an MCP App's
// Content-Security-Policy to an operator's allow-list.
//
// Config:
//
//	allow  a JSON list of CSP sources, e.g. allow = ["https://cdn.example.com"]
//	       in HCL; default [] (drop every source)
//
// Every source in the display record's csp lists (connectDomains,
// resourceDomains, frameDomains, baseUriDomains) that is not in the list is
// dropped. Matching is exact apart from ASCII case: "https://*.example.com"
// in the list allows only that wildcard source, not "https://a.example.com".
// A record whose sources all pass is returned unchanged (empty output).
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o app-guard.wasm ./app-guard
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/extism/go-pdk"
)

func main() {}

var (
	allow     map[string]bool
	configErr error
)

func loadConfig() error {
	if allow != nil || configErr != nil {
		return configErr
	}
	allow = map[string]bool{}
	s, ok := pdk.GetConfig("allow")
	if !ok {
		return nil
	}
	var list []string
	if err := json.Unmarshal([]byte(s), &list); err != nil {
		configErr = fmt.Errorf("app-guard: config allow must be a list of strings: %w", err)
		return configErr
	}
	for _, src := range list {
		allow[strings.ToLower(src)] = true
	}
	return nil
}

//go:wasmexport on_display
func onDisplay() int32 {
	defer runtime.Gosched() // let the guest's collector run before returning to the host
	if err := loadConfig(); err != nil {
		pdk.SetError(err)
		return 1
	}
	out, err := guard(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	if out != nil {
		pdk.Output(out)
	}
	return 0
}

var cspLists = []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}

// guard returns the output document, or nil when every source is allowed.
func guard(input []byte) ([]byte, error) {
	var in struct {
		Display map[string]any `json:"display"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("app-guard: input: %w", err)
	}
	csp, ok := in.Display["csp"].(map[string]any)
	if !ok {
		return nil, nil
	}
	changed := false
	for _, name := range cspLists {
		list, ok := csp[name].([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, v := range list {
			if s, ok := v.(string); ok && allow[strings.ToLower(s)] {
				kept = append(kept, v)
			}
		}
		if len(kept) != len(list) {
			csp[name] = kept
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	return json.Marshal(map[string]any{"display": in.Display})
}
