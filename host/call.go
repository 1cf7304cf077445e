package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/policies"
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
	// Origin is OriginUser, OriginAPI (default) or OriginApp, for the
	// policies.
	Origin string
}

// CallTool calls a tool and returns its result. A tool failure is a result
// with IsError set, not an error; the error is for everything else: unknown
// server or tool, server not ready, arguments that are not a JSON object, the
// server's call_timeout, cancellation through ctx (go-sdk then sends
// notifications/cancelled), or the session ending mid-call.
func (h *Host) CallTool(ctx context.Context, req CallToolRequest) (*mcp.CallToolResult, error) {
	g := h.acquire()
	defer g.release()
	c, err := g.conn(req.Server)
	if err != nil {
		return nil, err
	}
	cs, cat, err := c.current()
	if err != nil {
		return nil, err
	}
	tool, ok := cat.toolIndex[req.Tool]
	if !ok {
		return nil, unknownTool(req.Server, req.Tool, cat)
	}
	args, err := objectArguments(req.Arguments)
	if err != nil {
		return nil, err
	}
	p := req.Principal
	if p.Name == "" {
		p = Principal{Name: "owner", Groups: []string{}}
	}
	origin := req.Origin
	if origin != OriginUser && origin != OriginApp {
		origin = OriginAPI
	}
	// The one-shot path has no schema check of its own (the server checks
	// the arguments), so rules that read args decode only the keys they
	// read, lazily from the raw JSON: a full schema check here would cost
	// more than the rules.
	trail := &Trail{}
	pol := newPolicyRun(g, p, c, tool, origin, args, nil, trail)
	d := pol.decide(ctx, policies.PhaseCall)
	if hidden(d) {
		return nil, unknownTool(req.Server, req.Tool, cat)
	}
	if d.Effect == policies.EffectAsk {
		// A one-shot call has nobody to ask: it is denied.
		d.Effect = policies.EffectDeny
		d.Message = fmt.Sprintf("needs approval, which only the WebShell can give: %s", d.Message)
	}
	if !d.Allowed() {
		return nil, denied(d)
	}
	res, err := c.callTool(ctx, cs, req.Tool, args, req.OnProgress)
	if err != nil {
		return nil, err
	}
	res, _, err = pol.resultStage(ctx, p, c, cat, tool, args, res)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// callTool sends tools/call on cs with arguments already checked by
// objectArguments, under the server's call_timeout, with progress routed to
// onProgress.
func (c *serverConn) callTool(ctx context.Context, cs *mcp.ClientSession, tool string, args json.RawMessage, onProgress func(Progress)) (*mcp.CallToolResult, error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if onProgress != nil {
		token := "mcphost-" + strconv.FormatUint(c.progressSeq.Add(1), 10)
		c.progress.Store(token, onProgress)
		defer c.progress.Delete(token)
		params.SetProgressToken(token)
	}

	cctx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(cctx, params)
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

// ArgumentsError is returned for tool arguments that are not a JSON object.
type ArgumentsError struct{ Reason string }

func (e *ArgumentsError) Error() string { return "invalid arguments: " + e.Reason }
