package gateway

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that needs input within a request answers input_required
// (SEP-2322; research/gateway-and-scale.md §1.5). The gateway relays the
// answer to a 2026-07-28 client as it came, except for its requestState,
// which it seals, and passes the client's retry on; for a legacy client,
// which has no input_required, it asks the client itself (elicitation,
// sampling, roots on the client's session) and retries, round after round.

// Bounds of the rounds the gateway runs for a legacy client: go-sdk's own.
const (
	maxInputRounds     = 10
	maxSheddingRetries = 3
)

// requestStateTTL bounds how long a client may take to answer a round.
const requestStateTTL = time.Hour

// sealPrefix marks the gateway's sealed requestState (version 1).
const sealPrefix = "mh1."

// sealer seals the requestState of a server's input_required answer before
// a client sees it, and opens it in the client's retry, so that a client
// can neither read nor alter what the server keeps there, nor replay it as
// another principal, on another endpoint, or for another tool, prompt or
// resource (the binding, authenticated as associated data), nor after
// requestStateTTL. Format: "mh1." + base64url(nonce ‖ AES-256-GCM(expiry ‖
// state)).
type sealer struct {
	aead cipher.AEAD
	now  func() time.Time
}

func newSealer(key []byte) (sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealer{}, fmt.Errorf("gateway: requestState key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealer{}, fmt.Errorf("gateway: requestState key: %w", err)
	}
	return sealer{aead: aead, now: time.Now}, nil
}

// binding names what a requestState is for: the principal, the endpoint,
// the method and the served name of the tool or prompt, or the URI.
func binding(principal, endpoint, method, name string) []byte {
	return []byte(sealPrefix + "\x00" + principal + "\x00" + endpoint + "\x00" + method + "\x00" + name)
}

func (s sealer) seal(bind []byte, state string) string {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	plain := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(state)), uint64(s.now().Add(requestStateTTL).Unix()))
	plain = append(plain, state...)
	return sealPrefix + base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, bind))
}

// errBadState is every reason a requestState does not open; the client
// learns no more than that.
var errBadState = errors.New("invalid requestState: not one this gateway issued for this request, or expired")

func (s sealer) open(bind []byte, token string) (string, error) {
	raw, ok := strings.CutPrefix(token, sealPrefix)
	if !ok {
		return "", errBadState
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	n := s.aead.NonceSize()
	if err != nil || len(b) < n {
		return "", errBadState
	}
	plain, err := s.aead.Open(nil, b[:n], b[n:], bind)
	if err != nil || len(plain) < 8 {
		return "", errBadState
	}
	if time.Unix(int64(binary.BigEndian.Uint64(plain)), 0).Before(s.now()) {
		return "", errBadState
	}
	return string(plain[8:]), nil
}

// inputOf is what a request relays to the server for input requests: the
// client's capabilities and, in a retry, its answers and the server's
// requestState, unsealed. A requestState that does not open is -32602.
func (e *endpoint) inputOf(c host.Caller, req mcp.Request, method, name string, responses mcp.InputResponseMap, state string) (*host.CallInput, error) {
	type capser interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}
	in := &host.CallInput{Responses: responses}
	if r, ok := req.(capser); ok {
		in.Capabilities = r.ClientCapabilities()
	}
	if state != "" {
		s, err := e.g.seal.open(binding(c.Name, e.path, method, name), state)
		if err != nil {
			return nil, &jsonrpc.Error{Code: codeInvalidParams, Message: err.Error()}
		}
		in.RequestState = s
	}
	return in, nil
}

// modernClient reports whether a request speaks 2026-07-28 or later, so
// that an input_required answer can go to it as it is.
func modernClient(req mcp.Request) bool {
	type versioner interface{ ProtocolVersion() string }
	r, ok := req.(versioner)
	return ok && r.ProtocolVersion() >= modernVersion
}

// inputAnswer is a result a server may answer input_required with.
type inputAnswer interface {
	*mcp.CallToolResult | *mcp.GetPromptResult | *mcp.ReadResourceResult
	NeedsInput() bool
}

// inputParts returns the input requests and the requestState of r.
func inputParts[R inputAnswer](r R) (*mcp.InputRequestMap, *string) {
	switch v := any(r).(type) {
	case *mcp.CallToolResult:
		return &v.InputRequests, &v.RequestState
	case *mcp.GetPromptResult:
		return &v.InputRequests, &v.RequestState
	case *mcp.ReadResourceResult:
		return &v.InputRequests, &v.RequestState
	}
	panic(fmt.Sprintf("gateway: %T is no inputAnswer", r))
}

// shallowCopy returns a copy of r that keeps its resultType.
func shallowCopy[R inputAnswer](r R) R {
	switch v := any(r).(type) {
	case *mcp.CallToolResult:
		cp := *v
		return any(&cp).(R)
	case *mcp.GetPromptResult:
		cp := *v
		return any(&cp).(R)
	case *mcp.ReadResourceResult:
		cp := *v
		return any(&cp).(R)
	}
	panic(fmt.Sprintf("gateway: %T is no inputAnswer", r))
}

// relayInput answers a request (method, of the tool, prompt or URI name)
// whose server answered input_required (res): a 2026-07-28 client gets the
// answer with the requestState sealed; a legacy client, which knows no
// such answer, is asked on its session, round after round, and gets the
// complete answer (call makes each next round).
func relayInput[R inputAnswer](ctx context.Context, e *endpoint, c host.Caller, req mcp.Request, ss *mcp.ServerSession,
	method, name string, in *host.CallInput, res R, call func(*host.CallInput) (R, error)) (R, error) {
	if !modernClient(req) {
		return inputRounds(ctx, ss, in, res, call)
	}
	cp := shallowCopy(res)
	requests, state := inputParts(cp)
	if *state != "" {
		*state = e.g.seal.seal(binding(c.Name, e.path, method, name), *state)
	}
	if *requests == nil {
		*requests = mcp.InputRequestMap{} // a retry-later round, as go-sdk's client reads one
	}
	return cp, nil
}

// inputRounds answers a legacy client's request whose server asked for
// input: it puts each round's input requests to the client on its session
// and calls again (call, with the answers and the server's requestState)
// until the answer is complete, within go-sdk's bounds.
func inputRounds[R inputAnswer](ctx context.Context, ss *mcp.ServerSession, in *host.CallInput, res R, call func(*host.CallInput) (R, error)) (R, error) {
	var zero R
	shedding := 0
	for round := 1; res.NeedsInput(); round++ {
		requests, state := inputParts(res)
		if len(*requests) == 0 {
			shedding++
		}
		if shedding >= maxSheddingRetries || round >= maxInputRounds {
			return zero, &jsonrpc.Error{Code: codeServerError, Message: fmt.Sprintf("the server still asks for input after %d rounds; giving up", round)}
		}
		responses := mcp.InputResponseMap{}
		for id, ir := range *requests {
			resp, err := askClient(ctx, ss, ir)
			if err != nil {
				return zero, &jsonrpc.Error{Code: codeServerError, Message: fmt.Sprintf("the server asked for input the client did not give (%s): %v", id, err)}
			}
			responses[id] = resp
		}
		next := *in
		next.Responses, next.RequestState = responses, *state
		var err error
		if res, err = call(&next); err != nil {
			return zero, err
		}
	}
	return res, nil
}

// askClient puts one input request to a legacy client: go-sdk refuses
// what the client did not declare.
func askClient(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.InputResponse, error) {
	if ss == nil {
		return nil, errors.New("no client session to ask")
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		return ss.Elicit(ctx, p)
	case *mcp.CreateMessageParams:
		return ss.CreateMessage(ctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return ss.CreateMessageWithTools(ctx, p)
	case *mcp.ListRootsParams:
		return ss.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("unknown input request %T", ir)
}
