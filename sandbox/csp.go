package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/appdisplay"
	"io"
	"strings"
)

// MaxSourcesPerList bounds each list of the csp query parameter (§8.1).
const MaxSourcesPerList = 32

// CSP holds the source lists an App declared in _meta.ui.csp (apps.md §4):
// where the App may connect, load resources from, frame, and set as base URI.
// Each entry should pass [ValidSource]; an empty list means none. It is the
// type every stage shares (package appdisplay).
type CSP = appdisplay.CSP

// Header builds, from c, the Content-Security-Policy of the proxy page (apps.md §8.3):
//
//	default-src 'none'; script-src 'unsafe-inline' R; style-src 'unsafe-inline' R;
//	img-src data: R; media-src data: R; font-src R; connect-src C|'none';
//	frame-src F|'none'; base-uri B|'none'; form-action 'none'; object-src 'none';
//	frame-ancestors hostOrigin; sandbox allow-scripts allow-forms
//
// R, C, F and B are ResourceDomains, ConnectDomains, FrameDomains and
// BaseURIDomains; font-src is left out when R is empty. There is no 'self',
// 'unsafe-eval' (see [HeaderWith]) or blob:. Sources are emitted with scheme and host in lower
// case and duplicates dropped. Header never trusts its input: a source that
// fails [ValidSource] is left out, and a hostOrigin that is neither an http
// loopback origin with a port nor a public http(s) origin in the form a
// browser serializes (as the handler requires) yields frame-ancestors
// 'none'. Callers should still validate first and refuse bad
// input, as [Handler] does, rather than rely on this filtering.
func Header(c CSP, hostOrigin string) string {
	return HeaderWith(c, hostOrigin, Grants{})
}

// Grants are what an operator's config allows an App beyond the policy of
// [Header]; none by default. They never come from the App's own metadata:
// the host sets them on the display record from the App's server's config,
// and the WebShell asks the proxy for them only when the record has them.
type Grants struct {
	// UnsafeEval adds 'unsafe-eval' and data: to script-src, so that the
	// App may run code it builds from strings: eval and new Function
	// (three.js scenes, code playgrounds) and scripts or modules from data:
	// URLs (the PDF App imports PDF.js's worker from one). It is the
	// server's app_csp_unsafe_eval switch. Neither reaches the network: a
	// data: script's code is the App's own, as an inline script's is.
	UnsafeEval bool
}

// HeaderWith is [Header] with the grants g: with g.UnsafeEval, script-src
// is "'unsafe-inline' 'unsafe-eval' data: R". Nothing else changes.
func HeaderWith(c CSP, hostOrigin string, g Grants) string {
	res := cleanSources(c.ResourceDomains)
	script := "'unsafe-inline'"
	if g.UnsafeEval {
		script = "'unsafe-inline' 'unsafe-eval' data:"
	}
	ancestor := "'none'"
	if checkAncestor(hostOrigin) == nil {
		ancestor = hostOrigin
	}
	d := []string{
		"default-src 'none'",
		directive("script-src", script, res, ""),
		directive("style-src", "'unsafe-inline'", res, ""),
		directive("img-src", "data:", res, ""),
		directive("media-src", "data:", res, ""),
	}
	if len(res) > 0 {
		d = append(d, directive("font-src", "", res, ""))
	}
	d = append(d,
		directive("connect-src", "", cleanSources(c.ConnectDomains), "'none'"),
		directive("frame-src", "", cleanSources(c.FrameDomains), "'none'"),
		directive("base-uri", "", cleanSources(c.BaseURIDomains), "'none'"),
		"form-action 'none'",
		"object-src 'none'",
		"frame-ancestors "+ancestor,
		"sandbox allow-scripts allow-forms",
	)
	return strings.Join(d, "; ")
}

// directive renders "name [fixed] sources...", or "name ifEmpty" when there
// is neither a fixed value nor a source.
func directive(name, fixed string, sources []string, ifEmpty string) string {
	parts := []string{name}
	if fixed != "" {
		parts = append(parts, fixed)
	}
	parts = append(parts, sources...)
	if len(parts) == 1 {
		parts = append(parts, ifEmpty)
	}
	return strings.Join(parts, " ")
}

// cleanSources keeps the sources that pass ValidSource, lowered and without
// duplicates, in their original order.
func cleanSources(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if ValidSource(s) != nil {
			continue
		}
		s = asciiLower(s)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// parseCSP decodes the csp query parameter (§8.1): a JSON object with at most
// the keys connectDomains, resourceDomains, frameDomains and baseUriDomains
// (exact spelling, each at most once), each an array of at most
// [MaxSourcesPerList] strings, every one passing [ValidSource]. Anything else
// (another JSON type, null, numbers or objects in a list, unknown or repeated
// keys, bad or trailing JSON) is an error. Unlike encoding/json's Unmarshal it
// never matches keys case-insensitively.
func parseCSP(data []byte) (CSP, error) {
	var c CSP
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return CSP{}, errors.New("csp: bad JSON")
	} else if tok != json.Delim('{') {
		return CSP{}, errors.New("csp: not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return CSP{}, errors.New("csp: bad JSON")
		}
		key, _ := tok.(string)
		var list *[]string
		switch key {
		case "connectDomains":
			list = &c.ConnectDomains
		case "resourceDomains":
			list = &c.ResourceDomains
		case "frameDomains":
			list = &c.FrameDomains
		case "baseUriDomains":
			list = &c.BaseURIDomains
		default:
			return CSP{}, errors.New("csp: unknown key (allowed: connectDomains, resourceDomains, frameDomains, baseUriDomains)")
		}
		if seen[key] {
			return CSP{}, fmt.Errorf("csp: %s: repeated key", key)
		}
		seen[key] = true
		l, err := parseList(dec, key)
		if err != nil {
			return CSP{}, err
		}
		*list = l
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return CSP{}, errors.New("csp: bad JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return CSP{}, errors.New("csp: trailing data after the JSON object")
	}
	return c, nil
}

func parseList(dec *json.Decoder, key string) ([]string, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("csp: bad JSON")
	}
	if tok != json.Delim('[') {
		return nil, fmt.Errorf("csp: %s: not an array", key)
	}
	list := []string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("csp: bad JSON")
		}
		s, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("csp: %s[%d]: not a string", key, len(list))
		}
		if len(list) == MaxSourcesPerList {
			return nil, fmt.Errorf("csp: %s: more than %d sources", key, MaxSourcesPerList)
		}
		if err := ValidSource(s); err != nil {
			return nil, fmt.Errorf("csp: %s[%d]: %w", key, len(list), err)
		}
		list = append(list, s)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		return nil, errors.New("csp: bad JSON")
	}
	return list, nil
}
