package toolsearch

import "context"

// Ranker is what a search runs on: an Index, with an embedding tier
// (Fused) over it or not. The zero Ranker matches nothing.
type Ranker struct {
	ix    *Index
	fused *Fused
}

// Lexical is the Ranker of ix alone.
func Lexical(ix *Index) Ranker { return Ranker{ix: ix} }

// WithEmbeddings is the Ranker of f: f's index, fused with its vectors.
func WithEmbeddings(f *Fused) Ranker { return Ranker{ix: f.Index(), fused: f} }

// Rank returns up to limit documents among those keep accepts, best first,
// and total, how many documents match a word of query (the lexical
// ranking's count: with embeddings every document is somewhat near, so
// total says how many are about the query's words; never fewer than the
// hits). With embeddings, a query that cannot be embedded is ranked
// lexically (Fused logs why).
func (r Ranker) Rank(ctx context.Context, query string, limit int, keep func(doc int) bool) (hits []Hit, total int) {
	if r.ix == nil || len(Tokens(query)) == 0 {
		return nil, 0 // a query of stop words asks for nothing, embeddings or not
	}
	lexical := r.ix.Search(query, r.ix.Len(), keep)
	total = len(lexical)
	limit = max(limit, 0)
	if r.fused == nil || limit == 0 {
		return lexical[:min(limit, len(lexical))], total
	}
	hits, _ = r.fused.fuse(ctx, query, lexical, limit, keep)
	return hits, max(total, len(hits))
}
