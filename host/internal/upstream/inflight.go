package upstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Calls are a connection's running tool calls. A legacy server's
// elicitation/create arrives on the session every call shares, with
// nothing linking it to the call it belongs to; attribute picks the call.
type Calls struct {
	mu    sync.Mutex
	seq   atomic.Uint64
	calls map[uint64]*Call
}

// add registers call and returns the function that removes it.
func (f *Calls) add(call *Call) (remove func()) {
	call.seq = f.seq.Add(1)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[uint64]*Call{}
	}
	f.calls[call.seq] = call
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.calls, call.seq)
		f.mu.Unlock()
	}
}

// get returns the call in flight with sequence number seq, or nil.
func (f *Calls) get(seq uint64) *Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[seq]
}

// only returns the one call in flight on the shared session, or nil when
// there are none or several. A call on a per-client session does not
// count: nothing it causes comes on the shared session.
func (f *Calls) only() *Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var one *Call
	for _, c := range f.calls {
		if c.perClient.Load() {
			continue
		}
		if one != nil {
			return nil
		}
		one = c
	}
	return one
}

// attribute returns the call a server request on the shared session
// belongs to: the only call in flight; with several, all of one
// principal, that principal's most recent one. With calls of several
// principals in flight, or none, it returns nil and why.
func (f *Calls) attribute() (*Call, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var latest *Call
	principals := map[string]bool{}
	for _, c := range f.calls {
		principals[c.Principal] = true
		if latest == nil || c.seq > latest.seq {
			latest = c
		}
	}
	switch {
	case latest == nil:
		return nil, "no call is in flight on this server, so there is nobody to ask"
	case len(principals) > 1:
		return nil, fmt.Sprintf("calls of %d principals are in flight on this server's shared session, and the request does not say whose it is", len(principals))
	}
	return latest, ""
}

// legacyElicit is the ElicitationHandler of a server's client: it
// attributes the request to a call in flight and answers it as that
// call's door says (Deps.Elicit). A request that cannot be attributed
// is declined, with the reason logged and in the decline's _meta; one
// mcphost refuses (its schema or URL) is a JSON-RPC error with the reason.
func (c *Conn) legacyElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	call, why := c.relayedCall(req.Params), ""
	if call == nil {
		call, why = c.inflight.attribute()
	}
	if call == nil {
		c.logger.Warn("elicitation declined", "reason", why)
		return Declined(why), nil
	}
	if c.deps.Elicit == nil {
		return Declined("this host answers no elicitation"), nil
	}
	res, err := c.deps.Elicit(ctx, call, req.Params)
	if refusal, ok := err.(*ElicitRefusal); ok {
		c.logger.Warn("elicitation refused", "tool", call.Tool, "principal", call.Principal, "reason", refusal.Reason)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: refusal.Error()}
	}
	return res, err
}

// SamplingRefusal says why mcphost answers no sampling request.
const SamplingRefusal = "mcphost has no model: it does not answer sampling/createMessage; a server can sample only through the gateway, from an MCP client that samples"

// serverRequests is a receiving middleware of a server's client for the
// requests a server sends on a legacy session: elicitation/create goes to
// legacyElicit before go-sdk's own handling (which would refuse a
// password field, and checks nothing of mcphost's bounds), and
// sampling/createMessage is answered with SamplingRefusal (go-sdk's own
// answer names no host), without advertising sampling.
func (c *Conn) serverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "sampling/createMessage":
			c.logger.Info("sampling request refused")
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: SamplingRefusal}
		case "elicitation/create":
			if er, ok := req.(*mcp.ElicitRequest); ok {
				return c.legacyElicit(ctx, er)
			}
		}
		return next(ctx, method, req)
	}
}

// Call is a running call as its connection knows it: who made
// it, and how to ask its principal.
type Call struct {
	Principal string
	SessionID string
	CallID    string
	Server    string
	Tool      string
	seq       uint64          // set by inflightCalls.add
	Ctx       context.Context // the call's; an answer never outlives it
	// PassBack, set on a call the singleton relay makes for another
	// replica, puts the server's questions to that replica as they came
	// (singleton.go): it checks, asks and records them for its own call.
	PassBack func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// Log hears the server's log messages that belong to the call
	// (serverlog.go); nil: nobody but the log hears them. It must not
	// block: it is called as the message is read.
	Log func(*mcp.LoggingMessageParams)
	// perClient is set once the call goes on a per-client session
	// (perclient.go): messages on the shared session are not its.
	perClient atomic.Bool
}

// metaDeclineReason is the _meta key of a decline mcphost made itself,
// saying why (the server gets it with the decline).
const metaDeclineReason = "io.mcphost/declineReason"

// ElicitRefusal is a request mcphost refuses without asking anyone (its
// schema or URL is not acceptable); Reason goes to the server.
type ElicitRefusal struct{ Reason string }

func (e *ElicitRefusal) Error() string { return "mcphost refused the elicitation: " + e.Reason }

// Declined is a decline mcphost makes itself, with its reason in _meta.
func Declined(reason string) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "decline", Meta: mcp.Meta{metaDeclineReason: reason}}
}
