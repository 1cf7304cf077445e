package upstream

import (
	"context"
	"testing"
)

// TestNoSpansWithoutAProvider: with no tracer provider installed, a span
// is not started: the context comes back as it was and the span records
// nothing (telemetry's own tests cover spans with a collector).
func TestNoSpansWithoutAProvider(t *testing.T) {
	if Tracing() {
		t.Fatal("Tracing() is true with no provider installed")
	}
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, 1)
	got, span := StartSpan(ctx, "tools/call x")
	if got != ctx || span.IsRecording() {
		t.Errorf("StartSpan without a provider: a new context %v, recording %v", got != ctx, span.IsRecording())
	}
	span.End() // harmless
}
