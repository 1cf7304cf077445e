package negotiate

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fuzzAnswer is the HTTP answer FuzzProbeAnswer's server gives next.
type fuzzAnswer struct {
	mu          sync.Mutex
	status      int
	contentType string
	body        []byte
}

func (a *fuzzAnswer) set(status int, contentType string, body []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.status, a.contentType, a.body = status, contentType, body
}

func (a *fuzzAnswer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	status, ct, body := a.status, a.contentType, a.body
	a.mu.Unlock()
	if ct != "" {
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header()["Content-Type"] = nil // no sniffing: really none
	}
	w.WriteHeader(status)
	w.Write(body)
}

// FuzzProbeAnswer feeds arbitrary server answers to the server/discover
// probe: every line of body as a stdio frame (parseFrame), and body as the
// HTTP answer, with the fuzzed status and Content-Type, of a real loopback
// server to a real probe request (postDiscover). Each outcome goes through
// Classify. Properties: no panic; the HTTP probe never hangs (it has no
// timeout here, so a hang is a failure of the fuzz run); a non-2xx status is
// always an HTTPFailure; kept bodies are bounded; every Decision is one of
// the five kinds with a label and evidence, Modern and Corrective name the
// modern version, Legacy the legacy one, Fail carries a *ProbeError with
// the same label, and only a timeout is Inconclusive; Classify is
// deterministic. Seeds: testdata/fuzz/FuzzProbeAnswer.
func FuzzProbeAnswer(f *testing.F) {
	f.Add(uint16(200), "application/json", []byte(`{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}`))
	f.Add(uint16(200), "text/event-stream", []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"mcphost-probe-1\",\"error\":{\"code\":-32022,\"message\":\"m\",\"data\":{\"supported\":[\"2026-07-28\"]}}}\n\n"))
	f.Add(uint16(400), "application/json", []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found"}}`))
	f.Add(uint16(401), "text/html", []byte(`<html>sign in</html>`))
	f.Add(uint16(200), "", []byte("banner line\n{\"jsonrpc\":\"2.0\",\"id\":\"mcphost-probe-1\"}\n"))

	srv := httptest.NewServer(&fuzzAnswer{})
	f.Cleanup(srv.Close)
	answer := srv.Config.Handler.(*fuzzAnswer)
	n := &negotiator{spec: Spec{URL: srv.URL, HTTPClient: srv.Client()}, log: slog.New(slog.DiscardHandler), now: time.Now}

	f.Fuzz(func(t *testing.T, status uint16, contentType string, body []byte) {
		for line := range bytes.SplitSeq(body, []byte("\n")) {
			id, o, ok := parseFrame(line)
			if !ok {
				continue
			}
			if !strings.HasPrefix(id, "mcphost-probe-") || o.Transport != ProbeStdio {
				t.Fatalf("parseFrame took id %q transport %q", id, o.Transport)
			}
			checkDecision(t, o)
		}

		// A status net/http can send: 200–599 (1xx are interim answers).
		code := int(status)
		if code < 200 || code > 599 {
			code = 200 + code%400
		}
		if strings.ContainsAny(contentType, "\r\n\x00") || !utf8.ValidString(contentType) {
			contentType = "application/json"
		}
		answer.set(code, contentType, body)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		o := n.postDiscover(ctx, time.Now().Add(time.Minute), "mcphost-probe-1", ModernVersion, time.Minute)
		if o.Transport != ProbeHTTP {
			t.Fatalf("HTTP outcome with transport %q", o.Transport)
		}
		switch o.Kind {
		case OutcomeTimedOut:
			t.Fatal("the probe timed out against an answering server")
		case OutcomeHTTPFailure:
			if o.HTTP == nil || o.HTTP.Status != code || len(o.HTTP.Body) > MaxAnswerBytes {
				t.Fatalf("HTTP failure %+v for status %d", o.HTTP, code)
			}
		case OutcomeResult, OutcomeRPCError, OutcomeOversize:
			if code > 299 {
				t.Fatalf("status %d gave outcome %v", code, o.Kind)
			}
		case OutcomeNetworkError, OutcomeClosed:
			// A body the client cannot read (e.g. a Content-Length mismatch
			// cannot happen here, but a reset could): allowed, as a Fail.
		default:
			t.Fatalf("unknown outcome kind %v", o.Kind)
		}
		checkDecision(t, o)
	})
}

// checkDecision classifies o twice and checks the decision's invariants.
func checkDecision(t *testing.T, o Outcome) {
	t.Helper()
	d := Classify(o)
	again := Classify(o)
	if d.Kind != again.Kind || d.Version != again.Version || d.Label != again.Label || d.Evidence != again.Evidence {
		t.Fatalf("Classify is not deterministic: %+v then %+v", d, again)
	}
	if d.Label == "" || d.Evidence == "" {
		t.Fatalf("decision without label or evidence: %+v", d)
	}
	switch d.Kind {
	case Modern, Corrective:
		if d.Version != ModernVersion || d.Err != nil {
			t.Fatalf("%v decision %+v", d.Kind, d)
		}
		if o.Kind != OutcomeResult && o.Kind != OutcomeRPCError && o.Kind != OutcomeHTTPFailure {
			t.Fatalf("%v from outcome %v", d.Kind, o.Kind)
		}
	case Legacy:
		if d.Version != LegacyVersion || d.Err != nil {
			t.Fatalf("legacy decision %+v", d)
		}
	case Fail:
		var pe *ProbeError
		if d.Version != "" || !errors.As(d.Err, &pe) || pe.Label != d.Label || pe.Error() == "" {
			t.Fatalf("fail decision %+v (err %v)", d, d.Err)
		}
	case Inconclusive:
		if o.Kind != OutcomeTimedOut {
			t.Fatalf("inconclusive from outcome %v", o.Kind)
		}
	default:
		t.Fatalf("unknown decision kind %v: %+v", d.Kind, d)
	}
}
