package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// DefaultMaxBody bounds request bodies (413 above it).
const DefaultMaxBody = 4 << 20

// Options configure the handler.
type Options struct {
	// Logger receives one record per request (method, path without the
	// query, status, duration); nil discards.
	Logger *slog.Logger
	// Hosts are the accepted values of the Host header, as host:port
	// (compared case-insensitively). Requests with any other Host get 403.
	Hosts []string
	// PublicURLs are the origins (scheme://host[:port], config
	// public_urls) the daemon is reached at through a load balancer or a
	// reverse proxy: each one's host is an accepted Host and the origin an
	// accepted Origin. A loopback one (http://localhost:8080) may host
	// Apps like the daemon's own loopback names; another needs
	// AppsSandboxURL for Apps (they need an origin of their own, else they
	// show their text there).
	PublicURLs []string
	// AppsSandboxURL is the origin (config apps_sandbox_url) that serves
	// the MCP App sandbox to a WebShell opened at a public URL that is not
	// a loopback name: its host is an accepted Host for the sandbox route
	// only, and never an accepted Origin. "" for none.
	AppsSandboxURL string
	// Assets is the WebShell (index.html and its files); nil serves none.
	Assets fs.FS
	// MaxBody bounds request bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// Version is reported by /healthz.
	Version string
	// Reload reloads the daemon's config file for POST /api/v1/reload:
	// the daemon loads the file again, exactly as on SIGHUP, and hands it
	// to host.ReloadWith with opts; by is the admin who asked (for the log). A config with errors is a
	// *host.ConfigError or a *host.PluginLoadError (422 with the
	// diagnostics). nil: there is no file to reload (the embedded
	// default), and the route answers 409.
	Reload func(ctx context.Context, by host.Principal, opts host.ReloadOptions) (host.ReloadPlan, error)
	// ConfigFile is the daemon's config file, reported by GET
	// /api/v1/config; "" for the embedded default.
	ConfigFile string
	// Metrics, when set, writes more metrics after the host's on GET
	// /metrics (the gateway's: gateway.Gateway.WriteMetrics).
	Metrics func(io.Writer) error
}

// DisableDebugOutput switches gin to release mode, silencing its route
// table dump on stdout. It changes process-wide state, so only main (and
// tests' TestMain) call it.
func DisableDebugOutput() { gin.SetMode(gin.ReleaseMode) }

type api struct {
	h       *host.Host
	opts    Options
	log     *slog.Logger
	hosts   map[string]bool
	origins map[string]bool
	csp     string // the WebShell page's Content-Security-Policy
	// sandboxHost and sandboxOrigin are AppsSandboxURL's host (lower
	// case, as compared with Host) and origin; "" for none.
	sandboxHost, sandboxOrigin string
}

// New returns the daemon's HTTP handler over h.
func New(h *host.Host, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	a := newAPI(h, opts)
	r := a.engine()
	a.mountSandbox(r)
	a.mountProbes(r)
	a.mountWebShell(r)
	a.mountRoutes(r)
	return r
}

// newAPI returns the handler's state: the Host and Origin values it
// accepts, from opts' hosts, public URLs and sandbox URL, and the
// WebShell's Content-Security-Policy, whose frame sources are the
// loopback names and the sandbox origin among them.
func newAPI(h *host.Host, opts Options) *api {
	a := &api{h: h, opts: opts, log: opts.Logger, hosts: map[string]bool{}, origins: map[string]bool{}}
	frames := a.acceptHosts(opts.Hosts)
	frames = a.acceptPublicURLs(opts.PublicURLs, frames)
	if a.sandboxHost, a.sandboxOrigin = sandboxHostOf(opts.AppsSandboxURL); a.sandboxHost != "" {
		// Another name of this daemon, for App frames only (config
		// checked it: an origin, none of the public URLs).
		a.hosts[a.sandboxHost] = true
		frames = append(frames, a.sandboxOrigin)
	}
	a.csp = webShellCSP(frames)
	return a
}

// acceptHosts accepts each host:port of hosts as a Host and its http
// origin as an Origin, and returns the loopback ones' origins, which App
// frames may load the sandbox from.
func (a *api) acceptHosts(hosts []string) (frames []string) {
	for _, hp := range hosts {
		hp = strings.ToLower(hp)
		a.hosts[hp] = true
		a.origins["http://"+hp] = true
		// App frames load the sandbox from the other loopback name
		// (apps.md §9); CSP cannot name bracketed IPv6 hosts.
		if strings.HasPrefix(hp, "127.0.0.1:") || strings.HasPrefix(hp, "localhost:") {
			frames = append(frames, "http://"+hp)
		}
	}
	return frames
}

// acceptPublicURLs accepts each public URL's host as a Host and its
// origin as an Origin; a loopback http one also brings the other loopback
// name on its port, added to frames (once) for App frames.
func (a *api) acceptPublicURLs(publicURLs, frames []string) []string {
	for _, pu := range publicURLs {
		u, err := url.Parse(strings.ToLower(pu))
		if err != nil || u.Host == "" {
			continue // config.checkPublicURL let it through: never
		}
		a.hosts[u.Host] = true
		a.origins[u.Scheme+"://"+u.Host] = true
		if port := u.Port(); u.Scheme == "http" && port != "" && (u.Hostname() == "127.0.0.1" || u.Hostname() == "localhost") {
			// The other loopback name through the same balancer, where
			// App frames load the sandbox from.
			for _, name := range []string{"127.0.0.1", "localhost"} {
				hp := name + ":" + port
				a.hosts[hp], a.origins["http://"+hp] = true, true
				if !slices.Contains(frames, "http://"+hp) {
					frames = append(frames, "http://"+hp)
				}
			}
		}
	}
	return frames
}

// engine returns the gin engine with the middleware every request goes
// through (recovery, security headers, the access log, the Host check)
// and the JSON answers for an unknown route or method.
func (a *api) engine() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(a.recovery, securityHeaders, a.accessLog, a.checkHost)
	r.NoRoute(func(c *gin.Context) { writeError(c, http.StatusNotFound, "not_found", "no such route") })
	r.NoMethod(func(c *gin.Context) {
		writeError(c, http.StatusMethodNotAllowed, "method_not_allowed", "method not allowed on this route")
	})
	return r
}

// mountSandbox mounts the MCP App sandbox proxy: static, no credentials,
// served before authentication by design (the App frame has no token).
func (a *api) mountSandbox(r *gin.Engine) {
	sb := gin.WrapH(sandbox.Handler(sandbox.Options{
		AllowedHostOrigin: func(origin string) bool { return a.origins[origin] },
		Logger:            a.opts.Logger,
	}))
	r.GET(sandbox.Path, sb)
	r.HEAD(sandbox.Path, sb)
}

// mountProbes mounts the liveness and readiness probes.
func (a *api) mountProbes(r *gin.Engine) {
	r.GET("/healthz", a.healthz)
	r.GET("/readyz", a.readyz)
}

// healthz is liveness: 200 while the process lives, draining included.
func (a *api) healthz(c *gin.Context) {
	body := gin.H{"status": "ok", "version": a.opts.Version}
	if id := a.h.Replica(); id != "" {
		body["replica"] = id
	}
	c.JSON(http.StatusOK, body)
}

// readyz is readiness: 200 once the servers started, 503 from the moment
// the daemon drains (a load balancer stops sending it new work).
func (a *api) readyz(c *gin.Context) {
	rd := a.h.Readiness()
	body := gin.H{"status": rd.Status}
	if rd.Replica != "" {
		body["replica"] = rd.Replica
	}
	if !rd.Ready {
		c.Header("Retry-After", "1")
		c.JSON(http.StatusServiceUnavailable, body)
		return
	}
	c.JSON(http.StatusOK, body)
}

// mountRoutes is the route table of /metrics and the API, each route with
// the checks it goes through before its handler.
func (a *api) mountRoutes(r *gin.Engine) {
	r.GET("/metrics", a.checkOrigin, a.authenticate, a.requireAdmin, a.metrics)
	r.GET("/debug/pprof/*profile", a.checkOrigin, a.authenticate, a.requireAdmin, a.pprof)

	r.POST("/api/v1/webshell/session", a.checkOrigin, a.limitBody, a.webShellSession)
	v1 := r.Group("/api/v1", a.checkOrigin, a.authenticate, a.limitBody)
	v1.GET("/me", a.me)
	v1.GET("/servers", a.servers)
	v1.GET("/tools", a.tools)
	v1.GET("/servers/:name/prompts", a.prompts)
	v1.GET("/servers/:name/resources", a.resources)
	v1.POST("/servers/:name/resources/read", a.readResource)
	v1.POST("/servers/:name/prompts/get", a.getPrompt)
	v1.POST("/servers/:name/refresh", a.refresh)
	v1.GET("/servers/:name/logs", a.requireAdmin, a.serverLogs)
	v1.POST("/servers/:name/restart", a.requireAdmin, a.restartServer)
	v1.POST("/sessions", a.createSession)
	v1.GET("/sessions", a.sessions)
	v1.GET("/sessions/:id", a.session)
	v1.PATCH("/sessions/:id", a.renameSession)
	v1.DELETE("/sessions/:id", a.deleteSession)
	v1.POST("/sessions/:id/calls", a.call)
	v1.GET("/sessions/:id/calls/:callId", a.callState)
	v1.DELETE("/sessions/:id/calls/:callId", a.cancelCall)
	v1.GET("/sessions/:id/entries", a.entries)
	v1.POST("/sessions/:id/compact", a.compact)
	v1.POST("/sessions/:id/app-messages", a.webShellOnly, a.appMessage)
	v1.POST("/sessions/:id/app-links", a.webShellOnly, a.appLink)
	v1.POST("/sessions/:id/app-requests", a.webShellOnly, a.appRequest)
	v1.POST("/sessions/:id/app-resources", a.webShellOnly, a.appResource)
	v1.POST("/sessions/:id/app-context", a.webShellOnly, a.appContextUpdate)
	v1.GET("/sessions/:id/app-context", a.appContextGet)
	v1.GET("/servers/:name/app-capabilities", a.appCapabilities)
	v1.GET("/approvals", a.approvals)
	v1.POST("/approvals/:id", a.answer)
	v1.GET("/elicitations", a.elicitations)
	v1.POST("/elicitations/:id", a.answerElicitation)
	v1.GET("/audit", a.audit)
	v1.GET("/events", a.events)
	v1.GET("/config", a.requireAdmin, a.config)
	v1.POST("/reload", a.requireAdmin, a.reload)
	a.mountOAuth(r, v1)
}

// recovery turns a handler panic into a logged 500 instead of a dead
// connection. It never prints the request.
func (a *api) recovery(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			a.log.Error("handler panic", "method", c.Request.Method, "path", c.Request.URL.Path, "panic", v)
			if !c.Writer.Written() {
				writeError(c, http.StatusInternalServerError, "internal", "internal error")
			}
			c.Abort()
		}
	}()
	c.Next()
}

// accessLog logs one record per request. The query string is never logged:
// someone may have put a token there.
func (a *api) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelDebug
	if c.Writer.Status() >= 500 {
		level = slog.LevelWarn
	}
	a.log.Log(c.Request.Context(), level, "http request", "method", c.Request.Method, "path", c.Request.URL.Path,
		"status", c.Writer.Status(), "duration", time.Since(start))
}

// checkHost refuses requests whose Host header is not one of the daemon's
// own names: a DNS-rebinding page would arrive with its own host name.
func (a *api) checkHost(c *gin.Context) {
	// The probes answer any Host: a load balancer's or Kubernetes' health
	// check names the replica by its address, and they tell nothing but
	// that the daemon lives and whether it takes calls.
	if p := c.Request.URL.Path; p == "/healthz" || p == "/readyz" {
		c.Next()
		return
	}
	host := strings.ToLower(c.Request.Host)
	if !a.hosts[host] {
		writeError(c, http.StatusForbidden, "forbidden", "this host name is not served here")
		c.Abort()
		return
	}
	if sandboxRefuses(a.sandboxHost, host, c.Request.URL.Path) {
		// The Apps' origin serves their sandbox and nothing else: no
		// WebShell (a token signed in there would live in the Apps'
		// origin) and no API.
		writeError(c, http.StatusNotFound, "not_found", sandboxHostOnly)
		c.Abort()
		return
	}
	c.Next()
}

// sandboxHostOf returns the host (lower case, as compared with Host) and
// the origin of an apps_sandbox_url; both "" for none.
func sandboxHostOf(sandboxURL string) (host, origin string) {
	u, err := url.Parse(strings.ToLower(sandboxURL))
	if sandboxURL == "" || err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", ""
	}
	return u.Host, u.Scheme + "://" + u.Host
}

// sandboxRefuses says whether the Apps' sandbox host name (sandboxHost, ""
// for none) does not serve a request for path at reqHost: it serves the
// sandbox page and nothing else.
func sandboxRefuses(sandboxHost, reqHost, path string) bool {
	return sandboxHost != "" && strings.ToLower(reqHost) == sandboxHost && path != sandbox.Path
}

// sandboxHostOnly says why the sandbox's host name answers 404.
const sandboxHostOnly = "this host name serves only the MCP App sandbox (apps_sandbox_url)"

// SandboxHostOnly wraps the daemon's whole handler (the gateway's /mcp,
// which is mounted outside the API, included) so that the host name of
// sandboxURL (config apps_sandbox_url; "" for none) serves the MCP App
// sandbox and nothing else, as the API's own Host check does.
func SandboxHostOnly(sandboxURL string, next http.Handler) http.Handler {
	host, _ := sandboxHostOf(sandboxURL)
	if host == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sandboxRefuses(host, r.Host, r.URL.Path) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(errorBody{Error: errorDetail{Code: "not_found", Message: sandboxHostOnly}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses cross-origin API requests: a browser sends Origin on
// cross-origin requests, "null" from sandboxed frames and file pages. Only
// the daemon's own origin may call the API from a browser.
func (a *api) checkOrigin(c *gin.Context) {
	origin := c.Request.Header.Get("Origin")
	if origin != "" && !a.origins[strings.ToLower(origin)] {
		writeError(c, http.StatusForbidden, "forbidden", "cross-origin requests are not allowed")
		c.Abort()
		return
	}
	c.Next()
}

// securityHeaders apply to every response.
func securityHeaders(c *gin.Context) {
	hd := c.Writer.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	c.Next()
}

func (a *api) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, a.opts.MaxBody)
	}
	c.Next()
}

// errorBody is the API's error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(c *gin.Context, status int, code, msg string) {
	c.JSON(status, errorBody{Error: errorDetail{Code: code, Message: msg}})
}
