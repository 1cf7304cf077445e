package sandbox

import (
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Path is the route of the proxy page. It is served before bearer
// authentication, for GET and HEAD only (apps.md §8.1).
const Path = "/mcp-app-sandbox"

// MaxQueryBytes bounds the raw query of a proxy request (§8.1).
const MaxQueryBytes = 8192

// page is the proxy document (§8.5): one constant, byte-identical for every
// request, with no session data or credentials.
//
//go:embed proxy.html
var page []byte

// errorCSP is the policy of every refusal: nothing loads, nothing frames it.
const errorCSP = "default-src 'none'; frame-ancestors 'none'; sandbox"

// Options configures [Handler].
type Options struct {
	// AllowedHostOrigin reports whether origin is one of the daemon's own
	// WebShell origins: http://127.0.0.1:P or http://localhost:P with P the
	// daemon's port, or one of its public URLs (config public_urls, for a
	// WebShell behind a load balancer whose Apps' sandbox has a host name
	// of its own, apps_sandbox_url); compare exactly. It only sees origins
	// that already have one of those forms. Nil refuses every request.
	AllowedHostOrigin func(origin string) bool
	// Logger receives one record per refused request; nil discards them.
	Logger *slog.Logger
}

// Handler returns the http.Handler of GET and HEAD [Path] (apps.md §8.1–8.5).
//
// The query must be at most [MaxQueryBytes] bytes and hold exactly:
//   - hostOrigin (required, once): an http origin on 127.0.0.1 or localhost
//     with a port, or an http or https origin with a lower-case ASCII host
//     name and an optional port, and nothing else (no path, userinfo, other
//     scheme, no bracketed IPv6), accepted by Options.AllowedHostOrigin;
//   - csp (optional, once): a JSON object with at most the keys
//     connectDomains, resourceDomains, frameDomains and baseUriDomains, each
//     an array of at most [MaxSourcesPerList] strings that pass [ValidSource];
//   - unsafeEval (optional, once): exactly "1", for [Grants.UnsafeEval]
//     ('unsafe-eval' and data: in script-src). The
//     WebShell sends it only for an App whose server's config allows it
//     (app_csp_unsafe_eval); the page is public, but it only ever runs the
//     HTML its parent, a WebShell origin (frame-ancestors), posts to it.
//
// Any other parameter, a repeated one or any violation is answered 400 with a
// short text/plain reason and no proxy HTML; another method gets 405. A valid
// request gets the constant proxy page with Content-Security-Policy from
// [HeaderWith] (no csp ⇒ the restrictive default), Cache-Control: no-store,
// X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer, and never
// Access-Control-Allow-Origin. Nothing from the request reaches the body, and
// only validated values reach the headers.
func Handler(opts Options) http.Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &handler{allowed: opts.AllowedHostOrigin, log: log}
}

type handler struct {
	allowed func(string) bool
	log     *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.refuse(w, r, http.StatusMethodNotAllowed, errors.New("only GET and HEAD are allowed"))
		return
	}
	policy, err := h.parse(r.URL.RawQuery)
	if err != nil {
		h.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", policy)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(page)
	}
}

// parse validates the raw query and returns the page's CSP header value.
func (h *handler) parse(raw string) (string, error) {
	if len(raw) > MaxQueryBytes {
		return "", fmt.Errorf("query longer than %d bytes", MaxQueryBytes)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "", errors.New("malformed query")
	}
	for k, v := range q {
		if k != "hostOrigin" && k != "csp" && k != "unsafeEval" {
			return "", errors.New("unknown query parameter (allowed: hostOrigin, csp, unsafeEval)")
		}
		if len(v) != 1 {
			return "", fmt.Errorf("%s given more than once", k)
		}
	}
	origin := q.Get("hostOrigin")
	if origin == "" {
		return "", errors.New("hostOrigin is required")
	}
	if err := checkAncestor(origin); err != nil {
		return "", err
	}
	if h.allowed == nil || !h.allowed(origin) {
		return "", errors.New("hostOrigin is not a WebShell origin of this daemon")
	}
	var c CSP
	if v, ok := q["csp"]; ok {
		if c, err = parseCSP([]byte(v[0])); err != nil {
			return "", err
		}
	}
	var g Grants
	if v, ok := q["unsafeEval"]; ok {
		if v[0] != "1" {
			return "", errors.New(`unsafeEval must be "1" when given`)
		}
		g.UnsafeEval = true
	}
	return HeaderWith(c, origin, g), nil
}

// checkHostOrigin requires an origin as a browser serializes it:
// "http://127.0.0.1:P" or "http://localhost:P", P in 1–65535 without leading
// zeros. Bracketed IPv6 is refused because frame-ancestors cannot name it
// (§9); so is everything with a path, userinfo, another scheme or host.
func checkHostOrigin(s string) error {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		return errors.New(`hostOrigin must start with "http://"`)
	}
	host, port, ok := strings.Cut(rest, ":")
	if host != "127.0.0.1" && host != "localhost" {
		return errors.New("hostOrigin must be on 127.0.0.1 or localhost")
	}
	if !ok {
		return errors.New("hostOrigin must have a port")
	}
	if checkPort(port) != nil || port[0] == '0' {
		return errors.New("hostOrigin must end with a port of 1–65535 and nothing after it")
	}
	return nil
}

// checkAncestor requires a hostOrigin that may go into frame-ancestors:
// the loopback form of checkHostOrigin, or checkPublicOrigin's. The error
// is the loopback form's for an http origin on a loopback name, the public
// form's otherwise.
func checkAncestor(s string) error {
	err := checkHostOrigin(s)
	if err == nil {
		return nil
	}
	if rest, ok := strings.CutPrefix(s, "http://"); ok {
		if h, _, _ := strings.Cut(rest, ":"); h == "127.0.0.1" || h == "localhost" {
			return err
		}
	}
	return checkPublicOrigin(s)
}

// checkPublicOrigin requires the origin of a public URL as a browser
// serializes it: "http://" or "https://", a host name of lower-case ASCII
// letters, digits and '-' in non-empty labels separated by '.', and an
// optional port of 1–65535 without leading zeros. Nothing else passes, so
// the value is one CSP source and cannot end or add a directive. Loopback
// names are checkHostOrigin's (a loopback page gets the loopback swap).
func checkPublicOrigin(s string) error {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "http://"); !ok {
			return errors.New(`hostOrigin must start with "http://" or "https://"`)
		}
	}
	host, port, hasPort := strings.Cut(rest, ":")
	for i := 0; i < len(host); i++ {
		if c := host[i]; c >= 'A' && c <= 'Z' {
			return errors.New("hostOrigin's host must be in lower case, as a browser writes an origin")
		}
	}
	if err := checkHost(host, len(s)-len(rest)); err != nil {
		return fmt.Errorf("hostOrigin: %w", err)
	}
	if LocalSource(s) {
		return errors.New("hostOrigin on a loopback name must be http://127.0.0.1:P or http://localhost:P")
	}
	if hasPort && (checkPort(port) != nil || port[0] == '0') {
		return errors.New("hostOrigin must end with a port of 1–65535 and nothing after it")
	}
	return nil
}

// refuse answers with a short reason that names what is wrong without
// echoing the request.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, code int, reason error) {
	h.log.LogAttrs(r.Context(), slog.LevelInfo, "sandbox proxy request refused",
		slog.Int("status", code), slog.String("reason", reason.Error()),
		slog.Int("query_bytes", len(r.URL.RawQuery)))
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("Content-Security-Policy", errorCSP)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(code)
	fmt.Fprintf(w, "%d %s: %s\n", code, http.StatusText(code), reason)
}
