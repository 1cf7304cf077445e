package httpapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
)

// elicitations lists the caller's open questions: servers asking the user
// something while one of the caller's calls runs.
func (a *api) elicitations(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"elicitations": a.h.PendingElicitations(principal(c))})
}

// answerElicitation answers one of the caller's open questions:
// {"action": "accept"|"decline"|"cancel", "content": {...}}. Content that
// does not match the requested schema is answered 422 and the question
// stays open.
func (a *api) answerElicitation(c *gin.Context) {
	var req host.ElicitationAnswer
	if !a.decode(c, &req, false) {
		return
	}
	err := a.h.AnswerElicitation(principal(c), c.Param("id"), req)
	var ae *host.ElicitationAnswerError
	switch {
	case errors.As(err, &ae):
		writeError(c, http.StatusUnprocessableEntity, "invalid_answer", err.Error())
	case err != nil:
		writeError(c, http.StatusNotFound, "not_found", "no such open question")
	default:
		c.JSON(http.StatusOK, gin.H{"id": c.Param("id"), "action": req.Action})
	}
}
