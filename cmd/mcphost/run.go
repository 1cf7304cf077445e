package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/demo"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitDenied  = 3 // a policy refused the call
)

const usage = `mcphost runs MCP servers for people and agents.

Usage:
  mcphost serve    [-config FILE] [-v] [-replica-id ID] [-advertise URL]
                   [-ready-file FILE] [-shutdown-grace DURATION]
                                                     run the daemon (SIGHUP reloads FILE; SIGTERM drains)
  mcphost reload   [-config FILE] [-dry-run] [-url URL] [-json]
                                                     reload the running daemon's config file, or plan it
  mcphost auth     login|logout SERVER | status [SERVER] [-config FILE] [-url URL]
                                                     sign in to OAuth servers through the running daemon
  mcphost validate [-json] [-strict] FILE...         check config files (-strict: an unset env() is an error)
  mcphost fmt      [-check | -diff] FILE|DIR|-...     format config files in place (- : stdin to stdout)
  mcphost servers  [CLIENT FLAGS]                    show every server
  mcphost logs     [CLIENT FLAGS] [-f] SERVER        a server's log messages and stderr, from the daemon
  mcphost restart  [CLIENT FLAGS] SERVER             a new session of a server of the daemon
  mcphost tools    [CLIENT FLAGS] [-search QUERY] [SERVER | SERVER.TOOL]
  mcphost call     [CLIENT FLAGS] SERVER.TOOL [JSON-ARGUMENTS | - | KEY=VALUE... | KEY:=JSON...]
  mcphost resources [CLIENT FLAGS] [SERVER]         list resources and templates
  mcphost resources [CLIENT FLAGS] [-o FILE] read SERVER URI
  mcphost prompts  [CLIENT FLAGS] [SERVER]
  mcphost prompts  [CLIENT FLAGS] get SERVER.PROMPT [KEY=VALUE...]
  mcphost policy   eval [-config FILE] [-json] [-expect EFFECT] -phase PHASE INPUT.json
                                                     evaluate the policies on one input
  mcphost plugin   run [-config FILE] [-stage STAGE] [-timeout D] [-c KEY=VALUE]... NAME|FILE.wasm INPUT.json
                                                     run one plugin stage on one input
  mcphost gateway  -stdio [-config FILE] [-server NAME | -endpoint NAME] [-url URL] [-token-file FILE]
                   [-standalone [-as NAME]]
                                                     MCP on stdin/stdout for stdio-only clients
  mcphost gateway  config CLIENT [-config FILE] [-as NAME] [-url URL] [-server NAME] [-stdio]
                                                     what to paste into an MCP client's config
  mcphost import   [-from FORMAT] [-o FILE] [-force] [FILE...]
                                                     mcphost servers from MCP client configs
  mcphost sandbox  check [-config FILE] [-v] SERVER  start one stdio server contained; print its layers and refusals
  mcphost doctor                                     what this machine can enforce for stdio servers
  mcphost demo     revenue | notes                   a built-in demo MCP server (stdio)
  mcphost version

Client flags: [-config FILE] [-json] [-v] [-as NAME] [-daemon URL | -local].
The client commands go through the daemon serving the config's data_dir
when one runs (its transcript, audit log and warm servers), or -daemon URL;
-local (or no daemon) connects the servers in-process for this one command.

Without -config, commands use ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl,
else the embedded default config (the revenue demo). help COMMAND says more.
Exit status: 0 ok, 1 runtime failure, 2 usage or config error, 3 denied by a policy.
`

// env is what one invocation may touch: streams and the signal context.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	closers        []func()       // run by closeAll, last first
	principal      host.Principal // the -as principal of client commands
	// reload receives SIGHUP in the real binary (main); serve then
	// reloads its config file. nil: no reloads (tests drive run directly).
	reload <-chan os.Signal
	// configFrom says why loadConfig used the config it loaded (-config,
	// found, or the embedded default), for -v and serve's first line.
	configFrom string
	configSaid bool // sayConfig said it
}

// closeAll releases what a command opened (hosts, then stores).
func (e *env) closeAll() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// run is the whole CLI. It never calls os.Exit, so tests can drive it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&env{stdin: stdin, stdout: stdout, stderr: stderr}).run(ctx, args)
}

// run runs one command line with e's streams.
func (e *env) run(ctx context.Context, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return e.serve(ctx, rest)
	case "reload":
		return e.reloadCmd(ctx, rest)
	case "auth":
		return e.authCmd(ctx, rest)
	case "validate":
		return e.validate(rest)
	case "fmt":
		return e.fmt(rest)
	case "servers":
		return e.servers(ctx, rest)
	case "logs":
		return e.logsCmd(ctx, rest)
	case "restart":
		return e.restartCmd(ctx, rest)
	case "tools":
		return e.tools(ctx, rest)
	case "call":
		return e.call(ctx, rest)
	case "resources":
		return e.resources(ctx, rest)
	case "prompts":
		return e.prompts(ctx, rest)
	case "policy":
		return e.policy(ctx, rest)
	case "plugin":
		return e.plugin(ctx, rest)
	case "gateway":
		return e.gateway(ctx, rest)
	case "doctor":
		return e.doctor(rest)
	case "sandbox":
		return e.sandboxCmd(ctx, rest)
	case "import":
		return e.importConfigs(rest)
	case "demo":
		return e.demo(ctx, rest)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "mcphost %s\n", versionLine())
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(rest) == 1 && isCommand(rest[0]) {
			// `help CMD` is `CMD -h`, on standard output.
			h := *e
			h.stderr = e.stdout
			return h.run(ctx, []string{rest[0], "-h"})
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "mcphost: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// isCommand reports whether name is a command `help NAME` can describe.
func isCommand(name string) bool {
	switch name {
	case "serve", "reload", "auth", "validate", "fmt", "servers", "logs", "restart", "tools", "call",
		"resources", "prompts", "policy", "plugin", "gateway", "doctor", "sandbox", "import":
		return true
	}
	return false
}

// newFlagSet returns a flag set that reports errors on stderr and returns
// them instead of exiting.
func (e *env) newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: mcphost %s %s\n", name, synopsis)
		fs.PrintDefaults()
		if help := commandHelp[name]; help != "" {
			fmt.Fprintf(e.stderr, "\n%s", help)
		}
	}
	return fs
}

// parseFlags parses args and returns the exit code to use when parsing
// failed (-1 when it succeeded).
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	return -1
}

// loadConfig loads the -config file, or the embedded default when path is
// empty, and prints its diagnostics (warnings too). ok is false when the
// config has errors.
func (e *env) loadConfig(path string) (cfg *config.Config, ok bool) {
	return e.loadConfigWith(path, config.Options{Executable: selfExecutable()})
}

// loadPart loads a config as loadConfig does, for a command that uses
// only a part of it (policy eval, plugin run): a variable that env()
// reads and that is not set is unknown instead of an error
// (config.Options.UnsetEnvUnknown), and not mentioned. The caller refuses
// when the part it uses has one (cfg.UnsetIn), with refuseUnset.
func (e *env) loadPart(path string) (cfg *config.Config, ok bool) {
	return e.loadConfigWith(path, config.Options{Executable: selfExecutable(), UnsetEnvUnknown: true})
}

// refuseUnset says on stderr that cmd cannot run because what it uses
// reads environment variables that are not set, and returns exitUsage.
func (e *env) refuseUnset(cmd, what string, unset []config.UnsetEnv) int {
	fmt.Fprintf(e.stderr, "mcphost %s: %s reads environment variables that are not set, so its value is unknown: set them and run again\n", cmd, what)
	for _, u := range unset {
		fmt.Fprintf(e.stderr, "  %s\n", termsafe.Line(u.String()))
	}
	return exitUsage
}

// loadConfigWith is loadConfig with opts; the warnings about unset
// variables (opts.UnsetEnvUnknown) are left out.
func (e *env) loadConfigWith(path string, opts config.Options) (cfg *config.Config, ok bool) {
	var diags hcl.Diagnostics
	e.configFrom = "given with -config"
	if path == "" {
		path, e.configFrom = findConfig()
	}
	if path == "" {
		cfg, diags = config.Default(opts)
	} else {
		cfg, diags = config.LoadFile(path, opts)
	}
	e.printDiagnostics(cfg.Files, config.WithoutUnset(diags))
	return cfg, !diags.HasErrors()
}

// sayConfig tells, under -v, which config a client command uses and why.
func (e *env) sayConfig(cf clientFlags, cfg *config.Config) {
	if *cf.verbose && !e.configSaid {
		e.configSaid = true
		fmt.Fprintf(e.stderr, "mcphost: config %s (%s)\n", termsafe.Line(cfg.Filename), e.configFrom)
	}
}

// printDiagnostics renders diagnostics with source snippets on stderr.
func (e *env) printDiagnostics(files map[string]*hcl.File, diags hcl.Diagnostics) {
	if len(diags) == 0 {
		return
	}
	_ = config.WriteText(e.stderr, files, diags)
}

// selfExecutable returns the path that runs this binary again, used by
// config's executable() (the embedded default runs `mcphost demo revenue`
// as a child). It prefers the name the binary was started under, so a
// wrapper that dispatches on its name (as testscript does) keeps working.
func selfExecutable() string {
	arg0 := os.Args[0]
	if filepath.IsAbs(arg0) {
		return arg0
	}
	if strings.Contains(arg0, string(filepath.Separator)) {
		if abs, err := filepath.Abs(arg0); err == nil {
			return abs
		}
	} else if p, err := exec.LookPath(arg0); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return arg0
}

// newLogger returns the logger of a command: for serve, text on stderr at the
// configured level; for one-shot commands, nothing unless -v.
func (e *env) newLogger(level slog.Leveler, enabled bool) *slog.Logger {
	if !enabled {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
}

func (e *env) demo(ctx context.Context, args []string) int {
	fs := e.newFlagSet("demo", "revenue [-variant NAME] | notes")
	variant := fs.String("variant", "", "a misbehaving variant of the revenue demo, for tests: "+strings.Join(demo.Variants(), ", "))
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	name := fs.Arg(0)
	if fs.NArg() < 1 || (name != "revenue" && name != "notes") {
		fmt.Fprintln(e.stderr, "mcphost demo: name a demo server; available: revenue, notes")
		return exitUsage
	}
	// Flags may also follow the server's name.
	if code := parseFlags(fs, fs.Args()[1:]); code >= 0 {
		return code
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(e.stderr, "mcphost demo %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage
	}
	var err error
	switch name {
	case "notes":
		if *variant != "" {
			fmt.Fprintln(e.stderr, "mcphost demo notes: -variant is for the revenue demo")
			return exitUsage
		}
		err = demo.ServeNotes(ctx, e.stdin, e.stdout)
	default:
		if verr := demo.CheckVariant(*variant); verr != nil {
			fmt.Fprintf(e.stderr, "mcphost demo revenue: %v\n", verr)
			return exitUsage
		}
		err = demo.ServeRevenueVariant(ctx, e.stdin, e.stdout, *variant)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(e.stderr, "mcphost demo %s: %v\n", name, err)
		return exitFailure
	}
	return exitOK
}

// version is the module version stamped by `go install`, or "dev".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func versionLine() string {
	v := version()
	sdk := "unknown"
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				sdk = d.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return fmt.Sprintf("%s, %s, go-sdk %s", v, goVersion, sdk)
}
