package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	neturl "net/url"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/store"
)

// A call with `Prefer: respond-async` (RFC 7240) that an `ask` rule holds
// for approval is answered 202 Accepted at once, with the pending approval
// and, in Location, the call's URL; the call runs on in the daemon until
// it is approved, denied, expires or is cancelled (DELETE on that URL),
// and its entry follows as the `entry` event and at that URL. A call that
// needs no approval is answered as without the preference, when it ends.

// preferAsync reports whether the request's Prefer header asks for
// respond-async.
func preferAsync(h http.Header) bool {
	for _, v := range h.Values("Prefer") {
		for _, p := range strings.Split(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(p), "=")
			if strings.EqualFold(strings.TrimSpace(name), "respond-async") {
				return true
			}
		}
	}
	return false
}

type callOutcome struct {
	entry *store.Entry
	err   error
}

// callAsync runs sc and answers when it ends or when it waits for an
// approval, whichever comes first. The call does not end with the
// request: it is the daemon's now.
func (a *api) callAsync(c *gin.Context, sc host.SessionCall) {
	if sc.CallID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		sc.CallID = "c_" + hex.EncodeToString(b[:])
	}
	pending := make(chan host.Approval, 1)
	ctx := host.WithApprovalPending(context.WithoutCancel(c.Request.Context()), func(ap host.Approval) {
		select {
		case pending <- ap:
		default:
		}
	})
	done := make(chan callOutcome, 1)
	go func() {
		entry, err := a.h.Call(ctx, sc)
		done <- callOutcome{entry, err}
	}()
	select {
	case out := <-done:
		a.writeCallAnswer(c, out.entry, out.err)
	case ap := <-pending:
		url := "/api/v1/sessions/" + neturl.PathEscape(sc.SessionID) + "/calls/" + neturl.PathEscape(sc.CallID)
		c.Header("Preference-Applied", "respond-async")
		c.Header("Location", url)
		c.JSON(http.StatusAccepted, gin.H{"status": "pending_approval", "callId": sc.CallID, "approval": ap, "location": url})
	case <-c.Request.Context().Done():
		// The client left before either: the call runs on, as it would
		// have once answered.
	}
}

// callState answers GET /api/v1/sessions/:id/calls/:callId: 202 with the
// pending approval while the call runs, 200 with its entry once it has
// ended, 404 for a call the session does not have.
func (a *api) callState(c *gin.Context) {
	st, err := a.h.CallState(c.Request.Context(), principal(c), c.Param("id"), c.Param("callId"))
	if err != nil {
		a.fail(c, err)
		return
	}
	if st.Running {
		status := "running"
		if st.Approval != nil {
			status = "pending_approval"
		}
		c.JSON(http.StatusAccepted, gin.H{"status": status, "callId": c.Param("callId"), "approval": st.Approval, "progress": st.Progress})
		return
	}
	c.JSON(http.StatusOK, st.Entry)
}
