// Package config loads mcphost's HCL configuration into a [Config].
//
// It owns the file format: the top-level attributes, the `server`,
// `principal`, `rate_limit`, `policies`, `policy`, `plugin`, `store` and
// `sandbox` blocks, the `env()`, `file()` and `executable()` functions, and
// every diagnostic an operator sees for a bad file. [Load] reads one file from
// an [io/fs.FS], [LoadFile] from the OS, [Parse] from memory and [Default]
// from the embedded default.hcl. Each collects every problem at once as
// [hcl.Diagnostics] with source ranges (sorted by file, line and column, see
// [SortDiagnostics]) and fills in defaults. The CLI renders them with
// hcl.NewDiagnosticTextWriter over [Config.Files], or as JSON with
// [DiagnosticsJSON]; [Format] is `mcphost fmt`.
//
// Loading runs in two steps: gohcl decodes the file into the schema structs
// (schema.go), keeping the ranges of blocks, labels and values, and then each
// block is validated on its own, so one bad block does not hide the problems
// of another. A syntax error stops the load before decoding, and a file that
// nests deeper than [MaxNestingDepth] levels or has more than
// [MaxConfigTokens] tokens is rejected before it is parsed at all (see
// checkNesting and checkTokens), so no input can exhaust the parser's stack
// or make the lexer allocate gigabytes.
//
// The functions are the only way a file reaches outside itself:
//
//	env("NAME")            the variable, or an error diagnostic when unset
//	env("NAME", "default") the variable, or the default when unset
//	file("PATH")           a text file, relative to the config file's directory:
//	                       a regular file (not a directory, device, pipe or
//	                       socket) of at most [MaxFileSize] (1 MiB)
//	executable()           the path of the running mcphost binary
//
// Together they return at most [MaxFunctionBytes] (16 MiB) in one load; the
// call that passes it is an error diagnostic.
//
// Values read with env() and file() may be secrets, so no diagnostic prints
// them, nor an error message that could quote a part of them: a diagnostic
// about such a value names the call instead (`The log level read from
// env("LOG") (not shown) is not known`), and one of HCL's that quotes it
// has its detail replaced.
//
// It never starts processes, opens connections or touches the network; the
// host package turns a [Config] into running servers.
package config
