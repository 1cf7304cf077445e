package httpapi

import (
	"bytes"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/gin-gonic/gin"
)

// webShellCSP is the Content-Security-Policy of the WebShell: only its own
// files, no inline script or style, no framing by anyone; frames only from
// the origins of the MCP App sandbox proxy (the daemon's loopback names,
// and AppsSandboxURL's origin).
func webShellCSP(frameOrigins []string) string {
	frameSrc := "'self'"
	if len(frameOrigins) > 0 {
		frameSrc = strings.Join(frameOrigins, " ")
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"media-src 'self' data:; connect-src 'self'; frame-src " + frameSrc + "; object-src 'none'; base-uri 'none'; " +
		"form-action 'none'; frame-ancestors 'none'"
}

func (a *api) mountWebShell(r *gin.Engine) {
	if a.opts.Assets == nil {
		return
	}
	serve := func(c *gin.Context, name string) {
		data, err := fs.ReadFile(a.opts.Assets, name)
		if err != nil {
			writeError(c, http.StatusNotFound, "not_found", "no such file")
			return
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		if name == "index.html" && a.sandboxOrigin != "" {
			// The page learns where Apps' sandbox is served for it.
			data = bytes.Replace(data, []byte(`<meta name="mcphost-apps-sandbox" content="">`),
				[]byte(`<meta name="mcphost-apps-sandbox" content="`+html.EscapeString(a.sandboxOrigin)+`">`), 1)
		}
		hd := c.Writer.Header()
		hd.Set("Content-Security-Policy", a.csp)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Cache-Control", "no-cache")
		c.Data(http.StatusOK, ctype, data)
	}
	r.GET("/", func(c *gin.Context) { serve(c, "index.html") })
	r.GET("/assets/*name", func(c *gin.Context) {
		name := strings.TrimPrefix(c.Param("name"), "/")
		if name == "" || !fs.ValidPath(name) {
			writeError(c, http.StatusNotFound, "not_found", "no such file")
			return
		}
		serve(c, name)
	})
}
