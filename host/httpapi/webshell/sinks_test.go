package webshell_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host/httpapi/webshell"
)

// htmlSinks are the DOM APIs that parse a string as markup or code. The
// WebShell puts every string from the API or an MCP server into the page as
// text (dom.js: h's text prop sets textContent, children become text
// nodes), so a tool title such as `<img src=x onerror=...>` stays literal
// text; App HTML is only ever shown by the sandbox proxy, never parsed here.
var htmlSinks = regexp.MustCompile(`\.innerHTML\b|\.outerHTML\b|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment|\.srcdoc\b|setHTMLUnsafe|parseHTMLUnsafe|\beval\s*\(|\bnew\s+Function\b`)

// TestNoHTMLSinks is the JS-free half of "server strings are shown inert":
// no WebShell module uses an API that would parse them. (The browser tests
// check the rendering itself where chromium is installed.)
func TestNoHTMLSinks(t *testing.T) {
	files, err := fs.Glob(webshell.Assets(), "*.js")
	if err != nil || len(files) == 0 {
		t.Fatalf("no JavaScript modules in the assets (%v)", err)
	}
	for _, name := range files {
		if name == "app-preamble.js" {
			// Not WebShell code: the text put before an App's HTML, run
			// only in the App's sandboxed realm, where it guards these very
			// APIs (see the file's comment).
			continue
		}
		b, err := fs.ReadFile(webshell.Assets(), name)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code := strings.TrimSpace(line)
			if strings.HasPrefix(code, "//") || strings.HasPrefix(code, "*") || strings.HasPrefix(code, "/*") {
				continue
			}
			if m := htmlSinks.FindString(code); m != "" {
				t.Errorf("%s:%d uses %s, which parses a string as markup or code; build the element with dom.js h() and text instead:\n\t%s", name, i+1, m, code)
			}
		}
	}
}
