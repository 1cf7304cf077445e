package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/apps"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/appgate"
	"github.com/mcphost/mcphost/host/internal/upstream"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// appRef is the App that made a request: its entry and display record.
type appRef struct {
	entryID     string
	server      string
	tool        string
	resourceURI string
	display     *apps.Display // the entry's display record, decoded once
}

// errNotAnApp is the answer for an appEntryId that names no App of the
// session: missing, another session's or principal's, or an entry without an
// App display record. The cases are not told apart.
var errNotAnApp = &RequestError{Reason: "appEntryId does not name an MCP App entry of this session"}

// appOf returns the App of entry appEntryID, which must be principal's, in
// sessionID, and hold an mcp_app display record (compacted or not: a
// mounted App keeps its rights when its record is compacted under it).
func (h *Host) appOf(ctx context.Context, p Principal, sessionID, appEntryID string) (appRef, error) {
	if appEntryID == "" {
		return appRef{}, &RequestError{Reason: `origin "app" needs the "appEntryId" of the App's entry`}
	}
	e, err := h.store.Entry(ctx, p.Name, appEntryID)
	if errors.Is(err, store.ErrNotFound) || err == nil && e.SessionID != sessionID {
		return appRef{}, errNotAnApp
	}
	if err != nil {
		return appRef{}, err
	}
	d := &apps.Display{}
	if json.Unmarshal(e.Display, d) != nil || d.Type != "mcp_app" || d.ServerName != e.Server {
		return appRef{}, errNotAnApp
	}
	return appRef{entryID: e.ID, server: e.Server, tool: e.Tool, resourceURI: d.ResourceURI, display: d}, nil
}

// appGate runs the App gate (appgate.Decide) on req of the App of server
// for p, under the generation in force; the app phase's decisions go to
// the audit log.
func (h *Host) appGate(ctx context.Context, p Principal, server string, req appgate.Request) (bool, string) {
	return appgate.Decide(ctx, h.gen(), p, server, req, func(audit []store.Audit) {
		h.appendAudit(ctx, p.Name, req.SessionID, audit)
	})
}

// appKey keys the per-App limits.
func appKey(p Principal, ref appRef) string { return p.Name + "\x00" + ref.entryID }

// callOrigin checks the origin of a session call and returns it with a
// function to call when the call is over. "user" and "api" (the default)
// need nothing more. "app" needs req.AppEntryID naming an App of the same
// session on req.Server (an App calls only its own server's tools), the App
// gate's approval, and a free slot of the App's concurrent calls. An
// appEntryId with another origin is refused.
func (h *Host) callOrigin(ctx context.Context, req SessionCall) (origin string, done func(), err error) {
	switch req.Origin {
	case OriginUser, OriginAPI, "":
		if req.AppEntryID != "" {
			return "", nil, &RequestError{Reason: `"appEntryId" goes only with origin "app"`}
		}
		if req.Origin == OriginUser {
			return OriginUser, func() {}, nil
		}
		return OriginAPI, func() {}, nil
	case OriginGateway:
		if req.AppEntryID != "" {
			return "", nil, &RequestError{Reason: `"appEntryId" goes only with origin "app"`}
		}
		return OriginGateway, func() {}, nil
	case OriginApp:
	default:
		return "", nil, &RequestError{Reason: `origin is "user", "api" or "app"`}
	}
	ref, err := h.appOf(ctx, req.Principal, req.SessionID, req.AppEntryID)
	if err != nil {
		return "", nil, err
	}
	if ref.server != req.Server {
		return "", nil, &AppDeniedError{Server: ref.server, Kind: appgate.ToolCall,
			Reason: fmt.Sprintf("an App of server %q may call only that server's tools", ref.server)}
	}
	ar := appgate.Request{Kind: appgate.ToolCall, SessionID: req.SessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool, Tool: req.Tool, Arguments: req.Arguments}
	if ok, reason := h.appGate(ctx, req.Principal, ref.server, ar); !ok {
		return "", nil, &AppDeniedError{Server: ref.server, Kind: appgate.ToolCall, Reason: reason}
	}
	release, err := h.apps.appLimits.AcquireCall(appKey(req.Principal, ref))
	if err != nil {
		return "", nil, err
	}
	return OriginApp, release, nil
}

// appMessageBody is the stored Message of an App message entry.
type appMessageBody struct {
	Content     []textBlock `json:"content"`
	ResourceURI string      `json:"resourceUri"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// AppMessage records a ui/message of the App of entry appEntryID in
// principal's session sessionID (apps.md §12): params is the request's
// params ({role: "user", content: [text blocks]}, see apps.CheckMessage).
// The entry has kind "app_message", origin "app", the App's server and
// appEntryId, and its message holds the text blocks and the App's
// resourceUri; it is never a user message. It is published like any entry.
//
// It fails with ErrNotFound for another principal's or a missing session,
// RequestError for an appEntryId that names no App of the session or a
// malformed message, AppDeniedError when the App gate refuses (app_messages
// is off unless configured), and AppLimitError when the App sends too many.
func (h *Host) AppMessage(ctx context.Context, p Principal, sessionID, appEntryID string, params json.RawMessage) (*store.Entry, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return nil, err
	}
	ref, err := h.appOf(ctx, p, sessionID, appEntryID)
	if err != nil {
		return nil, err
	}
	msg, err := apps.CheckMessage(params)
	if err != nil {
		return nil, &RequestError{Reason: err.Error()}
	}
	ar := appgate.Request{Kind: appgate.Message, SessionID: sessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool, Text: msg.Text()}
	if ok, reason := h.appGate(ctx, p, ref.server, ar); !ok {
		return nil, &AppDeniedError{Server: ref.server, Kind: appgate.Message, Reason: reason}
	}
	if err := h.apps.appLimits.Take(appKey(p, ref)); err != nil {
		return nil, err
	}
	body := appMessageBody{ResourceURI: ref.resourceURI}
	for _, c := range msg.Content {
		body.Content = append(body.Content, textBlock{Type: "text", Text: c.Text})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("host: encoding an App message: %w", err)
	}
	entry := &store.Entry{
		SessionID:  sessionID,
		Kind:       store.KindAppMessage,
		Principal:  p.Name,
		Origin:     OriginApp,
		Server:     ref.server,
		AppEntryID: ref.entryID,
		Status:     store.StatusOK,
		Message:    raw,
		StartedAt:  time.Now().UTC(),
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.store.AppendEntry(sctx, entry); err != nil {
		return nil, fmt.Errorf("host: recording an App message: %w", mapStoreErr(err))
	}
	h.publish(Event{Type: eventEntry, Principal: p.Name, Data: entry})
	return entry, nil
}

// CheckAppLink decides whether the App of entry appEntryID in principal's
// session sessionID may ask the user to open url (ui/open-link, apps.md
// §12), and returns the URL to show and open. The WebShell calls it before
// it asks the user, and opens the link only after the user confirms. Nothing
// is recorded.
//
// It fails with ErrNotFound for another principal's or a missing session,
// RequestError for an appEntryId that names no App of the session or a URL
// that is not an absolute http(s) URL (apps.CheckLink), AppDeniedError when
// the App gate refuses (app_open_links is off unless configured), and
// AppLimitError when the App asks too often.
func (h *Host) CheckAppLink(ctx context.Context, p Principal, sessionID, appEntryID, url string) (string, error) {
	if h.store == nil {
		return "", ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return "", err
	}
	ref, err := h.appOf(ctx, p, sessionID, appEntryID)
	if err != nil {
		return "", err
	}
	clean, err := apps.CheckLink(url)
	if err != nil {
		return "", &RequestError{Reason: err.Error()}
	}
	ar := appgate.Request{Kind: appgate.OpenLink, SessionID: sessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool, URL: clean}
	if ok, reason := h.appGate(ctx, p, ref.server, ar); !ok {
		return "", &AppDeniedError{Server: ref.server, Kind: appgate.OpenLink, Reason: reason}
	}
	if err := h.apps.appLimits.Take(appKey(p, ref)); err != nil {
		return "", err
	}
	return clean, nil
}

// maxAppDetail bounds the Detail of a checked App request (a display mode,
// an App tool's name).
const maxAppDetail = 128

// CheckAppRequest decides a request of the App of entry appEntryID in one
// of principal's sessions that the WebShell carries out itself: kind
// appDisplayMode (detail "fullscreen" or "pip"), appToolUse (detail the
// App tool's name) or appDownload (detail the file name, already
// sanitised by the WebShell: no path, no leading dot). It runs the App gate (the server's switch, then the app
// phase of the policies) and returns nil when allowed, an *AppDeniedError
// when refused and a *RequestError for a malformed request.
func (h *Host) CheckAppRequest(ctx context.Context, p Principal, sessionID, appEntryID, kind, detail string) error {
	if h.store == nil {
		return ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return err
	}
	switch kind {
	case appgate.DisplayMode:
		if detail != "fullscreen" && detail != "pip" {
			return &RequestError{Reason: `a display mode request needs "detail" "fullscreen" or "pip" (inline is always allowed)`}
		}
	case appgate.ToolUse:
		if detail == "" || len(detail) > maxAppDetail || !utf8.ValidString(detail) {
			return &RequestError{Reason: fmt.Sprintf(`an App tool request needs "detail", the tool's name (1 to %d bytes)`, maxAppDetail)}
		}
	case appgate.Download:
		if detail == "" || len(detail) > maxAppDetail || !utf8.ValidString(detail) || strings.ContainsAny(detail, "/\\\x00") || strings.HasPrefix(detail, ".") {
			return &RequestError{Reason: fmt.Sprintf(`a download needs "detail", a plain file name (1 to %d bytes, no path, not starting with a dot)`, maxAppDetail)}
		}
	default:
		return &RequestError{Reason: fmt.Sprintf(`"kind" is %q, %q or %q`, appgate.DisplayMode, appgate.ToolUse, appgate.Download)}
	}
	ref, err := h.appOf(ctx, p, sessionID, appEntryID)
	if err != nil {
		return err
	}
	ar := appgate.Request{Kind: kind, SessionID: sessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool, Detail: detail}
	if ok, reason := h.appGate(ctx, p, ref.server, ar); !ok {
		return &AppDeniedError{Server: ref.server, Kind: kind, Reason: reason}
	}
	return nil
}

// maxAppResourceURI bounds the URI of an App's resources/read, and
// maxAppResourceBytes what one read may return to the App (its JSON):
// twice the largest App HTML (config.MaxAppResourceMaxBytes), so that an
// App may read back a resource as large as itself, JSON escapes included.
const (
	maxAppResourceURI   = 2048
	maxAppResourceBytes = 2 * config.MaxAppResourceMaxBytes
)

// AppReadResource reads uri for the App of entry appEntryID in one of
// principal's sessions: a resource of the App's own server only (the read
// goes to that server, whatever the URI names), after the App gate (the
// server's app_resources switch, then the app phase of the policies),
// within the server's call timeout and at most maxAppResourceBytes (32 MiB
// of JSON).
//
// With forDownload the read fetches a resource_link of a ui/download-file
// and is decided as appDownload (app_downloads) instead.
func (h *Host) AppReadResource(ctx context.Context, p Principal, sessionID, appEntryID, uri string, forDownload bool) (*mcp.ReadResourceResult, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return nil, err
	}
	if uri == "" || len(uri) > maxAppResourceURI || !utf8.ValidString(uri) {
		return nil, &RequestError{Reason: fmt.Sprintf(`"uri" must be a resource URI of 1 to %d bytes`, maxAppResourceURI)}
	}
	ref, err := h.appOf(ctx, p, sessionID, appEntryID)
	if err != nil {
		return nil, err
	}
	kind := appgate.ResourceRead
	if forDownload {
		kind = appgate.Download
	}
	ar := appgate.Request{Kind: kind, SessionID: sessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool, URL: uri}
	if ok, reason := h.appGate(ctx, p, ref.server, ar); !ok {
		return nil, &AppDeniedError{Server: ref.server, Kind: kind, Reason: reason}
	}
	c, err := h.conn(ref.server)
	if err != nil {
		return nil, err
	}
	cs, _, err := c.Current()
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(upstream.RelayAs(ctx, p.Name), c.Cfg.CallTimeout)
	defer cancel()
	res, err := upstream.SessionReader{Conn: c, Session: cs}.ReadResource(rctx, uri)
	if err != nil {
		return nil, &RequestError{Reason: fmt.Sprintf("server %q could not read %q: %v", ref.server, uri, err)}
	}
	if res.NeedsInput() {
		return nil, &RequestError{Reason: "the resource asks for input, which App reads cannot give"}
	}
	if b, err := json.Marshal(res); err != nil || len(b) > maxAppResourceBytes {
		return nil, &RequestError{Reason: fmt.Sprintf("the resource is larger than %d bytes, the limit of an App read", maxAppResourceBytes)}
	}
	return res, nil
}

// maxAppContextBlocks bounds the content blocks of one model context.
const maxAppContextBlocks = 16

// appContextParams is what mcphost keeps of a ui/update-model-context:
// text blocks and structuredContent.
type appContextParams struct {
	Content           []textBlock    `json:"content,omitempty"`
	StructuredContent map[string]any `json:"structuredContent,omitempty"`
}

// AppUpdateContext keeps the context the App of entry appEntryID gives for
// the model (ui/update-model-context params: content, text blocks only, at
// most 16, and/or structuredContent, an object; at most 64 KiB as JSON),
// replacing what it gave before, after the App gate (app_model_context,
// then the app phase of the policies) and the App's rate limit. It is
// untrusted, tool-derived text: kept with the entry and shown as the App's,
// never as the user's words.
func (h *Host) AppUpdateContext(ctx context.Context, p Principal, sessionID, appEntryID string, params json.RawMessage) (*store.AppContext, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return nil, err
	}
	if len(params) > store.MaxAppContextBytes {
		return nil, &RequestError{Reason: fmt.Sprintf("the model context is %d bytes, the limit is %d", len(params), store.MaxAppContextBytes)}
	}
	var in struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	if err := json.Unmarshal(params, &in); err != nil {
		return nil, &RequestError{Reason: "the model context must be an object with content and/or structuredContent"}
	}
	var kept appContextParams
	if len(in.Content) > maxAppContextBlocks {
		return nil, &RequestError{Reason: fmt.Sprintf("the model context has %d content blocks, the limit is %d", len(in.Content), maxAppContextBlocks)}
	}
	for i, raw := range in.Content {
		var b textBlock
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" || !utf8.ValidString(b.Text) {
			return nil, &RequestError{Reason: fmt.Sprintf("content[%d] is not a text block (only text is kept)", i)}
		}
		kept.Content = append(kept.Content, b)
	}
	if len(in.StructuredContent) > 0 && string(in.StructuredContent) != "null" {
		if json.Unmarshal(in.StructuredContent, &kept.StructuredContent) != nil {
			return nil, &RequestError{Reason: "structuredContent must be an object"}
		}
	}
	ref, err := h.appOf(ctx, p, sessionID, appEntryID)
	if err != nil {
		return nil, err
	}
	ar := appgate.Request{Kind: appgate.ModelContext, SessionID: sessionID, AppEntryID: ref.entryID, ResourceURI: ref.resourceURI, Display: ref.display,
		AppTool: ref.tool}
	if ok, reason := h.appGate(ctx, p, ref.server, ar); !ok {
		return nil, &AppDeniedError{Server: ref.server, Kind: appgate.ModelContext, Reason: reason}
	}
	if err := h.apps.appLimits.Take(appKey(p, ref)); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(kept)
	if err != nil {
		return nil, fmt.Errorf("host: encoding an App context: %w", err)
	}
	now := time.Now().UTC()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := h.store.SetAppContext(sctx, p.Name, ref.entryID, raw, now); err != nil {
		return nil, fmt.Errorf("host: keeping an App context: %w", mapStoreErr(err))
	}
	return &store.AppContext{EntryID: ref.entryID, Context: raw, UpdatedAt: now}, nil
}

// AppContextOf returns the model context the App of entry appEntryID (in
// one of principal's sessions) gave last; store.ErrNotFound (as a not
// found error) when it gave none.
func (h *Host) AppContextOf(ctx context.Context, p Principal, sessionID, appEntryID string) (*store.AppContext, error) {
	if h.store == nil {
		return nil, ErrNoStore
	}
	if err := h.checkSession(ctx, p.Name, sessionID); err != nil {
		return nil, err
	}
	if _, err := h.appOf(ctx, p, sessionID, appEntryID); err != nil {
		return nil, err
	}
	c, err := h.store.AppContextOf(ctx, p.Name, appEntryID)
	if err != nil {
		return nil, mapStoreErr(err)
	}
	return &c, nil
}
