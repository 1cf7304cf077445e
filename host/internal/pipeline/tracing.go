package pipeline

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// StartStage starts the span of one stage of a call.
func StartStage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// tracer resolves the global provider when a span starts, so one that
// telemetry.Setup installs after the host was built is used.
var tracer = otel.Tracer("github.com/mcphost/mcphost/host")
