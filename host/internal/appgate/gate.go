package appgate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/generation"
	"github.com/mcphost/mcphost/host/internal/identity"
	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/policies"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kinds of App requests (the App bridge methods they come from).
const (
	ToolCall = "tools/call"   // an App calls a tool of its own server
	OpenLink = "ui/open-link" // an App asks the WebShell to open a link
	Message  = "ui/message"   // an App adds a message to the transcript
	// appDisplayMode: an App asks to leave the inline frame (Detail is
	// "fullscreen" or "pip").
	DisplayMode = "ui/request-display-mode"
	// appToolUse: the user calls a tool the App registered (Detail is its
	// name); the call goes from the WebShell to the App.
	ToolUse = "app-tools/call"
	// appResourceRead: an App reads a resource of its own server (URL is
	// the resource URI).
	ResourceRead = "resources/read"
	// appDownload: an App offers a file to save (Detail is the sanitised
	// file name; URL the resource_link's URI when the file is fetched
	// through the server).
	Download = "ui/download-file"
	// appModelContext: an App gives context for the model
	// (ui/update-model-context).
	ModelContext = "ui/update-model-context"
)

// Request is one request an MCP App made through the WebShell, as the App
// gate sees it. The App never talks to the API itself: the WebShell, holding
// the principal's token, makes the request on its behalf and names the App
// by its entry.
type Request struct {
	// Kind is appToolCall, appOpenLink or AppMessage.
	Kind string
	// SessionID and AppEntryID name the transcript entry whose App made the
	// request; ResourceURI is that App's ui:// resource and AppTool the tool
	// whose result it shows.
	SessionID   string
	AppEntryID  string
	ResourceURI string
	AppTool     string
	// Tool and Arguments: the tool an appToolCall calls (on the App's own
	// server) and its arguments.
	Tool      string
	Arguments json.RawMessage
	// URL is the link of an appOpenLink, already checked by apps.CheckLink.
	URL string
	// Text is the text of an AppMessage, already checked by apps.CheckMessage.
	Text string
	// Detail is the display mode of an appDisplayMode, the App tool's name
	// of an appToolUse.
	Detail string

	// display is the App's display record, as the caller read it to check
	// the App (its CSP and permissions are what the app phase sees).
	Display *apps.Display
}

// DeniedError is a request of an MCP App that the App gate refused. The
// API answers it with 403 and the WebShell tells the App "denied by host
// policy".
type DeniedError struct {
	Server string
	Kind   string
	Reason string
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("denied by host policy: %s", e.Reason)
}

// Decide decides whether the MCP App of server may make req on behalf of
// principal p (apps.md §12). It denies by default: each kind of request is
// allowed only while the server's switch is on (app_tool_calls,
// app_open_links, app_messages, all false unless configured), and an App
// tool call also needs a tool whose _meta.ui.visibility includes "app" (an
// absent visibility means both). The reason is one sentence for the user
// and the App; it never quotes App-supplied text.
//
// This is the one place App-initiated requests are decided. After the
// switches (a switch that is off is never overridden by a policy), CEL
// policies decide with origin = "app": an appToolCall runs the call phase in
// Call like any call, and appOpenLink and AppMessage run the app phase here
// (appPolicy). Callers have
// already checked that req.AppEntryID names an App of server in
// req.SessionID, owned by p, and that the tool exists.
func Decide(ctx context.Context, g *generation.Gen, p identity.Principal, server string, req Request, audit func([]store.Audit)) (allowed bool, reason string) {
	c, err := g.Conn(server)
	if err != nil {
		return false, fmt.Sprintf("server %q is not configured", server)
	}
	if c.Cfg.Apps == config.AppsOff {
		return false, fmt.Sprintf("MCP Apps are off for server %q (apps = %q)", server, config.AppsOff)
	}
	switch req.Kind {
	case ToolCall:
		if !c.Cfg.AppToolCalls {
			return false, fmt.Sprintf("the Apps of server %q may not call tools (app_tool_calls is off)", server)
		}
		_, cat, err := c.Current()
		if err != nil {
			return false, fmt.Sprintf("server %q is not ready", server)
		}
		tool, ok := cat.ToolIndex[req.Tool]
		if !ok {
			return false, fmt.Sprintf("server %q has no such tool", server)
		}
		if _, app := apps.ToolVisibility(tool); !app {
			return false, fmt.Sprintf("tool %q of server %q is not visible to Apps (_meta.ui.visibility)", req.Tool, server)
		}
	case OpenLink:
		if !c.Cfg.AppOpenLinks {
			return false, fmt.Sprintf("the Apps of server %q may not open links (app_open_links is off)", server)
		}
	case Message:
		if !c.Cfg.AppMessages {
			return false, fmt.Sprintf("the Apps of server %q may not add messages (app_messages is off)", server)
		}
	case DisplayMode:
		if !c.Cfg.AppDisplayModes {
			return false, fmt.Sprintf("the Apps of server %q may not leave the inline frame (app_display_modes is off)", server)
		}
	case ToolUse:
		if !c.Cfg.AppTools {
			return false, fmt.Sprintf("the Apps of server %q may not offer tools (app_tools is off)", server)
		}
	case ModelContext:
		if !c.Cfg.AppModelContext {
			return false, fmt.Sprintf("the Apps of server %q may not give context for the model (app_model_context is off)", server)
		}
	case Download:
		if !c.Cfg.AppDownloads {
			return false, fmt.Sprintf("the Apps of server %q may not offer downloads (app_downloads is off)", server)
		}
	case ResourceRead:
		if !c.Cfg.AppResources {
			return false, fmt.Sprintf("the Apps of server %q may not read its resources (app_resources is off)", server)
		}
	default:
		return false, "unknown App request"
	}
	if req.Kind == ToolCall {
		// The call itself runs the call phase with origin "app" (Call).
		return true, ""
	}
	return appPolicy(ctx, g, p, c, req, audit)
}

// appPolicy runs the app phase of the policies, with origin "app", on a
// link or message request of an App: the rules see the App (its resource,
// CSP and permissions, from its display record) and the tool whose result
// it shows.
func appPolicy(ctx context.Context, g *generation.Gen, p identity.Principal, c *upstream.Conn, req Request, audit func([]store.Audit)) (bool, string) {
	if g.Policies == nil {
		return true, ""
	}
	var tool *mcp.Tool
	if _, cat, err := c.Current(); err == nil {
		tool = cat.ToolIndex[req.AppTool]
	}
	if tool == nil {
		tool = &mcp.Tool{Name: req.AppTool}
	}
	d := req.Display
	if d == nil {
		d = &apps.Display{ResourceURI: req.ResourceURI}
	}
	pol := pipeline.NewPolicy(g, p, c, tool, identity.OriginApp, nil, nil, &pipeline.Trail{})
	if g.Policies.Uses(policies.PhaseApp, "app") {
		pol.In.App = pipeline.PolicyApp(d)
	}
	dec := pol.Decide(ctx, policies.PhaseApp)
	audit(pol.Audit)
	if dec.Allowed() {
		return true, ""
	}
	if dec.Rule == "" {
		return false, "the default policy refuses App requests"
	}
	return false, fmt.Sprintf("policy %q refused it: %s", dec.Rule, dec.Message)
}

// Capabilities says which App requests a server's switches allow. The
// WebShell advertises only these to the server's Apps (hostCapabilities);
// each request is still decided by the App gate when it is made.
type Capabilities struct {
	ToolCalls bool `json:"toolCalls"` // app_tool_calls
	OpenLinks bool `json:"openLinks"` // app_open_links
	Messages  bool `json:"messages"`  // app_messages
	// DisplayModes: app_display_modes (fullscreen and picture-in-picture).
	DisplayModes bool `json:"displayModes"`
	// Tools: app_tools (App-registered tools offered to the user).
	Tools bool `json:"tools"`
	// Resources: app_resources (resources/read of the server's resources).
	Resources bool `json:"resources"`
	// Downloads: app_downloads (ui/download-file).
	Downloads bool `json:"downloads"`
	// ModelContext: app_model_context (ui/update-model-context).
	ModelContext bool `json:"modelContext"`
}

// Limits on App requests, per App (entry), whatever the gate says.
const (
	// appCallsInFlight bounds the tool calls one App runs at once.
	appCallsInFlight = 4
	// appBurst and appRefill bound ui/message and ui/open-link requests of
	// one App: a burst of appBurst, then one per appRefill.
	appBurst  = 10
	appRefill = 2 * time.Second
	// appLimitEntries bounds the limiter's memory; idle Apps are forgotten.
	appLimitEntries = 4096
)

// LimitError is an App request over its App's limit; the API answers
// 429.
type LimitError struct{ Reason string }

func (e *LimitError) Error() string { return "too many App requests: " + e.Reason }

// Limits keeps the per-App limits: running tool calls and a token bucket
// for messages and link requests, keyed by principal and App entry.
type Limits struct {
	mu      sync.Mutex
	running map[string]int
	buckets map[string]*bucket
	now     func() time.Time // time.Now; tests substitute a clock
}

type bucket struct {
	tokens float64
	at     time.Time
}

// AcquireCall takes a running-call slot of an App; release gives it back.
func (l *Limits) AcquireCall(key string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running == nil {
		l.running = map[string]int{}
	}
	if l.running[key] >= appCallsInFlight {
		return nil, &LimitError{Reason: fmt.Sprintf("an App may run at most %d tool calls at once", appCallsInFlight)}
	}
	l.running[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			if l.running[key]--; l.running[key] <= 0 {
				delete(l.running, key)
			}
		})
	}, nil
}

// Take takes one token of an App's bucket.
func (l *Limits) Take(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	if l.buckets == nil {
		l.buckets = map[string]*bucket{}
	}
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= appLimitEntries {
			l.forgetFull(now)
		}
		b = &bucket{tokens: appBurst, at: now}
		l.buckets[key] = b
	}
	b.tokens = min(appBurst, b.tokens+float64(now.Sub(b.at))/float64(appRefill))
	b.at = now
	if b.tokens < 1 {
		return &LimitError{Reason: fmt.Sprintf("an App may send %d messages or link requests at once, then one every %s", appBurst, appRefill)}
	}
	b.tokens--
	return nil
}

// forgetFull drops buckets that have refilled completely (they would start
// full anyway), and every bucket if that frees nothing.
func (l *Limits) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(appRefill) >= appBurst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= appLimitEntries {
		clear(l.buckets)
	}
}
