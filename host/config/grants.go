package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// The paths of a sandbox block (read, write, a wasm module) name files on
// the machine mcphost runs on. They are resolved at load, so that what the
// host grants is what the file says and a mistake has a position: a
// leading "~" is the home directory, a relative path is relative to the
// configuration file's directory (as cwd and data_dir are), symlinks are
// followed, and a path that does not exist is an error. A server's roots
// are granted read-write too, when they exist.
//
// None of them may reach mcphost's own state, the protected set: the data
// directory, the configuration file, and every file the configuration
// reads with file(). protect checks that once the whole file has been
// evaluated, since a file() call may come after the server blocks.

// readSource is a file the configuration read with file().
type readSource struct {
	path   string // absolute, on the machine
	hidden bool   // its path was read with env() or file(): never shown
}

// pendingGrant is a path a server's sandbox grants, kept for protect.
type pendingGrant struct {
	path    string // resolved
	what    string // how a diagnostic names it, capitalised: `The read grant "~/x" of server "a" (/home/me/x)`
	root    bool   // a root, added to Write
	subject hcl.Range
}

// protectedPath is one path of the protected set.
type protectedPath struct {
	path string // resolved as far as it exists
	what string // how a diagnostic names it: "the data directory /x, which …"
}

// recordSource notes a file that file(arg) read (resolved, as readFile
// returned it) for the protected set. Its path is hidden when arg holds a
// value env() or file() returned in the same expression.
func (l *loader) recordSource(arg, resolved string) {
	if l.hostPath == nil {
		return
	}
	p := l.hostPath(resolved)
	if p == "" {
		return
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	hidden := slices.ContainsFunc(l.returned, func(r string) bool { return r != "" && strings.Contains(arg, r) })
	l.sources = append(l.sources, readSource{path: p, hidden: hidden})
}

// decodeGrants reads read or write (attr) of server's sandbox block: each
// path resolved by resolveExisting, without duplicates, and kept for
// protect.
func (l *loader) decodeGrants(server string, expr hcl.Expression, attr string, rng hcl.Range) []string {
	paths, st := l.evalStringList(expr, attr)
	if st != valid {
		return nil
	}
	var out []string
	for i, p := range paths {
		el := l.element(expr, i)
		subject := l.elementRange(expr, i, rng)
		name := fmt.Sprintf("The %s grant %s of server %q", attr, quoted(el, p), server)
		r, ok := l.resolveExisting(p, attr, el, subject, name)
		if !ok {
			continue
		}
		l.grants = append(l.grants, pendingGrant{path: r, what: name + resolvedAside(el, p, r), subject: subject})
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// resolveExisting resolves a path of a sandbox block or of a wasm module
// (p, written as el at subject, of attribute attr): "~" and a relative
// path as resolvePath does, then absolute, cleaned and with every symlink
// followed. name starts the diagnostics, such as `The read grant "x" of
// server "a"`. ok is false after a diagnostic.
func (l *loader) resolveExisting(p, attr string, el hcl.Expression, subject hcl.Range, name string) (string, bool) {
	if p == "" {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Empty path",
			Detail:   fmt.Sprintf("%s is empty. Write a file or directory, such as \"/srv/reference\" or \"~/notes\"; a relative path is relative to the configuration file's directory.", name),
			Subject:  subject.Ptr(),
		})
		return "", false
	}
	r := l.resolvePath(p, attr, subject)
	if r == "" {
		return "", false
	}
	if abs, err := filepath.Abs(r); err == nil {
		r = abs
	}
	real, err := filepath.EvalSymlinks(r)
	if err == nil {
		return real, true
	}
	if errors.Is(err, fs.ErrNotExist) {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Path not found",
			Detail:   fmt.Sprintf("%s%s does not exist. Grants name existing files and directories, resolved when the configuration is loaded: create it first, or correct the path.", name, resolvedAside(el, p, r)),
			Subject:  subject.Ptr(),
		})
		return "", false
	}
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		err = pathErr.Err // without the path, which may have been read with env()
	}
	l.add(&hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Cannot resolve path",
		Detail:   fmt.Sprintf("%s%s cannot be resolved%s. Check the path and the permissions of the directories on it.", name, resolvedAside(el, p, r), because(el, err)),
		Subject:  subject.Ptr(),
	})
	return "", false
}

// resolvedAside is " (RESOLVED)" after the name of a path written as p
// that resolved to another, unless el reads it with env() or file().
func resolvedAside(el hcl.Expression, p, resolved string) string {
	if resolved == p || sourcesPhrase(el) != "" {
		return ""
	}
	return " (" + resolved + ")"
}

// rootGrants returns the directories of a server's roots (file URIs,
// already checked; ranges are their elements) that exist, resolved like
// a grant and kept for protect. A root that does not exist is not
// granted, and not an error: it may appear later, and roots/list still
// answers it.
func (l *loader) rootGrants(server string, roots []string, ranges []hcl.Range) []string {
	var out []string
	for i, root := range roots {
		u, err := url.Parse(root)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(filepath.FromSlash(u.Path)))
		if err != nil {
			continue
		}
		what := fmt.Sprintf("The root %q of server %q", root, server)
		if real != u.Path {
			what += " (" + real + ")"
		}
		subject := hcl.Range{}
		if i < len(ranges) {
			subject = ranges[i]
		}
		l.grants = append(l.grants, pendingGrant{path: real, what: what, root: true, subject: subject})
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// protect computes the protected set, gives it to the top-level sandbox
// and to every server mcphost runs itself, and reports each grant that is,
// lies inside, or contains a protected path.
func (l *loader) protect(cfg *Config) {
	set := l.protectedSet(cfg)
	paths := make([]string, len(set))
	for i, p := range set {
		paths[i] = p.path
	}
	cfg.Sandbox.Protected = paths
	for i := range cfg.Servers {
		if t := cfg.Servers[i].Transport; t == TransportStdio || t == TransportWasm || t == "" {
			cfg.Servers[i].Sandbox.Protected = slices.Clone(paths)
		}
	}
	for _, g := range l.grants {
		for _, p := range set {
			var how string
			switch {
			case g.path == p.path:
				how = "is"
			case within(g.path, p.path):
				how = "lies inside"
			case within(p.path, g.path):
				how = "contains"
			default:
				continue
			}
			fix := "Narrow the grant to what the server needs, outside mcphost's own files."
			switch {
			case g.root:
				fix = "A root is granted read-write to a server mcphost runs; give a root that neither contains nor lies inside it."
			case how == "contains":
				fix = "Narrow the grant: list the subdirectories the server needs instead, none of which holds it."
			}
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Grant reaches a protected path",
				Detail:   fmt.Sprintf("%s %s %s. A sandboxed server never sees mcphost's own state: its data directory, its configuration and the files the configuration reads. %s", g.what, how, p.what, fix),
				Subject:  g.subject.Ptr(),
			})
			break
		}
	}
}

// protectedSet is the data directory, the configuration file and the
// files file() read, each resolved as far as it exists, without repeats.
func (l *loader) protectedSet(cfg *Config) []protectedPath {
	var out []protectedPath
	add := func(p string, what func(p string) string) {
		p = realPath(p)
		if !slices.ContainsFunc(out, func(o protectedPath) bool { return o.path == p }) {
			out = append(out, protectedPath{path: p, what: what(p)})
		}
	}
	if cfg.DataDir != "" {
		add(cfg.DataDir, func(p string) string {
			if l.dataDirFrom != "" {
				p = "(read from " + l.dataDirFrom + ", not shown)"
			}
			return "the data directory " + p + ", which holds the owner token and every transcript"
		})
	}
	if l.configPath != "" {
		add(l.configPath, func(p string) string { return "the configuration file " + p })
	}
	for _, s := range l.sources {
		add(s.path, func(p string) string {
			if s.hidden {
				return "a file the configuration reads with file() (its path is read with env() or file(), not shown)"
			}
			return p + ", which the configuration reads with file()"
		})
	}
	return out
}

// realPath makes p absolute and follows its symlinks as far as it exists:
// a data directory not created yet still resolves through a symlinked
// parent, as a grant would.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(realPath(parent), filepath.Base(p))
}

// within reports whether p is dir or lies inside it, comparing whole path
// components: /database is not inside /data. Both are clean and absolute.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// decodeWasmPath reads `wasm`: the module's file, resolved like a grant,
// which must be a regular file.
func (l *loader) decodeWasmPath(b *serverBlock, v string) string {
	name := fmt.Sprintf("The wasm module %s of server %q", quoted(b.Wasm, v), b.Name)
	p, ok := l.resolveExisting(v, "wasm", b.Wasm, b.WasmRange, name)
	if !ok {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		kind := "not a regular file"
		if err == nil {
			kind = fileKind(fi.Mode())
		}
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid wasm module",
			Detail:   fmt.Sprintf("%s%s is %s. Give the .wasm file of a WebAssembly MCP server.", name, resolvedAside(b.Wasm, v, p), kind),
			Subject:  b.WasmRange.Ptr(),
		})
		return ""
	}
	return p
}
