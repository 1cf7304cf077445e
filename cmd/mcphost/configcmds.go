package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
)

// validate loads every file through the whole load path and reports every
// problem of every file at once. A variable that env() reads and that is
// not set is unknown: a warning names it and the rest is checked without
// it (-strict makes it an error), so a config can be checked on a machine
// without its secrets. A stdio server's command that is not on PATH here
// is a warning too: the config may be meant for another machine.
func (e *env) validate(args []string) int {
	fs := e.newFlagSet("validate", "[-json] [-strict] FILE...")
	asJSON := fs.Bool("json", false, "print the diagnostics as one JSON document on stdout")
	strict := fs.Bool("strict", false, "an environment variable that env() reads and that is not set is an error, as for serve (default: a warning)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(e.stderr, "mcphost validate: name at least one config file")
		fs.Usage()
		return exitUsage
	}
	var all hcl.Diagnostics
	files := map[string]*hcl.File{}
	var summaries []string
	for _, path := range fs.Args() {
		cfg, diags := config.LoadFile(path, config.Options{Executable: selfExecutable(), UnsetEnvUnknown: true})
		maps.Copy(files, cfg.Files)
		if *strict {
			config.StrictUnset(diags)
		}
		if !diags.HasErrors() {
			// The whole load path: plugins are compiled and their exports
			// checked too (those whose block has an unknown value are not:
			// it may be their path).
			diags = append(diags, boot.CheckPlugins(context.Background(), knownPlugins(cfg))...)
			diags = append(diags, config.CommandWarnings(cfg)...)
		}
		all = append(all, diags...)
		if !diags.HasErrors() {
			s := fmt.Sprintf("%s: valid (%s, %s, %s, %s)", path,
				plural(len(cfg.Servers), "server"), plural(len(cfg.Principals), "principal"),
				plural(len(cfg.Policies), "policy"), plural(len(cfg.Plugins), "plugin"))
			vars := map[string]bool{}
			for _, u := range cfg.Unset {
				vars[u.Call] = true
			}
			if n := len(vars); n > 0 {
				s += fmt.Sprintf(", %s not set, which serve needs", plural(n, "env() variable"))
			}
			summaries = append(summaries, s)
		}
	}
	config.SortDiagnostics(all)
	if *asJSON {
		e.stdout.Write(config.DiagnosticsJSON(all))
	} else {
		e.printDiagnostics(files, all)
		for _, s := range summaries {
			fmt.Fprintln(e.stdout, s)
		}
	}
	if all.HasErrors() {
		return exitUsage
	}
	return exitOK
}

// knownPlugins is cfg with only the plugins whose blocks read no unset
// variable.
func knownPlugins(cfg *config.Config) *config.Config {
	if len(cfg.Unset) == 0 {
		return cfg
	}
	c := *cfg
	c.Plugins = nil
	for _, p := range cfg.Plugins {
		if len(cfg.UnsetIn("plugin", p.Name)) == 0 {
			c.Plugins = append(c.Plugins, p)
		}
	}
	return &c
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fmt rewrites files in the canonical HCL layout, or with -check only lists
// the files that need it.
func (e *env) fmt(args []string) int {
	fs := e.newFlagSet("fmt", "[-check | -diff] FILE|DIR|-...")
	check := fs.Bool("check", false, "do not write; list files that are not formatted and exit 1 if any")
	diff := fs.Bool("diff", false, "do not write; print what would change as a unified diff and exit 1 if anything would")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(e.stderr, "mcphost fmt: name at least one config file, a directory (its *.hcl files), or - (standard input)")
		fs.Usage()
		return exitUsage
	}
	code := exitOK
	for _, arg := range fs.Args() {
		if arg == "-" {
			code = max(code, e.fmtStdin(*check, *diff))
			continue
		}
		paths, err := hclFiles(arg)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
			code = max(code, exitUsage)
			continue
		}
		for _, path := range paths {
			code = max(code, e.fmtFile(path, *check, *diff))
		}
	}
	return code
}

// hclFiles is arg when it is a file, and the *.hcl files of arg, sorted,
// when it is a directory (not its subdirectories).
func hclFiles(arg string) ([]string, error) {
	info, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{arg}, nil
	}
	paths, err := filepath.Glob(filepath.Join(arg, "*.hcl"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: a directory with no *.hcl file", arg)
	}
	return paths, nil // Glob sorts
}

// fmtFile formats one file in place, or, with check, names it when it is
// not formatted, or, with diff, prints what would change.
func (e *env) fmtFile(path string, check, diff bool) int {
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
		return exitUsage
	}
	out, diags := config.Format(src, path)
	if diags.HasErrors() {
		e.printDiagnostics(map[string]*hcl.File{path: {Bytes: src}}, diags)
		return exitUsage
	}
	switch {
	case bytes.Equal(src, out):
		return exitOK
	case diff:
		fmt.Fprint(e.stdout, unifiedDiff(path, path+" (formatted)", string(src), string(out)))
		return exitFailure
	case check:
		fmt.Fprintln(e.stdout, path)
		return exitFailure
	}
	info, err := os.Stat(path)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
		return exitFailure
	}
	if err := writeFileAtomic(path, out, info.Mode().Perm()); err != nil {
		fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(e.stdout, path)
	return exitOK
}

// fmtStdin formats standard input onto standard output; with check or
// diff it writes nothing formatted, only whether (or what) would change.
func (e *env) fmtStdin(check, diff bool) int {
	src, err := io.ReadAll(io.LimitReader(e.stdin, config.MaxConfigSize+1))
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost fmt: standard input: %v\n", err)
		return exitUsage
	}
	if len(src) > config.MaxConfigSize {
		fmt.Fprintf(e.stderr, "mcphost fmt: standard input: more than %d bytes\n", config.MaxConfigSize)
		return exitUsage
	}
	const name = "<stdin>"
	out, diags := config.Format(src, name)
	if diags.HasErrors() {
		e.printDiagnostics(map[string]*hcl.File{name: {Bytes: src}}, diags)
		return exitUsage
	}
	switch {
	case diff:
		fmt.Fprint(e.stdout, unifiedDiff(name, name+" (formatted)", string(src), string(out)))
	case check:
		if !bytes.Equal(src, out) {
			fmt.Fprintln(e.stdout, name)
		}
	default:
		_, _ = e.stdout.Write(out)
		return exitOK
	}
	if !bytes.Equal(src, out) {
		return exitFailure
	}
	return exitOK
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, so an interrupted write never leaves half a config.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(dirOf(path), ".mcphost-fmt-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i+1]
		}
	}
	return "."
}
