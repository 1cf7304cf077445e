//go:build unix

package config

import "syscall"

// mkfifo makes a named pipe at path, or says why it cannot.
func mkfifo(path string) string {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		return err.Error()
	}
	return ""
}
