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
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/internal/termsafe"
)

const importSynopsis = "[-from FORMAT] [-o FILE] [-force] [FILE...]"

func (e *env) importConfigs(args []string) int {
	fs := e.newFlagSet("import", importSynopsis)
	from := fs.String("from", "", "read only this `FORMAT`: "+strings.Join(importFormatNames(), ", "))
	out := fs.String("o", "", "write the config to `FILE` instead of stdout")
	force := fs.Bool("force", false, "with -o, replace FILE if it exists")
	paths, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	var format *importFormat
	if *from != "" {
		if format = importFormatNamed(*from); format == nil {
			fmt.Fprintf(e.stderr, "mcphost import: -from %q is not a format; use one of %s\n", *from, strings.Join(importFormatNames(), ", "))
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

	report := &importReport{}
	var files []*importFile
	if len(paths) == 0 {
		found, looked := discoverImports(home, cwd, os.LookupEnv, format)
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
			files = append(files, &importFile{Path: p, Display: p, Format: format, Project: projectDir(p)})
		}
	}

	// Parse every file and report every unreadable one before stopping.
	var failed bool
	for _, f := range files {
		f.notes = report
		data, err := os.ReadFile(f.Path)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost import: %v\n", err)
			failed = true
			continue
		}
		guessed := false
		if f.Format == nil {
			f.Format, guessed, err = detectImportFormat(f.Path, data)
			if err != nil {
				fmt.Fprintf(e.stderr, "mcphost import: %s: %v\n", termsafe.Line(f.Display), err)
				failed = true
				continue
			}
		}
		if err := parseImportFile(f, data); err != nil {
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

	conv := newImportConverter(os.LookupEnv, readImportFile, home, cwd)
	var servers []*importServer
	for _, f := range files {
		for _, entry := range f.Entries {
			if s := conv.convert(entry); s != nil {
				servers = append(servers, s)
			}
		}
	}
	e.printImportReport(report)
	if len(servers) == 0 {
		fmt.Fprintln(e.stderr, "mcphost import: no servers to import; nothing written")
		return exitUsage
	}

	src := renderImport(files, servers)
	name := *out
	if name == "" || name == "-" {
		name = "<stdout>"
	}
	if cfg, diags := validateImport(src, name); diags.HasErrors() {
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

func (e *env) printImportReport(r *importReport) {
	for _, l := range r.lines() {
		fmt.Fprintf(e.stderr, "mcphost import: %s\n", l)
	}
}

// allNeeds lists every required variable the output reads, once.
func allNeeds(servers []*importServer) []string {
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

// readImportFile reads an envFile, bounded like the configs.
func readImportFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImportFileSize+1))
	if err == nil && len(data) > maxImportFileSize {
		err = fmt.Errorf("larger than %d bytes", maxImportFileSize)
	}
	return data, err
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

// projectDir is the workspace folder of a project-level file
// (DIR/.vscode/mcp.json, DIR/.cursor/mcp.json): DIR, absolute. "" for
// any other file.
func projectDir(path string) string {
	dir := filepath.Dir(path)
	switch filepath.Base(dir) {
	case ".vscode", ".cursor":
		abs, err := filepath.Abs(filepath.Dir(dir))
		if err == nil {
			return abs
		}
	}
	return ""
}

// displayPath shows path relative to cwd when it is inside it, as ~/...
// when it is inside home, and as it is otherwise.
func displayPath(path, home, cwd string) string {
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, path); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	if home != "" {
		if rel, err := filepath.Rel(home, path); err == nil && filepath.IsLocal(rel) {
			return "~" + string(filepath.Separator) + rel
		}
	}
	return path
}

// importCandidate is a place a client keeps its config.
type importCandidate struct {
	format  string
	path    string
	project bool // in the current directory rather than the home directory
}

// importCandidates lists where each client keeps its config on Linux and
// macOS, user-level files first. Both platforms' paths are looked at on
// either: the other one's simply does not exist.
func importCandidates(home, cwd string, lookupEnv func(string) (string, bool)) []importCandidate {
	h := func(parts ...string) string { return filepath.Join(append([]string{home}, parts...)...) }
	config := h(".config")
	if x, ok := lookupEnv("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		config = x
	}
	codexHome := h(".codex")
	if x, ok := lookupEnv("CODEX_HOME"); ok && x != "" {
		codexHome = x
	}
	macSupport := h("Library", "Application Support")
	var c []importCandidate
	user := func(format string, paths ...string) {
		if home == "" {
			return // no home directory: only the current one
		}
		for _, p := range paths {
			c = append(c, importCandidate{format: format, path: p})
		}
	}
	project := func(format string, rel ...string) {
		if cwd != "" {
			c = append(c, importCandidate{format: format, path: filepath.Join(append([]string{cwd}, rel...)...), project: true})
		}
	}
	user("claude", filepath.Join(macSupport, "Claude", "claude_desktop_config.json"), filepath.Join(config, "Claude", "claude_desktop_config.json"))
	user("claude-code", h(".claude.json"))
	project("claude-code", ".mcp.json")
	user("cursor", h(".cursor", "mcp.json"))
	project("cursor", ".cursor", "mcp.json")
	user("vscode", filepath.Join(macSupport, "Code", "User", "mcp.json"), filepath.Join(config, "Code", "User", "mcp.json"))
	project("vscode", ".vscode", "mcp.json")
	user("windsurf", h(".codeium", "windsurf", "mcp_config.json"))
	user("codex", filepath.Join(codexHome, "config.toml"))
	project("codex", ".codex", "config.toml")
	return c
}

// discoverImports returns the config files that exist, of one format or
// of all, and the places it looked.
func discoverImports(home, cwd string, lookupEnv func(string) (string, bool), only *importFormat) (found []*importFile, looked []string) {
	seen := map[string]bool{}
	for _, cand := range importCandidates(home, cwd, lookupEnv) {
		if only != nil && cand.format != only.Name {
			continue
		}
		abs, err := filepath.Abs(cand.path)
		if err != nil || seen[abs] {
			continue
		}
		seen[abs] = true
		display := displayPath(abs, home, "")
		if cand.project {
			display = displayPath(abs, home, cwd)
		}
		looked = append(looked, fmt.Sprintf("%s (%s)", display, importFormatNamed(cand.format).Title))
		if info, err := os.Stat(abs); err != nil || !info.Mode().IsRegular() {
			continue
		}
		f := &importFile{Path: abs, Display: display, Format: importFormatNamed(cand.format)}
		if cand.project {
			f.Project = projectDir(abs)
		}
		found = append(found, f)
	}
	return found, looked
}
