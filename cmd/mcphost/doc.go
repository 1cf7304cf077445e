// Command mcphost is the mcphost CLI and daemon.
//
//	mcphost serve    [-config FILE]                run the daemon (SIGHUP reloads FILE)
//	mcphost validate [-json] FILE...               check config files
//	mcphost fmt      [-check] FILE...              format config files
//	mcphost servers  [-config FILE] [-json]        connect and show each server
//	mcphost tools    [-config FILE] [-json] [SERVER]
//	mcphost call     [-config FILE] [-json] SERVER.TOOL [JSON-ARGUMENTS]
//	mcphost demo     revenue                       the built-in demo MCP server (stdio)
//	mcphost version
//
// Without -config every command uses the embedded default configuration,
// which runs the revenue demo server from this same binary.
//
// Exit status: 0 success, 1 runtime failure (a server failed, a tool returned
// an error result), 2 usage or configuration error.
//
// main only reads signals and calls run, which holds everything testable.
package main
