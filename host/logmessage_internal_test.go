package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/mcphost/mcphost/internal/logrec"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/testbin"
)

// TestServerLogMessagesAreBounded: a stdio server that sends one 10 MiB
// notifications/message and then thousands of small ones within one call
// gets the bounds of its stderr: each message's data is cut to
// stderrLineMax with a marker saying how much was cut, at most
// transport.StderrLogBurst messages are logged per window, and every message that is
// not logged is counted in a "suppressed" record.
func TestServerLogMessagesAreBounded(t *testing.T) {
	bin := testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/misbehave")
	const n, huge = 5000, 10 << 20
	rec := &logrec.Handler{}
	s := config.Server{
		Name:               "fx",
		Transport:          config.TransportStdio,
		Command:            bin,
		Args:               []string{"-mode", "log-flood"},
		VersionNegotiation: config.NegotiationLegacy,
		DiscoveryTimeout:   20 * time.Second,
		CallTimeout:        2 * time.Minute,
		Enabled:            true,
	}
	h, err := New(&config.Config{Servers: []config.Server{s}}, Options{Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h.Start(ctx)
	if err := h.WaitSettled(ctx); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(fmt.Sprintf(`{"n":%d,"huge":%d}`, n, huge))
	// The fixture answers only after mcphost has handled every message.
	res, err := h.CallTool(ctx, CallToolRequest{Server: "fx", Tool: "flood", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("flood failed: %v", res.Content)
	}
	// Closing reports what the last window suppressed.
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}

	logged := rec.Records("server log message")
	reports := rec.Records("server log messages suppressed")
	suppressed := int64(0)
	for _, r := range reports {
		suppressed += r.Attrs["messages"].Int64()
	}
	if got := int64(len(logged)) + suppressed; got != n+1 {
		t.Errorf("%d messages logged and %d counted as suppressed, want all %d accounted for", len(logged), suppressed, n+1)
	}
	if len(reports) == 0 {
		t.Errorf("no suppressed count reported (%d messages logged)", len(logged))
	}
	// At most a burst per window, and every window that reached its
	// burst and had more reported them.
	if bound := transport.StderrLogBurst * (len(reports) + 1); len(logged) > bound {
		t.Errorf("%d messages logged with %d suppressed reports, want at most %d", len(logged), len(reports), bound)
	}
	if len(logged) == 0 {
		t.Fatal("no server log message logged")
	}
	data := logged[0].Attrs["data"].String()
	marker := fmt.Sprintf("… [%d bytes cut]", huge-transport.StderrLineMax)
	if !strings.HasSuffix(data, marker) || strings.Trim(strings.TrimSuffix(data, marker), "h") != "" ||
		len(data) != transport.StderrLineMax+len(marker) {
		t.Errorf("the huge message was logged as %d bytes (%.40q…%.40q), want %d bytes of data and the marker %q",
			len(data), data, data[max(0, len(data)-40):], transport.StderrLineMax, marker)
	}
	for _, r := range logged[1:] {
		if d := r.Attrs["data"].String(); !strings.HasPrefix(d, "fixture: log message ") {
			t.Errorf("small message logged as %.60q", d)
			break
		}
	}
}
