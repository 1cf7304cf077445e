package main

import (
	"os"
	"path/filepath"
)

// configFileName is the config file a command finds without -config: in
// the current directory, then in the user's config directory.
const configFileName = "mcphost.hcl"

// findConfig returns the config file a command uses without -config and
// why: ./mcphost.hcl, else $XDG_CONFIG_HOME/mcphost/mcphost.hcl (default
// ~/.config), else "" for the embedded default.
func findConfig() (path, why string) {
	if isFile(configFileName) {
		return configFileName, "found in the current directory"
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".config")
		}
	}
	if dir != "" {
		if p := filepath.Join(dir, "mcphost", configFileName); isFile(p) {
			return p, "found in the user's config directory"
		}
	}
	return "", "no -config, no ./" + configFileName + ", no " + filepath.Join(dir, "mcphost", configFileName)
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
