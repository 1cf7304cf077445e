package config

import "testing"

func TestTelemetrySettings(t *testing.T) {
	tests := []struct {
		name, block       string
		endpoint, service string
		diag              string // summary of the one error, or ""
		pprof             bool
	}{
		{"none", "", "", DefaultServiceName, "", false},
		{"endpoint", "telemetry {\n  otlp_endpoint = \"http://127.0.0.1:4318\"\n}\n", "http://127.0.0.1:4318", DefaultServiceName, "", false},
		{"with path and name", "telemetry {\n  otlp_endpoint = \"https://otel.example/otlp/v1/traces\"\n  service_name = \"team-mcp\"\n}\n", "https://otel.example/otlp/v1/traces", "team-mcp", "", false},
		{"not a URL", "telemetry {\n  otlp_endpoint = \"127.0.0.1:4318\"\n}\n", "", DefaultServiceName, "Invalid otlp_endpoint", false},
		{"grpc scheme", "telemetry {\n  otlp_endpoint = \"grpc://127.0.0.1:4317\"\n}\n", "", DefaultServiceName, "Invalid otlp_endpoint", false},
		{"credentials", "telemetry {\n  otlp_endpoint = \"http://u:p@127.0.0.1:4318\"\n}\n", "", DefaultServiceName, "Invalid otlp_endpoint", false},
		{"empty name", "telemetry {\n  service_name = \"\"\n}\n", "", DefaultServiceName, "Invalid service_name", false},
		{"two blocks", "telemetry {\n}\ntelemetry {\n}\n", "", DefaultServiceName, "Duplicate telemetry block", false},
		{"pprof", "telemetry {\n  pprof = true\n}\n", "", DefaultServiceName, "", true},
		{"pprof not a bool", "telemetry {\n  pprof = \"yes please\"\n}\n", "", DefaultServiceName, "Incorrect attribute value type", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, diags := Parse([]byte(tt.block), "t.hcl", Options{Executable: testExecutable})
			if tt.diag == "" {
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				if cfg.Telemetry.OTLPEndpoint != tt.endpoint || cfg.Telemetry.ServiceName != tt.service || cfg.Telemetry.Pprof != tt.pprof {
					t.Fatalf("telemetry %+v, want endpoint %q, service %q and pprof %v", cfg.Telemetry, tt.endpoint, tt.service, tt.pprof)
				}
				return
			}
			if len(diags) != 1 || diags[0].Summary != tt.diag || diags[0].Subject == nil {
				t.Fatalf("diagnostics %v, want one %q with a range", diags, tt.diag)
			}
		})
	}
}
