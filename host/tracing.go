package host

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Traces (package telemetry sends them): one span per tool call, named as
// OpenTelemetry's MCP conventions name it ("tools/call TOOL"), with a
// child span per stage: the call phase of the policies, the upstream call
// (a client span; a remote server gets its context in the traceparent
// header, shim.go), the result stage (plugins, then the result phase), the
// App (its resource read and the display stage), and the transcript
// record. Without a collector the tracer is OpenTelemetry's no-op.

// startCallSpan starts the span of one call through the pipeline (none
// without a tracer provider: upstream.Tracing).
func startCallSpan(ctx context.Context, req *SessionCall) (context.Context, trace.Span) {
	if !upstream.Tracing() {
		return ctx, upstream.NoSpan
	}
	ctx, span := upstream.StartSpan(ctx, "tools/call "+req.Tool)
	if !span.IsRecording() {
		return ctx, span // traces are off: no attributes to build
	}
	attrs := []attribute.KeyValue{
		upstream.AttrMCPMethod.String("tools/call"), upstream.AttrToolName.String(req.Tool), upstream.AttrOperation.String("execute_tool"),
		upstream.AttrServer.String(req.Server), upstream.AttrPrincipal.String(req.Principal.Name),
	}
	if req.Origin != "" {
		attrs = append(attrs, upstream.AttrOrigin.String(req.Origin))
	}
	if req.Client.Name != "" {
		attrs = append(attrs, upstream.AttrClientName.String(req.Client.Name))
	}
	span.SetAttributes(attrs...)
	return ctx, span
}

// endCallSpan ends a call's span with what became of the call.
func endCallSpan(span trace.Span, out *callOutcome, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	if out != nil && out.entry != nil {
		e := out.entry
		span.SetAttributes(upstream.AttrStatus.String(e.Status), upstream.AttrCallID.String(e.CallID), upstream.AttrOrigin.String(e.Origin))
		if e.ID != "" {
			span.SetAttributes(upstream.AttrEntry.String(e.ID))
		}
		switch e.Status {
		case store.StatusError, store.StatusCancelled, store.StatusDenied:
			span.SetAttributes(upstream.AttrErrorType.String(e.Status))
			span.SetStatus(codes.Error, e.Error)
		case statusToolError:
			span.SetAttributes(upstream.AttrErrorType.String("tool_error"))
			span.SetStatus(codes.Error, "the tool returned an error result")
		}
	}
	if err != nil {
		span.RecordError(err)
		span.SetAttributes(upstream.AttrErrorType.String(fmt.Sprintf("%T", err)))
		span.SetStatus(codes.Error, err.Error())
	}
}
