// Package sysinfo describes the machine a measurement ran on, for the
// reports of the measuring commands (cmd/mcphost-load, cmd/mcphost-bakeoff):
// its CPU model, memory, kernel and load average, read from Linux's /proc.
//
// It imports only the standard library and never fails: on another system,
// or when /proc cannot be read, a figure is "" or -1.
package sysinfo
