package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress is one progress notification of a running call.
type Progress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// CallTool sends tools/call on cs with arguments already checked by
// objectArguments, under the server's call_timeout, with progress routed to
// onProgress and what a gateway client relays for input requests (in, nil
// for every other door).
func (c *Conn) CallTool(ctx context.Context, cs *mcp.ClientSession, tool string, args json.RawMessage, in *CallInput, onProgress func(Progress)) (res *mcp.CallToolResult, err error) {
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.Meta, params.InputResponses, params.RequestState = in.Relay(cs, nil)
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
	defer func() { EndSpan(span, err) }()
	cctx, cancel := context.WithTimeout(ctx, c.Cfg.CallTimeout)
	defer cancel()
	start := time.Now()
	if c.ownCallable(cs, params) {
		res, err = c.ownCall(cctx, cs, params)
	} else {
		res, err = cs.CallTool(cctx, params)
	}
	if isHeaderMismatch(err) && cctx.Err() == nil {
		// -32020: the server rejected a header derived from the tool's
		// definition (Mcp-Param-*), which go-sdk takes from this session's
		// tool list (trap T6). List again, then retry once.
		c.logger.Info("header mismatch on tools/call; listing tools again and retrying once", "tool", tool)
		c.lists.c.Invalidate(c.Cfg.Name, "tools/list")
		if cat, lerr := FetchCatalog(cctx, cs, c.lists); lerr == nil {
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
			err = fmt.Errorf("call %s.%s cancelled: %w", c.Cfg.Name, tool, ctx.Err())
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("call %s.%s: no result within the server's call_timeout of %s", c.Cfg.Name, tool, c.Cfg.CallTimeout)
		case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed), streamCut(err):
			// A bare "EOF" does not say that the server went away (it
			// exited, was killed or closed its end) while the call ran.
			err = fmt.Errorf("call %s.%s: the server's connection ended before it answered: %w", c.Cfg.Name, tool, err)
		default:
			err = fmt.Errorf("call %s.%s: %w", c.Cfg.Name, tool, err)
		}
		c.logger.Warn("tool call failed", "tool", tool, "err", err, "duration", time.Since(start))
		return nil, err
	}
	// Built only when logged: the attributes cost allocations on every
	// call, and the level is rarely debug.
	if c.logger.Enabled(ctx, slog.LevelDebug) {
		c.logger.Debug("tool call", "tool", tool, "is_error", res.IsError, "duration", time.Since(start))
	}
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

// RPCError returns the code and data of the JSON-RPC error a server
// answered with, when err is (or wraps) one; code 0 otherwise.
func RPCError(err error) (code int64, data json.RawMessage) {
	var we *jsonrpc.Error
	if err == nil || !errors.As(err, &we) {
		return 0, nil
	}
	return we.Code, we.Data
}

// isHeaderMismatch reports a JSON-RPC -32020 (HeaderMismatch) error.
func isHeaderMismatch(err error) bool {
	var we *jsonrpc.Error
	return err != nil && errors.As(err, &we) && we.Code == codeHeaderMismatch
}

// codeHeaderMismatch is MCP 2026-07-28's HeaderMismatch error code.
const codeHeaderMismatch = -32020
