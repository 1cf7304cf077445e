package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// allowed is the daemon of these tests: port 8080 under both loopback names.
func allowed(origin string) bool {
	return origin == "http://127.0.0.1:8080" || origin == "http://localhost:8080"
}

func testHandler(t testing.TB) http.Handler {
	return Handler(Options{AllowedHostOrigin: allowed})
}

// serve sends method Path?rawQuery to h.
func serve(h http.Handler, method, rawQuery string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, Path, nil)
	req.URL.RawQuery = rawQuery
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// query encodes hostOrigin and, when not nil, csp as the WebShell would.
func query(hostOrigin string, csp any) string {
	v := url.Values{"hostOrigin": {hostOrigin}}
	switch c := csp.(type) {
	case nil:
	case string:
		v.Set("csp", c)
	default:
		b, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		v.Set("csp", string(b))
	}
	return v.Encode()
}

// checkRefused asserts a refusal with code, without proxy HTML, and returns
// its reason.
func checkRefused(t *testing.T, rec *httptest.ResponseRecorder, code int) string {
	t.Helper()
	if rec.Code != code {
		t.Fatalf("status = %d, want %d; body %q", rec.Code, code, rec.Body)
	}
	body := rec.Body.String()
	if strings.Contains(body, "<") || bytes.Contains(rec.Body.Bytes(), page[:20]) {
		t.Errorf("refusal body holds HTML: %q", body)
	}
	hd := rec.Header()
	for k, want := range map[string]string{
		"Content-Type":            "text/plain; charset=utf-8",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": errorCSP,
	} {
		if got := hd.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := hd["Access-Control-Allow-Origin"]; ok {
		t.Error("Access-Control-Allow-Origin is set")
	}
	return body
}

// checkServed asserts a 200 answer with the constant page and returns its CSP.
func checkServed(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %q", rec.Code, rec.Body)
	}
	if !bytes.Equal(rec.Body.Bytes(), page) {
		t.Error("body is not the constant proxy page")
	}
	hd := rec.Header()
	for k, want := range map[string]string{
		"Content-Type":           "text/html; charset=utf-8",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "no-referrer",
		"Content-Length":         fmt.Sprint(len(page)),
	} {
		if got := hd.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := hd["Access-Control-Allow-Origin"]; ok {
		t.Error("Access-Control-Allow-Origin is set")
	}
	if n := len(hd.Values("Content-Security-Policy")); n != 1 {
		t.Fatalf("%d Content-Security-Policy headers, want 1", n)
	}
	return hd.Get("Content-Security-Policy")
}

var fields = []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}

// TestHandlerRefusesBadSources covers §14 rows 1–5 on the route, for every
// field: each source alone, and after a valid one.
func TestHandlerRefusesBadSources(t *testing.T) {
	bad := []struct{ row, source string }{
		{"1", "https://a.com; script-src *"},
		{"1", "https://a.com;script-src"},
		{"2", "https://a.com\r\nX-Evil: 1"},
		{"2", "https://a.com\nContent-Security-Policy: default-src *"},
		{"2", "https://a.com,https://b.com"},
		{"2", "https://a.com, script-src *"},
		{"2", "'https://a.com'"},
		{"2", `"https://a.com"`},
		{"2", "https://a.com https://b.com"},
		{"2", "https://a.com\t"},
		{"3", "*"},
		{"3", "https:"},
		{"3", "data:"},
		{"3", "blob:"},
		{"3", "'self'"},
		{"3", "'none'"},
		{"3", "'unsafe-eval'"},
		{"3", ""},
		{"4", "https://a.com/path"},
		{"4", "javascript:alert(1)"},
		{"4", "https://[::1]:8080"},
		{"4", "https://user@a.com"},
		{"4", "https://user:pw@a.com"},
		{"5", "https://\u212A.example.com"},
		{"5", "https://\u017F.example.com"},
		{"5", "http\u017F://x.com"},
	}
	h := testHandler(t)
	for _, b := range bad {
		for _, f := range fields {
			for _, list := range [][]string{{b.source}, {"https://ok.a.com", b.source}} {
				t.Run(fmt.Sprintf("row%s/%s/%q", b.row, f, list), func(t *testing.T) {
					body := checkRefused(t, serve(h, http.MethodGet, query(testOrigin, map[string][]string{f: list})), http.StatusBadRequest)
					if want := fmt.Sprintf("csp: %s[%d]: ", f, len(list)-1); !strings.Contains(body, want) {
						t.Errorf("reason %q, want one about %s", body, want)
					}
				})
			}
		}
	}
	// Look-alikes written as JSON escapes, raw bytes the decoder turns into
	// U+FFFD, and escaped control characters reach ValidSource just the same.
	for _, raw := range []string{
		`{"connectDomains":["https://\u212a.example.com"]}`,
		`{"resourceDomains":["https://\u017f.example.com"]}`,
		`{"frameDomains":["http\u017f://x.com"]}`,
		`{"baseUriDomains":["https://a.com\r\nX-Evil: 1"]}`,
		`{"connectDomains":["https://a.com\u000d\u000aX-Evil: 1"]}`,
		`{"connectDomains":["https://a.com\u003b script-src *"]}`,
		`{"connectDomains":["https://a.com\u002chttps://b.com"]}`,
		"{\"connectDomains\":[\"https://a.com\xff\"]}",
	} {
		t.Run("escaped/"+raw, func(t *testing.T) {
			body := checkRefused(t, serve(h, http.MethodGet, query(testOrigin, raw)), http.StatusBadRequest)
			if !strings.Contains(body, "Domains[0]: ") {
				t.Errorf("reason %q is not about the source", body)
			}
		})
	}
}

// TestHandlerValidSources covers §14 row 6 on the route: valid sources come
// back verbatim in the right directives, and only there.
func TestHandlerValidSources(t *testing.T) {
	h := testHandler(t)
	got := checkServed(t, serve(h, http.MethodGet, query("http://localhost:8080", map[string][]string{
		"connectDomains":  {"https://api.a.com", "wss://rt.a.com:8443"},
		"resourceDomains": {"https://*.cdn.a.com"},
		"frameDomains":    {"https://api.a.com"},
		"baseUriDomains":  {},
	})))
	want := "default-src 'none'; " +
		"script-src 'unsafe-inline' https://*.cdn.a.com; " +
		"style-src 'unsafe-inline' https://*.cdn.a.com; " +
		"img-src data: https://*.cdn.a.com; " +
		"media-src data: https://*.cdn.a.com; " +
		"font-src https://*.cdn.a.com; " +
		"connect-src https://api.a.com wss://rt.a.com:8443; " +
		"frame-src https://api.a.com; " +
		"base-uri 'none'; " +
		"form-action 'none'; object-src 'none'; " +
		"frame-ancestors http://localhost:8080; " +
		"sandbox allow-scripts allow-forms"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CSP (-want +got):\n%s", diff)
	}

	// No csp, or an empty object: the restrictive default.
	for _, q := range []string{query(testOrigin, nil), query(testOrigin, "{}"), query(testOrigin, " { } ")} {
		if got := checkServed(t, serve(h, http.MethodGet, q)); got != defaultPolicy {
			t.Errorf("query %q: CSP = %q, want %q", q, got, defaultPolicy)
		}
	}

	// 32 sources per list are fine.
	var many []string
	for i := range MaxSourcesPerList {
		many = append(many, fmt.Sprintf("https://h%d.a.com", i))
	}
	got = checkServed(t, serve(h, http.MethodGet, query(testOrigin, map[string][]string{"connectDomains": many})))
	if !strings.Contains(got, "connect-src "+strings.Join(many, " ")+";") {
		t.Errorf("CSP = %q, want all %d sources in connect-src", got, len(many))
	}
}

// TestHandlerRefusesBadCSP covers §14 row 7 and the other query rules of §8.1.
func TestHandlerRefusesBadCSP(t *testing.T) {
	long := func(n int) string { // a valid query of exactly n bytes
		q := "hostOrigin=" + url.QueryEscape(testOrigin) + "&csp=" + url.QueryEscape(`{"connectDomains":["https://a.com"]}`)
		return q + strings.Repeat("+", n-len(q)) // '+' decodes to JSON whitespace
	}
	h := testHandler(t)
	checkServed(t, serve(h, http.MethodGet, long(MaxQueryBytes)))

	tests := []struct{ name, rawQuery, reason string }{
		{"not an object: array", query(testOrigin, `["https://a.com"]`), "not a JSON object"},
		{"not an object: string", query(testOrigin, `"https://a.com"`), "not a JSON object"},
		{"not an object: number", query(testOrigin, `1`), "not a JSON object"},
		{"not an object: null", query(testOrigin, `null`), "not a JSON object"},
		{"not an object: true", query(testOrigin, `true`), "not a JSON object"},
		{"array of numbers", query(testOrigin, `{"connectDomains":[1,2]}`), "connectDomains[0]: not a string"},
		{"array with null", query(testOrigin, `{"connectDomains":[null]}`), "connectDomains[0]: not a string"},
		{"array with bool", query(testOrigin, `{"connectDomains":["https://a.com",true]}`), "connectDomains[1]: not a string"},
		{"list is a string", query(testOrigin, `{"connectDomains":"https://a.com"}`), "not an array"},
		{"list is null", query(testOrigin, `{"connectDomains":null}`), "not an array"},
		{"nested object as list", query(testOrigin, `{"connectDomains":{"a":"https://a.com"}}`), "not an array"},
		{"nested object in list", query(testOrigin, `{"connectDomains":[{"a":"https://a.com"}]}`), "not a string"},
		{"nested array in list", query(testOrigin, `{"connectDomains":[["https://a.com"]]}`), "not a string"},
		{"unknown key", query(testOrigin, `{"scriptDomains":["https://a.com"]}`), "unknown key"},
		{"unknown key with object", query(testOrigin, `{"x":{}}`), "unknown key"},
		{"key in another case", query(testOrigin, `{"ConnectDomains":["https://a.com"]}`), "unknown key"},
		{"key in lower case", query(testOrigin, `{"connectdomains":["https://a.com"]}`), "unknown key"},
		{"key with long s", query(testOrigin, `{"connectDomain\u017f":["https://a.com"]}`), "unknown key"},
		{"key with Kelvin", query(testOrigin, `{"\u212aonnectDomains":["https://a.com"]}`), "unknown key"},
		{"spec key baseUriDomains misspelt", query(testOrigin, `{"baseURIDomains":["https://a.com"]}`), "unknown key"},
		{"repeated key", query(testOrigin, `{"connectDomains":[],"connectDomains":["https://a.com"]}`), "repeated key"},
		{"33 sources", query(testOrigin, `{"connectDomains":[`+strings.Repeat(`"https://a.com",`, 32)+`"https://a.com"]}`), "more than 32 sources"},
		{"bad JSON: empty", query(testOrigin, ``), "bad JSON"},
		{"bad JSON: open brace", query(testOrigin, `{`), "bad JSON"},
		{"bad JSON: unclosed array", query(testOrigin, `{"connectDomains":["https://a.com"]`), "bad JSON"},
		{"bad JSON: trailing comma", query(testOrigin, `{"connectDomains":["https://a.com",]}`), "bad JSON"},
		{"bad JSON: trailing comma in object", query(testOrigin, `{"connectDomains":[],}`), "bad JSON"},
		{"bad JSON: missing colon", query(testOrigin, `{"connectDomains" ["https://a.com"]}`), "bad JSON"},
		{"bad JSON: single quotes", query(testOrigin, `{'connectDomains':[]}`), "bad JSON"},
		{"bad JSON: trailing garbage", query(testOrigin, `{}x`), "trailing data"},
		{"bad JSON: two objects", query(testOrigin, `{} {}`), "trailing data"},
		{"query > 8192 bytes", long(MaxQueryBytes + 1), "longer than 8192 bytes"},
		{"query far over the bound", long(1 << 16), "longer than 8192 bytes"},
		{"csp given twice", query(testOrigin, `{}`) + "&csp=%7B%7D", "csp given more than once"},
		{"unknown parameter", query(testOrigin, nil) + "&x=1", "unknown query parameter"},
		{"semicolon separator", "hostOrigin=http%3A%2F%2F127.0.0.1%3A8080;csp=%7B%7D", "malformed query"},
		{"bad percent escape", query(testOrigin, nil) + "&csp=%7", "malformed query"},
		{"bad percent escape in key", "host%zzOrigin=x&" + query(testOrigin, nil), "malformed query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := checkRefused(t, serve(h, http.MethodGet, tt.rawQuery), http.StatusBadRequest)
			if !strings.Contains(body, tt.reason) {
				t.Errorf("reason %q, want one with %q", body, tt.reason)
			}
		})
	}
}

// TestHandlerRefusesBadHostOrigin covers §14 row 8.
func TestHandlerRefusesBadHostOrigin(t *testing.T) {
	tests := []struct{ name, rawQuery string }{
		{"missing", ""},
		{"missing with csp", "csp=%7B%7D"},
		{"empty", "hostOrigin="},
		{"null", query("null", nil)},
		{"file", query("file://", nil)},
		{"file path", query("file:///home/u/page.html", nil)},
		{"evil", query("https://evil.example", nil)},
		{"evil http with port", query("http://evil.example:8080", nil)},
		{"https loopback", query("https://127.0.0.1:8080", nil)},
		{"subdomain of localhost", query("http://app.localhost:8080", nil)},
		{"with a slash", query("http://127.0.0.1:8080/", nil)},
		{"with a path", query("http://127.0.0.1:8080/mcp-app-sandbox", nil)},
		{"other port", query("http://127.0.0.1:9090", nil)},
		{"other port on localhost", query("http://localhost:1", nil)},
		{"no port", query("http://127.0.0.1", nil)},
		{"leading zero port", query("http://127.0.0.1:08080", nil)},
		{"bracketed IPv6", query("http://[::1]:8080", nil)},
		{"userinfo", query("http://u@127.0.0.1:8080", nil)},
		{"upper case", query("HTTP://LOCALHOST:8080", nil)},
		{"Kelvin look-alike", query("http://localhost:8080\u212A", nil)},
		{"injection", query("http://127.0.0.1:8080; script-src *", nil)},
		{"CRLF", query("http://127.0.0.1:8080\r\nX-Evil: 1", nil)},
		{"twice", query(testOrigin, nil) + "&hostOrigin=http%3A%2F%2Flocalhost%3A8080"},
	}
	h := testHandler(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := checkRefused(t, serve(h, http.MethodGet, tt.rawQuery), http.StatusBadRequest)
			if !strings.Contains(body, "hostOrigin") {
				t.Errorf("reason %q is not about hostOrigin", body)
			}
		})
	}
	// Without AllowedHostOrigin nothing is allowed.
	checkRefused(t, serve(Handler(Options{}), http.MethodGet, query(testOrigin, nil)), http.StatusBadRequest)
	// The caller's func only ever sees well-formed origins: loopback, or
	// public (which the daemon allows only when they are its public URLs).
	seen := []string{}
	spy := Handler(Options{AllowedHostOrigin: func(o string) bool { seen = append(seen, o); return true }})
	for _, tt := range tests {
		serve(spy, http.MethodGet, tt.rawQuery)
	}
	if diff := cmp.Diff([]string{"https://evil.example", "http://evil.example:8080", "http://127.0.0.1:9090", "http://localhost:1"}, seen); diff != "" {
		t.Errorf("AllowedHostOrigin saw (-want +got):\n%s", diff)
	}
}

// TestHandlerStatic covers §14 row 9 at the handler (authentication order is
// host/httpapi's): no-store, nosniff, CSP with sandbox and frame-ancestors,
// the same body every time, and nothing that looks like a credential.
func TestHandlerStatic(t *testing.T) {
	h := testHandler(t)
	var bodies [][]byte
	for _, q := range []string{
		query(testOrigin, nil),
		query("http://localhost:8080", `{"connectDomains":["https://api.a.com"]}`),
		query(testOrigin, `{"resourceDomains":["https://*.cdn.a.com"],"frameDomains":["https://f.a.com"]}`),
	} {
		rec := serve(h, http.MethodGet, q)
		csp := checkServed(t, rec)
		if !strings.HasSuffix(csp, "; sandbox allow-scripts allow-forms") || !strings.Contains(csp, "; frame-ancestors http://") {
			t.Errorf("CSP %q lacks the sandbox or frame-ancestors directive", csp)
		}
		if strings.Contains(csp, "'self'") || strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "blob:") {
			t.Errorf("CSP %q grants 'self', eval or blob:", csp)
		}
		bodies = append(bodies, rec.Body.Bytes())
	}
	for i := range bodies {
		if !bytes.Equal(bodies[i], bodies[0]) {
			t.Errorf("body %d differs from body 0", i)
		}
	}
	for _, s := range []string{"token", "Bearer", "Authorization", "sessionStorage", "localStorage", "cookie", "127.0.0.1:8080", "api.a.com"} {
		if bytes.Contains(bytes.ToLower(page), bytes.ToLower([]byte(s))) {
			t.Errorf("page holds %q", s)
		}
	}

	rec := serve(h, http.MethodHead, query(testOrigin, nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Security-Policy") != defaultPolicy {
		t.Errorf("HEAD: status %d, body %d bytes, CSP %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Security-Policy"))
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		rec := serve(h, m, query(testOrigin, nil))
		checkRefused(t, rec, http.StatusMethodNotAllowed)
		if got := rec.Header().Get("Allow"); got != "GET, HEAD" {
			t.Errorf("%s: Allow = %q", m, got)
		}
	}
}

// TestHandlerDoesNotEcho: a refusal names the problem but never reflects the
// request's bytes, and is logged once.
func TestHandlerDoesNotEcho(t *testing.T) {
	var logBuf bytes.Buffer
	h := Handler(Options{AllowedHostOrigin: allowed, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	marker := "zq9marker"
	for _, q := range []string{
		query("http://"+marker+":8080", nil),
		query(testOrigin, `{"connectDomains":["https://`+marker+`.com/<script>"]}`),
		query(testOrigin, `{"`+marker+`":[]}`),
		query(testOrigin, nil) + "&" + marker + "=1",
	} {
		rec := serve(h, http.MethodGet, q)
		checkRefused(t, rec, http.StatusBadRequest)
		if strings.Contains(rec.Body.String(), marker) {
			t.Errorf("refusal echoes the request: %q", rec.Body)
		}
	}
	if n := strings.Count(logBuf.String(), "sandbox proxy request refused"); n != 4 {
		t.Errorf("%d log records, want 4:\n%s", n, logBuf.String())
	}
}

// TestPageScript pins the §8.5 contract of the embedded script by its text;
// its behaviour in a browser is covered by the WebShell's end-to-end tests.
func TestPageScript(t *testing.T) {
	for _, s := range []string{
		`window.top === window`,
		`new URLSearchParams(location.search).get("hostOrigin")`,
		`/^http:\/\/(127\.0\.0\.1|localhost):[1-9][0-9]{0,4}$/`,
		`/^https?:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*(:[1-9][0-9]{0,4})?$/`,
		`document.referrer`,
		`window.top.location.href`,
		`inner.setAttribute("sandbox", "allow-scripts allow-forms")`,
		`event.source === window.parent && event.origin === hostOrigin`,
		`method === "ui/notifications/sandbox-resource-ready"`,
		`inner.srcdoc = params.html`,
		`inner.contentWindow.postMessage(data, "*")`,
		`event.source === inner.contentWindow && event.origin === "null"`,
		`window.parent.postMessage(data, hostOrigin)`,
		`method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin)`,
	} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page script lacks %s", s)
		}
	}
	for _, s := range []string{"allow-same-origin", "fetch(", "XMLHttpRequest", "document.write", "eval(", `allow=`} {
		if bytes.Contains(page, []byte(s)) {
			t.Errorf("page script holds %s", s)
		}
	}
}

// TestHandlerUnsafeEval: 'unsafe-eval' is in script-src only when the query
// has unsafeEval=1 (what the WebShell sends for a server whose config has
// app_csp_unsafe_eval); an App that names it in its CSP lists, under any
// key or spelling, is refused, and the default policy never has it.
func TestHandlerUnsafeEval(t *testing.T) {
	h := testHandler(t)
	const origin = "http://127.0.0.1:8080"
	csp := map[string][]string{"resourceDomains": {"https://cdn.example.com"}}

	plain := checkServed(t, serve(h, http.MethodGet, query(origin, csp)))
	if strings.Contains(plain, "unsafe-eval") {
		t.Fatalf("policy without the grant has 'unsafe-eval': %q", plain)
	}
	granted := checkServed(t, serve(h, http.MethodGet, query(origin, csp)+"&unsafeEval=1"))
	if !strings.Contains(granted, "script-src 'unsafe-inline' 'unsafe-eval' data: https://cdn.example.com;") {
		t.Fatalf("policy with the grant: %q", granted)
	}
	if got, want := strings.Replace(granted, " 'unsafe-eval' data:", "", 1), plain; got != want {
		t.Fatalf("the grant changed more than script-src:\n%s\n%s", granted, plain)
	}

	for _, tc := range []struct{ name, q string }{
		{"unsafeEval=true", query(origin, nil) + "&unsafeEval=true"},
		{"unsafeEval empty", query(origin, nil) + "&unsafeEval="},
		{"unsafeEval twice", query(origin, nil) + "&unsafeEval=1&unsafeEval=1"},
		{"in a source list", query(origin, map[string][]string{"resourceDomains": {"'unsafe-eval'"}})},
		{"data: in a source list", query(origin, map[string][]string{"resourceDomains": {"data:"}})},
		{"as a source's suffix", query(origin, `{"resourceDomains":["https://a.example 'unsafe-eval'"]}`)},
		{"as a csp key", query(origin, `{"unsafeEval":true}`)},
		{"as a csp key, list", query(origin, `{"scriptDomains":["'unsafe-eval'"]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkRefused(t, serve(h, http.MethodGet, tc.q), http.StatusBadRequest)
		})
	}
}
