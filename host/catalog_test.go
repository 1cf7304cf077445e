package host_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/internal/testbin"
)

// recordingHandler keeps the records logged at Warn or above, with the
// attributes of their logger.
type recordingHandler struct {
	mu      *sync.Mutex
	records *[]map[string]string
	attrs   []slog.Attr
}

func newRecordingHandler() *recordingHandler {
	return &recordingHandler{mu: &sync.Mutex{}, records: &[]map[string]string{}}
}

func (h *recordingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	rec := map[string]string{"msg": r.Message, "level": r.Level.String()}
	for _, a := range h.attrs {
		rec[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { rec[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}
func (h *recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &c
}
func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// leftOut returns the "tool" attribute of each record about a tool left
// out of the catalog of server.
func (h *recordingHandler) leftOut(server string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range *h.records {
		if r["msg"] == "tool left out of the catalog" && r["server"] == server && r["level"] == "WARN" {
			out = append(out, r["tool"])
		}
	}
	return out
}

// TestHostileToolNames starts the raw fixture in -mode hostile, whose
// tools/list holds two admissible tools with hostile titles, a repeat of one
// of them and tools whose names break the MCP spec's tool-name rule. The
// catalog keeps the two (the first of the repeated name), lists and calls
// only them, reports the others in the server's status with their names
// escaped, and logs each at Warn once per catalog fetch.
func TestHostileToolNames(t *testing.T) {
	bin := testbin.Build(t, misbehavePkg)
	logs := newRecordingHandler()
	h := startHost(t, host.Options{Logger: slog.New(logs)}, stdioServer("hostile", bin, "-mode", "hostile"))

	st := mustStatus(t, h, "hostile")
	if st.State != host.StateReady {
		t.Fatalf("state = %s, want ready (last error: %s)", st.State, st.LastError)
	}
	wantRejected := []upstream.RejectedTool{
		{Name: "greet", Reason: "the server listed a tool of this name before; the first one is kept"},
		{Name: `esc\x1b[31mname`, Reason: "the name contains U+001B at byte 3; the MCP spec allows only A-Z, a-z, 0-9, _, - and ."},
		{Name: `rlo\u202etxt.exe`, Reason: "the name contains U+202E at byte 3; the MCP spec allows only A-Z, a-z, 0-9, _, - and ."},
		{Name: `nul\x00cr\rbel\x07`, Reason: "the name contains U+0000 at byte 3; the MCP spec allows only A-Z, a-z, 0-9, _, - and ."},
		{Name: "has space", Reason: "the name contains U+0020 at byte 3; the MCP spec allows only A-Z, a-z, 0-9, _, - and ."},
		{Name: "<b>html</b>", Reason: "the name contains U+003C at byte 0; the MCP spec allows only A-Z, a-z, 0-9, _, - and ."},
		{Name: "", Reason: "the name is empty; the MCP spec asks for 1 to 128 characters"},
		{Name: strings.Repeat("x", 129), Reason: "the name has 129 characters; the MCP spec allows at most 128"},
	}
	if diff := cmp.Diff(wantRejected, st.RejectedTools); diff != "" {
		t.Errorf("status rejectedTools (-want +got):\n%s", diff)
	}
	if st.Tools != 2 {
		t.Errorf("status tools = %d, want 2 (the rejected ones not counted)", st.Tools)
	}

	tools, err := h.Tools("hostile")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Tool.Name)
		if tl.Tool.Name == "greet" && tl.Tool.Title != "<img src=x onerror=alert(1)>\u202eevil" {
			t.Errorf("greet's title = %q, want the first greet's, kept as data", tl.Tool.Title)
		}
	}
	if diff := cmp.Diff([]string{"dotted.name-1_A", "greet"}, names); diff != "" {
		t.Errorf("listed tools (-want +got):\n%s", diff)
	}

	// A rejected name is not callable: the host answers "no such tool"
	// without asking the server (which would answer "called NAME").
	for _, name := range []string{"esc\x1b[31mname", "rlo\u202etxt.exe", "has space", "", strings.Repeat("x", 129)} {
		res, err := h.CallTool(t.Context(), host.CallToolRequest{Server: "hostile", Tool: name, Arguments: []byte(`{}`)})
		if err == nil {
			t.Errorf("call %q reached the server: %q", name, textOf(res))
		} else if !host.IsNotFound(err) {
			t.Errorf("call %q: %v, want a not-found error", name, err)
		}
	}
	// The admitted tools of the same server still work.
	if got := textOf(call(t, h, "hostile", "greet", `{}`)); !strings.HasPrefix(got, "hello") {
		t.Errorf("greet = %q", got)
	}

	wantLogged := make([]string, 0, len(wantRejected))
	for _, r := range wantRejected {
		wantLogged = append(wantLogged, r.Name)
	}
	if diff := cmp.Diff(wantLogged, logs.leftOut("hostile")); diff != "" {
		t.Errorf("Warn records after the first fetch (-want +got):\n%s", diff)
	}
	// Each fetch of the catalog reports again, once.
	if _, err := h.RefreshCatalog(t.Context(), "hostile"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(append(wantLogged, wantLogged...), logs.leftOut("hostile")); diff != "" {
		t.Errorf("Warn records after a refresh (-want +got):\n%s", diff)
	}
}
