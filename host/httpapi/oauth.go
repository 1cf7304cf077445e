package httpapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/oauth"
)

// mountOAuth adds the sign-in routes: /oauth/launch/ID (GET, and POST from
// its confirmation page) and /oauth/callback before authentication (the
// flow and the browser's binding cookie guard them; the Host check stays),
// and the API that starts, follows and ends sign-ins.
func (a *api) mountOAuth(r *gin.Engine, v1 *gin.RouterGroup) {
	oh := gin.WrapH(a.h.OAuthHandler())
	r.GET("/oauth/launch/:id", oh)
	r.POST("/oauth/launch/:id", oh)
	r.GET("/oauth/callback", oh)

	v1.GET("/auth", a.authStatus)
	v1.POST("/servers/:name/auth/start", a.authStart)
	v1.DELETE("/servers/:name/auth", a.authSignOut)
	v1.GET("/auth/flows/:id", a.authFlow)
}

// authStatus answers GET /api/v1/auth[?server=NAME]: who is signed in
// where (the caller's own and shared credentials; all of them for an
// admin). Never a token.
func (a *api) authStatus(c *gin.Context) {
	st, err := a.h.AuthStatus(c.Request.Context(), caller(c), c.Query("server"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"credentials": st})
}

// authStart answers POST /api/v1/servers/NAME/auth/start with the flow and
// its single-use launch URL, for the caller to open in a browser. The
// answer carries the cookie that binds the launch to the caller's browser
// (the WebShell's, which keeps it): that browser opens the URL without a
// confirmation page, any other one is shown the page first. Only the
// caller's own request gets it: the route needs its bearer credential,
// which no other site can make a browser send.
func (a *api) authStart(c *gin.Context) {
	f, err := a.h.StartSignIn(c.Request.Context(), caller(c), c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	if f.BrowserCookie != nil {
		http.SetCookie(c.Writer, f.BrowserCookie)
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, f)
}

// authFlow answers GET /api/v1/auth/flows/ID[?wait=30s]: the state of the
// caller's own sign-in, after waiting up to wait (at most 1m) for it to end.
func (a *api) authFlow(c *gin.Context) {
	var wait time.Duration
	if w := c.Query("wait"); w != "" {
		d, err := time.ParseDuration(w)
		if err != nil || d < 0 {
			writeError(c, http.StatusBadRequest, "bad_request", "wait must be a duration such as 30s")
			return
		}
		wait = d
	}
	f, err := a.h.SignInFlow(c.Request.Context(), caller(c), c.Param("id"), wait)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, f)
}

// authSignOut answers DELETE /api/v1/servers/NAME/auth: the caller's
// tokens are revoked (best effort) and deleted.
func (a *api) authSignOut(c *gin.Context) {
	if err := a.h.SignOut(c.Request.Context(), caller(c), c.Param("name")); err != nil {
		a.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// failAuth maps the OAuth errors; false when err is none of them.
func failAuth(c *gin.Context, err error) bool {
	var (
		ar *oauth.AuthRequiredError
		ae *oauth.AuthError
	)
	switch {
	case errors.As(err, &ar):
		writeError(c, http.StatusForbidden, oauth.CodeAuthRequired, err.Error())
	case errors.As(err, &ae):
		writeError(c, http.StatusBadGateway, "auth_error", err.Error())
	case errors.Is(err, oauth.ErrForbidden):
		writeError(c, http.StatusForbidden, "forbidden", err.Error())
	case errors.Is(err, oauth.ErrUnknownServer), errors.Is(err, host.ErrNoOAuth):
		writeError(c, http.StatusNotFound, "not_found", err.Error())
	default:
		return false
	}
	return true
}
