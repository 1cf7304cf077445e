package upstream

// Whose a server's log message is.
//
// A log message (notifications/message) names no request: MCP 2025-11-25
// gives it a level, a logger name, data and _meta, nothing that links it
// to the call that caused it. mcphost reads each one as it comes off the
// wire, below go-sdk (answerGuard for stdio, SSE and in-process sessions;
// the event streams of a Streamable HTTP session, in AnswerCheck), and
// decides there whose it is, while the call it came with is still in
// flight: go-sdk hands notifications to its handler on another goroutine,
// often after the answer that followed them has been read and the call has
// returned (progress.go), when the calls in flight are no longer those of
// the moment the message came. It belongs to
//
//   - the call on whose event stream it came (Streamable HTTP: the spec
//     says that what a server sends on a request's stream relates to that
//     request), including a relayed call's stream from a singleton
//     server's holder, which decided the same way on its side;
//   - on a per-client session (perclient.go): the newest running call of
//     its client; with none running, nobody;
//   - on the shared session: the only call in flight on it. With several,
//     or none, it belongs to no call: the server may be logging about any
//     of them, or none. So does what comes on a relay session's own stream
//     (the holder sends there only what no call owns).
//
// A message that belongs to a call goes to that call's door
// (SessionCall.OnLog: the gateway passes it to the client that made the
// call) and to nobody else. One that belongs to no call reaches the
// gateway's clients only when the server's block says log_messages =
// "all": then every client with a call running on the server hears it
// (WatchLogs); by default, only the log and the server's card keep it.
//
// The rule for the shared session is a guess that a server can defeat: one
// that logs about an earlier call while only another runs gives that call
// the message. A server whose log messages must stay with their caller
// should run with session_mode = "per_client", or speak Streamable HTTP.

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/internal/transport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logOwner is whose a log message is: a call's, or no call's (unowned), or
// nobody's at all (a per-client session with no call running: it is its
// client's, but there is no call to pass it on).
type logOwner struct {
	call    *Call
	unowned bool
}

// readLog routes a log message read off the wire (params, its raw params)
// to whom owner names at that moment. A message go-sdk could not decode
// either is dropped.
func (c *Conn) readLog(params json.RawMessage, owner func() logOwner) {
	var p mcp.LoggingMessageParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.logMessage(&p, owner())
}

// logMessage keeps one log message of the server on its card and, within
// the bounds of its stderr, passes it on as its owner says and logs it:
// rate-limited by c.logLimit (a suppressed message is not even rendered),
// its data cut to stderrLineMax and its level and logger name to
// logNameMax. Log messages are kept nowhere else.
func (c *Conn) logMessage(p *mcp.LoggingMessageParams, owner logOwner) {
	c.recent.add(LogLine{At: time.Now().UTC(), Level: transport.CutText(string(p.Level), transport.LogNameMax),
		Logger: transport.CutText(p.Logger, transport.LogNameMax), Data: transport.CutText(transport.RenderLogData(p.Data), transport.StderrLineMax)})
	if !c.logLimit.Allow() {
		return
	}
	attrs := []any{"level", transport.CutText(string(p.Level), transport.LogNameMax),
		"logger", transport.CutText(p.Logger, transport.LogNameMax),
		"data", transport.CutText(transport.RenderLogData(p.Data), transport.StderrLineMax)}
	switch {
	case owner.call != nil:
		attrs = append(attrs, "principal", owner.call.Principal, "tool", owner.call.Tool)
		if owner.call.Log != nil {
			owner.call.Log(p)
		}
	case owner.unowned && c.Cfg.LogMessages == config.LogMessagesAll && c.deps.LogMessage != nil && !c.retired.Load():
		c.deps.LogMessage(c.Cfg.Name, c.principal, p)
	}
	c.logger.Info("server log message", attrs...)
}

// sharedLogOwner is whose a log message on the shared session is: the only
// call in flight on it, else no call's.
func (c *Conn) sharedLogOwner() logOwner {
	if call := c.inflight.only(); call != nil {
		return logOwner{call: call}
	}
	return logOwner{unowned: true}
}

// streamLogOwner is whose a log message on an event stream of a
// Streamable HTTP session is, req being the request that opened the
// stream: the call that POSTed it, else the session's rule.
func (c *Conn) streamLogOwner(req *http.Request) logOwner {
	if call := streamCall(req); call != nil {
		return logOwner{call: call}
	}
	if u := c.clients.bySession(req.Header.Get("Mcp-Session-Id")); u != nil {
		return c.clients.logOwner(u)
	}
	return c.sharedLogOwner()
}

// relayLogOwner is whose a log message on an event stream of a relay
// session is: the relayed call that POSTed it, else no call's (the holder
// decided: it sends on the session's own stream only what no call owns).
func relayLogOwner(req *http.Request) logOwner {
	if call := streamCall(req); call != nil {
		return logOwner{call: call}
	}
	return logOwner{unowned: true}
}

// streamCall is the call whose POST opened an event stream, or nil.
func streamCall(req *http.Request) *Call {
	if req.Method != http.MethodPost {
		return nil
	}
	return callOf(req.Context())
}

// callOf is the call a request made with ctx is made for, or nil.
func callOf(ctx context.Context) *Call {
	call, _ := ctx.Value(RelayCallKey{}).(*Call)
	return call
}

// readRelayMessage is readMessage for the event streams of relay sessions.
func (c *Conn) readRelayMessage(req *http.Request, data []byte) {
	c.hearEvent(data, func() logOwner { return relayLogOwner(req) })
}
