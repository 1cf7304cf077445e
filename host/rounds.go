package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxInputRounds bounds the input_required rounds (SEP-2322) the pipeline
// answers for one call before it gives up.
const maxInputRounds = 10

// answerRounds answers a 2026-07-28 server's input_required rounds for a
// door that does not relay them (every door but the gateway's), then
// retries the call with the responses and the byte-exact requestState,
// until the server answers or maxInputRounds have passed: elicitation
// through the call's door (answerElicitation), roots/list from the server
// block's roots, and sampling refused (mcphost has no model), which ends
// the call with an error that says so. Every request is recorded in the
// call's trail (call.asks).
func (h *Host) answerRounds(ctx context.Context, c *serverConn, cs *mcp.ClientSession, call *inflightCall, tool string, args json.RawMessage, res *mcp.CallToolResult, progress func(Progress)) (*mcp.CallToolResult, error) {
	for round := 1; res != nil && res.NeedsInput(); round++ {
		if round > maxInputRounds {
			return nil, fmt.Errorf("call %s.%s: the server still asks for input after %d rounds; mcphost answers at most %d", c.cfg.Name, tool, maxInputRounds, maxInputRounds)
		}
		var responses mcp.InputResponseMap
		for _, id := range sortedKeys(res.InputRequests) {
			if responses == nil {
				responses = mcp.InputResponseMap{}
			}
			switch p := res.InputRequests[id].(type) {
			case *mcp.ElicitParams:
				r, err := h.answerElicitation(ctx, call, round, p)
				var refusal *elicitRefusal
				switch {
				case errors.As(err, &refusal):
					// An input response cannot be an error: the server
					// gets a decline with the reason in its _meta.
					h.opts.Logger.Warn("elicitation refused", "server", c.cfg.Name, "tool", tool, "principal", call.principal, "reason", refusal.Reason)
					r = declined(refusal.Error())
				case err != nil:
					return nil, err
				}
				responses[id] = r
			case *mcp.ListRootsParams:
				responses[id] = &mcp.ListRootsResult{Roots: configRoots(c.currentRoots())}
				call.asks.add(InputAsk{Round: round, Kind: "roots", Outcome: "answered"})
			case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
				call.asks.add(InputAsk{Round: round, Kind: "sampling", Outcome: elicitRefused, Reason: samplingRefusal})
				return nil, fmt.Errorf("call %s.%s: the server asked to sample a model: %s", c.cfg.Name, tool, samplingRefusal)
			default:
				return nil, fmt.Errorf("call %s.%s: the server asked for input of an unknown kind (%T)", c.cfg.Name, tool, p)
			}
		}
		in := &CallInput{Responses: responses, RequestState: res.RequestState, own: true}
		var err error
		res, err = c.callTool(ctx, cs, tool, args, in, progress)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// configRoots are a server block's roots as MCP roots.
func configRoots(uris []string) []*mcp.Root {
	out := make([]*mcp.Root, 0, len(uris))
	for _, u := range uris {
		out = append(out, &mcp.Root{URI: u})
	}
	return out
}

// currentRoots returns the server's roots.
func (c *serverConn) currentRoots() []string {
	c.rootsMu.Lock()
	defer c.rootsMu.Unlock()
	return c.roots
}

// setRoots replaces the server's roots (a reload that changed only them):
// the current session's client drops the old ones and adds the new ones,
// and go-sdk sends notifications/roots/list_changed for each change, so a
// legacy server lists them again; a 2026-07-28 server gets them in its
// next roots/list round.
func (c *serverConn) setRoots(roots []string) {
	c.rootsMu.Lock()
	old, client := c.roots, c.client
	c.roots = roots
	c.rootsMu.Unlock()
	if slices.Equal(old, roots) || client == nil {
		return
	}
	var gone []string
	for _, r := range old {
		if !slices.Contains(roots, r) {
			gone = append(gone, r)
		}
	}
	var added []*mcp.Root
	for _, r := range roots {
		if !slices.Contains(old, r) {
			added = append(added, &mcp.Root{URI: r})
		}
	}
	if len(gone) > 0 {
		client.RemoveRoots(gone...)
	}
	client.AddRoots(added...)
	c.logger.Info("roots changed", "roots", len(roots), "added", len(added), "removed", len(gone))
}
