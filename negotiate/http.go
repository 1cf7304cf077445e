package negotiate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
)

// probeHTTP runs the raw Streamable HTTP probe (§3.5): a POST of
// server/discover through the session's own *http.Client with its own
// deadline, understanding JSON and SSE answers. It never sends
// notifications/cancelled: on timeout the request is abandoned (closing the
// stream is the cancellation). Nothing from the probe is reused by the
// session, which gets a new transport.
//
// A non-nil error means ctx (the window) ended; otherwise the Decision is
// Classify's.
func (n *negotiator) probeHTTP(ctx context.Context, deadline time.Time, p time.Duration) (Decision, error) {
	version := ModernVersion
	for attempt := 1; ; attempt++ {
		o := n.postDiscover(ctx, deadline, probeID(attempt), version, p)
		if err := ctx.Err(); err != nil {
			return Decision{}, err
		}
		d := Classify(o)
		if d.Kind != Corrective {
			return d, nil
		}
		if attempt == 2 {
			return fail(d.Label, 0, "the server refused the probe's version twice ("+d.Evidence+")", nil), nil
		}
		version = d.Version
	}
}

// postDiscover sends one probe request and turns the answer into an
// Outcome.
func (n *negotiator) postDiscover(ctx context.Context, deadline time.Time, id, version string, p time.Duration) Outcome {
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	timedOut := Outcome{Kind: OutcomeTimedOut, Transport: ProbeHTTP, After: p}
	classifyErr := func(err error) Outcome {
		if pctx.Err() != nil {
			return timedOut
		}
		return Outcome{Kind: OutcomeNetworkError, Transport: ProbeHTTP, Err: err}
	}

	req, err := http.NewRequestWithContext(pctx, http.MethodPost, n.spec.URL, bytes.NewReader(discoverRequest(id, version)))
	if err != nil {
		return Outcome{Kind: OutcomeNetworkError, Transport: ProbeHTTP, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "server/discover")
	resp, err := n.spec.HTTPClient.Do(req)
	if err != nil {
		return classifyErr(err)
	}
	defer resp.Body.Close()
	ct := mediaType(resp.Header.Get("Content-Type"))
	n.log.Debug("negotiation: probe answered", "status", resp.StatusCode, "content_type", ct)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The status decides, whatever the body does: keep what arrives in
		// time, bounded.
		body, _ := readBounded(resp.Body)
		return Outcome{Kind: OutcomeHTTPFailure, Transport: ProbeHTTP,
			HTTP: &HTTPFailure{Status: resp.StatusCode, ContentType: ct, Body: truncate(body)}}
	}
	if ct == "text/event-stream" {
		return readSSEAnswer(resp.Body, id, resp.StatusCode, classifyErr)
	}
	body, err := readBounded(resp.Body)
	if err != nil {
		return classifyErr(err)
	}
	if len(body) > MaxAnswerBytes {
		return Outcome{Kind: OutcomeOversize, Transport: ProbeHTTP}
	}
	if f, ok := httpAnswer(body, id); ok {
		return answerOutcome(f, len(body), ProbeHTTP)
	}
	return Outcome{Kind: OutcomeHTTPFailure, Transport: ProbeHTTP,
		HTTP: &HTTPFailure{Status: resp.StatusCode, ContentType: ct, Body: body}}
}

// readBounded reads at most MaxAnswerBytes+1 bytes, so that a longer body
// can be told apart.
func readBounded(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
}

func truncate(b []byte) []byte {
	if len(b) > MaxAnswerBytes {
		return b[:MaxAnswerBytes]
	}
	return b
}

// httpAnswer decodes a single JSON-RPC response from a JSON body. A response
// to our id, or an error response with a null id (some servers cannot tell
// the id of a request they refuse), is the answer.
func httpAnswer(body []byte, id string) (frame, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return frame{}, false
	}
	var f frame
	if json.Unmarshal(body, &f) != nil || f.Method != "" {
		return frame{}, false
	}
	if f.Error == nil && f.Result == nil {
		return frame{}, false
	}
	var got string
	if json.Unmarshal(f.ID, &got) == nil && got == id {
		return f, true
	}
	if f.Error != nil && (len(f.ID) == 0 || string(f.ID) == "null") {
		return f, true
	}
	return frame{}, false
}

// readSSEAnswer reads server-sent events until the response with our id,
// skipping notifications, requests and foreign ids. At most MaxAnswerBytes
// of stream are read.
func readSSEAnswer(body io.Reader, id string, status int, classifyErr func(error) Outcome) Outcome {
	cr := &countingReader{r: io.LimitReader(body, MaxAnswerBytes+1)}
	br := bufio.NewReaderSize(cr, 64<<10)
	var data bytes.Buffer
	dispatch := func() (Outcome, bool) {
		defer data.Reset()
		if data.Len() == 0 {
			return Outcome{}, false
		}
		line := bytes.TrimSpace(data.Bytes())
		if len(line) == 0 || line[0] != '{' {
			return Outcome{}, false
		}
		var f frame
		if json.Unmarshal(line, &f) != nil || f.Method != "" {
			return Outcome{}, false
		}
		var got string
		if json.Unmarshal(f.ID, &got) != nil || got != id {
			return Outcome{}, false
		}
		return answerOutcome(f, len(line), ProbeHTTP), true
	}
	consumed := 0
	for {
		line, err := br.ReadString('\n')
		if consumed += len(line); consumed > MaxAnswerBytes {
			return Outcome{Kind: OutcomeOversize, Transport: ProbeHTTP}
		}
		if len(line) > 0 || err == nil {
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if o, ok := dispatch(); ok {
					return o
				}
			case strings.HasPrefix(line, ":"): // comment
			default:
				field, value, _ := strings.Cut(line, ":")
				value = strings.TrimPrefix(value, " ")
				if field == "data" {
					if data.Len() > 0 {
						data.WriteByte('\n')
					}
					data.WriteString(value)
				}
			}
		}
		if err != nil {
			if o, ok := dispatch(); ok { // an unterminated last event
				return o
			}
			if cr.n > MaxAnswerBytes {
				return Outcome{Kind: OutcomeOversize, Transport: ProbeHTTP}
			}
			if errors.Is(err, io.EOF) {
				return Outcome{Kind: OutcomeHTTPFailure, Transport: ProbeHTTP,
					HTTP: &HTTPFailure{Status: status, ContentType: "text/event-stream"}}
			}
			return classifyErr(err)
		}
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
