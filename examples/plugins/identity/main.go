// Command identity is the smallest mcphost plugin: it exports both stages and
// always answers with empty output ("unchanged"). The benchmarks use it to
// measure the host's own per-call cost.
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o identity.wasm ./identity
package main

import (
	"runtime"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport on_result
func onResult() int32 {
	defer runtime.Gosched()
	_ = pdk.Input() // read it, as a real plugin would
	return 0
}

//go:wasmexport on_display
func onDisplay() int32 {
	defer runtime.Gosched()
	_ = pdk.Input()
	return 0
}
