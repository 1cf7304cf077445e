package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config says where traces go; an empty Endpoint turns them off.
type Config struct {
	// Endpoint is the collector's base URL (traces go to its /v1/traces)
	// or the full URL of its traces path.
	Endpoint string
	// ServiceName and ServiceVersion describe the daemon.
	ServiceName, ServiceVersion string
	Logger                      *slog.Logger
}

// shutdownBound bounds the last export at shutdown.
const shutdownBound = 5 * time.Second

// Setup installs the global tracer provider and propagator for cfg and
// returns the function that flushes and stops it. Without an endpoint it
// installs nothing and the returned function does nothing.
func Setup(ctx context.Context, cfg Config) (shutdown func(context.Context) error, err error) {
	if cfg.Endpoint == "" {
		return func(context.Context) error { return nil }, nil
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("telemetry: otlp_endpoint %q is not an http or https URL", cfg.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(u.Path)}
	if u.Scheme == "http" {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: the OTLP exporter for %s: %w", u, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", cfg.ServiceName),
		attribute.String("service.version", cfg.ServiceVersion),
	))
	if err != nil {
		return nil, fmt.Errorf("telemetry: the trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if cfg.Logger != nil {
		// A collector that is down fails every export (each few seconds):
		// logged at most once a minute, with the count.
		var mu sync.Mutex
		var last time.Time
		var failed int
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			mu.Lock()
			defer mu.Unlock()
			failed++
			if time.Since(last) < time.Minute {
				return
			}
			last = time.Now()
			cfg.Logger.Warn("telemetry: exporting traces failed", "endpoint", u.String(), "err", err, "failures", failed)
			failed = 0
		}))
		cfg.Logger.Info("telemetry: sending traces", "endpoint", u.String())
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, shutdownBound)
		defer cancel()
		return errors.Join(tp.Shutdown(ctx))
	}, nil
}
