package upstream

// Progress that arrives just before a result.
//
// go-sdk v1.8.0 completes a call the moment its response is read
// (internal/jsonrpc2/conn.go, readIncoming), while the notifications read
// before that response wait in the connection's handler queue and are
// handled one at a time on another goroutine (handleAsync). A server that
// reports progress and then answers therefore often has its last reports,
// or all of them, handled after CallTool has returned: the caller would
// never hear them, and a relaying replica would have nobody to pass them
// to.
//
// mcphost counts the progress notifications of each call as they are read
// off the wire, below go-sdk (answerGuard.Read for stdio and SSE, the event
// stream of the call's POST for Streamable HTTP, where answerCheck sees
// every event), and counts them again as they are delivered. When the call
// returns, CallTool waits until every notification read before the answer
// has been delivered. The wait is bounded (progressDrainMax): a report that
// go-sdk refuses to decode is counted but never delivered.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/host/internal/transport"
)

// progressDrainMax bounds how long a returned call waits for progress read
// before its answer to be delivered.
const progressDrainMax = 250 * time.Millisecond

// methodProgress is the method of a progress notification, methodLog of a
// log message.
const (
	methodProgress = transport.MethodProgress
	methodLog      = transport.MethodLog
)

// progressWatch is one call's progress token: where its reports go, and
// how many were read and delivered.
type progressWatch struct {
	deliver   func(Progress)
	read      atomic.Int64
	delivered atomic.Int64
	kick      chan struct{} // a report was delivered (capacity 1)

	mu    sync.Mutex
	ended bool
}

// watchProgress registers a new token for a call whose reports go to
// deliver; stop unregisters it after waiting (up to progressDrainMax, or
// until ctx ends) for the reports already read to be delivered.
func (c *Conn) watchProgress(deliver func(Progress)) (token string, stop func(ctx context.Context)) {
	token = "mcphost-" + strconv.FormatUint(c.progressSeq.Add(1), 10)
	w := &progressWatch{deliver: deliver, kick: make(chan struct{}, 1)}
	c.progress.Store(token, w)
	return token, func(ctx context.Context) {
		defer func() {
			c.progress.Delete(token)
			w.mu.Lock()
			w.ended = true
			w.mu.Unlock()
		}()
		if w.delivered.Load() >= w.read.Load() {
			return
		}
		timer := time.NewTimer(progressDrainMax)
		defer timer.Stop()
		for w.delivered.Load() < w.read.Load() {
			select {
			case <-w.kick:
			case <-timer.C:
				return
			case <-ctx.Done():
				return
			}
		}
	}
}

// progressKey is the key of a progress token in Conn.progress: a
// string as it is, a number in its shortest form.
func progressKey(tok any) (string, bool) {
	switch t := tok.(type) {
	case string:
		return t, true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	}
	return "", false
}

// progressParams is the part of a progress notification's params that
// names its call.
type progressParams struct {
	ProgressToken any `json:"progressToken"`
}

// readNotification hears a notification read off the wire (params, its
// raw params): a progress notification is counted for the call whose token
// it names, if any; a log message is routed to whom owner names
// (serverlog.go).
func (c *Conn) readNotification(method string, params json.RawMessage, owner func() logOwner) {
	switch method {
	case methodProgress:
		var p progressParams
		if json.Unmarshal(params, &p) == nil {
			c.countProgress(p.ProgressToken)
		}
	case methodLog:
		c.readLog(params, owner)
	}
}

// readMessage hears data, one JSON-RPC message of an event stream of
// the server's that req opened (serverlog.go says whose its log messages
// are).
func (c *Conn) readMessage(req *http.Request, data []byte) {
	c.hearEvent(data, func() logOwner { return c.streamLogOwner(req) })
}

// hearEvent passes data, one JSON-RPC message of an event stream, to
// readNotification if it is a progress notification or a log message.
// Most messages are neither; they are not decoded.
func (c *Conn) hearEvent(data []byte, owner func() logOwner) {
	if !bytes.Contains(data, []byte(methodProgress)) && !bytes.Contains(data, []byte(methodLog)) {
		return
	}
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(data, &m) == nil {
		c.readNotification(m.Method, m.Params, owner)
	}
}

// countProgress counts one report read for the call with token tok.
func (c *Conn) countProgress(tok any) {
	key, ok := progressKey(tok)
	if !ok {
		return
	}
	if w, ok := c.progress.Load(key); ok {
		w.(*progressWatch).read.Add(1)
	}
}

// send delivers a report to the call, unless the call has ended (a
// report go-sdk handles after the wait gave up is dropped, so deliver is
// never called after the call returned).
func (w *progressWatch) send(pr Progress) {
	w.mu.Lock()
	if !w.ended {
		w.deliver(pr)
	}
	w.mu.Unlock()
	w.delivered.Add(1)
	select {
	case w.kick <- struct{}{}:
	default:
	}
}
