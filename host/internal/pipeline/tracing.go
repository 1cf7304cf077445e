package pipeline

import (
	"context"

	"github.com/mcphost/mcphost/host/internal/upstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StartStage starts the span of one stage of a call.
// Without a tracer provider (upstream.Tracing) it starts nothing.
func StartStage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if !upstream.Tracing() {
		return ctx, upstream.NoSpan
	}
	return upstream.StartSpan(ctx, name, trace.WithAttributes(attrs...))
}
