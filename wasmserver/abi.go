package wasmserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file maps hyper-mcp's plugin ABIs onto a go-sdk MCP server.
//
// v2 (hyper-mcp's src/plugin.rs, templates/plugins/go): each export takes
// JSON and returns the MCP result's JSON, or fails with an Extism error.
// A call export gets {"request": <params>, "context": {"_meta": {...},
// "id": N}}, a list export {"context": {...}}. The request is what hyper-mcp
// sends: {"name", "arguments"} for call_tool and get_prompt, {"uri"} for
// read_resource, and complete's params with "ref/" cut from ref.type.
//
// v1: describe takes no input and returns a ListToolsResult; call takes
// {"params": {"name", "arguments"}} and returns a CallToolResult.

// build makes the MCP server: it lists the plugin's tools (and prompts,
// resources and resource templates when it exports them) once, and adds
// each with a handler that calls the plugin. A list that fails, or an item
// go-sdk would refuse, fails the start.
func (p *plugin) build(ctx context.Context) error {
	opts := &mcp.ServerOptions{}
	if p.exports["complete"] && p.abi == KindExtismV2 {
		opts.CompletionHandler = p.complete
	}
	if p.exports["on_roots_list_changed"] && p.abi == KindExtismV2 {
		opts.RootsListChangedHandler = p.rootsListChanged
	}
	p.server = mcp.NewServer(&mcp.Implementation{Name: p.s.name, Version: p.version}, opts)

	listExport, listInput := "list_tools", p.listInput()
	if p.abi == KindExtismV1 {
		listExport, listInput = "describe", nil
	}
	var tools struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := p.list(ctx, listExport, listInput, &tools); err != nil {
		return err
	}
	for _, raw := range tools.Tools {
		t, err := decodeTool(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", listExport, err)
		}
		if err := safely(func() { p.server.AddTool(t, p.callTool) }); err != nil {
			return fmt.Errorf("%s: %w", listExport, err)
		}
	}
	if p.abi != KindExtismV2 {
		return nil
	}
	if p.exports["list_prompts"] && p.exports["get_prompt"] {
		var prompts struct {
			Prompts []*mcp.Prompt `json:"prompts"`
		}
		if err := p.list(ctx, "list_prompts", p.listInput(), &prompts); err != nil {
			return err
		}
		for _, pr := range prompts.Prompts {
			if pr == nil || pr.Name == "" {
				return errors.New("list_prompts: a prompt without a name")
			}
			if err := safely(func() { p.server.AddPrompt(pr, p.getPrompt) }); err != nil {
				return fmt.Errorf("list_prompts: %w", err)
			}
		}
	}
	if !p.exports["read_resource"] {
		return nil
	}
	if p.exports["list_resources"] {
		var res struct {
			Resources []*mcp.Resource `json:"resources"`
		}
		if err := p.list(ctx, "list_resources", p.listInput(), &res); err != nil {
			return err
		}
		for _, r := range res.Resources {
			if r == nil {
				return errors.New("list_resources: a null resource")
			}
			if err := safely(func() { p.server.AddResource(r, p.readResource) }); err != nil {
				return fmt.Errorf("list_resources: %w", err)
			}
		}
	}
	if p.exports["list_resource_templates"] {
		var res struct {
			Templates []*mcp.ResourceTemplate `json:"resourceTemplates"`
		}
		if err := p.list(ctx, "list_resource_templates", p.listInput(), &res); err != nil {
			return err
		}
		for _, t := range res.Templates {
			if t == nil {
				return errors.New("list_resource_templates: a null template")
			}
			if err := safely(func() { p.server.AddResourceTemplate(t, p.readResource) }); err != nil {
				return fmt.Errorf("list_resource_templates: %w", err)
			}
		}
	}
	return nil
}

func (p *plugin) listInput() []byte {
	b, _ := json.Marshal(map[string]any{"context": p.callContext(nil)})
	return b
}

// list calls a list export and decodes its output into v.
func (p *plugin) list(ctx context.Context, export string, input []byte, v any) error {
	out, err := p.call(ctx, export, input)
	if err != nil {
		return fmt.Errorf("%s: %w", export, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s returned invalid JSON: %w", export, err)
	}
	return nil
}

// decodeTool decodes one tool of a list, keeping its schemas as the plugin
// wrote them. go-sdk's AddTool panics on an input schema that is not an
// object schema; here that is an error naming the tool.
func decodeTool(raw json.RawMessage) (*mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("invalid tool: %w", err)
	}
	if t.Name == "" {
		return nil, errors.New("a tool without a name")
	}
	var schemas struct {
		In  json.RawMessage `json:"inputSchema"`
		Out json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	var in struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(schemas.In, &in); err != nil || in.Type != "object" {
		return nil, fmt.Errorf("tool %q: the input schema must be a JSON object with \"type\": \"object\"", t.Name)
	}
	t.InputSchema = schemas.In
	t.OutputSchema = nil
	if len(schemas.Out) > 0 && string(schemas.Out) != "null" {
		t.OutputSchema = schemas.Out
	}
	return &t, nil
}

// safely runs an Add method of go-sdk's server, which panics on what it
// refuses.
func safely(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	add()
	return nil
}

// sessionKey carries the session of the request a call serves, for the
// host functions that notify the client.
type sessionKey struct{}

func withSession(ctx context.Context, ss *mcp.ServerSession) context.Context {
	if ss == nil {
		return ctx
	}
	return context.WithValue(ctx, sessionKey{}, ss)
}

func sessionOf(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(sessionKey{}).(*mcp.ServerSession)
	return ss
}

// callTool serves tools/call. A failed call is an error result, as the
// spec asks of a tool failure: a trap, a timeout, a refused host call, an
// Extism error or output that is not a CallToolResult.
func (p *plugin) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	request := map[string]any{"name": req.Params.Name}
	if len(req.Params.Arguments) > 0 {
		request["arguments"] = req.Params.Arguments
	}
	export := "call_tool"
	input := map[string]any{"request": request, "context": p.callContext(req.Params.Meta)}
	if p.abi == KindExtismV1 {
		export, input = "call", map[string]any{"params": request}
	}
	b, err := json.Marshal(input)
	if err != nil {
		return toolError(fmt.Sprintf("%s: %v", export, err)), nil
	}
	out, err := p.call(withSession(ctx, req.Session), export, b)
	if err != nil {
		return toolError(fmt.Sprintf("%s: %v", export, err)), nil
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		return toolError(fmt.Sprintf("%s returned an invalid result: %v", export, err)), nil
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return &res, nil
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// run calls a v2 request export and decodes its output into v; a failure
// is a JSON-RPC error.
func (p *plugin) run(ctx context.Context, ss *mcp.ServerSession, export string, meta mcp.Meta, request any, v any) error {
	b, err := json.Marshal(map[string]any{"request": request, "context": p.callContext(meta)})
	if err != nil {
		return err
	}
	out, err := p.call(withSession(ctx, ss), export, b)
	if err != nil {
		return fmt.Errorf("%s: %w", export, err)
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("%s returned an invalid result: %w", export, err)
	}
	return nil
}

func (p *plugin) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	request := map[string]any{"name": req.Params.Name}
	if len(req.Params.Arguments) > 0 {
		request["arguments"] = req.Params.Arguments
	}
	var res mcp.GetPromptResult
	if err := p.run(ctx, req.Session, "get_prompt", req.Params.Meta, request, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (p *plugin) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	var res mcp.ReadResourceResult
	if err := p.run(ctx, req.Session, "read_resource", req.Params.Meta, map[string]any{"uri": req.Params.URI}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (p *plugin) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	b, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	var request map[string]any
	if err := json.Unmarshal(b, &request); err != nil {
		return nil, err
	}
	delete(request, "_meta")
	if ref, ok := request["ref"].(map[string]any); ok {
		if t, ok := ref["type"].(string); ok {
			ref["type"] = strings.TrimPrefix(t, "ref/")
		}
	}
	var res mcp.CompleteResult
	if err := p.run(ctx, req.Session, "complete", req.Params.Meta, request, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// rootsListChanged passes the notification on, in the background: the
// session's reader must not wait for the plugin.
func (p *plugin) rootsListChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	var meta mcp.Meta
	if req.Params != nil {
		meta = req.Params.Meta
	}
	if meta == nil {
		meta = mcp.Meta{}
	}
	b, _ := json.Marshal(map[string]any{"context": map[string]any{"_meta": meta}})
	go func() {
		if _, err := p.call(p.life, "on_roots_list_changed", b); err != nil {
			p.s.logger.Warn("plugin on_roots_list_changed failed", "err", err)
		}
	}()
}

// hostNamespace is the module hyper-mcp's plugins import host functions
// from.
const hostNamespace = "extism:host/user"

// hostFunctions are hyper-mcp's host functions, so that plugins importing
// them instantiate. Log messages and progress reach the client of the call
// in progress (and the logger); list and resource changes are logged only,
// since the lists are read once, at start; elicitation, sampling and roots
// are refused: the call that asks fails.
func (p *plugin) hostFunctions() []extism.HostFunction {
	i64 := []extism.ValueType{extism.ValueTypeI64}
	var fns []extism.HostFunction
	add := func(name string, params, results []extism.ValueType, fn extism.HostFunctionStackCallback) {
		f := extism.NewHostFunctionWithStack(name, fn, params, results)
		f.SetNamespace(hostNamespace)
		fns = append(fns, f)
	}
	add("notify_logging_message", i64, nil, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
		var m mcp.LoggingMessageParams
		if !p.readJSON(cp, stack[0], "notify_logging_message", &m) {
			return
		}
		if ok, _ := p.logs.Allow(time.Now()); ok {
			p.s.logger.Log(ctx, levelOf(string(m.Level)), "plugin log message", "logger", clip(m.Logger, 64), "text", clip(fmt.Sprint(m.Data), maxLogBytes))
		}
		if ss := sessionOf(ctx); ss != nil {
			_ = ss.Log(ctx, &m)
		}
	})
	add("notify_progress", i64, nil, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
		var m mcp.ProgressNotificationParams
		if !p.readJSON(cp, stack[0], "notify_progress", &m) {
			return
		}
		if ss := sessionOf(ctx); ss != nil && m.ProgressToken != nil {
			_ = ss.NotifyProgress(ctx, &m)
		}
	})
	for _, n := range []string{"notify_tool_list_changed", "notify_prompt_list_changed", "notify_resource_list_changed"} {
		add(n, nil, nil, func(ctx context.Context, _ *extism.CurrentPlugin, _ []uint64) {
			p.s.logger.Debug("plugin notification ignored: the lists are read once, at start", "notification", n)
		})
	}
	add("notify_resource_updated", i64, nil, func(ctx context.Context, _ *extism.CurrentPlugin, _ []uint64) {
		p.s.logger.Debug("plugin notification ignored", "notification", "notify_resource_updated")
	})
	refuse := func(name, what string) extism.HostFunctionStackCallback {
		return func(context.Context, *extism.CurrentPlugin, []uint64) {
			// wazero recovers the panic and fails the guest's call with it.
			panic(fmt.Errorf("%s is not available: mcphost does not pass %s from a wasm server to the client", name, what))
		}
	}
	add("create_elicitation", i64, i64, refuse("create_elicitation", "elicitation requests"))
	add("create_message", i64, i64, refuse("create_message", "sampling requests"))
	add("list_roots", nil, i64, refuse("list_roots", "roots requests"))
	return fns
}

// readJSON decodes the guest's memory block at offset into v; a bad one
// is logged and skipped.
func (p *plugin) readJSON(cp *extism.CurrentPlugin, offset uint64, name string, v any) bool {
	b, err := cp.ReadBytes(offset)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		p.s.logger.Debug("plugin host call with invalid input ignored", "function", name, "err", err)
		return false
	}
	return true
}

// maxLogBytes bounds one plugin log line in the logger; how many lines
// reach it is wasmguest.LogLimiter's bound.
const maxLogBytes = 512

// log receives the plugin's Extism log lines (pdk.Log), whose level
// Extism filters process-wide (plugins.SetLogLevel).
func (p *plugin) log(level extism.LogLevel, msg string) {
	if ok, _ := p.logs.Allow(time.Now()); !ok {
		return
	}
	var l slog.Level
	switch level {
	case extism.LogLevelTrace, extism.LogLevelDebug:
		l = slog.LevelDebug
	case extism.LogLevelInfo:
		l = slog.LevelInfo
	case extism.LogLevelWarn:
		l = slog.LevelWarn
	default:
		l = slog.LevelError
	}
	p.s.logger.Log(p.base, l, "plugin log", "text", clip(msg, maxLogBytes))
}

// levelOf maps an MCP logging level to slog's.
func levelOf(level string) slog.Level {
	switch level {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError
}
