package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
)

// The routes the WebShell uses on behalf of MCP Apps (apps.md §12). An App
// never calls the API itself (it has no token, and its opaque origin is
// refused); the WebShell's App bridge makes these requests for it, and the
// host's App gate decides each one.

// appMessageRequest is a ui/message of the App of entry AppEntryID: the
// request's role and content, as the App sent them.
type appMessageRequest struct {
	AppEntryID string          `json:"appEntryId"`
	Role       json.RawMessage `json:"role"`
	Content    json.RawMessage `json:"content"`
}

// appMessage records an App's ui/message as an entry of kind app_message.
func (a *api) appMessage(c *gin.Context) {
	var req appMessageRequest
	if !a.decode(c, &req, false) {
		return
	}
	params := map[string]json.RawMessage{"content": req.Content}
	if len(req.Role) > 0 {
		params["role"] = req.Role
	}
	raw, err := json.Marshal(params)
	if err != nil {
		writeError(c, http.StatusBadRequest, "bad_request", "the message is not valid JSON")
		return
	}
	entry, err := a.h.AppMessage(c.Request.Context(), principal(c), c.Param("id"), req.AppEntryID, raw)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, entry)
}

type appLinkRequest struct {
	AppEntryID string `json:"appEntryId"`
	URL        string `json:"url"`
}

// appLink decides whether an App may ask the user to open a link; the
// WebShell asks the user and opens it only after this answered 200.
func (a *api) appLink(c *gin.Context) {
	var req appLinkRequest
	if !a.decode(c, &req, false) {
		return
	}
	url, err := a.h.CheckAppLink(c.Request.Context(), principal(c), c.Param("id"), req.AppEntryID, req.URL)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"url": url})
}

type appCheckRequest struct {
	AppEntryID string `json:"appEntryId"`
	Kind       string `json:"kind"`
	Detail     string `json:"detail"`
}

// appRequest decides an App request the WebShell carries out itself (a
// display mode, the user calling a tool the App registered): 200 {} when
// allowed, 403 when the App gate refuses it.
func (a *api) appRequest(c *gin.Context) {
	var req appCheckRequest
	if !a.decode(c, &req, false) {
		return
	}
	if err := a.h.CheckAppRequest(c.Request.Context(), principal(c), c.Param("id"), req.AppEntryID, req.Kind, req.Detail); err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{})
}

type appResourceRequest struct {
	AppEntryID string `json:"appEntryId"`
	URI        string `json:"uri"`
	// Purpose "download": the read fetches a ui/download-file resource_link
	// (decided by app_downloads); "" or "read": the App's resources/read.
	Purpose string `json:"purpose"`
}

// appResource reads a resource of the App's own server for the App.
func (a *api) appResource(c *gin.Context) {
	var req appResourceRequest
	if !a.decode(c, &req, false) {
		return
	}
	if req.Purpose != "" && req.Purpose != "read" && req.Purpose != "download" {
		writeError(c, http.StatusBadRequest, "bad_request", `"purpose" is "read" or "download"`)
		return
	}
	res, err := a.h.AppReadResource(c.Request.Context(), principal(c), c.Param("id"), req.AppEntryID, req.URI, req.Purpose == "download")
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}

// appContextUpdate keeps an App's ui/update-model-context with its entry.
func (a *api) appContextUpdate(c *gin.Context) {
	var req struct {
		AppEntryID        string          `json:"appEntryId"`
		Content           json.RawMessage `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if !a.decode(c, &req, false) {
		return
	}
	params := map[string]json.RawMessage{}
	if len(req.Content) > 0 {
		params["content"] = req.Content
	}
	if len(req.StructuredContent) > 0 {
		params["structuredContent"] = req.StructuredContent
	}
	raw, err := json.Marshal(params)
	if err != nil {
		writeError(c, http.StatusBadRequest, "bad_request", "the model context is not valid JSON")
		return
	}
	got, err := a.h.AppUpdateContext(c.Request.Context(), principal(c), c.Param("id"), req.AppEntryID, raw)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, got)
}

// appContextGet returns the model context the App of ?entry= gave last.
func (a *api) appContextGet(c *gin.Context) {
	got, err := a.h.AppContextOf(c.Request.Context(), principal(c), c.Param("id"), c.Query("entry"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, got)
}

// appCapabilities says which App requests a server's configuration allows.
func (a *api) appCapabilities(c *gin.Context) {
	if err := a.h.CheckVisible(c.Request.Context(), caller(c), c.Param("name")); err != nil {
		a.fail(c, err)
		return
	}
	caps, err := a.h.AppCapabilities(c.Param("name"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, caps)
}
