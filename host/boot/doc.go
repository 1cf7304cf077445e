// Package boot opens what a daemon's host is built on, as its config says:
// the transcript store (the SQLite file in data_dir, or PostgreSQL) and the
// plugin runtime with the config's plugins, compiled into the on-disk
// cache under data_dir.
//
// The commands (serve, the one-shot CLI commands, validate, the load
// tool) open these before they build a host.Host, and a reload loads the
// plugins it adds through the same functions. boot holds no state and
// starts no goroutine; it never runs a server or serves a request.
package boot
