// Package importcfg turns the MCP server entries of other clients' config
// files (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Codex)
// into one mcphost HCL config. It is what `mcphost import` runs; the
// command only finds and reads the files, prints and writes.
//
// It owns:
//
//   - the formats ([Format], [FormatNamed]): where each client keeps its
//     files ([Discover]), how to tell a file's format from its name or
//     contents, and the fields and ${...} references each one allows
//     (formats.go, discover.go, json.go, codex.go);
//   - the translation of one entry into a server block: transport, names
//     made valid and unique across all files, references turned into env()
//     calls, secrets replaced by variables (convert.go, refs.go,
//     secrets.go);
//   - writing the blocks with hclwrite, each with a comment saying where it
//     came from and which variables to set, and loading the result with
//     host/config's loader before anyone sees it (hcl.go);
//   - what there is to tell the user, one terminal-safe line per problem,
//     in the order of the files and the places in them (report.go).
//
// An [Importer] is used in two steps: [Importer.Parse] once per file,
// which fails only for a file that cannot be read at all, then
// [Importer.Convert] for everything parsed, which gives the HCL as a
// [Result]; [Importer.Notes] between and after.
//
// It must never:
//
//   - copy a secret into the output: values of env maps, secret-looking
//     header values and url parameters become env() references, and an
//     envFile gives only its variable names;
//   - guess: a field a format does not define, or a reference it cannot
//     translate, is reported and left out or written as it is;
//   - write a file, run a command or print: the caller does, with what the
//     package returns. It reads only through [Options.ReadFile], and
//     [Discover] only asks whether files exist;
//   - hand back HCL that does not load: [Importer.Convert]'s error
//     diagnostics are a bug of this package, and the caller writes nothing;
//   - import host/ beyond host/config (deps_test.go holds it to that).
package importcfg
