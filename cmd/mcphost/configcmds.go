package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
)

// validate loads every file through the whole load path and reports every
// problem of every file at once.
func (e *env) validate(args []string) int {
	fs := e.newFlagSet("validate", "[-json] FILE...")
	asJSON := fs.Bool("json", false, "print the diagnostics as one JSON document on stdout")
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
		cfg, diags := config.LoadFile(path, config.Options{Executable: selfExecutable()})
		maps.Copy(files, cfg.Files)
		if !diags.HasErrors() {
			// The whole load path: plugins are compiled and their exports
			// checked too.
			diags = append(diags, host.CheckPlugins(context.Background(), cfg)...)
		}
		all = append(all, diags...)
		if !diags.HasErrors() {
			summaries = append(summaries, fmt.Sprintf("%s: valid (%s, %s, %s, %s)", path,
				plural(len(cfg.Servers), "server"), plural(len(cfg.Principals), "principal"),
				plural(len(cfg.Policies), "policy"), plural(len(cfg.Plugins), "plugin")))
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
	fs := e.newFlagSet("fmt", "[-check] FILE...")
	check := fs.Bool("check", false, "do not write; list files that are not formatted and exit 1 if any")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(e.stderr, "mcphost fmt: name at least one config file")
		fs.Usage()
		return exitUsage
	}
	code := exitOK
	for _, path := range fs.Args() {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
			code = max(code, exitUsage)
			continue
		}
		out, diags := config.Format(src, path)
		if diags.HasErrors() {
			e.printDiagnostics(map[string]*hcl.File{path: {Bytes: src}}, diags)
			code = max(code, exitUsage)
			continue
		}
		if bytes.Equal(src, out) {
			continue
		}
		if *check {
			fmt.Fprintln(e.stdout, path)
			code = max(code, exitFailure)
			continue
		}
		info, err := os.Stat(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
			code = max(code, exitFailure)
			continue
		}
		if err := writeFileAtomic(path, out, info.Mode().Perm()); err != nil {
			fmt.Fprintf(e.stderr, "mcphost fmt: %v\n", err)
			code = max(code, exitFailure)
			continue
		}
		fmt.Fprintln(e.stdout, path)
	}
	return code
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
