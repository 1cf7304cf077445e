// Package config loads mcphost's HCL configuration into a [Config].
//
// It owns the file format: the top-level attributes, the `server` and
// `principal` blocks, the `env()`, `file()` and `executable()` functions, and
// every diagnostic an operator sees for a bad file. [Load] reads one file from
// an [io/fs.FS], collects every problem at once as [hcl.Diagnostics] with
// source ranges (sorted by file, line and column), and fills in defaults.
//
// It never starts processes, opens connections or touches the network; the
// host package turns a [Config] into running servers.
package config
