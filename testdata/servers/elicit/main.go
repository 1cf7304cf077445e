// Command elicit is a go-sdk MCP server on stdin/stdout whose tools ask the
// client for input while they run, in both eras: on a legacy session
// (2025-11-25) a tool sends elicitation/create, roots/list or
// sampling/createMessage on the session and waits for the answer; on a
// 2026-07-28 session it answers input_required (SEP-2322) with the same
// requests in inputRequests and reads the client's inputResponses in the
// retry. It speaks both eras (server/discover and initialize), so a host
// picks the era with version_negotiation.
//
// Build (from the module root):
//
//	go build -o elicit ./testdata/servers/elicit
//
// Tests build it with internal/testbin:
//
//	testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/elicit")
//
// Tools (each result is one text content):
//
//	ask_name      a form {name (string, default "Ada"), age (integer, 0..150)};
//	              "hello NAME, AGE" on accept, else "ACTION"
//	ask_password  a form {user, password (format password; legacy: writeOnly)}; "user USER, password of N bytes"
//	open_url      url mode, https://example.com/authorize?x=1; the action
//	bad_url       url mode, javascript:alert(1); the action, or "error: …"
//	deep_schema   a form whose property has nested properties; the action or "error: …"
//	huge_schema   a form with 5000 properties; the action or "error: …"
//	loop          asks again after every answer, forever (legacy: 20 times);
//	              "asked N times: ACTIONS"
//	roots         roots/list; the root URIs joined by spaces, or "error: …"
//	sample        sampling/createMessage; the model's text, or "error: …"
//	multi         an elicitation and roots/list in one round (modern) or in turn
//	roots_changed how many notifications/roots/list_changed arrived
//	pid           the server's process id
//	count         how many times count was called in this process (its state)
//	progress      three progress notifications, then "progressed"
//	say           {text}: text as a log message (info, logger "elicit"), then "said"
//	hold          {id}: the log message "held ID", then waits until release
//	              is called with the same id (in this process); "released"
//	release       {id}: ends the hold of id; "ok"
//	note          {title, body (required), author}, properties listed in
//	              that order (not the names' order); "noted BODY"
//	url_required  the JSON-RPC error -32042 (URL elicitation required) with
//	              one URL, https://example.com/connect?x=1, on its first call
//	              in this process; "connected" on the calls after it
//
// A legacy "error: …" is the JSON-RPC error the client answered with; a
// decline's reason (mcphost's _meta io.mcphost/declineReason) is appended
// as " (reason)".
//
// It writes "elicit: started" to stderr and exits 0 when stdin closes.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const modern = "2026-07-28"

func main() {
	fmt.Fprintln(os.Stderr, "elicit: started")
	s := mcp.NewServer(&mcp.Implementation{Name: "elicit", Version: "1.0.0"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged.Add(1) },
	})
	for name, t := range tools {
		schema := json.RawMessage(`{"type":"object"}`)
		if s, ok := schemas[name]; ok {
			schema = json.RawMessage(s)
		}
		s.AddTool(&mcp.Tool{Name: name, Description: t.desc, InputSchema: schema}, t.run)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "elicit:", err)
		os.Exit(1)
	}
}

// rootsChanged counts notifications/roots/list_changed, and counted the
// calls of count.
var rootsChanged, counted atomic.Int64

// urlVisited is whether url_required was called before in this process.
var urlVisited atomic.Bool

type tool struct {
	desc string
	run  mcp.ToolHandler
}

var nameSchema = json.RawMessage(`{"type":"object","properties":{
	"name":{"type":"string","title":"Name","default":"Ada"},
	"age":{"type":"integer","minimum":0,"maximum":150}},"required":["name"]}`)

var passwordSchema = json.RawMessage(`{"type":"object","properties":{
	"user":{"type":"string"},
	"password":{"type":"string","format":"password"}},"required":["user","password"]}`)

// legacyPasswordSchema marks the password writeOnly: go-sdk's
// ServerSession.Elicit refuses a "password" format (MCP's formats are
// email, uri, date and date-time), so a legacy go-sdk server cannot send
// one; mcphost treats both as secret.
var legacyPasswordSchema = json.RawMessage(`{"type":"object","properties":{
	"user":{"type":"string"},
	"password":{"type":"string","writeOnly":true}},"required":["user","password"]}`)

var deepSchema = json.RawMessage(`{"type":"object","properties":{"outer":{"type":"object","properties":{"inner":{"type":"string"}}}}}`)

func hugeSchema() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"field%d":{"type":"string","description":"field number %d"}`, i, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// schemas are the input schemas of the tools that take named arguments
// the server lists; the others take any object.
var schemas = map[string]string{
	"note": `{"type":"object","required":["body"],"properties":{"title":{"type":"string"},"body":{"type":"string"},"author":{"type":"string"}}}`,
}

var tools = map[string]tool{
	"note": {"Takes a note: a title, a body and its author.", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Body string `json:"body"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return text("noted " + in.Body), nil
	}},
	"ask_name": {"Asks for a name and an age.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return form(ctx, req, "Who are you?", nameSchema, func(r *mcp.ElicitResult) string {
			return fmt.Sprintf("hello %v, %v", r.Content["name"], r.Content["age"])
		})
	}},
	"ask_password": {"Asks for a password.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		schema := passwordSchema
		if !isModern(req) {
			schema = legacyPasswordSchema
		}
		return form(ctx, req, "Sign in to the vault", schema, func(r *mcp.ElicitResult) string {
			pw, _ := r.Content["password"].(string)
			return fmt.Sprintf("user %v, password of %d bytes", r.Content["user"], len(pw))
		})
	}},
	"deep_schema": {"Asks with a nested schema.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return form(ctx, req, "Nested", deepSchema, nil)
	}},
	"huge_schema": {"Asks with a huge schema.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return form(ctx, req, "Huge", hugeSchema(), nil)
	}},
	"open_url": {"Asks to open an https URL.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return urlMode(ctx, req, "https://example.com/authorize?x=1")
	}},
	"bad_url": {"Asks to open a javascript: URL.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return urlMode(ctx, req, "javascript:alert(1)")
	}},
	"loop": {"Asks again after every answer.", loop},
	"roots": {"Lists the client's roots.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, res, err := ask(ctx, req, map[string]mcp.InputRequest{"roots": &mcp.ListRootsParams{}})
		if res != nil || err != nil {
			return res, err
		}
		return text(rootsText(resp["roots"])), nil
	}},
	"sample": {"Asks the client's model.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, res, err := ask(ctx, req, map[string]mcp.InputRequest{"sample": &mcp.CreateMessageParams{
			MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}})
		if res != nil || err != nil {
			return res, err
		}
		switch r := resp["sample"].(type) {
		case *mcp.CreateMessageResult:
			if t, ok := r.Content.(*mcp.TextContent); ok {
				return text(t.Text), nil
			}
		case errResponse:
			return text("error: " + string(r)), nil
		}
		return text(fmt.Sprintf("unexpected %T", resp["sample"])), nil
	}},
	"roots_changed": {"Counts the client's roots/list_changed notifications.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.FormatInt(rootsChanged.Load(), 10)), nil
	}},
	"count": {"Counts its calls in this process.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.FormatInt(counted.Add(1), 10)), nil
	}},
	"progress": {"Reports progress three times.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)}); err != nil {
					return nil, err
				}
			}
		}
		return text("progressed"), nil
	}},
	"say": {"Sends its text as a log message.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		say(ctx, req, stringArg(req, "text"))
		return text("said"), nil
	}},
	"hold": {"Logs, then waits until released.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		id := stringArg(req, "id")
		say(ctx, req, "held "+id)
		select {
		case <-holdOf(id):
			return text("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}},
	"release": {"Ends a hold.", func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ch := holdOf(stringArg(req, "id"))
		select {
		case <-ch:
		default:
			close(ch)
		}
		return text("ok"), nil
	}},
	"url_required": {"Needs a URL visited before its first call succeeds.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if urlVisited.Swap(true) {
			return text("connected"), nil
		}
		return nil, mcp.URLElicitationRequiredError([]*mcp.ElicitParams{{
			Mode: "url", Message: "Connect your account", URL: "https://example.com/connect?x=1", ElicitationID: "el-connect",
		}})
	}},
	"pid": {"Returns the server's process id.", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	}},
	"multi": {"Asks a name and lists roots in one round.", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		resp, res, err := ask(ctx, req, map[string]mcp.InputRequest{
			"name":  &mcp.ElicitParams{Mode: "form", Message: "Who are you?", RequestedSchema: nameSchema},
			"roots": &mcp.ListRootsParams{},
		})
		if res != nil || err != nil {
			return res, err
		}
		return text(elicitText(resp["name"], func(r *mcp.ElicitResult) string { return fmt.Sprintf("hello %v", r.Content["name"]) }) + "; roots " + rootsText(resp["roots"])), nil
	}},
}

// errResponse is a legacy request the client answered with an error.
type errResponse string

func isModern(req *mcp.CallToolRequest) bool {
	ip := req.Session.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= modern
}

// ask gets the responses to reqs: on a modern session from the retry's
// inputResponses, or an input_required result (res) asking for them; on a
// legacy session by sending each request on the session.
func ask(ctx context.Context, req *mcp.CallToolRequest, reqs map[string]mcp.InputRequest) (map[string]any, *mcp.CallToolResult, error) {
	out := map[string]any{}
	if isModern(req) {
		if req.Params.InputResponses == nil {
			m := mcp.InputRequestMap{}
			for k, v := range reqs {
				m[k] = v
			}
			return nil, &mcp.CallToolResult{InputRequests: m}, nil
		}
		for k := range reqs {
			out[k] = req.Params.InputResponses[k]
		}
		return out, nil, nil
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var (
			r   any
			err error
		)
		switch p := reqs[k].(type) {
		case *mcp.ElicitParams:
			r, err = req.Session.Elicit(ctx, p)
		case *mcp.ListRootsParams:
			r, err = req.Session.ListRoots(ctx, p)
		case *mcp.CreateMessageParams:
			r, err = req.Session.CreateMessage(ctx, p)
		}
		if err != nil {
			r = errResponse(err.Error())
		}
		out[k] = r
	}
	return out, nil, nil
}

func form(ctx context.Context, req *mcp.CallToolRequest, msg string, schema json.RawMessage, accepted func(*mcp.ElicitResult) string) (*mcp.CallToolResult, error) {
	resp, res, err := ask(ctx, req, map[string]mcp.InputRequest{"q": &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: schema}})
	if res != nil || err != nil {
		return res, err
	}
	return text(elicitText(resp["q"], accepted)), nil
}

func urlMode(ctx context.Context, req *mcp.CallToolRequest, u string) (*mcp.CallToolResult, error) {
	resp, res, err := ask(ctx, req, map[string]mcp.InputRequest{"q": &mcp.ElicitParams{Mode: "url", Message: "Authorize the vault", URL: u, ElicitationID: "el-1"}})
	if res != nil || err != nil {
		return res, err
	}
	return text(elicitText(resp["q"], nil)), nil
}

func elicitText(resp any, accepted func(*mcp.ElicitResult) string) string {
	switch r := resp.(type) {
	case *mcp.ElicitResult:
		out := r.Action
		if r.Action == "accept" && accepted != nil {
			out = accepted(r)
		}
		if reason, ok := r.Meta["io.mcphost/declineReason"].(string); ok {
			out += " (" + reason + ")"
		}
		return out
	case errResponse:
		return "error: " + string(r)
	case nil:
		return "no response"
	}
	return fmt.Sprintf("unexpected %T", resp)
}

func rootsText(resp any) string {
	switch r := resp.(type) {
	case *mcp.ListRootsResult:
		uris := make([]string, 0, len(r.Roots))
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return "[" + strings.Join(uris, " ") + "]"
	case errResponse:
		return "error: " + string(r)
	}
	return fmt.Sprintf("unexpected %T", resp)
}

// loop asks again after every answer: on a modern session a new round
// each time (the round number in requestState), forever; on a legacy
// session 20 questions in a row.
func loop(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q := &mcp.ElicitParams{Mode: "form", Message: "Again?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean","default":true}}}`)}
	if isModern(req) {
		n, _ := strconv.Atoi(req.Params.RequestState)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q" + strconv.Itoa(n): q}, RequestState: strconv.Itoa(n + 1)}, nil
	}
	var actions []string
	for range 20 {
		r, err := req.Session.Elicit(ctx, q)
		if err != nil {
			actions = append(actions, "error: "+err.Error())
			break
		}
		actions = append(actions, r.Action)
	}
	return text(fmt.Sprintf("asked %d times: %s", len(actions), strings.Join(actions, ","))), nil
}

// holds are the running holds by id, each released by closing its channel.
var holds sync.Map // string → chan struct{}

func holdOf(id string) chan struct{} {
	ch, _ := holds.LoadOrStore(id, make(chan struct{}))
	return ch.(chan struct{})
}

// say sends text as a log message on the call's session (the client gets
// it once it has set a level).
func say(ctx context.Context, req *mcp.CallToolRequest, text string) {
	_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "elicit", Data: text})
}

// stringArg returns the string argument name of a call.
func stringArg(req *mcp.CallToolRequest, name string) string {
	var args map[string]any
	_ = json.Unmarshal(req.Params.Arguments, &args)
	s, _ := args[name].(string)
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
