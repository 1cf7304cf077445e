package demo

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names and values a host and its tests can rely on.
const (
	// AppExtension is the MCP Apps extension id the server advertises.
	AppExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the exact MIME type of an MCP App resource.
	AppMIMEType = "text/html;profile=mcp-app"
	// RevenueToolName is the tool that shows the dashboard.
	RevenueToolName = "show_revenue_dashboard"
	// RevenueResourceURI is the dashboard View linked from the tool.
	RevenueResourceURI = "ui://revenue-dashboard"
	// RevenueYear is the fiscal year all figures belong to.
	RevenueYear = 2026
)

//go:embed dashboard.html
var dashboardHTML string

// DashboardHTML returns the View served at [RevenueResourceURI].
func DashboardHTML() string { return dashboardHTML }

// Month is one bar of the dashboard.
type Month struct {
	Label   string `json:"label"`   // short month name, "Jul"
	Revenue int64  `json:"revenue"` // whole US dollars
}

// Revenue is the structuredContent of a show_revenue_dashboard result.
type Revenue struct {
	Quarter  string  `json:"quarter"`  // "Q1".."Q4"
	Region   string  `json:"region"`   // "all", "AMER", "EMEA" or "APAC"
	Year     int     `json:"year"`     // [RevenueYear]
	Currency string  `json:"currency"` // "USD"
	Months   []Month `json:"months"`   // three, in calendar order
	Total    int64   `json:"total"`    // the sum of Months
}

var (
	quarters  = []string{"Q1", "Q2", "Q3", "Q4"}
	regions   = []string{"AMER", "EMEA", "APAC"}
	monthName = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

	// monthly holds invented but plausible monthly revenue per region in
	// whole US dollars: steady growth, a late-summer dip in EMEA and a
	// strong fourth quarter everywhere.
	monthly = map[string][12]int64{
		"AMER": {712400, 738900, 802150, 781300, 809750, 846200, 827600, 871450, 914300, 948700, 1012350, 1098600},
		"EMEA": {468200, 481750, 523900, 507600, 529300, 551800, 498300, 472900, 561400, 589200, 624750, 671300},
		"APAC": {201300, 188600, 236400, 228750, 241900, 257300, 263800, 276400, 291500, 302600, 318900, 347200},
	}
)

// RevenueFor returns the figures of quarter ("Q1".."Q4") in region ("all",
// "AMER", "EMEA" or "APAC"; "" means "all"). Both are matched without regard
// to case. It fails with a sentence fit to show a user or a model when either
// is unknown.
func RevenueFor(quarter, region string) (Revenue, error) {
	q := strings.ToUpper(strings.TrimSpace(quarter))
	qi := indexOf(quarters, q)
	if qi < 0 {
		if q == "" {
			return Revenue{}, errors.New(`the quarter is required: choose one of "Q1", "Q2", "Q3" or "Q4"`)
		}
		return Revenue{}, fmt.Errorf(`unknown quarter %q: choose one of "Q1", "Q2", "Q3" or "Q4"`, quarter)
	}
	r := strings.TrimSpace(region)
	if r == "" || strings.EqualFold(r, "all") {
		r = "all"
	} else {
		r = strings.ToUpper(r)
		if indexOf(regions, r) < 0 {
			return Revenue{}, fmt.Errorf(`unknown region %q: choose one of "all", "AMER", "EMEA" or "APAC"`, region)
		}
	}
	rev := Revenue{Quarter: q, Region: r, Year: RevenueYear, Currency: "USD"}
	for m := qi * 3; m < qi*3+3; m++ {
		var v int64
		for _, name := range regions {
			if r == "all" || r == name {
				v += monthly[name][m]
			}
		}
		rev.Months = append(rev.Months, Month{Label: monthName[m], Revenue: v})
		rev.Total += v
	}
	return rev, nil
}

// Summary is the text fallback of the result, for example
// "Revenue Q3 2026 (all regions): $4.98M total — Jul $1.59M, Aug $1.62M, Sep $1.77M".
func (r Revenue) Summary() string {
	scope := r.Region
	if scope == "all" {
		scope = "all regions"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Revenue %s %d (%s): %s total —", r.Quarter, r.Year, scope, money(r.Total))
	for i, m := range r.Months {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %s", m.Label, money(m.Revenue))
	}
	return b.String()
}

// money renders whole dollars as "$1.59M" or "$263.8K".
func money(v int64) string {
	switch {
	case v >= 1_000_000:
		return fmt.Sprintf("$%.2fM", float64(v)/1e6)
	case v >= 1_000:
		return fmt.Sprintf("$%.1fK", float64(v)/1e3)
	default:
		return fmt.Sprintf("$%d", v)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

var revenueInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "quarter": {
      "type": "string",
      "enum": ["Q1", "Q2", "Q3", "Q4"],
      "description": "Fiscal quarter of 2026 to show."
    },
    "region": {
      "type": "string",
      "enum": ["all", "AMER", "EMEA", "APAC"],
      "default": "all",
      "description": "Sales region; \"all\" (the default) sums every region."
    }
  },
  "required": ["quarter"],
  "additionalProperties": false
}`)

var revenueOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "quarter": {"type": "string"},
    "region": {"type": "string"},
    "year": {"type": "integer"},
    "currency": {"type": "string"},
    "months": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "label": {"type": "string"},
          "revenue": {"type": "integer"}
        },
        "required": ["label", "revenue"]
      }
    },
    "total": {"type": "integer"}
  },
  "required": ["quarter", "region", "year", "currency", "months", "total"]
}`)

// NewRevenueServer returns the go-sdk server of the revenue demo, reporting
// version as its implementation version. It advertises the MCP Apps
// extension, the tool [RevenueToolName] and the resource [RevenueResourceURI].
func NewRevenueServer(version string) *mcp.Server {
	return newRevenueServer(version, "")
}

// NewRevenueServerVariant is [NewRevenueServer] broken in the way variant
// names (see [Variants]; "" is the normal demo). It fails for an unknown
// variant.
func NewRevenueServerVariant(version, variant string) (*mcp.Server, error) {
	if err := CheckVariant(variant); err != nil {
		return nil, err
	}
	return newRevenueServer(version, variant), nil
}

func newRevenueServer(version, variant string) *mcp.Server {
	caps := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
	}
	if variant != VariantUnadvertised {
		caps.AddExtension(AppExtension, map[string]any{"mimeTypes": []any{AppMIMEType}})
	}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    "mcphost-demo-revenue",
		Title:   "mcphost revenue demo",
		Version: version,
	}, &mcp.ServerOptions{
		Capabilities: caps,
		Instructions: "Call show_revenue_dashboard with a quarter (Q1 to Q4) to see the 2026 revenue of that quarter as an interactive bar chart.",
	})

	readOnly, openWorld := true, false
	pr := &probes{}
	schema, handler, read := revenueInputSchema, mcp.ToolHandler(showRevenue), variantRead(variant, pr)
	if variant == VariantMalicious {
		schema = maliciousInputSchema
		handler = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			pr.set(req.Params.Arguments)
			return showRevenue(ctx, req)
		}
	}
	s.AddTool(&mcp.Tool{
		Name:  RevenueToolName,
		Title: "Revenue dashboard",
		Description: "Shows the monthly revenue of one 2026 quarter as a bar chart with the quarter's total. " +
			"Optionally narrows it to one sales region (AMER, EMEA or APAC).",
		InputSchema:  schema,
		OutputSchema: revenueOutputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:          "Revenue dashboard",
			ReadOnlyHint:   readOnly,
			IdempotentHint: true,
			OpenWorldHint:  &openWorld,
		},
		Meta: mcp.Meta{
			"ui":             map[string]any{"resourceUri": RevenueResourceURI},
			"ui/resourceUri": RevenueResourceURI,
		},
	}, handler)

	s.AddResource(&mcp.Resource{
		URI:         RevenueResourceURI,
		Name:        "revenue-dashboard",
		Title:       "Revenue dashboard",
		Description: "Interactive bar chart of a quarter's monthly revenue (MCP App).",
		MIMEType:    AppMIMEType,
		Meta:        mcp.Meta{"ui": map[string]any{"prefersBorder": true}},
	}, read)
	return s
}

// showRevenue handles show_revenue_dashboard. Bad arguments yield an isError
// result that says how to fix them, never a protocol error.
func showRevenue(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	quarter, region, err := revenueArgs(req.Params.Arguments)
	var rev Revenue
	if err == nil {
		rev, err = RevenueFor(quarter, region)
	}
	if err != nil {
		return &mcp.CallToolResult{
			IsError: true,
			Content: []mcp.Content{&mcp.TextContent{Text: "Cannot show the revenue dashboard: " + err.Error() + "."}},
		}, nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: rev.Summary()}},
		StructuredContent: rev,
	}, nil
}

func revenueArgs(raw json.RawMessage) (quarter, region string, err error) {
	var args map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", "", errors.New("the arguments must be a JSON object such as {\"quarter\": \"Q3\"}")
		}
	}
	str := func(name, example string) (string, error) {
		v, ok := args[name]
		if !ok || string(v) == "null" {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", fmt.Errorf("%s must be a string such as %q", name, example)
		}
		return s, nil
	}
	if quarter, err = str("quarter", "Q3"); err != nil {
		return "", "", err
	}
	if region, err = str("region", "EMEA"); err != nil {
		return "", "", err
	}
	return quarter, region, nil
}

// ServeRevenue runs the revenue demo as one MCP session of newline-delimited
// JSON-RPC over in and out, until ctx ends or the client disconnects; both
// are a normal end and return nil. It never closes in or out. It fails when
// the session ends for another reason. The server reports the main module's
// version from the build information, or "dev".
func ServeRevenue(ctx context.Context, in io.Reader, out io.Writer) error {
	return ServeRevenueVariant(ctx, in, out, "")
}

// ServeRevenueVariant is [ServeRevenue] for a variant of the demo (see
// [Variants]; "" is the normal demo). It fails at once for an unknown
// variant.
func ServeRevenueVariant(ctx context.Context, in io.Reader, out io.Writer, variant string) error {
	srv, err := NewRevenueServerVariant(buildVersion(), variant)
	if err != nil {
		return err
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err = srv.Run(ctx, t)
	if err == nil || ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return fmt.Errorf("demo: revenue session: %w", err)
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
