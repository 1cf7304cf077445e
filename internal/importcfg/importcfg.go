package importcfg

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// Source is one client config file to import.
type Source struct {
	Path    string  // what is read
	Display string  // in comments and reports: "~/.cursor/mcp.json"
	Format  *Format // nil: told from the file's name, or else its contents
	// Project is the workspace folder of a project-level file (the
	// directory holding .vscode/ or .cursor/), the value of
	// ${workspaceFolder}; "" for user-level files.
	Project string
}

// Named is the Source of a file the user names: shown as written, of
// format (nil to tell it from the file), and a project-level file when it
// sits in a .vscode or .cursor directory.
func Named(path string, format *Format) Source {
	return Source{Path: path, Display: path, Format: format, Project: projectDir(path)}
}

// Options are what an [Importer] may know of the world. The zero value
// knows nothing: no variable is set and no envFile can be read.
type Options struct {
	// LookupEnv resolves the variables in envFile paths (${env:NAME}).
	LookupEnv func(string) (string, bool)
	// ReadFile reads an entry's envFile, of which only the variable names
	// are kept; [ReadFile] reads the file system.
	ReadFile func(string) ([]byte, error)
	// Home and Cwd are the user's home directory and the current one, to
	// show envFile paths as ~/... or relative.
	Home, Cwd string
}

// An Importer reads client config files one by one ([Importer.Parse]),
// then converts every entry of all of them into one mcphost config
// ([Importer.Convert]). Server names and the variables derived for
// secrets are unique across the files. What it has to tell the user
// gathers in its notes ([Importer.Notes]). An Importer is not safe for
// concurrent use.
type Importer struct {
	opts   Options
	files  []*importFile
	report importReport
}

// New returns an Importer that has read nothing yet.
func New(opts Options) *Importer {
	if opts.LookupEnv == nil {
		opts.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if opts.ReadFile == nil {
		opts.ReadFile = func(string) ([]byte, error) { return nil, errNoReadFile }
	}
	return &Importer{opts: opts}
}

// Parsed is what [Importer.Parse] read from one file.
type Parsed struct {
	Format  *Format // the file's format
	Guessed bool    // only the file's contents told the format
	Entries int     // the server entries read, before conversion
}

// Parse reads data as the contents of src and keeps its entries for
// [Importer.Convert]. The error says why the file cannot be imported at
// all (it is not JSON or TOML, not of the expected shape, or of a format
// that cannot be told); its text starts with src.Display and, where it is
// known, the line and column. Problems with single entries do not fail:
// they become notes.
func (im *Importer) Parse(src Source, data []byte) (Parsed, error) {
	f := &importFile{Source: src, notes: &im.report}
	guessed := false
	if f.Format == nil {
		var err error
		if f.Format, guessed, err = detectImportFormat(f.Path, data); err != nil {
			return Parsed{}, &importPosError{File: f.Display, Msg: err.Error()}
		}
	}
	if err := parseImportFile(f, data); err != nil {
		return Parsed{}, err
	}
	im.files = append(im.files, f)
	return Parsed{Format: f.Format, Guessed: guessed, Entries: len(f.Entries)}, nil
}

// Notes returns what there is to tell the user since the last call (an
// entry skipped, a field not carried over, a secret replaced by a
// variable), one line each, in the order of the files and of the places
// in each. Text from the files is escaped for a terminal.
func (im *Importer) Notes() []string { return im.report.lines() }

// Result is the config [Importer.Convert] wrote.
type Result struct {
	HCL     []byte // formatted; nil when no entry could be imported
	Servers int    // the server blocks in HCL
	// Needs are the environment variables HCL reads without a default,
	// once each, in the order of the servers: they must be set before
	// mcphost starts. Escaped for a terminal.
	Needs []string
	// Files holds HCL as the loader parsed it, to render diagnostics.
	Files map[string]*hcl.File
}

// Convert turns every entry read so far into a server block and writes
// them as one HCL file, which it then loads as mcphost would, under the
// name filename, with every variable it reads set to a stand-in. Error
// diagnostics mean a bug of the importer: the HCL must not be used.
// Entries that cannot be converted are left out, with a note.
func (im *Importer) Convert(filename string) (*Result, hcl.Diagnostics) {
	servers := im.servers()
	res := &Result{Servers: len(servers)}
	if len(servers) == 0 {
		return res, nil
	}
	res.HCL = renderImport(im.files, servers)
	cfg, diags := Validate(res.HCL, filename)
	if cfg != nil {
		res.Files = cfg.Files
	}
	res.Needs = allNeeds(servers)
	return res, diags
}

// servers converts the entries of every file read, in order.
func (im *Importer) servers() []*importServer {
	conv := newImportConverter(im.opts.LookupEnv, im.opts.ReadFile, im.opts.Home, im.opts.Cwd)
	var servers []*importServer
	for _, f := range im.files {
		for _, entry := range f.Entries {
			if s := conv.convert(entry); s != nil {
				servers = append(servers, s)
			}
		}
	}
	return servers
}

// allNeeds lists every required variable the output reads, once,
// escaped for a terminal.
func allNeeds(servers []*importServer) []string {
	var names, shown []string
	for _, s := range servers {
		for _, n := range s.Needs {
			if !n.Optional && !slices.Contains(names, n.Name) {
				names = append(names, n.Name)
				shown = append(shown, termsafe.Line(n.Name))
			}
		}
	}
	return shown
}
