package importcfg

// The translation of imported entries into mcphost server blocks: names,
// transports, ${...} references (refs.go), and secrets (secrets.go), which
// are never copied into the output but read with env() when mcphost starts.

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/config"
)

// tmplPart is a piece of a string value: literal text, or a reference to
// an environment variable.
type tmplPart struct {
	Lit string
	Ref *envRef
}

// envRef is env(Name) or, with a default, env(Name, Default).
type envRef struct {
	Name    string
	Default *string
}

// tmpl is a string value made of parts; adjacent literals are merged.
type tmpl []tmplPart

func (t tmpl) lit(s string) tmpl {
	if s == "" {
		return t
	}
	if n := len(t); n > 0 && t[n-1].Ref == nil {
		t[n-1].Lit += s
		return t
	}
	return append(t, tmplPart{Lit: s})
}

func (t tmpl) ref(r *envRef) tmpl { return append(t, tmplPart{Ref: r}) }

func (t tmpl) hasRefs() bool {
	return slices.ContainsFunc(t, func(p tmplPart) bool { return p.Ref != nil })
}

// literal returns the text of a value without references.
func (t tmpl) literal() string {
	var b strings.Builder
	for _, p := range t {
		b.WriteString(p.Lit)
	}
	return b.String()
}

func litTmpl(s string) tmpl { return tmpl{}.lit(s) }
func refTmpl(name string) tmpl {
	return tmpl{{Ref: &envRef{Name: name}}}
}

// hclKV is one member of an env or headers map in the output.
type hclKV struct {
	Key   string
	Value tmpl
}

// envNeed is an environment variable the output reads, and why.
type envNeed struct {
	Name     string
	Why      string
	Optional bool   // env() has a default
	Input    string // the VS Code input the variable stands for
}

// importServer is one server block of the output.
type importServer struct {
	Entry       *importEntry
	Name        string
	Remote      bool
	SSE         bool
	Command     tmpl
	Args        []tmpl
	Env         []hclKV
	Cwd         string
	URL         tmpl
	Headers     []hclKV
	Disabled    bool
	CallTimeout time.Duration
	Needs       []envNeed
}

func (s *importServer) need(n envNeed) {
	for i, old := range s.Needs {
		if old.Name == n.Name {
			if old.Optional && !n.Optional {
				s.Needs[i] = n
			}
			return
		}
	}
	s.Needs = append(s.Needs, n)
}

// importNameRE is config's rule for server names.
var importNameRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// importConverter turns entries into servers. It holds what must be
// unique across the whole output.
type importConverter struct {
	lookupEnv func(string) (string, bool) // resolves ${env:...} in envFile paths
	readFile  func(string) ([]byte, error)
	home, cwd string // for display of envFile paths

	names map[string]string // server name → the entry that has it
	vars  map[string]bool   // environment variable names derived for headers
}

func newImportConverter(lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error), home, cwd string) *importConverter {
	return &importConverter{
		lookupEnv: lookupEnv, readFile: readFile, home: home, cwd: cwd,
		names: map[string]string{}, vars: map[string]bool{},
	}
}

// convert returns the server block for e, or nil when e cannot be
// imported (reported).
func (c *importConverter) convert(e *importEntry) *importServer {
	f := e.File
	s := &importServer{Entry: e, Disabled: e.Disabled, CallTimeout: e.CallTimeout}

	typ := strings.ToLower(e.Type)
	switch typ {
	case "", "stdio", "sse", "http", "streamable-http", "streamablehttp", "streamable_http":
	default:
		f.warn(e, e.Pos, "type %q is not known (stdio, http or sse); skipped", e.Type)
		return nil
	}
	switch {
	case typ == "stdio":
		if !e.HasCommand {
			f.warn(e, e.Pos, "type is stdio, but there is no command; skipped")
			return nil
		}
		if e.HasURL {
			f.warn(e, e.Pos, "url is ignored: the type is stdio")
		}
	case typ != "":
		s.Remote = true
		if !e.HasURL {
			f.warn(e, e.Pos, "type is %s, but there is no url; skipped", e.Type)
			return nil
		}
		if e.HasCommand {
			f.warn(e, e.Pos, "command is ignored: the type is %s", e.Type)
		}
	case e.HasCommand:
		if e.HasURL {
			f.warn(e, e.Pos, "url is ignored: the entry has a command, and no type says which to use")
		}
	case e.HasURL:
		s.Remote = true
	default:
		f.warn(e, e.Pos, "the entry has neither command nor url; skipped")
		return nil
	}

	if s.Remote {
		if !c.remote(s) {
			return nil
		}
	} else if !c.stdio(s) {
		return nil
	}
	s.Name = c.name(e)
	if s.Remote {
		c.urlQuery(s)
		c.headers(s)
	}
	return s
}

// name gives e a valid server name that no earlier entry has.
func (c *importConverter) name(e *importEntry) string {
	name := e.Name
	if !importNameRE.MatchString(name) {
		name = sanitizeServerName(name)
		e.File.warn(e, e.Pos, "renamed to %q: a server name starts with a letter and has at most 64 letters, digits, _ or -", name)
	}
	if first, taken := c.names[name]; taken {
		base := name
		for n := 2; ; n++ {
			suffix := fmt.Sprintf("-%d", n)
			cand := base
			if len(cand)+len(suffix) > 64 {
				cand = cand[:64-len(suffix)]
			}
			cand += suffix
			if _, taken := c.names[cand]; !taken {
				name = cand
				break
			}
		}
		e.File.warn(e, e.Pos, "the name %q is taken by %s; written as %q", base, first, name)
	}
	c.names[name] = e.File.Display + ", " + e.Where
	return name
}

// sanitizeServerName maps a name that config rejects to one it accepts.
func sanitizeServerName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	out = strings.Trim(out, "_-")
	if out == "" {
		out = "server"
	}
	if c := out[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		out = "mcp-" + out
	}
	if len(out) > 64 {
		out = strings.TrimRight(out[:64], "_-")
	}
	return out
}

// stdio fills the command, args, env and cwd of a local server.
func (c *importConverter) stdio(s *importServer) bool {
	e := s.Entry
	f := e.File
	if strings.TrimSpace(e.Command) == "" {
		f.warn(e, e.Pos, "the command is empty; skipped")
		return false
	}
	s.Command = c.value(s, e.Command, "command")
	for i, a := range e.Args {
		s.Args = append(s.Args, c.value(s, a, fmt.Sprintf("args[%d]", i)))
	}
	c.env(s)
	if e.Cwd != "" {
		s.Cwd = e.Cwd
	}
	if len(e.Headers) > 0 || len(e.HeaderEnv) > 0 || e.BearerEnv != "" {
		f.warn(e, e.Pos, "headers apply only to servers with a url; not carried over")
	}
	return true
}

// remote fills the url and transport of a remote server; headers come
// after the name, which the variables derived for them carry.
func (c *importConverter) remote(s *importServer) bool {
	e := s.Entry
	f := e.File
	for _, unused := range []struct {
		field string
		set   bool
	}{
		{"args", len(e.Args) > 0}, {"env", len(e.Env) > 0}, {"envFile", e.EnvFile != ""},
		{"env_vars", len(e.EnvVars) > 0}, {"cwd", e.Cwd != ""},
	} {
		if unused.set {
			f.warn(e, e.Pos, "%s applies only to servers run with a command; not carried over", unused.field)
		}
	}
	u := c.value(s, e.URL, "url")
	if err := checkImportURL(u); err != nil {
		f.warn(e, e.Pos, "the url %q is not one mcphost can connect to (%v); skipped", e.URL, err)
		return false
	}
	s.URL = u
	switch strings.ToLower(e.Type) {
	case "sse":
		s.SSE = true
	case "":
		if !u.hasRefs() {
			if pu, err := url.Parse(u.literal()); err == nil && strings.HasSuffix(strings.TrimSuffix(pu.Path, "/"), "/sse") {
				s.SSE = true
				f.warn(e, e.Pos, `the url ends in /sse and no type is given: written with transport = "sse" (the 2024-11-05 HTTP+SSE transport); remove it if the server speaks Streamable HTTP`)
			}
		}
	}
	return true
}

// checkImportURL is config's check of a url, with each variable standing
// for urlPlaceholder, as in Validate.
func checkImportURL(u tmpl) error {
	var b strings.Builder
	for _, p := range u {
		if p.Ref == nil {
			b.WriteString(p.Lit)
		} else {
			b.WriteString(urlPlaceholder)
		}
	}
	pu, err := url.Parse(b.String())
	if err != nil {
		return fmt.Errorf("it does not parse")
	}
	switch strings.ToLower(pu.Scheme) {
	case "http", "https":
	case "":
		return fmt.Errorf("it has no scheme")
	default:
		return fmt.Errorf("the scheme %q is not http or https", pu.Scheme)
	}
	if pu.Hostname() == "" {
		return fmt.Errorf("it has no host")
	}
	return nil
}

// urlPlaceholder is what every variable stands for while the output is
// validated: a whole URL, so that a url made of variables checks too.
const urlPlaceholder = "https://placeholder.invalid"

// value translates one string of the entry and records the variables it
// reads. field names it in warnings.
func (c *importConverter) value(s *importServer, v, field string) tmpl {
	t, needs, warns := c.translate(s.Entry, v)
	for _, w := range warns {
		s.Entry.File.warn(s.Entry, s.Entry.Pos, "%s: %s", field, w)
	}
	for _, n := range needs {
		s.need(n)
	}
	return t
}

// env fills the env map of a stdio server. Values are never copied: each
// variable is read with env() from mcphost's own environment, by its own
// name, unless the source only referred to another variable, which is
// then read instead.
func (c *importConverter) env(s *importServer) {
	e := s.Entry
	f := e.File
	seen := map[string]int{}
	add := func(key string, value tmpl) {
		if i, dup := seen[key]; dup {
			s.Env[i].Value = value
			return
		}
		seen[key] = len(s.Env)
		s.Env = append(s.Env, hclKV{Key: key, Value: value})
	}
	for _, kv := range e.Env {
		if kv.Key == "" || strings.ContainsAny(kv.Key, "=\x00") {
			f.warn(e, kv.Pos, "env[%q] is not a variable name; left out", kv.Key)
			continue
		}
		if config.ReservedEnv(kv.Key) {
			f.warn(e, kv.Pos, "env[%q]: mcphost never gives a server an %s variable; left out", kv.Key, config.ReservedEnvPrefix)
			continue
		}
		if _, dup := seen[kv.Key]; dup {
			f.warn(e, kv.Pos, "env[%q] is given twice; the last one is kept", kv.Key)
		}
		if kv.Str {
			t, needs, _ := c.translate(e, kv.Value)
			// A value that only names another variable reads that one;
			// a VS Code input has no variable, so it gets the key's.
			if len(t) == 1 && t[0].Ref != nil && len(needs) == 1 && needs[0].Input == "" {
				s.need(needs[0])
				add(kv.Key, t)
				continue
			}
			why := "value not copied from the source"
			for _, n := range needs {
				if n.Input != "" {
					why = "was " + n.Why
					break
				}
			}
			s.need(envNeed{Name: kv.Key, Why: why})
		} else {
			s.need(envNeed{Name: kv.Key, Why: "value not copied from the source"})
		}
		add(kv.Key, refTmpl(kv.Key))
	}
	for _, name := range e.EnvVars {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			f.warn(e, e.Pos, "env_vars has %q, which is not a variable name; left out", name)
			continue
		}
		if config.ReservedEnv(name) {
			f.warn(e, e.Pos, "env_vars has %q: mcphost never gives a server an %s variable; left out", name, config.ReservedEnvPrefix)
			continue
		}
		if _, dup := seen[name]; dup {
			continue
		}
		add(name, refTmpl(name))
		s.need(envNeed{Name: name, Why: fmt.Sprintf("passed through by %s (env_vars)", f.Format.Title)})
	}
	if e.EnvFile != "" {
		for _, name := range c.envFile(s) {
			if _, dup := seen[name]; dup {
				continue
			}
			add(name, refTmpl(name))
		}
	}
}

// envFile reads the names (never the values) of the variables in the
// entry's envFile.
func (c *importConverter) envFile(s *importServer) []string {
	e := s.Entry
	f := e.File
	t, _, warns := c.translate(e, e.EnvFile)
	if len(warns) > 0 {
		f.warn(e, e.Pos, "envFile %q cannot be located (%s); its variables are not carried over: set them for mcphost yourself", e.EnvFile, warns[0])
		return nil
	}
	var b strings.Builder
	for _, p := range t {
		if p.Ref == nil {
			b.WriteString(p.Lit)
			continue
		}
		v, ok := c.lookupEnv(p.Ref.Name)
		if !ok && p.Ref.Default != nil {
			v = *p.Ref.Default
		}
		b.WriteString(v)
	}
	path := b.String()
	if !filepath.IsAbs(path) {
		dir := f.Project
		if dir == "" {
			dir = filepath.Dir(f.Path)
		}
		path = filepath.Join(dir, path)
	}
	shown := displayPath(path, c.home, c.cwd)
	data, err := c.readFile(path)
	if err != nil {
		f.warn(e, e.Pos, "envFile %s cannot be read (%v); its variables are not carried over: set them for mcphost yourself", shown, err)
		return nil
	}
	names := slices.DeleteFunc(envFileNames(data), func(n string) bool {
		if config.ReservedEnv(n) {
			f.warn(e, e.Pos, "envFile %s sets %q: mcphost never gives a server an %s variable; left out", shown, n, config.ReservedEnvPrefix)
			return true
		}
		return false
	})
	for _, n := range names {
		s.need(envNeed{Name: n, Why: "from envFile " + shown})
	}
	return names
}

var dotenvNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envFileNames returns the variable names a dotenv file sets, in order:
// lines NAME=VALUE or export NAME=VALUE; comments and blank lines are
// skipped.
func envFileNames(data []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxImportFileSize)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
		name, _, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if ok && dotenvNameRE.MatchString(name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}
