package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/mcphost/mcphost/host/internal/pipeline"
	"github.com/mcphost/mcphost/host/internal/questions"

	"github.com/mcphost/mcphost/host/internal/upstream"
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
// call's trail (questionsOf(call).asks).
func (h *Host) answerRounds(ctx context.Context, c *upstream.Conn, cs *mcp.ClientSession, call *upstream.Call, tool string, args json.RawMessage, res *mcp.CallToolResult, progress func(Progress)) (*mcp.CallToolResult, error) {
	for round := 1; res != nil && res.NeedsInput(); round++ {
		if round > maxInputRounds {
			return nil, fmt.Errorf("call %s.%s: the server still asks for input after %d rounds; mcphost answers at most %d", c.Cfg.Name, tool, maxInputRounds, maxInputRounds)
		}
		var responses mcp.InputResponseMap
		for _, id := range slices.Sorted(maps.Keys(res.InputRequests)) {
			if responses == nil {
				responses = mcp.InputResponseMap{}
			}
			switch p := res.InputRequests[id].(type) {
			case *mcp.ElicitParams:
				r, err := h.answerElicitation(ctx, call, round, p)
				var refusal *upstream.ElicitRefusal
				switch {
				case errors.As(err, &refusal):
					// An input response cannot be an error: the server
					// gets a decline with the reason in its _meta.
					h.opts.Logger.Warn("elicitation refused", "server", c.Cfg.Name, "tool", tool, "principal", call.Principal, "reason", refusal.Reason)
					r = upstream.Declined(refusal.Error())
				case err != nil:
					return nil, err
				}
				responses[id] = r
			case *mcp.ListRootsParams:
				responses[id] = &mcp.ListRootsResult{Roots: upstream.ConfigRoots(c.CurrentRoots())}
				questionsOf(call).asks.add(pipeline.InputAsk{Round: round, Kind: "roots", Outcome: "answered"})
			case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
				questionsOf(call).asks.add(pipeline.InputAsk{Round: round, Kind: "sampling", Outcome: questions.ElicitRefused, Reason: upstream.SamplingRefusal})
				return nil, fmt.Errorf("call %s.%s: the server asked to sample a model: %s", c.Cfg.Name, tool, upstream.SamplingRefusal)
			default:
				return nil, fmt.Errorf("call %s.%s: the server asked for input of an unknown kind (%T)", c.Cfg.Name, tool, p)
			}
		}
		in := &CallInput{Responses: responses, RequestState: res.RequestState, Own: true}
		var err error
		res, err = c.CallTool(ctx, cs, tool, args, in, progress)
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}
