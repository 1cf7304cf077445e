//go:build !linux

package store

import (
	"errors"
	"os"
)

// newMappedWriter maps the log on Linux only (entrylog_map_linux.go).
func newMappedWriter(*os.File) (logWriter, error) { return nil, errors.ErrUnsupported }
