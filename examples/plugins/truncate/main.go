// Command truncate is an mcphost result plugin that caps the text of a tool
// result so that a huge output does not flood the model's context.
//
// Config:
//
//	max_bytes  the number of bytes of text content to keep (a JSON number,
//	           e.g. max_bytes = 16384 in HCL); required, at least 0
//
// Text content items are kept in order until their total reaches max_bytes.
// The item that crosses the limit is cut at a UTF-8 boundary and ends with a
// visible note, "… [truncated N bytes]", where N counts every byte removed
// from it and from the text items after it, which are dropped. Other content
// (images, resources) and structuredContent are left alone: cutting
// structured content would break its output schema. A result within the
// limit is returned unchanged (empty output).
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o truncate.wasm ./truncate
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/extism/go-pdk"
)

func main() {}

var (
	maxBytes  = -1
	configErr error
)

func loadConfig() error {
	if maxBytes >= 0 || configErr != nil {
		return configErr
	}
	s, ok := pdk.GetConfig("max_bytes")
	if !ok {
		configErr = errors.New(`truncate: config "max_bytes" is required`)
		return configErr
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		configErr = fmt.Errorf("truncate: config max_bytes must be a whole number >= 0, not %q", s)
		return configErr
	}
	maxBytes = n
	return nil
}

//go:wasmexport on_result
func onResult() int32 {
	defer runtime.Gosched() // let the guest's collector run before returning to the host
	if err := loadConfig(); err != nil {
		pdk.SetError(err)
		return 1
	}
	out, err := truncate(pdk.Input(), maxBytes)
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	if out != nil {
		pdk.Output(out)
	}
	return 0
}

// truncate returns the output document, or nil when the text fits.
func truncate(input []byte, limit int) ([]byte, error) {
	var in struct {
		Result map[string]any `json:"result"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("truncate: input: %w", err)
	}
	items, _ := in.Result["content"].([]any)
	total := 0
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["type"] == "text" {
			s, _ := m["text"].(string)
			total += len(s)
		}
	}
	if total <= limit {
		return nil, nil
	}
	budget := limit
	var cut map[string]any // the item that carries the note
	removed := 0
	kept := make([]any, 0, len(items))
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok || m["type"] != "text" {
			kept = append(kept, it)
			continue
		}
		s, _ := m["text"].(string)
		switch {
		case cut != nil:
			removed += len(s) // dropped after the cut
		case len(s) <= budget:
			budget -= len(s)
			kept = append(kept, it)
		default:
			n := budget
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			removed += len(s) - n
			m["text"] = s[:n]
			cut = m
			kept = append(kept, it)
		}
	}
	cut["text"] = cut["text"].(string) + fmt.Sprintf("… [truncated %d bytes]", removed)
	in.Result["content"] = kept
	return json.Marshal(map[string]any{"result": in.Result})
}
