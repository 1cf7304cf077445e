// Package gotool finds what a measuring command (cmd/mcphost-load,
// cmd/mcphost-bakeoff) needs to build its fixtures from source: the go
// command and the root of this module's checkout.
//
// It imports only the standard library and runs nothing itself.
package gotool
