package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"
)

// maxAnswer bounds the answer the client reads: a transcript page or a
// resource's contents, never more.
const maxAnswer = 256 << 20

// Client is a client of one daemon's JSON API as one principal: the
// daemon's base URL, the principal's bearer token, the HTTP client that
// carries the requests and a bound for each quick request. A Client is
// immutable (the With methods return a copy) and safe for use by many
// goroutines at once.
type Client struct {
	base    string // "http://127.0.0.1:7777", no trailing slash
	token   string
	hc      *http.Client
	timeout time.Duration
}

// New returns a client of the API at base ("http://127.0.0.1:7777"; a
// trailing slash is dropped, a path prefix kept) that sends token. It has
// its own http.Client on the default transport and no timeout. New never
// fails: a base that is not a URL fails each request.
func New(base, token string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), token: token, hc: &http.Client{}}
}

// WithToken returns a copy of c that sends token: another principal on the
// same connections.
func (c *Client) WithToken(token string) *Client {
	d := *c
	d.token = token
	return &d
}

// WithHTTPClient returns a copy of c that sends its requests through hc:
// a transport that keeps as many idle connections as there are workers,
// say, or a test's.
func (c *Client) WithHTTPClient(hc *http.Client) *Client {
	d := *c
	d.hc = hc
	return &d
}

// WithTimeout returns a copy of c whose quick requests each end after d at
// the latest (0: only their context bounds them). Requests that wait for a
// server or a person (a tool call, a read, a prompt get, a reload) are
// bounded only by their context; each method says which kind it is.
func (c *Client) WithTimeout(d time.Duration) *Client {
	cp := *c
	cp.timeout = d
	return &cp
}

// Base returns the daemon's base URL, without a trailing slash.
func (c *Client) Base() string { return c.base }

// CloseIdleConnections closes the idle connections of c's http.Client
// (shared with the copies made from c).
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// ErrNoAnswer is wrapped by the error of a request that got no answer from
// the daemon: it could not connect, the connection broke, or the context
// ended first (errors.Is tells context.DeadlineExceeded apart).
var ErrNoAnswer = errors.New("no answer from the daemon")

// noAnswer is a request that got no answer; err is the transport's reason.
type noAnswer struct {
	base string
	err  error
}

func (e *noAnswer) Error() string {
	return fmt.Sprintf("no answer from the daemon at %s: %v", e.base, e.err)
}

func (e *noAnswer) Is(target error) bool { return target == ErrNoAnswer }
func (e *noAnswer) Unwrap() error        { return e.err }

// Error is an error answer of the API (a status other than 2xx), decoded
// from its body `{"error":{"code","message",…}}` (docs/api.md). Its
// strings come from the daemon: escape them before printing them to a
// terminal.
type Error struct {
	// Method and Path are the request's ("POST", "/api/v1/sessions").
	Method, Path string
	// Status is the HTTP status.
	Status int
	// Code and Message are the API's ("not_found", "unknown server \"x\"");
	// both empty when the body is not the API's error shape (a proxy's
	// page, an answer cut short).
	Code, Message string
	// Rule and Phase name the policy of a refusal (403 denied_by_policy);
	// Rule is "" when the policies' default decided.
	Rule, Phase string
	// Entry is the entry a refused tool call recorded (403
	// denied_by_policy of [Client.Call]); nil otherwise.
	Entry json.RawMessage
	// Body is the whole answer, for the answers that carry more than the
	// error: the diagnostics of a 422 reload, the hash of a 412 one.
	Body []byte
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("the daemon answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return e.Message
}

// Do sends one request to path (below the base URL, query included) with a
// JSON body (nil for none) and decodes a 2xx answer into out (nil to drop
// it). It is a quick request: the client's timeout bounds it. An error
// answer is an *[Error]; no answer at all wraps [ErrNoAnswer].
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.do(ctx, true, method, path, body, out)
}

// do is Do; bounded says whether the client's timeout applies.
func (c *Client) do(ctx context.Context, bounded bool, method, path string, body, out any) error {
	if bounded && c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which the message names once
		}
		return &noAnswer{base: c.base, err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("reading the daemon's answer: %v", err)
	}
	if resp.StatusCode/100 != 2 {
		return errorOf(method, path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the daemon's answer to %s %s: %v", method, path, err)
	}
	return nil
}

// errorOf decodes an error answer.
func errorOf(method, path string, status int, body []byte) *Error {
	e := &Error{Method: method, Path: path, Status: status, Body: body}
	var eb struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Rule    string `json:"rule"`
			Phase   string `json:"phase"`
		} `json:"error"`
		Entry json.RawMessage `json:"entry"`
	}
	if json.Unmarshal(body, &eb) == nil {
		e.Code, e.Message, e.Rule, e.Phase = eb.Error.Code, eb.Error.Message, eb.Error.Rule, eb.Error.Phase
		if len(eb.Entry) > 0 && string(eb.Entry) != "null" {
			e.Entry = eb.Entry
		}
	}
	return e
}
