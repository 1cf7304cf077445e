package upstream

// Tool calls the Conn makes itself.
//
// go-sdk's client runs a tools/call through three goroutines: the caller
// writes the POST, a reader goroutine of the response parses its events
// and queues each message, and the session's reader takes them off the
// queue and wakes the caller with the answer. Every message is decoded
// through a stream decoder with a fresh 32 KB buffer, and the result once
// more. At one caller these hand-offs were the largest part of what a
// call through the gateway cost beyond a bare relay's (issue 33).
//
// So in the common case the Conn makes the call itself, on the session
// go-sdk opened: it POSTs the call and reads the answer (a JSON body or an
// event stream) on the caller's goroutine, decoding each message once.
// The common case (ownCallable) is a call on the server's shared session
// (a per-client session's questions go to the gateway's client, through
// handlers of its own), over Streamable HTTP, of a server that is not a
// singleton (its session may be a relay through another replica), with
// no input to relay; on a 2026-07-28 session, of a tool whose schema binds
// no headers (x-mcp-header), with the metadata go-sdk adds to each
// request (modernMeta). Every other call goes through go-sdk as before.
//
// The call does what go-sdk's does:
//   - the same POST through the server's HTTP client: its configured
//     headers, OAuth, the standard headers and the answer check of
//     internal/transport (a stray answer becomes an error answer, log
//     messages and progress are heard as they are read);
//   - the server's requests on the stream are answered as the session's
//     client answers them (answerServer), each answer POSTed on the
//     session;
//   - progress, list changes and resource updates on the stream go to the
//     session's handlers (progress is delivered before the call returns,
//     as progress.go promises);
//   - a stream that ends before the answer, after events with ids, is
//     resumed with Last-Event-ID, up to ownResumeMax times without
//     progress;
//   - a call given up sends notifications/cancelled;
//   - an HTTP error is reported as go-sdk reports it, and one that go-sdk
//     takes to break the session closes the session, so the Conn connects
//     again.
//
// Its ids start at ownIDBase, far above go-sdk's on a session (it counts
// from 1), so the two never meet, and within 32 bits for servers that
// keep ids in them.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

const (
	// ownIDBase is the first id of the Conn's own calls.
	ownIDBase = 1 << 30
	// ownResumeMax is how many times a call's stream is resumed without
	// progress (go-sdk's MaxRetries for remote sessions).
	ownResumeMax = 2
	// ownResumeDelay is the wait before the first resumption, when the
	// server named none (retry:); each next one waits half as long again,
	// up to ownResumeDelayMax (go-sdk's schedule).
	ownResumeDelay    = time.Second
	ownResumeDelayMax = 30 * time.Second
	// ownNotifyTimeout bounds sending notifications/cancelled and an
	// answer to a server's request (go-sdk's bound for the former).
	ownNotifyTimeout = 5 * time.Second
	// ownMethod is the method of the calls the Conn makes itself.
	ownMethod = "tools/call"
)

// rejected is go-sdk's words for a request the server refused without
// breaking the session (jsonrpc2.ErrRejected), which its errors carry.
const rejected = "rejected by transport"

// errNoAnswer is go-sdk's words for a call stream that ended without the
// answer and cannot be resumed (streamCut recognises them).
var errNoAnswer = errors.New("request terminated without response")

// ownCallable reports whether the Conn makes the call of params on cs
// itself (see the top of this file).
func (c *Conn) ownCallable(cs *mcp.ClientSession, params *mcp.CallToolParams) bool {
	if c.sdkCalls.Load() || params.InputResponses != nil || params.RequestState != "" ||
		c.place != nil || c.Cfg.Transport != config.TransportStreamableHTTP {
		return false
	}
	ir := cs.InitializeResult()
	if ir == nil {
		return false
	}
	c.mu.Lock()
	shared, cat, caps := c.session == cs, c.cat, c.sharedCaps
	c.mu.Unlock()
	if !shared {
		return false
	}
	if ir.ProtocolVersion >= modernProtocolVersion {
		// go-sdk sends the headers a tool's schema binds (x-mcp-header),
		// and the metadata of every modern request (modernMeta).
		t := cat.ToolIndex[params.Name]
		return caps != nil && (t == nil || !bindsHeaders(t))
	}
	return true
}

// bindsHeaders reports whether t's input schema binds arguments to
// headers (x-mcp-header, SEP-2243).
func bindsHeaders(t *mcp.Tool) bool {
	schema, ok := t.InputSchema.(json.RawMessage)
	if !ok {
		var err error
		if schema, err = json.Marshal(t.InputSchema); err != nil {
			return true
		}
	}
	return bytes.Contains(schema, []byte(`"x-mcp-header"`))
}

// modernMeta is params' metadata with what go-sdk adds to every request
// of a 2026-07-28 session (injectRequestMeta): the protocol version, the
// client's name and version and its capabilities, each unless params
// carry it already (a gateway client's capabilities, relayed).
func (c *Conn) modernMeta(params *mcp.CallToolParams, version string) mcp.Meta {
	c.mu.Lock()
	caps := c.sharedCaps
	c.mu.Unlock()
	m := maps.Clone(params.Meta)
	if m == nil {
		m = mcp.Meta{}
	}
	if _, ok := m[mcp.MetaKeyProtocolVersion]; !ok {
		m[mcp.MetaKeyProtocolVersion] = version
	}
	if _, ok := m[mcp.MetaKeyClientInfo]; !ok {
		m[mcp.MetaKeyClientInfo] = &mcp.Implementation{Name: "mcphost", Version: c.deps.Version}
	}
	if _, ok := m[mcp.MetaKeyClientCapabilities]; !ok {
		m[mcp.MetaKeyClientCapabilities] = &capabilitiesV2{ClientCapabilities: *caps, Roots: caps.RootsV2}
	}
	return m
}

// capabilitiesV2 is how go-sdk writes a client's capabilities in a
// request's metadata: roots from RootsV2.
type capabilitiesV2 struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// ownCall makes the tools/call of params on cs itself.
func (c *Conn) ownCall(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	id := ownIDBase + c.ownIDs.Add(1)
	version := cs.InitializeResult().ProtocolVersion
	if version >= modernProtocolVersion {
		p := *params
		p.Meta = c.modernMeta(params, version)
		params = &p
	}
	body, err := encodeOwnCall(id, params)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", ownMethod, err)
	}
	req, err := c.sessionRequest(ctx, cs, http.MethodPost, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", ownMethod, err)
	}
	// The standard headers the header shim would add after reading the
	// body again (transport.HeaderShim).
	req.Header.Set("Mcp-Method", ownMethod)
	if plainHeader(params.Name) {
		req.Header.Set("Mcp-Name", params.Name)
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.ownCancelled(ctx, cs, id)
		}
		return nil, fmt.Errorf("calling %q: sending %q: %s: %w", ownMethod, ownMethod, rejected, err)
	}
	if err := c.ownStatus(cs, resp); err != nil {
		return nil, fmt.Errorf("calling %q: %w", ownMethod, err)
	}
	m, err := c.ownAnswer(ctx, cs, id, resp)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.ownCancelled(ctx, cs, id)
		}
		return nil, fmt.Errorf("calling %q: %w", ownMethod, err)
	}
	return m.result()
}

// ownAnswer reads the answer to call id from resp, a 2xx response: one
// JSON message, or an event stream (ownStream). Another content type
// breaks go-sdk's connection, so the session is closed.
func (c *Conn) ownAnswer(ctx context.Context, cs *mcp.ClientSession, id int64, resp *http.Response) (ownMessage, error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return ownMessage{}, errNoAnswer
		}
		var m ownMessage
		if err := m.decode(data); err != nil {
			return ownMessage{}, err
		}
		if !m.answers(id) {
			return ownMessage{}, errors.New("the server's JSON answer is not the answer to the call")
		}
		return m, nil
	case "text/event-stream":
		return c.ownStream(ctx, cs, id, resp)
	default:
		resp.Body.Close()
		go cs.Close()
		return ownMessage{}, fmt.Errorf("sending %q: unsupported content type %q", ownMethod, ct)
	}
}

// sessionRequest is a request of method on cs's session, as go-sdk makes
// them: the media types, the session id and the protocol version.
func (c *Conn) sessionRequest(ctx context.Context, cs *mcp.ClientSession, method string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Cfg.URL, body)
	if err != nil {
		return nil, err
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if ir := cs.InitializeResult(); ir != nil {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
	}
	if sid := cs.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return req, nil
}

// plainHeader reports whether v can go out as a header value as it is.
func plainHeader(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] == 0x7f {
			return false
		}
	}
	return v != ""
}

// encodeOwnCall is the tools/call request id for params, as go-sdk
// writes it (no HTML escaping, arguments {} when there are none).
func encodeOwnCall(id int64, params *mcp.CallToolParams) ([]byte, error) {
	if b, ok := encodePlainCall(id, params); ok {
		return b, nil
	}
	return encodeCallJSON(id, params)
}

// encodeCallJSON is encodeOwnCall's encoding through encoding/json.
func encodeCallJSON(id int64, params *mcp.CallToolParams) ([]byte, error) {
	p := *params
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	var b bytes.Buffer
	b.Grow(128)
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(`,"method":"` + ownMethod + `","params":`)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&p); err != nil {
		return nil, err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodePlainCall is encodeOwnCall's encoding of the common call, written
// without reflection: raw arguments, a name and metadata of strings that
// need no escaping (a progress token), no input round. ok is false for any
// other call, which encodeOwnCall encodes through encoding/json.
func encodePlainCall(id int64, p *mcp.CallToolParams) (_ []byte, ok bool) {
	args, raw := p.Arguments.(json.RawMessage)
	if !raw || len(args) == 0 || p.InputResponses != nil || p.RequestState != "" || !plainJSON(p.Name) {
		return nil, false
	}
	b := make([]byte, 0, 128+len(args))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"`+ownMethod+`","params":{`...)
	if len(p.Meta) > 0 {
		b = append(b, `"_meta":{`...)
		for i, k := range slices.Sorted(maps.Keys(p.Meta)) { // as encoding/json orders a map
			v, ok := p.Meta[k].(string)
			if !ok || !plainJSON(k) || !plainJSON(v) {
				return nil, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k...)
			b = append(b, `":"`...)
			b = append(b, v...)
			b = append(b, '"')
		}
		b = append(b, "},"...)
	}
	b = append(b, `"name":"`...)
	b = append(b, p.Name...)
	b = append(b, `","arguments":`...)
	buf := bytes.NewBuffer(b)
	if json.Compact(buf, args) != nil {
		return nil, false // encoding/json reports it
	}
	buf.WriteString("}}")
	return buf.Bytes(), true
}

// plainJSON reports whether s is written in JSON as it is, between
// quotes, by an encoder that escapes HTML or not: printable ASCII but for
// the quote, the backslash and <, >, &.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// ownStatus checks the status of the call's response as go-sdk does
// (checkResponse): a JSON-RPC error in the body of a refusal is the
// error; a transient status (429, 502, 503, 504) leaves the session as
// it is; any other refusal, a 404 naming the session included, breaks
// it, and the session is closed so that the Conn connects again.
func (c *Conn) ownStatus(cs *mcp.ClientSession, resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return nil
	}
	defer resp.Body.Close()
	summary := fmt.Sprintf("sending %q", ownMethod)
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return fmt.Errorf("%s: %s: %s", rejected, summary, http.StatusText(resp.StatusCode))
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var m ownMessage
	if m.decode(data) == nil && m.Error != nil && len(m.Method) == 0 {
		return fmt.Errorf("%s: %w: %s: %s", summary, m.Error, rejected, http.StatusText(resp.StatusCode))
	}
	go cs.Close()
	if sid := cs.ID(); resp.StatusCode == http.StatusNotFound && sid != "" {
		return fmt.Errorf("%s: failed to connect (session ID: %v): %w", summary, sid, mcp.ErrSessionMissing)
	}
	return fmt.Errorf("%s: %s", summary, http.StatusText(resp.StatusCode))
}

// ownCancelled tells the server that call id was given up, off the
// caller's way (as go-sdk does), and returns ctx's error.
func (c *Conn) ownCancelled(ctx context.Context, cs *mcp.ClientSession, id int64) error {
	reason := ctx.Err().Error()
	go func() {
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ownNotifyTimeout)
		defer cancel()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
			"params": &mcp.CancelledParams{RequestID: id, Reason: reason}})
		c.postSession(nctx, cs, body)
	}()
	return ctx.Err()
}

// postSession POSTs body, a notification or an answer, on cs's session;
// the server accepts it with 202 and no body.
func (c *Conn) postSession(ctx context.Context, cs *mcp.ClientSession, body []byte) {
	req, err := c.sessionRequest(ctx, cs, http.MethodPost, bytes.NewReader(body))
	if err != nil {
		return
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		c.logger.Debug("a message to the server was not delivered", "err", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		c.logger.Warn("the server refused a message on its session", "status", resp.StatusCode)
	}
}

// ownStream reads the event stream of call id until its answer, answering
// the server's requests and hearing its notifications on the way, and
// resuming the stream when it ends early (see the top of the file). What
// is left of the stream after the answer is drained off the caller's way,
// so that the connection can carry the next request.
func (c *Conn) ownStream(ctx context.Context, cs *mcp.ClientSession, id int64, resp *http.Response) (ownMessage, error) {
	es := &eventStream{br: transport.NewStreamReader(resp.Body)}
	defer transport.FreeStreamReader(es.br)
	body := resp.Body
	lastID, failed := "", 0
	for {
		data, err := es.next()
		if err == nil && len(data) == 0 {
			continue // a priming event: an id to resume from, no message
		}
		if err == nil {
			var m ownMessage
			if derr := m.decode(data); derr != nil {
				body.Close()
				return ownMessage{}, derr
			}
			if m.answers(id) {
				go drain(body)
				return m, nil
			}
			c.ownHeard(ctx, cs, &m)
			continue
		}
		body.Close()
		if ctx.Err() != nil || es.tooLarge {
			return ownMessage{}, err
		}
		if es.lastID == "" {
			return ownMessage{}, errNoAnswer
		}
		if es.lastID != lastID {
			lastID, failed = es.lastID, 0
		}
		if failed++; failed > ownResumeMax {
			return ownMessage{}, fmt.Errorf("%w after %d attempts to resume its stream", errNoAnswer, ownResumeMax)
		}
		if body, err = c.resumeStream(ctx, cs, es, failed); err != nil {
			return ownMessage{}, err
		}
	}
}

// resumeStream waits as go-sdk would before the attempt-th resumption of a
// call's stream (the server's retry:, or a growing delay), then asks for
// the events after es.lastID, and points es at the new stream.
func (c *Conn) resumeStream(ctx context.Context, cs *mcp.ClientSession, es *eventStream, attempt int) (io.ReadCloser, error) {
	delay := es.retry
	if delay <= 0 {
		delay = min(time.Duration(float64(ownResumeDelay)*math.Pow(1.5, float64(attempt-1))), ownResumeDelayMax)
	}
	t := time.NewTimer(delay)
	select {
	case <-ctx.Done():
		t.Stop()
		return nil, ctx.Err()
	case <-t.C:
	}
	req, err := c.sessionRequest(ctx, cs, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Last-Event-ID", es.lastID)
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("resuming the call's stream: %w", err)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("resuming the call's stream: %s, %q", resp.Status, ct)
	}
	es.br.Reset(resp.Body)
	return resp.Body, nil
}

// drain reads body to its end and closes it: a body closed before its end
// loses its connection. The answer check bounds how long this waits
// (transport.heldStream).
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, body)
	body.Close()
}

// ownHeard handles a message of the call's stream that is not its answer:
// a request of the server's is answered (on a goroutine of its own, as
// go-sdk answers them: a question may wait for a person, and the server
// may send more meanwhile), a notification goes where the session's
// would. Log messages and progress were heard as they were read
// (AnswerCheck.OnMessage); an answer to anything else was made an error
// answer to the call by the same check.
func (c *Conn) ownHeard(ctx context.Context, cs *mcp.ClientSession, m *ownMessage) {
	var method string
	if len(m.Method) == 0 || sjson.Unmarshal(m.Method, &method) != nil {
		return
	}
	if len(m.ID) > 0 && string(m.ID) != "null" {
		go c.answerServer(ctx, cs, m.ID, method, m.Params)
		return
	}
	switch method {
	case methodProgress:
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.deliverProgress(&p)
		}
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		c.mu.Lock()
		refresh := c.refresh
		c.mu.Unlock()
		if refresh != nil {
			list := method[len("notifications/") : len(method)-len("_changed")]
			c.listChangedHeard(list, refresh)
		}
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(m.Params, &p) == nil {
			c.resourceUpdatedHeard(ctx, &p)
		}
	}
}
