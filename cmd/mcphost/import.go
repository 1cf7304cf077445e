package main

// `mcphost import`: read the MCP client configs a user already has
// (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex) and
// write the same servers as mcphost HCL.
//
// The pipeline: find or take the files (discovery below), parse each with
// its format (importformats.go), translate every entry (importconvert.go),
// write HCL with hclwrite and load it with config.Parse before anything is
// written (importhcl.go). Secrets are never copied: env values and
// secret-looking headers become env() references that mcphost reads when
// it starts.

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	if *force && *out == "" {
		fmt.Fprintln(e.stderr, "mcphost import: -force only applies with -o FILE")
		return exitUsage
	}
	if *out != "" && *out != "-" && !*force {
		if _, err := os.Lstat(*out); err == nil {
			fmt.Fprintf(e.stderr, "mcphost import: %s exists; use -force to replace it\n", *out)
			return exitUsage
		}
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()

	report := &importcfg.Report{}
	var files []*importcfg.File
	if len(paths) == 0 {
		found, looked := importcfg.Discover(home, cwd, os.LookupEnv, format)
		if len(found) == 0 {
			fmt.Fprintln(e.stderr, "mcphost import: no client configs found; looked for:")
			for _, p := range looked {
				fmt.Fprintf(e.stderr, "  %s\n", p)
			}
			fmt.Fprintln(e.stderr, "Name the files to import, with -from FORMAT if their names do not tell.")
			return exitUsage
		}
		files = found
	} else {
		for _, p := range paths {
			files = append(files, &importcfg.File{Path: p, Display: p, Format: format, Project: importcfg.ProjectDir(p)})
		}
	}

	// Parse every file and report every unreadable one before stopping.
	var failed bool
	for _, f := range files {
		f.Notes = report
		data, err := os.ReadFile(f.Path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost import: %v\n", err)
			failed = true
			continue
		}
		guessed := false
		if f.Format == nil {
			f.Format, guessed, err = importcfg.Detect(f.Path, data)
			if err != nil {
				fmt.Fprintf(e.stderr, "mcphost import: %s: %v\n", termsafe.Line(f.Display), err)
				failed = true
				continue
			}
		}
		if err := importcfg.Parse(f, data); err != nil {
			fmt.Fprintf(e.stderr, "mcphost import: %s\n", termsafe.Line(err.Error()))
			failed = true
			continue
		}
		verb := "read"
		if len(paths) == 0 {
			verb = "found"
		}
		how := f.Format.Title
		if guessed {
			how += ", told from its contents; use -from to choose another format"
		}
		fmt.Fprintf(e.stderr, "mcphost import: %s %s (%s): %s\n", verb, termsafe.Line(f.Display), how, plural(len(f.Entries), "entry"))
	}
	if failed {
		e.printImportReport(report)
		fmt.Fprintln(e.stderr, "mcphost import: nothing written; fix the files above, or leave them out by naming the files to import")
		return exitUsage
	}

	conv := importcfg.NewConverter(os.LookupEnv, importcfg.ReadFile, home, cwd)
	var servers []*importcfg.Server
	for _, f := range files {
		for _, entry := range f.Entries {
			if s := conv.Convert(entry); s != nil {
				servers = append(servers, s)
			}
		}
	}
	e.printImportReport(report)
	if len(servers) == 0 {
		fmt.Fprintln(e.stderr, "mcphost import: no servers to import; nothing written")
		return exitUsage
	}

	src := importcfg.Render(files, servers)
	name := *out
	if name == "" || name == "-" {
		name = "<stdout>"
	}
	if cfg, diags := importcfg.Validate(src, name); diags.HasErrors() {
		e.printDiagnostics(cfg.Files, diags)
		fmt.Fprintln(e.stderr, "mcphost import: the generated configuration does not load; this is a bug in mcphost import, please report it with the files you imported")
		return exitFailure
	}

	if needs := allNeeds(servers); len(needs) > 0 {
		fmt.Fprintf(e.stderr, "mcphost import: set before starting mcphost: %s\n", strings.Join(needs, ", "))
	}
	if *out == "" || *out == "-" {
		e.stdout.Write(src)
		fmt.Fprintf(e.stderr, "mcphost import: wrote %s to stdout\n", plural(len(servers), "server"))
		return exitOK
	}
	if err := writeImport(*out, src, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			fmt.Fprintf(e.stderr, "mcphost import: %s exists; use -force to replace it\n", *out)
			return exitUsage
		}
		fmt.Fprintf(e.stderr, "mcphost import: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(e.stderr, "mcphost import: wrote %s to %s\n", plural(len(servers), "server"), *out)
	return exitOK
}

func (e *env) printImportReport(r *importcfg.Report) {
	for _, l := range r.Lines() {
		fmt.Fprintf(e.stderr, "mcphost import: %s\n", l)
	}
}

// allNeeds lists every required variable the output reads, once.
func allNeeds(servers []*importcfg.Server) []string {
	var names []string
	for _, s := range servers {
		for _, n := range s.Needs {
			if !n.Optional && !slices.Contains(names, n.Name) {
				names = append(names, termsafe.Line(n.Name))
			}
		}
	}
	return names
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
