package httpapi

import (
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/gin-gonic/gin"
)

// pprof serves Go's runtime profiles (net/http/pprof) to admins, when the
// running config's `telemetry { pprof = true }` says so; otherwise the
// routes answer 404 with the setting that opens them. The handlers are
// called directly: nothing is registered on http.DefaultServeMux's routes
// that the daemon serves.
func (a *api) pprof(c *gin.Context) {
	if !a.h.TelemetryConfig().Pprof {
		writeError(c, http.StatusNotFound, "not_found", "profiling is off: set pprof = true in the config's telemetry block (admins only), then reload")
		return
	}
	name := strings.TrimPrefix(c.Param("profile"), "/")
	switch name {
	case "cmdline":
		pprof.Cmdline(c.Writer, c.Request)
	case "profile":
		pprof.Profile(c.Writer, c.Request)
	case "symbol":
		pprof.Symbol(c.Writer, c.Request)
	case "trace":
		pprof.Trace(c.Writer, c.Request)
	default:
		// The index, and the named profiles (heap, goroutine, allocs,
		// block, mutex, threadcreate), which Index finds by the path.
		pprof.Index(c.Writer, c.Request)
	}
}
