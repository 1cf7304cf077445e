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
	n := procFDs("self")
	if n > 0 {
		n--
	}
	return n
}

// procFDs counts the entries of /proc/PID/fd; -1 when it cannot be read.
func procFDs(pid string) int {
	ents, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// childCount is what children found among this process's direct children.
type childCount struct {
	Children int // direct children not in the excluded set
	Zombies  int // of those, exited but not reaped (state Z)
}

// children counts the direct children of this process, leaving out the
// processes in exclude (the ones the load tool started itself), so what
// remains are the daemon's: stdio servers and probe siblings.
func children(exclude func(pid int) bool) childCount {
	t := scanProcs()
	if t == nil {
		return childCount{-1, -1}
	}
	return t.children(os.Getpid(), exclude)
}

// procInfo is what one /proc/PID/stat says of a process.
type procInfo struct {
	ppid  int
	state byte
	// cpu is the process's own CPU time and that of the children it has
	// reaped (utime, stime, cutime and cstime).
	cpu time.Duration
}

// procTable is one scan of /proc, by pid: every question about processes
// (children, a tree, its CPU time) is asked of one table, so one reading
// costs one pass over /proc.
type procTable map[int]procInfo

// scanProcs reads /proc/*/stat once; nil when /proc cannot be read.
// Processes that exit while it reads are left out.
func scanProcs() procTable {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	t := make(procTable, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		state, ppid, ok := parseStat(b)
		if !ok {
			continue
		}
		t[pid] = procInfo{ppid: ppid, state: state, cpu: statCPU(b)}
	}
	return t
}

// children counts the direct children of parent not in exclude (nil: none
// excluded).
func (t procTable) children(parent int, exclude func(pid int) bool) childCount {
	var c childCount
	for pid, p := range t {
		if p.ppid != parent || (exclude != nil && exclude(pid)) {
			continue
		}
		c.Children++
		if p.state == 'Z' {
			c.Zombies++
		}
	}
	return c
}

// tree returns root and its descendants, root first; nil when root is not
// in the table.
func (t procTable) tree(root int) []int {
	if _, ok := t[root]; !ok {
		return nil
	}
	kids := map[int][]int{}
	for pid, p := range t {
		kids[p.ppid] = append(kids[p.ppid], pid)
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// treeCPU is the CPU time of root and every process below it, those that
// have exited and were reaped included; -1 when root is not in the table.
func (t procTable) treeCPU(root int) time.Duration {
	procs := t.tree(root)
	if procs == nil {
		return -1
	}
	var total time.Duration
	for _, p := range procs {
		total += t[p].cpu
	}
	return total
}

// running returns those of pids that still run (zombies do not).
func (t procTable) running(pids []int) []int {
	var out []int
	for _, p := range pids {
		if info, ok := t[p]; ok && info.state != 'Z' {
			out = append(out, p)
		}
	}
	return out
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
func rssBytes() int64 { return procRSS("self") }

// procRSS returns the resident set size (VmRSS) of process pid, or -1.
func procRSS(pid string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
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

// dieWithParent makes cmd's process receive SIGKILL when the thread that
// started it exits, so fixtures never outlive a load tool that crashed.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// cpuTime is the CPU time (user and system) used so far by this process
// and every process below it: the load tool's clients, the daemon (in this
// process) or the replicas, their stdio servers, PostgreSQL and its
// backends, the HTTP fixtures and the direct twins. The time of children
// that have exited is in their parents' (this process's RUSAGE_CHILDREN,
// a live process's cutime and cstime), so the sum only grows. This process
// is read from getrusage, finer than /proc's 10 ms ticks.
func cpuTime() time.Duration {
	var self, kids syscall.Rusage
	t := scanProcs()
	if t == nil || syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return -1
	}
	pid := os.Getpid()
	total := time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
	return total + t.treeCPU(pid) - t[pid].cpu
}

// statCPU reads utime, stime, cutime and cstime from the contents of
// /proc/PID/stat, in clock ticks of 10 ms (USER_HZ is 100 on Linux); 0
// when they cannot be read.
func statCPU(b []byte) time.Duration {
	// After "pid (comm)": state ppid pgrp session tty_nr tpgid flags
	// minflt cminflt majflt cmajflt utime stime cutime cstime (fields 3
	// to 17).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, v := range f[11:15] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
