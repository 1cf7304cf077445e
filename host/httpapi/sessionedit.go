package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Renaming, deleting and searching sessions: each principal's own only.

type renameSessionRequest struct {
	Title *string `json:"title"`
}

// renameSession answers PATCH /api/v1/sessions/:id {"title"}.
func (a *api) renameSession(c *gin.Context) {
	var req renameSessionRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.Title == nil {
		writeError(c, http.StatusBadRequest, "bad_request", `the body needs "title" (an empty one gives the session its dated default)`)
		return
	}
	s, err := a.h.RenameSession(c.Request.Context(), principal(c), c.Param("id"), *req.Title)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s)
}

// session answers GET /api/v1/sessions/:id: one of the caller's
// sessions, 404 for one it does not have.
func (a *api) session(c *gin.Context) {
	s, err := a.h.Session(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, s)
}

// deleteSession answers DELETE /api/v1/sessions/:id: the session and its
// entries (409 while a call runs in it).
func (a *api) deleteSession(c *gin.Context) {
	n, err := a.h.DeleteSession(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": true, "entries": n})
}

// searchSessions answers GET /api/v1/sessions?q=WORDS.
func (a *api) searchSessions(c *gin.Context, q string) {
	if len(q) > 200 {
		writeError(c, http.StatusBadRequest, "bad_request", "the search is longer than 200 bytes")
		return
	}
	ss, err := a.h.SearchSessions(c.Request.Context(), principal(c), q)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"sessions": ss})
}
