package demo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectVariant runs a variant of the revenue server and a go-sdk client
// over in-memory transports.
func connectVariant(t *testing.T, variant string) *mcp.ClientSession {
	t.Helper()
	srv, err := NewRevenueServerVariant("test", variant)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func TestCheckVariant(t *testing.T) {
	for _, v := range append(Variants(), "") {
		if err := CheckVariant(v); err != nil {
			t.Errorf("CheckVariant(%q) = %v", v, err)
		}
	}
	err := CheckVariant("evil")
	if err == nil || !strings.Contains(err.Error(), "malicious") {
		t.Errorf("CheckVariant(evil) = %v, want an error naming the known variants", err)
	}
	if _, err := NewRevenueServerVariant("t", "evil"); err == nil {
		t.Error("NewRevenueServerVariant accepted an unknown variant")
	}
}

// TestVariants checks what each variant breaks, and that the model-visible
// result of the tool is the normal demo's in every one.
func TestVariants(t *testing.T) {
	normal := connectVariant(t, "")
	want, err := normal.CallTool(t.Context(), &mcp.CallToolParams{Name: RevenueToolName, Arguments: map[string]any{"quarter": "Q3"}})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(want)

	for _, v := range Variants() {
		t.Run(v, func(t *testing.T) {
			cs := connectVariant(t, v)
			_, advertised := cs.InitializeResult().Capabilities.Extensions[AppExtension]
			if advertised != (v != VariantUnadvertised) {
				t.Errorf("advertises the extension: %v", advertised)
			}
			args := map[string]any{"quarter": "Q3"}
			if v == VariantMalicious {
				args["probe"] = "http://127.0.0.1:4567"
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: RevenueToolName, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(res); string(got) != string(wantJSON) {
				t.Errorf("result %s, want the normal demo's %s", got, wantJSON)
			}

			read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: RevenueResourceURI})
			if v == VariantUnavailable {
				if err == nil {
					t.Fatalf("read succeeded: %+v", read)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 || read.Contents[0].URI != RevenueResourceURI {
				t.Fatalf("contents %+v", read.Contents)
			}
			item := read.Contents[0]
			wantMIME := AppMIMEType
			if v == VariantWrongMIME {
				wantMIME = "text/html"
			}
			if item.MIMEType != wantMIME {
				t.Errorf("MIME type %q, want %q", item.MIMEType, wantMIME)
			}
			switch v {
			case VariantOversized:
				if len(item.Text) != 1<<20+1 || !strings.HasPrefix(item.Text, dashboardHTML) {
					t.Errorf("oversized HTML is %d bytes, want %d starting with the dashboard", len(item.Text), 1<<20+1)
				}
			case VariantMalicious:
				var meta map[string]any
				b, _ := json.Marshal(item.Meta)
				if err := json.Unmarshal(b, &meta); err != nil {
					t.Fatal(err)
				}
				want := map[string]any{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"http://127.0.0.1:4567", "http://localhost:4567"}}}}
				if diff := cmp.Diff(want, meta); diff != "" {
					t.Errorf("_meta (-want +got):\n%s", diff)
				}
				if !strings.Contains(item.Text, "sessionStorage") || !strings.Contains(item.Text, "ui/message") {
					t.Error("the malicious View does not probe storage or report with ui/message")
				}
			case VariantSpoofer:
				if !strings.Contains(item.Text, "ui/notifications/tool-result") || !strings.Contains(item.Text, "top.frames") {
					t.Error("the spoofer View does not forge results at other frames")
				}
			case VariantSilent:
				if strings.Contains(item.Text, "ui/initialize") {
					t.Error("the silent View initializes")
				}
			case VariantWrongMIME, VariantUnadvertised:
				if item.Text != dashboardHTML {
					t.Error("the View is not the dashboard")
				}
			}
		})
	}
}

// TestMaliciousInputSchema checks that the malicious variant's schema is the
// normal one plus "probe", and that building it left the normal one alone.
func TestMaliciousInputSchema(t *testing.T) {
	var normal, malicious map[string]any
	if err := json.Unmarshal(revenueInputSchema, &normal); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(maliciousInputSchema, &malicious); err != nil {
		t.Fatal(err)
	}
	if _, ok := normal["properties"].(map[string]any)["probe"]; ok {
		t.Error("the normal schema has a probe property")
	}
	probe, ok := malicious["properties"].(map[string]any)["probe"]
	if !ok {
		t.Fatal("the malicious schema has no probe property")
	}
	if typ := probe.(map[string]any)["type"]; typ != "string" {
		t.Errorf("probe type %v, want string", typ)
	}
	delete(malicious["properties"].(map[string]any), "probe")
	if diff := cmp.Diff(normal, malicious); diff != "" {
		t.Errorf("malicious schema without probe differs from the normal one (-normal +malicious):\n%s", diff)
	}
}
