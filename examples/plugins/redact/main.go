// Command redact is an mcphost result plugin: it replaces every match of a
// regular expression in a tool result's text content, in the text of embedded
// text resources and in every string value of structuredContent.
//
// Config:
//
//	pattern      a Go regular expression (RE2 syntax); required
//	replacement  the replacement text; default "[REDACTED]" ($1 and ${name}
//	             expand as in regexp.ReplaceAllString)
//
// A result without a match is returned unchanged (empty output), so the host
// keeps the original bytes. Object keys of structuredContent are never
// rewritten; a pattern that must hide a key needs a different plugin.
//
// Build (from examples/plugins):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o redact.wasm ./redact
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"

	"github.com/extism/go-pdk"
)

func main() {}

// The config cannot change during an instance's life, so the pattern is
// compiled once, on the first call (the host's warm-up call, which also makes
// a bad pattern a load error).
var (
	re          *regexp.Regexp
	replacement string
	configErr   error
)

func loadConfig() error {
	if re != nil || configErr != nil {
		return configErr
	}
	p, ok := pdk.GetConfig("pattern")
	if !ok || p == "" {
		configErr = errors.New(`redact: config "pattern" is required`)
		return configErr
	}
	r, err := regexp.Compile(p)
	if err != nil {
		configErr = fmt.Errorf("redact: config pattern: %w", err)
		return configErr
	}
	replacement = "[REDACTED]"
	if s, ok := pdk.GetConfig("replacement"); ok {
		replacement = s
	}
	re = r
	return nil
}

//go:wasmexport on_result
func onResult() int32 {
	defer runtime.Gosched() // let the guest's collector run before returning to the host
	if err := loadConfig(); err != nil {
		pdk.SetError(err)
		return 1
	}
	out, err := redact(pdk.Input())
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	if out != nil {
		pdk.Output(out)
	}
	return 0
}

// redact returns the output document, or nil when nothing matched.
func redact(input []byte) ([]byte, error) {
	var in struct {
		Result map[string]any `json:"result"`
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber() // keep numbers exactly as the host sent them
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("redact: input: %w", err)
	}
	if in.Result == nil {
		return nil, nil
	}
	changed := false
	if items, ok := in.Result["content"].([]any); ok {
		for _, it := range items {
			item, ok := it.(map[string]any)
			if !ok {
				continue
			}
			switch item["type"] {
			case "text":
				changed = replaceKey(item, "text") || changed
			case "resource":
				if res, ok := item["resource"].(map[string]any); ok {
					changed = replaceKey(res, "text") || changed
				}
			}
		}
	}
	if sc, ok := in.Result["structuredContent"]; ok {
		v, c := replaceAll(sc)
		if c {
			in.Result["structuredContent"] = v
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	return json.Marshal(map[string]any{"result": in.Result})
}

func replaceKey(m map[string]any, key string) bool {
	s, ok := m[key].(string)
	if !ok || !re.MatchString(s) {
		return false
	}
	m[key] = re.ReplaceAllString(s, replacement)
	return true
}

// replaceAll rewrites every string value below v.
func replaceAll(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		if re.MatchString(x) {
			return re.ReplaceAllString(x, replacement), true
		}
	case []any:
		changed := false
		for i, e := range x {
			if n, c := replaceAll(e); c {
				x[i], changed = n, true
			}
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, e := range x {
			if n, c := replaceAll(e); c {
				x[k], changed = n, true
			}
		}
		return x, changed
	}
	return v, false
}
