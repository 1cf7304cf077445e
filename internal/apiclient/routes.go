package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	neturl "net/url"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The routes of docs/api.md that the commands use. Answers whose Go type is
// go-sdk's (resources, prompts) come back typed; answers whose Go type
// lives in the host (a principal, a server's status, a tool view, a
// session, an entry) are decoded into the caller's out, a pointer to that
// type or to a struct with the fields the caller reads: this package never
// imports the host, which the daemon's code is.

// Me decodes the caller's principal (GET /api/v1/me: name, groups, origin,
// admin) into out. Quick.
func (c *Client) Me(ctx context.Context, out any) error {
	return c.do(ctx, true, http.MethodGet, "/api/v1/me", nil, out)
}

// Servers decodes the statuses of the servers the caller may see
// (GET /api/v1/servers) into out, a pointer to a slice. Quick.
func (c *Client) Servers(ctx context.Context, out any) error {
	var env struct {
		Servers any `json:"servers"`
	}
	env.Servers = out
	return c.do(ctx, true, http.MethodGet, "/api/v1/servers", nil, &env)
}

// Tools decodes the tools of every ready server the caller may see
// (GET /api/v1/tools) into out, a pointer to a slice. Quick.
func (c *Client) Tools(ctx context.Context, out any) error {
	var env struct {
		Tools any `json:"tools"`
	}
	env.Tools = out
	return c.do(ctx, true, http.MethodGet, "/api/v1/tools", nil, &env)
}

// SearchTools decodes the tools the caller may see ranked against query,
// best first, into out, a pointer to a slice, and returns how many matched
// in all (GET /api/v1/tools?search=QUERY&server=...&limit=N): at most
// limit of them (0: the daemon's default), of servers only when servers is
// not empty. Quick.
func (c *Client) SearchTools(ctx context.Context, query string, servers []string, limit int, out any) (int, error) {
	q := neturl.Values{"search": {query}}
	for _, s := range servers {
		q.Add("server", s)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var env struct {
		Tools any `json:"tools"`
		Total int `json:"total"`
	}
	env.Tools = out
	err := c.do(ctx, true, http.MethodGet, "/api/v1/tools?"+q.Encode(), nil, &env)
	return env.Total, err
}

// Resources returns the resources and resource templates of server
// (GET /api/v1/servers/{name}/resources). Quick.
func (c *Client) Resources(ctx context.Context, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, error) {
	var out struct {
		Resources []*mcp.Resource         `json:"resources"`
		Templates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	}
	err := c.do(ctx, true, http.MethodGet, serverPath(server, "/resources"), nil, &out)
	return out.Resources, out.Templates, err
}

// ReadResource reads uri from server through the daemon's pipeline
// (POST /api/v1/servers/{name}/resources/read), recorded in the caller's
// transcript session sessionID ("": in none). It waits: an `ask` rule
// holds it until the approval is answered, so only ctx bounds it.
func (c *Client) ReadResource(ctx context.Context, sessionID, server, uri string) (*mcp.ReadResourceResult, error) {
	var out mcp.ReadResourceResult
	body := map[string]string{"uri": uri}
	if sessionID != "" {
		body["sessionId"] = sessionID
	}
	err := c.do(ctx, false, http.MethodPost, serverPath(server, "/resources/read"), body, &out)
	return &out, err
}

// Prompts returns the prompts of server (GET /api/v1/servers/{name}/prompts).
// Quick.
func (c *Client) Prompts(ctx context.Context, server string) ([]*mcp.Prompt, error) {
	var out struct {
		Prompts []*mcp.Prompt `json:"prompts"`
	}
	err := c.do(ctx, true, http.MethodGet, serverPath(server, "/prompts"), nil, &out)
	return out.Prompts, err
}

// GetPrompt gets prompt name of server with args through the daemon's
// pipeline (POST /api/v1/servers/{name}/prompts/get), recorded and
// waiting as [Client.ReadResource] does.
func (c *Client) GetPrompt(ctx context.Context, sessionID, server, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var out mcp.GetPromptResult
	body := map[string]any{"name": name, "arguments": args}
	if sessionID != "" {
		body["sessionId"] = sessionID
	}
	err := c.do(ctx, false, http.MethodPost, serverPath(server, "/prompts/get"), body, &out)
	return &out, err
}

// Sessions decodes the caller's transcript sessions, most recently updated
// first (GET /api/v1/sessions), into out, a pointer to a slice. Quick.
func (c *Client) Sessions(ctx context.Context, out any) error {
	var env struct {
		Sessions any `json:"sessions"`
	}
	env.Sessions = out
	return c.do(ctx, true, http.MethodGet, "/api/v1/sessions", nil, &env)
}

// CreateSession creates a transcript session of the caller titled title
// ("" for the dated default) and returns its id (POST /api/v1/sessions).
// Quick.
func (c *Client) CreateSession(ctx context.Context, title string) (string, error) {
	var s struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, true, http.MethodPost, "/api/v1/sessions", map[string]string{"title": title}, &s); err != nil {
		return "", err
	}
	if s.ID == "" {
		return "", fmt.Errorf("POST /api/v1/sessions: the answer has no session id")
	}
	return s.ID, nil
}

// Entries decodes one page of session's transcript into out, a pointer to
// a slice: the entries after seq after (0 from the start), oldest first,
// at most limit of them (1–500; 0 for the daemon's 100)
// (GET /api/v1/sessions/{id}/entries). more says there is a next page,
// which starts after next. Quick.
func (c *Client) Entries(ctx context.Context, session string, after int64, limit int, out any) (next int64, more bool, err error) {
	q := neturl.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	q.Set("after", strconv.FormatInt(after, 10))
	var page struct {
		Entries any    `json:"entries"`
		Next    *int64 `json:"next"`
	}
	page.Entries = out
	path := "/api/v1/sessions/" + neturl.PathEscape(session) + "/entries?" + q.Encode()
	if err := c.do(ctx, true, http.MethodGet, path, nil, &page); err != nil {
		return 0, false, err
	}
	if page.Next == nil {
		return 0, false, nil
	}
	return *page.Next, true, nil
}

// CallRequest is a tool call (the body of POST /api/v1/sessions/{id}/calls).
type CallRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // a JSON object
	// CallID names the call while it runs (to cancel or look it up); ""
	// lets the daemon choose.
	CallID string `json:"callId,omitempty"`
}

// Call makes a tool call in session through the daemon's pipeline and
// decodes the entry it recorded into entry (nil to drop it). A tool error
// or an upstream failure is a recorded entry too (see its status); a
// policy's refusal is an *[Error] with Code "denied_by_policy" whose Entry
// is the entry it recorded. It waits:
// the server's call_timeout bounds the call and an `ask` rule holds it
// until the approval is answered, so only ctx bounds it.
func (c *Client) Call(ctx context.Context, session string, call CallRequest, entry any) error {
	return c.do(ctx, false, http.MethodPost, "/api/v1/sessions/"+neturl.PathEscape(session)+"/calls", call, entry)
}

// serverPath is the path of one of server's routes.
func serverPath(server, route string) string {
	return "/api/v1/servers/" + neturl.PathEscape(server) + route
}

// Reload asks the daemon to load its config file again and apply it
// (POST /api/v1/reload; with dryRun, ?dry_run=true only plans) and decodes
// the ReloadPlan into out. A file with errors is an *[Error] with status
// 422 whose Body carries the diagnostics. It waits: the daemon answers
// once new servers are up, so only ctx bounds it. Admins only.
func (c *Client) Reload(ctx context.Context, dryRun bool, out any) error {
	path := "/api/v1/reload"
	if dryRun {
		path += "?dry_run=true"
	}
	return c.do(ctx, false, http.MethodPost, path, nil, out)
}

// StartSignIn starts an OAuth sign-in of the caller to server
// (POST /api/v1/servers/{name}/auth/start) and decodes the flow, with its
// launch URL, into out. Quick.
func (c *Client) StartSignIn(ctx context.Context, server string, out any) error {
	return c.do(ctx, true, http.MethodPost, serverPath(server, "/auth/start"), nil, out)
}

// SignInFlow decodes the state of sign-in flow id (GET
// /api/v1/auth/flows/{id}) into out. With wait > 0 the daemon holds the
// request up to wait for the state to change: the client's timeout, which
// bounds it, must be longer.
func (c *Client) SignInFlow(ctx context.Context, id string, wait time.Duration, out any) error {
	path := "/api/v1/auth/flows/" + neturl.PathEscape(id)
	if wait > 0 {
		path += "?wait=" + wait.String()
	}
	return c.do(ctx, true, http.MethodGet, path, nil, out)
}

// SignOut signs the caller out of server, its tokens revoked and deleted
// (DELETE /api/v1/servers/{name}/auth). Quick.
func (c *Client) SignOut(ctx context.Context, server string) error {
	return c.do(ctx, true, http.MethodDelete, serverPath(server, "/auth"), nil, nil)
}

// Credentials decodes who is signed in where (GET /api/v1/auth, of server
// alone unless it is "") into out, a pointer to a slice. Quick.
func (c *Client) Credentials(ctx context.Context, server string, out any) error {
	path := "/api/v1/auth"
	if server != "" {
		path += "?server=" + neturl.QueryEscape(server)
	}
	var env struct {
		Credentials any `json:"credentials"`
	}
	env.Credentials = out
	return c.do(ctx, true, http.MethodGet, path, nil, &env)
}

// ServerLogs reads GET /api/v1/servers/{server}/logs (admins only): the
// server's stderr tail and last log messages.
func (c *Client) ServerLogs(ctx context.Context, server string, out any) error {
	return c.Do(ctx, http.MethodGet, serverPath(server, "/logs"), nil, out)
}

// RestartServer asks POST /api/v1/servers/{server}/restart (admins only)
// for a new session of the server.
func (c *Client) RestartServer(ctx context.Context, server string) error {
	return c.Do(ctx, http.MethodPost, serverPath(server, "/restart"), nil, nil)
}
