package importcfg

// Where each client keeps its config, and reading the files it names.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ReadFile reads a file from the file system, at most 32 MiB of it: what
// [Options.ReadFile] should be outside tests. It fails on a larger file.
func ReadFile(path string) ([]byte, error) {
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

// errNoReadFile is why an envFile is not read without [Options.ReadFile].
var errNoReadFile = errors.New("reading files is off")

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

// Discover returns the config files of the clients that exist, of one
// format or of all, in home (the user's home directory, "" for none) and
// cwd (the current directory), and the places it looked, as "PATH
// (Client)". lookupEnv reads XDG_CONFIG_HOME and CODEX_HOME. It only asks
// the file system whether each file exists.
func Discover(home, cwd string, lookupEnv func(string) (string, bool), only *Format) (found []Source, looked []string) {
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
		looked = append(looked, fmt.Sprintf("%s (%s)", display, FormatNamed(cand.format).Title))
		if info, err := os.Stat(abs); err != nil || !info.Mode().IsRegular() {
			continue
		}
		src := Source{Path: abs, Display: display, Format: FormatNamed(cand.format)}
		if cand.project {
			src.Project = projectDir(abs)
		}
		found = append(found, src)
	}
	return found, looked
}
