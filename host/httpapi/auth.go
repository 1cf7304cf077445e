package httpapi

import (
	"context"
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

// principal returns the authenticated caller of a request.
func principal(c *gin.Context) host.Principal {
	p, _ := c.Request.Context().Value(principalKey{}).(host.Principal)
	return p
}
