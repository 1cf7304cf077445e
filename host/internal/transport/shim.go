package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// maxShimBody bounds the request bodies the header shim looks into; larger
// bodies pass through untouched.
const maxShimBody = 4 << 20

// HeaderShim fills in the standard MCP request headers that go-sdk leaves
// out on legacy Streamable HTTP sessions (trap T12 in protocol.md §2.3):
// Mcp-Method on every POST of one JSON-RPC message, Mcp-Name on tools/call,
// prompts/get (params.name) and resources/read (params.uri), and
// MCP-Protocol-Version on the initialize POST (params.protocolVersion). It
// never overwrites a header that is already set, so on modern sessions,
// where the SDK sets them all, it does nothing. Mcp-Name goes out raw, as
// go-sdk sends it, so both eras behave alike.
//
// It also adds the server's configured headers (static), again never
// overwriting one the SDK set. Each request is cloned once, here.
type HeaderShim struct {
	Base   http.RoundTripper
	Static map[string]string // configured headers, set on every request
	// Traced says whether traces are on (upstream.Tracing): only then is
	// the trace context injected. Without a tracer provider the global
	// propagator is a no-op behind a mutex that every request took.
	// nil: always inject.
	Traced func() bool
}

// CloseIdleConnections closes the base transport's idle connections:
// http.Client.CloseIdleConnections reaches a transport only through this
// method, and a stopped or retired server must not leave its keep-alive
// connections open.
func (s HeaderShim) CloseIdleConnections() {
	if c, ok := s.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (s HeaderShim) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	// The trace of the call this request belongs to, when traces are on
	// (tracing.go): the W3C traceparent header.
	if s.Traced == nil || s.Traced() {
		otel.GetTextMapPropagator().Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	for k, v := range s.Static {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > maxShimBody {
		return s.Base.RoundTrip(req)
	}
	need := req.Header.Get("Mcp-Method") == "" || req.Header.Get("MCP-Protocol-Version") == ""
	if !need {
		return s.Base.RoundTrip(req)
	}
	// Read into one buffer of the size the request says (go-sdk's do),
	// not one that io.ReadAll grows four times for a 2 KB call.
	var buf bytes.Buffer
	if req.ContentLength > 0 {
		buf.Grow(int(req.ContentLength) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(io.LimitReader(req.Body, maxShimBody+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	body := buf.Bytes()
	if len(body) > maxShimBody {
		// Too large to look into: send it unchanged.
		return s.Base.RoundTrip(withBody(req, body))
	}
	req = withBody(req, body)
	msg, ok := readShimMessage(body)
	if !ok || msg.Method == "" {
		return s.Base.RoundTrip(req)
	}
	setIfEmpty := func(k, v string) {
		if v != "" && req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	setIfEmpty("Mcp-Method", msg.Method)
	switch msg.Method {
	case "tools/call", "prompts/get":
		setIfEmpty("Mcp-Name", msg.Params.Name)
	case "resources/read":
		setIfEmpty("Mcp-Name", msg.Params.URI)
	case "initialize":
		setIfEmpty("MCP-Protocol-Version", msg.Params.ProtocolVersion)
	}
	return s.Base.RoundTrip(req)
}

// withBody makes req's body (and GetBody) replay b; req is already the
// shim's own clone.
func withBody(req *http.Request, b []byte) *http.Request {
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return req
}

// shimMessage is what HeaderShim reads of a request.
type shimMessage struct {
	Method string `json:"method"`
	Params struct {
		Name            string `json:"name"`
		URI             string `json:"uri"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

var (
	shimNames      = []string{"method", "params"}
	shimParamNames = []string{"name", "uri", "protocolVersion"}
)

// readShimMessage reads body as json.Unmarshal into a shimMessage would,
// ok false where it fails. It looks at the members it needs
// (scanMembers) and decodes the body only when the look cannot tell. The
// look does not check the values it skips (the arguments): a body that is
// not JSON could get headers that json.Unmarshal would not have given it,
// but the body is go-sdk's encoding, which compacts (and so checks) even
// the raw arguments it is given.
func readShimMessage(body []byte) (msg shimMessage, ok bool) {
	if scanShimMessage(body, &msg) {
		return msg, true
	}
	msg = shimMessage{}
	return msg, json.Unmarshal(body, &msg) == nil
}

// scanShimMessage is readShimMessage from a look at body's members; false
// when the look cannot tell.
func scanShimMessage(body []byte, msg *shimMessage) bool {
	var top [2][]byte
	if !scanMembers(body, shimNames, top[:], true) {
		return false
	}
	var ok bool
	if msg.Method, ok = plainString(top[0]); !ok {
		return false
	}
	if top[1] == nil || string(top[1]) == "null" {
		return true
	}
	var p [3][]byte
	if !scanMembers(top[1], shimParamNames, p[:], true) {
		return false
	}
	for i, f := range []*string{&msg.Params.Name, &msg.Params.URI, &msg.Params.ProtocolVersion} {
		if *f, ok = plainString(p[i]); !ok {
			return false
		}
	}
	return true
}
