package host

import (
	"context"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/toolsearch"
)

// searchEmbedTimeout bounds embedding a catalog's tools when an index is
// built; past it the search ranks by words alone until the next build.
const searchEmbedTimeout = time.Minute

// embedders is the embedder of the config's search_embeddings block, kept
// while the block stays the same so that its cache of vectors survives
// catalog changes and reloads.
type embedders struct {
	mu       sync.Mutex
	settings config.SearchEmbeddings
	emb      *toolsearch.CachedEmbedder
}

// SearchRanker builds the tool search's ranker of docs: their lexical
// index, with the vectors of the config's search_embeddings fused in when
// there is such a block. When the tools cannot be embedded it says why in
// the log and ranks by words alone. The gateway's search_tools and
// SearchTools both rank this way.
func (h *Host) SearchRanker(ctx context.Context, docs []toolsearch.Doc) toolsearch.Ranker {
	ix := toolsearch.NewIndex(docs)
	emb := h.searchEmbedder()
	if emb == nil || ix.Len() == 0 {
		return toolsearch.Lexical(ix)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), searchEmbedTimeout)
	defer cancel()
	f, err := toolsearch.NewFused(ctx, ix, emb, h.opts.Logger)
	if err != nil {
		h.opts.Logger.Warn("tool search: embedding the tools failed; ranking by words alone until the catalog changes", "tools", ix.Len(), "err", err)
		return toolsearch.Lexical(ix)
	}
	return toolsearch.WithEmbeddings(f)
}

// searchEmbedder is the embedder of the running config's
// search_embeddings block, nil without one.
func (h *Host) searchEmbedder() toolsearch.Embedder {
	s := h.gen().Cfg.SearchEmbeddings
	if s.URL == "" {
		return nil
	}
	e := &h.embed
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.emb == nil || e.settings != s {
		e.settings = s
		e.emb = &toolsearch.CachedEmbedder{Embedder: &toolsearch.HTTPEmbedder{URL: s.URL, Model: s.Model, Token: s.Token}}
	}
	return e.emb
}
