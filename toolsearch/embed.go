package toolsearch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Embedder turns texts into vectors, one per text and in the same order,
// all of one dimension. The optional embedding tier ([Fused]) ranks tools
// by the cosine of their vectors with the query's.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HTTPEmbedder is an [Embedder] that calls an OpenAI-compatible
// embeddings endpoint (POST {"model", "input": [texts]} answered by
// {"data": [{"index", "embedding"}]}), as OpenAI, Ollama, vLLM, llama.cpp
// and Hugging Face TEI serve it. The zero values of the optional fields are
// sensible defaults.
type HTTPEmbedder struct {
	URL   string // the endpoint, e.g. http://127.0.0.1:11434/v1/embeddings
	Model string // the model the endpoint should use
	Token string // optional: sent as "Authorization: Bearer TOKEN"

	Client      *http.Client  // nil: http.DefaultClient
	Timeout     time.Duration // per request; 0: 30 s
	BatchSize   int           // texts per request; 0: 64
	MaxResponse int64         // bytes of one response body; 0: 32 MiB
}

const (
	defaultEmbedTimeout = 30 * time.Second
	defaultBatchSize    = 64
	defaultMaxResponse  = 32 << 20
)

// Embed sends texts in batches and returns their vectors in order.
func (e *HTTPEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if e.URL == "" {
		return nil, errors.New("toolsearch: the embeddings endpoint has no URL")
	}
	batch := e.BatchSize
	if batch <= 0 {
		batch = defaultBatchSize
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += batch {
		part := texts[start:min(start+batch, len(texts))]
		vecs, err := e.embedBatch(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, fmt.Errorf("toolsearch: embeddings endpoint %s changed dimension between batches (%d, then %d)", e.URL, len(out[0]), len(vecs[0]))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *HTTPEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	timeout := e.Timeout
	if timeout <= 0 {
		timeout = defaultEmbedTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(struct {
		Model string   `json:"model,omitempty"`
		Input []string `json:"input"`
	}{e.Model, texts})
	if err != nil {
		return nil, fmt.Errorf("toolsearch: encoding an embeddings request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %q: %w", e.URL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.Token != "" {
		req.Header.Set("Authorization", "Bearer "+e.Token)
	}
	client := e.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %s: %w", e.URL, err)
	}
	defer resp.Body.Close()
	limit := e.MaxResponse
	if limit <= 0 {
		limit = defaultMaxResponse
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %s: reading the answer: %w", e.URL, err)
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %s answered more than %d bytes", e.URL, limit)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %s answered %s: %s", e.URL, resp.Status, snippet(raw))
	}
	vecs, err := decodeEmbeddings(raw, len(texts))
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embeddings endpoint %s: %w", e.URL, err)
	}
	return vecs, nil
}

// maxDimension bounds the vectors an endpoint may return.
const maxDimension = 1 << 14

// decodeEmbeddings reads an OpenAI-style embeddings answer for n texts:
// exactly one finite, non-empty vector per index 0..n-1, all of one
// dimension, returned in index order whatever the order of data.
func decodeEmbeddings(raw []byte, n int) ([][]float32, error) {
	var answer struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, fmt.Errorf("the answer is not an embeddings list: %w", err)
	}
	if len(answer.Error) > 0 && string(answer.Error) != "null" {
		return nil, fmt.Errorf("the answer is an error: %s", snippet(answer.Error))
	}
	if len(answer.Data) != n {
		return nil, fmt.Errorf("the answer has %d embeddings for %d texts", len(answer.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range answer.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		if at < 0 || at >= n {
			return nil, fmt.Errorf("embedding %d has index %d, outside 0..%d", i, at, n-1)
		}
		if out[at] != nil {
			return nil, fmt.Errorf("two embeddings have index %d", at)
		}
		if len(d.Embedding) == 0 || len(d.Embedding) > maxDimension {
			return nil, fmt.Errorf("embedding %d has %d dimensions (want 1..%d)", at, len(d.Embedding), maxDimension)
		}
		if len(d.Embedding) != len(answer.Data[0].Embedding) {
			return nil, fmt.Errorf("embedding %d has %d dimensions, the first has %d", at, len(d.Embedding), len(answer.Data[0].Embedding))
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			f := float32(x)
			if math.IsNaN(x) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("embedding %d has a value that is not a finite float32 at %d", at, j)
			}
			v[j] = f
		}
		out[at] = v
	}
	return out, nil
}

// snippet is the start of a body for an error message, on one line.
func snippet(b []byte) string {
	const most = 200
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > most {
		s = s[:most] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", s)
}

// CachedEmbedder remembers the vectors of an [Embedder] by the SHA-256 of
// each text, so that rebuilding an index after a catalog change embeds
// only the tools that changed. It is safe for concurrent use. Use one
// cache per model: the key is the text alone.
type CachedEmbedder struct {
	Embedder   Embedder
	MaxEntries int // 0: 100,000; when full, the cache is emptied and refilled

	mu      sync.Mutex
	vectors map[[sha256.Size]byte][]float32
}

const defaultCacheEntries = 100_000

// Embed returns the cached vectors and asks the underlying embedder, in
// one call, for the texts it has not seen.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	keys := make([][sha256.Size]byte, len(texts))
	out := make([][]float32, len(texts))
	var missing []string
	var where []int
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := c.vectors[keys[i]]; ok {
			out[i] = v
		} else {
			missing = append(missing, t)
			where = append(where, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(missing) {
		return nil, fmt.Errorf("toolsearch: the embedder returned %d vectors for %d texts", len(vecs), len(missing))
	}
	most := c.MaxEntries
	if most <= 0 {
		most = defaultCacheEntries
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vectors == nil || len(c.vectors)+len(vecs) > most {
		c.vectors = map[[sha256.Size]byte][]float32{}
	}
	for j, i := range where {
		out[i] = vecs[j]
		if len(c.vectors) < most {
			c.vectors[keys[i]] = vecs[j]
		}
	}
	return out, nil
}

// Len is the number of vectors cached.
func (c *CachedEmbedder) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vectors)
}
