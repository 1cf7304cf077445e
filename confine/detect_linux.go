package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

var (
	detectOnce sync.Once
	detected   Probe
)

// Detect finds what this machine can enforce. It runs once per process
// (the namespace probe starts the helper once) and returns the same answer
// after that.
func Detect() Probe {
	detectOnce.Do(func() { detected = detect() })
	return detected
}

func detect() Probe {
	p := Probe{OS: runtime.GOOS, Root: os.Geteuid() == 0}
	abi, err := llsys.LandlockGetABIVersion()
	switch {
	case err == nil && abi > 0:
		p.LandlockABI = abi
	case errors.Is(err, syscall.ENOSYS):
		p.LandlockProblem = "the kernel has no Landlock (Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK)"
	case errors.Is(err, syscall.EOPNOTSUPP):
		p.LandlockProblem = "Landlock is built in but not enabled: add landlock to the kernel's lsm= boot parameter"
	default:
		p.LandlockProblem = fmt.Sprintf("Landlock unavailable: %v", err)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		p.Seccomp = true
	}
	p.Namespaces, p.NamespacesProblem = probeNamespaces(p.Root)
	return p
}

// probeNamespaces starts the helper the way a server would be started with
// its own network namespace, and has it bring loopback up.
func probeNamespaces(root bool) (bool, string) {
	exe, err := helperPath()
	if err != nil {
		return false, err.Error()
	}
	cmd := exec.Command(exe, probeArg)
	cmd.Env = []string{}
	cmd.SysProcAttr = nsAttr(root, true)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return true, ""
	}
	msg := strings.TrimSpace(string(out))
	if msg == "" {
		msg = err.Error()
	}
	if !root {
		return false, "cannot create a user namespace: " + msg + " (kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, or an AppArmor restriction on unprivileged user namespaces?)"
	}
	return false, "cannot create a network namespace: " + msg
}

// nsAttr is the SysProcAttr that gives the helper its own network and mount
// namespaces: directly when root, through a user namespace that maps
// mcphost's uid to itself otherwise, with the two capabilities the helper
// needs there (it drops them before it runs the server).
func nsAttr(root, netns bool) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Setpgid: true}
	attr.Cloneflags = syscall.CLONE_NEWNS
	if netns {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if !root {
		uid, gid := os.Getuid(), os.Getgid()
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		attr.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_SYS_ADMIN}
	}
	return attr
}

// helperPath is the binary that runs the helper: this one.
func helperPath() (string, error) {
	if HelperPath != "" {
		return HelperPath, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox: cannot find mcphost's own binary to run the sandbox helper: %w", err)
	}
	return exe, nil
}
