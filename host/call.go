package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcphost/mcphost/internal/jsonkeys"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification of a running call.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// CallToolRequest is one tool call.
type CallToolRequest struct {
	Server string
	Tool   string
	// Arguments is a JSON object; empty means {}.
	Arguments json.RawMessage
	// OnProgress, when set, receives the server's progress notifications for
	// this call. It is called from the session's goroutine and must not block.
	// go-sdk handles notifications apart from responses, so a notification
	// that arrives after the result is dropped.
	OnProgress func(Progress)
	// Principal is the caller the policies and plugins see; the zero value
	// is "owner" without groups (the local operator of a one-shot command).
	Principal Principal
	// Origin is OriginUser or OriginAPI (the default), for the policies; an
	// App's calls come only through a session (Host.Call).
	Origin string
	// Elicit answers the server's questions while the call runs (a legacy
	// elicitation/create, or an input_required round): the CLI prompts at
	// its terminal. Its error declines with that reason; an accepted form
	// is checked against e.RequestedSchema before it is sent. Nil
	// declines every question.
	Elicit func(ctx context.Context, e Elicitation) (ElicitationAnswer, error)
}

// CallTool calls a tool and returns its result: the pipeline's door for
// one-shot commands (the CLI), with no session and nothing recorded, and
// nobody to answer an `ask` rule, so such a call is denied. A tool failure
// is a result with IsError set, not an error; the error is for everything
// else: unknown server or tool, server not ready, arguments that are not a
// JSON object or do not match the input schema, a policy's refusal
// (*PolicyError), a failing result plugin, the server's call_timeout,
// cancellation through ctx (go-sdk then sends notifications/cancelled), or
// the session ending mid-call.
func (h *Host) CallTool(ctx context.Context, req CallToolRequest) (*mcp.CallToolResult, error) {
	p := req.Principal
	if p.Name == "" {
		p = Principal{Name: OwnerName, Groups: []string{}}
	}
	origin := req.Origin
	if origin != OriginUser {
		origin = OriginAPI
	}
	d := door{onProgress: req.OnProgress}
	if req.Elicit != nil {
		d.elicit = func(ctx context.Context, _ string, e Elicitation, _ *jsonschema.Resolved) (ElicitationAnswer, error) {
			return req.Elicit(ctx, e)
		}
	}
	out, err := h.pipeline(ctx, SessionCall{Principal: p, Server: req.Server, Tool: req.Tool, Arguments: req.Arguments, Origin: origin}, d)
	switch {
	case err != nil:
		return nil, err
	case out.upstream != nil:
		return nil, out.upstream
	case out.stage != nil:
		return nil, out.stage
	}
	return out.result, nil
}

// callTool sends tools/call on cs with arguments already checked by
// objectArguments, under the server's call_timeout, with progress routed to
// onProgress and what a gateway client relays for input requests (in, nil
// for every other door).
func (c *serverConn) callTool(ctx context.Context, cs *mcp.ClientSession, tool string, args json.RawMessage, in *CallInput, onProgress func(Progress)) (res *mcp.CallToolResult, err error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.Meta, params.InputResponses, params.RequestState = in.relay(cs, nil)
	params.Meta = c.relayMeta(ctx, cs, params.Meta)
	// A 2026-07-28 server has no session to keep a log level in: the level
	// the gateway's clients asked for goes with each request.
	c.mu.Lock()
	level := c.logLevel
	c.mu.Unlock()
	if level != "" {
		if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion >= modernProtocolVersion {
			params.Meta = maps.Clone(params.Meta)
			if params.Meta == nil {
				params.Meta = mcp.Meta{}
			}
			params.Meta[mcp.MetaKeyLogLevel] = string(level)
		}
	}
	if onProgress != nil {
		token, stop := c.watchProgress(onProgress)
		// The reports read before the answer are delivered before the
		// call returns (progress.go).
		defer stop(ctx)
		params.SetProgressToken(token)
	}

	protocol := ""
	if ir := cs.InitializeResult(); ir != nil {
		protocol = ir.ProtocolVersion
	}
	ctx, span := c.startUpstreamSpan(ctx, tool, protocol)
	defer func() { endSpan(span, err) }()
	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	res, err = cs.CallTool(cctx, params)
	if isHeaderMismatch(err) && cctx.Err() == nil {
		// -32020: the server rejected a header derived from the tool's
		// definition (Mcp-Param-*), which go-sdk takes from this session's
		// tool list (trap T6). List again, then retry once.
		c.logger.Info("header mismatch on tools/call; listing tools again and retrying once", "tool", tool)
		c.lists.c.Invalidate(c.cfg.Name, "tools/list")
		if cat, lerr := fetchCatalog(cctx, cs, c.lists); lerr == nil {
			c.mu.Lock()
			if c.session == cs {
				c.cat = cat
			}
			c.mu.Unlock()
		}
		res, err = cs.CallTool(cctx, params)
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("call %s.%s cancelled: %w", c.cfg.Name, tool, ctx.Err())
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("call %s.%s: no result within the server's call_timeout of %s", c.cfg.Name, tool, c.cfg.CallTimeout)
		case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed), streamCut(err):
			// A bare "EOF" does not say that the server went away (it
			// exited, was killed or closed its end) while the call ran.
			err = fmt.Errorf("call %s.%s: the server's connection ended before it answered: %w", c.cfg.Name, tool, err)
		default:
			err = fmt.Errorf("call %s.%s: %w", c.cfg.Name, tool, err)
		}
		c.logger.Warn("tool call failed", "tool", tool, "err", err, "duration", time.Since(start))
		return nil, err
	}
	c.logger.Debug("tool call", "tool", tool, "is_error", res.IsError, "duration", time.Since(start))
	return res, nil
}

// streamCut reports go-sdk's error for a Streamable HTTP call whose
// response stream ended (a reset, a server that closed it) before the
// result came and cannot be resumed. go-sdk makes it with fmt.Errorf and no
// sentinel (mcp/streamable.go, "request terminated without response"), so
// its text is all there is to recognise it by.
func streamCut(err error) bool {
	return strings.Contains(err.Error(), "request terminated without response")
}

// isHeaderMismatch reports a JSON-RPC -32020 (HeaderMismatch) error.
func isHeaderMismatch(err error) bool {
	var we *jsonrpc.Error
	return err != nil && errors.As(err, &we) && we.Code == codeHeaderMismatch
}

// codeHeaderMismatch is MCP 2026-07-28's HeaderMismatch error code.
const codeHeaderMismatch = -32020

// objectArguments checks that raw is a JSON object (or empty) and returns it
// ready to send unchanged.
func objectArguments(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, &ArgumentsError{Reason: "the arguments must be a JSON object, such as {\"quarter\": \"Q3\"}"}
	}
	return json.RawMessage(trimmed), nil
}

// checkArgumentKeys refuses arguments in which an object, at any depth,
// has a key twice or two keys equal under Unicode simple case folding
// (strings.EqualFold), unless the tool's input schema lists those keys as
// properties of one object. The policies read the arguments by exact key,
// the last duplicate winning as in encoding/json, while the server gets
// the arguments as sent: a parser that keeps the first duplicate, or binds
// keys to struct fields regardless of case as Go's encoding/json does,
// would act on a value no rule saw (research/redteam.md F4). Without such
// keys every parser reads each member alike, so the bytes the policies
// decided on are the ones forwarded.
func checkArgumentKeys(args json.RawMessage, tool *mcp.Tool) error {
	var named func([]string) bool
	clashes, err := jsonkeys.Scan(args, func(keys []string) bool {
		if named == nil {
			named = schemaNamesApart(tool) // only when keys clash
		}
		return named(keys)
	})
	if err != nil {
		return &ArgumentsError{Reason: err.Error()}
	}
	if len(clashes) == 0 {
		return nil
	}
	return &ArgumentsError{Reason: clashReason(clashes)}
}

// schemaNamesApart returns whether one object of tool's input schema
// lists every one of keys as a property: then the server names them apart
// itself. Any object of the schema counts, wherever the clashing keys
// are in the arguments; a schema that does not decode names none.
func schemaNamesApart(tool *mcp.Tool) func(keys []string) bool {
	var sets []map[string]*jsonschema.Schema
	var s jsonschema.Schema
	if raw, err := json.Marshal(tool.InputSchema); err == nil && json.Unmarshal(raw, &s) == nil {
		walkSchemas(&s, func(s *jsonschema.Schema) {
			if len(s.Properties) > 1 {
				sets = append(sets, s.Properties)
			}
		})
	}
	return func(keys []string) bool {
		for _, props := range sets {
			all := true
			for _, k := range keys {
				if _, ok := props[k]; !ok {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
		return false
	}
}

// walkSchemas calls f on s and every schema inside it: every field of
// jsonschema.Schema that holds schemas (properties, items, allOf, $defs,
// if/then/else …), found by type as jsonschema-go walks them itself.
func walkSchemas(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch fv := v.Field(i).Interface().(type) {
		case *jsonschema.Schema:
			walkSchemas(fv, f)
		case []*jsonschema.Schema:
			for _, c := range fv {
				walkSchemas(c, f)
			}
		case map[string]*jsonschema.Schema:
			for _, c := range fv {
				walkSchemas(c, f)
			}
		}
	}
}

// clashReason names the clashing keys (at most three clashes, each key cut
// to 64 bytes and quoted in ASCII, so that a look-alike such as the Kelvin
// sign shows as \u212a) and says what to send instead.
func clashReason(clashes []jsonkeys.Clash) string {
	var b strings.Builder
	b.WriteString("keys that a server may read as one key: ")
	for i, c := range clashes {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(clashes)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		seen := map[string]bool{}
		var names []string
		for _, k := range c.Keys {
			if !seen[k] {
				seen[k] = true
				names = append(names, fmt.Sprintf("%+q", cut(k, 64)))
			}
		}
		switch {
		case len(names) == 1:
			fmt.Fprintf(&b, "%s given %d times", names[0], len(c.Keys))
		case len(names) > 4:
			fmt.Fprintf(&b, "%s and %d more that differ only in case", strings.Join(names[:4], ", "), len(names)-4)
		default:
			fmt.Fprintf(&b, "%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
			if c.Duplicate() {
				b.WriteString(" (one of them given twice, the others differing only in case)")
			} else {
				b.WriteString(" (they differ only in case)")
			}
		}
		if c.Pointer != "" {
			fmt.Fprintf(&b, " in the object at %+q", cut(c.Pointer, 128))
		}
	}
	b.WriteString(". Send each key once, in one spelling")
	return b.String()
}

// cut shortens s to at most n bytes, on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ArgumentsError is returned for tool arguments that are not a JSON
// object, do not match the tool's input schema, or have keys a server may
// read as one (checkArgumentKeys), and for a prompt's arguments whose names
// differ only in case.
type ArgumentsError struct{ Reason string }

func (e *ArgumentsError) Error() string { return "invalid arguments: " + e.Reason }
