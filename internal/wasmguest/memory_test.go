package wasmguest

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"
)

// TestReallocate grows memories step by step and checks the size and the
// capacity after each step, that the guest's bytes are kept and that new
// bytes are zero.
func TestReallocate(t *testing.T) {
	type step struct {
		Size     uint64
		Nil      bool // Reallocate refuses: the memory is unchanged
		Len, Cap int
	}
	tests := []struct {
		name          string
		capacity, max uint64
		steps         []step
	}{
		{"within the capacity", 128, 1024, []step{
			{Size: 64, Len: 64, Cap: 128},
			{Size: 128, Len: 128, Cap: 128},
		}},
		{"capacity doubles", 64, 1024, []step{
			{Size: 64, Len: 64, Cap: 64},
			{Size: 80, Len: 80, Cap: 128},
			{Size: 129, Len: 129, Cap: 256},
			{Size: 256, Len: 256, Cap: 256},
		}},
		{"a step past double gets the size asked", 64, 1024, []step{
			{Size: 64, Len: 64, Cap: 64},
			{Size: 300, Len: 300, Cap: 300},
		}},
		{"from no capacity", 0, 1024, []step{
			{Size: 0, Len: 0, Cap: 0},
			{Size: 10, Len: 10, Cap: 10},
			{Size: 11, Len: 11, Cap: 20},
		}},
		{"capacity stops at the maximum", 64, 100, []step{
			{Size: 64, Len: 64, Cap: 64},
			{Size: 65, Len: 65, Cap: 100},
			{Size: 100, Len: 100, Cap: 100},
		}},
		{"over the maximum is refused", 64, 100, []step{
			{Size: 64, Len: 64, Cap: 64},
			{Size: 101, Nil: true, Len: 64, Cap: 64},
			{Size: 90, Len: 90, Cap: 100},
		}},
		{"a first size over the maximum is refused", 0, 100, []step{
			{Size: 200, Nil: true, Len: 0, Cap: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryAllocator.Allocate(tt.capacity, tt.max).(*linearMemory)
			for i, s := range tt.steps {
				// What the guest wrote so far must survive the step.
				for j := range m.buf {
					m.buf[j] = 0xaa
				}
				old := len(m.buf)
				b := m.Reallocate(s.Size)
				got := step{Size: s.Size, Nil: b == nil, Len: len(m.buf), Cap: cap(m.buf)}
				if diff := cmp.Diff(s, got); diff != "" {
					t.Fatalf("step %d (-want +got):\n%s", i, diff)
				}
				if b == nil {
					continue
				}
				if len(b) != len(m.buf) || (len(b) > 0 && &b[0] != &m.buf[0]) {
					t.Fatalf("step %d: Reallocate returned a slice other than the memory's", i)
				}
				if kept := b[:min(old, len(b))]; !bytes.Equal(kept, bytes.Repeat([]byte{0xaa}, len(kept))) {
					t.Errorf("step %d: the guest's bytes were not kept: % x", i, kept)
				}
				if grown := b[min(old, len(b)):]; !bytes.Equal(grown, make([]byte, len(grown))) {
					t.Errorf("step %d: new bytes are not zero: % x", i, grown)
				}
			}
		})
	}
}

func TestFree(t *testing.T) {
	m := memoryAllocator.Allocate(64, 128)
	m.Reallocate(64)
	m.Free()
	if b := m.(*linearMemory).buf; b != nil {
		t.Errorf("after Free the memory still holds %d bytes", cap(b))
	}
}

// memoryModule is a wasm module with one memory of 1 to 4 pages, exported
// as "mem". It is written out by hand, section by section.
var memoryModule = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00, // magic and version
	0x05, 0x04, 0x01, 0x01, 0x01, 0x04, // memory section: one memory, min 1 page, max 4
	0x07, 0x07, 0x01, 0x03, 'm', 'e', 'm', 0x02, 0x00, // export section: memory 0 as "mem"
}

// TestWithMemoryAllocator runs a module on wazero with the allocator and
// grows its memory the way a guest does.
func TestWithMemoryAllocator(t *testing.T) {
	const page = 64 << 10
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	mod, err := r.InstantiateWithConfig(WithMemoryAllocator(ctx), memoryModule, wazero.NewModuleConfig())
	if err != nil {
		t.Fatal(err)
	}
	mem := mod.ExportedMemory("mem")
	if mem == nil {
		t.Fatal("the module exports no memory")
	}
	tests := []struct {
		name      string
		grow      uint32 // pages
		wantOK    bool
		wantPages uint32
	}{
		{"by a page", 1, true, 2},
		{"by two pages, up to the maximum", 2, true, 4},
		{"past the maximum", 1, false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := mem.Size()
			if !mem.WriteByte(size-1, 0xaa) {
				t.Fatal("cannot write the memory's last byte")
			}
			_, ok := mem.Grow(tt.grow)
			if ok != tt.wantOK || mem.Size() != tt.wantPages*page {
				t.Fatalf("Grow(%d) = %v with %d pages, want %v with %d pages", tt.grow, ok, mem.Size()/page, tt.wantOK, tt.wantPages)
			}
			if b, _ := mem.ReadByte(size - 1); b != 0xaa {
				t.Errorf("the byte at %d is %#x after growing, want 0xaa", size-1, b)
			}
			if ok {
				grown, _ := mem.Read(size, mem.Size()-size)
				if !bytes.Equal(grown, make([]byte, len(grown))) {
					t.Error("the grown pages are not zero")
				}
			}
		})
	}
}
