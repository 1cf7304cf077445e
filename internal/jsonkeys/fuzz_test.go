package jsonkeys

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzArgumentKeys checks Scan against encoding/json on arbitrary
// documents (a tool call's arguments as a client sends them): it accepts
// exactly what json.Valid accepts, and its clashes are those a walk over
// encoding/json's tokens finds comparing every pair of keys with
// strings.EqualFold, with and without an allow function. A document
// without clashes decodes to an object in which no two keys are equal
// under case folding, so no parser can read one key for another.
func FuzzArgumentKeys(f *testing.F) {
	for _, s := range []string{
		`{"path":"/srv/data/ok","PATH":"/etc/cron.d/evil"}`,
		`{"path":"ok","path":"/etc/x"}`,
		`{"p\u0061th":1,"path":2}`,
		`{"kind":1,"\u212aind":2,"ma\u017fk":3,"MASK":4}`,
		`{"\ud800":1,"\udc00":2,"\ufffd":3}`,
		"{\"\xff\":1,\"\xfe\":2}",
		`{"a":[{"x":1,"X":2},{"c/d":{"m~":{"y":1,"Y":1}}}]}`,
		`[{"a":1},{"b":2,"B":3}]`,
		`{"a":{}, "A":[], "b":"", "B":null}`,
		`{"a":1,}`,
		`"just a string"`,
	} {
		f.Add([]byte(s))
	}
	allowEven := func(keys []string) bool { return len(keys[0])%2 == 0 }
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Scan(data, nil)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("Scan error %v, json.Valid %v", err, valid)
		}
		if err != nil {
			return
		}
		if diff := cmp.Diff(reference(data, nil), got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Scan disagrees with the reference (-want +got):\n%s", diff)
		}
		allowed, err := Scan(data, allowEven)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(reference(data, allowEven), allowed, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Scan with allow disagrees with the reference (-want +got):\n%s", diff)
		}
		if len(got) > 0 {
			return
		}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			if c := Clashes(keys); c != nil {
				t.Fatalf("no clash scanned, but the decoded keys clash: %q", c)
			}
		}
	})
}
