package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An `ask` rule on a call of a 2026-07-28 client that can elicit is put to
// the client in an input_required round of the gateway's own: the answer
// carries an elicitation (approve: boolean) under approvalKey and a sealed
// requestState naming the call (the principal, endpoint and tool bound as
// for a server's state, and a digest of the arguments inside), and the
// client's retry carries its answer. The upstream sees neither. A client
// that cannot elicit, or a retry whose arguments differ, is asked again or
// waits for the WebShell, as before.

// approvalKey names the gateway's input request in a round.
const approvalKey = "mcphost.approval"

// approvalStatePrefix starts the gateway's own requestState payload (a
// server's state never does: it is sealed whole, and this one is told
// apart before it is handed on).
const approvalStatePrefix = "mcphost-approval\x00"

// argsDigest is a digest of a call's arguments that does not depend on the
// order a client writes object members in.
func argsDigest(raw json.RawMessage) string {
	var v any
	if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			raw = b
		}
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// clientApproval is what a retry says of the gateway's approval round.
type clientApproval struct {
	answered bool   // the retry answers an approval round of this call
	outcome  string // host.ApprovalApproved or host.ApprovalDenied
}

// takeApproval takes the gateway's approval round out of in: its state and
// the client's answer, which the upstream never sees.
func takeApproval(in *host.CallInput, args json.RawMessage) clientApproval {
	if in == nil {
		return clientApproval{}
	}
	digest, ok := strings.CutPrefix(in.RequestState, approvalStatePrefix)
	if !ok {
		return clientApproval{}
	}
	in.RequestState = ""
	answer := in.Responses[approvalKey]
	if in.Responses != nil {
		in.Responses = maps.Clone(in.Responses)
		delete(in.Responses, approvalKey)
		if len(in.Responses) == 0 {
			in.Responses = nil
		}
	}
	if digest != argsDigest(args) {
		return clientApproval{} // another call's approval: ask again
	}
	out := clientApproval{answered: true, outcome: host.ApprovalDenied}
	if er, ok := answer.(*mcp.ElicitResult); ok && er.Action == "accept" {
		if v, _ := er.Content["approve"].(bool); v {
			out.outcome = host.ApprovalApproved
		}
	}
	return out
}

// approvalSchema is the form an `ask` is put to a client with.
func approvalSchema(msg string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"approve": map[string]any{"type": "boolean", "title": "Run this call", "description": msg},
		},
		"required": []string{"approve"},
	}
}

func approvalMessage(a host.Approval) string {
	return fmt.Sprintf("mcphost asks before %s.%s runs: %s", a.Server, a.Tool, a.Message)
}

// modernApproval answers an `ask` for a 2026-07-28 client that declared
// elicitation: with the answer its retry carries, or by putting the
// question to it in a round (host.ApprovalAskClient).
func modernApproval(r *mcp.CallToolRequest, approval clientApproval) func(context.Context, host.Approval) (string, bool) {
	if approval.answered {
		return func(context.Context, host.Approval) (string, bool) { return approval.outcome, true }
	}
	caps := r.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return nil // the WebShell answers
	}
	return func(context.Context, host.Approval) (string, bool) { return host.ApprovalAskClient, true }
}

// approvalRound is the input_required answer that puts an `ask` to the
// client.
func (e *endpoint) approvalRound(c host.Caller, name string, args json.RawMessage, a host.Approval) *mcp.CallToolResult {
	msg := approvalMessage(a)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalKey: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: approvalSchema(msg)}},
		RequestState:  e.g.seal.seal(binding(c.Name, e.path, "tools/call", name), approvalStatePrefix+argsDigest(args)),
	}
}
