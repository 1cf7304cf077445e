package config

import (
	"fmt"
	"net/url"

	"github.com/hashicorp/hcl/v2"
)

// DefaultServiceName is the service.name of mcphost's traces.
const DefaultServiceName = "mcphost"

// decodeTelemetry checks the `telemetry` block; there may be one.
func (l *loader) decodeTelemetry(cfg *Config, blocks []*telemetryBlock) {
	cfg.Telemetry = Telemetry{ServiceName: DefaultServiceName}
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate telemetry block",
			Detail:   fmt.Sprintf("A telemetry block is already defined at %s. Merge the two blocks into one.", fileLine(blocks[0].DeclRange)),
			Subject:  b.DeclRange.Ptr(),
		})
	}
	b := blocks[0]
	if v, st := l.evalString(b.OTLPEndpoint, "otlp_endpoint"); st == valid {
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid otlp_endpoint",
				Detail: fmt.Sprintf("The otlp_endpoint %s is not the http or https URL of an OTLP/HTTP collector. Give its base URL, such as \"http://127.0.0.1:4318\" (traces go to /v1/traces), without credentials, query or fragment.",
					quoted(b.OTLPEndpoint, v)),
				Subject: b.OTLPEndpointRange.Ptr(),
			})
		default:
			cfg.Telemetry.OTLPEndpoint = v
		}
	}
	if v, st := l.evalString(b.ServiceName, "service_name"); st == valid {
		if v == "" {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid service_name",
				Detail:   "The service_name is empty. Leave it out for \"mcphost\", or name the service the traces belong to.",
				Subject:  b.ServiceNameRange.Ptr(),
			})
		} else {
			cfg.Telemetry.ServiceName = v
		}
	}
	if v, st := l.evalBool(b.Pprof, "pprof"); st == valid {
		cfg.Telemetry.Pprof = v
	}
}
