package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
)

type principalKey struct{}

// authenticate resolves `Authorization: Bearer TOKEN` to a principal and
// stores it in the request's context (not only in gin's key map, so handlers
// mounted with gin.WrapH see it too). A token in the query string is ignored.
func (a *api) authenticate(c *gin.Context) {
	token, ok := bearerToken(c.Request.Header.Get("Authorization"))
	if !ok {
		c.Header("WWW-Authenticate", `Bearer realm="mcphost"`)
		writeError(c, http.StatusUnauthorized, "unauthorized", "send the token as Authorization: Bearer TOKEN")
		c.Abort()
		return
	}
	p, ok := a.h.Authenticate(token)
	if !ok {
		c.Header("WWW-Authenticate", `Bearer realm="mcphost", error="invalid_token"`)
		writeError(c, http.StatusUnauthorized, "unauthorized", "the token was not accepted")
		c.Abort()
		return
	}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), principalKey{}, p))
	c.Next()
}

// bearerToken extracts the token of a Bearer authorization header.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// caller returns the authenticated caller of a request: its principal, the
// origin its credential implies, and whether it is an admin.
func caller(c *gin.Context) host.Caller {
	p, _ := c.Request.Context().Value(principalKey{}).(host.Caller)
	return p
}

// principal returns the authenticated principal of a request.
func principal(c *gin.Context) host.Principal { return caller(c).Principal }

// requireAdmin answers 403 unless the caller is an admin.
func (a *api) requireAdmin(c *gin.Context) {
	if !caller(c).Admin {
		writeError(c, http.StatusForbidden, "forbidden", "only an admin may do this (see `admins` in the configuration)")
		c.Abort()
		return
	}
	c.Next()
}

// webShellOnly answers 403 unless the request authenticated with a
// WebShell credential: the App requests are the WebShell's, made for the
// App it shows.
func (a *api) webShellOnly(c *gin.Context) {
	if caller(c).Origin != host.OriginUser {
		writeError(c, http.StatusForbidden, "forbidden", "only the WebShell makes requests for MCP Apps; sign in to the WebShell")
		c.Abort()
		return
	}
	c.Next()
}

type webShellSessionResponse struct {
	Credential string      `json:"credential"`
	Caller     host.Caller `json:"caller"`
}

// webShellSession exchanges a principal's token for its WebShell
// credential, with which the WebShell's requests have the origin "user".
// Only the WebShell's page asks: a browser's POST from it carries the
// daemon's own Origin (checkOrigin refuses any other) and, from a secure
// context such as loopback, Sec-Fetch-Site: same-origin, which a page
// elsewhere cannot forge. This keeps API clients from wandering into the
// WebShell's origin; it does not stop a holder of the token who means to
// (`webshell = false` in the principal block does). It is mounted without
// authenticate: the token is the one to exchange.
func (a *api) webShellSession(c *gin.Context) {
	site := c.Request.Header.Get("Sec-Fetch-Site")
	if c.Request.Header.Get("Origin") == "" || (site != "" && site != "same-origin") {
		writeError(c, http.StatusForbidden, "forbidden", "the WebShell signs in from its own page; API clients use their token directly")
		return
	}
	token, ok := bearerToken(c.Request.Header.Get("Authorization"))
	if !ok {
		c.Header("WWW-Authenticate", `Bearer realm="mcphost"`)
		writeError(c, http.StatusUnauthorized, "unauthorized", "send the token as Authorization: Bearer TOKEN")
		return
	}
	cred, who, err := a.h.WebShellSignIn(token)
	switch {
	case errors.Is(err, host.ErrNoWebShell):
		writeError(c, http.StatusForbidden, "no_webshell", err.Error())
		return
	case err != nil:
		c.Header("WWW-Authenticate", `Bearer realm="mcphost", error="invalid_token"`)
		writeError(c, http.StatusUnauthorized, "unauthorized", "the token was not accepted")
		return
	}
	if who.Groups == nil {
		who.Groups = []string{}
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, webShellSessionResponse{Credential: cred, Caller: who})
}
