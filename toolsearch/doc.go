// Package toolsearch ranks the tools of a catalog against an agent's
// request, for the gateway's progressive discovery (search_tools), the
// WebShell's tool search and `mcphost tools -search`.
//
// It owns the index and the ranking, nothing else: what a caller may see
// is the caller's to say (Search takes a filter), and what a tool is comes
// from the host as a [Doc]. An [Index] is built once per catalog, in
// memory, and is read-only afterwards, so every caller may search it at
// once. The ranking is lexical (BM25F over the server, the tool name split
// into words, title, description, parameter names, descriptions and enum
// values), deterministic and free of dependencies.
//
// Where it sits: a leaf. It imports nothing of mcphost's and never calls a
// server, reads the network or keeps anything per caller.
package toolsearch
