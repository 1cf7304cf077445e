//go:build !unix

package config

import "os"

// openNonblocking opens name for reading. Outside Unix there are no named
// pipes in the file system to wait on.
func openNonblocking(name string) (*os.File, error) {
	return os.Open(name)
}
