// Package telemetry sends mcphost's OpenTelemetry traces to an OTLP/HTTP
// collector when the config's `telemetry` block names one, and does
// nothing otherwise.
//
// The host's code uses the OpenTelemetry API only (otel.Tracer); until
// Setup installs a provider the global one is OpenTelemetry's no-op, so a
// daemon without a collector pays for spans that are never started. Setup
// installs a batching provider with the service's name and version and the
// W3C trace-context propagator, with which the host hands the trace to
// remote servers in the traceparent header.
//
// Spans follow OpenTelemetry's semantic conventions for MCP where they
// exist (mcp.method.name, mcp.protocol.version, mcp.session.id,
// gen_ai.tool.name, gen_ai.operation.name, error.type); mcphost's own
// attributes are under mcphost.*.
package telemetry
