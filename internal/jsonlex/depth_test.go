package jsonlex

import (
	"strings"
	"testing"
)

func TestTooDeep(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want bool
	}{
		{"flat", `{"a":1}`, 1, false},
		{"at the bound", `{"a":[1]}`, 2, false},
		{"past the bound", `{"a":[{}]}`, 2, true},
		{"brackets in strings do not count", `{"a":"[[[{{{"}`, 1, false},
		{"an escaped quote keeps the string open", `{"a":"\"[[["}`, 1, false},
		{"an escaped backslash closes it", `{"a":"\\"}`, 1, false},
		{"go-sdk's bound", strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth), MaxDepth, false},
		{"one past go-sdk's bound", strings.Repeat("[", MaxDepth+1), MaxDepth, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TooDeep([]byte(tc.in), tc.max); got != tc.want {
				t.Errorf("TooDeep(%.40q, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
			}
		})
	}
}
