package gateway

// The gateway's own path for tools/call.
//
// Most of what an agent sends is tools/call, and go-sdk's server side is
// most of what one costs the gateway beyond the pipeline: a 2026-07-28
// request gets a session of its own, connected and closed; a legacy one
// an SSE stream with event ids kept for resumption, a handler goroutine
// and the gateway's stream writer (research/bakeoff.md §5). When nothing
// but its answer can go back on a call's response, none of that is
// needed, and the gateway answers the call itself: it decodes the request
// once (the envelope as go-sdk does, then the parameters), runs the same
// handler the go-sdk path runs (endpoint.callTool, so the same pipeline:
// policies, approvals, plugins, App contexts, the transcript) and writes
// the JSON-RPC answer as one application/json body, which the Streamable
// HTTP transport allows for any request.
//
// Anything else goes to go-sdk as before, the body put back unread: a
// batch, another method, a request go-sdk would refuse or answer with an
// error of its own (wrong headers, unknown tool), a discovery meta-tool,
// the retry of an input_required round, a call with a progress token or
// (2026-07-28) a log level, which may send notifications on the call's
// stream; and, on a 2025-11-25 session, a call whose client set a log
// level or can be asked (elicitation, sampling: an `ask` rule or the
// server may ask it on the call's stream), or whose server may answer
// input_required (its rounds are asked on that stream too).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonlex"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// A fastCall is a tools/call the gateway answers itself.
type fastCall struct {
	id     jsonrpc.ID
	params *mcp.CallToolParamsRaw
	modern bool
	ss     *mcp.ServerSession // the legacy session; nil for 2026-07-28
	sid    string
}

// takeCall returns the tools/call r carries when the gateway may answer it
// itself (see above); otherwise nil, with r's body as it was.
func (e *endpoint) takeCall(r *http.Request, c host.Caller) *fastCall {
	fc := &fastCall{modern: stateless(r)}
	if !fc.modern {
		fc.sid = r.Header.Get("Mcp-Session-Id")
		if fc.sid == "" {
			return nil
		}
	}
	if r.Method != http.MethodPost || !fastHeaders(r.Header) || !hostAllowed(r) {
		return nil
	}
	body, err := readBody(r)
	// Put back what was read: the reader's error (a body over the limit)
	// comes after it, for go-sdk to answer.
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || !bytes.Contains(body, []byte(`"tools/call"`)) {
		return nil
	}
	var ok bool
	if fc.id, fc.params, ok = decodeCall(body); !ok {
		return nil
	}
	if !e.fastEligible(r, c, fc) {
		return nil
	}
	return fc
}

// fastHeaders reports whether a POST's headers are those go-sdk serves
// without a word: a JSON body, an answer as JSON or SSE, no resumption.
func fastHeaders(h http.Header) bool {
	ct, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || ct != "application/json" || len(h.Values("Last-Event-ID")) > 0 {
		return false
	}
	var jsonOK, sseOK bool
	for _, v := range h.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				sseOK = true
			}
		}
	}
	return jsonOK && sseOK
}

// wireCall is a JSON-RPC request as go-sdk decodes one (the method kept
// raw: its presence makes a request).
type wireCall struct {
	Version string          `json:"jsonrpc"`
	ID      any             `json:"id,omitempty"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// decodeCall decodes a tools/call request as go-sdk does (field names
// matched exactly, its nesting bound, an id that is a number or a
// string), its arguments left raw. It uses the decoder go-sdk uses, but
// not through a stream: a stream decoder allocates a buffer of its own for
// every message.
func decodeCall(body []byte) (jsonrpc.ID, *mcp.CallToolParamsRaw, bool) {
	const flags = sjson.DontMatchCaseInsensitiveStructFields
	var w wireCall
	if jsonlex.TooDeep(body, jsonlex.MaxDepth) {
		return jsonrpc.ID{}, nil, false
	}
	if _, err := sjson.Parse(body, &w, flags); err != nil || w.Version != "2.0" || w.ID == nil || len(w.Params) == 0 {
		return jsonrpc.ID{}, nil, false
	}
	var method string
	if _, err := sjson.Parse(w.Method, &method, flags); err != nil || method != "tools/call" {
		return jsonrpc.ID{}, nil, false
	}
	id, err := jsonrpc.MakeID(w.ID)
	if err != nil {
		return jsonrpc.ID{}, nil, false
	}
	var p mcp.CallToolParamsRaw
	if _, err := sjson.Parse(w.Params, &p, flags); err != nil {
		return jsonrpc.ID{}, nil, false
	}
	return id, &p, true
}

// fastEligible reports whether nothing but its answer can go back on the
// call's response, and go-sdk would run it as it is (see the file's
// comment).
func (e *endpoint) fastEligible(r *http.Request, c host.Caller, fc *fastCall) bool {
	p := fc.params
	if p.GetProgressToken() != nil || p.InputResponses != nil || p.RequestState != "" || isMetaTool(p.Name) {
		return false
	}
	t := e.table.Load()
	gt, ok := t.byName[p.Name]
	if !ok || t.bound[p.Name] {
		return false // go-sdk's own answer, or its check of the tool's parameter headers
	}
	if fc.modern {
		version, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
		_, logs := p.Meta[mcp.MetaKeyLogLevel]
		return !logs && version != "" && version == r.Header.Get("Mcp-Protocol-Version") &&
			r.Header.Get("Mcp-Method") == "tools/call" && r.Header.Get("Mcp-Name") == p.Name
	}
	if _, ok := p.Meta[mcp.MetaKeyProtocolVersion]; ok {
		return false // go-sdk's header check
	}
	ss, logging := e.g.held.session(fc.sid, c.Name, e)
	if ss == nil || logging {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion >= modernVersion || (ip.Capabilities != nil && (ip.Capabilities.Elicitation != nil || ip.Capabilities.Sampling != nil)) {
		return false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != ip.ProtocolVersion {
		return false // go-sdk refuses a version it does not speak
	}
	if e.g.h.GatewayMayAskInput(gt.Server) {
		return false
	}
	fc.ss = ss
	return true
}

// readBody reads a request's body in one allocation when its length is
// known (the reader still stops at the limit).
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= maxBodyBytes {
		// net/http's body ends at its Content-Length.
		buf := make([]byte, n)
		k, err := io.ReadFull(r.Body, buf)
		return buf[:k], err
	}
	return io.ReadAll(r.Body)
}

// hostAllowed is go-sdk's guard against DNS rebinding: a request that
// reached a loopback listener must name a loopback host (go-sdk answers
// 403 to one that does not).
func hostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	if ta, ok := la.(*net.TCPAddr); ok {
		if !ta.IP.IsLoopback() {
			return true
		}
	} else if !isLoopback(la.String()) {
		return true
	}
	return isLoopback(r.Host)
}

// isLoopback reports whether a host, with or without a port, is
// localhost or a loopback address.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

type readCloser struct {
	io.Reader
	io.Closer
}

// serveCall answers fc, a tools/call of caller on e, as the go-sdk path
// would, held like any request (a reload that revokes its credential
// cancels it).
func (g *Gateway) serveCall(w http.ResponseWriter, r *http.Request, e *endpoint, fc *fastCall, caller host.Caller, who holder) {
	// As go-sdk's request would carry: the caller, and the HTTP request's
	// context for the approvals it may wait on (leave.go).
	ctx, cancel := context.WithCancel(host.WithClient(r.Context(), r.Context()))
	defer cancel()
	q := g.held.hold(who, cancel, nil)
	defer g.held.drop(q)
	if !g.h.StillValid(caller) {
		unauthorized(w, r)
		return
	}
	if fc.ss != nil {
		defer g.handlers.add(fc.sid, cancel)() // ended with its session (leave.go)
	}
	ti, _ := tokenVerifier(r.Context(), "", r)
	req := &mcp.CallToolRequest{Session: fc.ss, Params: fc.params, Extra: &mcp.RequestExtra{TokenInfo: ti, Header: r.Header}}
	c := caller
	c.Client = clientOf(req)
	rec := &recordedResult{}
	res, err := e.callTool(withRecordedResult(ctx, rec), c, req)
	status, body := http.StatusOK, []byte(nil)
	if err == nil {
		body = rec.answer(fc.id, res, fc.modern, e.implMeta)
	}
	if body == nil {
		if err == nil && fc.modern {
			res = withServerInfo(res, e.impl)
		}
		status, body = encodeAnswer(fc.id, res, err, fc.modern)
	}
	body = append(body, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform")
	// With its length known, the answer goes out whole in one write when
	// flushed below; without it the flush would start a chunked body whose
	// end is written only after this handler returns, which the client
	// waits for (a second write, and a second wake of the client, per
	// call).
	h.Set("Content-Length", strconv.Itoa(len(body)))
	// A client that does not read holds this handler only, for at most
	// the stall every stream has: the answer is flushed under the
	// deadline, which is then lifted, so that nothing later on a
	// kept-alive connection inherits it (as stream.go does).
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(g.stall))
	w.WriteHeader(status)
	_, err = w.Write(body)
	if err == nil {
		if err = rc.Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	_ = rc.SetWriteDeadline(time.Time{})
	if err != nil {
		g.log.Debug("gateway: writing a call's answer failed", "principal", caller.Name, "endpoint", e.path, "err", err)
	}
}

// encodeAnswer is the JSON-RPC answer to a call, and its HTTP status: as
// go-sdk's handling of a registered tool writes it (an empty content list
// rather than null; on 2026-07-28 the result's type, and the status the
// error's code maps to).
func encodeAnswer(id jsonrpc.ID, res *mcp.CallToolResult, err error, modern bool) (int, []byte) {
	var result json.RawMessage
	if err == nil {
		result, err = encodeResult(res, modern)
	}
	resp := &jsonrpc.Response{ID: id, Result: result, Error: err}
	if err != nil {
		resp.Result = nil
	}
	data, encErr := jsonrpc.EncodeMessage(resp)
	if encErr != nil {
		data, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeInternal, Message: "gateway: encoding the answer: " + encErr.Error()}})
	}
	status := http.StatusOK
	var je *jsonrpc.Error
	if modern && errors.As(err, &je) {
		switch je.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
			status = http.StatusBadRequest
		}
	}
	return status, data
}

// A recordedResult is the result of a call as the pipeline recorded it in
// the call's entry, already encoded: a legacy answer is that encoding, so
// the gateway writes it rather than encoding the result once more.
type recordedResult struct {
	res *mcp.CallToolResult
	raw json.RawMessage
}

type recordedKey struct{}

// withRecordedResult returns ctx on which callTool leaves the recorded
// result in rec.
func withRecordedResult(ctx context.Context, rec *recordedResult) context.Context {
	return context.WithValue(ctx, recordedKey{}, rec)
}

// keepRecorded leaves out's result and its encoding in the entry where
// ctx asks for them (withRecordedResult).
func keepRecorded(ctx context.Context, out *host.CallOutcome) {
	rec, _ := ctx.Value(recordedKey{}).(*recordedResult)
	if rec == nil || out == nil || out.Entry == nil || out.Result == nil {
		return
	}
	rec.res, rec.raw = out.Result, out.Entry.Result
}

// answer is the JSON-RPC answer id with res as its result, written from
// the entry's encoding of it, when res is the very result recorded and its
// answer is that encoding: content that is not null and no input round;
// for a 2026-07-28 client, no metadata of its own (the answer's _meta is
// implMeta, naming the gateway, as withServerInfo adds it) and the result
// type "complete", which the encoding has last or not at all. nil when the
// result is to be encoded (encodeAnswer).
func (r *recordedResult) answer(id jsonrpc.ID, res *mcp.CallToolResult, modern bool, implMeta []byte) []byte {
	raw := r.raw
	if res == nil || res != r.res || len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' ||
		res.Content == nil || res.InputRequests != nil || res.NeedsInput() {
		return nil
	}
	if !modern {
		return encodeRecorded(id, raw)
	}
	const complete = `"resultType":"complete"`
	if res.Meta != nil || implMeta == nil {
		return nil
	}
	b := make([]byte, 0, len(raw)+len(implMeta)+len(complete)+16)
	b = append(b, `{"_meta":`...)
	b = append(b, implMeta...)
	if len(raw) > 2 {
		b = append(b, ',')
	}
	switch {
	case bytes.HasSuffix(raw, []byte(","+complete+"}")):
		b = append(b, raw[1:]...)
	case !bytes.Contains(raw, []byte(`"resultType"`)):
		b = append(b, raw[1:len(raw)-1]...)
		b = append(b, ","+complete+"}"...)
	default:
		return nil // a result type elsewhere: encoded instead
	}
	return encodeRecorded(id, b)
}

// encodeRecorded is the JSON-RPC answer id with raw as its result, as
// jsonrpc.EncodeMessage writes it.
func encodeRecorded(id jsonrpc.ID, raw json.RawMessage) []byte {
	b := make([]byte, 0, len(raw)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	switch v := id.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, v, 10)
	case string:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as go-sdk writes an id
		_ = enc.Encode(v)        // a string always encodes
		b = append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	default:
		b = append(b, "null"...)
	}
	b = append(b, `,"result":`...)
	b = append(b, raw...)
	return append(b, '}')
}

// withServerInfo returns res naming the gateway in its _meta, as go-sdk
// names its server in every 2026-07-28 result (SEP-2575), unless the
// result names one already.
func withServerInfo(res *mcp.CallToolResult, impl *mcp.Implementation) *mcp.CallToolResult {
	if res == nil {
		return nil
	}
	if _, ok := res.Meta[mcp.MetaKeyServerInfo]; ok {
		return res
	}
	cp := *res
	cp.Meta = make(mcp.Meta, len(res.Meta)+1)
	maps.Copy(cp.Meta, res.Meta)
	cp.Meta[mcp.MetaKeyServerInfo] = impl
	return &cp
}

// plainResult is a CallToolResult without its own encoding, which writes
// the result type go-sdk keeps unexported.
type plainResult mcp.CallToolResult

// encodeResult encodes a tool's result for a legacy or a 2026-07-28 client.
func encodeResult(res *mcp.CallToolResult, modern bool) (json.RawMessage, error) {
	if res == nil {
		return nil, &jsonrpc.Error{Code: codeInternal, Message: "gateway: the call has no result"}
	}
	asks := res.InputRequests != nil
	if asks && len(res.Content) > 0 {
		return nil, &jsonrpc.Error{Code: codeInternal, Message: "server bug: result has both content and inputRequests"}
	}
	if res.Content == nil && !asks && !res.NeedsInput() {
		cp := *res
		cp.Content = []mcp.Content{}
		res = &cp
	}
	if !modern {
		return json.Marshal(res)
	}
	// go-sdk writes the result type and the input requests after the
	// other members, and the requests even when there are none (a
	// retry-later round).
	cp := *res
	cp.InputRequests = nil
	b, err := json.Marshal((*plainResult)(&cp))
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return nil, errors.Join(errors.New("gateway: encoding the result"), err)
	}
	kind := `"complete"`
	if asks || res.NeedsInput() {
		kind = `"input_required"`
	}
	out := b[:len(b)-1]
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"resultType":`...)
	out = append(out, kind...)
	if asks {
		ir, err := json.Marshal(res.InputRequests)
		if err != nil {
			return nil, fmt.Errorf("gateway: encoding the input requests: %w", err)
		}
		out = append(out, `,"inputRequests":`...)
		out = append(out, ir...)
	}
	return append(out, '}'), nil
}
