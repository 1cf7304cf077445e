package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/appdisplay"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the id of the MCP Apps extension, advertised under
// capabilities.extensions by clients and servers (§2).
const Extension = "io.modelcontextprotocol/ui"

// MIMEType is the only MIME type an App resource may have; it is compared
// byte for byte (§5.4).
const MIMEType = "text/html;profile=mcp-app"

// DefaultMaxBytes is the default limit on an App's HTML in bytes (1 MiB, §5.7).
// [Options.MaxBytes] is clamped to 1 byte–16 MiB ([MaxMaxBytes]).
const DefaultMaxBytes = 1 << 20

// MaxMaxBytes is the largest limit on an App's HTML (§5.7 clamp): 16 MiB,
// room for the official examples that bundle a library (the PDF App,
// PDF.js inside, is 4.3 MB). The host's config refuses more.
const MaxMaxBytes = 16 << 20

// Modes of the per-server `apps` setting (§2). ModeAuto (the default) keeps a
// ui:// link when the server advertises the extension or when the resource
// reads back with exactly [MIMEType]; ModeAdvertised keeps links only from
// servers that advertise the extension; ModeOff never renders Apps.
const ModeAuto, ModeAdvertised, ModeOff = "auto", "advertised", "off"

const (
	displayType = "mcp_app"
	uiScheme    = "ui://"

	maxContentItems   = 16 // §5.3
	defaultTimeout    = 10 * time.Second
	minTimeout        = 100 * time.Millisecond
	maxTimeout        = 120 * time.Second
	compactMaxTool    = 32 << 10 // §7: toolResult kept when its JSON is ≤ 32 KiB
	maxDropped        = 32       // bound on Display.Dropped entries
	maxSourcesPerList = 32       // the sandbox route's cap on one CSP list
	maxQuoted         = 120      // bound on hostile strings quoted into Dropped
)

// Values of [Display.AdmittedBy].
const (
	admittedAdvertised = "advertised"
	admittedMIME       = "mime"
)

// Advertise adds the extension with {"mimeTypes": [MIMEType]} to caps
// (caps.AddExtension). A nil caps is left alone.
func Advertise(caps *mcp.ClientCapabilities) {
	if caps == nil {
		return
	}
	caps.AddExtension(Extension, map[string]any{"mimeTypes": []any{MIMEType}})
}

// ServerAdvertises reports whether the server's capabilities list the
// extension. When the extension's settings carry a mimeTypes list, it must
// contain [MIMEType] exactly; settings without mimeTypes count as advertising.
// A mimeTypes value that is not a list of strings does not count.
func ServerAdvertises(caps *mcp.ServerCapabilities) bool {
	if caps == nil || caps.Extensions == nil {
		return false
	}
	settings, ok := caps.Extensions[Extension]
	if !ok {
		return false
	}
	obj, ok := asObject(settings)
	if !ok {
		return true // e.g. {} or true: no mimeTypes to check
	}
	raw, ok := obj["mimeTypes"]
	if !ok || raw == nil {
		return true
	}
	list, ok := asArray(raw)
	if !ok {
		return false
	}
	for _, v := range list {
		if s, ok := v.(string); ok && s == MIMEType {
			return true
		}
	}
	return false
}

// Link is a tool's UI link (§3): the ui:// resource URI and the tool's
// visibility. ModelVisible false means the tool must never be offered to or
// called by a model; AppVisible false means no App may call it.
type Link struct {
	ResourceURI  string
	ModelVisible bool
	AppVisible   bool
}

// ToolLink reads tool._meta.ui.resourceUri, else the deprecated
// tool._meta["ui/resourceUri"] (read only when the nested key is absent);
// only strings starting with exactly "ui://" count. Visibility comes from
// tool._meta.ui.visibility, a list of "model" and/or "app": absent (or not a
// list) means both, unknown values are ignored, so [] means neither.
// When ok is false the tool is an ordinary tool and the Link is the zero value.
func ToolLink(tool *mcp.Tool) (Link, bool) {
	if tool == nil || tool.Meta == nil {
		return Link{}, false
	}
	ui, _ := asObject(tool.Meta["ui"])
	var uriVal any
	if v, ok := ui["resourceUri"]; ok {
		uriVal = v
	} else {
		uriVal = tool.Meta["ui/resourceUri"]
	}
	uri, ok := uriVal.(string)
	if !ok || !strings.HasPrefix(uri, uiScheme) {
		return Link{}, false
	}
	l := Link{ResourceURI: uri, ModelVisible: true, AppVisible: true}
	if vis, ok := asArray(ui["visibility"]); ok {
		l.ModelVisible, l.AppVisible = false, false
		for _, v := range vis {
			switch v {
			case "model":
				l.ModelVisible = true
			case "app":
				l.AppVisible = true
			}
		}
	}
	return l, true
}

// ResourceReader reads one resource with the caller's context (the host
// passes its session, with cache). Resolve gives it a context carrying the
// read's own deadline.
type ResourceReader interface {
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
}

// CSP holds the App's declared CSP sources (§4), each list already filtered
// through [Options.ValidSource]. Resolve never leaves a list nil, so every
// field serialises as an array; an empty list means no source for that
// directive ('none' for frames and base-uri). It is the type every stage
// shares (package appdisplay).
type CSP = appdisplay.CSP

// Display is the display record of §6, stored with the transcript entry.
//
// On success HTML is the App's HTML and FallbackText the ordinary tool text.
// In the failure form HTML is "", Warning says why (one line naming the URI,
// the server and a fixed reason), and FallbackText is "Warning: " + Warning +
// "\n\n" + the ordinary tool text. CSP, Permissions and PrefersBorder are set
// only when the resource declared them (and only on success).
type Display struct {
	// Type is always "mcp_app".
	Type string `json:"type"`
	// ServerName is the configured name of the App's server.
	ServerName string `json:"serverName"`
	// ResourceURI is the tool's ui:// link.
	ResourceURI string `json:"resourceUri"`
	// HTML is the App's HTML; "" on failure and after compaction.
	HTML string `json:"html"`
	// ToolArguments are the call's arguments as sent (omitted when empty or not valid JSON).
	ToolArguments json.RawMessage `json:"toolArguments,omitempty"`
	// ToolResult is a JSON copy of the CallToolResult as received.
	ToolResult json.RawMessage `json:"toolResult,omitempty"`
	// Tool is the called tool's definition as the server listed it (name,
	// inputSchema, title, description, annotations, _meta, ...), for the
	// App's hostContext.toolInfo.tool, which the official App SDK validates
	// as an MCP Tool. Set by the host (see [ToolDefinition]); cleared by
	// compaction.
	Tool json.RawMessage `json:"tool,omitempty"`
	// FallbackText is always set: the ordinary tool text, with the warning first on failure.
	FallbackText string `json:"fallbackText"`
	// CSP holds the merged, filtered CSP sources when declared.
	CSP *CSP `json:"csp,omitempty"`
	// Permissions records the declared known permissions (camera,
	// microphone, geolocation, clipboardWrite), each as {}; never granted.
	Permissions map[string]any `json:"permissions,omitempty"`
	// UnsafeEval says that the App's frame gets 'unsafe-eval' in its
	// script-src (sandbox.Grants): the operator allowed it for the App's
	// server (app_csp_unsafe_eval). [Resolve] never sets it, whatever the
	// App's _meta says; only the host does, from the server's config, and
	// the WebShell marks such a frame.
	UnsafeEval bool `json:"unsafeEval,omitempty"`
	// PrefersBorder is the declared prefersBorder, when it is a boolean.
	PrefersBorder *bool `json:"prefersBorder,omitempty"`
	// AdmittedBy names the rule that admitted the App: "advertised" (the
	// server advertises the extension) or "mime" (auto mode, exact MIME type).
	AdmittedBy string `json:"admittedBy,omitempty"`
	// Warning says why the App did not render, when it did not.
	Warning string `json:"warning,omitempty"`
	// Dropped lists CSP entries that were dropped, as `field: "quoted
	// source": reason` with the reason the source validator gave (such as
	// "names an address on the private network 10.0.0.0/8, and the App's
	// server is not on that network"), or `field: what is wrong` for an
	// entry that is not a string. Bounded; for the host to log and show.
	Dropped []string `json:"dropped,omitempty"`
}

// Options configure [Resolve] for one server.
type Options struct {
	// Mode is ModeAuto (default when ""), ModeAdvertised or ModeOff; an
	// unknown value is treated as ModeOff.
	Mode string
	// ServerAdvertises is the server's [ServerAdvertises] answer.
	ServerAdvertises bool
	// MaxBytes limits the HTML in bytes; <= 0 means DefaultMaxBytes; clamped to MaxMaxBytes.
	MaxBytes int
	// Timeout is the own deadline of the resources/read (§5.2); <= 0 means
	// 10s; clamped to 100ms–120s.
	Timeout time.Duration
	// ValidSource is the CSP source check (the host passes
	// sandbox.ValidSource and its rule on the networks an App may reach);
	// nil ⇒ every source is dropped. A source it refuses is dropped with
	// the error's text as the reason in Dropped, so the text should say
	// why without quoting the source.
	ValidSource func(string) error
	// ListingMeta is the resource's _meta from resources/list, if the host
	// has it; its "ui" object is merged per §4 (the content item wins per
	// top-level field).
	ListingMeta map[string]any
}

// Resolve runs §5 for a call of a linked tool and returns the display record,
// or nil when no App applies: mode off (or unknown); advertised mode and the
// server does not advertise; a nil or isError result; the caller's ctx done
// before Resolve finishes (no record at all); and, in auto mode for a server
// that does not advertise the extension, any outcome before the resource has
// read back with exactly [MIMEType] (read error, timeout, no matching item,
// wrong MIME, input_required), since only the MIME type proves the link.
//
// An admitted App whose resource fails a check (read error or timeout, no
// item with the exact uri among the first 16, wrong MIME type (exact match,
// no folding), empty, too large, invalid UTF-8, input_required answer) yields
// the failure form (see [Display]). Invalid CSP sources are dropped and listed
// in Dropped, never passed through. result is never modified.
func Resolve(ctx context.Context, r ResourceReader, server string, link Link, args json.RawMessage, result *mcp.CallToolResult, o Options) *Display {
	if result == nil || result.IsError || ctx.Err() != nil {
		return nil
	}
	var admitted string
	switch o.Mode {
	case "", ModeAuto:
		if o.ServerAdvertises {
			admitted = admittedAdvertised
		}
	case ModeAdvertised:
		if !o.ServerAdvertises {
			return nil
		}
		admitted = admittedAdvertised
	default:
		return nil
	}

	text := FallbackText(result)
	d := &Display{
		Type:          displayType,
		ServerName:    server,
		ResourceURI:   link.ResourceURI,
		ToolArguments: cloneJSON(args),
		FallbackText:  text,
		AdmittedBy:    admitted,
	}
	if b, err := json.Marshal(result); err == nil {
		d.ToolResult = b
	}
	fail := func(reason string) *Display {
		if d.AdmittedBy == "" {
			return nil // auto mode, not advertised, MIME never proven
		}
		d.Warning = fmt.Sprintf("MCP App %s of server %s not shown: %s", quote(link.ResourceURI), quote(server), reason)
		d.FallbackText = "Warning: " + d.Warning
		if text != "" {
			d.FallbackText += "\n\n" + text
		}
		return d
	}

	if r == nil {
		return fail("read error")
	}
	res, err, timedOut := read(ctx, r, link.ResourceURI, clampTimeout(o.Timeout))
	if ctx.Err() != nil {
		return nil // caller cancelled: no display record at all
	}
	switch {
	case timedOut:
		return fail("timeout")
	case err != nil:
		return fail("read error")
	case res != nil && (res.NeedsInput() || len(res.InputRequests) > 0):
		return fail("input required")
	}
	var item *mcp.ResourceContents
	if res != nil {
		for i, c := range res.Contents {
			if i == maxContentItems {
				break
			}
			if c != nil && c.URI == link.ResourceURI {
				item = c
				break
			}
		}
	}
	if item == nil {
		return fail("no matching content")
	}
	if item.MIMEType != MIMEType {
		return fail("wrong MIME type")
	}
	if d.AdmittedBy == "" {
		d.AdmittedBy = admittedMIME
	}
	html := item.Text
	if html == "" {
		html = string(item.Blob)
	}
	maxBytes := clampMaxBytes(o.MaxBytes)
	switch {
	case html == "":
		return fail("empty")
	case len(html) > maxBytes:
		return fail(fmt.Sprintf("too large (%d bytes, limit %d)", len(html), maxBytes))
	case !utf8.ValidString(html):
		return fail("invalid UTF-8")
	}
	d.HTML = html
	applyMeta(d, item.Meta, o.ListingMeta, o.ValidSource)
	return d
}

// read performs the resources/read under its own deadline. It returns when
// the reader returns or the deadline passes, whichever is first, so a reader
// that ignores its context cannot hold up the call.
func read(ctx context.Context, r ResourceReader, uri string, timeout time.Duration) (res *mcp.ReadResourceResult, err error, timedOut bool) {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type answer struct {
		res *mcp.ReadResourceResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- answer{err: fmt.Errorf("resource reader panicked")}
			}
		}()
		res, err := r.ReadResource(rctx, uri)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		if a.err != nil && rctx.Err() != nil && ctx.Err() == nil {
			return nil, a.err, true
		}
		return a.res, a.err, false
	case <-rctx.Done():
		return nil, rctx.Err(), ctx.Err() == nil
	}
}

// FallbackText is all text content of a result joined with "\n".
func FallbackText(result *mcp.CallToolResult) string {
	if result == nil {
		return ""
	}
	var parts []string
	for _, c := range result.Content {
		if t, ok := c.(*mcp.TextContent); ok && t != nil {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolDefinition returns the JSON of tool for [Display.Tool]: the tool as
// listed, with an inputSchema of {"type": "object"} when the server gave
// none (MCP requires one, and the App SDK refuses a tool without it). It
// returns nil when tool is nil or does not encode.
func ToolDefinition(tool *mcp.Tool) json.RawMessage {
	if tool == nil {
		return nil
	}
	t := *tool
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{"type": "object"}
	}
	b, err := json.Marshal(&t)
	if err != nil {
		return nil
	}
	return b
}

// Compact returns a copy that keeps type and fallbackText (and resourceUri,
// serverName) and empties html (§7); toolResult is kept only when its JSON is
// at most 32 KiB. Every other field is cleared, so a compacted record mounts
// no App.
func Compact(d Display) Display {
	c := Display{
		Type:         d.Type,
		ServerName:   d.ServerName,
		ResourceURI:  d.ResourceURI,
		FallbackText: d.FallbackText,
	}
	if len(d.ToolResult) <= compactMaxTool {
		c.ToolResult = cloneJSON(d.ToolResult)
	}
	return c
}

// Validate re-checks a (possibly plugin-changed) record: type "mcp_app",
// html size ≤ maxBytes (<= 0 means DefaultMaxBytes; clamped to MaxMaxBytes), valid
// UTF-8, toolArguments and toolResult valid JSON when set, and every CSP
// source accepted by validSource (nil rejects every source). The error says
// what is wrong and never contains the HTML or a source verbatim beyond a
// bounded quote.
func Validate(d Display, maxBytes int, validSource func(string) error) error {
	var errs []error
	if d.Type != displayType {
		errs = append(errs, fmt.Errorf("type is %s, want %q", quote(d.Type), displayType))
	}
	if limit := clampMaxBytes(maxBytes); len(d.HTML) > limit {
		errs = append(errs, fmt.Errorf("html too large (%d bytes, limit %d)", len(d.HTML), limit))
	} else if !utf8.ValidString(d.HTML) {
		errs = append(errs, errors.New("html is not valid UTF-8"))
	}
	if len(d.ToolArguments) > 0 && !json.Valid(d.ToolArguments) {
		errs = append(errs, errors.New("toolArguments is not valid JSON"))
	}
	if len(d.ToolResult) > 0 && !json.Valid(d.ToolResult) {
		errs = append(errs, errors.New("toolResult is not valid JSON"))
	}
	if len(d.Tool) > 0 {
		var obj map[string]any
		if json.Unmarshal(d.Tool, &obj) != nil {
			errs = append(errs, errors.New("tool is not a JSON object"))
		} else if name, _ := obj["name"].(string); name == "" {
			errs = append(errs, errors.New("tool has no name"))
		}
	}
	if d.CSP != nil {
		for _, f := range cspFields(d.CSP) {
			for _, s := range *f.list {
				if !sourceOK(s, validSource) {
					errs = append(errs, fmt.Errorf("csp.%s: invalid source %s", f.name, quote(s)))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// applyMeta merges _meta.ui of the content item and of the listing per
// top-level field (§4) and records csp, permissions and prefersBorder.
func applyMeta(d *Display, itemMeta, listingMeta map[string]any, valid func(string) error) {
	itemUI, _ := asObject(itemMeta["ui"])
	listUI, _ := asObject(listingMeta["ui"])
	field := func(name string) (any, bool) {
		if v, ok := itemUI[name]; ok && v != nil {
			return v, true
		}
		v, ok := listUI[name]
		return v, ok && v != nil
	}
	if v, ok := field("csp"); ok {
		d.CSP = &CSP{}
		obj, isObj := asObject(v)
		if !isObj {
			d.drop("csp: not an object")
		}
		for _, f := range cspFields(d.CSP) {
			*f.list = []string{}
			raw, ok := obj[f.name]
			if !ok || raw == nil {
				continue
			}
			list, ok := asArray(raw)
			if !ok {
				d.drop(f.name + ": not a list")
				continue
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					d.drop(fmt.Sprintf("%s: non-string %T", f.name, e))
					continue
				}
				switch err := checkSource(s, valid); {
				case err != nil:
					d.drop(f.name + ": " + quote(s) + ": " + reason(err))
				case len(*f.list) == maxSourcesPerList:
					// The sandbox route refuses longer lists; the App
					// gets the first ones.
					d.drop(f.name + ": more than 32 sources: " + quote(s))
				default:
					*f.list = append(*f.list, s)
				}
			}
		}
	}
	if v, ok := field("permissions"); ok {
		if obj, ok := asObject(v); ok {
			for _, k := range []string{"camera", "microphone", "geolocation", "clipboardWrite"} {
				if _, ok := asObject(obj[k]); ok {
					if d.Permissions == nil {
						d.Permissions = map[string]any{}
					}
					d.Permissions[k] = map[string]any{}
				}
			}
		}
	}
	if v, ok := field("prefersBorder"); ok {
		if b, ok := v.(bool); ok {
			d.PrefersBorder = &b
		}
	}
}

func (d *Display) drop(entry string) {
	switch {
	case len(d.Dropped) < maxDropped:
		d.Dropped = append(d.Dropped, entry)
	case len(d.Dropped) == maxDropped:
		d.Dropped = append(d.Dropped, "… more dropped")
	}
}

type cspField struct {
	name string
	list *[]string
}

func cspFields(c *CSP) []cspField {
	return []cspField{
		{"connectDomains", &c.ConnectDomains},
		{"resourceDomains", &c.ResourceDomains},
		{"frameDomains", &c.FrameDomains},
		{"baseUriDomains", &c.BaseURIDomains},
	}
}

func sourceOK(s string, valid func(string) error) bool {
	return checkSource(s, valid) == nil
}

// errNoValidator is why every source is dropped when there is no validator.
var errNoValidator = errors.New("no source validator")

// checkSource runs valid on s; a nil valid refuses everything.
func checkSource(s string, valid func(string) error) error {
	if valid == nil {
		return errNoValidator
	}
	return valid(s)
}

// reason is the text of a validator's error for a Dropped entry: one line
// of printable text, bounded like a quoted source.
func reason(err error) string {
	r := strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f || c == utf8.RuneError {
			return ' '
		}
		return c
	}, err.Error())
	if len(r) > maxQuoted {
		r = strings.ToValidUTF8(r[:maxQuoted], "") + "…"
	}
	return r
}

// asObject returns v as a JSON object. Values decoded from JSON are
// map[string]any already; other Go values (mcp.Meta, structs set by an
// in-process server) go through a JSON round trip.
func asObject(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case nil:
		return nil, false
	case map[string]any:
		return m, true
	case mcp.Meta:
		return m, true
	}
	var m map[string]any
	if !roundTrip(v, &m) || m == nil {
		return nil, false
	}
	return m, true
}

// asArray returns v as a JSON array, like asObject.
func asArray(v any) ([]any, bool) {
	switch a := v.(type) {
	case nil:
		return nil, false
	case []any:
		return a, true
	case []string:
		out := make([]any, len(a))
		for i, s := range a {
			out[i] = s
		}
		return out, true
	}
	var a []any
	if !roundTrip(v, &a) || a == nil {
		return nil, false
	}
	return a, true
}

func roundTrip(v, out any) bool {
	b, err := json.Marshal(v)
	return err == nil && json.Unmarshal(b, out) == nil
}

func cloneJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// quote quotes a possibly hostile string for a one-line message, bounded.
func quote(s string) string {
	if len(s) > maxQuoted {
		s = strings.ToValidUTF8(s[:maxQuoted], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

func clampTimeout(t time.Duration) time.Duration {
	switch {
	case t <= 0:
		return defaultTimeout
	case t < minTimeout:
		return minTimeout
	case t > maxTimeout:
		return maxTimeout
	}
	return t
}

func clampMaxBytes(n int) int {
	switch {
	case n <= 0:
		return DefaultMaxBytes
	case n > MaxMaxBytes:
		return MaxMaxBytes
	}
	return n
}
