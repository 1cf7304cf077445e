package negotiate

import (
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

func result(s string) Outcome {
	return Outcome{Kind: OutcomeResult, Transport: ProbeStdio, Result: json.RawMessage(s)}
}

func rpcErr(code int64, data string) Outcome {
	e := &RPCError{Code: code, Message: "m"}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return Outcome{Kind: OutcomeRPCError, Transport: ProbeStdio, RPCError: e}
}

func httpFail(status int, ct, body string) Outcome {
	return Outcome{Kind: OutcomeHTTPFailure, Transport: ProbeHTTP, HTTP: &HTTPFailure{Status: status, ContentType: ct, Body: []byte(body)}}
}

// TestClassify covers rows 1–19 of the decision table in protocol.md §3.6
// (row 20 is TestParseFrame: such frames are no outcome).
func TestClassify(t *testing.T) {
	tests := []struct {
		row         string
		o           Outcome
		wantKind    Kind
		wantVersion string
		wantLabel   string
	}{
		{"1 modern only", result(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`), Modern, ModernVersion, "discover"},
		{"1 dual era", result(`{"supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"resultType":"complete","ttlMs":0}`), Modern, ModernVersion, "discover"},
		{"1 with a newer version too", result(`{"supportedVersions":["2099-01-01","2026-07-28"],"capabilities":{}}`), Modern, ModernVersion, "discover"},
		{"2 legacy only", result(`{"supportedVersions":["2025-11-25","2025-06-18"],"capabilities":{}}`), Legacy, LegacyVersion, "discover:legacy"},
		{"2 newer only", result(`{"supportedVersions":["2099-01-01"],"capabilities":{}}`), Legacy, LegacyVersion, "discover:legacy"},
		{"2 empty list", result(`{"supportedVersions":[],"capabilities":{}}`), Legacy, LegacyVersion, "discover:legacy"},
		{"3 versions not a list", result(`{"supportedVersions":"2026-07-28","capabilities":{}}`), Legacy, LegacyVersion, "invalid"},
		{"3 no capabilities", result(`{"supportedVersions":["2026-07-28"]}`), Legacy, LegacyVersion, "invalid"},
		{"3 capabilities not an object", result(`{"supportedVersions":["2026-07-28"],"capabilities":[]}`), Legacy, LegacyVersion, "invalid"},
		{"3 no versions", result(`{"capabilities":{}}`), Legacy, LegacyVersion, "invalid"},
		{"3 input_required", result(`{"supportedVersions":["2026-07-28"],"capabilities":{},"resultType":"input_required"}`), Legacy, LegacyVersion, "invalid"},
		{"3 not an object", result(`"2026-07-28"`), Legacy, LegacyVersion, "invalid"},
		{"3 null", result(`null`), Legacy, LegacyVersion, "invalid"},
		{"3 oversize", Outcome{Kind: OutcomeOversize, Transport: ProbeStdio}, Legacy, LegacyVersion, "oversize"},
		{"4 -32022 mutual modern", rpcErr(-32022, `{"supported":["2026-07-28"],"requested":"2026-07-28"}`), Corrective, ModernVersion, "rpc:-32022"},
		{"4 -32022 mutual modern among others", rpcErr(-32022, `{"supported":["2099-01-01","2026-07-28","2025-11-25"]}`), Corrective, ModernVersion, "rpc:-32022"},
		{"5 -32022 legacy only", rpcErr(-32022, `{"supported":["2025-11-25","2025-06-18"]}`), Legacy, LegacyVersion, "rpc:-32022"},
		{"5 -32022 legacy and unknown modern", rpcErr(-32022, `{"supported":["2099-01-01","2025-11-25"]}`), Legacy, LegacyVersion, "rpc:-32022"},
		{"6 -32022 modern, none ours", rpcErr(-32022, `{"supported":["2099-01-01"]}`), Fail, "", "rpc:-32022"},
		{"7 -32022 without data", rpcErr(-32022, ""), Legacy, LegacyVersion, "rpc:-32022"},
		{"7 -32022 supported not strings", rpcErr(-32022, `{"supported":[1,2]}`), Legacy, LegacyVersion, "rpc:-32022"},
		{"7 -32022 empty supported", rpcErr(-32022, `{"supported":[]}`), Legacy, LegacyVersion, "rpc:-32022"},
		{"8 -32004 mutual modern", rpcErr(-32004, `{"supported":["2026-07-28"]}`), Corrective, ModernVersion, "rpc:-32004"},
		{"8 -32004 legacy only", rpcErr(-32004, `{"supported":["2025-11-25"]}`), Legacy, LegacyVersion, "rpc:-32004"},
		{"8 -32004 modern, none ours", rpcErr(-32004, `{"supported":["2099-01-01"]}`), Fail, "", "rpc:-32004"},
		{"8 -32004 without supported is row 11", rpcErr(-32004, `{"uri":"x"}`), Legacy, LegacyVersion, "rpc:-32004"},
		{"9 -32020", rpcErr(-32020, ""), Fail, "", "rpc:-32020"},
		{"9 -32021", rpcErr(-32021, `{"requiredCapabilities":{"elicitation":{}}}`), Fail, "", "rpc:-32021"},
		{"10 -32601", rpcErr(-32601, ""), Legacy, LegacyVersion, "rpc:-32601"},
		{"10 HTTP 404 with -32601", httpFail(404, "application/json", `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32601,"message":"nope"}}`), Legacy, LegacyVersion, "http:404:rpc:-32601"},
		{"11 -32602", rpcErr(-32602, ""), Legacy, LegacyVersion, "rpc:-32602"},
		{"11 -32600", rpcErr(-32600, ""), Legacy, LegacyVersion, "rpc:-32600"},
		{"11 -32603", rpcErr(-32603, ""), Legacy, LegacyVersion, "rpc:-32603"},
		{"11 -32000", rpcErr(-32000, ""), Legacy, LegacyVersion, "rpc:-32000"},
		{"11 -32019", rpcErr(-32019, ""), Legacy, LegacyVersion, "rpc:-32019"},
		{"11 -32002", rpcErr(-32002, ""), Legacy, LegacyVersion, "rpc:-32002"},
		{"11 code 0", rpcErr(0, ""), Legacy, LegacyVersion, "rpc:0"},
		{"11 other code", rpcErr(42, ""), Legacy, LegacyVersion, "rpc:42"},
		{"12 TS v1: 400 -32000 id null", httpFail(400, "application/json", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}`), Legacy, LegacyVersion, "http:400:rpc:-32000"},
		{"12 Python v1: 400 -32600", httpFail(400, "application/json", `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`), Legacy, LegacyVersion, "http:400:rpc:-32600"},
		{"12 400 empty", httpFail(400, "", ""), Legacy, LegacyVersion, "http:400:empty"},
		{"12 400 text", httpFail(400, "text/plain", "Bad Request\n"), Legacy, LegacyVersion, "http:400:nonjson"},
		{"12 404 text", httpFail(404, "text/plain", "404 page not found\n"), Legacy, LegacyVersion, "http:404:nonjson"},
		{"12 405", httpFail(405, "", ""), Legacy, LegacyVersion, "http:405:empty"},
		{"12 406", httpFail(406, "application/json", `{"detail":"not acceptable"}`), Legacy, LegacyVersion, "http:406:nonmodern"},
		{"12 415", httpFail(415, "text/html", "<html>"), Legacy, LegacyVersion, "http:415:nonjson"},
		{"12 422", httpFail(422, "application/json", `[1,2]`), Legacy, LegacyVersion, "http:422:nonmodern"},
		{"12 400 with a modern -32022 body is modern evidence", httpFail(400, "application/json", `{"jsonrpc":"2.0","id":"mcphost-probe-1","error":{"code":-32022,"message":"m","data":{"supported":["2026-07-28"]}}}`), Corrective, ModernVersion, "http:400:rpc:-32022"},
		{"12 400 with -32020 body", httpFail(400, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32020,"message":"header mismatch"}}`), Fail, "", "http:400:rpc:-32020"},
		{"13 401", httpFail(401, "application/json", `{"error":"invalid_token"}`), Fail, "", "http:401"},
		{"13 403", httpFail(403, "", ""), Fail, "", "http:403"},
		{"13 407", httpFail(407, "", ""), Fail, "", "http:407"},
		{"13 401 with a JSON-RPC body", httpFail(401, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"m"}}`), Fail, "", "http:401"},
		{"14 500", httpFail(500, "text/plain", "boom"), Fail, "", "http:500"},
		{"14 502", httpFail(502, "", ""), Fail, "", "http:502"},
		{"14 503", httpFail(503, "", ""), Fail, "", "http:503"},
		{"14 429", httpFail(429, "", ""), Fail, "", "http:429"},
		{"14 408", httpFail(408, "", ""), Fail, "", "http:408"},
		{"15 200 HTML", httpFail(200, "text/html", "<html><body>hello</body></html>"), Legacy, LegacyVersion, "http:200:nonjson"},
		{"15 200 empty", httpFail(200, "application/json", ""), Legacy, LegacyVersion, "http:200:empty"},
		{"15 202 empty", httpFail(202, "", ""), Legacy, LegacyVersion, "http:202:empty"},
		{"15 200 SSE without our answer", httpFail(200, "text/event-stream", ""), Legacy, LegacyVersion, "http:200:noanswer"},
		{"16 network error", Outcome{Kind: OutcomeNetworkError, Transport: ProbeHTTP, Err: syscall.ECONNREFUSED}, Fail, "", "net"},
		{"16 HTTP connection closed", Outcome{Kind: OutcomeClosed, Transport: ProbeHTTP}, Fail, "", "net"},
		{"17 HTTP timeout", Outcome{Kind: OutcomeTimedOut, Transport: ProbeHTTP, After: 4 * time.Second}, Inconclusive, "", "http:timeout"},
		{"18 stdio silence", Outcome{Kind: OutcomeTimedOut, Transport: ProbeStdio, After: 5 * time.Second}, Legacy, LegacyVersion, "stdio:timeout"},
		{"19 stdio EOF", Outcome{Kind: OutcomeClosed, Transport: ProbeStdio}, Legacy, LegacyVersion, "stdio:closed"},
		{"no outcome", Outcome{}, Fail, "", "invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.row, func(t *testing.T) {
			d := Classify(tc.o)
			if d.Kind != tc.wantKind || d.Version != tc.wantVersion || d.Label != tc.wantLabel {
				t.Errorf("Classify = {%v %q %q}, want {%v %q %q} (evidence %q)", d.Kind, d.Version, d.Label, tc.wantKind, tc.wantVersion, tc.wantLabel, d.Evidence)
			}
			if d.Evidence == "" {
				t.Error("no evidence text")
			}
			switch d.Kind {
			case Fail:
				var pe *ProbeError
				if !errors.As(d.Err, &pe) || pe.Label != d.Label {
					t.Errorf("Fail with error %v, want a *ProbeError labelled %q", d.Err, d.Label)
				}
				if tc.o.HTTP != nil && pe != nil && pe.Status != tc.o.HTTP.Status {
					t.Errorf("ProbeError.Status = %d, want %d", pe.Status, tc.o.HTTP.Status)
				}
			case Inconclusive:
				var te *ProbeTimeoutError
				if !errors.As(d.Err, &te) || te.After != tc.o.After {
					t.Errorf("Inconclusive with error %v, want a *ProbeTimeoutError after %v", d.Err, tc.o.After)
				}
			default:
				if d.Err != nil {
					t.Errorf("%v with error %v", d.Kind, d.Err)
				}
			}
		})
	}
}

// TestIncompatibleNamesBothLists: row 6's error names the server's and our
// versions.
func TestIncompatibleNamesBothLists(t *testing.T) {
	d := Classify(rpcErr(-32022, `{"supported":["2099-01-01","2100-01-01"]}`))
	msg := d.Err.Error()
	for _, want := range []string{"2099-01-01", "2100-01-01", ModernVersion, LegacyVersion} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %s", msg, want)
		}
	}
}

// TestParseFrame covers row 20: banners, notifications, server requests and
// responses to foreign ids are skipped, not outcomes.
func TestParseFrame(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":"` +
		strings.Repeat("x", MaxAnswerBytes) + `"}}`
	tests := []struct {
		name     string
		line     string
		wantOK   bool
		wantID   string
		wantKind OutcomeKind
	}{
		{"banner", "server v1.2 starting...", false, "", 0},
		{"empty", "   ", false, "", 0},
		{"broken JSON", `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{`, false, "", 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, false, "", 0},
		{"server request", `{"jsonrpc":"2.0","id":"mcphost-probe-1","method":"roots/list"}`, false, "", 0},
		{"foreign string id", `{"jsonrpc":"2.0","id":"other","result":{}}`, false, "", 0},
		{"foreign number id", `{"jsonrpc":"2.0","id":1,"result":{}}`, false, "", 0},
		{"null id error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, false, "", 0},
		{"array", `[{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{}}]`, false, "", 0},
		{"our result", `{"jsonrpc":"2.0","id":"mcphost-probe-1","result":{"supportedVersions":["2026-07-28"],"capabilities":{}}}`, true, "mcphost-probe-1", OutcomeResult},
		{"our error", `{"jsonrpc":"2.0","id":"mcphost-probe-2","error":{"code":-32601,"message":"nope"}}`, true, "mcphost-probe-2", OutcomeRPCError},
		{"our empty response", `{"jsonrpc":"2.0","id":"mcphost-probe-1"}`, true, "mcphost-probe-1", OutcomeResult},
		{"our oversize answer", big, true, "mcphost-probe-1", OutcomeOversize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, o, ok := parseFrame([]byte(tc.line))
			if ok != tc.wantOK || id != tc.wantID || o.Kind != tc.wantKind {
				t.Errorf("parseFrame = %q, %v, %v; want %q, %v, %v", id, o.Kind, ok, tc.wantID, tc.wantKind, tc.wantOK)
			}
		})
	}
}

// TestFresh pins the era cache expiry: legacy verdicts last 24h, modern
// ones have no clock expiry, provisional ones are never fresh.
func TestFresh(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		v    Verdict
		want bool
	}{
		{"legacy 1h", Verdict{Era: EraLegacy, ObservedAt: now.Add(-time.Hour)}, true},
		{"legacy 23h59m", Verdict{Era: EraLegacy, ObservedAt: now.Add(-LegacyVerdictTTL + time.Minute)}, true},
		{"legacy 24h", Verdict{Era: EraLegacy, ObservedAt: now.Add(-LegacyVerdictTTL)}, false},
		{"legacy 25h", Verdict{Era: EraLegacy, ObservedAt: now.Add(-25 * time.Hour)}, false},
		{"legacy without time", Verdict{Era: EraLegacy}, false},
		{"modern a year old", Verdict{Era: EraModern, ObservedAt: now.AddDate(-1, 0, 0)}, true},
		{"provisional", Verdict{Era: EraLegacy, ObservedAt: now, Provisional: true}, false},
		{"unknown era", Verdict{Era: "future", ObservedAt: now}, false},
	}
	for _, tc := range tests {
		if got := Fresh(tc.v, now); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}
