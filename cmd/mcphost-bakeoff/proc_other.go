//go:build !linux

package main

import (
	"errors"
	"syscall"
	"time"
)

// errNoProc: the process figures come from Linux's /proc; elsewhere the
// report shows none.
var errNoProc = errors.New("no /proc on this system")

func procCPU(int) (time.Duration, error)    { return 0, errNoProc }
func resetPeakRSS(int) error                { return errNoProc }
func procStatus(int, string) (int64, error) { return 0, errNoProc }
func ownGroup() *syscall.SysProcAttr        { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
