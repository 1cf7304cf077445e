package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bagOfWords is a deterministic stand-in for an embedding model: each
// token of text counts in one of dim dimensions, chosen by its hash.
func bagOfWords(text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, t := range Tokens(text) {
		h := fnv.New32a()
		h.Write([]byte(t))
		v[h.Sum32()%uint32(dim)]++
	}
	return v
}

// embeddingServer is an OpenAI-compatible embeddings endpoint on loopback
// that answers with bagOfWords vectors, data in reverse order (clients
// must order by index). It counts requests and texts and checks the
// bearer token when token is set.
type embeddingServer struct {
	*httptest.Server
	requests, texts atomic.Int64
}

func newEmbeddingServer(t *testing.T, token string) *embeddingServer {
	t.Helper()
	s := &embeddingServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"error":{"message":"bad token"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Method != http.MethodPost || req.Model != "test-model" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.texts.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{i, bagOfWords(req.Input[i], 32)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	t.Cleanup(s.Close)
	return s
}

func TestHTTPEmbedder(t *testing.T) {
	srv := newEmbeddingServer(t, "s3cret")
	e := &HTTPEmbedder{URL: srv.URL + "/v1/embeddings", Model: "test-model", Token: "s3cret", BatchSize: 2}
	texts := []string{"read a file", "list directory", "create issue", "merge pull request", "take screenshot"}
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if want := bagOfWords(text, 32); !slices.Equal(got[i], want) {
			t.Errorf("vector %d = %v, want %v", i, got[i], want)
		}
	}
	if n := srv.requests.Load(); n != 3 {
		t.Errorf("5 texts in batches of 2 took %d requests, want 3", n)
	}
}

func TestHTTPEmbedderErrors(t *testing.T) {
	answer := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		edit    func(*HTTPEmbedder)
		texts   []string
		want    string // in the error
	}{
		{"status", answer(500, `{"error": "model not loaded"}`), nil, []string{"a b"}, `500 Internal Server Error: "{\"error\": \"model not loaded\"}"`},
		{"unauthorized", answer(401, ``), nil, []string{"a b"}, "401 Unauthorized: (empty body)"},
		{"not json", answer(200, `<html>`), nil, []string{"a b"}, "not an embeddings list"},
		{"error object", answer(200, `{"error": {"message": "quota"}}`), nil, []string{"a b"}, "the answer is an error"},
		{"too few", answer(200, `{"data": [{"index": 0, "embedding": [1, 2]}]}`), nil, []string{"x", "y"}, "1 embeddings for 2 texts"},
		{"dimensions differ", answer(200, `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]}`), nil, []string{"x", "y"}, "has 1 dimensions, the first has 2"},
		{"empty vector", answer(200, `{"data": [{"index": 0, "embedding": []}]}`), nil, []string{"x"}, "0 dimensions"},
		{"index out of range", answer(200, `{"data": [{"index": 3, "embedding": [1]}]}`), nil, []string{"x"}, "index 3, outside 0..0"},
		{"duplicate index", answer(200, `{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [2]}]}`), nil, []string{"x", "y"}, "two embeddings have index 0"},
		{"not float32", answer(200, `{"data": [{"index": 0, "embedding": [1e39]}]}`), nil, []string{"x"}, "not a finite float32"},
		{"too large", answer(200, `{"data": [{"index": 0, "embedding": [`+strings.Repeat("1,", 100)+`1]}]}`), func(e *HTTPEmbedder) { e.MaxResponse = 64 }, []string{"x"}, "more than 64 bytes"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(time.Second):
			}
		}, func(e *HTTPEmbedder) { e.Timeout = 50 * time.Millisecond }, []string{"x"}, "context deadline exceeded"},
		{"no URL", nil, func(e *HTTPEmbedder) { e.URL = "" }, []string{"x"}, "has no URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &HTTPEmbedder{Model: "m"}
			if tt.handler != nil {
				srv := httptest.NewServer(tt.handler)
				defer srv.Close()
				e.URL = srv.URL
			}
			if tt.edit != nil {
				tt.edit(e)
			}
			_, err := e.Embed(context.Background(), tt.texts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Embed: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestCachedEmbedder(t *testing.T) {
	srv := newEmbeddingServer(t, "")
	c := &CachedEmbedder{Embedder: &HTTPEmbedder{URL: srv.URL, Model: "test-model"}}
	ctx := context.Background()
	first, err := c.Embed(ctx, []string{"read file", "write file"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Embed(ctx, []string{"write file", "delete file", "read file"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again[0], first[1]) || !slices.Equal(again[2], first[0]) || !slices.Equal(again[1], bagOfWords("delete file", 32)) {
		t.Errorf("cached vectors differ: %v then %v", first, again)
	}
	if n := srv.texts.Load(); n != 3 {
		t.Errorf("the endpoint embedded %d texts, want 3 (each once)", n)
	}
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}
	c.MaxEntries = 3
	if _, err := c.Embed(ctx, []string{"one more"}); err != nil {
		t.Fatal(err)
	}
	if c.Len() != 1 {
		t.Errorf("a full cache kept %d entries after refilling, want 1", c.Len())
	}
}

// conceptEmbedder puts words of one meaning on one axis, as a real
// embedding model would place synonyms near each other.
type conceptEmbedder struct {
	fail bool
}

var concepts = [][]string{
	{"car", "automobil", "vehicl", "park", "leav"},
	{"bread", "bak", "loaf", "oven", "toast"},
	{"rain", "weather", "forecast", "umbrella"},
}

func (c conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	if c.fail {
		return nil, errors.New("model offline")
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, len(concepts)+1)
		v[len(concepts)] = 0.01 // never a zero vector
		for _, tok := range Tokens(text) {
			for axis, words := range concepts {
				if slices.Contains(words, tok) {
					v[axis]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestFused(t *testing.T) {
	docs := []Doc{
		DocOf("garage", "park_automobile", "", "Store an automobile in the lot.", nil, nil),
		DocOf("kitchen", "bake_bread", "", "Bake a loaf in the oven.", nil, nil),
		DocOf("sky", "forecast", "", "The weather for a place.", nil, nil),
		DocOf("garage", "wash", "", "Wash a car.", nil, nil),
	}
	ctx := context.Background()
	f, err := NewFused(ctx, NewIndex(docs), conceptEmbedder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := func(hits []Hit) []string {
		var out []string
		for _, h := range hits {
			out = append(out, docs[h.Doc].Name)
		}
		return out
	}
	tests := []struct {
		query string
		keep  func(int) bool
		want  []string // the hits, in order
	}{
		// Lexical search alone finds only wash (car); the vectors add
		// park_automobile, after wash, which both rankings found.
		{"where can I leave my car", nil, []string{"wash", "park_automobile"}},
		{"will I need an umbrella", nil, []string{"forecast"}},
		{"toast", func(d int) bool { return d != 1 }, nil},
	}
	for _, tt := range tests {
		hits, err := f.Search(ctx, tt.query, 2, tt.keep)
		if err != nil {
			t.Fatal(err)
		}
		got := name(hits)
		// The vector ranking lists every kept document; compare only the
		// documents that carry the query's meaning.
		got = slices.DeleteFunc(got, func(n string) bool { return !slices.Contains(tt.want, n) })
		if !slices.Equal(got, tt.want) || len(tt.want) > 0 && name(hits)[0] != tt.want[0] {
			t.Errorf("Search(%q) = %v, want %v first", tt.query, name(hits), tt.want)
		}
	}
	if lex := f.Index().Search("where can I leave my car", 5, nil); len(lex) != 1 || docs[lex[0].Doc].Name != "wash" {
		t.Errorf("the lexical ranking alone = %v, want [wash]", name(lex))
	}

	broken := &Fused{ix: f.ix, emb: conceptEmbedder{fail: true}, vecs: f.vecs, log: f.log}
	hits, err := broken.Search(ctx, "wash the car", 3, nil)
	if err == nil || !strings.Contains(err.Error(), "model offline") {
		t.Errorf("a failed query embedding gave %v, want the embedder's error", err)
	}
	if len(hits) != 1 || docs[hits[0].Doc].Name != "wash" {
		t.Errorf("a failed query embedding gave %v, want the lexical ranking [wash]", name(hits))
	}
	if _, err := NewFused(ctx, NewIndex(docs), conceptEmbedder{fail: true}, nil); err == nil || !strings.Contains(err.Error(), "embedding 4 tools: model offline") {
		t.Errorf("NewFused with a failing embedder: %v", err)
	}
}

func TestFusedOverHTTP(t *testing.T) {
	srv := newEmbeddingServer(t, "")
	docs, qs := loadEval(t)
	emb := &CachedEmbedder{Embedder: &HTTPEmbedder{URL: srv.URL, Model: "test-model", BatchSize: 100}}
	ctx := context.Background()
	f, err := NewFused(ctx, NewIndex(docs), emb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.texts.Load(); got != int64(len(docs)) {
		t.Errorf("embedded %d texts for %d tools", got, len(docs))
	}
	// Rebuilding embeds nothing again: the vectors are cached by content.
	if _, err := NewFused(ctx, NewIndex(docs), emb, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.texts.Load(); got != int64(len(docs)) {
		t.Errorf("a rebuild embedded %d more texts", got-int64(len(docs)))
	}
	// A hashed bag of words is no model: this checks the plumbing, and
	// that fusing it with the lexical ranking does not break the ranking.
	all, _, _ := evaluate(t, docs, qs, func(q string) []Hit {
		hits, err := f.Search(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}, false)
	t.Logf("fused with a hashed bag of words: %v", all)
	if math.IsNaN(all.reciprocalRank) || pct(all.at5, all.n) < 50 {
		t.Errorf("fused recall collapsed: %v", all)
	}
}

// fixedEmbedder returns the same vectors whatever it is asked.
type fixedEmbedder [][]float32

func (f fixedEmbedder) Embed(context.Context, []string) ([][]float32, error) { return f, nil }

func TestFusedBadVectors(t *testing.T) {
	ctx := context.Background()
	docs := []Doc{DocOf("s", "read_file", "", "Read a file.", nil, nil), DocOf("s", "write_file", "", "Write a file.", nil, nil)}
	tests := []struct {
		name  string
		build Embedder // for the tools
		query Embedder // for the query; nil: no index is built
		want  string
	}{
		{"too few for the tools", fixedEmbedder{{1}}, nil, "returned 1 vectors for 2 tools"},
		{"dimensions differ", fixedEmbedder{{1, 0}, {1}}, nil, "the vector of tool s__write_file has 1 dimensions, the first has 2"},
		{"empty", fixedEmbedder{{}, {}}, nil, "has 0 dimensions"},
		{"two for the query", fixedEmbedder{{1, 0}, {0, 1}}, fixedEmbedder{{1, 0}, {0, 1}}, "returned 2 vectors for the query"},
		{"query dimension", fixedEmbedder{{1, 0}, {0, 1}}, fixedEmbedder{{1, 0, 0}}, "the query's vector has 3 dimensions, the tools' 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFused(ctx, NewIndex(docs), tt.build, nil)
			if tt.query == nil {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("NewFused: %v, want an error with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			f.emb = tt.query
			hits, err := f.Search(ctx, "read file", 5, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Search: %v, want an error with %q", err, tt.want)
			}
			if len(hits) == 0 {
				t.Errorf("a failed query embedding returned no lexical hits")
			}
		})
	}
	// No tools at all: a search finds nothing and does not fail.
	f, err := NewFused(ctx, NewIndex(nil), fixedEmbedder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.emb = fixedEmbedder{{1}}
	if hits, err := f.Search(ctx, "anything", 5, nil); err != nil || len(hits) != 0 {
		t.Errorf("an empty index: %v, %v", hits, err)
	}
}
