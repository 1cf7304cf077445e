package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// me describes the caller: principal, groups, the origin its credential
// gives its calls, and whether it is an admin.
func (a *api) me(c *gin.Context) {
	p := caller(c)
	if p.Groups == nil {
		p.Groups = []string{}
	}
	c.JSON(http.StatusOK, p)
}

// servers lists the servers the caller may see: an admin every one with
// its process details, anyone else those the list rules leave it, without.
func (a *api) servers(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"servers": a.h.ServersFor(c.Request.Context(), caller(c))})
}

// requestOrigin checks an origin the client named (in a call's body or a
// query) against the one its credential gives: the daemon decides the
// origin, so a client may repeat its own but never claim another. The
// WebShell may also say "app" when allowApp, for the requests it makes on
// behalf of an MCP App. It answers 400 or 403 and returns false otherwise.
func requestOrigin(c *gin.Context, claimed string, allowApp bool) (string, bool) {
	own := caller(c).Origin
	switch {
	case claimed == "" || claimed == own:
		return own, true
	case claimed == host.OriginApp && allowApp && own == host.OriginUser:
		return host.OriginApp, true
	case claimed != host.OriginUser && claimed != host.OriginAPI && claimed != host.OriginApp:
		writeError(c, http.StatusBadRequest, "bad_request", `"origin" is "user", "api" or "app"`)
		return "", false
	}
	writeError(c, http.StatusForbidden, "forbidden", fmt.Sprintf(
		"the origin is decided by how the request authenticated: this credential makes %q requests, not %q (only the WebShell's sign-in makes \"user\" ones)", own, claimed))
	return "", false
}

// tools lists the tools the caller may see (the list phase of the
// policies), with the origin its credential gives; ?origin may only repeat
// it. With ?search it ranks them instead (searchTools).
func (a *api) tools(c *gin.Context) {
	origin, ok := requestOrigin(c, c.Query("origin"), false)
	if !ok {
		return
	}
	if _, searching := c.GetQuery("search"); searching {
		a.searchTools(c, origin)
		return
	}
	tools, err := a.h.ToolsFor(c.Request.Context(), principal(c), origin, "")
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"tools": toolViews(tools)})
}

// toolViews is how the API shows tools.
func toolViews(tools []host.Tool) []host.ToolView {
	out := make([]host.ToolView, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.View())
	}
	return out
}

// The bounds of a tool search (GET /api/v1/tools?search=...).
const (
	searchQueryMax     = 1000 // bytes of the query
	searchLimitDefault = 20
	searchLimitMax     = 100
)

// searchTools answers GET /api/v1/tools?search=QUERY[&server=NAME...][&limit=N]:
// the tools of the caller's view ranked against the query by the host
// (the toolsearch ranker, as the gateway's search_tools), best first, at
// most limit of them, and how many matched in all. A server named that the
// caller may not see is a 404, as for every route that names one.
func (a *api) searchTools(c *gin.Context, origin string) {
	query := c.Query("search")
	switch {
	case len(query) > searchQueryMax:
		writeError(c, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"search" is %d bytes long; a search has at most %d`, len(query), searchQueryMax))
		return
	case strings.TrimSpace(query) == "":
		writeError(c, http.StatusBadRequest, "bad_request", `"search" is empty: give the words to look for, or leave "search" out to list every tool`)
		return
	}
	limit := searchLimitDefault
	if s, given := c.GetQuery("limit"); given {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > searchLimitMax {
			writeError(c, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"limit" is a whole number from 1 to %d (default %d), not %q`, searchLimitMax, searchLimitDefault, s))
			return
		}
		limit = n
	}
	who := caller(c)
	who.Origin = origin
	tools, total, err := a.h.SearchTools(c.Request.Context(), who, query, c.QueryArray("server"), limit)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"tools": toolViews(tools), "total": total})
}

func (a *api) prompts(c *gin.Context) {
	prompts, err := a.h.PromptsFor(c.Request.Context(), caller(c), c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	if prompts == nil {
		prompts = []*mcp.Prompt{}
	}
	c.JSON(http.StatusOK, gin.H{"prompts": prompts})
}

func (a *api) resources(c *gin.Context) {
	res, templates, err := a.h.ResourcesFor(c.Request.Context(), caller(c), c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	if res == nil {
		res = []*mcp.Resource{}
	}
	if templates == nil {
		templates = []*mcp.ResourceTemplate{}
	}
	c.JSON(http.StatusOK, gin.H{"resources": res, "resourceTemplates": templates})
}

// refresh lists a server's tools, prompts and resources again (lists still
// fresh by their ttlMs come from the host cache).
func (a *api) refresh(c *gin.Context) {
	ctx, who := c.Request.Context(), caller(c)
	if err := a.h.CheckVisible(ctx, who, c.Param("name")); err != nil {
		a.fail(c, err)
		return
	}
	if _, err := a.h.RefreshCatalog(ctx, c.Param("name")); err != nil {
		a.fail(c, err)
		return
	}
	st, err := a.h.ServerFor(ctx, who, c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

type createSessionRequest struct {
	Title string `json:"title"`
}

func (a *api) createSession(c *gin.Context) {
	var req createSessionRequest
	if !a.decode(c, &req, true) {
		return
	}
	s, err := a.h.CreateSession(c.Request.Context(), principal(c), req.Title)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, s)
}

func (a *api) sessions(c *gin.Context) {
	if q, ok := c.GetQuery("q"); ok {
		a.searchSessions(c, q)
		return
	}
	ss, err := a.h.Sessions(c.Request.Context(), principal(c))
	if err != nil {
		a.fail(c, err)
		return
	}
	if ss == nil {
		c.JSON(http.StatusOK, gin.H{"sessions": []any{}})
		return
	}
	c.JSON(http.StatusOK, gin.H{"sessions": ss})
}

type callRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	CallID    string          `json:"callId"`
	Origin    string          `json:"origin"`
	// AppEntryID names the App's entry; only with origin "app".
	AppEntryID string `json:"appEntryId"`
}

func (a *api) call(c *gin.Context) {
	var req callRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.Server == "" || req.Tool == "" {
		writeError(c, http.StatusBadRequest, "bad_request", `the body needs "server" and "tool"`)
		return
	}
	origin, ok := requestOrigin(c, req.Origin, true)
	if !ok {
		return
	}
	sc := host.SessionCall{
		Principal:  principal(c),
		SessionID:  c.Param("id"),
		Server:     req.Server,
		Tool:       req.Tool,
		Arguments:  req.Arguments,
		CallID:     req.CallID,
		Origin:     origin,
		AppEntryID: req.AppEntryID,
	}
	if preferAsync(c.Request.Header) {
		a.callAsync(c, sc)
		return
	}
	entry, err := a.h.Call(c.Request.Context(), sc)
	a.writeCallAnswer(c, entry, err)
}

// writeCallAnswer answers a call with its entry, or its error.
func (a *api) writeCallAnswer(c *gin.Context, entry *store.Entry, err error) {
	var pe *host.PolicyError
	if errors.As(err, &pe) {
		// 403 with the rule and its message, and the recorded entry so the
		// caller can show the refusal in the transcript.
		c.JSON(http.StatusForbidden, gin.H{
			"error": gin.H{"code": "denied_by_policy", "message": pe.Message, "rule": pe.Rule, "phase": pe.Phase},
			"entry": entry,
		})
		return
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, entry)
}

// approvals lists the calls waiting for approval that the caller may
// see: its own, those it may answer, every one for an admin.
func (a *api) approvals(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"approvals": a.h.ApprovalsFor(caller(c))})
}

type answerRequest struct {
	Decision string `json:"decision"` // approve | deny
}

// answer approves (once) or denies a pending approval the caller may
// answer: 403 when it may only see it, 404 when it may not even see it.
func (a *api) answer(c *gin.Context) {
	var req answerRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.Decision != "approve" && req.Decision != "deny" {
		writeError(c, http.StatusBadRequest, "bad_request", `"decision" is "approve" or "deny"`)
		return
	}
	err := a.h.AnswerApproval(caller(c), c.Param("id"), req.Decision == "approve")
	switch {
	case errors.Is(err, host.ErrNotApprover):
		writeError(c, http.StatusForbidden, "forbidden", err.Error())
		return
	case err != nil:
		writeError(c, http.StatusNotFound, "not_found", "no such pending approval")
		return
	}
	c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "decision": req.Decision})
}

// pageQuery reads a page's cursor (the query parameter cursor, a
// non-negative number described by what) and limit (1 to 500, default
// 100). It answers 400 and returns ok false when either is malformed.
func pageQuery(c *gin.Context, cursor, what string) (from int64, limit int, ok bool) {
	limit = 100
	if v := c.Query(cursor); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(c, http.StatusBadRequest, "bad_request", fmt.Sprintf("%q is %s", cursor, what))
			return 0, 0, false
		}
		from = n
	}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeError(c, http.StatusBadRequest, "bad_request", `"limit" is a number from 1 to 500`)
			return 0, 0, false
		}
		limit = n
	}
	return from, limit, true
}

// audit returns a page of the caller's policy decisions (every
// principal's for an admin), newest first.
func (a *api) audit(c *gin.Context) {
	before, limit, ok := pageQuery(c, "before", "a non-negative record id")
	if !ok {
		return
	}
	records, err := a.h.AuditLog(c.Request.Context(), caller(c), before, limit)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"audit": records})
}

// compact empties the App HTML of a session's entries (apps.md §7).
func (a *api) compact(c *gin.Context) {
	n, err := a.h.CompactSession(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"compacted": n})
}

func (a *api) cancelCall(c *gin.Context) {
	if err := a.h.CancelCall(principal(c), c.Param("id"), c.Param("callId")); err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"cancelled": true})
}

func (a *api) entries(c *gin.Context) {
	after, limit, ok := pageQuery(c, "after", "a non-negative sequence number")
	if !ok {
		return
	}
	entries, next, err := a.h.Entries(c.Request.Context(), principal(c), c.Param("id"), after, limit)
	if err != nil {
		a.fail(c, err)
		return
	}
	var nextJSON any
	if next > 0 {
		nextJSON = next
	}
	if entries == nil {
		c.JSON(http.StatusOK, gin.H{"entries": []any{}, "next": nextJSON})
		return
	}
	c.JSON(http.StatusOK, gin.H{"entries": entries, "next": nextJSON})
}

func (a *api) metrics(c *gin.Context) {
	c.Header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	c.Status(http.StatusOK)
	_ = a.h.WriteMetrics(c.Writer)
	if a.opts.Metrics != nil {
		_ = a.opts.Metrics(c.Writer)
	}
}

// Timing of event streams.
const (
	// eventsPing is how often an idle stream gets a comment line (so
	// proxies keep it open) and its credential is checked again.
	eventsPing = 15 * time.Second
	// eventsWriteTimeout bounds one write to a stream: a client that stops
	// reading is cut off instead of holding a goroutine forever.
	eventsWriteTimeout = 10 * time.Second
)

// events streams host events as server-sent events until the client goes
// away, the host closes, the client falls too far behind, or its credential
// stops authenticating (a reload that rotates or removes its token ends the
// stream at once; the stream also checks it at every ping).
func (a *api) events(c *gin.Context) {
	who := caller(c)
	ch, stop, err := a.h.Subscribe(who)
	if errors.Is(err, host.ErrRevoked) {
		c.Header("WWW-Authenticate", `Bearer realm="mcphost", error="invalid_token"`)
		writeError(c, http.StatusUnauthorized, "unauthorized", "the token was not accepted")
		return
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	defer stop()
	w := c.Writer
	rc := http.NewResponseController(w)
	// The connection may serve another request after this one.
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	write := func(format string, args ...any) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(eventsWriteTimeout))
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !write(": mcphost events\n\n") {
		return
	}
	ping := time.NewTicker(eventsPing)
	defer ping.Stop()
	ctx := c.Request.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if !a.h.StillValid(who) || !write(": ping\n\n") {
				return
			}
		case ev, ok := <-ch:
			if !ok || !write("event: %s\ndata: %s\n\n", ev.Type, ev.JSON) {
				return
			}
		}
	}
}

// decode reads a JSON body into v, refusing unknown fields and trailing
// data. An empty body is allowed when emptyOK. It writes the error answer
// and returns false on failure.
func (a *api) decode(c *gin.Context, v any, emptyOK bool) bool {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(c, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit))
			return false
		}
		writeError(c, http.StatusBadRequest, "bad_request", "reading the request body failed")
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK {
			return true
		}
		writeError(c, http.StatusBadRequest, "bad_request", "the request needs a JSON body")
		return false
	}
	// Only JSON: a text/plain or form body is what a cross-site form can
	// send without a CORS preflight.
	if c.ContentType() != "application/json" {
		writeError(c, http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be JSON sent with Content-Type: application/json")
		return false
	}
	if err := decodeStrict(body, v); err != nil {
		writeError(c, http.StatusBadRequest, "bad_request", "malformed JSON body: "+err.Error())
		return false
	}
	return true
}

// decodeStrict unmarshals one JSON value into v, refusing unknown fields
// and anything after the value.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("%v (at byte %d)", err, se.Offset)
		}
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// fail maps a host error to its status.
func (a *api) fail(c *gin.Context, err error) {
	var (
		us  *host.UnknownServerError
		ut  *host.UnknownToolError
		nr  *host.NotReadyError
		ae  *host.ArgumentsError
		re  *host.RequestError
		mbe *http.MaxBytesError
		ad  *host.AppDeniedError
		al  *host.AppLimitError
		rl  *host.RateLimitError
		ts  *host.TooManySubscribersError
	)
	if failAuth(c, err) {
		return
	}
	switch {
	case errors.As(err, &rl):
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(max(rl.RetryAfter, time.Second).Seconds()))))
		writeError(c, http.StatusTooManyRequests, "rate_limited", err.Error())
	case errors.As(err, &ts):
		c.Header("Retry-After", "5")
		writeError(c, http.StatusTooManyRequests, "too_many_streams", err.Error())
	case errors.As(err, &ad):
		writeError(c, http.StatusForbidden, "denied", err.Error())
	case errors.As(err, &al), errors.Is(err, host.ErrTooManyApprovals):
		writeError(c, http.StatusTooManyRequests, "too_many_requests", err.Error())
	case errors.Is(err, host.ErrNotFound):
		writeError(c, http.StatusNotFound, "not_found", "no such session or call")
	case errors.As(err, &us), errors.As(err, &ut):
		writeError(c, http.StatusNotFound, "not_found", err.Error())
	case errors.As(err, &nr):
		writeError(c, http.StatusServiceUnavailable, "not_ready", err.Error())
	case errors.Is(err, host.ErrDraining):
		c.Header("Retry-After", "1")
		writeError(c, http.StatusServiceUnavailable, "draining", err.Error())
	case errors.As(err, &ae):
		writeError(c, http.StatusBadRequest, "invalid_arguments", err.Error())
	case errors.As(err, &re):
		writeError(c, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, host.ErrCallIDInUse), errors.Is(err, host.ErrSessionBusy):
		writeError(c, http.StatusConflict, "conflict", err.Error())
	case errors.As(err, &mbe):
		writeError(c, http.StatusRequestEntityTooLarge, "too_large", err.Error())
	case errors.Is(err, host.ErrDiskFull):
		a.log.Error("request failed: the data directory is full", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		writeError(c, http.StatusInsufficientStorage, "disk_full",
			"the daemon's data directory is full, so the call could not be recorded; free some space (the call itself may have run)")
	default:
		a.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		writeError(c, http.StatusInternalServerError, "internal", "internal error; the daemon's log has the details")
	}
}
