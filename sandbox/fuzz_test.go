package sandbox

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refSource is an independent statement of the §8.2 grammar for differential
// fuzzing: explicit ASCII classes, no (?i) (which would let U+212A and U+017F
// match [a-z]); the port range is checked separately.
var refSource = regexp.MustCompile(`^(?:[Hh][Tt][Tt][Pp][Ss]?|[Ww][Ss][Ss]?)://(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::([0-9]{1,5}))?$`)

func refValid(s string) bool {
	m := refSource.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	if m[1] == "" {
		return !strings.HasSuffix(s, ":")
	}
	n, _ := strconv.Atoi(m[1])
	return n >= 1 && n <= 65535
}

// policy is a Content-Security-Policy value split into the lists that
// CSP.Header may vary; checkPolicy fails unless everything else is fixed.
type policy struct {
	resource, connect, frame, base []string
	ancestor                       string
	unsafeEval                     bool // 'unsafe-eval' data: right after 'unsafe-inline' in script-src
}

// checkPolicy asserts that h has exactly the directives of §8.3, in order,
// with their fixed values, and that every variable token is a valid source
// in lower case. It returns the variable parts.
func checkPolicy(t *testing.T, h string) policy {
	t.Helper()
	for i := 0; i < len(h); i++ {
		if c := h[i]; c < 0x20 || c > 0x7e || c == ',' || c == '"' {
			t.Fatalf("policy %q holds byte %#x at %d", h, c, i)
		}
	}
	var p policy
	var names []string
	sources := func(name string, tokens []string) []string {
		for _, tok := range tokens {
			if ValidSource(tok) != nil || tok != asciiLower(tok) {
				t.Fatalf("policy %q: %s holds %q, not a valid lower-case source", h, name, tok)
			}
		}
		return tokens
	}
	fixed := func(name string, got []string, want ...string) {
		if !slices.Equal(got, want) {
			t.Fatalf("policy %q: %s = %q, want %q", h, name, got, want)
		}
	}
	// noneOr returns the sources of a directive that is either 'none' or a
	// list of sources.
	noneOr := func(name string, tokens []string) []string {
		if slices.Equal(tokens, []string{"'none'"}) {
			return nil
		}
		if len(tokens) == 0 {
			t.Fatalf("policy %q: %s is empty", h, name)
		}
		return sources(name, tokens)
	}
	for _, d := range strings.Split(h, "; ") {
		f := strings.Split(d, " ")
		name, tokens := f[0], f[1:]
		names = append(names, name)
		switch name {
		case "default-src", "form-action", "object-src":
			fixed(name, tokens, "'none'")
		case "script-src":
			if len(tokens) == 0 || tokens[0] != "'unsafe-inline'" {
				t.Fatalf("policy %q: %s does not start with 'unsafe-inline'", h, name)
			}
			tokens = tokens[1:]
			if len(tokens) > 1 && tokens[0] == "'unsafe-eval'" && tokens[1] == "data:" {
				p.unsafeEval, tokens = true, tokens[2:]
			}
			p.resource = sources(name, tokens)
		case "style-src", "img-src", "media-src":
			first := map[string]string{"style-src": "'unsafe-inline'", "img-src": "data:", "media-src": "data:"}[name]
			if len(tokens) == 0 || tokens[0] != first {
				t.Fatalf("policy %q: %s does not start with %s", h, name, first)
			}
			fixed(name, tokens[1:], p.resource...)
		case "font-src":
			if len(tokens) == 0 {
				t.Fatalf("policy %q: empty font-src", h)
			}
			fixed(name, sources(name, tokens), p.resource...)
		case "connect-src":
			p.connect = noneOr(name, tokens)
		case "frame-src":
			p.frame = noneOr(name, tokens)
		case "base-uri":
			p.base = noneOr(name, tokens)
		case "frame-ancestors":
			if len(tokens) != 1 || (tokens[0] != "'none'" && checkAncestor(tokens[0]) != nil) {
				t.Fatalf("policy %q: frame-ancestors = %q", h, tokens)
			}
			p.ancestor = tokens[0]
		case "sandbox":
			fixed(name, tokens, "allow-scripts", "allow-forms")
		default:
			t.Fatalf("policy %q: unexpected directive %q", h, name)
		}
	}
	want := []string{"default-src", "script-src", "style-src", "img-src", "media-src"}
	if len(p.resource) > 0 {
		want = append(want, "font-src")
	}
	want = append(want, "connect-src", "frame-src", "base-uri", "form-action", "object-src", "frame-ancestors", "sandbox")
	if !slices.Equal(names, want) {
		t.Fatalf("policy %q: directives %q, want %q", h, names, want)
	}
	return p
}

func FuzzValidSource(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzValidSource.
	f.Fuzz(func(t *testing.T, s string) {
		err := ValidSource(s)
		if ref := refValid(s); (err == nil) != ref {
			t.Fatalf("ValidSource(%q) = %v, but the reference grammar says valid=%v", s, err, ref)
		}
		local := LocalSource(s) // must not panic on any input
		if n := HostNetwork(s); n.Kind != Public && n.Kind != NotAddress && !n.Block.IsValid() && n.Kind != Loopback {
			t.Fatalf("HostNetwork(%q) = %v without a block", s, n.Kind)
		}
		if err != nil {
			if local {
				t.Fatalf("LocalSource(%q) = true for an invalid source", s)
			}
			msg := err.Error()
			if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\r\n\t<>&") {
				t.Fatalf("ValidSource(%q): unsafe error text %q", s, msg)
			}
			all := []string{s}
			if got, want := Header(CSP{ConnectDomains: all, ResourceDomains: all, FrameDomains: all, BaseURIDomains: all}, testOrigin), defaultPolicy; got != want {
				t.Fatalf("Header with invalid %q = %q, want the default %q", s, got, want)
			}
			return
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; c <= 0x20 || c >= 0x7f || strings.IndexByte(";,'\"`", c) >= 0 {
				t.Fatalf("ValidSource(%q) = nil, but byte %d is %#x", s, i, c)
			}
		}
		want := []string{asciiLower(s)}
		for _, tc := range []struct {
			csp  CSP
			list func(policy) []string
		}{
			{CSP{ConnectDomains: []string{s}}, func(p policy) []string { return p.connect }},
			{CSP{ResourceDomains: []string{s}}, func(p policy) []string { return p.resource }},
			{CSP{FrameDomains: []string{s}}, func(p policy) []string { return p.frame }},
			{CSP{BaseURIDomains: []string{s}}, func(p policy) []string { return p.base }},
		} {
			p := checkPolicy(t, Header(tc.csp, testOrigin))
			if !slices.Equal(tc.list(p), want) {
				t.Fatalf("source %q: policy %+v, want it in one list only", s, p)
			}
			if n := len(p.connect) + len(p.resource) + len(p.frame) + len(p.base); n != 1 {
				t.Fatalf("source %q: in %d lists, want 1: %+v", s, n, p)
			}
			if p.ancestor != testOrigin {
				t.Fatalf("frame-ancestors %q, want %q", p.ancestor, testOrigin)
			}
			if p.unsafeEval {
				t.Fatalf("source %q: 'unsafe-eval' without the grant", s)
			}
			// The grant adds 'unsafe-eval' and changes nothing else.
			g := checkPolicy(t, HeaderWith(tc.csp, testOrigin, Grants{UnsafeEval: true}))
			if !g.unsafeEval {
				t.Fatalf("source %q: no 'unsafe-eval' with the grant", s)
			}
			g.unsafeEval = false
			if !reflect.DeepEqual(g, p) {
				t.Fatalf("source %q: the grant changed more than script-src: %+v, want %+v", s, g, p)
			}
		}
	})
}

func FuzzHandler(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzHandler.
	h := Handler(Options{AllowedHostOrigin: allowed})
	f.Fuzz(func(t *testing.T, rawQuery string) {
		rec := serve(h, http.MethodGet, rawQuery)
		switch rec.Code {
		case http.StatusBadRequest:
			if strings.Contains(rec.Body.String(), "<") || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Fatalf("refusal of %q has body %q", rawQuery, rec.Body)
			}
			return
		case http.StatusOK:
		default:
			t.Fatalf("status %d for %q", rec.Code, rawQuery)
		}
		if len(rawQuery) > MaxQueryBytes {
			t.Fatalf("served a query of %d bytes", len(rawQuery))
		}
		if rec.Body.String() != string(page) {
			t.Fatalf("served a body other than the page for %q", rawQuery)
		}
		p := checkPolicy(t, rec.Header().Get("Content-Security-Policy"))

		// Differential: decode the query with the standard library and
		// check the policy holds exactly its sources.
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Fatalf("served %q, which url.ParseQuery refuses: %v", rawQuery, err)
		}
		// 'unsafe-eval' comes from unsafeEval=1 only, never from csp.
		if want := q.Get("unsafeEval") == "1"; p.unsafeEval != want {
			t.Fatalf("served %q with 'unsafe-eval' %v, want %v", rawQuery, p.unsafeEval, want)
		}
		if v, ok := q["unsafeEval"]; ok && (len(v) != 1 || v[0] != "1") {
			t.Fatalf("served %q with unsafeEval %q", rawQuery, v)
		}
		if origin := q.Get("hostOrigin"); !allowed(origin) || p.ancestor != origin {
			t.Fatalf("served %q with hostOrigin %q and frame-ancestors %q", rawQuery, origin, p.ancestor)
		}
		var m map[string][]string // exact keys, unlike a struct
		if v, ok := q["csp"]; ok {
			if err := json.Unmarshal([]byte(v[0]), &m); err != nil {
				t.Fatalf("served %q, whose csp encoding/json refuses: %v", rawQuery, err)
			}
		}
		for key, got := range map[string][]string{
			"connectDomains": p.connect, "resourceDomains": p.resource,
			"frameDomains": p.frame, "baseUriDomains": p.base,
		} {
			if want := cleanSources(m[key]); !slices.Equal(got, want) {
				t.Fatalf("served %q: %s in the policy %q, want %q", rawQuery, key, got, want)
			}
			if len(m[key]) > MaxSourcesPerList {
				t.Fatalf("served %q with %d %s", rawQuery, len(m[key]), key)
			}
			for _, s := range m[key] {
				if ValidSource(s) != nil {
					t.Fatalf("served %q with invalid source %q", rawQuery, s)
				}
			}
		}
		for k := range m {
			if !slices.Contains(fields, k) {
				t.Fatalf("served %q with unknown csp key %q", rawQuery, k)
			}
		}
	})
}
