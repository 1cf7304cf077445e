package config

import "testing"

func TestSearchEmbeddingsSettings(t *testing.T) {
	tests := []struct {
		name, src string
		want      SearchEmbeddings
		diag      string // summary of the one error, or ""
	}{
		{"none", "", SearchEmbeddings{}, ""},
		{"local model", "search_embeddings {\n  url   = \"http://127.0.0.1:11434/v1/embeddings\"\n  model = \"nomic-embed-text\"\n}\n",
			SearchEmbeddings{URL: "http://127.0.0.1:11434/v1/embeddings", Model: "nomic-embed-text"}, ""},
		{"with a token", "search_embeddings {\n  url   = \"https://api.example.com/v1/embeddings\"\n  model = \"m\"\n  token = \"k\"\n}\n",
			SearchEmbeddings{URL: "https://api.example.com/v1/embeddings", Model: "m", Token: "k"}, ""},
		{"not a URL", "search_embeddings {\n  url   = \"127.0.0.1:11434\"\n  model = \"m\"\n}\n", SearchEmbeddings{}, "Invalid search_embeddings url"},
		{"credentials in the URL", "search_embeddings {\n  url   = \"http://u:p@127.0.0.1/v1/embeddings\"\n  model = \"m\"\n}\n", SearchEmbeddings{}, "Invalid search_embeddings url"},
		{"empty model", "search_embeddings {\n  url   = \"http://127.0.0.1/v1/embeddings\"\n  model = \" \"\n}\n", SearchEmbeddings{}, "Invalid search_embeddings model"},
		{"no model", "search_embeddings {\n  url = \"http://127.0.0.1/v1/embeddings\"\n}\n", SearchEmbeddings{}, "Missing search_embeddings model"},
		{"two blocks", "search_embeddings {\n  url = \"http://a/v1/embeddings\"\n  model = \"m\"\n}\nsearch_embeddings {\n  url = \"http://b/v1/embeddings\"\n  model = \"m\"\n}\n",
			SearchEmbeddings{URL: "http://a/v1/embeddings", Model: "m"}, "Duplicate search_embeddings block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.src), "t.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if cfg.SearchEmbeddings != tt.want {
					t.Fatalf("search_embeddings %+v, want %+v", cfg.SearchEmbeddings, tt.want)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil {
				t.Fatalf("diagnostics %v, want one %q with a range", diags, tt.diag)
			}
		})
	}
}
