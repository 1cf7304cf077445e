//go:build !linux

package main

// markNonDumpable does nothing outside Linux: PR_SET_DUMPABLE is Linux's,
// and mcphost sets no equivalent elsewhere, so there a process of the same
// user may still be able to read the daemon's environment.
func markNonDumpable() error { return nil }
