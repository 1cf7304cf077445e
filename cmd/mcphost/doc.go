// Command mcphost is the mcphost CLI and daemon.
//
//	mcphost serve    [-config FILE]                run the daemon (SIGHUP reloads FILE)
//	mcphost validate [-json] [-strict] FILE...      check config files (-strict: an unset env() is an error)
//	mcphost fmt      [-check | -diff] FILE|DIR|-... format config files
//	mcphost servers  [-config FILE] [-json]        connect and show each server
//	mcphost logs     [-f] SERVER                   a server's log messages, from the daemon
//	mcphost restart  SERVER                        a new session of a server of the daemon
//	mcphost tools    [-config FILE] [-json] [-search QUERY] [SERVER | SERVER.TOOL]
//	mcphost call     [-config FILE] [-json] SERVER.TOOL [JSON-ARGUMENTS]
//	mcphost policy   eval ...                      evaluate the policies on one input
//	mcphost plugin   run ...                       run one plugin stage on one input
//	mcphost gateway  -stdio [-standalone]          MCP on stdin/stdout, bridged to the daemon
//	mcphost gateway  config CLIENT                 a client's config snippet for the gateway
//	mcphost import   [-from FORMAT] [FILE...]      server blocks from MCP client configs
//	mcphost reload   [-config FILE] [-dry-run]     reload the running daemon's config (or plan it)
//	mcphost demo     revenue                       the built-in demo MCP server (stdio)
//	mcphost version
//
// Without -config every command uses the embedded default configuration,
// which runs the revenue demo server from this same binary.
//
// Exit status: 0 success, 1 runtime failure (a server failed, a tool returned
// an error result), 2 usage or configuration error.
//
// Everything a server supplies (tool names, titles, descriptions, results,
// progress and error messages, serverInfo, the stderr tail in a last error)
// is printed through internal/termsafe, so control and bidi characters show
// as escapes such as \x1b and \u202e and never reach the terminal raw.
// Server names come from the config and are printed as they are.
//
// main only reads signals and calls run, which holds everything testable.
package main
