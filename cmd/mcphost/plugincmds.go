package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/boot"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/mcphost/mcphost/plugins"
)

// maxPluginInput bounds the input file of `plugin run`.
const maxPluginInput = 8 << 20

// plugin runs the `plugin` subcommands.
func (e *env) plugin(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "run" {
		fmt.Fprintln(e.stderr, "usage: mcphost plugin run [-config FILE] [-stage STAGE] [-timeout D] [-c KEY=VALUE]... NAME|FILE.wasm INPUT.json|-")
		return exitUsage
	}
	return e.pluginRun(ctx, args[1:])
}

// pluginRun runs one stage of one plugin on an input file and prints the
// output (or "unchanged") and the timing, so authors can test a plugin
// without a server. NAME is a plugin block of the config, run with its
// settings; a path ending in .wasm runs that module with default limits,
// the -timeout given and the config given with -c.
func (e *env) pluginRun(ctx context.Context, args []string) int {
	fs := e.newFlagSet("plugin run", "[-config FILE] [-stage STAGE] [-timeout D] [-c KEY=VALUE]... NAME|FILE.wasm INPUT.json|-")
	configPath := fs.String("config", "", "config file (default: the embedded default)")
	stage := fs.String("stage", "", "result or display (default: the plugin's first stage; result for a .wasm file)")
	timeout := fs.Duration("timeout", 0, fmt.Sprintf("per-call deadline for a .wasm file (default: %v)", plugins.DefaultTimeout))
	pluginConfig := map[string]string{}
	fs.Func("c", "a `KEY=VALUE` of the plugin's config, for a .wasm file (repeatable)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("write -c KEY=VALUE")
		}
		pluginConfig[k] = v
		return nil
	})
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return exitUsage
	}
	name, inputPath := fs.Arg(0), fs.Arg(1)
	st := *stage
	if st != "" && st != plugins.StageResult && st != plugins.StageDisplay {
		fmt.Fprintf(e.stderr, "mcphost plugin run: unknown stage %q: use result or display\n", st)
		return exitUsage
	}

	var cfg *config.Config
	if strings.HasSuffix(name, ".wasm") {
		abs, err := filepath.Abs(name)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost plugin run: %v\n", err)
			return exitUsage
		}
		if st == "" {
			st = plugins.StageResult
		}
		base := strings.TrimSuffix(filepath.Base(name), ".wasm")
		// The default config's data_dir holds the compilation cache; without
		// one (no HOME), compiled code stays in memory.
		var dataDir string
		if def, diags := config.Default(config.Options{Executable: selfExecutable()}); diags.HasErrors() {
			fmt.Fprintf(e.stderr, "mcphost plugin run: no compilation cache on disk: %v\n", diags)
		} else {
			dataDir = def.DataDir
		}
		// Zero timeout, memory limit and on_error get the plugins package's
		// defaults, the config's own.
		cfg = &config.Config{DataDir: dataDir, Plugins: []config.Plugin{{
			Name: base, Path: abs, Stages: []string{st}, Servers: []string{"*"}, Tools: []string{"*"},
			Config: pluginConfig, Timeout: *timeout, PoolSize: 1,
		}}}
		name = base
	} else {
		// A config plugin runs with its own timeout and config.
		var given []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "timeout" || f.Name == "c" {
				given = append(given, "-"+f.Name)
			}
		})
		if len(given) > 0 {
			fmt.Fprintf(e.stderr, "mcphost plugin run: %s: only for a .wasm file; the plugin %q runs with the timeout and config of its block (edit the block, or give the path of its .wasm)\n", strings.Join(given, " and "), name)
			return exitUsage
		}
		var ok bool
		// Only this plugin's block needs its values.
		if cfg, ok = e.loadPart(*configPath); !ok {
			return exitUsage
		}
		var found *config.Plugin
		for i := range cfg.Plugins {
			if cfg.Plugins[i].Name == name {
				found = &cfg.Plugins[i]
			}
		}
		if found == nil {
			var names []string
			for _, p := range cfg.Plugins {
				names = append(names, p.Name)
			}
			fmt.Fprintf(e.stderr, "mcphost plugin run: the config has no plugin %q (it has: %s); or give a path ending in .wasm\n", name, strings.Join(names, ", "))
			return exitUsage
		}
		if unset := cfg.UnsetIn("plugin", name); len(unset) > 0 {
			return e.refuseUnset("plugin run", fmt.Sprintf("the plugin %q", name), unset)
		}
		if st == "" {
			st = found.Stages[0]
		}
		// Only this plugin, with a pool of one.
		p := *found
		p.PoolSize = 1
		cfg = &config.Config{Files: cfg.Files, DataDir: cfg.DataDir, Plugins: []config.Plugin{p}}
	}

	input, err := e.readInput(inputPath, maxPluginInput)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost plugin run: %v\n", err)
		return exitFailure
	}
	if !json.Valid(input) {
		fmt.Fprintf(e.stderr, "mcphost plugin run: %s is not valid JSON: %s\n", inputPath, jsonError(input))
		return exitUsage
	}

	// The daemon's on-disk compilation cache: only the first run compiles.
	rt, err := boot.NewPluginRuntime(boot.PluginCacheDir(cfg, nil), nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost plugin run: %v\n", err)
		return exitFailure
	}
	defer rt.Close(context.WithoutCancel(ctx))
	loadStart := time.Now()
	set, diags := boot.LoadPlugins(ctx, rt, cfg)
	if diags.HasErrors() {
		e.printDiagnostics(cfg.Files, diags)
		return exitUsage
	}
	defer set.Close()
	loaded := time.Since(loadStart)

	out, took, err := set.Run(ctx, name, st, input)
	fmt.Fprintf(e.stderr, "plugin %s, stage %s: load %s, call %s\n", name, st, loaded.Round(time.Millisecond), took.Round(time.Microsecond))
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost plugin run: %v\n", err)
		return exitFailure
	}
	if len(bytes.TrimSpace(out)) == 0 {
		fmt.Fprintln(e.stdout, "unchanged (the plugin returned no output)")
		return exitOK
	}
	// The output is a result or display record that carries server text:
	// JSON is printed with its unsafe runes escaped (the same values),
	// anything else escaped as text.
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") == nil {
		out = termsafe.JSON(pretty.Bytes())
	} else {
		out = []byte(termsafe.Text(string(out)))
	}
	e.stdout.Write(out)
	fmt.Fprintln(e.stdout)
	return exitOK
}
