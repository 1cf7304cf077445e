package gateway

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestCodec(t *testing.T) {
	agg := codec{}
	for _, tc := range []struct {
		server, uri, encoded string
	}{
		{"fx", "fixture://readme", "fx+fixture://readme"},
		{"revenue", "ui://revenue-dashboard", "ui://revenue+revenue-dashboard"},
		{"a_b", "git+https://example.com/x", "a_b+git+https://example.com/x"},
		{"s", "ui://", "ui://s+"},
	} {
		if got := agg.uri(tc.server, tc.uri); got != tc.encoded {
			t.Errorf("uri(%q, %q) = %q, want %q", tc.server, tc.uri, got, tc.encoded)
		}
		server, upstream, ok := agg.decodeURI(tc.encoded)
		if !ok || server != tc.server || upstream != tc.uri {
			t.Errorf("decodeURI(%q) = %q, %q, %v", tc.encoded, server, upstream, ok)
		}
	}
	for _, bad := range []string{"", "fixture://readme", "+x", "ui://+x", "ui://nosep", "fx+"} {
		if s, u, ok := agg.decodeURI(bad); ok {
			t.Errorf("decodeURI(%q) = %q, %q: want no server", bad, s, u)
		}
	}
	one := codec{server: "fx"}
	if got := one.uri("fx", "fixture://readme"); got != "fixture://readme" {
		t.Errorf("passthrough uri = %q", got)
	}
	if s, u, ok := one.decodeURI("anything at all"); !ok || s != "fx" || u != "anything at all" {
		t.Errorf("passthrough decode = %q, %q, %v", s, u, ok)
	}
}

var serverName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// FuzzDecodeURI: decoding what a client sends never panics; what decodes
// encodes back to the same URI; and every encoding decodes to its parts.
func FuzzDecodeURI(f *testing.F) {
	for _, s := range []string{"fx+fixture://readme", "ui://revenue+x", "ui://", "+", "a+b+c", "ui://a+ui://b"} {
		f.Add(s, "fx", "fixture://readme")
	}
	f.Fuzz(func(t *testing.T, in, server, uri string) {
		var c codec
		if s, u, ok := c.decodeURI(in); ok {
			if back := c.uri(s, u); back != in {
				t.Fatalf("decodeURI(%q) = %q, %q, which encodes to %q", in, s, u, back)
			}
		}
		if !serverName.MatchString(server) || uri == "" || uri == "ui://" {
			return
		}
		s, u, ok := c.decodeURI(c.uri(server, uri))
		if !ok || s != server || u != uri {
			t.Fatalf("encode(%q, %q) decodes to %q, %q, %v", server, uri, s, u, ok)
		}
	})
}

// FuzzReadEvents: the bridge's reading of a daemon's event stream never
// panics, and each event it hands on is one of the stream's data payloads.
func FuzzReadEvents(f *testing.F) {
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\"}\n\n"))
	f.Add([]byte("data: a\ndata: b\n\n: comment\n\nid: 1\n"))
	f.Add([]byte("data:" + strings.Repeat("x", 100) + "\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		_ = readEvents(bytes.NewReader(stream), func(data []byte) {
			if len(bytes.TrimSpace(data)) == 0 {
				t.Fatalf("an empty event was handed on from %q", stream)
			}
			if len(data) > len(stream) {
				t.Fatalf("an event longer than the stream")
			}
		})
	})
}
