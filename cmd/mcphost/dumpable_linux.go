package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// markNonDumpable clears the daemon's dumpable flag (prctl PR_SET_DUMPABLE
// 0). The kernel then lets only root (CAP_SYS_PTRACE) read the daemon's
// /proc/PID/environ, maps and mem, or attach to it with ptrace; and the
// daemon leaves no core dump. Without it any process of the same user,
// stdio servers among them, could read the daemon's environment
// (MCPHOST_SECRET_KEY, DATABASE_URL, ...) from /proc. Children are not
// affected: execve makes a process dumpable again.
func markNonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
