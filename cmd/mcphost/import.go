package main

// `mcphost import`: read the MCP client configs a user already has
// (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex) and
// write the same servers as mcphost HCL.
//
// The command finds or takes the files, reads them, and writes what
// internal/importcfg makes of them; everything about the formats, the
// translation and the secrets is there. Nothing is written unless every
// file could be read and the output loads.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/internal/importcfg"
	"github.com/mcphost/mcphost/internal/termsafe"
)

const importSynopsis = "[-from FORMAT] [-o FILE] [-force] [FILE...]"

func (e *env) importConfigs(args []string) int {
	fs := e.newFlagSet("import", importSynopsis)
	from := fs.String("from", "", "read only this `FORMAT`: "+strings.Join(importcfg.FormatNames(), ", "))
	out := fs.String("o", "", "write the config to `FILE` instead of stdout")
	force := fs.Bool("force", false, "with -o, replace FILE if it exists")
	paths, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	var format *importcfg.Format
	if *from != "" {
		if format = importcfg.FormatNamed(*from); format == nil {
			fmt.Fprintf(e.stderr, "mcphost import: -from %q is not a format; use one of %s\n", *from, strings.Join(importcfg.FormatNames(), ", "))
			return exitUsage
		}
	}
	toStdout := *out == "" || *out == "-"
	if *force && *out == "" {
		fmt.Fprintln(e.stderr, "mcphost import: -force only applies with -o FILE")
		return exitUsage
	}
	if !toStdout && !*force {
		if _, err := os.Lstat(*out); err == nil {
			fmt.Fprintf(e.stderr, "mcphost import: %s exists; use -force to replace it\n", *out)
			return exitUsage
		}
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	sources, ok := e.importSources(paths, format, home, cwd)
	if !ok {
		return exitUsage
	}

	im := importcfg.New(importcfg.Options{LookupEnv: os.LookupEnv, ReadFile: importcfg.ReadFile, Home: home, Cwd: cwd})
	if !e.parseImports(im, sources, len(paths) == 0) {
		e.printImportNotes(im)
		fmt.Fprintln(e.stderr, "mcphost import: nothing written; fix the files above, or leave them out by naming the files to import")
		return exitUsage
	}
	name := *out
	if toStdout {
		name = "<stdout>"
	}
	res, diags := im.Convert(name)
	e.printImportNotes(im)
	if res.Servers == 0 {
		fmt.Fprintln(e.stderr, "mcphost import: no servers to import; nothing written")
		return exitUsage
	}
	if diags.HasErrors() {
		e.printDiagnostics(res.Files, diags)
		fmt.Fprintln(e.stderr, "mcphost import: the generated configuration does not load; this is a bug in mcphost import, please report it with the files you imported")
		return exitFailure
	}
	if len(res.Needs) > 0 {
		fmt.Fprintf(e.stderr, "mcphost import: set before starting mcphost: %s\n", strings.Join(res.Needs, ", "))
	}
	if toStdout {
		e.stdout.Write(res.HCL)
		fmt.Fprintf(e.stderr, "mcphost import: wrote %s to stdout\n", plural(res.Servers, "server"))
		return exitOK
	}
	if err := writeImport(*out, res.HCL, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			fmt.Fprintf(e.stderr, "mcphost import: %s exists; use -force to replace it\n", *out)
			return exitUsage
		}
		fmt.Fprintf(e.stderr, "mcphost import: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "mcphost import: wrote %s to %s\n", plural(res.Servers, "server"), *out)
	return exitOK
}

// importSources are the files named on the command line, or without any
// the client configs found in home and cwd. ok is false when none was
// found; the places looked at are printed.
func (e *env) importSources(paths []string, format *importcfg.Format, home, cwd string) (sources []importcfg.Source, ok bool) {
	if len(paths) > 0 {
		for _, p := range paths {
			sources = append(sources, importcfg.Named(p, format))
		}
		return sources, true
	}
	found, looked := importcfg.Discover(home, cwd, os.LookupEnv, format)
	if len(found) == 0 {
		fmt.Fprintln(e.stderr, "mcphost import: no client configs found; looked for:")
		for _, p := range looked {
			fmt.Fprintf(e.stderr, "  %s\n", p)
		}
		fmt.Fprintln(e.stderr, "Name the files to import, with -from FORMAT if their names do not tell.")
		return nil, false
	}
	return found, true
}

// parseImports reads and parses every file, saying what each held, and
// reports every unreadable one before it returns false.
func (e *env) parseImports(im *importcfg.Importer, sources []importcfg.Source, found bool) (ok bool) {
	ok = true
	for _, src := range sources {
		data, err := os.ReadFile(src.Path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost import: %v\n", err)
			ok = false
			continue
		}
		got, err := im.Parse(src, data)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost import: %s\n", termsafe.Line(err.Error()))
			ok = false
			continue
		}
		verb, how := "read", got.Format.Title
		if found {
			verb = "found"
		}
		if got.Guessed {
			how += ", told from its contents; use -from to choose another format"
		}
		fmt.Fprintf(e.stderr, "mcphost import: %s %s (%s): %s\n", verb, termsafe.Line(src.Display), how, plural(got.Entries, "entry"))
	}
	return ok
}

func (e *env) printImportNotes(im *importcfg.Importer) {
	for _, l := range im.Notes() {
		fmt.Fprintf(e.stderr, "mcphost import: %s\n", l)
	}
}

// parseInterleaved parses flags that may come before, between or after
// the file arguments. code is -1 when parsing succeeded.
func parseInterleaved(fs *flag.FlagSet, args []string) (rest []string, code int) {
	for {
		if code := parseFlags(fs, args); code >= 0 {
			return nil, code
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, -1
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), -1
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

// writeImport writes data to path through a temporary file in the same
// directory. Without force it links the file into place, which fails if
// path exists, so a file created meanwhile is not replaced either.
func writeImport(path string, data []byte, force bool) error {
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return os.ErrExist
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mcphost-import-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if force {
		perm := os.FileMode(0o600)
		if info, err := os.Stat(path); err == nil {
			perm = info.Mode().Perm()
		}
		if err := os.Chmod(tmp.Name(), perm); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), path)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return os.ErrExist
		}
		return err
	}
	return nil
}
