package toolsearch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// synthesize makes n tools out of the real ones: copies under new server
// names (github-2, github-3, …) with about a fifth of each description's
// words swapped for words of other tools, so that copies are not
// identical and the vocabulary grows with the catalog.
func synthesize(docs []Doc, n int) []Doc {
	rng := rand.New(rand.NewPCG(1, 2))
	var pool []string
	for _, d := range docs {
		pool = append(pool, strings.Fields(d.Description)...)
	}
	out := make([]Doc, 0, n)
	for c := 0; len(out) < n; c++ {
		for _, d := range docs {
			if len(out) == n {
				break
			}
			if c > 0 {
				d.Server = fmt.Sprintf("%s-%d", d.Server, c+1)
				ws := strings.Fields(d.Description)
				for i := range ws {
					if rng.IntN(5) == 0 {
						ws[i] = pool[rng.IntN(len(pool))]
					}
				}
				d.Description = strings.Join(ws, " ")
			}
			out = append(out, d)
		}
	}
	return out
}

// BenchmarkSearch searches catalogs of 1,000 and 10,000 tools with each
// request of the evaluation set (top 5) and reports the median and 95th
// percentile time of one search; keep=half lets every other server
// through, as a caller's view would.
func BenchmarkSearch(b *testing.B) {
	docs, qs := loadEval(b)
	for _, n := range []int{1000, 10000} {
		big := synthesize(docs, n)
		ix := NewIndex(big)
		for _, half := range []bool{false, true} {
			var keep func(int) bool
			name := fmt.Sprintf("tools=%d", n)
			if half {
				keep = func(d int) bool { return len(big[d].Server)%2 == 0 }
				name += "/keep=half"
			}
			b.Run(name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					for _, q := range qs {
						start := time.Now()
						ix.Search(q.Query, 5, keep)
						took = append(took, time.Since(start))
					}
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// BenchmarkNewIndex builds the index of 1,000 and 10,000 tools.
func BenchmarkNewIndex(b *testing.B) {
	docs, _ := loadEval(b)
	for _, n := range []int{1000, 10000} {
		big := synthesize(docs, n)
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			for b.Loop() {
				NewIndex(big)
			}
		})
	}
}

// bagEmbedder embeds in process with bagOfWords: no model, no HTTP, so
// BenchmarkFusedSearch times what the fusion itself costs.
type bagEmbedder int

func (dim bagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = bagOfWords(t, int(dim))
	}
	return out, nil
}

// BenchmarkFusedSearch is BenchmarkSearch through a Fused index with
// 384-dimensional vectors (a common small embedding model's size): the
// lexical search, a brute-force cosine over every tool and the fusion,
// without the embedding model's own time for the query.
func BenchmarkFusedSearch(b *testing.B) {
	docs, qs := loadEval(b)
	ctx := context.Background()
	for _, n := range []int{1000, 10000} {
		f, err := NewFused(ctx, NewIndex(synthesize(docs, n)), bagEmbedder(384), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				for _, q := range qs {
					start := time.Now()
					if _, err := f.Search(ctx, q.Query, 5, nil); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(start))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
