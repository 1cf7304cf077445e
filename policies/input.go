package policies

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/appdisplay"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Principal is the authenticated caller. A nil Groups acts as an empty list.
type Principal struct {
	Name   string   `cel:"name"`
	Groups []string `cel:"groups"`
}

// Client is the MCP client a gateway call came from, as it names itself in
// its clientInfo; empty for calls through the other doors.
type Client struct {
	Name    string `cel:"name"`
	Version string `cel:"version"`
}

// Annotations are a tool's MCP behaviour hints with the spec's defaults
// applied to absent ones (see [AnnotationsFromMCP]).
type Annotations struct {
	ReadOnlyHint    bool `cel:"readOnlyHint"`
	DestructiveHint bool `cel:"destructiveHint"`
	IdempotentHint  bool `cel:"idempotentHint"`
	OpenWorldHint   bool `cel:"openWorldHint"`
}

// Tool is the tool a decision is about.
type Tool struct {
	Name        string      `cel:"name"`
	Title       string      `cel:"title"`
	Annotations Annotations `cel:"annotations"`
}

// Result is what the result phase sees of a CallToolResult (see
// [ResultFromMCP]). Text is every text the client gets as text: text
// content and the text of embedded resources. Structured is the decoded
// structuredContent or nil, and StructuredText the same encoded as JSON
// ("" when there is none), so that a rule can search it as a string.
type Result struct {
	IsError        bool   `cel:"isError"`
	Text           string `cel:"text"`
	Structured     any    `cel:"structured"`
	StructuredText string `cel:"structuredText"`
}

// CSP is an App's declared content security sources (the type every stage
// shares; CEL reads its cel names).
type CSP = appdisplay.CSP

// App is what the app phase sees of an MCP App about to render.
// Permissions are names such as "camera".
type App struct {
	ResourceURI string   `cel:"resourceUri"`
	CSP         CSP      `cel:"csp"`
	Permissions []string `cel:"permissions"`
	HTMLSize    int      `cel:"htmlSize"`
}

// Resource is the resource an operation is about: the one read,
// subscribed to or listed, or the resource template a completion is for
// (then URI is the template).
type Resource struct {
	URI      string `cel:"uri"`
	Name     string `cel:"name"`
	MIMEType string `cel:"mimeType"`
}

// Prompt is the prompt an operation is about: the one got or listed, or
// the one a completion is for. Its arguments are the input's args.
type Prompt struct {
	Name  string `cel:"name"`
	Title string `cel:"title"`
}

// Input holds the facts of one decision. Build it once per call and reuse it
// for every phase of that call: the decoded arguments are cached in it. An
// Input must not be passed to concurrent [Set.Decide] calls.
type Input struct {
	Server    string // upstream server name
	Era       string // "modern" or "legacy"
	Origin    string // OriginUser, OriginApp, OriginAPI or OriginGateway
	Principal Principal
	Client    Client // OriginGateway only
	Tool      Tool   // the zero Tool for an operation on a resource or prompt

	// Op is the operation (OpCallTool, OpReadRes, …; see [Ops]); empty
	// means the phase's default, a tool call or a tool listed.
	Op string
	// Resource is the resource a resource operation is about; nil reads
	// as a resource with every field empty.
	Resource *Resource
	// Prompt is the prompt a prompt operation (or a completion of a
	// prompt's argument) is about; nil reads as an empty prompt.
	Prompt *Prompt

	// Args is the decoded arguments object (map[string]any as encoding/json
	// decodes it, numbers as float64) when the caller already has it.
	Args any
	// RawArgs is used when Args is nil: it is decoded at most once per
	// Input, and only when a rule that reads args is evaluated. Empty or
	// JSON null means no arguments (an empty object).
	RawArgs json.RawMessage

	Result *Result // result phase; nil makes any rule reading result fail (deny)
	App    *App    // app phase; nil makes any rule reading app fail (deny)

	args argsCache
}

// AnnotationsFromMCP applies the MCP defaults for absent hints: destructive
// and open-world default to true, read-only and idempotent to false. A nil
// a gives the defaults. Note the spec's caveat: destructiveHint means
// something only when readOnlyHint is false, so a read-only tool without an
// explicit destructiveHint reads as destructive.
func AnnotationsFromMCP(a *mcp.ToolAnnotations) Annotations {
	out := Annotations{DestructiveHint: true, OpenWorldHint: true}
	if a == nil {
		return out
	}
	out.ReadOnlyHint = a.ReadOnlyHint
	out.IdempotentHint = a.IdempotentHint
	if a.DestructiveHint != nil {
		out.DestructiveHint = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		out.OpenWorldHint = *a.OpenWorldHint
	}
	return out
}

// ToolFromMCP converts a listed tool. Title is the tool's title, else its
// annotations' title, else empty. A nil t gives the zero Tool with default
// annotations.
func ToolFromMCP(t *mcp.Tool) Tool {
	if t == nil {
		return Tool{Annotations: AnnotationsFromMCP(nil)}
	}
	out := Tool{Name: t.Name, Title: t.Title, Annotations: AnnotationsFromMCP(t.Annotations)}
	if out.Title == "" && t.Annotations != nil {
		out.Title = t.Annotations.Title
	}
	return out
}

// ResultFromMCP converts a tool result. Text is, in content order, the
// text of every text content item and of every embedded text resource
// (type "resource" with text contents), joined with "\n": a secret a
// server embeds as a resource reaches the client as text too
// (research/redteam.md F5). Images, audio, blob resources and resource
// links carry no text. Structured is structuredContent as given (decoded
// JSON on the client side) and StructuredText its JSON encoding. A nil r
// gives nil.
func ResultFromMCP(r *mcp.CallToolResult) *Result {
	if r == nil {
		return nil
	}
	var texts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				texts = append(texts, c.Resource.Text)
			}
		}
	}
	return &Result{IsError: r.IsError, Text: strings.Join(texts, "\n"),
		Structured: r.StructuredContent, StructuredText: structuredText(r.StructuredContent)}
}

// structuredText encodes structured content as compact JSON, with '<', '>'
// and '&' as they are and map keys sorted, as a rule searches it; nil
// gives "". A value that does not encode (never one decoded from JSON)
// gives its Go syntax, so that a rule still sees its strings.
func structuredText(v any) string {
	if v == nil {
		return ""
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
