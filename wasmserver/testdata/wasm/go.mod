module github.com/mcphost/mcphost/wasmserver/testdata/wasm

go 1.26.0

require github.com/extism/go-pdk v1.1.3
