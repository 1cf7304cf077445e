package toolsearch

import (
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzTokens checks that any text, valid UTF-8 or not, splits into
// non-empty, lower-case, valid words of letters and digits, the same ones
// every time, and that a search for it never fails.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"getUserProfile", "HTTPServer", "API-post-search", "list_files in a directory", "créer un fichier", "running", "ÄÖÜ straße", "\xff\xfe", "a\u1fffing", "x\u0301ed", ""} {
		f.Add(s)
	}
	ix := NewIndex([]Doc{DocOf("s", "read_file", "", "Read a file.", nil, nil)})
	f.Fuzz(func(t *testing.T, text string) {
		toks := Tokens(text)
		for _, tok := range toks {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("Tokens(%q) has the word %q", text, tok)
			}
			if strings.ToLower(tok) != tok {
				t.Fatalf("Tokens(%q) has %q, not lower-case", text, tok)
			}
			for _, r := range tok {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
					t.Fatalf("Tokens(%q) has %q, with %U", text, tok, r)
				}
			}
		}
		if again := Tokens(text); !slices.Equal(toks, again) {
			t.Fatalf("Tokens(%q) gave %q, then %q", text, toks, again)
		}
		ix.Search(text, 5, nil)
	})
}

// FuzzDecodeEmbeddings checks that any answer of an embeddings endpoint
// decodes to exactly n finite vectors of one dimension, or to an error.
func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[0.1,0.2]},{"index":1,"embedding":[0.3,0.4]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1]},{"index":0,"embedding":[2]}]}`), 2)
	f.Add([]byte(`{"data":[{"embedding":[1e39]}]}`), 1)
	f.Add([]byte(`{"error":{"message":"no"}}`), 1)
	f.Add([]byte(`{"data":[]}`), 0)
	f.Add([]byte(`null`), 1)
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 1<<10 {
			return
		}
		vecs, err := decodeEmbeddings(raw, n)
		if err != nil {
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d texts", len(vecs), n)
		}
		for i, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) {
				t.Fatalf("vector %d has %d dimensions, the first %d", i, len(v), len(vecs[0]))
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("vector %d holds %v", i, x)
				}
			}
		}
	})
}
