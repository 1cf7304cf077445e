package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Doc is one tool as the index sees it.
type Doc struct {
	Server      string   // the server's name
	Name        string   // the tool's name on its server
	Title       string   // the tool's title, if any
	Description string   // the tool's description
	Hints       []string // the server's search_hint keywords: indexed, never shown
	Params      []Param  // the top-level properties of its input schema, in order
}

// Param is one top-level property of a tool's input schema.
type Param struct {
	Name        string
	Description string
	Enum        []string // its values, when it lists strings
}

// ToolDoc is the Doc of t, a tool of server: its title is the one a client
// shows (the tool's title, else its annotations' title).
func ToolDoc(server string, t *mcp.Tool, hints []string) Doc {
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	return DocOf(server, t.Name, title, t.Description, t.InputSchema, hints)
}

// DocOf builds the Doc of a tool from its parts; inputSchema is the tool's
// input schema in any form that encodes to JSON (raw bytes, a decoded map).
// A schema that is not an object with properties gives no parameters.
func DocOf(server, name, title, description string, inputSchema any, hints []string) Doc {
	d := Doc{Server: server, Name: name, Title: title, Description: description, Hints: hints}
	var raw []byte
	switch v := inputSchema.(type) {
	case nil:
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		raw, _ = json.Marshal(v)
	}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
		} `json:"properties"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &schema) != nil {
		return d
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := schema.Properties[n]
		param := Param{Name: n, Description: p.Description}
		for _, e := range p.Enum {
			if s, ok := e.(string); ok {
				param.Enum = append(param.Enum, s)
			}
		}
		d.Params = append(d.Params, param)
	}
	return d
}

// The fields of a document and their weights: a word in a tool's name says
// more about it than one in a parameter's description.
const (
	fieldServer = iota
	fieldName
	fieldTitle
	fieldDescription
	fieldParams
	fieldParamText
	numFields
)

var fieldWeight = [numFields]float64{
	fieldServer:      2,
	fieldName:        3,
	fieldTitle:       3,
	fieldDescription: 1,
	fieldParams:      1,
	fieldParamText:   0.5,
}

// coordWeight rewards a document for the share of the query's words it
// matches: its score is multiplied by 1 + coordWeight × matched / words.
// BM25 alone adds up each word's evidence, so a tool that matches one
// rare word of the query very well can outrank one that matches most of
// them; the factor (the coordination factor of classic Lucene scoring)
// tilts that back.
const coordWeight = 1

// BM25's saturation and length normalisation.
const (
	k1 = 1.2
	b  = 0.75
)

// fields is the text of each field of d.
func fields(d Doc) [numFields]string {
	var f [numFields]string
	f[fieldServer] = d.Server + " " + strings.Join(d.Hints, " ")
	f[fieldName] = d.Name
	f[fieldTitle] = d.Title
	f[fieldDescription] = d.Description
	var params, text []string
	for _, p := range d.Params {
		params = append(params, p.Name)
		text = append(text, p.Description)
		text = append(text, p.Enum...)
	}
	f[fieldParams] = strings.Join(params, " ")
	f[fieldParamText] = strings.Join(text, " ")
	return f
}

// posting is a document that has a term, with the term's weighted,
// length-normalised frequency in it (BM25F's pseudo-frequency).
type posting struct {
	doc int32
	tf  float32
}

// Index ranks a fixed set of tools. It is read-only once built: searches
// may run concurrently.
type Index struct {
	docs     []Doc
	postings map[string][]posting
	idf      map[string]float64
	plain    bool      // BM25F alone: no families, compounds or coordination (the evaluation's baseline)
	scratch  sync.Pool // of *scratch
}

// NewIndex indexes docs; a Hit's Doc is a position in docs.
func NewIndex(docs []Doc) *Index {
	ix := &Index{docs: docs, postings: map[string][]posting{}, idf: map[string]float64{}}
	tokens := make([][numFields][]string, len(docs))
	var total [numFields]float64
	memo := map[string]string{}
	for i, d := range docs {
		for f, text := range fields(d) {
			tokens[i][f] = appendTokens(nil, text, memo)
			total[f] += float64(len(tokens[i][f]))
		}
	}
	var avg [numFields]float64
	for f := range avg {
		avg[f] = max(total[f]/float64(max(len(docs), 1)), 1)
	}
	for i := range docs {
		tf := map[string]float64{}
		for f := range numFields {
			norm := 1 - b + b*float64(len(tokens[i][f]))/avg[f]
			for _, t := range tokens[i][f] {
				tf[t] += fieldWeight[f] / norm
			}
		}
		for t, v := range tf {
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), tf: float32(v)})
		}
	}
	n := float64(len(docs))
	for t, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[t] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return ix
}

// Len is the number of documents.
func (ix *Index) Len() int { return len(ix.docs) }

// Doc is document i.
func (ix *Index) Doc(i int) Doc { return ix.docs[i] }

// Hit is a document that matches a query, and how well.
type Hit struct {
	Doc   int     // a position in the documents the index was built from
	Score float64 // higher is better; only comparable within one search
}

// Search returns up to limit documents that match any word of query, best
// first (ties in document order), among those keep accepts (nil: all).
// Each query word also finds, at a lower weight, the words of its family
// (families.go); a document counts the best of these once per query word. A query with no
// word the index knows matches nothing.
func (ix *Index) Search(query string, limit int, keep func(doc int) bool) []Hit {
	if limit <= 0 || len(ix.docs) == 0 {
		return nil
	}
	terms := append(Tokens(query), ix.compounds(query)...)
	slices.Sort(terms)
	terms = slices.Compact(terms)
	sc := ix.getScratch()
	defer ix.putScratch(sc)
	scores, best, seen := sc.scores, sc.best, sc.seen
	groups := ix.expand(terms)
	ngroups := len(groups)
	for _, group := range groups {
		sc.touched = sc.touched[:0]
		for _, wt := range group {
			idf := ix.idf[wt.term]
			for _, p := range ix.postings[wt.term] {
				tf := float64(p.tf)
				s := wt.weight * idf * tf * (k1 + 1) / (tf + k1)
				if best[p.doc] == 0 { // every score is positive
					sc.touched = append(sc.touched, p.doc)
				}
				best[p.doc] = max(best[p.doc], s)
			}
		}
		for _, d := range sc.touched {
			sc.count[d]++
			scores[d] += best[d]
			best[d] = 0
			if !seen[d] {
				seen[d] = true
				sc.matched = append(sc.matched, d)
			}
		}
	}
	hits := make([]Hit, 0, min(len(sc.matched), limit))
	for _, d := range sc.matched {
		if keep == nil || keep(int(d)) {
			score := scores[d]
			if !ix.plain {
				score *= 1 + coordWeight*float64(sc.count[d])/float64(ngroups)
			}
			hits = pushTop(hits, Hit{Doc: int(d), Score: score}, limit)
		}
	}
	return hits
}

// scratch is the per-search working memory of an index, pooled: a search
// of 10,000 tools would otherwise allocate three slices of 10,000.
type scratch struct {
	scores, best     []float64 // by document: the score, a query word's best
	seen             []bool    // by document: in matched
	count            []int32   // by document: the query words it matched
	touched, matched []int32
}

func (ix *Index) getScratch() *scratch {
	if sc, ok := ix.scratch.Get().(*scratch); ok {
		return sc
	}
	n := len(ix.docs)
	return &scratch{scores: make([]float64, n), best: make([]float64, n), seen: make([]bool, n), count: make([]int32, n)}
}

// putScratch clears what a search wrote and returns sc to the pool.
func (ix *Index) putScratch(sc *scratch) {
	for _, d := range sc.matched {
		sc.scores[d] = 0
		sc.seen[d] = false
		sc.count[d] = 0
	}
	sc.matched = sc.matched[:0]
	ix.scratch.Put(sc)
}

// less says whether a ranks before b: higher score, then lower document.
func less(a, b Hit) bool {
	return a.Score > b.Score || a.Score == b.Score && a.Doc < b.Doc
}

// pushTop inserts h into top, which holds at most limit hits best first,
// dropping the worst when it is full: a search keeps its few best hits
// without sorting every match.
func pushTop(top []Hit, h Hit, limit int) []Hit {
	if len(top) == limit {
		if !less(h, top[limit-1]) {
			return top
		}
		top = top[:limit-1]
	}
	i, _ := slices.BinarySearchFunc(top, h, func(e, t Hit) int {
		if less(e, t) {
			return -1
		}
		return 1
	})
	return slices.Insert(top, i, h)
}

// compounds are the words of query that, written together, make a term
// the index knows: "look up" finds lookup, "screen shot" screenshot,
// "data base" database.
func (ix *Index) compounds(query string) []string {
	if ix.plain {
		return nil
	}
	var out []string
	var prev string
	forEachWord(query, func(w string) {
		if prev != "" {
			if t := token(prev + w); t != "" {
				if _, ok := ix.postings[t]; ok {
					out = append(out, t)
				}
			}
		}
		prev = w
	})
	return out
}

// weighted is a term a query looks for, and how much it counts.
type weighted struct {
	term   string
	weight float64
}

// expand gives, for each query term, the terms that stand for it: itself
// (weight 1) and its family (expandWeight).
// Only terms the index knows are kept.
func (ix *Index) expand(terms []string) [][]weighted {
	groups := make([][]weighted, 0, len(terms))
	for _, t := range terms {
		var g []weighted
		add := func(term string, w float64) {
			if _, ok := ix.postings[term]; !ok {
				return
			}
			for i := range g {
				if g[i].term == term {
					g[i].weight = max(g[i].weight, w)
					return
				}
			}
			g = append(g, weighted{term, w})
		}
		add(t, 1)
		if !ix.plain {
			for _, f := range family[t] {
				add(f, expandWeight)
			}
		}
		if len(g) > 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

var CoverAlpha = 2.0
