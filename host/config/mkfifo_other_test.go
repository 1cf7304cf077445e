//go:build !unix

package config

// mkfifo says that there are no named pipes in the file system here.
func mkfifo(string) string { return "no named pipes in the file system" }
