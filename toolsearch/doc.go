// Package toolsearch ranks the tools of a catalog against an agent's
// request, for the gateway's progressive discovery (search_tools), the
// WebShell's tool search and `mcphost tools -search`.
//
// It owns the index and the ranking, nothing else: what a caller may see
// is the caller's to say (Search takes a filter), and what a tool is comes
// from the host as a [Doc] ([ToolDoc] gives it the title a client shows:
// the tool's title, else its annotations' title). An [Index] is built once per
// catalog, in memory, and is read-only afterwards, so every caller may
// search it at once. The ranking is lexical and deterministic: BM25F over
// the server and its hints, the tool name split into words, title,
// description, parameter names, descriptions and enum values; each query
// word also finds the words of its family (remove: delete, folder:
// directory; families.go) at half weight, words written apart find their
// compound (look up: lookup), and a tool's score grows with the share of
// the query's words it matches.
//
// An optional embedding tier, [Fused], fuses that ranking with the cosine
// ranking of vectors from an [Embedder] by reciprocal rank.
// [HTTPEmbedder] calls an OpenAI-compatible /v1/embeddings endpoint and
// [CachedEmbedder] keeps vectors by content hash; lexical search stays the
// default, and nothing here reaches the network unless a caller builds a
// Fused index with an HTTPEmbedder.
//
// Quality and speed are measured on real tools (testdata/toolsearch):
// TestRecall holds recall to a floor, and BenchmarkSearch and
// BenchmarkNewIndex time catalogs of 1,000 and 10,000 tools; BENCHMARKS.md
// ("Tool search: recall and latency") has the figures.
//
// Where it sits: a leaf. It imports nothing of mcphost's, uses only the
// standard library, and keeps nothing per caller.
package toolsearch
