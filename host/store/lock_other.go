//go:build !unix

package store

import "os"

// lockFile is a no-op where flock(2) does not exist.
func lockFile(*os.File) error { return nil }
