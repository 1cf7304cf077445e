package host_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestOneShotDoorRunsThePipeline: the one-shot door (CallTool, the CLI's)
// runs the same stages as a session's calls: arguments are checked against
// the tool's input schema before anything is sent (the CLI skipped that
// before), and an App's origin cannot be claimed without its session. An `ask`
// rule, with nobody to answer, denies.
func TestOneShotDoorRunsThePipeline(t *testing.T) {
	cfg, diags := config.Parse([]byte(`
policy "ask-echo" {
  phase   = "call"
  effect  = "ask"
  when    = "tool.name == 'echo'"
  message = "May it echo?"
}
`), "p.hcl", config.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	cfg.Servers = []config.Server{stdioServer("fx", testbin.Build(t, wellbehavedPkg))}
	h, err := host.New(cfg, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.Start(t.Context())
	if err := h.WaitSettled(t.Context()); err != nil {
		t.Fatal(err)
	}

	_, err = h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "add", Arguments: json.RawMessage(`{"a":"one","b":2}`)})
	var ae *host.ArgumentsError
	if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "input schema of add") {
		t.Fatalf("arguments against the schema: %v, want an ArgumentsError naming the schema", err)
	}
	res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`)})
	if err != nil || textOf(res) != "3" {
		t.Fatalf("a good call: %v, %v", res, err)
	}
	// The one-shot door has no session, so no App can be named: an App's
	// origin is the API's there.
	if _, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`), Origin: host.OriginApp}); err != nil {
		t.Fatalf("origin app on the one-shot door: %v", err)
	}
	_, err = h.CallTool(t.Context(), host.CallToolRequest{Server: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)})
	var pe *host.PolicyError
	if !errors.As(err, &pe) || pe.Rule != "ask-echo" || !strings.Contains(pe.Message, "needs approval, which only the WebShell can give: May it echo?") {
		t.Fatalf("an ask rule on the one-shot door: %v", err)
	}
}

// TestUncompilableSchemaReported: a tool whose input schema does not
// compile is reported in the server's status (uncheckedTools, with the
// compiler's complaint) and logged once when the catalog is fetched, and
// its calls go to the server unchecked.
func TestUncompilableSchemaReported(t *testing.T) {
	rec := newRecordingHandler()
	h := startHost(t, host.Options{Logger: slog.New(rec)}, stdioServer("bad", testbin.Build(t, misbehavePkg), "-mode", "bad-schema"))
	st := mustStatus(t, h, "bad")
	if st.State != host.StateReady || len(st.UncheckedTools) != 1 || st.UncheckedTools[0].Name != "remote-ref" ||
		!strings.Contains(st.UncheckedTools[0].Reason, "does not compile") {
		t.Fatalf("status %+v, want remote-ref among the unchecked tools", st)
	}
	if st.Tools != 2 {
		t.Errorf("%d tools, want 2 (an unchecked tool is still listed)", st.Tools)
	}
	res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "bad", Tool: "remote-ref", Arguments: json.RawMessage(`{"a":42}`)})
	if err != nil || textOf(res) != "remote-ref from raw" {
		t.Fatalf("calling the unchecked tool: %v, %v", res, err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, r := range *rec.records {
		if r["msg"] == "tool input schema does not compile; its arguments are not checked" && r["tool"] == "remote-ref" && r["server"] == "bad" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("logged %d times, want once: %v", n, *rec.records)
	}
}
