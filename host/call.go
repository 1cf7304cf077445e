package host

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
