package host

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/host/config"
	"go.opentelemetry.io/otel"
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

// tracer resolves the global provider when a span starts, so one that
// telemetry.Setup installs after the host was built is used.
var tracer = otel.Tracer("github.com/mcphost/mcphost/host")

// Attribute keys: OpenTelemetry's MCP and GenAI conventions where they
// have one, mcphost.* otherwise.
const (
	attrMCPMethod   = attribute.Key("mcp.method.name")
	attrMCPProtocol = attribute.Key("mcp.protocol.version")
	attrToolName    = attribute.Key("gen_ai.tool.name")
	attrOperation   = attribute.Key("gen_ai.operation.name")
	attrErrorType   = attribute.Key("error.type")
	attrTransport   = attribute.Key("network.transport")
	attrServer      = attribute.Key("mcphost.server")
	attrOrigin      = attribute.Key("mcphost.origin")
	attrPrincipal   = attribute.Key("mcphost.principal")
	attrStatus      = attribute.Key("mcphost.call.status")
	attrCallID      = attribute.Key("mcphost.call.id")
	attrEffect      = attribute.Key("mcphost.policy.effect")
	attrRule        = attribute.Key("mcphost.policy.rule")
	attrEntry       = attribute.Key("mcphost.entry.id")
	attrClientName  = attribute.Key("mcphost.client.name")
	attrResourceURI = attribute.Key("mcp.resource.uri")
)

// startCallSpan starts the span of one call through the pipeline.
func startCallSpan(ctx context.Context, req *SessionCall) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "tools/call "+req.Tool)
	if !span.IsRecording() {
		return ctx, span // traces are off: no attributes to build
	}
	attrs := []attribute.KeyValue{
		attrMCPMethod.String("tools/call"), attrToolName.String(req.Tool), attrOperation.String("execute_tool"),
		attrServer.String(req.Server), attrPrincipal.String(req.Principal.Name),
	}
	if req.Origin != "" {
		attrs = append(attrs, attrOrigin.String(req.Origin))
	}
	if req.Client.Name != "" {
		attrs = append(attrs, attrClientName.String(req.Client.Name))
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
		span.SetAttributes(attrStatus.String(e.Status), attrCallID.String(e.CallID), attrOrigin.String(e.Origin))
		if e.ID != "" {
			span.SetAttributes(attrEntry.String(e.ID))
		}
		switch e.Status {
		case StatusError, StatusCancelled, StatusDenied:
			span.SetAttributes(attrErrorType.String(e.Status))
			span.SetStatus(codes.Error, e.Error)
		case statusToolError:
			span.SetAttributes(attrErrorType.String("tool_error"))
			span.SetStatus(codes.Error, "the tool returned an error result")
		}
	}
	if err != nil {
		span.RecordError(err)
		span.SetAttributes(attrErrorType.String(fmt.Sprintf("%T", err)))
		span.SetStatus(codes.Error, err.Error())
	}
}

// startStage starts the span of one stage of a call.
func startStage(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// startUpstreamSpan starts the client span of the request to the server.
func (c *serverConn) startUpstreamSpan(ctx context.Context, tool, protocol string) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	transport := "tcp"
	switch c.cfg.Transport {
	case config.TransportStdio:
		transport = "pipe"
	case config.TransportWasm:
		transport = "inproc"
	}
	span.SetAttributes(attrMCPMethod.String("tools/call"), attrToolName.String(tool), attrServer.String(c.cfg.Name),
		attrMCPProtocol.String(protocol), attrTransport.String(transport))
	return ctx, span
}

// endSpan ends span, marking it failed with err.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
