package importcfg

// Headers and url parameters that carry secrets: the value is replaced by
// a variable that mcphost reads when it starts.

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// headers fills the headers of a remote server. A value with references
// is translated; a literal value that looks like a secret is replaced by
// a variable named after the server and the header.
func (c *importConverter) headers(s *importServer) {
	e := s.Entry
	f := e.File
	index := map[string]int{}
	set := func(pos, name string, value tmpl) {
		key := strings.ToLower(name)
		if i, dup := index[key]; dup {
			f.warn(e, pos, "the header %q is given twice; the last one is kept", name)
			s.Headers[i] = hclKV{Key: name, Value: value}
			return
		}
		index[key] = len(s.Headers)
		s.Headers = append(s.Headers, hclKV{Key: name, Value: value})
	}
	for _, kv := range e.Headers {
		if !validHeaderName(kv.Key) {
			f.warn(e, kv.Pos, "%q is not a valid header name; left out", kv.Key)
			continue
		}
		if strings.ContainsAny(kv.Value, "\r\n\x00") {
			f.warn(e, kv.Pos, "the value of the header %q has a line break; left out", kv.Key)
			continue
		}
		t, needs, warns := c.translate(e, kv.Value)
		for _, w := range warns {
			f.warn(e, kv.Pos, "headers[%q]: %s", kv.Key, w)
		}
		if t.hasRefs() {
			for _, n := range needs {
				s.need(n)
			}
			set(kv.Pos, kv.Key, t)
			continue
		}
		lit := t.literal()
		if !secretHeader(kv.Key, lit) {
			set(kv.Pos, kv.Key, t)
			continue
		}
		v := c.headerVar(s.Name, kv.Key)
		scheme, _ := splitAuthScheme(lit)
		if scheme != "" {
			set(kv.Pos, kv.Key, tmpl{{Lit: scheme + " "}, {Ref: &envRef{Name: v}}})
			s.need(envNeed{Name: v, Why: fmt.Sprintf("the %s header's credential, after %q", kv.Key, scheme)})
		} else {
			set(kv.Pos, kv.Key, refTmpl(v))
			s.need(envNeed{Name: v, Why: fmt.Sprintf("the value of the %s header", kv.Key)})
		}
		f.warn(e, kv.Pos, "the header %q looks like a secret; it reads env(%q) instead of the value", kv.Key, v)
	}
	for _, kv := range e.HeaderEnv {
		if !validHeaderName(kv.Key) || kv.Value == "" {
			f.warn(e, e.Pos, "env_http_headers[%q] is not a header and a variable name; left out", kv.Key)
			continue
		}
		set(e.Pos, kv.Key, refTmpl(kv.Value))
		s.need(envNeed{Name: kv.Value, Why: fmt.Sprintf("the value of the %s header", kv.Key)})
	}
	if e.BearerEnv != "" {
		set(e.Pos, "Authorization", tmpl{{Lit: "Bearer "}, {Ref: &envRef{Name: e.BearerEnv}}})
		s.need(envNeed{Name: e.BearerEnv, Why: "the bearer token (bearer_token_env_var)"})
	}
}

// headerVar derives a unique variable name for a secret header:
// SERVER_HEADER in upper case, or HEADER when it starts with SERVER_.
func (c *importConverter) headerVar(server, header string) string {
	base := envVarName(header)
	if prefix := envVarName(server); !strings.HasPrefix(base, prefix+"_") {
		base = envVarName(prefix + "_" + header)
	}
	v := base
	for n := 2; c.vars[v]; n++ {
		v = fmt.Sprintf("%s_%d", base, n)
	}
	c.vars[v] = true
	return v
}

// validHeaderName reports whether s is an HTTP field name (a token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

var authSchemeRE = regexp.MustCompile(`^(?i)(bearer|basic|token|bot|digest)\s+(\S.*)$`)

// splitAuthScheme splits "Bearer abc" into its scheme and credential.
func splitAuthScheme(v string) (scheme, cred string) {
	m := authSchemeRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return "", ""
	}
	return m[1], m[2]
}

// secretHeader reports whether a header's literal value should not be
// copied: its name says it carries a credential, or the value looks like
// one.
func secretHeader(name, value string) bool {
	if secretName(name) {
		return true
	}
	if scheme, _ := splitAuthScheme(value); scheme != "" {
		return true
	}
	return looksRandom(value)
}

// secretName reports whether a header or parameter name says it carries a
// credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "sig":
		return true
	}
	for _, w := range []string{"token", "secret", "key", "auth", "password", "passwd", "session", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// urlQuery replaces the values of secret-looking query parameters of a
// literal url (?api_key=..., as some hosted servers hand out) with
// variables, as headers do.
func (c *importConverter) urlQuery(s *importServer) {
	if s.URL.hasRefs() {
		return
	}
	raw := s.URL.literal()
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	t := litTmpl(base + "?")
	changed := false
	for i, pair := range strings.Split(query, "&") {
		if i > 0 {
			t = t.lit("&")
		}
		name, val, _ := strings.Cut(pair, "=")
		shown, err := url.QueryUnescape(name)
		if err != nil {
			shown = name
		}
		if val == "" || !secretName(shown) {
			t = t.lit(pair)
			continue
		}
		v := c.headerVar(s.Name, shown)
		t = t.lit(name + "=").ref(&envRef{Name: v})
		s.need(envNeed{Name: v, Why: fmt.Sprintf("the %s parameter of the url, as written there", shown)})
		s.Entry.File.warn(s.Entry, s.Entry.Pos, "the url parameter %q looks like a secret; it reads env(%q) instead of the value", shown, v)
		changed = true
	}
	if hasFrag {
		t = t.lit("#" + frag)
	}
	if changed {
		s.URL = t
	}
}

// looksRandom reports whether v is a long unbroken run of letters, digits
// and the punctuation of tokens, with letters and digits both: an API key
// rather than a word, a date or a media type.
func looksRandom(v string) bool {
	if len(v) < 24 || strings.Contains(v, "://") {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.IndexByte("-_.=+/:", c) >= 0:
		default:
			return false
		}
	}
	return letter && digit
}
