//go:build unix

package config

import (
	"os"
	"syscall"
)

// openNonblocking opens name for reading without waiting: opening a named
// pipe that was put in place of a checked regular file returns at once
// (and the check on the open file refuses it) instead of waiting for a
// writer. Reads of a regular file are not affected by O_NONBLOCK.
func openNonblocking(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
