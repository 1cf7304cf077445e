package wasmserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module assembles a WebAssembly module with one function per export,
// each of type [] -> [] whose body is empty, or unreachable when trap is
// set.
func module(trap bool, exports ...string) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, body []byte) {
		b = append(b, id)
		b = appendULEB(b, uint32(len(body)))
		b = append(b, body...)
	}
	n := uint32(len(exports))
	section(1, []byte{1, 0x60, 0, 0}) // one type: func [] -> []
	funcs := appendULEB(nil, n)
	for range exports {
		funcs = append(funcs, 0)
	}
	section(3, funcs)
	exps := appendULEB(nil, n)
	for i, name := range exports {
		exps = appendULEB(exps, uint32(len(name)))
		exps = append(exps, name...)
		exps = append(exps, exportFunc)
		exps = appendULEB(exps, uint32(i))
	}
	section(exportSectionID, exps)
	code := appendULEB(nil, n)
	body := []byte{2, 0, 0x0b} // size, no locals, end
	if trap {
		body = []byte{3, 0, 0x00, 0x0b} // size, no locals, unreachable, end
	}
	for range exports {
		code = append(code, body...)
	}
	section(10, code)
	return b
}

func appendULEB(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func writeModule(tb testing.TB, wasm []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "module.wasm")
	if err := os.WriteFile(p, wasm, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wasm    []byte
		want    Kind
		wantErr string
	}{
		{name: "command", wasm: module(false, "_start"), want: KindWASICommand},
		{name: "v2", wasm: module(false, "list_tools", "call_tool", "_initialize"), want: KindExtismV2},
		{name: "v2 with _start", wasm: module(false, "_start", "call_tool", "list_tools"), want: KindExtismV2},
		{name: "v1", wasm: module(false, "describe", "call"), want: KindExtismV1},
		{name: "neither", wasm: module(false, "_initialize", "on_result"), wantErr: "exports neither _start (a WASI command) nor list_tools/call_tool (an Extism MCP plugin): it is not an MCP server"},
		{name: "only list_tools", wasm: module(false, "list_tools"), wantErr: "it is not an MCP server"},
		{name: "no exports", wasm: []byte("\x00asm\x01\x00\x00\x00"), wantErr: "it is not an MCP server"},
		{name: "not wasm", wasm: []byte("#!/bin/sh\necho hi\n"), wantErr: "is not a WebAssembly module"},
		{name: "empty", wasm: nil, wantErr: "is not a WebAssembly module"},
		{name: "component", wasm: []byte("\x00asm\x0d\x00\x01\x00"), wantErr: "is a WebAssembly component"},
		{name: "unknown version", wasm: []byte("\x00asm\x02\x00\x00\x00"), wantErr: "unknown version"},
		{name: "truncated", wasm: module(false, "_start")[:20], wantErr: "truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeModule(t, tc.wasm)
			got, err := Detect(context.Background(), path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("Detect = %q, %v; want an error naming the file with %q", got, err, tc.wantErr)
				}
				if _, serr := Start(context.Background(), Spec{Path: path}); serr == nil || !strings.Contains(serr.Error(), tc.wantErr) {
					t.Errorf("Start: %v, want %q", serr, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Detect = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := Detect(context.Background(), filepath.Join(t.TempDir(), "missing.wasm")); err == nil {
		t.Error("Detect of a missing file succeeded")
	}
	if _, err := Detect(context.Background(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Detect of a directory: %v", err)
	}
}

func TestStartRefusesBadSpecs(t *testing.T) {
	path := writeModule(t, module(false, "_start"))
	file := writeModule(t, nil)
	for _, tc := range []struct {
		name    string
		spec    Spec
		wantErr string
	}{
		{name: "no path", spec: Spec{Name: "x"}, wantErr: "no path"},
		{name: "relative dir", spec: Spec{Path: path, Read: []string{"data"}}, wantErr: "not an absolute path"},
		{name: "missing dir", spec: Spec{Path: path, Write: []string{filepath.Join(t.TempDir(), "nope")}}, wantErr: "no such file"},
		{name: "file as dir", spec: Spec{Path: path, Read: []string{file}}, wantErr: "is not a directory"},
		{name: "memory", spec: Spec{Path: path, MemoryLimitPages: MaxMemoryPages + 1}, wantErr: "over the 65536 pages"},
		{name: "imports", spec: Spec{Path: writeModule(t, importing("env", "f"))}, wantErr: "imports env.f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(context.Background(), tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Start: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// importing is a command module that imports mod.name.
func importing(mod, name string) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	section := func(id byte, body []byte) {
		b = append(b, id)
		b = appendULEB(b, uint32(len(body)))
		b = append(b, body...)
	}
	section(1, []byte{1, 0x60, 0, 0})
	imp := appendULEB(nil, 1)
	imp = appendULEB(imp, uint32(len(mod)))
	imp = append(imp, mod...)
	imp = appendULEB(imp, uint32(len(name)))
	imp = append(imp, name...)
	imp = append(imp, 0, 0) // a function of type 0
	section(2, imp)
	section(3, []byte{1, 0})
	section(exportSectionID, append(append([]byte{1, 6}, "_start"...), exportFunc, 1))
	section(10, []byte{1, 2, 0, 0x0b})
	return b
}

func FuzzDetect(f *testing.F) {
	f.Add(module(false, "_start"))
	f.Add(module(true, "list_tools", "call_tool"))
	f.Add(importing("env", "f"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		exports, err := funcExports(wasm)
		if err != nil {
			return
		}
		kind, err := kindOf(exports)
		if err != nil {
			return
		}
		need := map[Kind][]string{KindWASICommand: {"_start"}, KindExtismV2: {"list_tools", "call_tool"}, KindExtismV1: {"describe", "call"}}[kind]
		for _, n := range need {
			if !exports[n] {
				t.Fatalf("kind %q without export %q", kind, n)
			}
		}
	})
}
