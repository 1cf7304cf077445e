package httpapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
)

// A server's card, for admins: its stderr tail and last log messages on
// demand, and a restart.

// serverLogs answers GET /api/v1/servers/:name/logs.
func (a *api) serverLogs(c *gin.Context) {
	logs, err := a.h.ServerLogs(c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, logs)
}

// restartServer answers POST /api/v1/servers/:name/restart: 202, the
// server's new status follows as server events.
func (a *api) restartServer(c *gin.Context) {
	err := a.h.RestartServer(c.Param("name"))
	if errors.Is(err, host.ErrServerDisabled) {
		writeError(c, http.StatusConflict, "conflict", err.Error())
		return
	}
	if err != nil {
		a.fail(c, err)
		return
	}
	a.log.Info("server restart requested", "server", c.Param("name"), "by", principal(c).Name)
	c.JSON(http.StatusAccepted, gin.H{"restarting": true})
}
