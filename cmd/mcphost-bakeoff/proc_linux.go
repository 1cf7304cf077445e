//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procCPU returns the CPU time (utime and stime, not its children's) that
// process pid has used, from /proc/PID/stat in ticks of 10 ms (USER_HZ is
// 100 on Linux).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of %d: %w", pid, err)
	}
	// After "pid (comm)", whose comm may hold spaces and parentheses:
	// state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	// cmajflt utime stime (fields 3 to 15).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu of %d: no ')' in /proc/%d/stat", pid, pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu of %d: %d fields in /proc/%d/stat", pid, len(f), pid)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu of %d: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

// resetPeakRSS resets process pid's VmHWM to its current resident set by
// writing "5" to /proc/PID/clear_refs.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// procStatus returns field (such as "VmHWM" or "VmRSS") of
// /proc/PID/status in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("%s of %d: %w", field, pid, err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				if err != nil {
					return 0, fmt.Errorf("%s of %d: %w", field, pid, err)
				}
				return kb * 1024, nil
			}
		}
	}
	return 0, fmt.Errorf("%s of %d: not in /proc/%d/status", field, pid, pid)
}

// ownGroup puts a started command in a process group of its own (stopped
// by that group's id) that gets SIGKILL when this process's thread that
// started it exits, so nothing outlives a crashed run.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// signalGroup sends sig to the process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
