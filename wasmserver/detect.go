package wasmserver

import (
	"bytes"
	"errors"
	"fmt"
)

// The binary format (WebAssembly core specification, section 5): an 8-byte
// preamble, then sections, each an id byte, a LEB128 u32 size and that many
// bytes. The export section (id 7) is a vector of (name, kind, index).
var (
	wasmMagic        = []byte("\x00asm")
	coreVersion      = []byte{1, 0, 0, 0}
	componentVersion = []byte{0x0d, 0, 1, 0} // component model, layer 1
)

const (
	exportSectionID = 7
	exportFunc      = 0
)

var errTruncated = errors.New("is a truncated or malformed WebAssembly module")

// funcExports returns the names of the functions the module exports. It
// reads only the preamble and the section headers up to the export
// section, so it takes microseconds where compiling takes seconds; a
// module that passes it can still fail to compile. The error completes a
// sentence that starts with the file's name.
func funcExports(wasm []byte) (map[string]bool, error) {
	if len(wasm) < 8 || !bytes.Equal(wasm[:4], wasmMagic) {
		return nil, errors.New(`is not a WebAssembly module (it does not start with "\0asm")`)
	}
	switch v := wasm[4:8]; {
	case bytes.Equal(v, componentVersion):
		return nil, errors.New("is a WebAssembly component (component model); only core modules are supported")
	case !bytes.Equal(v, coreVersion):
		return nil, fmt.Errorf("is a WebAssembly module of unknown version % x", v)
	}
	r := wasm[8:]
	for len(r) > 0 {
		id := r[0]
		size, n := uleb32(r[1:])
		if n == 0 || uint64(size) > uint64(len(r)-1-n) {
			return nil, errTruncated
		}
		body := r[1+n : 1+n+int(size)]
		r = r[1+n+int(size):]
		if id == exportSectionID {
			return parseExports(body)
		}
	}
	return map[string]bool{}, nil
}

func parseExports(b []byte) (map[string]bool, error) {
	count, n := uleb32(b)
	if n == 0 {
		return nil, errTruncated
	}
	b = b[n:]
	out := map[string]bool{}
	for range count {
		l, n := uleb32(b)
		if n == 0 || uint64(l) > uint64(len(b)-n) {
			return nil, errTruncated
		}
		name := string(b[n : n+int(l)])
		b = b[n+int(l):]
		if len(b) < 1 {
			return nil, errTruncated
		}
		kind := b[0]
		if _, n = uleb32(b[1:]); n == 0 {
			return nil, errTruncated
		}
		b = b[1+n:]
		if kind == exportFunc {
			out[name] = true
		}
	}
	return out, nil
}

// uleb32 decodes an unsigned LEB128 number of at most 32 bits and returns
// it with the number of bytes read, or n == 0 when b holds no valid one.
func uleb32(b []byte) (v uint32, n int) {
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0 // more than 32 bits
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}
