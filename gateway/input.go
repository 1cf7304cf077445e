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

// sealState returns the requestState a client gets for a server's: sealed,
// or empty when the server kept none.
func (e *endpoint) sealState(c host.Caller, method, name, state string) string {
	if state == "" {
		return ""
	}
	return e.g.seal.seal(binding(c.Name, e.path, method, name), state)
}

// inputRounds answers a legacy client's call whose server asked for input:
// it puts each round's input requests to the client on its session and
// calls again (call, with the answers and the server's requestState) until
// the answer is complete, within go-sdk's bounds. first is the first
// round's answer; requests and state read a round's answer.
func inputRounds[R mcp.Result](ctx context.Context, ss *mcp.ServerSession, in *host.CallInput, first R,
	needs func(R) (mcp.InputRequestMap, string, bool), call func(*host.CallInput) (R, error)) (R, error) {
	var zero R
	res := first
	shedding := 0
	for round := 1; ; round++ {
		requests, state, more := needs(res)
		if !more {
			return res, nil
		}
		if len(requests) == 0 {
			shedding++
		}
		if shedding >= maxSheddingRetries || round >= maxInputRounds {
			return zero, &jsonrpc.Error{Code: codeServerError, Message: fmt.Sprintf("the server still asks for input after %d rounds; giving up", round)}
		}
		responses := mcp.InputResponseMap{}
		for id, ir := range requests {
			resp, err := askClient(ctx, ss, ir)
			if err != nil {
				return zero, &jsonrpc.Error{Code: codeServerError, Message: fmt.Sprintf("the server asked for input the client did not give (%s): %v", id, err)}
			}
			responses[id] = resp
		}
		next := *in
		next.Responses, next.RequestState = responses, state
		var err error
		if res, err = call(&next); err != nil {
			return zero, err
		}
	}
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
