package jsonscan

import (
	"encoding/json"
	"testing"
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
		end, err := Strings([]byte(doc), 0, func(s string, start, end int) { got = append(got, s) })
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
			if _, err := Strings([]byte(doc), 0, func(string, int, int) {}); err == nil {
				t.Errorf("%q: no error", doc)
			}
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
