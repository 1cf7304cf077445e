//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procSupported says whether the /proc counters below are real.
const procSupported = true

// countFDs returns the number of open file descriptors of this process, read
// from /proc/self/fd (the descriptor used to read the directory excluded).
func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents) - 1
}

// childCount is what children found among this process's direct children.
type childCount struct {
	Children int // direct children not in the excluded set
	Zombies  int // of those, exited but not reaped (state Z)
}

// children scans /proc for the direct children of this process, leaving out
// the processes in exclude (the ones the load tool started itself), so what
// remains are the daemon's: stdio servers and probe siblings.
func children(exclude func(pid int) bool) childCount {
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return childCount{-1, -1}
	}
	var c childCount
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		state, ppid, ok := parseStat(b)
		if !ok || ppid != self || exclude(pid) {
			continue
		}
		c.Children++
		if state == 'Z' {
			c.Zombies++
		}
	}
	return c
}

// parseStat reads the state and parent pid from the contents of
// /proc/PID/stat: "pid (comm) S ppid ...". comm may itself contain spaces
// and parentheses, so the fields are counted from the last ')'.
func parseStat(b []byte) (state byte, ppid int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	p, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], p, true
}

// rssBytes returns this process's resident set size (VmRSS), or -1.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return -1
}

// loadAvg returns the first three fields of /proc/loadavg, or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// memTotal returns MemTotal of /proc/meminfo in bytes, or -1.
func memTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return -1
}

// kernel returns the kernel release, or "".
func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// dieWithParent makes cmd's process receive SIGKILL when the thread that
// started it exits, so fixtures never outlive a load tool that crashed.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// cpuTime is the CPU time (user and system) used so far by this process
// and its direct children: the load tool's clients, the daemon (in this
// process), its stdio servers, the HTTP fixtures and the direct twins. A
// child that exits between two readings takes its time with it. The
// children's time is in clock ticks of 10 ms (USER_HZ, 100 on Linux).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	total := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if _, ppid, ok := parseStat(b); !ok || ppid != self {
			continue
		}
		// After "pid (comm)": state ppid pgrp session tty_nr tpgid flags
		// minflt cminflt majflt cmajflt utime stime (fields 3 to 15).
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			total += time.Duration(ut+st) * 10 * time.Millisecond
		}
	}
	return total
}
