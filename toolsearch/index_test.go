package toolsearch

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"getUserProfile", []string{"get", "user", "profil"}},
		{"HTTPServer", []string{"http", "server"}},
		{"API-post-search", []string{"api", "post", "search"}},
		{"list_files in a directory", []string{"list", "fil", "directory"}},
		{"created, creates, create", []string{"creat", "creat", "creat"}},
		{"Deleted the issues", []string{"delet", "issu"}},
		{"running searches", []string{"run", "search"}},
		{"status of analysis", []string{"status", "analysis"}},
		{"ec2 v2Api", []string{"ec2", "v2", "api"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSearch(t *testing.T) {
	docs := []Doc{
		DocOf("filesystem", "read_text_file", "", "Read the complete contents of a file as text.", json.RawMessage(`{"properties":{"path":{"type":"string"}}}`), nil),
		DocOf("filesystem", "list_directory", "", "Get a detailed listing of all files and directories in a specified path.", json.RawMessage(`{"properties":{"path":{"type":"string"}}}`), nil),
		DocOf("github", "create_issue", "Create issue", "Create a new issue in a GitHub repository.", json.RawMessage(`{"properties":{"owner":{},"repo":{},"title":{},"body":{}}}`), nil),
		DocOf("github", "search_code", "", "Search for code across GitHub repositories.", json.RawMessage(`{"properties":{"q":{"description":"search query"}}}`), nil),
		DocOf("weather", "forecast", "", "Weather forecast for a place.", json.RawMessage(`{"properties":{"units":{"enum":["celsius","fahrenheit"]}}}`), []string{"temperature", "rain"}),
		DocOf("db", "delete_record", "", "Delete a record.", nil, nil),
		DocOf("dictionary", "lookup_word", "", "Definitions of a word.", nil, nil),
	}
	ix := NewIndex(docs)
	tests := []struct {
		query string
		want  string // the first hit's name
	}{
		{"open a new GitHub issue about the crash", "create_issue"},
		{"what files are in this folder listing", "list_directory"},
		{"read the contents of config.yaml", "read_text_file"},
		{"will it rain tomorrow", "forecast"},
		{"temperature in fahrenheit", "forecast"},
		{"find code that calls parseConfig", "search_code"},
		// Families: remove is delete's, folder directory's.
		{"remove the record", "delete_record"},
		{"what is in this folder", "list_directory"},
		// A compound: "look up" finds lookup.
		{"look up the meaning of serendipity", "lookup_word"},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.query, 3, nil)
		if len(hits) == 0 || docs[hits[0].Doc].Name != tt.want {
			var got []string
			for _, h := range hits {
				got = append(got, docs[h.Doc].Name)
			}
			t.Errorf("Search(%q) = %v, want %s first", tt.query, got, tt.want)
		}
	}
	if hits := ix.Search("the of and", 5, nil); len(hits) != 0 {
		t.Errorf("a query of stop words matched %v", hits)
	}
	if hits := ix.Search("issue", 5, func(d int) bool { return docs[d].Server != "github" }); len(hits) != 0 {
		t.Errorf("a filtered-out tool was returned: %v", hits)
	}
	if hits := ix.Search("file", 1, nil); len(hits) != 1 {
		t.Errorf("limit 1 gave %d hits", len(hits))
	}
}

// TestSearchTopAndConcurrency checks that a short search is the head of a
// full one (the top-k selection against a full sort), and that concurrent
// searches, which share pooled scratch memory, give the serial answers.
func TestSearchTopAndConcurrency(t *testing.T) {
	docs, qs := loadEval(t)
	ix := NewIndex(docs)
	want := make([][]Hit, len(qs))
	for i, q := range qs {
		all := ix.Search(q.Query, ix.Len(), nil)
		want[i] = ix.Search(q.Query, 5, nil)
		if len(all) < len(want[i]) || !slices.Equal(all[:len(want[i])], want[i]) {
			t.Fatalf("Search(%q, 5) = %v, the full search starts %v", q.Query, want[i], all[:min(5, len(all))])
		}
		if !slices.IsSortedFunc(all, func(a, b Hit) int {
			if less(a, b) {
				return -1
			}
			return 1
		}) {
			t.Fatalf("Search(%q) is not best first: %v", q.Query, all)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, q := range qs {
				if got := ix.Search(q.Query, 5, nil); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Search(%q) = %v, serially %v", q.Query, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// TestRanker: a lexical Ranker is the index's search with its count; the
// zero Ranker matches nothing.
func TestRanker(t *testing.T) {
	docs := []Doc{
		DocOf("fs", "read_file", "", "Read a file.", nil, nil),
		DocOf("fs", "write_file", "", "Write a file.", nil, nil),
		DocOf("web", "fetch", "", "Fetch a URL.", nil, nil),
	}
	r := Lexical(NewIndex(docs))
	hits, total := r.Rank(t.Context(), "read a file", 1, nil)
	if len(hits) != 1 || docs[hits[0].Doc].Name != "read_file" || total < 2 {
		t.Errorf("Rank = %v, %d; want read_file first of at least 2", hits, total)
	}
	if hits, total := (Ranker{}).Rank(t.Context(), "file", 5, nil); hits != nil || total != 0 {
		t.Errorf("the zero Ranker: %v, %d", hits, total)
	}
}
