package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/jsonlex"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// The wire of the Conn's own calls (owncall.go): their messages and event
// streams, and the answers to a server's requests.

// ownMessage is one JSON-RPC message of a call's answer, decoded as
// go-sdk decodes them (field names matched exactly, its nesting bound),
// its parts left raw.
type ownMessage struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// decode decodes data into m, refusing what go-sdk's decoder refuses.
func (m *ownMessage) decode(data []byte) error {
	if jsonlex.TooDeep(data, jsonlex.MaxDepth) {
		return fmt.Errorf("the server sent a message nested deeper than %d levels", jsonlex.MaxDepth)
	}
	if _, err := sjson.Parse(data, m, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return fmt.Errorf("the server sent a message that is not JSON-RPC: %w", err)
	}
	if m.Version != "2.0" {
		return fmt.Errorf("the server sent a message with version %q; expected \"2.0\"", m.Version)
	}
	return nil
}

// answers reports whether m is the answer to call id: a response (no
// method) whose id is id's number in any of its JSON spellings.
func (m *ownMessage) answers(id int64) bool {
	if len(m.Method) > 0 || len(m.ID) == 0 {
		return false
	}
	var want [20]byte
	if bytes.Equal(m.ID, strconv.AppendInt(want[:0], id, 10)) {
		return true
	}
	var n float64
	return json.Unmarshal(m.ID, &n) == nil && n == float64(id)
}

// result is the call's outcome from its answer m: the server's JSON-RPC
// error wrapped as go-sdk wraps it, or the result decoded as go-sdk
// decodes it.
func (m *ownMessage) result() (*mcp.CallToolResult, error) {
	if m.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", ownMethod, m.Error)
	}
	if len(m.Result) == 0 || string(m.Result) == "null" {
		return &mcp.CallToolResult{}, nil
	}
	res, err := decodeResult(m.Result)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", ownMethod, err)
	}
	return res, nil
}

// resultWire is a tools/call result on the wire, as far as decodeResult
// reads it itself: every member go-sdk decodes, with the types go-sdk
// decodes them into, so that both refuse the same results.
type resultWire struct {
	Meta              mcp.Meta        `json:"_meta"`
	Content           []*contentWire  `json:"content"`
	StructuredContent any             `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	InputRequests     json.RawMessage `json:"inputRequests"`
	RequestState      string          `json:"requestState"`
	ResultType        json.RawMessage `json:"resultType"`
}

// contentWire is one content block on the wire, every member of every
// type, with the types go-sdk decodes them into.
type contentWire struct {
	Type              string                `json:"type"`
	Text              string                `json:"text"`
	MIMEType          string                `json:"mimeType"`
	Data              []byte                `json:"data"`
	Resource          *mcp.ResourceContents `json:"resource"`
	URI               string                `json:"uri"`
	Name              string                `json:"name"`
	Title             string                `json:"title"`
	Description       string                `json:"description"`
	Size              *int64                `json:"size"`
	Meta              mcp.Meta              `json:"_meta"`
	Annotations       *mcp.Annotations      `json:"annotations"`
	Icons             []mcp.Icon            `json:"icons"`
	ID                string                `json:"id"`
	Input             map[string]any        `json:"input"`
	ToolUseID         string                `json:"toolUseId"`
	NestedContent     []*contentWire        `json:"content"`
	StructuredContent any                   `json:"structuredContent"`
	IsError           bool                  `json:"isError"`
}

// decodeResult decodes a tools/call result as go-sdk's
// CallToolResult.UnmarshalJSON does, without the 32 KB buffer its decoder
// takes for every value: a result whose content is text (nearly all) is
// decoded here, any other (images, resources, a result type or input
// requests) by go-sdk. FuzzOwnResult holds the two to the same outcome.
func decodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var w resultWire
	if _, err := sjson.Parse(raw, &w, sjson.DontMatchCaseInsensitiveStructFields); err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Meta: w.Meta, StructuredContent: w.StructuredContent, IsError: w.IsError,
		RequestState: w.RequestState, Content: make([]mcp.Content, 0, len(w.Content))}
	simple := len(w.InputRequests) == 0 && len(w.ResultType) == 0
	for _, c := range w.Content {
		if !simple || c == nil || c.Type != "text" {
			simple = false
			break
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: c.Text, Meta: c.Meta, Annotations: c.Annotations})
	}
	if simple {
		return res, nil
	}
	res = &mcp.CallToolResult{}
	return res, res.UnmarshalJSON(raw)
}

// eventStream reads the message events of a server-sent event stream:
// events named other than "message" are skipped, as go-sdk skips them, and
// the last event id and retry delay are kept for a resumption.
type eventStream struct {
	br       *bufio.Reader
	lastID   string
	retry    time.Duration
	tooLarge bool // an event went past mcp.DefaultMaxEventSize
	line     []byte
}

// errEventTooLarge is the error of an event larger than go-sdk accepts.
var errEventTooLarge = fmt.Errorf("the server sent an event of more than %d bytes", mcp.DefaultMaxEventSize)

// next returns the data of the next message event.
func (s *eventStream) next() ([]byte, error) {
	var (
		data  []byte
		seen  bool // a data field was read
		other bool // the event is named, and not "message"
		size  int
	)
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if size += len(line); size > mcp.DefaultMaxEventSize {
			s.tooLarge = true
			return nil, errEventTooLarge
		}
		if len(line) == 0 {
			if seen && !other {
				return data, nil
			}
			data, seen, other, size = data[:0], false, false, 0
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if seen {
				data = append(data, '\n')
			}
			data, seen = append(data, value...), true
		case "event":
			other = len(value) > 0 && string(value) != "message"
		case "id":
			s.lastID = string(value)
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				s.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLine returns the next line without its end (\n, \r\n or \r\n's
// \r), valid until the next call.
func (s *eventStream) readLine() ([]byte, error) {
	chunk, err := s.br.ReadSlice('\n')
	if err == nil {
		return bytes.TrimRight(chunk, "\r\n"), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	s.line = append(s.line[:0], chunk...)
	for {
		chunk, err = s.br.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimRight(s.line, "\r\n"), nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		case len(s.line) > mcp.DefaultMaxEventSize:
			s.tooLarge = true
			return nil, errEventTooLarge
		}
	}
}

// answerServer answers a request the server sent on a call's stream as
// the session's client answers it: elicitation/create and
// sampling/createMessage through serverRequests (mcphost's own answers),
// roots/list with the server's roots, ping with nothing; any other method
// is not found. The answer is POSTed on the session.
func (c *Conn) answerServer(ctx context.Context, cs *mcp.ClientSession, id json.RawMessage, method string, params json.RawMessage) {
	var (
		res any
		err error
	)
	switch method {
	case "elicitation/create", "sampling/createMessage":
		var req mcp.Request
		if method == "elicitation/create" {
			p := &mcp.ElicitParams{}
			err = unmarshalParams(params, p)
			req = &mcp.ElicitRequest{Session: cs, Params: p}
		} else {
			p := &mcp.CreateMessageParams{}
			err = unmarshalParams(params, p)
			req = &mcp.CreateMessageRequest{Session: cs, Params: p}
		}
		if err == nil {
			res, err = c.serverRequests(notFound)(ctx, method, req)
		}
	case "roots/list":
		roots := ConfigRoots(c.CurrentRoots())
		slices.SortFunc(roots, func(a, b *mcp.Root) int { return strings.Compare(a.URI, b.URI) })
		res = &mcp.ListRootsResult{Roots: roots}
	case "ping":
		res = struct{}{}
	default:
		_, err = notFound(ctx, method, nil)
	}
	body, merr := encodeAnswer(id, res, err)
	if merr != nil {
		c.logger.Warn("an answer to the server could not be encoded", "method", method, "err", merr)
		return
	}
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ownNotifyTimeout)
	defer cancel()
	c.postSession(nctx, cs, body)
}

// unmarshalParams decodes a request's params; absent ones are empty.
func unmarshalParams(params json.RawMessage, into any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, into); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return nil
}

// notFound is the answer to a method the client does not handle.
func notFound(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q unsupported", method)}
}

// encodeAnswer is the JSON-RPC response with id: res, or err as a
// JSON-RPC error (an error that is not one is an internal error).
func encodeAnswer(id json.RawMessage, res any, err error) ([]byte, error) {
	answer := struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}{Version: "2.0", ID: id, Result: res}
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		answer.Result, answer.Error = nil, we
	}
	return json.Marshal(answer)
}
