package host

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inflightCalls are a connection's running tool calls. A legacy server's
// elicitation/create arrives on the session every call shares, with
// nothing linking it to the call it belongs to; attribute picks the call.
type inflightCalls struct {
	mu    sync.Mutex
	seq   atomic.Uint64
	calls map[uint64]*inflightCall
}

// add registers call and returns the function that removes it.
func (f *inflightCalls) add(call *inflightCall) (remove func()) {
	call.seq = f.seq.Add(1)
	f.mu.Lock()
	if f.calls == nil {
		f.calls = map[uint64]*inflightCall{}
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
func (f *inflightCalls) get(seq uint64) *inflightCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[seq]
}

// only returns the one call in flight on the shared session, or nil when
// there are none or several. A call on a per-client session does not
// count: nothing it causes comes on the shared session.
func (f *inflightCalls) only() *inflightCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var one *inflightCall
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
func (f *inflightCalls) attribute() (*inflightCall, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var latest *inflightCall
	principals := map[string]bool{}
	for _, c := range f.calls {
		principals[c.principal] = true
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
// call's door says (Options.elicit). A request that cannot be attributed
// is declined, with the reason logged and in the decline's _meta; one
// mcphost refuses (its schema or URL) is a JSON-RPC error with the reason.
func (c *serverConn) legacyElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	call, why := c.relayedCall(req.Params), ""
	if call == nil {
		call, why = c.inflight.attribute()
	}
	if call == nil {
		c.logger.Warn("elicitation declined", "reason", why)
		return declined(why), nil
	}
	if c.opts.elicit == nil {
		return declined("this host answers no elicitation"), nil
	}
	res, err := c.opts.elicit(ctx, call, req.Params)
	if refusal, ok := err.(*elicitRefusal); ok {
		c.logger.Warn("elicitation refused", "tool", call.tool, "principal", call.principal, "reason", refusal.Reason)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: refusal.Error()}
	}
	return res, err
}

// samplingRefusal says why mcphost answers no sampling request.
const samplingRefusal = "mcphost has no model: it does not answer sampling/createMessage; a server can sample only through the gateway, from an MCP client that samples"

// serverRequests is a receiving middleware of a server's client for the
// requests a server sends on a legacy session: elicitation/create goes to
// legacyElicit before go-sdk's own handling (which would refuse a
// password field, and checks nothing of mcphost's bounds), and
// sampling/createMessage is answered with samplingRefusal (go-sdk's own
// answer names no host), without advertising sampling.
func (c *serverConn) serverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "sampling/createMessage":
			c.logger.Info("sampling request refused")
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: samplingRefusal}
		case "elicitation/create":
			if er, ok := req.(*mcp.ElicitRequest); ok {
				return c.legacyElicit(ctx, er)
			}
		}
		return next(ctx, method, req)
	}
}
