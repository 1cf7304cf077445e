package boot

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/sandbox"
)

// pluginCacheSubdir is the directory under data_dir that holds the on-disk
// compilation cache of the plugins (native code: mode 0700).
const pluginCacheSubdir = "plugin-cache"

// pluginSpecs converts the config's plugin blocks for the plugins package.
func pluginSpecs(cfg *config.Config) []plugins.Spec {
	specs := make([]plugins.Spec, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		specs[i] = plugins.Spec{
			Name:        p.Name,
			Path:        p.Path,
			Stages:      append([]string(nil), p.Stages...),
			Servers:     append([]string(nil), p.Servers...),
			Tools:       append([]string(nil), p.Tools...),
			Config:      p.Config,
			Timeout:     p.Timeout,
			MemoryLimit: p.MemoryLimit,
			PoolSize:    p.PoolSize,
			OnError:     p.OnError,
		}
	}
	return specs
}

// NewPluginRuntime makes the process's plugin runtime. cacheDir "" keeps
// compiled code in memory only.
func NewPluginRuntime(cacheDir string, logger *slog.Logger) (*plugins.Runtime, error) {
	return plugins.NewRuntime(plugins.Options{CacheDir: cacheDir, Logger: logger, ValidSource: sandbox.ValidSource})
}

// LoadPlugins compiles every plugin of cfg on rt, checks its exports and
// starts its pool. Problems are diagnostics at the plugin block's attribute
// they concern (the `path` line for an unreadable or corrupt module or a
// missing export). With errors the returned set is nil.
func LoadPlugins(ctx context.Context, rt *plugins.Runtime, cfg *config.Config) (*plugins.Set, hcl.Diagnostics) {
	if len(cfg.Plugins) == 0 {
		return nil, nil
	}
	set, errs := rt.Load(ctx, pluginSpecs(cfg))
	var diags hcl.Diagnostics
	for _, e := range errs {
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Plugin cannot be loaded"}
		if e.Plugin >= 0 && e.Plugin < len(cfg.Plugins) {
			p := cfg.Plugins[e.Plugin]
			rng := p.PathRange
			switch e.Field {
			case "stages":
				rng = p.StagesRange
			case "path":
			default:
				rng = p.DeclRange
			}
			if rng.Filename != "" {
				d.Subject = rng.Ptr()
			}
			d.Detail = fmt.Sprintf("The plugin %q (%s) failed to load: %v.", p.Name, p.Path, e.Err)
			if e.BadModule {
				d.Detail += " Check the file is a WebAssembly module built for the Extism ABI that exports on_result for the result stage and on_display for the display stage."
			}
		} else {
			d.Detail = fmt.Sprintf("%v.", e)
		}
		diags = append(diags, d)
	}
	return set, diags // set is nil when there are errors
}

// CheckPlugins compiles and checks the plugins of cfg without keeping them
// (`mcphost validate`). The compiled code goes to the daemon's on-disk
// cache under data_dir, so a later start (or check) is quick.
func CheckPlugins(ctx context.Context, cfg *config.Config) hcl.Diagnostics {
	if len(cfg.Plugins) == 0 {
		return nil
	}
	rt, err := NewPluginRuntime(PluginCacheDir(cfg, nil), nil)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Plugin runtime unavailable", Detail: fmt.Sprintf("The WebAssembly runtime could not start: %v.", err)}}
	}
	defer rt.Close(context.WithoutCancel(ctx))
	set, diags := LoadPlugins(ctx, rt, cfg)
	set.Close() // a no-op on nil
	return diags
}

// pluginCacheDir returns data_dir/plugin-cache, created with mode 0700, or
// "" (memory only) when data_dir is unset or cannot be used.
func cacheDirIn(dataDir string, logger *slog.Logger) string {
	if dataDir == "" {
		return ""
	}
	dir := filepath.Join(dataDir, pluginCacheSubdir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		logger.Warn("plugin compilation cache kept in memory", "dir", dir, "err", err)
		return ""
	}
	return dir
}

// WasmCacheDir is where WebAssembly servers keep their compiled code
// across starts: the plugins' compilation cache (Options.PluginCacheDir,
// data_dir/plugin-cache for the daemon: wazero keys its entries by the
// module's hash, so plugins and servers share it), else
// data_dir/plugin-cache, else, without a data_dir, a directory beside the
// servers' temporary sandbox directories.
func WasmCacheDir(pluginCacheDir, dataDir, sandboxDir string) string {
	switch {
	case pluginCacheDir != "":
		return pluginCacheDir
	case dataDir != "":
		return filepath.Join(dataDir, pluginCacheSubdir)
	}
	return filepath.Join(sandboxDir, ".wasm-cache")
}

// PluginCacheDir returns data_dir/plugin-cache for cfg, created with
// mode 0700, or "" when it cannot be used (the cache then stays in memory).
func PluginCacheDir(cfg *config.Config, logger *slog.Logger) string {
	wasm := slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Transport == config.TransportWasm })
	if len(cfg.Plugins) == 0 && !wasm {
		return ""
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return cacheDirIn(cfg.DataDir, logger)
}
