package transport

// Answers with an id mcphost never sent.
//
// go-sdk v1.8.0 matches a response to its call by id in its jsonrpc2
// connection (internal/jsonrpc2/conn.go, readIncoming). A response whose id
// matches no call in flight is dropped without a word ("TODO: How should we
// report unexpected responses?"), so the call it was meant for waits for its
// call_timeout. A response with a null or missing id does not even decode
// (jsonrpc2.DecodeMessage returns ErrInvalidRequest), the connection's Read
// fails, and jsonrpc2 ends the whole session with "invalid request" for
// every call in flight.
//
// mcphost checks the answers below go-sdk, where each transport allows:
//
//   - stdio and SSE: all answers of a session arrive on one stream, so
//     answerGuard wraps the session's mcp.Connection. It knows the ids it
//     wrote; a response with another id fails every call in flight at once
//     with strayMessage (it cannot tell which of them the server meant), and
//     the session stays up. A null id is recognised by go-sdk's decode error,
//     after which these two connections can be read again (the next message
//     is independent).
//   - Streamable HTTP: the answer to a call comes on the call's own POST
//     (a JSON body or an event stream), so AnswerCheck, in the session's
//     http.RoundTripper, knows exactly which call a stray answer was for and
//     turns that answer into an error answer to it; other calls are not
//     affected. It cannot be an mcp.Connection wrapper: go-sdk tells its
//     Streamable HTTP connection about the initialized session through an
//     unexported method (sessionUpdated), which a wrapper would hide.
//
// A response to an id mcphost did send, but that was already answered or
// cancelled, passes on (go-sdk drops it): the spec allows a late answer to a
// cancelled request. Neither check restarts the session: go-sdk's connection
// is fine, and a server whose one tool is broken keeps serving the others.
//
// The caller gets, at once, an error such as
// `call fx.tool: calling "tools/call": the server answered with id "abc",
// which mcphost never sent (a broken or hostile server)`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MethodProgress is the method of a progress notification, MethodLog of a
// log message.
const (
	MethodProgress = "notifications/progress"
	MethodLog      = "notifications/message"
)

// strayIDMax bounds an id quoted into an error.
const strayIDMax = 64

// strayMessage says that the server answered with id (as describeID renders
// it); inFlight > 1 adds that mcphost failed every call in flight.
func strayMessage(id string, inFlight int) string {
	msg := fmt.Sprintf("the server answered with id %s, which mcphost never sent (a broken or hostile server)", id)
	if inFlight > 1 {
		msg += fmt.Sprintf("; mcphost cannot tell which of the %d calls in flight it was for, so all of them fail", inFlight)
	}
	return msg
}

// describeID renders a JSON-RPC id for strayMessage: a number as it is, a
// string quoted (and cut), null as null.
func describeID(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return strconv.Quote(CutText(v, strayIDMax))
	}
	b, _ := json.Marshal(v)
	return CutText(string(b), strayIDMax)
}

// errNoID is the error go-sdk's decoder returns, unwrapped, for a message
// with neither a method nor an id: a response with a null or missing id.
var errNoID = func() error {
	_, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":null,"result":{}}`))
	return err
}()

// GuardAnswers wraps the transport of a stdio or SSE session in an
// answerGuard. Stray answers are logged through limit; notified hears each
// notification as it is read, before go-sdk handles it (nil: none).
func GuardAnswers(t mcp.Transport, logger *slog.Logger, limit *LogLimiter, notified func(method string, params json.RawMessage)) mcp.Transport {
	return answerGuardTransport{inner: t, logger: logger, limit: limit, notified: notified}
}

type answerGuardTransport struct {
	inner    mcp.Transport
	logger   *slog.Logger
	limit    *LogLimiter
	notified func(method string, params json.RawMessage) // progress and log messages are counted as read (host/progress.go, host/serverlog.go)
}

func (t answerGuardTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answerGuard{Connection: conn, logger: t.logger, limit: t.limit, notified: t.notified, pending: map[jsonrpc.ID]struct{}{}}, nil
}

// answerGuard is the mcp.Connection of a stdio or SSE session with the
// answers checked (see the top of this file). go-sdk reads from one
// goroutine and writes from many.
type answerGuard struct {
	mcp.Connection
	logger   *slog.Logger
	limit    *LogLimiter
	notified func(method string, params json.RawMessage)

	mu      sync.Mutex
	maxSent int64                   // go-sdk numbers its calls 1, 2, 3, …
	others  map[jsonrpc.ID]struct{} // any other id written (go-sdk writes none)
	pending map[jsonrpc.ID]struct{} // calls written, not yet answered or cancelled
	queue   []jsonrpc.Message       // error answers for Read to return (read side only)
}

func (g *answerGuard) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, _ := msg.(*jsonrpc.Request)
	switch {
	case req == nil:
	case req.IsCall():
		// Before the write: the answer may be read before Write returns.
		// A modern session's subscriptions/listen is answered only when it
		// ends (go-sdk never waits for it): not a call a stray answer fails.
		g.sent(req.ID, req.Method != "subscriptions/listen")
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				g.settle(id)
			}
		}
	}
	err := g.Connection.Write(ctx, msg)
	if err != nil && req != nil && req.IsCall() {
		g.settle(req.ID) // go-sdk fails the call itself
	}
	return err
}

func (g *answerGuard) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(g.queue) > 0 {
			msg := g.queue[0]
			g.queue = g.queue[1:]
			return msg, nil
		}
		msg, err := g.Connection.Read(ctx)
		if err != nil {
			if errNoID == nil || err != errNoID {
				return nil, err
			}
			g.stray(nil)
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && g.notified != nil {
			g.notified(req.Method, req.Params)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || g.answers(resp.ID) {
			if ok && resp.Error == nil {
				NoteToolsAnswer(resp.Result, true) // schemaorder.go
			}
			return msg, nil
		}
		g.stray(resp.ID.Raw())
	}
}

// sent records the id of a call being written, as in flight when wait.
func (g *answerGuard) sent(id jsonrpc.ID, wait bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if wait {
		g.pending[id] = struct{}{}
	}
	if n, ok := id.Raw().(int64); ok {
		g.maxSent = max(g.maxSent, n)
		return
	}
	if g.others == nil {
		g.others = map[jsonrpc.ID]struct{}{}
	}
	g.others[id] = struct{}{}
}

// settle forgets a call that will not be answered through the guard.
func (g *answerGuard) settle(id jsonrpc.ID) {
	g.mu.Lock()
	delete(g.pending, id)
	g.mu.Unlock()
}

// answers reports whether a response with id belongs to a call mcphost
// sent: one in flight, or one already answered or cancelled (a late or
// repeated answer, which go-sdk drops).
func (g *answerGuard) answers(id jsonrpc.ID) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.pending[id]; ok {
		delete(g.pending, id)
		return true
	}
	if n, ok := id.Raw().(int64); ok {
		return n >= 1 && n <= g.maxSent
	}
	_, ok := g.others[id]
	return ok
}

// stray fails every call in flight with the stray answer's error; with none
// in flight the answer is only logged.
func (g *answerGuard) stray(id any) {
	g.mu.Lock()
	inFlight := make([]jsonrpc.ID, 0, len(g.pending))
	for p := range g.pending {
		inFlight = append(inFlight, p)
	}
	clear(g.pending)
	g.mu.Unlock()
	desc := describeID(id)
	werr := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: strayMessage(desc, len(inFlight))}
	for _, p := range inFlight {
		g.queue = append(g.queue, &jsonrpc.Response{ID: p, Error: werr})
	}
	if g.limit.Allow() {
		g.logger.Warn("server answered with an id mcphost never sent", "id", desc, "calls_failed", len(inFlight))
	}
}

// AnswerCheck is the http.RoundTripper of remote servers that checks the
// answer to each JSON-RPC call POSTed by go-sdk (see the top of this
// file): a response on that POST with any other id becomes an error answer
// to the call. Only calls with integer ids (go-sdk's) are checked; the
// version probe uses string ids and matches its answer itself.
type AnswerCheck struct {
	Base http.RoundTripper
	// OnMessage hears each message of an event stream (a call's, and the
	// session's own GET stream) before go-sdk reads it, with the request
	// that opened the stream: progress notifications are counted
	// (host/progress.go), log messages routed (host/serverlog.go); nil
	// for none.
	OnMessage func(req *http.Request, data []byte)
}

// CloseIdleConnections passes on to the base transport (HeaderShim's).
func (a AnswerCheck) CloseIdleConnections() {
	if c, ok := a.Base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (a AnswerCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	id, ok := postedCallID(req)
	if !ok && (req.Method != http.MethodGet || a.OnMessage == nil) {
		return a.Base.RoundTrip(req)
	}
	heard := req
	var held heldStream
	if ok {
		req, held = holdStream(req)
	}
	resp, err := a.Base.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "application/json" && ok:
		resp.Body = &jsonAnswerCheck{body: resp.Body, id: id}
	case ct == "text/event-stream":
		// A GET stream answers no call: its messages are only heard.
		// Its read buffer is not pooled: go-sdk's SSE transport closes a
		// stream from another goroutine than the one reading it.
		resp.Body = &sseAnswerCheck{body: resp.Body, br: bufio.NewReader(resp.Body), id: id, hearOnly: !ok,
			onMessage: a.OnMessage, req: heard, held: held}
	}
	return resp, nil
}

// streamReaders are the read buffers of the event streams mcphost reads
// itself, one goroutine at a time (upstream's own calls), bufio's default
// size, as go-sdk reads a stream: a longer line is read in parts.
var streamReaders = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// NewStreamReader returns a read buffer for an event stream, r.
func NewStreamReader(r io.Reader) *bufio.Reader {
	br := streamReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

// FreeStreamReader gives back br, which its stream no longer reads.
func FreeStreamReader(br *bufio.Reader) {
	br.Reset(nil)
	streamReaders.Put(br)
}

// streamDrainMax bounds how long the event stream of a call's POST is
// read after the call's answer, for its end (heldStream).
var streamDrainMax = 250 * time.Millisecond

// heldStream keeps the event stream of a call's POST from being cut when
// the call ends just after its answer. go-sdk returns a call as soon as it
// has read the answer, and its caller then ends the call's context (the
// host's call_timeout), while go-sdk's reader drains what is left of the
// stream (the server ends it just after the answer) so that the
// connection can carry the next request. A request whose context ends
// before its body has been read to the end loses its connection
// (net/http), so about one call in seven dialled a new connection
// (BenchmarkUpstreamCall in host/internal/upstream; a bare go-sdk client
// whose context outlives the call does not). So the request is made with
// a context of its own: the call's end cancels it until the answer has
// been read, as before; after that, only Close or streamDrainMax do.
type heldStream struct {
	stop   func() bool // stops the call's end from cancelling the request
	cancel context.CancelFunc
	timer  *time.Timer // after the answer: the end of the drain
}

// holdStream returns req with a context of its own, cancelled when req's
// ends, and the hold on it.
func holdStream(req *http.Request) (*http.Request, heldStream) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.Context()))
	return req.WithContext(ctx), heldStream{stop: context.AfterFunc(req.Context(), cancel), cancel: cancel}
}

// answered is called once the call's answer has been passed on: the rest
// of the stream gets streamDrainMax, whenever the call ends.
func (h *heldStream) answered() {
	if h.stop != nil && h.timer == nil && h.stop() {
		h.timer = time.AfterFunc(streamDrainMax, h.cancel)
	}
}

// release ends the hold when the body is closed.
func (h *heldStream) release() {
	if h.stop == nil {
		return
	}
	h.stop()
	if h.timer != nil {
		h.timer.Stop()
	}
	h.cancel()
}

// postedCallID returns the id of the JSON-RPC call a POST carries when it
// is an integer; a body that cannot be read again (no GetBody) is not
// checked. go-sdk writes "id" and "method" before "params", so only the
// start of the body is looked at (scanMembers), and decoded (decodeCallID)
// when the look cannot tell.
func postedCallID(req *http.Request) (int64, bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return 0, false
	}
	body, err := req.GetBody()
	if err != nil {
		return 0, false
	}
	defer body.Close()
	head := make([]byte, callHeadMax)
	n, _ := io.ReadFull(body, head)
	head = head[:n]
	if id, ok, sure := scanCallID(head); sure {
		return id, ok
	}
	return decodeCallID(io.MultiReader(bytes.NewReader(head), body))
}

// callHeadMax is how much of a POST's body postedCallID looks at first:
// go-sdk's {"jsonrpc":"2.0","id":N,"method":"…" fits.
const callHeadMax = 256

// callNames are the members postedCallID needs.
var callNames = []string{"id", "method"}

// scanCallID is decodeCallID from a look at head, the start of a body;
// sure is false when the look cannot tell.
func scanCallID(head []byte) (id int64, ok, sure bool) {
	var v [2][]byte
	if !scanMembers(head, callNames, v[:], false) {
		return 0, false, false
	}
	if v[0] == nil || v[1] == nil {
		return 0, false, true
	}
	id, err := strconv.ParseInt(string(v[0]), 10, 64)
	return id, err == nil, true
}

// decodeCallID decodes the start of body, a call, up to its "id" and
// "method", and returns the id when it is an integer.
func decodeCallID(body io.Reader) (int64, bool) {
	dec := json.NewDecoder(io.LimitReader(body, maxShimBody))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, false
	}
	var (
		id     json.RawMessage
		method bool
	)
	for dec.More() && (id == nil || !method) {
		t, err := dec.Token()
		if err != nil {
			return 0, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return 0, false
		}
		switch t {
		case "id":
			id = v
		case "method":
			method = true
		}
	}
	if !method || id == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return n, err == nil
}

// strayAnswer reports whether data, one JSON-RPC message, is a response
// that does not answer call id, and if so returns an error answer to call
// id to deliver instead. Anything else (a request, a notification, not
// JSON) is go-sdk's to handle.
func strayAnswer(data []byte, id int64) ([]byte, bool) {
	if lookAt(data, id) != lookUnsure {
		return nil, false
	}
	return decodeStray(data, id)
}

// answerNames are the members decodeStray decodes.
var answerNames = []string{"id", "method", "error"}

// What a look at a message's top level says of it, for call id.
const (
	lookUnsure  = iota // it cannot tell: decodeStray decides
	lookAnswer         // a response with the call's very id
	lookRequest        // a message with a method: no answer at all
)

// lookAt looks at the top level of data, one message (scanMembers), for
// what it is to call id. Where it is sure, decodeStray finds no stray
// answer either (FuzzMessageScan).
func lookAt(data []byte, id int64) int {
	var v [3][]byte
	if !scanMembers(data, answerNames, v[:], true) {
		return lookUnsure
	}
	if v[1] != nil {
		if string(v[1]) == "null" {
			return lookUnsure
		}
		return lookRequest
	}
	var want [20]byte
	if bytes.Equal(v[0], strconv.AppendInt(want[:0], id, 10)) {
		return lookAnswer
	}
	return lookUnsure
}

// decodeStray is strayAnswer by decoding data.
func decodeStray(data []byte, id int64) ([]byte, bool) {
	var f struct {
		ID     *json.RawMessage `json:"id"`
		Method *json.RawMessage `json:"method"`
		Error  *jsonrpc.Error   `json:"error"`
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &f) != nil || f.Method != nil {
		return nil, false
	}
	var raw any
	if f.ID != nil {
		if err := json.Unmarshal(*f.ID, &raw); err != nil {
			return nil, false
		}
	}
	got, err := jsonrpc.MakeID(raw)
	if err == nil && got == intID(id) {
		return nil, false
	}
	desc := describeID(raw)
	if err != nil {
		desc = CutText(string(*f.ID), strayIDMax)
	}
	msg := strayMessage(desc, 1)
	if f.Error != nil {
		msg += fmt.Sprintf(" (its error: %d %s)", f.Error.Code, strconv.Quote(CutText(f.Error.Message, strayIDMax)))
	}
	answer, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: intID(id),
		Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}})
	return answer, true
}

// intID is the jsonrpc.ID of go-sdk's call number n (below 2^53, so exact
// as a JSON number; the package exports no constructor).
func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}

// jsonAnswerCheck is the body of a JSON answer to call id: on first read it
// reads the whole body (go-sdk reads it whole too) and serves either it or
// the error answer that replaces a stray one.
type jsonAnswerCheck struct {
	body io.ReadCloser
	id   int64
	r    *bytes.Reader
	err  error
}

func (j *jsonAnswerCheck) Read(p []byte) (int, error) {
	if j.r == nil {
		b, err := io.ReadAll(j.body)
		if answer, ok := strayAnswer(b, j.id); ok && err == nil {
			b = answer
		} else if err == nil {
			NoteToolsAnswer(b, false) // schemaorder.go
		}
		j.r, j.err = bytes.NewReader(b), err
	}
	n, err := j.r.Read(p)
	if err == io.EOF && j.err != nil {
		err = j.err
	}
	return n, err
}

func (j *jsonAnswerCheck) Close() error { return j.body.Close() }

// sseAnswerCheck is the event stream answering call id: events pass through
// unchanged, except a response that does not answer the call, which is
// replaced by an error answer to it, after which the stream ends. An event
// larger than mcp.DefaultMaxEventSize is passed on unchecked (go-sdk
// refuses it anyway).
type sseAnswerCheck struct {
	body io.ReadCloser
	br   *bufio.Reader
	id   int64
	// hearOnly: the stream answers no call (a GET stream), so nothing is
	// checked; hear hears each message passed on (AnswerCheck.OnMessage).
	hearOnly bool
	// onMessage (AnswerCheck.OnMessage) hears each message passed on,
	// with req, the request that opened the stream.
	onMessage func(req *http.Request, data []byte)
	req       *http.Request
	// held keeps the stream of a call past the call's end (heldStream):
	// a call's stream is read and closed by one goroutine at a time
	// (go-sdk's reader, or an own call's and then its drain). A GET
	// stream holds nothing: go-sdk's SSE transport closes it while its
	// reader reads.
	held heldStream

	out       []byte // ready for the reader
	event     []byte // the raw lines of the event being read
	lineStart int    // where the line being read starts in event
	data      []byte // the event's data field so far
	other     bool   // the event is named, and not "message" (go-sdk skips it)
	pass      bool   // pass everything on unchecked from now on
	err       error  // returned once out is empty
}

func (s *sseAnswerCheck) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		switch {
		case s.err != nil:
			return 0, s.err
		case s.pass:
			return s.br.Read(p)
		}
		s.step()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseAnswerCheck) Close() error {
	err := s.body.Close()
	s.held.release()
	return err
}

// step reads the next line (or the next part of a long one) and, at the
// blank line that ends an event, checks the event.
func (s *sseAnswerCheck) step() {
	chunk, err := s.br.ReadSlice('\n')
	s.event = append(s.event, chunk...)
	switch {
	case err == bufio.ErrBufferFull:
		if len(s.event) > mcp.DefaultMaxEventSize {
			s.out, s.event, s.pass = s.event, nil, true
		}
		return
	case err != nil:
		// The stream ended, possibly inside an event: go-sdk decides.
		s.out, s.event, s.err = s.event, nil, err
		return
	}
	line := bytes.TrimRight(s.event[s.lineStart:], "\r\n")
	s.lineStart = len(s.event)
	if len(line) > 0 {
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if s.data != nil {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, value...)
		case "event":
			s.other = len(value) > 0 && string(value) != "message"
		}
		return
	}
	event, data, other := s.event, s.data, s.other
	s.event, s.data, s.lineStart, s.other = nil, nil, 0, false
	look := lookAt(data, s.id)
	if look == lookUnsure && !other && !s.hearOnly {
		if answer, ok := decodeStray(data, s.id); ok {
			s.out = append(append([]byte("event: message\ndata: "), answer...), '\n', '\n')
			s.err = io.EOF
			return
		}
	}
	if s.onMessage != nil && !other {
		s.onMessage(s.req, data)
	}
	if !other && !s.hearOnly {
		NoteToolsAnswer(data, false) // schemaorder.go
		if look == lookAnswer {
			s.held.answered()
		}
	}
	s.out = event
}

var (
	_ mcp.Transport     = answerGuardTransport{}
	_ mcp.Connection    = (*answerGuard)(nil)
	_ http.RoundTripper = AnswerCheck{}
	_ io.ReadCloser     = (*jsonAnswerCheck)(nil)
	_ io.ReadCloser     = (*sseAnswerCheck)(nil)
)
