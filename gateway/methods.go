package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/oauth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes the gateway answers with.
const (
	codeInvalidParams = jsonrpc.CodeInvalidParams
	codeInternal      = jsonrpc.CodeInternalError
	// codeServerError is the implementation-defined range's first code: a
	// request the host refused for a reason of its own (rate limit, server
	// not ready).
	codeServerError = -32000
	// codeResourceNotFound is MCP's resource-not-found error.
	codeResourceNotFound = -32002
)

// middleware answers the methods the gateway relays through the host;
// the protocol's own (initialize, ping, discover, listen, logging/setLevel)
// are go-sdk's.
func (e *endpoint) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, done := e.g.track(ctx, req)
		defer done()
		c, ok := callerOf(ctx, req)
		if ok {
			c.Client = clientOf(req)
		}
		switch method {
		case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "completion/complete":
		case "logging/setLevel":
			res, err := next(ctx, method, req) // the session's own level
			if err == nil {
				if ss, _ := req.GetSession().(*mcp.ServerSession); ss != nil {
					e.g.held.logging(ss.ID())
				}
				e.setLogLevel(ctx, req)
			}
			return res, err
		case "initialize":
			res, err := next(ctx, method, req)
			if err == nil {
				// The session is open: it takes the slot its request
				// reserved (held.go).
				ss, _ := req.GetSession().(*mcp.ServerSession)
				e.g.sessionOpened(ctx, e, ss)
				if ok {
					if r, isInit := req.(*mcp.InitializeRequest); isInit && c.Client.Name == "" && r.Params != nil && r.Params.ClientInfo != nil {
						c.Client = host.ClientInfo{Name: clip(r.Params.ClientInfo.Name, 100), Version: clip(r.Params.ClientInfo.Version, 50)}
					}
					e.instruct(ctx, c, req, res)
				}
			}
			return res, err
		case "server/discover":
			res, err := next(ctx, method, req)
			if err == nil && ok {
				e.instruct(ctx, c, req, res)
			}
			return res, err
		default:
			if ok {
				// go-sdk's own handlers (tools/call, prompts/get and
				// resources/read below; resources/subscribe and a listen
				// stream's subscriptions) see the caller in this context.
				ctx = context.WithValue(ctx, callerKey{}, c)
			}
			return next(ctx, method, req)
		}
		if !ok {
			return nil, &jsonrpc.Error{Code: codeInternal, Message: "gateway: the request carries no authenticated caller"}
		}
		switch r := req.(type) {
		case *mcp.ListToolsRequest:
			return e.listTools(ctx, c, r)
		case *mcp.ListPromptsRequest:
			return e.listPrompts(ctx, c, r)
		case *mcp.ListResourcesRequest:
			return e.listResources(ctx, c, r)
		case *mcp.ListResourceTemplatesRequest:
			return e.listTemplates(ctx, c, r)
		case *mcp.CompleteRequest:
			return e.complete(ctx, c, r)
		}
		return next(ctx, method, req)
	}
}

// requestCaller returns the caller of a request that go-sdk hands to a
// registered handler, with the client it names.
func requestCaller(ctx context.Context, req mcp.Request) (host.Caller, error) {
	c, ok := callerOf(ctx, req)
	if !ok {
		return host.Caller{}, &jsonrpc.Error{Code: codeInternal, Message: "gateway: the request carries no authenticated caller"}
	}
	c.Client = clientOf(req)
	return c, nil
}

// toolHandler, promptHandler and readHandler answer the requests go-sdk
// routes to the registered entries.
func (e *endpoint) toolHandler(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	c, err := requestCaller(ctx, r)
	if err != nil {
		return nil, err
	}
	if r.Params != nil && isMetaTool(r.Params.Name) && discoveryFor(e.view(ctx, c), r).mode != config.DiscoveryList {
		// A passthrough server's own tool of a meta-tool's name, in list
		// mode, with the URL asking for search: the meta-tool answers.
		return e.metaHandler(r.Params.Name)(ctx, r)
	}
	return e.callTool(ctx, c, r)
}

func (e *endpoint) promptHandler(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	c, err := requestCaller(ctx, r)
	if err != nil {
		return nil, err
	}
	return e.getPrompt(ctx, c, r)
}

func (e *endpoint) readHandler(ctx context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	c, err := requestCaller(ctx, r)
	if err != nil {
		return nil, err
	}
	return e.readResource(ctx, c, r)
}

// clientOf returns the client a request names (its clientInfo).
func clientOf(req mcp.Request) host.ClientInfo {
	type infoer interface{ ClientInfo() *mcp.Implementation }
	if r, ok := req.(infoer); ok {
		if ci := r.ClientInfo(); ci != nil {
			return host.ClientInfo{Name: clip(ci.Name, 100), Version: clip(ci.Version, 50)}
		}
	}
	return host.ClientInfo{}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// private marks a list result as the caller's own: what it lists depends on
// the principal's policies.
func private() mcp.Cacheable { return mcp.Cacheable{TTLMs: 0, CacheScope: "private"} }

// noCursor refuses a cursor: the gateway answers every list in one page,
// so a client has none to send back.
func noCursor(cursor string) error {
	if cursor == "" {
		return nil
	}
	return &jsonrpc.Error{Code: codeInvalidParams, Message: "invalid cursor: this server lists everything in one page"}
}

func (e *endpoint) listTools(ctx context.Context, c host.Caller, r *mcp.ListToolsRequest) (mcp.Result, error) {
	if r.Params != nil {
		if err := noCursor(r.Params.Cursor); err != nil {
			return nil, err
		}
	}
	v := e.view(ctx, c)
	if discoveryFor(v, r).searching(v, c) {
		return e.listSearch(v), nil
	}
	return &mcp.ListToolsResult{Tools: v.tools, Cacheable: private()}, nil
}

// visibleServers returns the servers of the endpoint c may see.
func (e *endpoint) visibleServers(ctx context.Context, c host.Caller) []string {
	return e.view(ctx, c).servers
}

// unknownTool is go-sdk's own answer for a tool it does not have: a hidden
// tool gets exactly this, so its existence does not leak.
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

func (e *endpoint) callTool(ctx context.Context, c host.Caller, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p := r.Params
	if p == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "tools/call needs params"}
	}
	gt, ok := e.table.Load().byName[p.Name]
	if !ok {
		return nil, unknownTool(p.Name)
	}
	in, err := e.inputOf(c, r, "tools/call", p.Name, p.InputResponses, p.RequestState)
	if err != nil {
		return nil, err
	}
	ask := elicitApproval(r)
	if r.ProtocolVersion() >= modernVersion {
		// A retry that continues a server's own round has no way to carry
		// an approval through it: its `ask` waits for the WebShell.
		approval := takeApproval(in, p.Arguments)
		ask = nil
		if approval.answered || in.RequestState == "" {
			ask = modernApproval(r, approval)
		}
	}
	sessionID, err := e.g.sessions.sessionFor(ctx, c, r.Session)
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeInternal, Message: "gateway: opening the transcript session: " + err.Error()}
	}
	ctx = e.approvalNotice(ctx, r.Session, p.GetProgressToken(), "call of "+p.Name)
	var onProgress func(host.Progress)
	if tok := p.GetProgressToken(); tok != nil && r.Session != nil {
		ss := r.Session
		onProgress = func(pr host.Progress) {
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: pr.Progress, Total: pr.Total, Message: pr.Message})
		}
	}
	var onLog func(*mcp.LoggingMessageParams)
	if r.Session != nil {
		ss := r.Session
		defer e.calls.add(gt.Server, &inflight{ss: ss, ctx: ctx, principal: c.Principal.Name})()
		// The server's log messages that belong to this call (the host
		// decides which: host/serverlog.go) go on its stream.
		onLog = func(p *mcp.LoggingMessageParams) {
			if ctx.Err() == nil {
				_ = ss.Log(ctx, p)
			}
		}
	}
	// A 2026-07-28 client asks for log messages per request.
	if level, _ := p.Meta[mcp.MetaKeyLogLevel].(string); level != "" {
		_ = e.g.h.GatewaySetLogLevel(ctx, c, gt.Server, mcp.LoggingLevel(level))
	}
	relay := e.g.clientRelay(r.Session)
	call := func(in *host.CallInput) (*mcp.CallToolResult, error) {
		out, err := e.g.h.GatewayCall(ctx, host.SessionCall{
			Principal: c.Principal, SessionID: sessionID, Server: gt.Server, Tool: gt.Tool.Name,
			Arguments: p.Arguments, Client: c.Client, Input: in, Relay: relay, OnLog: onLog,
		}, ask, onProgress)
		keepRecorded(ctx, out)
		var ace *host.AskClientError
		if errors.As(err, &ace) {
			return e.approvalRound(c, p.Name, p.Arguments, ace.Approval), nil
		}
		return callAnswer(p.Name, out, err)
	}
	res, err := call(in)
	if err == nil && res.NeedsInput() && res.InputRequests[approvalKey] != nil {
		return res, nil // the gateway's own round: the client answers it
	}
	if err == nil && res.NeedsInput() {
		res, err = relayInput(ctx, e, c, r, r.Session, "tools/call", p.Name, in, res, call)
	}
	if err != nil {
		return nil, err // not a typed nil in the mcp.Result
	}
	if !res.NeedsInput() {
		res = e.g.withAppContexts(ctx, c, sessionID, res)
	}
	return res, nil
}

// approvalNotice returns ctx telling the client of ss, as soon as its
// request (what) waits for a person to approve it in the WebShell, where
// and for how long: as a progress notification when the request carries a
// progress token, and as a log message (level warning) when the client
// asked for log messages. Without either a client is not told; a client
// that can be asked in-band is asked instead (elicitApproval).
func (e *endpoint) approvalNotice(ctx context.Context, ss *mcp.ServerSession, tok any, what string) context.Context {
	if ss == nil {
		return ctx
	}
	return host.WithApprovalPending(ctx, func(a host.Approval) {
		text := fmt.Sprintf("mcphost: the %s waits for a person to approve it in the WebShell at %s (rule %q); it is denied if nobody answers within %s (approval_timeout)",
			what, e.g.h.WebShellURL(), a.Rule, a.Expires.Sub(a.Created).Round(time.Second))
		go func() { // never hold up the approval's announcement on a client
			if tok != nil {
				_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: text})
			}
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "mcphost", Data: text})
		}()
	})
}

// callAnswer turns the pipeline's outcome into what a client reads: a
// result (an input_required one too); a refusal by a policy as a tool
// error the model can read; a server's JSON-RPC error as it came, code and
// data; anything else as an error that says what happened.
func callAnswer(name string, out *host.CallOutcome, err error) (*mcp.CallToolResult, error) {
	var perr *host.PolicyError
	if errors.As(err, &perr) {
		msg := perr.Message
		if perr.Rule != "" {
			msg = fmt.Sprintf("%s (policy %q)", msg, perr.Rule)
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Refused by mcphost: " + msg}}}, nil
	}
	if msg, ok := authRefusal(err, out); ok {
		// A sign-in the client's user must make: a tool error the model
		// can read and relay, not a protocol error.
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "mcphost: " + msg}}}, nil
	}
	if err != nil {
		return nil, hostError(name, err)
	}
	if out.Upstream != nil {
		var je *jsonrpc.Error
		if errors.As(out.Upstream, &je) {
			return nil, je
		}
		return nil, &jsonrpc.Error{Code: codeInternal, Message: out.Upstream.Error()}
	}
	if out.Result == nil {
		msg := "the result was withheld"
		if out.Stage != nil {
			msg = out.Stage.Error()
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "mcphost: " + msg}}}, nil
	}
	return out.Result, nil
}

// authRefusal returns the text of an OAuth refusal (auth_required, or
// auth_error) of the call, before it or from the server.
func authRefusal(err error, out *host.CallOutcome) (string, bool) {
	if err == nil && out != nil {
		err = out.Upstream
	}
	var (
		ar *oauth.AuthRequiredError
		ae *oauth.AuthError
	)
	switch {
	case errors.As(err, &ar):
		return ar.Error(), true
	case errors.As(err, &ae):
		return ae.Error(), true
	}
	return "", false
}

// hostError maps a refusal before the call to a JSON-RPC error.
func hostError(name string, err error) error {
	var (
		ut *host.UnknownToolError
		us *host.UnknownServerError
		ae *host.ArgumentsError
		re *host.RequestError
	)
	switch {
	case errors.As(err, &ut), errors.As(err, &us):
		return unknownTool(name)
	case errors.As(err, &ae), errors.As(err, &re):
		return &jsonrpc.Error{Code: codeInvalidParams, Message: err.Error()}
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	return &jsonrpc.Error{Code: codeServerError, Message: err.Error()}
}

// elicitApproval asks the client itself to answer an `ask` rule, when it is
// a legacy session that declared elicitation; otherwise (answered false)
// the host waits for the WebShell.
func elicitApproval(r *mcp.CallToolRequest) func(context.Context, host.Approval) (string, bool) {
	ss := r.Session
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ProtocolVersion >= modernVersion {
		return nil
	}
	return func(ctx context.Context, a host.Approval) (string, bool) {
		msg := approvalMessage(a)
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: approvalSchema(msg)})
		if err != nil {
			if ctx.Err() != nil {
				return host.ApprovalCancelled, true
			}
			return "", false // the client could not ask: the WebShell can
		}
		if res.Action == "accept" {
			if v, _ := res.Content["approve"].(bool); v {
				return host.ApprovalApproved, true
			}
		}
		return host.ApprovalDenied, true
	}
}

// promptTable returns the prompts of the servers c may see, by served
// name, with their server; names that two prompts share are left out.
func (e *endpoint) promptTable(ctx context.Context, c host.Caller) (map[string]promptRef, []string) {
	out := map[string]promptRef{}
	dup := map[string]bool{}
	var order []string
	for _, server := range e.visibleServers(ctx, c) {
		ps, err := e.g.h.PromptsFor(ctx, c, server)
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p == nil {
				continue
			}
			name := e.codec.promptName(server, p.Name)
			if _, seen := out[name]; seen {
				dup[name] = true
				continue
			}
			out[name] = promptRef{server: server, prompt: p}
			order = append(order, name)
		}
	}
	for name := range dup {
		delete(out, name)
	}
	kept := order[:0]
	for _, n := range order {
		if _, ok := out[n]; ok {
			kept = append(kept, n)
		}
	}
	return out, kept
}

type promptRef struct {
	server string
	prompt *mcp.Prompt
}

func (e *endpoint) listPrompts(ctx context.Context, c host.Caller, r *mcp.ListPromptsRequest) (mcp.Result, error) {
	if r.Params != nil {
		if err := noCursor(r.Params.Cursor); err != nil {
			return nil, err
		}
	}
	byName, order := e.promptTable(ctx, c)
	out := &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, 0, len(order)), Cacheable: private()}
	for _, name := range order {
		cp := *byName[name].prompt
		cp.Name = name
		out.Prompts = append(out.Prompts, &cp)
	}
	return out, nil
}

func (e *endpoint) getPrompt(ctx context.Context, c host.Caller, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	if r.Params == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "prompts/get needs params"}
	}
	byName, _ := e.promptTable(ctx, c)
	ref, ok := byName[r.Params.Name]
	if !ok {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", r.Params.Name)}
	}
	in, err := e.inputOf(c, r, "prompts/get", r.Params.Name, r.Params.InputResponses, r.Params.RequestState)
	if err != nil {
		return nil, err
	}
	sessionID, err := e.g.sessions.sessionFor(ctx, c, r.Session)
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeInternal, Message: "gateway: opening the transcript session: " + err.Error()}
	}
	ctx = e.approvalNotice(ctx, r.Session, r.Params.GetProgressToken(), "prompts/get of "+r.Params.Name)
	get := func(in *host.CallInput) (*mcp.GetPromptResult, error) {
		res, err := e.g.h.GetPrompt(ctx, c, sessionID, ref.server, &mcp.GetPromptParams{Name: ref.prompt.Name, Arguments: r.Params.Arguments}, in)
		if err != nil {
			return nil, hostError(r.Params.Name, err)
		}
		return res, nil
	}
	res, err := get(in)
	if err != nil {
		return nil, err
	}
	if res.NeedsInput() {
		if res, err = relayInput(ctx, e, c, r, r.Session, "prompts/get", r.Params.Name, in, res, get); err != nil {
			return nil, err
		}
		if res.NeedsInput() {
			return res, nil // the client answers this round
		}
	}
	if e.codec.aggregate() {
		cp := *res
		cp.Messages = make([]*mcp.PromptMessage, len(res.Messages))
		for i, m := range res.Messages {
			if m == nil {
				continue
			}
			mc := *m
			mc.Content = e.encodeContent(ref.server, m.Content)
			cp.Messages[i] = &mc
		}
		res = &cp
	}
	return res, nil
}

// encodeContent rewrites the URIs of embedded resources and resource links
// to the endpoint's.
func (e *endpoint) encodeContent(server string, c mcp.Content) mcp.Content {
	switch v := c.(type) {
	case *mcp.EmbeddedResource:
		if v.Resource != nil {
			cp, rc := *v, *v.Resource
			rc.URI = e.codec.uri(server, rc.URI)
			cp.Resource = &rc
			return &cp
		}
	case *mcp.ResourceLink:
		cp := *v
		cp.URI = e.codec.uri(server, v.URI)
		return &cp
	}
	return c
}

func (e *endpoint) listResources(ctx context.Context, c host.Caller, r *mcp.ListResourcesRequest) (mcp.Result, error) {
	if r.Params != nil {
		if err := noCursor(r.Params.Cursor); err != nil {
			return nil, err
		}
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: private()}
	for _, server := range e.visibleServers(ctx, c) {
		rs, _, err := e.g.h.ResourcesFor(ctx, c, server)
		if err != nil {
			continue
		}
		for _, res := range rs {
			if res != nil {
				cp := *res
				cp.URI = e.codec.uri(server, res.URI)
				out.Resources = append(out.Resources, &cp)
			}
		}
	}
	return out, nil
}

func (e *endpoint) listTemplates(ctx context.Context, c host.Caller, r *mcp.ListResourceTemplatesRequest) (mcp.Result, error) {
	if r.Params != nil {
		if err := noCursor(r.Params.Cursor); err != nil {
			return nil, err
		}
	}
	out := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}, Cacheable: private()}
	for _, server := range e.visibleServers(ctx, c) {
		_, ts, err := e.g.h.ResourcesFor(ctx, c, server)
		if err != nil {
			continue
		}
		for _, rt := range ts {
			if rt != nil {
				cp := *rt
				cp.URITemplate = e.codec.uri(server, rt.URITemplate)
				out.ResourceTemplates = append(out.ResourceTemplates, &cp)
			}
		}
	}
	return out, nil
}

// serverOfURI returns the server an endpoint URI belongs to and its
// upstream URI, when c may see that server.
func (e *endpoint) serverOfURI(ctx context.Context, c host.Caller, uri string) (string, string, error) {
	server, upstream, ok := e.codec.decodeURI(uri)
	if ok {
		for _, s := range e.visibleServers(ctx, c) {
			if s == server {
				return server, upstream, nil
			}
		}
	}
	return "", "", &jsonrpc.Error{Code: codeResourceNotFound, Message: fmt.Sprintf("resource not found: %q", uri),
		Data: mustJSON(map[string]string{"uri": uri})}
}

func (e *endpoint) readResource(ctx context.Context, c host.Caller, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if r.Params == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "resources/read needs params"}
	}
	server, upstream, err := e.serverOfURI(ctx, c, r.Params.URI)
	if err != nil {
		return nil, err
	}
	in, err := e.inputOf(c, r, "resources/read", r.Params.URI, r.Params.InputResponses, r.Params.RequestState)
	if err != nil {
		return nil, err
	}
	sessionID, err := e.g.sessions.sessionFor(ctx, c, r.Session)
	if err != nil {
		return nil, &jsonrpc.Error{Code: codeInternal, Message: "gateway: opening the transcript session: " + err.Error()}
	}
	ctx = e.approvalNotice(ctx, r.Session, r.Params.GetProgressToken(), "resources/read of "+r.Params.URI)
	read := func(in *host.CallInput) (*mcp.ReadResourceResult, error) {
		res, err := e.g.h.ReadResource(ctx, c, sessionID, server, upstream, in)
		if err != nil {
			var ae *host.AppResourceError
			if errors.As(err, &ae) {
				return nil, &jsonrpc.Error{Code: codeServerError, Message: ae.Error()}
			}
			return nil, hostError(r.Params.URI, err)
		}
		return res, nil
	}
	res, err := read(in)
	if err != nil {
		return nil, err
	}
	if res.NeedsInput() {
		if res, err = relayInput(ctx, e, c, r, r.Session, "resources/read", r.Params.URI, in, res, read); err != nil {
			return nil, err
		}
		if res.NeedsInput() {
			return res, nil // the client answers this round
		}
	}
	if e.codec.aggregate() {
		cp := *res
		cp.Contents = make([]*mcp.ResourceContents, len(res.Contents))
		for i, rc := range res.Contents {
			if rc == nil {
				continue
			}
			rcc := *rc
			rcc.URI = e.codec.uri(server, rc.URI)
			cp.Contents[i] = &rcc
		}
		res = &cp
	}
	return res, nil
}

func (e *endpoint) complete(ctx context.Context, c host.Caller, r *mcp.CompleteRequest) (mcp.Result, error) {
	p := r.Params
	if p == nil || p.Ref == nil {
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: "completion/complete needs params with a ref"}
	}
	params := *p
	ref := *p.Ref
	var server string
	switch ref.Type {
	case "ref/prompt":
		byName, _ := e.promptTable(ctx, c)
		pr, ok := byName[ref.Name]
		if !ok {
			return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", ref.Name)}
		}
		server, ref.Name = pr.server, pr.prompt.Name
	case "ref/resource":
		s, upstream, err := e.serverOfURI(ctx, c, ref.URI)
		if err != nil {
			return nil, err
		}
		server, ref.URI = s, upstream
	default:
		return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: fmt.Sprintf("unknown ref type %q (ref/prompt or ref/resource)", ref.Type)}
	}
	params.Ref = &ref
	ctx = e.approvalNotice(ctx, r.Session, nil, "completion/complete")
	params.Meta = nil
	res, err := e.g.h.Complete(ctx, c, server, &params)
	if err != nil {
		return nil, hostError(ref.Name, err)
	}
	return res, nil
}

// setLogLevel passes a client's logging/setLevel on to the servers it may
// see on the endpoint (whose messages it then hears during its calls: those
// of its own calls, and with log_messages = "all" those of no call). A
// server that does not log answers with an error, which changes nothing.
func (e *endpoint) setLogLevel(ctx context.Context, req mcp.Request) {
	r, ok := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams])
	if !ok || r.Params == nil {
		return
	}
	c, ok := callerOf(ctx, req)
	if !ok {
		return
	}
	c.Client = clientOf(req)
	for _, server := range e.visibleServers(ctx, c) {
		if err := e.g.h.GatewaySetLogLevel(ctx, c, server, r.Params.Level); err != nil {
			e.g.log.Debug("gateway: a server did not take the log level", "server", server, "level", r.Params.Level, "err", err)
		}
	}
}

// inflight is one running gateway call: the session and request context a
// server's log messages that no call owns are relayed on during it, and
// its principal.
type inflight struct {
	ss        *mcp.ServerSession
	ctx       context.Context
	principal string
}

// calls tracks the running calls per server.
type calls struct {
	mu sync.Mutex
	m  map[string]map[*inflight]struct{}
}

func (cs *calls) add(server string, f *inflight) func() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m == nil {
		cs.m = map[string]map[*inflight]struct{}{}
	}
	if cs.m[server] == nil {
		cs.m[server] = map[*inflight]struct{}{}
	}
	cs.m[server][f] = struct{}{}
	return func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		delete(cs.m[server], f)
		if len(cs.m[server]) == 0 {
			delete(cs.m, server)
		}
	}
}

// logMessage relays a log message that no call of a server owns (the
// server's block says log_messages = "all") to the clients with a call
// running on it, those of principal only when it came on that principal's
// own session; go-sdk drops it for a session that asked for a higher
// level, or none. A message that belongs to a call never comes here: it
// goes to that call's client only (SessionCall.OnLog).
func (e *endpoint) logMessage(server, principal string, p *mcp.LoggingMessageParams) {
	e.calls.mu.Lock()
	targets := make([]*inflight, 0, len(e.calls.m[server]))
	for f := range e.calls.m[server] {
		if principal == "" || f.principal == principal {
			targets = append(targets, f)
		}
	}
	e.calls.mu.Unlock()
	for _, f := range targets {
		_ = f.ss.Log(f.ctx, p)
	}
}

// subscribe is go-sdk's SubscribeHandler, for resources/subscribe and the
// resources of a listen stream: the caller must see the resource's server,
// and the first subscription to a URI is the server's (the host counts
// them). go-sdk then routes the updates, which the gateway passes on from
// the host (see Gateway.resourceUpdated), to the subscribed sessions.
func (e *endpoint) subscribe(ctx context.Context, r *mcp.SubscribeRequest) error {
	c, ok := ctx.Value(callerKey{}).(host.Caller)
	if !ok || r.Params == nil {
		return &jsonrpc.Error{Code: codeInternal, Message: "gateway: the request carries no authenticated caller"}
	}
	server, upstream, err := e.serverOfURI(ctx, c, r.Params.URI)
	if err != nil {
		return err
	}
	ctx = e.approvalNotice(ctx, r.Session, nil, "resources/subscribe of "+r.Params.URI)
	if err := e.g.h.SubscribeResource(ctx, c, server, upstream); err != nil {
		return hostError(r.Params.URI, err)
	}
	return nil
}

// unsubscribe is go-sdk's UnsubscribeHandler: it ends one of the caller's
// own subscriptions, on a server the caller may see.
func (e *endpoint) unsubscribe(ctx context.Context, r *mcp.UnsubscribeRequest) error {
	c, ok := ctx.Value(callerKey{}).(host.Caller)
	if !ok || r.Params == nil {
		return nil
	}
	server, upstream, err := e.serverOfURI(ctx, c, r.Params.URI)
	if err != nil {
		return err
	}
	if err := e.g.h.UnsubscribeResource(ctx, c, server, upstream); err != nil {
		return hostError(r.Params.URI, err)
	}
	return nil
}
