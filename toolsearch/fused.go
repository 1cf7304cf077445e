package toolsearch

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
)

// Fused is the optional embedding tier: an [Index] together with a vector
// of each of its documents, searched both ways and the two rankings fused
// by reciprocal rank (RRF). Lexical search ([Index.Search]) stays the
// default; a Fused index costs one embedding call per search and one per
// document at build time (wrap the embedder in a [CachedEmbedder] to embed
// only changed tools on rebuilds). Like an Index it is read-only once
// built; searches may run concurrently if the embedder allows it.
type Fused struct {
	ix   *Index
	emb  Embedder
	vecs [][]float32 // unit length, one per document
	log  *slog.Logger
}

// rrfK damps the weight of the first ranks in reciprocal-rank fusion; 60
// is the value of the original RRF paper and of most hybrid search engines.
const rrfK = 60

// NewFused embeds every document of ix with emb (the text of [EmbedText]).
// A nil log discards.
func NewFused(ctx context.Context, ix *Index, emb Embedder, log *slog.Logger) (*Fused, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	texts := make([]string, ix.Len())
	for i := range texts {
		texts[i] = EmbedText(ix.Doc(i))
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embedding %d tools: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("toolsearch: the embedder returned %d vectors for %d tools", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) == 0 || len(v) != len(vecs[0]) {
			return nil, fmt.Errorf("toolsearch: the vector of tool %s__%s has %d dimensions, the first has %d", ix.Doc(i).Server, ix.Doc(i).Name, len(v), len(vecs[0]))
		}
		vecs[i] = unit(v)
	}
	return &Fused{ix: ix, emb: emb, vecs: vecs, log: log}, nil
}

// EmbedText is the text of a tool that an embedder sees: its server, its
// name in words, title, description and parameter names.
func EmbedText(d Doc) string {
	var sb strings.Builder
	sb.WriteString(d.Server)
	sb.WriteString(": ")
	sb.WriteString(strings.Join(words(d.Name), " "))
	if d.Title != "" {
		sb.WriteString(". ")
		sb.WriteString(d.Title)
	}
	if d.Description != "" {
		sb.WriteString(". ")
		sb.WriteString(d.Description)
	}
	if len(d.Params) > 0 {
		sb.WriteString(" Parameters:")
		for _, p := range d.Params {
			sb.WriteString(" ")
			sb.WriteString(p.Name)
		}
	}
	if len(d.Hints) > 0 {
		sb.WriteString(". ")
		sb.WriteString(strings.Join(d.Hints, " "))
	}
	return sb.String()
}

// Index is the lexical index under f.
func (f *Fused) Index() *Index { return f.ix }

// Search returns up to limit documents among those keep accepts (nil:
// all), ranked by the reciprocal-rank fusion of the lexical ranking and
// the cosine ranking of the query's vector. When the query cannot be
// embedded, Search logs it and returns the lexical ranking with the error,
// so a caller may serve the hits and report the failure.
func (f *Fused) Search(ctx context.Context, query string, limit int, keep func(doc int) bool) ([]Hit, error) {
	if limit <= 0 {
		return nil, nil
	}
	return f.fuse(ctx, query, f.ix.Search(query, fuseDepth(limit), keep), limit, keep)
}

// fuseDepth is how many hits of each ranking the fusion of limit reads.
func fuseDepth(limit int) int { return max(limit*5, 50) }

// fuse is Search with the lexical ranking already made (its first
// fuseDepth(limit) hits are read).
func (f *Fused) fuse(ctx context.Context, query string, lexical []Hit, limit int, keep func(doc int) bool) ([]Hit, error) {
	depth := fuseDepth(limit)
	lexical = lexical[:min(depth, len(lexical))]
	qv, err := f.embedQuery(ctx, query)
	if err != nil {
		f.log.Warn("toolsearch: embedding a query failed; lexical ranking only", "err", err)
		return lexical[:min(limit, len(lexical))], err
	}
	vector := f.nearest(qv, depth, keep)
	score := map[int]float64{}
	for r, h := range lexical {
		score[h.Doc] += 1 / float64(rrfK+r+1)
	}
	for r, h := range vector {
		score[h.Doc] += 1 / float64(rrfK+r+1)
	}
	hits := make([]Hit, 0, len(score))
	for d, s := range score {
		hits = append(hits, Hit{Doc: d, Score: s})
	}
	sortHits(hits)
	return hits[:min(limit, len(hits))], nil
}

func (f *Fused) embedQuery(ctx context.Context, query string) ([]float32, error) {
	vs, err := f.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("toolsearch: embedding the query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("toolsearch: the embedder returned %d vectors for the query", len(vs))
	}
	if len(f.vecs) > 0 && len(vs[0]) != len(f.vecs[0]) {
		return nil, fmt.Errorf("toolsearch: the query's vector has %d dimensions, the tools' %d", len(vs[0]), len(f.vecs[0]))
	}
	return unit(vs[0]), nil
}

// nearest is the top documents by cosine with the unit vector q.
func (f *Fused) nearest(q []float32, limit int, keep func(doc int) bool) []Hit {
	hits := make([]Hit, 0, min(limit, len(f.vecs)))
	for d, v := range f.vecs {
		if keep != nil && !keep(d) {
			continue
		}
		hits = pushTop(hits, Hit{Doc: d, Score: float64(dot(v, q))}, limit)
	}
	return hits
}

// dot is the dot product of two vectors of one length, four lanes at a
// time.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// unit is v scaled to length 1, in a new slice: v may be an embedder's
// cached vector (a zero vector stays zero).
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if sum == 0 {
		return out
	}
	n := 1 / math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(float64(x) * n)
	}
	return out
}

// sortHits orders hits best first, ties in document order.
func sortHits(hits []Hit) {
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return a.Doc - b.Doc
	})
}
