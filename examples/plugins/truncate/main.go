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
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/extism/go-pdk"
	"github.com/mcphost/mcphost/examples/plugins/internal/jsonscan"
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
	in := pdk.Input()
	if len(in) <= maxBytes {
		return 0 // decoded text is never longer than its JSON
	}
	out, err := truncate(in, maxBytes)
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	if out != nil {
		pdk.Output(out)
	}
	return 0
}

// textItem is a text content item: its offsets and its decoded text.
type textItem struct {
	start, end         int // the item
	textStart, textEnd int // its "text" value
	text               string
}

// truncate returns the output document, or nil when the text fits.
func truncate(in []byte, limit int) ([]byte, error) {
	resStart, resEnd := -1, -1
	contentStart, contentEnd := -1, -1
	var items []textItem // text items, in order
	var all [][2]int     // every item's offsets, in order
	_, err := jsonscan.Object(in, 0, func(key string, v int) (int, error) {
		if key != "result" || jsonscan.Peek(in, v) != '{' {
			return jsonscan.Skip(in, v)
		}
		resStart = jsonscan.WS(in, v)
		var err error
		resEnd, err = jsonscan.Object(in, v, func(key string, v int) (int, error) {
			if key != "content" || jsonscan.Peek(in, v) != '[' {
				return jsonscan.Skip(in, v)
			}
			contentStart = jsonscan.WS(in, v)
			var err error
			contentEnd, err = jsonscan.Array(in, v, func(v int) (int, error) {
				start := jsonscan.WS(in, v)
				it := textItem{start: start, textStart: -1}
				typ := ""
				var end int
				var err error
				if jsonscan.Peek(in, v) == '{' {
					end, err = jsonscan.Object(in, v, func(key string, v int) (int, error) {
						switch key {
						case "type":
							s, end, err := jsonscan.String(in, v)
							typ = s
							return end, err
						case "text":
							s, end, err := jsonscan.String(in, v)
							it.text, it.textStart, it.textEnd = s, jsonscan.WS(in, v), end
							return end, err
						}
						return jsonscan.Skip(in, v)
					})
				} else {
					end, err = jsonscan.Skip(in, v)
				}
				all = append(all, [2]int{start, end})
				if typ == "text" && it.textStart >= 0 {
					it.end = end
					items = append(items, it)
				}
				return end, err
			})
			return contentEnd, err
		})
		return resEnd, err
	})
	if err != nil {
		return nil, fmt.Errorf("truncate: input: %w", err)
	}
	total := 0
	for _, it := range items {
		total += len(it.text)
	}
	if total <= limit {
		return nil, nil
	}
	// Find the item that crosses the limit and cut it.
	budget, cut := limit, -1
	for k, it := range items {
		if len(it.text) > budget {
			cut = k
			break
		}
		budget -= len(it.text)
	}
	n := budget
	s := items[cut].text
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	removed := total - limit + (budget - n)
	note := fmt.Sprintf("%s… [truncated %d bytes]", s[:n], removed)
	// Rebuild the content list: every item up to the cut one, with its text
	// replaced, then every item after it that is not text.
	dropped := map[int]bool{}
	for _, it := range items[cut+1:] {
		dropped[it.start] = true
	}
	content := []byte{'['}
	for _, r := range all {
		if dropped[r[0]] {
			continue
		}
		if len(content) > 1 {
			content = append(content, ',')
		}
		if r[0] == items[cut].start {
			it := items[cut]
			content = append(content, jsonscan.Apply(in, it.start, it.end, []jsonscan.Edit{{Start: it.textStart, End: it.textEnd, New: jsonscan.Quote(note)}})...)
			continue
		}
		content = append(content, in[r[0]:r[1]]...)
	}
	content = append(content, ']')
	out := []byte(`{"result":`)
	out = append(out, jsonscan.Apply(in, resStart, resEnd, []jsonscan.Edit{{Start: contentStart, End: contentEnd, New: content}})...)
	return append(out, '}'), nil
}
