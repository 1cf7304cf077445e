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
// The plugin edits the input JSON in place (package jsonscan): a display
// record carries up to 1 MiB of HTML, which encoding/json would take about
// half a second to decode inside a Go wasm guest.
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o app-guard.wasm ./app-guard
package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/extism/go-pdk"
	"github.com/mcphost/mcphost/examples/plugins/internal/jsonscan"
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

var cspLists = map[string]bool{"connectDomains": true, "resourceDomains": true, "frameDomains": true, "baseUriDomains": true}

// guard returns the output document, or nil when every source is allowed.
// It edits the csp lists of the input in place: the record's html can be
// up to 1 MiB, too much to decode with encoding/json inside a wasm guest.
func guard(in []byte) ([]byte, error) {
	start, end := -1, -1
	var edits []jsonscan.Edit
	_, err := jsonscan.Object(in, 0, func(key string, v int) (int, error) {
		if key != "display" || jsonscan.Peek(in, v) != '{' {
			return jsonscan.Skip(in, v)
		}
		start = jsonscan.WS(in, v)
		var err error
		end, err = jsonscan.Object(in, v, func(key string, v int) (int, error) {
			if key != "csp" || jsonscan.Peek(in, v) != '{' {
				return jsonscan.Skip(in, v)
			}
			return jsonscan.Object(in, v, func(key string, v int) (int, error) {
				if !cspLists[key] || jsonscan.Peek(in, v) != '[' {
					return jsonscan.Skip(in, v)
				}
				listStart := jsonscan.WS(in, v)
				kept := []byte{'['}
				dropped := false
				listEnd, err := jsonscan.Array(in, v, func(v int) (int, error) {
					src, end, err := jsonscan.String(in, v)
					if err != nil {
						return end, err
					}
					if !allow[strings.ToLower(src)] {
						dropped = true
						return end, nil
					}
					if len(kept) > 1 {
						kept = append(kept, ',')
					}
					kept = append(kept, in[jsonscan.WS(in, v):end]...)
					return end, nil
				})
				if dropped {
					edits = append(edits, jsonscan.Edit{Start: listStart, End: listEnd, New: append(kept, ']')})
				}
				return listEnd, err
			})
		})
		return end, err
	})
	if err != nil {
		return nil, fmt.Errorf("app-guard: input: %w", err)
	}
	if len(edits) == 0 {
		return nil, nil
	}
	out := []byte(`{"display":`)
	out = append(out, jsonscan.Apply(in, start, end, edits)...)
	return append(out, '}'), nil
}
