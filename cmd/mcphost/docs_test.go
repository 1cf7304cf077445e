package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// docPages are the pages whose links TestDocsLinks checks, relative to the
// module root: the README, docs/ and the documents at the root.
func docPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md", "RATIONALE.md", "RELIABILITY.md", "BENCHMARKS.md",
		"examples/plugins/README.md", "examples/wasm/README.md"}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		pages = append(pages, "docs/"+filepath.Base(d))
	}
	return pages
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown
// page (outside its fenced blocks): lower case, punctuation dropped,
// spaces as hyphens, a repeated one numbered.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	fence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		for n := 1; out[a]; n++ {
			a = b.String() + "-" + string(rune('0'+n))
		}
		out[a] = true
	}
	return out
}

var mdLinkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of the README, the pages of docs/ and
// the root documents reaches a file of the repository, and its #anchor a
// heading of that page, so that moving a section cannot leave a link
// behind.
func TestDocsLinks(t *testing.T) {
	root := "../.."
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(src))
		return anchors[page]
	}
	checked := 0
	for _, page := range docPages(t) {
		src, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for n, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
				continue
			}
			if fence {
				continue
			}
			for _, m := range mdLinkRE.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := page
				if path != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), path)))
					if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
						t.Errorf("%s:%d: the link %s reaches no file (%s)", page, n+1, target, dest)
						continue
					}
				}
				checked++
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s:%d: the link %s has an anchor into a file that is no Markdown page", page, n+1, target)
				} else if !anchorsOf(dest)[anchor] {
					t.Errorf("%s:%d: the link %s names no heading of %s", page, n+1, target, dest)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d links; the pattern no longer finds them", checked)
	}
}

// TestDocsInspectorVersion: the MCP Inspector command line of the docs
// names the version the interoperability tests run
// (testdata/interop/package.json), since older ones lack --header.
func TestDocsInspectorVersion(t *testing.T) {
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	src, err := os.ReadFile("../../testdata/interop/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(src, &manifest); err != nil {
		t.Fatal(err)
	}
	tested := manifest.Dependencies["@modelcontextprotocol/inspector"]
	if tested == "" {
		t.Fatal("testdata/interop/package.json has no @modelcontextprotocol/inspector")
	}
	re := regexp.MustCompile(`@modelcontextprotocol/inspector@([0-9][^\s` + "`" + `]*)`)
	found := 0
	for _, page := range docPages(t) {
		src, err := os.ReadFile(filepath.Join("../..", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			found++
			if m[1] != tested {
				t.Errorf("%s runs the Inspector %s; the tests run %s", page, m[1], tested)
			}
		}
	}
	if found == 0 {
		t.Error("no page has an Inspector command line (@modelcontextprotocol/inspector@VERSION)")
	}
}

// TestREADMEQuickStart: the README's Go version is go.mod's, its test
// command is the one .ci/run runs, and it links the reference pages,
// among them the project layout.
func TestREADMEQuickStart(t *testing.T) {
	read := func(name string) string {
		src, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	readme, gomod, ci := read("README.md"), read("go.mod"), read(".ci/run")
	m := regexp.MustCompile(`(?m)^go ([0-9]+\.[0-9]+)`).FindStringSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	if want := "You need Go " + m[1] + " or newer (go.mod's `go` line)"; !strings.Contains(readme, want) {
		t.Errorf("the README does not say %q", want)
	}
	_, tests, ok := strings.Cut(readme, "Run the tests")
	if !ok {
		t.Fatal(`the README has no "Run the tests"`)
	}
	blocks := fencedBlocks(tests)
	if len(blocks) == 0 || blocks[0].lang != "sh" {
		t.Fatal("the README's Run the tests has no sh block")
	}
	cmd := strings.TrimSpace(blocks[0].text)
	if !slices.Contains(strings.Split(ci, "\n"), cmd) {
		t.Errorf(".ci/run does not run the README's test command %q", cmd)
	}
	for _, link := range []string{"docs/configuration.md", "docs/gateway.md", "docs/oauth.md", "docs/replicas.md",
		"docs/policies-and-plugins.md", "docs/contained-servers.md", "docs/api.md", "docs/apps-host.md",
		"docs/architecture.md#project-layout"} {
		if !strings.Contains(readme, "]("+link+")") {
			t.Errorf("the README does not link %s", link)
		}
	}
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("the README has %d lines: a newcomer's quick start; move reference text to docs/", n)
	}
}

// TestDocsExamplesList: docs/configuration.md's list of examples names
// every example config and every example directory.
func TestDocsExamplesList(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../examples/hcl/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, "](../examples/hcl/"+filepath.Base(f)+")")
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "hcl" {
			want = append(want, "](../examples/"+e.Name()+"/")
		}
	}
	if len(files) == 0 {
		t.Fatal("no examples/hcl/*.hcl")
	}
	for _, w := range want {
		if !strings.Contains(string(doc), w) {
			t.Errorf("docs/configuration.md's examples do not link %s", strings.TrimPrefix(w, "]("))
		}
	}
}
