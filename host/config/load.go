package config

import (
	_ "embed"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
)

// Options are the inputs of a load that come from outside the file.
type Options struct {
	// LookupEnv reads the environment for env(), for XDG_STATE_HOME and
	// for HOME. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)

	// Executable is the value of executable(): the path of the running
	// mcphost binary, so a config can run `mcphost demo revenue` without
	// relying on PATH. Empty means os.Executable().
	Executable string

	// BaseDir is the OS directory that a relative `cwd` or `data_dir` is
	// resolved against; when it is set they are made absolute. Empty means
	// the directory of the file within fsys, used as it is.
	BaseDir string

	// UnsetEnvUnknown makes env(NAME) of a variable that is not set, with
	// no default, an unknown value instead of an error. The attribute that
	// reads it is then treated like one with an error (left out of the
	// Config, nothing that depends on it is checked), a warning "Environment
	// variable not set" names the call, and Config.Unset lists it. Such a
	// Config is incomplete: it may be checked (validate, policy eval,
	// plugin run, a dry-run reload) but must never serve. See StrictUnset.
	UnsetEnvUnknown bool
}

// DefaultFilename is the file name diagnostics about the embedded default
// configuration carry.
const DefaultFilename = "<embedded default>"

//go:embed default.hcl
var defaultSource []byte

// Load parses and validates the file at name (an io/fs path) in fsys.
//
// The returned *Config is never nil: Files is filled even when diags has
// errors, so callers can render the diagnostics with their source. All
// problems are reported at once, sorted by file name, line and column. When
// diags has errors the Config is incomplete and must not be used to serve.
//
// file() reads relative to the directory of name within fsys.
func Load(fsys fs.FS, name string, opts Options) (*Config, hcl.Diagnostics) {
	if fsys == nil {
		return emptyConfig(name), hcl.Diagnostics{readError(name, fmt.Errorf("no file system given"))}
	}
	src, err := readFSConfig(fsys, name)
	if err != nil {
		return emptyConfig(name), hcl.Diagnostics{readError(name, err)}
	}
	dir := path.Dir(name)
	l := newLoader(opts)
	if l.opts.BaseDir == "" {
		l.opts.BaseDir = filepath.FromSlash(dir)
	}
	l.readFile = func(arg string) (string, []byte, error) {
		p := path.Join(dir, arg)
		if path.IsAbs(arg) {
			p = arg
		}
		if !fs.ValidPath(p) {
			return p, nil, fmt.Errorf("the path leaves the file system the configuration was loaded from")
		}
		data, err := readRegularFile(fsStatOpener{fsys}, p)
		return p, data, err
	}
	// The directory of name within fsys is BaseDir on the machine.
	l.hostPath = func(p string) string {
		rel, err := filepath.Rel(filepath.FromSlash(dir), filepath.FromSlash(p))
		if err != nil {
			return ""
		}
		return filepath.Join(l.opts.BaseDir, rel)
	}
	l.configPath = filepath.Join(l.opts.BaseDir, path.Base(name))
	return l.load(src, name)
}

// LoadFile loads the OS file at path, which may be relative or absolute.
// Diagnostics carry path exactly as given. A relative `cwd` or `data_dir` is
// resolved against opts.BaseDir, or when that is empty against the absolute
// directory of the file. file() reads relative to the file's directory.
func LoadFile(path string, opts Options) (*Config, hcl.Diagnostics) {
	src, err := readOSConfig(path)
	if err != nil {
		return emptyConfig(path), hcl.Diagnostics{readError(path, err)}
	}
	dir := filepath.Dir(path)
	l := newLoader(opts)
	if l.opts.BaseDir == "" {
		l.opts.BaseDir = dir
		if abs, err := filepath.Abs(dir); err == nil {
			l.opts.BaseDir = abs
		}
	}
	l.readFile = func(arg string) (string, []byte, error) {
		p := arg
		if !filepath.IsAbs(arg) {
			p = filepath.Join(dir, arg)
		}
		data, err := readRegularFile(osStatOpener{}, p)
		return p, data, err
	}
	l.hostPath = func(p string) string { return p }
	l.configPath = path
	return l.load(src, path)
}

// Parse loads configuration source held in memory, such as the embedded
// default. filename is the name diagnostics carry. There is no directory to
// read from, so a call to file() is an error diagnostic.
func Parse(src []byte, filename string, opts Options) (*Config, hcl.Diagnostics) {
	return newLoader(opts).load(src, filename)
}

// Default returns the embedded default configuration (default.hcl): the
// demo server "revenue", run as `executable() demo revenue`, and the default
// listen address and data directory. Its diagnostics name [DefaultFilename].
func Default(opts Options) (*Config, hcl.Diagnostics) {
	return Parse(defaultSource, DefaultFilename, opts)
}

func emptyConfig(filename string) *Config {
	return &Config{Filename: filename, Files: map[string]*hcl.File{}}
}

func readError(name string, err error) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Cannot read configuration file",
		Detail:   fmt.Sprintf("The configuration file %q could not be read: %v. Check the path and its permissions.", name, err),
	}
}

// loader holds the state of one load.
type loader struct {
	opts      Options
	lookupEnv func(string) (string, bool)
	readFile  readFunc // nil: file() is not available
	ctx       *hcl.EvalContext
	diags     hcl.Diagnostics

	// returned collects what env() and file() return while one expression
	// is evaluated, for scrub.
	returned []string

	// unsetNow collects the names env() found unset while one expression
	// is evaluated (with Options.UnsetEnvUnknown); unset is every such
	// call of the load, and file the file they are in.
	unsetNow []string
	unset    []UnsetEnv
	file     *hcl.File

	// spent counts the bytes env(), file() and executable() returned in
	// this load, up to MaxFunctionBytes+1 (see spend).
	spent int

	// configPath is the file loaded, as a path on the machine ("" when
	// the source was parsed from memory); hostPath turns a path that
	// readFile returned into one; sources are the files file() read.
	// With data_dir they are what no sandbox grant may reach.
	configPath string
	hostPath   func(resolved string) string
	sources    []readSource
	// dataDirFrom is sourcesPhrase of data_dir: the data directory is not
	// shown when it was read with env() or file().
	dataDirFrom string

	// grants are the sandbox paths of every server, checked against the
	// protected set once the whole file has been evaluated (a file() call
	// after the server blocks adds to it).
	grants []pendingGrant
}

func newLoader(opts Options) *loader {
	l := &loader{opts: opts, lookupEnv: opts.LookupEnv}
	if l.lookupEnv == nil {
		l.lookupEnv = os.LookupEnv
	}
	return l
}

func (l *loader) add(d *hcl.Diagnostic) { l.diags = append(l.diags, d) }

// load parses src and decodes it, one decoder per kind of block in the
// order they depend on each other (servers inherit the top-level sandbox,
// principals the top-level rate limits; admins are checked against the
// principals, the gateway against the servers). It always returns a
// Config with Files set.
func (l *loader) load(src []byte, filename string) (*Config, hcl.Diagnostics) {
	cfg := emptyConfig(filename)
	file, diags := parseConfig(src, filename)
	if file != nil {
		cfg.Files[filename] = file
	}
	if diags.HasErrors() || file == nil {
		// Decoding a body the parser had to recover from gives follow-on
		// errors that only confuse; report the syntax errors alone.
		SortDiagnostics(diags)
		return cfg, diags
	}
	if fd := refuseForExpressions(file.Body); fd.HasErrors() {
		diags = append(diags, fd...)
		SortDiagnostics(diags)
		return cfg, diags
	}
	l.diags = diags
	l.ctx = l.evalContext()
	l.file = file

	var fsch fileSchema
	l.diags = append(l.diags, gohcl.DecodeBody(file.Body, l.ctx, &fsch)...)
	l.decodeTop(cfg, &fsch)
	l.decodeStore(cfg, fsch.Store)
	l.decodeTelemetry(cfg, fsch.Telemetry)
	l.decodeSearchEmbeddings(cfg, fsch.SearchEmbeddings)
	l.decodeTopSandbox(cfg, fsch.Sandbox)

	l.decodeServers(cfg, fsch.Servers)
	l.decodePrincipals(cfg, &fsch)
	l.decodeAdmins(cfg, &fsch)
	l.decodeGateway(cfg, fsch.Gateway)
	l.decodePolicies(cfg, file, fsch.Policies, fsch.Policy)
	l.decodePlugins(cfg, fsch.Plugins)
	l.protect(cfg)
	slices.SortStableFunc(l.unset, func(a, b UnsetEnv) int { return a.Range.Start.Byte - b.Range.Start.Byte })
	cfg.Unset = l.unset

	SortDiagnostics(l.diags)
	return cfg, l.diags
}

// fileLine formats the start of r as FILE:LINE.
func fileLine(r hcl.Range) string {
	return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line)
}

// decodeTop fills the top-level attributes of cfg: one decoder per
// attribute or group of them, in the order they depend on each other
// (apps_sandbox_url is checked against public_urls).
func (l *loader) decodeTop(cfg *Config, f *fileSchema) {
	cfg.Listen = DefaultListen
	cfg.LogLevel = slog.LevelInfo
	cfg.AppCompactAfter = DefaultAppCompactAfter
	cfg.AppCompactSessionBytes = DefaultAppCompactSessionBytes
	l.decodeListen(cfg, f)
	l.decodePublicURLs(cfg, f)
	l.decodeAppsSandboxURL(cfg, f)
	l.decodeLogLevel(cfg, f)
	if v, st := l.evalBool(f.WatchConfig, "watch_config"); st == valid {
		cfg.WatchConfig = v
	}
	l.decodeElicitationTimeout(cfg, f)
	l.decodeApprovalTimeout(cfg, f)
	l.decodeAppCompaction(cfg, f)
	switch v, st := l.evalString(f.DataDir, "data_dir"); st {
	case valid:
		cfg.DataDir = l.resolvePath(v, "data_dir", f.DataDirRange)
		l.dataDirFrom = sourcesPhrase(f.DataDir)
	case absent:
		cfg.DataDir = l.defaultDataDir()
	}
}

// decodeListen reads `listen`, the host:port of the HTTP API.
func (l *loader) decodeListen(cfg *Config, f *fileSchema) {
	v, st := l.evalString(f.Listen, "listen")
	if st != valid {
		return
	}
	if err := CheckListen(v); err != nil {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid listen address",
			Detail:   fmt.Sprintf("The listen address %s is not valid: %v. Write host:port, such as \"127.0.0.1:7777\" or \"[::1]:7777\".", quoted(f.Listen, v), err),
			Subject:  f.ListenRange.Ptr(),
		})
	} else {
		cfg.Listen = v
	}
}

// decodePublicURLs reads `public_urls`: origins, each kept once.
func (l *loader) decodePublicURLs(cfg *Config, f *fileSchema) {
	v, st := l.evalStringList(f.PublicURLs, "public_urls")
	if st != valid {
		return
	}
	for _, raw := range v {
		u, err := checkPublicURL(raw)
		if err != nil {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid public_urls entry",
				Detail:   fmt.Sprintf("The public URL %q is not valid: %v. Write the origin the browser sees, such as \"https://mcphost.example.com\" or \"http://localhost:8080\".", raw, err),
				Subject:  f.PublicURLsRange.Ptr(),
			})
			continue
		}
		if !slices.Contains(cfg.PublicURLs, u) {
			cfg.PublicURLs = append(cfg.PublicURLs, u)
		}
	}
}

// decodeAppsSandboxURL reads `apps_sandbox_url`, after public_urls.
func (l *loader) decodeAppsSandboxURL(cfg *Config, f *fileSchema) {
	v, st := l.evalString(f.AppsSandboxURL, "apps_sandbox_url")
	if st != valid || v == "" {
		return
	}
	u, err := checkPublicURL(v)
	if problem := sandboxURLProblem(u, err, cfg.PublicURLs); problem != "" {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid apps_sandbox_url",
			Detail:   fmt.Sprintf("The Apps sandbox URL %q cannot be used: %s.", v, problem),
			Subject:  f.AppsSandboxURLRange.Ptr(),
		})
	} else {
		cfg.AppsSandboxURL = u
	}
}

// sandboxURLProblem says why the origin u of apps_sandbox_url (err from
// checkPublicURL) cannot serve the Apps of a WebShell opened at one of
// public, or "" when it can.
func sandboxURLProblem(u string, err error, public []string) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%v. Write an origin, such as \"https://mcphost-apps.example.com\"", err)
	case loopbackOrigin(u):
		return "it is a loopback name: a WebShell opened at a loopback name puts Apps on the other loopback name by itself, and the sandbox needs a host name of its own"
	case slices.Contains(public, u):
		return "it is also one of public_urls: the sandbox must have an origin of its own, or an App would share the WebShell's"
	case len(public) == 0:
		return "public_urls is empty: the sandbox URL serves a WebShell opened at a public URL (on the loopback names of listen, Apps use the other loopback name)"
	case strings.HasPrefix(u, "http://") && slices.ContainsFunc(public, func(p string) bool { return strings.HasPrefix(p, "https://") }):
		return "it is http while a public URL is https: a browser blocks an http frame in an https page"
	}
	return ""
}

// decodeLogLevel reads `log_level`.
func (l *loader) decodeLogLevel(cfg *Config, f *fileSchema) {
	v, st := l.evalString(f.LogLevel, "log_level")
	if st != valid {
		return
	}
	if lvl, ok := logLevels[v]; ok {
		cfg.LogLevel = lvl
	} else {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid log level",
			Detail:   fmt.Sprintf("The log level %s is not known. Use one of \"debug\", \"info\" (the default), \"warn\" or \"error\".", quoted(f.LogLevel, v)),
			Subject:  f.LogLevelRange.Ptr(),
		})
	}
}

// decodeApprovalTimeout reads how long a call paused by an `ask` waits.
func (l *loader) decodeApprovalTimeout(cfg *Config, f *fileSchema) {
	l.decodeTimeout(&cfg.ApprovalTimeout, f.ApprovalTimeout, f.ApprovalTimeoutRange, "approval_timeout",
		"how long a call paused by an `ask` rule waits for a person's answer before it is denied",
		MinApprovalTimeout, MaxApprovalTimeout, DefaultApprovalTimeout)
}

// decodeElicitationTimeout reads how long a server's question waits.
func (l *loader) decodeElicitationTimeout(cfg *Config, f *fileSchema) {
	l.decodeTimeout(&cfg.ElicitationTimeout, f.ElicitationTimeout, f.ElicitationTimeoutRange, "elicitation_timeout",
		"how long a server's question waits for your answer", MinElicitationTimeout, MaxElicitationTimeout, DefaultElicitationTimeout)
}

// decodeTimeout reads the top-level duration attr into *into when it lies
// in [lo, hi]; what says what it bounds, for the error.
func (l *loader) decodeTimeout(into *time.Duration, expr hcl.Expression, rng hcl.Range, attr, what string, lo, hi, def time.Duration) {
	d, st := l.evalDuration(expr, attr, rng)
	if st != valid {
		return
	}
	if d < lo || d > hi {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid " + attr,
			Detail:   fmt.Sprintf("The %s %s is outside [%s, %s]. It is %s; the default is %s.", attr, durationText(d), durationText(lo), durationText(hi), what, durationText(def)),
			Subject:  rng.Ptr(),
		})
		return
	}
	*into = d
}

// decodeAppCompaction reads when App HTML is compacted: by age
// (app_compact_after) and by a session's size (app_compact_session_bytes).
func (l *loader) decodeAppCompaction(cfg *Config, f *fileSchema) {
	if v, st := l.evalString(f.AppCompactAfter, "app_compact_after"); st == valid {
		if v == "off" {
			cfg.AppCompactAfter = -1
		} else if d, err := time.ParseDuration(v); err != nil || d < MinAppCompactAfter {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid app_compact_after",
				Detail:   fmt.Sprintf("The app_compact_after %s is not a duration of at least a minute. Write one such as \"168h\" (the default, 7 days), or \"off\" to keep App HTML until it is compacted on demand or by size.", quoted(f.AppCompactAfter, v)),
				Subject:  f.AppCompactAfterRange.Ptr(),
			})
		} else {
			cfg.AppCompactAfter = d
		}
	}
	if n, st := l.evalInt(f.AppCompactSessionBytes, "app_compact_session_bytes", f.AppCompactSessionBytesRange); st == valid {
		switch {
		case n == 0:
			cfg.AppCompactSessionBytes = -1
		case n < 0:
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid app_compact_session_bytes",
				Detail:   fmt.Sprintf("The app_compact_session_bytes %s is negative. Give a number of bytes, such as 16777216 (the default, 16 MiB), or 0 for no bound.", shown(f.AppCompactSessionBytes, strconv.Itoa(n))),
				Subject:  f.AppCompactSessionBytesRange.Ptr(),
			})
		default:
			cfg.AppCompactSessionBytes = int64(n)
		}
	}
}

var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug,
	"info":  slog.LevelInfo,
	"warn":  slog.LevelWarn,
	"error": slog.LevelError,
}

// resolvePath expands a leading "~" and makes a relative path relative to
// BaseDir. It reports problems against rng and returns "" for them.
func (l *loader) resolvePath(p, attr string, rng hcl.Range) string {
	if p == "" {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty path",
			Detail:   fmt.Sprintf("The value of %s is empty. Give a directory, or remove %s to use the default.", attr, attr),
			Subject:  rng.Ptr(),
		})
		return ""
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, ok := l.home()
		if !ok {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Home directory unknown",
				Detail:   fmt.Sprintf("The value of %s starts with \"~\", but the HOME environment variable is not set. Set HOME, or write an absolute path.", attr),
				Subject:  rng.Ptr(),
			})
			return ""
		}
		return filepath.Join(home, filepath.FromSlash(strings.TrimPrefix(p[1:], "/")))
	}
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(l.opts.BaseDir, p)
}

// home returns the home directory from the environment.
func (l *loader) home() (string, bool) {
	if h, ok := l.lookupEnv("HOME"); ok && h != "" {
		return h, true
	}
	if runtime.GOOS == "windows" {
		if h, ok := l.lookupEnv("USERPROFILE"); ok && h != "" {
			return h, true
		}
	}
	return "", false
}

// defaultDataDir is $XDG_STATE_HOME/mcphost, else ~/.local/state/mcphost.
func (l *loader) defaultDataDir() string {
	if x, ok := l.lookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(x) {
		return filepath.Join(x, "mcphost")
	}
	if home, ok := l.home(); ok {
		return filepath.Join(home, ".local", "state", "mcphost")
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "No data directory",
		Detail:   "data_dir is not set, and neither XDG_STATE_HOME nor HOME is set, so there is no default data directory. Set data_dir in the configuration, or set HOME.",
	})
	return ""
}

// loopbackOrigin reports whether origin (checkPublicURL's form) names this
// machine: localhost, a name under .localhost, 127.0.0.0/8 or [::1].
func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.") || h == "::1"
}
