package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// maxBridgeLine bounds one JSON-RPC message on stdin or in an event: the
// gateway's own request body limit.
const maxBridgeLine = maxBodyBytes

// BridgeOptions configure Bridge.
type BridgeOptions struct {
	// URL is the daemon's endpoint, such as http://127.0.0.1:7777/mcp.
	URL string
	// Token is the bearer token sent with every request.
	Token string
	// Client makes the HTTP requests; nil uses a client without a timeout
	// (calls and event streams may last long).
	Client *http.Client
	Logger *slog.Logger // nil discards
}

// Bridge relays MCP between a stdio client (newline-delimited JSON-RPC on
// in and out) and a daemon's Streamable HTTP endpoint, without decoding
// what it relays: each message from in is POSTed with the headers the
// transport needs (the bearer token, MCP-Protocol-Version, Mcp-Session-Id),
// and every message of the answers (JSON or an event stream) is written to
// out as one line. A legacy session's standalone event stream (GET) carries
// the daemon's notifications and requests; a 2026-07-28 request is its own
// POST, whose cancellation the bridge turns into closing that POST.
//
// It returns nil when in ends (after ending the legacy session with a
// DELETE), or the error that stopped it.
func Bridge(ctx context.Context, in io.Reader, out io.Writer, o BridgeOptions) error {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	b := &bridge{o: o, out: out, inflight: map[string]context.CancelFunc{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxBridgeLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		b.forward(ctx, msg)
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("gateway bridge: a message on stdin is over %d bytes", maxBridgeLine)
	}
	// The client is done sending: the answers it is owed still come, then
	// the session and its stream end.
	b.requests.Wait()
	b.endSession()
	cancel()
	b.wg.Wait()
	return err
}

type bridge struct {
	o   BridgeOptions
	out io.Writer

	outMu sync.Mutex // one line at a time on out

	mu        sync.Mutex
	sessionID string // the legacy session, once initialize answered
	version   string // the negotiated legacy version
	streaming bool   // the standalone GET stream is running
	// inflight cancels the POST of a 2026-07-28 request by its JSON-RPC id.
	inflight map[string]context.CancelFunc
	// params are the x-mcp-header annotations of the tools listed so far,
	// by tool name (bridgeheaders.go).
	params map[string][]paramBinding

	requests sync.WaitGroup // the POSTs
	wg       sync.WaitGroup // the standalone stream
}

// envelope is what the bridge reads of a message: enough to route it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name            string          `json:"name"`
		URI             string          `json:"uri"`
		Arguments       json.RawMessage `json:"arguments"`
		ProtocolVersion string          `json:"protocolVersion"`
		RequestID       json.RawMessage `json:"requestId"`
		Meta            map[string]any  `json:"_meta"`
	} `json:"params"`
	Result struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
}

func (env envelope) isRequest() bool {
	return env.Method != "" && len(env.ID) > 0 && string(env.ID) != "null"
}

// modernVersion returns the 2026-07-28-style per-request version, if any.
func (env envelope) modernVersion() string {
	v, _ := env.Params.Meta["io.modelcontextprotocol/protocolVersion"].(string)
	return v
}

// forward POSTs one message from the client. Requests are answered on
// their own goroutine, so a long call does not hold up the next message.
func (b *bridge) forward(ctx context.Context, msg []byte) {
	var env envelope
	if err := json.Unmarshal(msg, &env); err != nil {
		b.writeLine(errorLine(nil, -32700, "parse error: "+err.Error()))
		return
	}
	version := env.modernVersion()
	rctx := ctx
	if version >= modernVersion && env.isRequest() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithCancel(ctx)
		b.mu.Lock()
		b.inflight[string(env.ID)] = cancel
		b.mu.Unlock()
	}
	if env.Method == "notifications/cancelled" && len(env.Params.RequestID) > 0 {
		b.mu.Lock()
		cancel, ok := b.inflight[string(env.Params.RequestID)]
		b.mu.Unlock()
		if ok {
			cancel() // the POST is the request: closing it cancels the call
			return
		}
	}
	send := func() {
		if len(env.ID) > 0 {
			defer func() {
				b.mu.Lock()
				if cancel, ok := b.inflight[string(env.ID)]; ok {
					cancel()
					delete(b.inflight, string(env.ID))
				}
				b.mu.Unlock()
			}()
		}
		if err := b.post(rctx, msg, env, version); err != nil && env.isRequest() && rctx.Err() == nil {
			b.writeLine(errorLine(env.ID, -32603, "mcphost gateway bridge: "+err.Error()))
		}
		if env.Method == "notifications/initialized" {
			b.startStream(ctx)
		}
	}
	// Requests are answered concurrently, but initialize, notifications and
	// the client's answers to the daemon's requests are sent in order
	// before anything that follows them: the session must exist, and be
	// initialized, before the next request uses it.
	if !env.isRequest() || env.Method == "initialize" {
		send()
		return
	}
	b.requests.Add(1)
	go func() {
		defer b.requests.Done()
		send()
	}()
}

// post sends one message and relays its answer.
func (b *bridge) post(ctx context.Context, msg []byte, env envelope, version string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.o.URL, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.setHeaders(req, version)
	if version >= modernVersion && env.isRequest() {
		// 2026-07-28 repeats the method and the name in headers, for
		// routers that do not read bodies.
		req.Header.Set("Mcp-Method", env.Method)
		switch env.Method {
		case "tools/call":
			req.Header.Set("Mcp-Name", env.Params.Name)
			b.mu.Lock()
			bindings := b.params[env.Params.Name]
			b.mu.Unlock()
			for k, v := range paramHeaders(bindings, env.Params.Arguments) {
				req.Header.Set(k, v)
			}
		case "prompts/get":
			req.Header.Set("Mcp-Name", env.Params.Name)
		case "resources/read":
			req.Header.Set("Mcp-Name", env.Params.URI)
		}
	}
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return fmt.Errorf("the daemon at %s: %w", b.o.URL, err)
	}
	defer resp.Body.Close()
	if env.Method == "initialize" && resp.StatusCode == http.StatusOK {
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
			b.mu.Lock()
			b.sessionID = sid
			b.mu.Unlock()
		}
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case resp.StatusCode != http.StatusOK:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if line := bytes.TrimSpace(body); json.Valid(line) && bytes.Contains(line, []byte(`"jsonrpc"`)) {
			b.writeLine(line) // a JSON-RPC error the daemon answered with
			return nil
		}
		return fmt.Errorf("the daemon answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return b.relayBody(resp, env.Method == "initialize", env.Method == "tools/list")
}

// setHeaders adds the bearer token and the session's headers.
func (b *bridge) setHeaders(req *http.Request, version string) {
	req.Header.Set("Authorization", "Bearer "+b.o.Token)
	b.mu.Lock()
	sid, negotiated := b.sessionID, b.version
	b.mu.Unlock()
	if version == "" {
		version = negotiated
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if sid != "" && version < modernVersion {
		req.Header.Set("Mcp-Session-Id", sid)
	}
}

// relayBody writes each message of a JSON or event-stream answer to out.
func (b *bridge) relayBody(resp *http.Response, initialize, toolsList bool) error {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	note := func(line []byte) {
		if toolsList {
			b.learnParams(line)
		}
		if initialize {
			var env envelope
			if json.Unmarshal(line, &env) == nil && env.Result.ProtocolVersion != "" {
				b.mu.Lock()
				b.version = env.Result.ProtocolVersion
				b.mu.Unlock()
			}
		}
		b.writeLine(line)
	}
	if ct != "text/event-stream" {
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBridgeLine+1))
		if err != nil {
			return err
		}
		if len(body) > maxBridgeLine {
			return fmt.Errorf("an answer is over %d bytes", maxBridgeLine)
		}
		if line := bytes.TrimSpace(body); len(line) > 0 {
			note(compact(line))
		}
		return nil
	}
	return readEvents(resp.Body, func(data []byte) { note(compact(data)) })
}

// learnParams keeps the x-mcp-header annotations of a tools/list answer.
func (b *bridge) learnParams(line []byte) {
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &msg) != nil || len(msg.Result) == 0 {
		return
	}
	learned := bindingsOf(msg.Result)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.params == nil {
		b.params = map[string][]paramBinding{}
	}
	for name, bs := range learned {
		b.params[name] = bs
	}
}

// compact puts a message on one line, as the stdio transport needs.
func compact(msg []byte) []byte {
	if !bytes.ContainsAny(msg, "\r\n") {
		return msg
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		return bytes.ReplaceAll(bytes.ReplaceAll(msg, []byte("\r"), nil), []byte("\n"), nil)
	}
	return buf.Bytes()
}

// readEvents calls fn with the data of each server-sent event.
func readEvents(r io.Reader, fn func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxBridgeLine)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if len(bytes.TrimSpace(data)) > 0 {
				fn(data)
			}
			data = nil
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		}
	}
	if len(bytes.TrimSpace(data)) > 0 {
		fn(data)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// startStream opens the legacy session's standalone event stream (GET),
// which carries list_changed, log messages and the daemon's requests, and
// reopens it with backoff until ctx ends.
func (b *bridge) startStream(ctx context.Context) {
	b.mu.Lock()
	if b.streaming || b.sessionID == "" {
		b.mu.Unlock()
		return
	}
	b.streaming = true
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		delay := 100 * time.Millisecond
		for ctx.Err() == nil {
			err := b.stream(ctx)
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errNoStream) {
				return
			}
			b.o.Logger.Warn("gateway bridge: the daemon's event stream ended; reopening", "err", err, "in", delay)
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, 10*time.Second)
		}
	}()
}

var errNoStream = errors.New("the daemon offers no event stream for this session")

func (b *bridge) stream(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.o.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	b.setHeaders(req, "")
	resp, err := b.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusMethodNotAllowed, http.StatusNotFound:
		return errNoStream
	default:
		return fmt.Errorf("GET: %s", resp.Status)
	}
	if err := readEvents(resp.Body, func(data []byte) { b.writeLine(compact(data)) }); err != nil {
		return err
	}
	return errors.New("the stream closed")
}

// endSession ends the legacy session, if there is one.
func (b *bridge) endSession() {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.o.URL, nil)
	if err != nil {
		return
	}
	b.setHeaders(req, "")
	if resp, err := b.o.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (b *bridge) writeLine(line []byte) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if _, err := b.out.Write(append(append([]byte(nil), line...), '\n')); err != nil {
		b.o.Logger.Warn("gateway bridge: writing to stdout", "err", err)
	}
}

// errorLine is a JSON-RPC error response for id (null when unknown).
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return b
}
