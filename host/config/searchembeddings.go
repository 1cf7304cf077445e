package config

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// decodeSearchEmbeddings checks the `search_embeddings` block; there may be
// one.
func (l *loader) decodeSearchEmbeddings(cfg *Config, blocks []*searchEmbeddingsBlock) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate search_embeddings block",
			Detail:   fmt.Sprintf("A search_embeddings block is already defined at %s. Merge the two blocks into one.", fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	b := blocks[0]
	var e SearchEmbeddings
	missing := func(name, hint string) {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing search_embeddings " + name,
			Detail:   fmt.Sprintf("A search_embeddings block needs %s: give %s.", name, hint),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	switch v, st := l.evalString(b.URL, "url"); st {
	case absent:
		missing("url", "the endpoint, such as \"http://127.0.0.1:11434/v1/embeddings\"")
	case valid:
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid search_embeddings url",
				Detail: fmt.Sprintf("The url %s is not the http or https URL of an OpenAI-compatible embeddings endpoint. Give the whole endpoint, such as \"http://127.0.0.1:11434/v1/embeddings\", without credentials (put a key in token).",
					quoted(b.URL, v)),
				Subject: b.URLRange.Ptr(),
			})
		} else {
			e.URL = v
		}
	}
	switch v, st := l.evalString(b.Model, "model"); st {
	case absent:
		missing("model", "the embedding model it runs, such as \"nomic-embed-text\"")
	case valid:
		if strings.TrimSpace(v) == "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid search_embeddings model",
				Detail:   "The model is empty. Name the embedding model the endpoint runs, such as \"nomic-embed-text\".",
				Subject:  b.ModelRange.Ptr(),
			})
		} else {
			e.Model = v
		}
	}
	if v, st := l.evalString(b.Token, "token"); st == valid {
		e.Token = v
	}
	if e.URL != "" && e.Model != "" {
		cfg.SearchEmbeddings = e
	}
}
