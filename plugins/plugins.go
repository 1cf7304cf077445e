package plugins

import (
	"encoding/json"
	"fmt"
	"github.com/mcphost/mcphost/appdisplay"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stages, and the export each one calls.
const (
	StageResult  = "result"
	StageDisplay = "display"

	ExportResult  = "on_result"
	ExportDisplay = "on_display"
)

// On-error policies.
const (
	OnErrorFail = "fail"
	OnErrorSkip = "skip"
)

// Defaults and limits. The defaults apply to zero values in a [Spec].
const (
	DefaultTimeout     = 250 * time.Millisecond
	DefaultMemoryLimit = 64 << 20
	DefaultPoolSize    = 4

	// MaxIOBytes caps a result-stage plugin's input and its output,
	// checked before the call and before decoding, and the re-encoded
	// value the host keeps.
	MaxIOBytes = 2 << 20
	// MaxHTMLBytes caps the html of a display record a plugin returns: the
	// largest App a server may serve (app_resource_max_bytes' own cap), so
	// that a display plugin can pass on every App the host renders.
	MaxHTMLBytes = 16 << 20
	// MaxDisplayIOBytes caps a display-stage plugin's input and output in
	// the same way: a result and a display record, whose html is encoded
	// without HTML escapes (a quote or backslash still takes two bytes).
	MaxDisplayIOBytes = MaxIOBytes + 2*MaxHTMLBytes
	// MaxPoolSize caps Spec.PoolSize.
	MaxPoolSize = 64
	// RecycleAfter is the number of calls after which an instance is
	// replaced, for guests that never yield and so never give memory back.
	RecycleAfter = 256
	// MaxWasmBytes caps the size of a .wasm file.
	MaxWasmBytes = 64 << 20

	pageSize = 64 << 10
)

// Spec is one `plugin "NAME"` block as the config loader read it.
type Spec struct {
	Name string
	// Path is the absolute path of the .wasm file.
	Path string
	// Stages lists StageResult and/or StageDisplay.
	Stages []string
	// Servers and Tools are glob patterns on server and tool names, with
	// path.Match syntax except that '/' is an ordinary character ("*" matches
	// everything). Empty means every name.
	Servers []string
	Tools   []string
	// Config is the Extism config map the plugin reads with its PDK (the
	// loader JSON-encodes non-string values).
	Config map[string]string
	// Timeout bounds one call, waiting for an instance included;
	// <= 0 means DefaultTimeout. It is rounded up to whole milliseconds.
	Timeout time.Duration
	// MemoryLimit bounds each instance's linear memory in bytes, rounded
	// down to 64 KiB pages; 0 means DefaultMemoryLimit.
	MemoryLimit uint64
	// PoolSize is the number of instances; 0 means DefaultPoolSize, at most
	// MaxPoolSize.
	PoolSize int
	// OnError is OnErrorFail (also when "") or OnErrorSkip.
	OnError string
}

// Options configure a [Runtime].
type Options struct {
	// CacheDir holds the on-disk compilation cache; it is created with mode
	// 0700 and must not be writable by group or others, since it holds native
	// code the daemon runs. "" keeps the cache in memory only.
	CacheDir string
	// Logger receives load and pool events and the plugins' own log lines
	// (rate-limited). nil discards.
	Logger *slog.Logger
	// ValidSource is the sandbox's CSP source validator; every CSP source a
	// display plugin returns must pass it. nil rejects every source.
	ValidSource func(string) error
}

// LoadError is a problem with one Spec found by [Runtime.Load].
type LoadError struct {
	// Plugin is the index of the Spec in the slice given to Load, or -1 for
	// a problem of no particular spec (the runtime is closed, the Extism
	// kernel does not compile).
	Plugin int
	// Name is the Spec's name.
	Name string
	// Field names the attribute to point at: "path" (unreadable, corrupt or
	// failing module, missing export, warm-up failure), "stages", "servers",
	// "tools", "memory_limit" (below what the module declares), "pool_size",
	// "on_error" or "name" (duplicate).
	Field string
	// BadModule reports a problem with the module itself, on Field "path":
	// it cannot be read, compiled or instantiated, or does not export the
	// function of one of its stages. A failing warm-up call is not one.
	BadModule bool
	Err       error
}

func (e *LoadError) Error() string {
	return fmt.Sprintf("plugins: load %q: %s: %v", e.Name, e.Field, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }

// Error is the failure of one plugin call: a plugin error, a trap, a
// timeout, an unavailable instance or an invalid output.
type Error struct {
	Plugin string
	Stage  string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("plugins: %q (%s): %v", e.Plugin, e.Stage, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Principal is the caller a plugin sees.
type Principal struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
}

// Outcome records one plugin run for the transcript.
type Outcome struct {
	Plugin     string  `json:"plugin"`
	Stage      string  `json:"stage"`
	DurationMs float64 `json:"durationMs"`
	// Changed reports that the plugin returned a value that differs from
	// its input.
	Changed bool `json:"changed"`
	// Error is the failure, if any.
	Error string `json:"error,omitempty"`
	// Skipped reports that the plugin failed and on_error = "skip" passed
	// its input on unchanged.
	Skipped bool `json:"skipped,omitempty"`
}

// ResultInput is what [Set.RunResult] works on.
type ResultInput struct {
	Server, Tool string
	// Arguments are the call's arguments as JSON; empty means {}.
	Arguments json.RawMessage
	Principal Principal
	Result    *mcp.CallToolResult
	// ValidateStructured checks structuredContent against the tool's output
	// schema; nil when the tool has none.
	ValidateStructured func(any) error
}

// CSP is a display record's CSP sources (the type every stage shares).
type CSP = appdisplay.CSP

// Display is the part of an App's display record that display plugins see
// and may change.
type Display struct {
	Type         string         `json:"type"`
	ResourceURI  string         `json:"resourceUri"`
	HTML         string         `json:"html"`
	CSP          *CSP           `json:"csp,omitempty"`
	Permissions  map[string]any `json:"permissions,omitempty"`
	FallbackText string         `json:"fallbackText"`
}

// DisplayInput is what [Set.RunDisplay] works on. Result is the final
// model-visible result, read-only.
type DisplayInput struct {
	Server, Tool string
	Arguments    json.RawMessage
	Principal    Principal
	Result       *mcp.CallToolResult
	Display      Display
}
