package upstream

import (
	"context"

	"github.com/mcphost/mcphost/host/config"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startUpstreamSpan starts the client span of the request to the server.
func (c *Conn) startUpstreamSpan(ctx context.Context, tool, protocol string) (context.Context, trace.Span) {
	if !Tracing() {
		return ctx, NoSpan
	}
	ctx, span := tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	transport := "tcp"
	switch c.Cfg.Transport {
	case config.TransportStdio:
		transport = "pipe"
	case config.TransportWasm:
		transport = "inproc"
	}
	span.SetAttributes(AttrMCPMethod.String("tools/call"), AttrToolName.String(tool), AttrServer.String(c.Cfg.Name),
		AttrMCPProtocol.String(protocol), AttrTransport.String(transport))
	return ctx, span
}

// EndSpan ends span, marking it failed with err.
func EndSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// tracer resolves the global provider when a span starts, so one that
// telemetry.Setup installs after the host was built is used.
var tracer = otel.Tracer("github.com/mcphost/mcphost/host")

// defaultProvider is OpenTelemetry's global provider before anything is
// installed: its spans record nothing.
var defaultProvider = otel.GetTracerProvider()

// Tracing says whether a tracer provider has been installed (telemetry.Setup
// with a collector). Without one a call's spans are not started at all:
// the no-op spans cost allocations on every call and say nothing. A
// traceparent the caller sent still reaches the servers, from the context.
func Tracing() bool { return otel.GetTracerProvider() != defaultProvider }

// NoSpan is the span of a stage while Tracing is off: it records nothing,
// and ending it ends nothing.
var NoSpan = trace.SpanFromContext(context.Background())

// StartSpan is tracer.Start when Tracing is on, else ctx and NoSpan.
func StartSpan(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !Tracing() {
		return ctx, NoSpan
	}
	return tracer.Start(ctx, name, opts...)
}

// Attribute keys: OpenTelemetry's MCP and GenAI conventions where they
// have one, mcphost.* otherwise.
const (
	AttrMCPMethod   = attribute.Key("mcp.method.name")
	AttrMCPProtocol = attribute.Key("mcp.protocol.version")
	AttrToolName    = attribute.Key("gen_ai.tool.name")
	AttrOperation   = attribute.Key("gen_ai.operation.name")
	AttrErrorType   = attribute.Key("error.type")
	AttrTransport   = attribute.Key("network.transport")
	AttrServer      = attribute.Key("mcphost.server")
	AttrOrigin      = attribute.Key("mcphost.origin")
	AttrPrincipal   = attribute.Key("mcphost.principal")
	AttrStatus      = attribute.Key("mcphost.call.status")
	AttrCallID      = attribute.Key("mcphost.call.id")
	AttrEffect      = attribute.Key("mcphost.policy.effect")
	AttrRule        = attribute.Key("mcphost.policy.rule")
	AttrEntry       = attribute.Key("mcphost.entry.id")
	AttrClientName  = attribute.Key("mcphost.client.name")
	AttrResourceURI = attribute.Key("mcp.resource.uri")
)
