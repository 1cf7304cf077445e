package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// configResponse is GET /api/v1/config.
type configResponse struct {
	Hash string `json:"hash"`
	// File is the daemon's config file, or config.DefaultFilename when it
	// runs the embedded default (Embedded).
	File     string           `json:"file"`
	Embedded bool             `json:"embedded"`
	LoadedAt time.Time        `json:"loaded_at"`
	Plan     *host.ReloadPlan `json:"plan,omitempty"` // the reload that put the config in force
}

// config describes the config in force (admins only): its hash, also as
// the ETag that POST /api/v1/reload takes in If-Match, its file, and what
// the reload that put it in force did.
func (a *api) config(c *gin.Context) {
	st := a.h.ConfigStatus()
	etag := quoteETag(st.Hash)
	c.Header("ETag", etag)
	c.Header("Cache-Control", "no-store")
	if tags, star := parseETags(c.Request.Header.Get("If-None-Match")); star || slices.Contains(tags, st.Hash) {
		c.Status(http.StatusNotModified)
		return
	}
	resp := configResponse{Hash: st.Hash, File: a.opts.ConfigFile, LoadedAt: st.LoadedAt, Plan: st.Plan}
	if resp.File == "" {
		resp.File, resp.Embedded = config.DefaultFilename, true
	}
	c.JSON(http.StatusOK, resp)
}

// reload reloads the daemon's config file (admins only), exactly as
// SIGHUP does, or with ?dry_run=true only plans it. If-Match makes it
// conditional on the config in force.
func (a *api) reload(c *gin.Context) {
	dryRun := false
	if v := c.Query("dry_run"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(c, http.StatusBadRequest, "bad_request", `"dry_run" is true or false`)
			return
		}
		dryRun = b
	}
	tags, star := parseETags(c.Request.Header.Get("If-Match"))
	if star {
		tags = nil
	}
	if a.opts.Reload == nil {
		writeError(c, http.StatusConflict, "no_config_file",
			"nothing to reload: the daemon runs the embedded default config; start it with mcphost serve -config FILE")
		return
	}
	// Before loading anything: a client that saw another config learns it
	// at once. The host checks again under its reload lock.
	if cur := a.h.ConfigHash(); len(tags) > 0 && !slices.Contains(tags, cur) {
		a.preconditionFailed(c, cur)
		return
	}
	plan, err := a.opts.Reload(c.Request.Context(), principal(c), host.ReloadOptions{DryRun: dryRun, IfMatch: tags})
	var (
		changed *host.ConfigChangedError
		cfgErr  *host.ConfigError
		plugErr *host.PluginLoadError
	)
	switch {
	case errors.As(err, &changed):
		a.preconditionFailed(c, changed.Current)
	case errors.As(err, &cfgErr):
		invalidConfig(c, cfgErr.Diagnostics)
	case errors.As(err, &plugErr):
		invalidConfig(c, plugErr.Diagnostics)
	case errors.Is(err, host.ErrClosing):
		writeError(c, http.StatusServiceUnavailable, "unavailable", "the daemon is shutting down")
	case err != nil:
		a.fail(c, err)
	default:
		c.Header("ETag", quoteETag(a.h.ConfigHash()))
		c.JSON(http.StatusOK, plan)
	}
}

// preconditionFailed answers 412 with the hash of the config in force.
func (a *api) preconditionFailed(c *gin.Context, current string) {
	c.Header("ETag", quoteETag(current))
	c.JSON(http.StatusPreconditionFailed, gin.H{
		"error": errorDetail{Code: "precondition_failed", Message: fmt.Sprintf(
			"the running config is %s, not the one If-Match names: it was reloaded since; look again (GET /api/v1/config)", current)},
		"hash": current,
	})
}

// invalidConfig answers 422 with the diagnostics in the form of
// `mcphost validate -json`: severity, summary, detail, and the range
// (filename, start and end line, column, byte) when there is one.
func invalidConfig(c *gin.Context, diags hcl.Diagnostics) {
	diags = slices.Clone(diags)
	config.SortDiagnostics(diags)
	var doc struct {
		ErrorCount   int             `json:"error_count"`
		WarningCount int             `json:"warning_count"`
		Diagnostics  json.RawMessage `json:"diagnostics"`
	}
	if err := json.Unmarshal(config.DiagnosticsJSON(diags), &doc); err != nil {
		panic("httpapi: diagnostics: " + err.Error()) // config wrote it: cannot fail
	}
	c.JSON(http.StatusUnprocessableEntity, gin.H{
		"error": errorDetail{Code: "invalid_config", Message: fmt.Sprintf(
			"the config has %s; nothing was changed", plural(doc.ErrorCount, "error"))},
		"error_count":   doc.ErrorCount,
		"warning_count": doc.WarningCount,
		"diagnostics":   doc.Diagnostics,
	})
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// quoteETag is hash as an entity tag.
func quoteETag(hash string) string { return `"` + hash + `"` }

// parseETags reads an If-Match or If-None-Match header: the entity tags it
// lists, unquoted, or star when it is "*". A weak tag (W/"...") keeps its
// prefix, so it never matches: If-Match compares strongly.
func parseETags(header string) (tags []string, star bool) {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
		case t == "*":
			star = true
		case len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"':
			tags = append(tags, t[1:len(t)-1])
		default:
			tags = append(tags, t) // unquoted: taken as it is
		}
	}
	return tags, star
}
