// Command noexport is a test fixture for package plugins: a valid Go reactor
// that exports neither on_result nor on_display.
//
// Build (from plugins/testdata/wasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o noexport.wasm ./noexport
package main

import (
	"runtime"

	"github.com/extism/go-pdk"
)

func main() {}

//go:wasmexport on_something_else
func onSomethingElse() int32 {
	defer runtime.Gosched()
	pdk.OutputString(pdk.InputString())
	return 0
}
