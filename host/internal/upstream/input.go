package upstream

import (
	"maps"

	"github.com/mcphost/mcphost/apps"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallInput is what a gateway client relays for a server that asks for
// input within a request (input_required, SEP-2322): the capabilities the
// client declared, which the server sees instead of mcphost's own (with
// mcphost's extensions), so that it asks only for what the client can
// answer; and, in a retry, the client's answers and the server's
// requestState as the server issued it (the gateway unseals its own token
// first). Only a server on a 2026-07-28 session sees any of it; a legacy
// server never asks that way.
type CallInput struct {
	Capabilities *mcp.ClientCapabilities
	Responses    mcp.InputResponseMap
	RequestState string
	// Own: mcphost answered the round itself (rounds.go), so the request
	// declares mcphost's own capabilities (go-sdk adds them), not a
	// client's.
	Own bool
}

// Retry reports whether in answers an earlier input request: such a
// request neither comes from nor goes into the cache.
func (in *CallInput) Retry() bool {
	return in != nil && (in.Responses != nil || in.RequestState != "")
}

// Relay returns the _meta, inputResponses and requestState of a request on
// cs: meta with the client's capabilities when cs is a 2026-07-28 session,
// else meta as it is and nothing else.
func (in *CallInput) Relay(cs *mcp.ClientSession, meta mcp.Meta) (mcp.Meta, mcp.InputResponseMap, string) {
	if in == nil {
		return meta, nil, ""
	}
	if ir := cs.InitializeResult(); ir == nil || ir.ProtocolVersion < modernProtocolVersion {
		return meta, nil, ""
	}
	if in.Own {
		return meta, in.Responses, in.RequestState
	}
	out := maps.Clone(meta)
	if out == nil {
		out = mcp.Meta{}
	}
	out[mcp.MetaKeyClientCapabilities] = relayedCapabilities(in.Capabilities)
	return out, in.Responses, in.RequestState
}

// modernProtocolVersion is the first revision with input_required.
const modernProtocolVersion = "2026-07-28"

// relayedCapabilities is what a server sees of a gateway client's
// capabilities: the ones a server can ask for input through (elicitation,
// sampling, roots), as the client declared them, and mcphost's own
// extensions (the Apps it renders); never the client's other extensions,
// whose requests (tasks, say) the gateway does not relay.
func relayedCapabilities(client *mcp.ClientCapabilities) map[string]any {
	own := &mcp.ClientCapabilities{}
	apps.Advertise(own)
	out := map[string]any{"extensions": own.Extensions}
	if client == nil {
		return out
	}
	if client.Elicitation != nil {
		out["elicitation"] = client.Elicitation
	}
	if client.Sampling != nil {
		out["sampling"] = client.Sampling
	}
	switch {
	case client.RootsV2 != nil:
		out["roots"] = client.RootsV2
	case client.Roots.ListChanged:
		out["roots"] = map[string]any{"listChanged": true}
	}
	return out
}
