package host_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// conceptServer is an OpenAI-compatible embeddings endpoint on loopback
// whose vectors count the words of a few concepts, so that "sum" is near
// "adds" though no word is shared. calls counts its requests; down makes
// it answer 503.
type conceptServer struct {
	url   string
	calls atomic.Int64
	down  atomic.Bool
}

var concepts = [][]string{
	{"add", "adds", "addend", "sum", "plus", "total"},
	{"environment", "env", "variable"},
	{"echo", "text", "repeat"},
}

func newConceptServer(t *testing.T) *conceptServer {
	cs := &conceptServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.calls.Add(1)
		if cs.down.Load() {
			http.Error(w, "model is loading", http.StatusServiceUnavailable)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "concepts" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float32, len(concepts)+1)
			v[len(concepts)] = 0.05
			for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
				for c, words := range concepts {
					for _, cw := range words {
						if w == cw {
							v[c]++
						}
					}
				}
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	cs.url = srv.URL + "/v1/embeddings"
	return cs
}

// TestSearchWithEmbeddings: with a search_embeddings block, a request that
// shares no word with a tool finds it through the model's vectors; the
// tools are embedded once per catalog; an endpoint that fails leaves the
// search ranking by words; without the block nothing is asked of it.
func TestSearchWithEmbeddings(t *testing.T) {
	cs := newConceptServer(t)
	bin := testbin.Build(t, wellbehavedPkg)
	cfg := &config.Config{Servers: []config.Server{stdioServer("fx", bin)}}
	cfg.SearchEmbeddings = config.SearchEmbeddings{URL: cs.url, Model: "concepts"}
	h := startHostConfig(t, cfg, host.Options{})
	c := host.Caller{Principal: host.Principal{Name: "owner"}, Origin: host.OriginAPI}

	if got, _ := searchNames(t, h, c, "the sum, please", nil, 3); len(got) == 0 || got[0] != "fx.add" {
		t.Fatalf("with embeddings, %q finds %v; want fx.add first", "the sum, please", got)
	}
	afterFirst := cs.calls.Load()
	if got, _ := searchNames(t, h, c, "what is the total", nil, 3); len(got) == 0 || got[0] != "fx.add" {
		t.Errorf("with embeddings, %q finds %v; want fx.add first", "what is the total", got)
	}
	if n := cs.calls.Load() - afterFirst; n != 1 {
		t.Errorf("a second search asked the endpoint %d times, want once (the query; the tools are embedded once)", n)
	}

	// The endpoint fails: the query is ranked by words.
	cs.down.Store(true)
	if got, _ := searchNames(t, h, c, "add two numbers", nil, 3); len(got) == 0 || got[0] != "fx.add" {
		t.Errorf("the endpoint down: %v, want fx.add by its words", got)
	}
	cs.down.Store(false)

	// Without the block, words alone: "sum" finds nothing, and the
	// endpoint is not asked.
	plain := &config.Config{Servers: cfg.Servers}
	if _, err := h.Reload(t.Context(), plain); err != nil {
		t.Fatal(err)
	}
	before := cs.calls.Load()
	if got, _ := searchNames(t, h, c, "add two numbers", nil, 3); len(got) == 0 || got[0] != "fx.add" {
		t.Errorf("without embeddings: %v", got)
	}
	if got, _ := searchNames(t, h, c, "the sum, please", nil, 3); len(got) > 0 && got[0] == "fx.add" {
		t.Errorf("without embeddings %q still finds fx.add first: the test shows nothing of them", "the sum, please")
	}
	if n := cs.calls.Load() - before; n != 0 {
		t.Errorf("without a search_embeddings block the endpoint was asked %d times", n)
	}
}
