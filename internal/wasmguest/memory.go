package wasmguest

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// WithMemoryAllocator returns ctx with the allocator that backs each linear
// memory of a module instantiated with it: a slice whose capacity at least
// doubles when it grows, up to the memory's maximum. wazero's own allocator
// grows to the exact size asked, and a Go guest's heap grows 512 KiB at a
// time, so each step copied the whole memory again (about 8 copies of
// 4–8 MiB per 250 calls of a plugin).
func WithMemoryAllocator(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, memoryAllocator)
}

var memoryAllocator = experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
	return &linearMemory{buf: make([]byte, 0, capacity), max: max}
})

// linearMemory is one module's linear memory: buf's length is the memory's
// size, and its capacity what is reserved.
type linearMemory struct {
	buf []byte
	max uint64
}

// Reallocate grows the memory to size bytes; new bytes are zero, as wasm
// requires (bytes past the length were never handed out). It returns nil
// when size is over the maximum.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	c := min(max(size, 2*uint64(cap(m.buf))), m.max)
	b := make([]byte, size, c)
	copy(b, m.buf)
	m.buf = b
	return b
}

// Free drops the memory.
func (m *linearMemory) Free() { m.buf = nil }
