//go:build !linux

package plugins

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
