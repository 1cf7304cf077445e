package apps

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzMeta decodes a fuzzed _meta: a JSON object as it is, any other JSON
// value as the object's "ui" (so that non-object ui values are reached),
// and anything else as no _meta at all.
func fuzzMeta(b []byte) map[string]any {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"ui": v}
}

// FuzzAppMeta resolves a valid App whose content item and listing carry
// arbitrary _meta (the CSP, permissions and prefersBorder a hostile server
// declares; CSP injection lives here). Properties: a record with the HTML;
// every kept CSP source passes the source validator and none can end a
// directive or the header (no ';', ',', quote, space or control); at most
// 32 sources per list; only the four known permissions, each {}; Dropped
// bounded, one line per entry; and the record re-validates and survives a
// JSON round trip unchanged. TestResolveCSPInjection and TestCSPListCap
// pin known cases; FuzzResolve varies the resource itself. Seeds:
// testdata/fuzz/FuzzAppMeta.
func FuzzAppMeta(f *testing.F) {
	f.Add([]byte(`{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"permissions":{"camera":{}},"prefersBorder":true}}`),
		[]byte(`{"ui":{"csp":{"resourceDomains":["https://cdn.example.com"]}}}`))
	f.Add([]byte(`{"ui":{"csp":{"connectDomains":["https://a.example; script-src *"]}}}`), []byte(`null`))
	f.Fuzz(func(t *testing.T, itemMeta, listingMeta []byte) {
		c := item(testURI, MIMEType, testHTML)
		c.Meta = fuzzMeta(itemMeta)
		o := advertised()
		o.ListingMeta = fuzzMeta(listingMeta)
		d := Resolve(context.Background(), reader(c), "s", link, nil, okResult(), o)
		if d == nil || d.HTML != testHTML || d.Warning != "" {
			t.Fatalf("record %+v, want the App", d)
		}
		if err := Validate(*d, 0, validSource); err != nil {
			t.Fatalf("Validate of a Resolve record: %v", err)
		}
		if d.CSP != nil {
			for _, fl := range cspFields(d.CSP) {
				if *fl.list == nil {
					t.Fatalf("csp.%s is nil", fl.name)
				}
				if len(*fl.list) > maxSourcesPerList {
					t.Fatalf("csp.%s has %d sources", fl.name, len(*fl.list))
				}
				for _, s := range *fl.list {
					if strings.ContainsAny(s, ";,'\" \t\r\n\x00") {
						t.Fatalf("csp.%s keeps %q", fl.name, s)
					}
				}
			}
		}
		for k, v := range d.Permissions {
			switch k {
			case "camera", "microphone", "geolocation", "clipboardWrite":
			default:
				t.Fatalf("permission %q recorded", k)
			}
			if m, ok := v.(map[string]any); !ok || len(m) != 0 {
				t.Fatalf("permission %q is %v, want {}", k, v)
			}
		}
		if len(d.Dropped) > maxDropped+1 {
			t.Fatalf("%d dropped entries", len(d.Dropped))
		}
		for _, e := range d.Dropped {
			if strings.ContainsAny(e, "\r\n") || !utf8.ValidString(e) {
				t.Fatalf("dropped entry %q", e)
			}
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back Display
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if err := Validate(back, 0, validSource); err != nil {
			t.Fatalf("Validate after a JSON round trip: %v", err)
		}
		if again, _ := json.Marshal(back); string(again) != string(b) {
			t.Fatalf("the record changed in a JSON round trip:\n%s\n%s", b, again)
		}
	})
}

// FuzzAppRequests checks the two App requests whose content comes straight
// from an App's postMessage: ui/message params (CheckMessage) and the URL
// of ui/open-link (CheckLink). Properties: an accepted message has 1 to 16
// text blocks of valid UTF-8 within the byte limit; an accepted link is an
// absolute http(s) URL with a host and no userinfo, printable ASCII, and
// checking it again gives it back unchanged; errors are one short line
// that never quotes the input. TestCheckMessage and TestCheckLink pin known
// cases. Seeds: testdata/fuzz/FuzzAppRequests.
func FuzzAppRequests(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":[{"type":"text","text":"hello"}]}`), "https://example.com/a?b=c#d")
	f.Add([]byte(`{"role":"assistant","content":[{"type":"image","data":"AA=="}]}`), "javascript:alert(1)")
	f.Fuzz(func(t *testing.T, params []byte, link string) {
		m, err := CheckMessage(params)
		if err != nil {
			checkRequestError(t, err, string(params))
		} else {
			if n := len(m.Content); n < 1 || n > MaxMessageBlocks {
				t.Fatalf("accepted %d blocks", n)
			}
			total := 0
			for _, c := range m.Content {
				if !utf8.ValidString(c.Text) {
					t.Fatalf("accepted invalid UTF-8 %q", c.Text)
				}
				total += len(c.Text)
			}
			if total > MaxMessageBytes {
				t.Fatalf("accepted %d bytes of text", total)
			}
		}

		got, err := CheckLink(link)
		if err != nil {
			checkRequestError(t, err, link)
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("accepted %q as %q", link, got)
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c <= 0x20 || c >= 0x7f {
				t.Fatalf("accepted link %q has byte %#x", got, c)
			}
		}
		again, err := CheckLink(got)
		if err != nil || again != got {
			t.Fatalf("CheckLink(%q) = %q, %v; want it unchanged", got, again, err)
		}
	})
}

// checkRequestError checks that an App request's error is one short line
// that does not quote the input.
func checkRequestError(t *testing.T, err error, input string) {
	t.Helper()
	msg := err.Error()
	if len(msg) > 200 || strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
		t.Fatalf("error %q", msg)
	}
	if len(input) >= 16 && strings.Contains(msg, input) {
		t.Fatalf("error %q quotes the input", msg)
	}
}
