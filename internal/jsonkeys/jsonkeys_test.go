package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		allow func([]string) bool
		want  []Clash
	}{
		{"no clash", `{"path":"/srv/a","mode":"w","nested":{"path":1,"Mode":2}}`, nil, nil},
		{"not an object", `[1,"a",{"x":1}]`, nil, nil},
		{"empty", `{}`, nil, nil},
		{"case", `{"path":"/srv/data/ok","PATH":"/etc/cron.d/evil"}`, nil,
			[]Clash{{Pointer: "", Keys: []string{"path", "PATH"}}}},
		{"three spellings", `{"Path":1,"x":2,"path":3,"PATH":4}`, nil,
			[]Clash{{Keys: []string{"Path", "path", "PATH"}}}},
		{"duplicate", `{"path":"ok","path":"/etc/x"}`, nil,
			[]Clash{{Keys: []string{"path", "path"}}}},
		{"duplicate through an escape", `{"path":1,"p\u0061th":2}`, nil,
			[]Clash{{Keys: []string{"path", "path"}}}},
		{"Kelvin sign folds to k", `{"kind":1,"\u212aind":2}`, nil,
			[]Clash{{Keys: []string{"kind", "\u212aind"}}}},
		{"long s folds to s", `{"mask":1,"ma\u017fk":2}`, nil,
			[]Clash{{Keys: []string{"mask", "ma\u017fk"}}}},
		{"non-ASCII case", `{"größe":1,"GRÖSSE":2,"GRÖẞE":3}`, nil,
			[]Clash{{Keys: []string{"größe", "GRÖẞE"}}}}, // ß folds with ẞ only, not with SS
		{"lone surrogates decode alike", `{"\ud800":1,"\udc00":2}`, nil,
			[]Clash{{Keys: []string{"\ufffd", "\ufffd"}}}},
		{"nested at any depth", `{"a":[{"ok":1},{"x":1,"X":2}],"b":{"c/d":{"m~":{"y":1,"Y":1}}}}`, nil,
			[]Clash{{Pointer: "/a/1", Keys: []string{"x", "X"}}, {Pointer: "/b/c~1d/m~0", Keys: []string{"y", "Y"}}}},
		{"inner objects first", `{"A":{"b":1,"B":2},"a":0}`, nil,
			[]Clash{{Pointer: "/A", Keys: []string{"b", "B"}}, {Keys: []string{"A", "a"}}}},
		{"allowed case pair", `{"path":1,"Path":2}`, func(k []string) bool { return true }, nil},
		{"a duplicate is never allowed", `{"path":1,"path":2}`, func(k []string) bool { return true },
			[]Clash{{Keys: []string{"path", "path"}}}},
		{"allow sees the keys", `{"path":1,"Path":2,"x":1,"X":2}`, func(k []string) bool { return k[0] == "path" },
			[]Clash{{Keys: []string{"x", "X"}}}},
		{"a large object", `{` + manyKeys(40) + `,"K7":0}`, nil,
			[]Clash{{Keys: []string{"k7", "K7"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Scan([]byte(tt.data), tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Scan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, reference([]byte(tt.data), tt.allow), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the reference disagrees with the table (-want +got):\n%s", diff)
			}
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
	}
	return b.String()
}

func TestScanRefusesWhatJSONRefuses(t *testing.T) {
	for _, data := range []string{``, `{`, `{"a"}`, `{"a":1,}`, `{"a":1}x`, `{"a":01}`, "{\"a\":\"\x01\"}", `{"a":"\x"}`,
		`{"\u12":1}`, `[1,]`, `nul`, `{a:1}`, strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		if _, err := Scan([]byte(data), nil); err == nil {
			t.Errorf("Scan(%.40q) accepted what encoding/json refuses", data)
		}
	}
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	if _, err := Scan([]byte(deep), nil); err != nil || !json.Valid([]byte(deep)) {
		t.Errorf("10,000 levels: Scan %v, json.Valid %v", err, json.Valid([]byte(deep)))
	}
}

func TestScanBoundsItsReport(t *testing.T) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"a":1,"A":2}`)
	}
	b.WriteString(`,{"x":]`) // invalid after the clashes: still an error
	if _, err := Scan([]byte(b.String()), nil); err == nil {
		t.Error("invalid JSON after MaxClashes clashes was accepted")
	}
	valid := strings.TrimSuffix(b.String(), `,{"x":]`) + "]"
	got, err := Scan([]byte(valid), nil)
	if err != nil || len(got) != MaxClashes || got[MaxClashes-1].Pointer != "/"+strconv.Itoa(MaxClashes-1) {
		t.Errorf("got %d clashes (%v), want the first %d", len(got), err, MaxClashes)
	}
	// 10,000 copies of one key: linear, one clash.
	many := "{" + strings.Repeat(`"a":1,`, 10000) + `"a":1}`
	got, err = Scan([]byte(many), nil)
	if err != nil || len(got) != 1 || len(got[0].Keys) != 10001 || !got[0].Duplicate() {
		t.Errorf("10,001 duplicates: %d clashes, %v", len(got), err)
	}
}

func TestClashes(t *testing.T) {
	tests := []struct {
		keys []string
		want [][]string
	}{
		{nil, nil},
		{[]string{"env"}, nil},
		{[]string{"env", "region"}, nil},
		{[]string{"ENV", "env", "region", "Env"}, [][]string{{"ENV", "env", "Env"}}},
		{[]string{"a", "b", "B", "A"}, [][]string{{"b", "B"}, {"a", "A"}}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Clashes(tt.keys)); diff != "" {
			t.Errorf("Clashes(%q) (-want +got):\n%s", tt.keys, diff)
		}
	}
}

// reference finds the clashes of valid JSON another way: encoding/json's
// tokens, and strings.EqualFold between every pair of keys.
func reference(data []byte, allow func([]string) bool) []Clash {
	type open struct {
		obj   bool
		keys  []string
		index int
		key   bool // an object expects a key next
	}
	var stack []*open
	var out []Clash
	pointer := func() string {
		var b strings.Builder
		for _, o := range stack[:len(stack)-1] {
			b.WriteByte('/')
			if o.obj {
				b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(o.keys[len(o.keys)-1]))
			} else {
				b.WriteString(strconv.Itoa(o.index))
			}
		}
		return b.String()
	}
	// valueDone moves the innermost container past one value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.obj {
			top.key = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // json.Valid does not check a number's range
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			panic(err)
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.obj && top.key {
				if s, ok := tok.(string); ok {
					top.keys = append(top.keys, s)
					top.key = false
					continue
				}
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, &open{obj: tok == json.Delim('{'), key: tok == json.Delim('{')})
			continue
		case json.Delim('}'), json.Delim(']'):
			top := stack[len(stack)-1]
			if top.obj {
				root := make([]int, len(top.keys))
				var groups [][]int
				where := map[int]int{}
				for i, k := range top.keys {
					root[i] = i
					for j := range i {
						if strings.EqualFold(top.keys[j], k) {
							root[i] = root[j]
							break
						}
					}
					if root[i] == i {
						continue
					}
					g, ok := where[root[i]]
					if !ok {
						g = len(groups)
						where[root[i]] = g
						groups = append(groups, []int{root[i]})
					}
					groups[g] = append(groups[g], i)
				}
				for _, g := range groups {
					c := Clash{Pointer: pointer()}
					dup := false
					for n, i := range g {
						c.Keys = append(c.Keys, top.keys[i])
						for _, j := range g[:n] {
							dup = dup || top.keys[j] == top.keys[i]
						}
					}
					if !dup && allow != nil && allow(c.Keys) {
						continue
					}
					if len(out) < MaxClashes {
						out = append(out, c)
					}
				}
			}
			stack = stack[:len(stack)-1]
		}
		// A value ended (a scalar or a container).
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if !top.obj {
				top.index++
			}
		}
		valueDone()
	}
}

// BenchmarkScan is the cost Scan adds to a tool call with 2 KB of
// arguments, next to encoding/json.Valid, which the call already pays.
func BenchmarkScan(b *testing.B) {
	var args strings.Builder
	args.WriteString(`{"path":"/srv/data/report.txt","mode":"overwrite","options":{"encoding":"utf-8","createDirs":true},"content":"`)
	args.WriteString(strings.Repeat("lorem ipsum dolor sit amet ", 60))
	args.WriteString(`","tags":["a","b","c"],"meta":{"author":"alice","Author2":"bob"}}`)
	data := []byte(args.String())
	b.Run("Scan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Scan(data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if !json.Valid(data) {
				b.Fatal("invalid")
			}
		}
	})
}
