package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStringsMatchesEncodingJSON(t *testing.T) {
	for _, doc := range []string{
		`"plain"`,
		`"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 \ud800 x"`,
		`{"a":[1,-2.5e3,true,false,null,"s",{"b":"t","c":[]}],"d":{}}`,
		` [ "a" , { "k" : "v" } ] `,
	} {
		var want []string
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		collect(v, &want)
		var got []string
		end, err := Strings([]byte(doc), 0, func(s Str, start, end int) error {
			got = append(got, s.S)
			// [start, end) is the string as written.
			var w string
			if err := json.Unmarshal([]byte(doc[start:end]), &w); err != nil || w != s.S {
				t.Errorf("%s: %q at [%d, %d) is not the string %q", doc, doc[start:end], start, end, s.S)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if WS([]byte(doc), end) != len(doc) {
			t.Errorf("%s: ended at %d", doc, end)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %q, want %q", doc, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: string %d = %q, want %q", doc, i, got[i], want[i])
			}
		}
	}
}

// collect gathers string values in document order; objects here have keys
// in sorted order, as written.
func collect(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collect(e, out)
		}
	case map[string]any:
		for _, k := range []string{"a", "b", "c", "d", "k"} {
			if e, ok := x[k]; ok {
				collect(e, out)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, doc := range []string{``, `{`, `{"a"}`, `{"a":1,}x`, `[1 2]`, `"open`, `nope`, `"\x"`} {
		if _, err := Skip([]byte(doc), 0); err == nil {
			if _, err := Strings([]byte(doc), 0, func(Str, int, int) error { return nil }); err == nil {
				t.Errorf("%q: no error", doc)
			}
		}
	}
}

// TestDepth checks that Strings and Skip allow the same nesting: maxDepth
// levels of arrays and objects, a string in the innermost included.
func TestDepth(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`[{"k":`, n/2) + strings.Repeat("[", n%2) + `"s"` + strings.Repeat("]", n%2) + strings.Repeat("}]", n/2))
	}
	for _, n := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		doc := nest(n)
		_, skipErr := Skip(doc, 0)
		var got []string
		_, err := Strings(doc, 0, func(s Str, start, end int) error {
			got = append(got, s.S)
			return nil
		})
		if ok := n <= maxDepth; (err == nil) != ok || (skipErr == nil) != ok {
			t.Errorf("%d levels: Strings: %v, Skip: %v; want ok = %v", n, err, skipErr, ok)
		}
		if err == nil && (len(got) != 1 || got[0] != "s") {
			t.Errorf("%d levels: strings %q", n, got)
		}
	}
}

func TestApply(t *testing.T) {
	b := []byte(`{"a":"x","b":"y"}`)
	got := Apply(b, 0, len(b), []Edit{{5, 8, []byte(`"1"`)}, {13, 16, []byte(`"22"`)}})
	if string(got) != `{"a":"1","b":"22"}` {
		t.Errorf("got %s", got)
	}
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s/", "ctl\x00\x01\x1f\n\r\t", "<&> é \u2028 😀"} {
		q := Quote(s)
		var got string
		if err := json.Unmarshal(q, &got); err != nil || got != s {
			t.Errorf("Quote(%q) = %s: %q, %v", s, q, got, err)
		}
		back, end, err := String(q, 0)
		if err != nil || back != s || end != len(q) {
			t.Errorf("String(Quote(%q)) = %q, %d, %v", s, back, end, err)
		}
	}
}

func TestSkipStringBackslashes(t *testing.T) {
	for doc, want := range map[string]int{
		`"a\\"x`:    5,
		`"a\"b"x`:   6,
		`"a\\\"b"x`: 8,
		`"\\\\"x`:   6,
	} {
		end, err := Skip([]byte(doc), 0)
		if err != nil || end != want {
			t.Errorf("Skip(%s) = %d, %v; want %d", doc, end, err, want)
		}
	}
}

func TestRawOffset(t *testing.T) {
	doc := []byte(`"a\nb\u00e9c\ud83d\ude00d\"e"`)
	str, _, err := DecodeString(doc, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every character boundary of S maps to the start of the same
	// character in Raw: decoding Raw from there gives the rest of S.
	for d := 0; d <= len(str.S); d++ {
		if d < len(str.S) && !utf8.RuneStart(str.S[d]) {
			continue
		}
		r := str.RawOffset(d)
		rest, _, err := String(append(append([]byte{'"'}, str.Raw[r:]...), '"'), 0)
		if err != nil || rest != str.S[d:] {
			t.Errorf("RawOffset(%d) = %d: rest %q, want %q (%v)", d, r, rest, str.S[d:], err)
		}
	}
}
